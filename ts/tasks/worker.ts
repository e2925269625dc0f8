/**
 * The only code that processes tasks. One loop, one batch at a time, so the engine never
 * sees two writers on an index (milli's "one update at a time").
 *
 * A batch goes: mark its tasks `processing` (committed), run it in the engine (on a libuv
 * pool thread; the JS thread keeps serving requests), then commit the task outcomes together
 * with any registry change in ONE KvStore transaction. A crash before that commit leaves
 * the tasks `processing`; `recover()` puts them back to `enqueued` at start-up and the
 * engine's replay guard makes the second run idempotent.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ApiError } from '../errors/api-error';
import { errorBody } from '../errors/catalog';
import type { IndexRegistry } from '../indexes/registry';
import type { Logger } from '../logging';
import type { NativeIndex } from '../native';
import type { SearchRules } from '../search/rules';
import { nowIso } from '../util/time';
import {
  type Archives,
  type Effects,
  type ExportRunner,
  one,
  type Outcome,
  type RunContext,
  toErrorBody,
  ZEROED,
} from './outcome';
import { localPlanner, type BatchPlan, type BatchPlanner } from './planner';
import { noQueueWrites, removePayload, type WorkerQueue } from './queue';
import { indexBatch } from './run/documents';
import { cancel, deleteTasks } from './run/history';
import { compactIndex, createIndex, deleteIndex, swapIndexes, updateIndex } from './run/indexes';
import { archive, exportIndexes, updateRules } from './run/instance';
import type { BatchRecord, TaskRecord } from './types';

export class Worker {
  private wakeUp: (() => void) | null = null;
  /** Set by `wake()`; a tick that found nothing sleeps only if nothing woke it meanwhile. */
  private woken = false;
  private readonly finishedListeners: Array<(tasks: TaskRecord[], announce: boolean) => void> = [];
  private stopped = false;
  private loop: Promise<void> | null = null;
  /** What the task families' runners (`run/`) read and change. */
  private readonly ctx: RunContext;

  constructor(
    private readonly queue: WorkerQueue,
    private readonly registry: IndexRegistry,
    private readonly updateFiles: string,
    private readonly logger: Logger,
    private readonly maxBatchedTasks: number,
    /** When true (the `getTaskDocumentsRoute` feature), payloads stay until their task is deleted. */
    private readonly keepPayloads: () => boolean = () => false,
    /** Runs a `networkTopologyChange` (moving documents to the shards that now hold them). */
    private readonly topologyChange: (taskUid: number) => Promise<Record<string, unknown>> = async () => ({
      movedDocuments: 0,
      message: 'Finished',
    }),
    /** Writes dumps and snapshots (`dumps/create.ts`). */
    archives: Archives | null = null,
    /** The dynamic search rules `dsrUpdate` and `dsrClear` tasks change. */
    searchRules: SearchRules | null = null,
    /** Decides the next batch (see `planner.ts`). */
    private readonly planner: BatchPlanner = localPlanner,
    /** Runs `export` tasks. */
    exporter: ExportRunner | null = null,
  ) {
    queue.onEnqueued(() => this.wake());
    this.ctx = { queue, registry, updateFiles, logger, keepPayloads, archives, searchRules, exporter };
  }

  /** Start-up reconciliation: interrupted tasks run again; orphan payloads and dirs go. */
  async recover(): Promise<void> {
    const requeued = await this.queue.requeueInterrupted();
    if (requeued.length) this.logger.info('requeued interrupted tasks', { tasks: requeued });

    const live = new Set<string>();
    for (const t of this.queue.allTasks()) {
      if (t.payload.kind === 'documentAddition') live.add(path.basename(t.payload.file));
    }
    fs.mkdirSync(this.updateFiles, { recursive: true });
    for (const f of fs.readdirSync(this.updateFiles))
      if (!live.has(f)) fs.rmSync(path.join(this.updateFiles, f), { force: true });
    this.registry.removeOrphans();
  }

  /**
   * Called with each batch's tasks (and those it canceled) once committed; `announce` says
   * whether this instance announces it (webhooks: one instance of a replicated group does).
   */
  onBatchFinished(listener: (tasks: TaskRecord[], announce: boolean) => void): void {
    this.finishedListeners.push(listener);
  }

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
  }

  wake(): void {
    this.woken = true;
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let worked = false;
      this.woken = false;
      try {
        worked = await this.tick();
      } catch (err) {
        this.logger.error('worker tick failed', { error: err instanceof Error ? err.stack : String(err) });
        await new Promise((r) => setTimeout(r, 200));
      }
      if (!worked && !this.stopped && !this.woken) await new Promise<void>((r) => (this.wakeUp = r));
    }
  }

  /** Runs one batch; false when there is none to run now. */
  async tick(): Promise<boolean> {
    const plan = await this.planner.plan(
      this.queue.enqueued(),
      (uid) => {
        const e = this.registry.get(uid);
        return { exists: !!e, primaryKey: e?.primaryKey ?? null };
      },
      this.maxBatchedTasks,
    );
    if (!plan) return false;
    const { next } = plan;

    // Whether anything else waits for this batch's index once the batch has committed: if
    // nothing does, the engine may compact the index before the tasks are reported done.
    const inBatch = new Set(next.tasks.map((t) => t.uid));
    const idle = () => !this.queue.enqueued().some((t) => t.indexUid === next.indexUid && !inBatch.has(t.uid));
    let handle: NativeIndex | null = null;
    const { batch, processing } = await this.queue.startBatch(
      next,
      () => (handle ? handle.progress() : null),
      plan.uid,
    );
    for (const t of processing)
      this.logger.info('task processing', { taskUid: t.uid, batchUid: batch.uid, type: t.type, indexUid: t.indexUid });

    const effects: Effects = { ops: [], queue: noQueueWrites(), after: [] };
    let outcomes: Map<number, Outcome>;
    const t0 = performance.now();
    try {
      outcomes = await this.execute(processing, batch, effects, idle, (h) => (handle = h));
    } catch (err) {
      if (plan.failed) {
        await this.queue.abandonBatch(batch);
        plan.failed(err);
        return true;
      }
      const error = toErrorBody(err);
      this.logger.error('batch failed', { batchUid: batch.uid, error });
      outcomes = new Map(processing.map((t) => [t.uid, { error }]));
      effects.ops = [];
      effects.queue = noQueueWrites();
      effects.after = [];
      effects.trace = undefined;
    }
    batch.stats.progressTrace = { 'processing tasks': `${(performance.now() - t0).toFixed(2)}ms`, ...effects.trace };
    await this.finish(processing, batch, outcomes, effects, plan);
    return true;
  }

  private async finish(
    tasks: TaskRecord[],
    batch: BatchRecord,
    outcomes: Map<number, Outcome>,
    effects: Effects,
    plan: BatchPlan,
  ): Promise<void> {
    const finishedAt = nowIso();
    const done: TaskRecord[] = tasks.map((t) => {
      const o = outcomes.get(t.uid) ?? {};
      const details =
        t.details === null && o.details === undefined ? null : { ...(t.details ?? {}), ...(o.details ?? {}) };
      if (o.error && details) for (const k of ZEROED[t.type] ?? []) details[k] = 0;
      return { ...t, status: o.error ? 'failed' : 'succeeded', error: o.error ?? null, details, finishedAt };
    });
    const status: Record<string, number> = {};
    const types: Record<string, number> = {};
    const indexUids: Record<string, number> = {};
    const details: Record<string, unknown> = {};
    for (const t of done) {
      status[t.status] = (status[t.status] ?? 0) + 1;
      types[t.type] = (types[t.type] ?? 0) + 1;
      if (t.indexUid !== null) indexUids[t.indexUid] = (indexUids[t.indexUid] ?? 0) + 1;
      for (const [k, v] of Object.entries(t.details ?? {})) {
        details[k] = typeof v === 'number' && typeof details[k] === 'number' ? (details[k] as number) + v : v;
      }
    }
    // A batch shows no `originalFilter` where its tasks had none (deletions by ids carry a null one), as on Meilisearch.
    if (details.originalFilter === null) delete details.originalFilter;
    const finished: BatchRecord = {
      ...batch,
      finishedAt,
      details,
      stats: { totalNbTasks: done.length, status, types, indexUids, progressTrace: batch.stats.progressTrace ?? {} },
    };
    await this.queue.finishBatch(done, finished, effects.queue, [...effects.ops, ...plan.ops]);
    plan.committed?.();
    for (const f of effects.after) f();
    // Webhooks hear of the tasks a cancelation ended too.
    const ended = [...done, ...effects.queue.tasks.filter((t) => t.status === 'canceled')].sort(
      (a, b) => a.uid - b.uid,
    );
    for (const listener of this.finishedListeners) listener(ended, plan.announce);
    const keep = this.keepPayloads();
    for (const t of done) {
      if (!keep) removePayload(this.updateFiles, t);
      this.logger.info(`task ${t.status}`, {
        taskUid: t.uid,
        batchUid: batch.uid,
        type: t.type,
        indexUid: t.indexUid,
        error: t.error?.code,
      });
    }
  }

  private async execute(
    tasks: TaskRecord[],
    batch: BatchRecord,
    fx: Effects,
    idle: () => boolean,
    onHandle: (h: NativeIndex) => void,
  ): Promise<Map<number, Outcome>> {
    const first = tasks[0];
    switch (first.payload.kind) {
      case 'taskCancelation':
        return cancel(this.ctx, first, batch, fx);
      case 'taskDeletion':
        return deleteTasks(this.ctx, tasks, fx);
      case 'indexCreation':
        return createIndex(this.ctx, first, first.payload.primaryKey, fx, onHandle);
      case 'indexUpdate':
        return updateIndex(this.ctx, first, first.payload.primaryKey, first.payload.newUid, fx, onHandle);
      case 'indexDeletion':
        return deleteIndex(this.ctx, first, fx);
      case 'indexSwap':
        return swapIndexes(this.ctx, first, fx);
      case 'indexCompaction':
        return compactIndex(this.ctx, first);
      case 'dumpCreation':
      case 'snapshotCreation':
        return archive(this.ctx, tasks, batch);
      case 'dsrUpdate':
      case 'dsrClear':
        return updateRules(this.ctx, first, fx);
      case 'export':
        return exportIndexes(this.ctx, first, fx);
      case 'networkTopologyChange':
        // The network is already applied; documents move to the shards that hold them now.
        try {
          return one(first, { details: await this.topologyChange(first.uid) });
        } catch (err) {
          if (err instanceof ApiError)
            return one(first, {
              details: { movedDocuments: 0, message: 'Failed' },
              error: errorBody(err.code, err.message),
            });
          throw err;
        }
      default:
        return indexBatch(this.ctx, tasks, fx, idle, onHandle);
    }
  }
}
