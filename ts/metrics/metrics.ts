/**
 * `GET /metrics`: what the server measures, in the families (names, types and labels)
 * Meilisearch 1.50 exposes, so its dashboards and alerts work unchanged. Request metrics are
 * kept as requests close (`./http.ts`); everything else is read when scraped: the data
 * directory's files, the registry, the task table, the search limiter and `/proc/self`.
 *
 * Sizes are those of `/stats` (`store/sizes.ts`): the task store's and the indexes' files,
 * and the same less LMDB's free pages; the task queue's used size is the task store's.
 */
import type { IndexRegistry } from '../indexes/registry';
import type { KvStore } from '../native';
import type { SearchLimiter } from '../search/limiter';
import { databaseSizes } from '../store/sizes';
import { type BatchRecord, TASK_STATUSES, TASK_TYPES, type TaskRecord } from '../tasks/types';
import { CONTENT_TYPE, Exposition } from './exposition';
import { ChatMetrics } from './chat';
import { HttpMetrics } from './http';
import { processMetrics } from './process';

export { CONTENT_TYPE };

/** Above this share of its map, Meilisearch stops registering tasks; the gauge counts down to it. */
const STOP_REGISTERING_RATIO = 0.4;

export interface MetricsSources {
  /** The task store (its size, and the database's with the indexes'). */
  kv: KvStore;
  registry: IndexRegistry;
  /** Every task and batch, read at scrape time. */
  tasks: () => Iterable<TaskRecord>;
  batches: () => Iterable<BatchRecord>;
  searchLimiter: SearchLimiter;
  /** The task store's LMDB map size. */
  taskQueueMaxSize: number;
}

const unixSeconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

export class Metrics {
  readonly http = new HttpMetrics();
  readonly chat = new ChatMetrics();

  constructor(private readonly sources: MetricsSources) {}

  async render(): Promise<string> {
    const s = this.sources;
    const out = new Exposition();
    this.http.render(out);
    this.chat.render(out);

    const indexes = s.registry.list();
    const stats = indexes.map((e) => s.registry.handleOf(e).stats());
    const db = databaseSizes(s.kv, stats);
    out
      .family('meilisearch_db_size_bytes', 'gauge', 'Size of the database files, in bytes')
      .sample('meilisearch_db_size_bytes', [], db.size);
    out
      .family('meilisearch_used_db_size_bytes', 'gauge', 'Bytes of the database files in use (free pages left out)')
      .sample('meilisearch_used_db_size_bytes', [], db.used);

    out
      .family('meilisearch_index_count', 'gauge', 'Number of indexes')
      .sample('meilisearch_index_count', [], indexes.length);
    out.family('meilisearch_index_docs_count', 'gauge', 'Number of documents in each index');
    let lastUpdate = 0;
    indexes.forEach((e, i) => {
      out.sample('meilisearch_index_docs_count', [['index', e.uid]], stats[i].numberOfDocuments);
      lastUpdate = Math.max(lastUpdate, unixSeconds(e.updatedAt));
    });
    out
      .family('meilisearch_last_update', 'gauge', 'When an index was last updated, in seconds since the Unix epoch')
      .sample('meilisearch_last_update', [], lastUpdate);

    this.renderTasks(out);
    this.renderLastBatch(out);

    const load = s.searchLimiter.load;
    out
      .family('meilisearch_search_queue_size', 'gauge', 'Searches that may wait for a slot')
      .sample('meilisearch_search_queue_size', [], s.searchLimiter.queueSize);
    out
      .family('meilisearch_searches_running', 'gauge', 'Searches running now')
      .sample('meilisearch_searches_running', [], load.active);
    out
      .family('meilisearch_searches_waiting_to_be_processed', 'gauge', 'Searches waiting for a slot')
      .sample('meilisearch_searches_waiting_to_be_processed', [], load.waiting);

    const stopAt = Math.floor(s.taskQueueMaxSize * STOP_REGISTERING_RATIO);
    out
      .family('meilisearch_task_queue_max_size', 'gauge', 'Largest size of the task store, in bytes')
      .sample('meilisearch_task_queue_max_size', [], s.taskQueueMaxSize);
    const taskStoreUsed = s.kv.sizes().used;
    out
      .family('meilisearch_task_queue_used_size', 'gauge', 'Bytes of the task store in use')
      .sample('meilisearch_task_queue_used_size', [], taskStoreUsed);
    out
      .family(
        'meilisearch_task_queue_size_until_stop_registering',
        'gauge',
        'Bytes the task store may still grow before new tasks are refused',
      )
      .sample('meilisearch_task_queue_size_until_stop_registering', [], Math.max(0, stopAt - taskStoreUsed));

    await processMetrics(out);
    return out.render();
  }

  private renderTasks(out: Exposition): void {
    const statuses = new Map<string, number>(TASK_STATUSES.map((st) => [st, 0]));
    const types = new Map<string, number>(TASK_TYPES.map((t) => [t, 0]));
    const indexes = new Map<string, number>();
    let oldestWaiting: string | null = null;
    for (const t of this.sources.tasks()) {
      statuses.set(t.status, (statuses.get(t.status) ?? 0) + 1);
      types.set(t.type, (types.get(t.type) ?? 0) + 1);
      if (t.indexUid !== null) indexes.set(t.indexUid, (indexes.get(t.indexUid) ?? 0) + 1);
      if (
        (t.status === 'enqueued' || t.status === 'processing') &&
        (oldestWaiting === null || t.enqueuedAt < oldestWaiting)
      )
        oldestWaiting = t.enqueuedAt;
    }
    const name = 'meilisearch_nb_tasks';
    out.family(name, 'gauge', 'Number of tasks, by index, status and type');
    const sorted = (m: Map<string, number>) => [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [v, n] of sorted(indexes))
      out.sample(
        name,
        [
          ['kind', 'indexes'],
          ['value', v],
        ],
        n,
      );
    for (const [v, n] of sorted(statuses))
      out.sample(
        name,
        [
          ['kind', 'statuses'],
          ['value', v],
        ],
        n,
      );
    for (const [v, n] of sorted(types))
      out.sample(
        name,
        [
          ['kind', 'types'],
          ['value', v],
        ],
        n,
      );

    out
      .family('meilisearch_is_indexing', 'gauge', '1 while a batch of tasks is being processed')
      .sample('meilisearch_is_indexing', [], (statuses.get('processing') ?? 0) > 0 ? 1 : 0);
    const latency = oldestWaiting === null ? 0 : Math.max(0, (Date.now() - Date.parse(oldestWaiting)) / 1000);
    out
      .family(
        'meilisearch_task_queue_latency_seconds',
        'gauge',
        'How long the oldest unfinished task has been waiting, in seconds',
      )
      .sample('meilisearch_task_queue_latency_seconds', [], latency);
  }

  /** The steps of the last finished batch, and the last batch that indexed documents. */
  private renderLastBatch(out: Exposition): void {
    let last: BatchRecord | null = null;
    let lastIndexing: BatchRecord | null = null;
    for (const b of this.sources.batches()) {
      if (b.finishedAt === null) continue;
      if (last === null || b.uid > last.uid) last = b;
      if (typeof b.details.indexedDocuments === 'number' && (lastIndexing === null || b.uid > lastIndexing.uid))
        lastIndexing = b;
    }
    const trace = 'meilisearch_last_finished_batches_progress_trace_ms';
    out.family(trace, 'gauge', 'Time each step of the last finished batch took, in milliseconds');
    for (const [step, text] of Object.entries(last?.stats.progressTrace ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
      const ms = Number.parseFloat(text);
      if (Number.isFinite(ms))
        out.sample(
          trace,
          [
            ['batch_uid', String(last!.uid)],
            ['step_name', step],
          ],
          Math.round(ms),
        );
    }
    const count = 'meilisearch_last_indexed_documents_count';
    const duration = 'meilisearch_last_indexed_documents_duration_ms';
    out.family(count, 'gauge', 'Documents indexed by the last batch that indexed documents');
    out.family(duration, 'gauge', 'How long the last batch that indexed documents took, in milliseconds');
    if (lastIndexing !== null && lastIndexing.finishedAt !== null) {
      const ms = Math.max(0, Date.parse(lastIndexing.finishedAt) - Date.parse(lastIndexing.startedAt));
      for (const index of Object.keys(lastIndexing.stats.indexUids).sort()) {
        const labels = [
          ['batch_uid', String(lastIndexing.uid)],
          ['index', index],
        ] as const;
        out.sample(count, labels, lastIndexing.details.indexedDocuments as number);
        out.sample(duration, labels, ms);
      }
    }
  }
}
