/**
 * The only code that processes tasks. One loop, one batch at a time, so the engine never
 * sees two writers on an index (milli's "one update at a time").
 *
 * A batch goes: mark its tasks `processing` (committed), run it in the engine (a Rust
 * thread; the JS thread keeps serving requests), then commit the task outcomes together
 * with any registry change in ONE KvStore transaction. A crash before that commit leaves
 * the tasks `processing`; `recover()` puts them back to `enqueued` at start-up and the
 * engine's replay guard makes the second run idempotent.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ApiError, type ErrorBody } from '../errors/api-error';
import { errorBody } from '../errors/catalog';
import type { IndexEntry, IndexRegistry } from '../indexes/registry';
import type { Logger } from '../logging';
import type { BatchOp, KvOp, NativeIndex } from '../native';
import type { RulePatch, SearchRules } from '../search/rules';
import { nowIso } from '../util/time';
import { nextBatch } from './autobatch';
import { noQueueWrites, payloadFile, type QueueWrites, removePayload, type WorkerQueue } from './queue';
import type { BatchRecord, TaskRecord } from './types';

/** Dumps and snapshots, written by `dumps/create.ts`. */
export interface Archives {
  /** Writes the dump; resolves with the task's details (`dumpUid`). */
  dump(task: TaskRecord): Promise<Record<string, unknown>>;
  /** Writes the snapshot; `tasks` and `batch` (running) are recorded as finished in the copy. */
  snapshot(tasks: TaskRecord[], batch: BatchRecord): Promise<void>;
}

interface Outcome {
  error?: ErrorBody;
  details?: Record<string, unknown>;
  canceledBy?: number;
  status?: 'canceled';
}

interface Effects {
  /** Writes to other stores (the index registry). */
  ops: KvOp[];
  /** Writes to the queue's own records. */
  queue: QueueWrites;
  /** Cache updates and file removals once everything is committed. */
  after: Array<() => void>;
}

const ZEROED: Record<string, string[]> = {
  documentAdditionOrUpdate: ['indexedDocuments'],
  documentDeletion: ['deletedDocuments'],
  documentEdition: ['editedDocuments'],
  indexDeletion: ['deletedDocuments'],
  taskCancelation: ['canceledTasks'],
  taskDeletion: ['deletedTasks'],
};

function toErrorBody(err: unknown): ErrorBody {
  if (err instanceof ApiError) return errorBody(err.code, err.message);
  return errorBody('internal', err instanceof Error ? err.message : String(err));
}

export class Worker {
  private wakeUp: (() => void) | null = null;
  private readonly finishedListeners: Array<(tasks: TaskRecord[]) => void> = [];
  private stopped = false;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly queue: WorkerQueue,
    private readonly registry: IndexRegistry,
    private readonly updateFiles: string,
    private readonly logger: Logger,
    private readonly maxBatchedTasks: number,
    /** When true (the `getTaskDocumentsRoute` feature), payloads stay until their task is deleted. */
    private readonly keepPayloads: () => boolean = () => false,
    /** Runs a `networkTopologyChange` (moving documents to the shards that now hold them). */
    private readonly topologyChange: (taskUid: number) => Promise<Record<string, unknown>> = async () => ({ movedDocuments: 0, message: 'Finished' }),
    /** Writes dumps and snapshots (`dumps/create.ts`). */
    private readonly archives: Archives | null = null,
    /** The dynamic search rules `dsrUpdate` and `dsrClear` tasks change. */
    private readonly searchRules: SearchRules | null = null,
  ) {
    queue.onEnqueued(() => this.wake());
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
    for (const f of fs.readdirSync(this.updateFiles)) if (!live.has(f)) fs.rmSync(path.join(this.updateFiles, f), { force: true });
    this.registry.removeOrphans();
  }

  /** Called with each batch's tasks (and those it canceled) once committed (webhooks). */
  onBatchFinished(listener: (tasks: TaskRecord[]) => void): void {
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
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let worked = false;
      try {
        worked = await this.tick();
      } catch (err) {
        this.logger.error('worker tick failed', { error: err instanceof Error ? err.stack : String(err) });
        await new Promise((r) => setTimeout(r, 200));
      }
      if (!worked && !this.stopped) await new Promise<void>((r) => (this.wakeUp = r));
    }
  }

  /** Runs one batch; false when nothing is enqueued. */
  async tick(): Promise<boolean> {
    const enqueued = this.queue.enqueued();
    const next = nextBatch(
      enqueued,
      (uid) => {
        const e = this.registry.get(uid);
        return { exists: !!e, primaryKey: e?.primaryKey ?? null };
      },
      this.maxBatchedTasks,
    );
    if (!next) return false;

    // Nothing else waits for this batch's index: the engine may compact it after the batch.
    const inBatch = new Set(next.tasks.map((t) => t.uid));
    const idle = !enqueued.some((t) => t.indexUid === next.indexUid && !inBatch.has(t.uid));
    let handle: NativeIndex | null = null;
    const { batch, processing } = await this.queue.startBatch(next, () => (handle ? handle.progress() : null));
    for (const t of processing) this.logger.info('task processing', { taskUid: t.uid, batchUid: batch.uid, type: t.type, indexUid: t.indexUid });

    const effects: Effects = { ops: [], queue: noQueueWrites(), after: [] };
    let outcomes: Map<number, Outcome>;
    const t0 = performance.now();
    try {
      outcomes = await this.execute(processing, batch, effects, idle, (h) => (handle = h));
    } catch (err) {
      const error = toErrorBody(err);
      this.logger.error('batch failed', { batchUid: batch.uid, error });
      outcomes = new Map(processing.map((t) => [t.uid, { error }]));
      effects.ops = [];
      effects.queue = noQueueWrites();
      effects.after = [];
    }
    batch.stats.progressTrace = { 'processing tasks': `${(performance.now() - t0).toFixed(2)}ms` };
    await this.finish(processing, batch, outcomes, effects);
    return true;
  }

  private async finish(tasks: TaskRecord[], batch: BatchRecord, outcomes: Map<number, Outcome>, effects: Effects): Promise<void> {
    const finishedAt = nowIso();
    const done: TaskRecord[] = tasks.map((t) => {
      const o = outcomes.get(t.uid) ?? {};
      const details = t.details === null && o.details === undefined ? null : { ...(t.details ?? {}), ...(o.details ?? {}) };
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
    const finished: BatchRecord = { ...batch, finishedAt, details, stats: { totalNbTasks: done.length, status, types, indexUids, progressTrace: batch.stats.progressTrace ?? {} } };
    await this.queue.finishBatch(done, finished, effects.queue, effects.ops);
    for (const f of effects.after) f();
    // Webhooks hear of the tasks a cancelation ended too.
    const ended = [...done, ...effects.queue.tasks.filter((t) => t.status === 'canceled')].sort((a, b) => a.uid - b.uid);
    for (const listener of this.finishedListeners) listener(ended);
    const keep = this.keepPayloads();
    for (const t of done) {
      if (!keep) removePayload(this.updateFiles, t);
      this.logger.info(`task ${t.status}`, { taskUid: t.uid, batchUid: batch.uid, type: t.type, indexUid: t.indexUid, error: t.error?.code });
    }
  }

  private async execute(tasks: TaskRecord[], batch: BatchRecord, fx: Effects, idle: boolean, onHandle: (h: NativeIndex) => void): Promise<Map<number, Outcome>> {
    const first = tasks[0];
    switch (first.payload.kind) {
      case 'taskCancelation':
        return this.cancel(first, batch, fx);
      case 'taskDeletion':
        return this.deleteTasks(tasks, fx);
      case 'indexCreation':
        return this.createIndex(first, first.payload.primaryKey, fx, onHandle);
      case 'indexUpdate':
        return this.updateIndex(first, first.payload.primaryKey, first.payload.newUid, fx, onHandle);
      case 'indexDeletion':
        return this.deleteIndex(first, fx);
      case 'indexSwap':
        return this.swapIndexes(first, fx);
      case 'indexCompaction':
        return this.compactIndex(first);
      case 'dumpCreation':
      case 'snapshotCreation':
        return this.archive(tasks, batch);
      case 'dsrUpdate':
      case 'dsrClear':
        return this.updateRules(first, fx);
      case 'networkTopologyChange':
        // The network is already applied; documents move to the shards that hold them now.
        try {
          return this.one(first, { details: await this.topologyChange(first.uid) });
        } catch (err) {
          if (err instanceof ApiError) return this.one(first, { details: { movedDocuments: 0, message: 'Failed' }, error: errorBody(err.code, err.message) });
          throw err;
        }
      default:
        return this.indexBatch(tasks, fx, idle, onHandle);
    }
  }

  private one(task: TaskRecord, o: Outcome): Map<number, Outcome> {
    return new Map([[task.uid, o]]);
  }

  private cancel(task: TaskRecord, batch: BatchRecord, fx: Effects): Map<number, Outcome> {
    const matched = task.payload.kind === 'taskCancelation' ? task.payload.matched : [];
    const now = nowIso();
    let canceled = 0;
    for (const uid of matched) {
      const t = this.queue.get(uid);
      if (!t || t.status !== 'enqueued' || uid === task.uid) continue;
      const details = t.details ? { ...t.details } : null;
      if (details) for (const k of ZEROED[t.type] ?? []) details[k] = 0;
      const c: TaskRecord = { ...t, status: 'canceled', canceledBy: task.uid, batchUid: batch.uid, finishedAt: now, details };
      fx.queue.tasks.push(c);
      fx.after.push(() => {
        if (!this.keepPayloads()) removePayload(this.updateFiles, c);
      });
      canceled++;
    }
    return this.one(task, { details: { canceledTasks: canceled } });
  }

  private deleteTasks(tasks: TaskRecord[], fx: Effects): Map<number, Outcome> {
    const out = new Map<number, Outcome>();
    const deleted = new Map<number, TaskRecord>();
    const inBatch = new Set(tasks.map((t) => t.uid));
    for (const task of tasks) {
      const matched = task.payload.kind === 'taskDeletion' ? task.payload.matched : [];
      let n = 0;
      for (const uid of matched) {
        const t = this.queue.get(uid);
        if (!t || deleted.has(uid) || inBatch.has(uid)) continue;
        if (t.status !== 'succeeded' && t.status !== 'failed' && t.status !== 'canceled') continue;
        deleted.set(uid, t);
        n++;
      }
      out.set(task.uid, { details: { deletedTasks: n } });
    }
    fx.queue.deletedTasks.push(...deleted.keys());
    // Batches whose every task is gone go too.
    for (const b of this.queue.allBatches()) {
      if (b.finishedAt !== null && b.taskUids.every((u) => deleted.has(u) || this.queue.get(u) === undefined)) fx.queue.deletedBatches.push(b.uid);
    }
    fx.after.push(() => {
      for (const t of deleted.values()) removePayload(this.updateFiles, t);
    });
    return out;
  }

  private async createIndex(task: TaskRecord, primaryKey: string | null, fx: Effects, onHandle: (h: NativeIndex) => void): Promise<Map<number, Outcome>> {
    const uid = task.indexUid!;
    if (this.registry.has(uid)) return this.one(task, { error: errorBody('index_already_exists', `Index \`${uid}\` already exists.`) });
    const entry = this.registry.newEntry(uid, nowIso());
    const h = this.registry.handleOf(entry);
    onHandle(h);
    if (primaryKey !== null) {
      const [r] = await h.applyBatch([{ type: 'setPrimaryKey', taskUid: task.uid, primaryKey }]);
      if (!r.ok) return this.one(task, { error: errorBody(r.error.code, r.error.message) });
      entry.primaryKey = primaryKey;
    }
    fx.ops.push(this.registry.putOp(entry));
    fx.after.push(() => this.registry.applyPut(entry));
    return this.one(task, {});
  }

  private async updateIndex(
    task: TaskRecord,
    primaryKey: string | null,
    newUid: string | null,
    fx: Effects,
    onHandle: (h: NativeIndex) => void,
  ): Promise<Map<number, Outcome>> {
    const uid = task.indexUid!;
    const entry = this.registry.get(uid);
    if (!entry) return this.one(task, { error: errorBody('index_not_found', `Index \`${uid}\` not found.`) });
    if (newUid !== null && newUid !== uid && this.registry.has(newUid)) {
      return this.one(task, { error: errorBody('index_already_exists', `Index \`${newUid}\` already exists.`) });
    }
    const updated: IndexEntry = { ...entry, updatedAt: nowIso() };
    if (primaryKey !== null) {
      const h = this.registry.handleOf(entry);
      onHandle(h);
      const [r] = await h.applyBatch([{ type: 'setPrimaryKey', taskUid: task.uid, primaryKey }]);
      if (!r.ok) return this.one(task, { error: errorBody(r.error.code, r.error.message) });
      updated.primaryKey = primaryKey;
    }
    if (newUid !== null && newUid !== uid) {
      updated.uid = newUid;
      fx.ops.push(this.registry.deleteOp(uid));
      this.rewriteHistory(task.uid, new Map([[uid, newUid]]), fx);
      fx.after.push(() => this.registry.applyDelete(uid));
    }
    fx.ops.push(this.registry.putOp(updated));
    fx.after.push(() => this.registry.applyPut(updated));
    return this.one(task, {});
  }

  /**
   * A dump, or one snapshot for every snapshot task of the batch: its file is written while
   * no other batch runs.
   */
  private async archive(tasks: TaskRecord[], batch: BatchRecord): Promise<Map<number, Outcome>> {
    const task = tasks[0];
    const all = (o: Outcome) => new Map(tasks.map((t) => [t.uid, o]));
    if (!this.archives) return all({ error: errorBody('internal', `${task.type} is not configured on this server`) });
    try {
      if (task.type === 'dumpCreation') return this.one(task, { details: await this.archives.dump(task) });
      await this.archives.snapshot(tasks, batch);
      return all({});
    } catch (err) {
      const dump = task.type === 'dumpCreation';
      this.logger.error(`${task.type} failed`, { taskUid: task.uid, error: err instanceof Error ? err.stack : String(err) });
      const reason = err instanceof Error ? err.message : String(err);
      return all({ error: errorBody(dump ? 'dump_process_failed' : 'internal', `${dump ? 'Dump' : 'Snapshot'} creation failed: ${reason}.`) });
    }
  }

  /** A dynamic search rule patched or deleted, or every rule deleted. */
  private updateRules(task: TaskRecord, fx: Effects): Map<number, Outcome> {
    const rules = this.searchRules;
    if (!rules) return this.one(task, { error: errorBody('internal', 'dynamic search rules are not configured on this server') });
    const p = task.payload;
    if (p.kind === 'dsrClear') {
      const all = rules.all();
      for (const r of all) fx.ops.push(rules.deleteOp(r.uid));
      fx.after.push(() => all.forEach((r) => rules.applyDelete(r.uid)));
      return this.one(task, { details: { deletedDocuments: all.length } });
    }
    if (p.kind !== 'dsrUpdate') return this.one(task, {});
    if (p.patch === null) {
      fx.ops.push(rules.deleteOp(p.uid));
      fx.after.push(() => rules.applyDelete(p.uid));
      return this.one(task, {});
    }
    // The rule's date is its task's, as Meilisearch stamps it.
    const rule = rules.patched(p.uid, p.patch as RulePatch, task.enqueuedAt);
    fx.ops.push(rules.putOp(rule));
    fx.after.push(() => rules.applyPut(rule));
    return this.one(task, {});
  }

  /** Merges the index's segments; the details give its size on disk before and after. */
  private async compactIndex(task: TaskRecord): Promise<Map<number, Outcome>> {
    const uid = task.indexUid!;
    const entry = this.registry.get(uid);
    if (!entry) return this.one(task, { error: errorBody('index_not_found', `Index \`${uid}\` not found.`) });
    const dir = this.registry.pathOf(entry);
    const before = directorySize(dir);
    await this.registry.handleOf(entry).compact();
    return this.one(task, { details: { preCompactionSize: byteSize(before), postCompactionSize: byteSize(directorySize(dir)) } });
  }

  private deleteIndex(task: TaskRecord, fx: Effects): Map<number, Outcome> {
    const uid = task.indexUid!;
    const entry = this.registry.get(uid);
    if (!entry) return this.one(task, { error: errorBody('index_not_found', `Index \`${uid}\` not found.`) });
    const count = this.registry.handleOf(entry).documentCount();
    fx.ops.push(this.registry.deleteOp(uid));
    fx.after.push(() => {
      this.registry.applyDelete(uid);
      this.registry.destroyDir(entry.dir);
    });
    return this.one(task, { details: { deletedDocuments: count } });
  }

  private swapIndexes(task: TaskRecord, fx: Effects): Map<number, Outcome> {
    if (task.payload.kind !== 'indexSwap') return this.one(task, {});
    const renames = new Map<string, string>();
    const puts: IndexEntry[] = [];
    const deletes: string[] = [];
    const now = nowIso();
    for (const { indexes: [a, b], rename } of task.payload.swaps) {
      const ea = this.registry.get(a);
      const eb = this.registry.get(b);
      if (rename) {
        if (!ea) return this.one(task, { error: errorBody('index_not_found', `Index \`${a}\` not found.`) });
        if (eb) return this.one(task, { error: errorBody('index_already_exists', `Index \`${b}\` already exists.`) });
        puts.push({ ...ea, uid: b, updatedAt: now });
        deletes.push(a);
        renames.set(a, b);
      } else {
        const missing = [a, b].filter((u) => !this.registry.has(u));
        if (missing.length) {
          const msg = missing.length === 1 ? `Index \`${missing[0]}\` not found.` : `Indexes ${missing.map((m) => `\`${m}\``).join(', ')} not found.`;
          return this.one(task, { error: errorBody('index_not_found', msg) });
        }
        puts.push({ ...eb!, uid: a, updatedAt: now }, { ...ea!, uid: b, updatedAt: now });
        renames.set(a, b).set(b, a);
      }
    }
    for (const uid of deletes) fx.ops.push(this.registry.deleteOp(uid));
    for (const e of puts) fx.ops.push(this.registry.putOp(e));
    this.rewriteHistory(task.uid, renames, fx);
    fx.after.push(() => {
      for (const uid of deletes) this.registry.applyDelete(uid);
      for (const e of puts) this.registry.applyPut(e);
    });
    return this.one(task, {});
  }

  /** Earlier tasks follow their data through renames and swaps. */
  private rewriteHistory(beforeUid: number, renames: Map<string, string>, fx: Effects): void {
    for (const t of this.queue.allTasks()) {
      if (t.uid >= beforeUid || t.indexUid === null || !renames.has(t.indexUid)) continue;
      fx.queue.tasks.push({ ...t, indexUid: renames.get(t.indexUid)! });
    }
  }

  /** Document and settings tasks of one index: one engine call, one commit. */
  private async indexBatch(tasks: TaskRecord[], fx: Effects, idle: boolean, onHandle: (h: NativeIndex) => void): Promise<Map<number, Outcome>> {
    const uid = tasks[0].indexUid!;
    const out = new Map<number, Outcome>();
    let entry = this.registry.get(uid);
    if (!entry) {
      const p = tasks[0].payload;
      const canCreate = (p.kind === 'documentAddition' || (p.kind === 'settingsUpdate' && !p.reset)) && p.canCreateIndex;
      if (!canCreate) {
        const error = errorBody('index_not_found', `Index \`${uid}\` not found.`);
        return new Map(tasks.map((t) => [t.uid, { error }]));
      }
      entry = this.registry.newEntry(uid, nowIso());
    }
    const h = this.registry.handleOf(entry);
    onHandle(h);

    const ops: BatchOp[] = [];
    /** Delete-by-filter and edition tasks: their errors name the index, as Meilisearch's batch errors do. */
    const byFilter = new Set<number>();
    for (const t of tasks) {
      const p = t.payload;
      switch (p.kind) {
        case 'documentAddition':
          ops.push({ type: 'addDocuments', taskUid: t.uid, file: payloadFile(this.updateFiles, t)!, method: p.method, primaryKey: p.primaryKey, skipCreation: p.skipCreation, shards: p.shards ?? null });
          break;
        case 'documentDeletion':
          ops.push({ type: 'deleteDocuments', taskUid: t.uid, ids: p.ids });
          break;
        case 'documentClear':
          ops.push({ type: 'clearDocuments', taskUid: t.uid });
          break;
        case 'settingsUpdate':
          // The engine applies the patch to the settings the batch has reached.
          ops.push({ type: 'updateSettings', taskUid: t.uid, patch: p.patch });
          break;
        case 'documentDeletionByFilter':
          byFilter.add(t.uid);
          ops.push({ type: 'deleteByFilter', taskUid: t.uid, filter: p.filter });
          break;
        case 'documentEdition':
          byFilter.add(t.uid);
          ops.push({ type: 'editDocuments', taskUid: t.uid, function: p.function, filter: p.filter, context: p.context });
          break;
        default:
          out.set(t.uid, { error: errorBody('internal', `task type \`${t.type}\` cannot run in an index batch`) });
      }
    }
    const results = ops.length ? await h.applyBatch(ops, idle) : [];
    for (const r of results) {
      if (r.ok) {
        const details: Record<string, unknown> = {};
        if (r.indexedDocuments !== undefined) details.indexedDocuments = r.indexedDocuments;
        if (r.editedDocuments !== undefined) details.editedDocuments = r.editedDocuments;
        if (r.deletedDocuments !== undefined) details.deletedDocuments = r.deletedDocuments;
        out.set(r.taskUid, { details });
      } else {
        const message = byFilter.has(r.taskUid) ? `Index \`${uid}\`: ${r.error.message}` : r.error.message;
        out.set(r.taskUid, { error: errorBody(r.error.code, message) });
      }
    }
    const updated: IndexEntry = { ...entry, primaryKey: h.primaryKey(), updatedAt: nowIso() };
    fx.ops.push(this.registry.putOp(updated));
    fx.after.push(() => this.registry.applyPut(updated));
    return out;
  }
}

/** The bytes of the files under `dir`. */
function directorySize(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    total += e.isDirectory() ? directorySize(p) : fs.statSync(p).size;
  }
  return total;
}

/** A size as Meilisearch writes it in task details: `68 KiB`, `1.5 MiB`. */
export function byteSize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : Math.round(v * 100) / 100} ${units[u]}`;
}
