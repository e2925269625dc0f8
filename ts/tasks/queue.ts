/**
 * The task queue: tasks and batches, their durable records and an in-memory cache of them.
 *
 * Two narrow surfaces over one private implementation (nothing else reaches its maps or
 * counters): routes hold a {@link TaskQueue} and can enqueue, read, list, and register
 * cancelations and deletions, never process anything; the worker holds a {@link WorkerQueue}
 * and is the only code that moves a task out of `enqueued`, by starting a batch and recording
 * its outcome.
 *
 * Durability: `enqueue` resolves only after the task (and, for document additions, its
 * already-fsynced payload file) is committed in the KvStore, so a 202 is never lost. The
 * in-memory maps are a cache of the store, updated after each commit.
 */
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import type { KvOp } from '../native';
import { type Durable, jsonValue, uidKey } from '../store/durable';
import { durationIso, nowIso } from '../util/time';
import { ApiError } from '../errors/api-error';
import type { NextBatch } from './autobatch';
import { matchesTask, type TaskFilter } from './filter';
import type { BatchRecord, TaskPayload, TaskRecord, TaskType } from './types';

const TASKS = 'tasks';
const BATCHES = 'batches';

export interface EnqueueInit {
  indexUid: string | null;
  type: TaskType;
  details: Record<string, unknown> | null;
  payload: TaskPayload;
  customMetadata?: string;
  network?: Record<string, unknown>;
}

export interface Page<T> {
  results: T[];
  total: number;
  limit: number;
  from: number | null;
  next: number | null;
}

/** Which tasks a caller may see. */
export type Visible = (t: TaskRecord) => boolean;

/** What routes may do: enqueue, read and list; cancelation and deletion are tasks too. */
export interface TaskQueue {
  /** Appends a task; resolves once it is durable. */
  enqueue(init: EnqueueInit): Promise<TaskRecord>;
  get(uid: number): TaskRecord | undefined;
  /** A page of the tasks matching `filter`; `total` counts matches, hidden ones included. */
  list(filter: TaskFilter, limit: number, from: number | null, reverse: boolean, visible: Visible): Page<TaskRecord>;
  /** Enqueues a `taskCancelation` of the visible tasks matching `filter` (run by the worker). */
  cancel(filter: TaskFilter, visible: Visible, originalFilter: string): Promise<TaskRecord>;
  /** Enqueues a `taskDeletion` of the visible tasks matching `filter` (run by the worker). */
  delete(filter: TaskFilter, visible: Visible, originalFilter: string): Promise<TaskRecord>;
  getBatch(uid: number): BatchRecord | undefined;
  /** A page of the batches with a task matching `filter` and a visible task. */
  listBatches(
    filter: TaskFilter,
    limit: number,
    from: number | null,
    reverse: boolean,
    visible: Visible,
  ): Page<BatchRecord>;
  /** Every batch, in no particular order. */
  allBatches(): Iterable<BatchRecord>;
  /** The progress of batch `uid` while it runs, else null. */
  batchProgress(uid: number): unknown;
  /** Whether the running batch is on index `indexUid`. */
  isIndexing(indexUid: string): boolean;
}

/** Writes to the queue's own records that commit together with a batch's outcome. */
export interface QueueWrites {
  /** Tasks outside the batch rewritten by it (canceled, moved by a rename). */
  tasks: TaskRecord[];
  deletedTasks: number[];
  deletedBatches: number[];
}

export function noQueueWrites(): QueueWrites {
  return { tasks: [], deletedTasks: [], deletedBatches: [] };
}

/** What the worker may do: read everything, start a batch and record its outcome. */
export interface WorkerQueue {
  onEnqueued(listener: (t: TaskRecord) => void): void;
  get(uid: number): TaskRecord | undefined;
  allTasks(): Iterable<TaskRecord>;
  allBatches(): Iterable<BatchRecord>;
  /** The enqueued tasks in uid order. */
  enqueued(): TaskRecord[];
  /**
   * Start-up reconciliation: tasks left `processing` go back to `enqueued` and their
   * unfinished batches are dropped. Resolves with the requeued uids.
   */
  requeueInterrupted(): Promise<number[]>;
  /**
   * Commits `next`'s tasks as `processing` in a new batch, which becomes the running one. Its
   * uid is the next one, or `uid` when the batch was numbered elsewhere (the replicated log).
   */
  startBatch(
    next: NextBatch,
    progress: () => unknown,
    uid?: number,
  ): Promise<{ batch: BatchRecord; processing: TaskRecord[] }>;
  /** Undoes `startBatch`: its tasks back to `enqueued`, its record gone; nothing runs any more. */
  abandonBatch(batch: BatchRecord): Promise<void>;
  /**
   * Commits the batch's finished tasks and record, the queue writes and `ops` (other stores'
   * writes) in ONE transaction, then updates the cache; nothing runs any more.
   */
  finishBatch(done: TaskRecord[], finished: BatchRecord, writes: QueueWrites, ops: KvOp[]): Promise<void>;
}

/**
 * What the replicated log's receiver needs besides: tasks numbered by the log are added as they
 * arrive, and cancelations and deletions are described here but enqueued there.
 */
export interface ReceivingQueue {
  /** Adds a task numbered elsewhere, committing `extra` in the same transaction. */
  receive(task: TaskRecord, extra: KvOp[]): Promise<void>;
  /** Commits `ops` (the receiver's cursor) alone, in order with the receptions. */
  commitOps(ops: KvOp[]): Promise<void>;
  cancelation(filter: TaskFilter, visible: Visible, originalFilter: string): EnqueueInit;
  deletion(filter: TaskFilter, visible: Visible, originalFilter: string): EnqueueInit;
}

export type LocalQueue = TaskQueue & WorkerQueue & ReceivingQueue;

/** Opens the queue over the durable store, loading its records. */
export function openQueue(durable: Durable): LocalQueue {
  return new Queue(durable);
}

class Queue implements TaskQueue, WorkerQueue, ReceivingQueue {
  readonly #tasks = new Map<number, TaskRecord>();
  readonly #batches = new Map<number, BatchRecord>();
  readonly #events = new EventEmitter();
  readonly #durable: Durable;
  #nextUid = 0;
  #nextBatchUid = 0;
  /** The batch being processed, for `progress` and `isIndexing`. */
  #current: { batch: BatchRecord; indexUid: string | null; progress: () => unknown } | null = null;

  constructor(durable: Durable) {
    this.#durable = durable;
    for (const { value } of durable.kv.scan(TASKS)) {
      const t = JSON.parse(value.toString()) as TaskRecord;
      this.#tasks.set(t.uid, t);
      this.#nextUid = Math.max(this.#nextUid, t.uid + 1);
    }
    for (const { value } of durable.kv.scan(BATCHES)) {
      const b = JSON.parse(value.toString()) as BatchRecord;
      this.#batches.set(b.uid, b);
      this.#nextBatchUid = Math.max(this.#nextBatchUid, b.uid + 1);
    }
    const meta = durable.kv.get('meta', 'counters');
    if (meta) {
      const c = JSON.parse(meta.toString()) as { nextUid: number; nextBatchUid: number };
      this.#nextUid = Math.max(this.#nextUid, c.nextUid);
      this.#nextBatchUid = Math.max(this.#nextBatchUid, c.nextBatchUid);
    }
  }

  /** Persists the counters so uids are never reused after deletions. */
  #countersOp(): KvOp {
    return {
      db: 'meta',
      key: 'counters',
      value: jsonValue({ nextUid: this.#nextUid, nextBatchUid: this.#nextBatchUid }),
    };
  }

  async enqueue(init: EnqueueInit): Promise<TaskRecord> {
    const task: TaskRecord = {
      uid: this.#nextUid++,
      batchUid: null,
      indexUid: init.indexUid,
      status: 'enqueued',
      type: init.type,
      canceledBy: null,
      details: init.details,
      error: null,
      enqueuedAt: nowIso(),
      startedAt: null,
      finishedAt: null,
      payload: init.payload,
    };
    if (init.customMetadata !== undefined) task.customMetadata = init.customMetadata;
    if (init.network !== undefined) task.network = init.network;
    await this.#durable.commit([taskOp(task), this.#countersOp()]);
    this.#tasks.set(task.uid, task);
    this.#events.emit('enqueued', task);
    return task;
  }

  async receive(task: TaskRecord, extra: KvOp[]): Promise<void> {
    this.#nextUid = Math.max(this.#nextUid, task.uid + 1);
    await this.#durable.commit([taskOp(task), ...extra]);
    this.#tasks.set(task.uid, task);
    this.#events.emit('enqueued', task);
  }

  commitOps(ops: KvOp[]): Promise<void> {
    return this.#durable.commit(ops);
  }

  onEnqueued(listener: (t: TaskRecord) => void): void {
    this.#events.on('enqueued', listener);
  }

  /** The uids of tasks matching a filter (cancel/delete registration). */
  #matching(filter: TaskFilter, visible: Visible): number[] {
    const out: number[] = [];
    for (const t of this.#tasks.values()) {
      if (visible(t) && matchesTask(filter, t, this.#startedAtOf(t))) out.push(t.uid);
    }
    return out;
  }

  cancel(filter: TaskFilter, visible: Visible, originalFilter: string): Promise<TaskRecord> {
    return this.enqueue(this.cancelation(filter, visible, originalFilter));
  }

  delete(filter: TaskFilter, visible: Visible, originalFilter: string): Promise<TaskRecord> {
    return this.enqueue(this.deletion(filter, visible, originalFilter));
  }

  cancelation(filter: TaskFilter, visible: Visible, originalFilter: string): EnqueueInit {
    const matched = this.#matching(filter, visible);
    return {
      indexUid: null,
      type: 'taskCancelation',
      details: { matchedTasks: matched.length, canceledTasks: null, originalFilter },
      payload: { kind: 'taskCancelation', matched },
    };
  }

  deletion(filter: TaskFilter, visible: Visible, originalFilter: string): EnqueueInit {
    const matched = this.#matching(filter, visible);
    return {
      indexUid: null,
      type: 'taskDeletion',
      details: { matchedTasks: matched.length, deletedTasks: null, originalFilter },
      payload: { kind: 'taskDeletion', matched },
    };
  }

  get(uid: number): TaskRecord | undefined {
    return this.#tasks.get(uid);
  }

  getBatch(uid: number): BatchRecord | undefined {
    return this.#batches.get(uid);
  }

  allTasks(): Iterable<TaskRecord> {
    return this.#tasks.values();
  }

  allBatches(): Iterable<BatchRecord> {
    return this.#batches.values();
  }

  enqueued(): TaskRecord[] {
    return [...this.#tasks.values()].filter((t) => t.status === 'enqueued').sort((a, b) => a.uid - b.uid);
  }

  /** `startedAt` filters see processing tasks through their running batch. */
  #startedAtOf(t: TaskRecord): string | null {
    if (t.status === 'processing' && this.#current) return this.#current.batch.startedAt;
    return t.startedAt;
  }

  batchProgress(uid: number): unknown {
    const cur = this.#current;
    if (!cur || cur.batch.uid !== uid) return null;
    return (
      cur.progress() ?? {
        steps: [{ currentStep: 'processing tasks', finished: 0, total: cur.batch.taskUids.length }],
        percentage: 0,
      }
    );
  }

  isIndexing(indexUid: string): boolean {
    return this.#current?.indexUid === indexUid;
  }

  list(filter: TaskFilter, limit: number, from: number | null, reverse: boolean, visible: Visible): Page<TaskRecord> {
    const uids = [...this.#tasks.keys()].sort((a, b) => a - b);
    if (!reverse) uids.reverse();
    const matched: TaskRecord[] = [];
    let total = 0;
    for (const uid of uids) {
      const t = this.#tasks.get(uid)!;
      if (!matchesTask(filter, t, this.#startedAtOf(t))) continue;
      total++;
      if (!visible(t)) continue;
      if (from !== null && (reverse ? uid < from : uid > from)) continue;
      if (matched.length <= limit) matched.push(t);
    }
    const results = matched.slice(0, limit);
    const next = matched.length > limit ? matched[limit].uid : null;
    return { results, total, limit, from: results.length ? results[0].uid : null, next };
  }

  listBatches(
    filter: TaskFilter,
    limit: number,
    from: number | null,
    reverse: boolean,
    visible: Visible,
  ): Page<BatchRecord> {
    const uids = [...this.#batches.keys()].sort((a, b) => a - b);
    if (!reverse) uids.reverse();
    const { uids: batchFilter, ...taskFilter } = filter;
    const matched: BatchRecord[] = [];
    let total = 0;
    for (const uid of uids) {
      const b = this.#batches.get(uid)!;
      if (batchFilter && !batchFilter.has(uid)) continue;
      if (filter.batchUids && !filter.batchUids.has(uid)) continue;
      const members = b.taskUids.map((u) => this.#tasks.get(u)).filter((t): t is TaskRecord => t !== undefined);
      const hasTaskFilter = Object.values(taskFilter).some((v) => v !== undefined);
      if (
        hasTaskFilter &&
        !members.some((t) => matchesTask({ ...taskFilter, batchUids: undefined }, t, t.startedAt ?? b.startedAt))
      )
        continue;
      if (members.length > 0 && !members.some(visible)) continue;
      total++;
      if (from !== null && (reverse ? uid < from : uid > from)) continue;
      if (matched.length <= limit) matched.push(b);
    }
    const results = matched.slice(0, limit);
    const next = matched.length > limit ? matched[limit].uid : null;
    return { results, total, limit, from: results.length ? results[0].uid : null, next };
  }

  async requeueInterrupted(): Promise<number[]> {
    const interruptedBatches = new Set<number>();
    const touched: TaskRecord[] = [];
    for (const t of this.#tasks.values()) {
      if (t.status !== 'processing') continue;
      if (t.batchUid !== null) interruptedBatches.add(t.batchUid);
      touched.push({ ...t, status: 'enqueued', batchUid: null, startedAt: null });
    }
    for (const b of this.#batches.values()) if (b.finishedAt === null) interruptedBatches.add(b.uid);
    const ops = [...touched.map(taskOp), ...[...interruptedBatches].map(deleteBatchOp)];
    if (ops.length) await this.#durable.commit(ops);
    for (const t of touched) this.#tasks.set(t.uid, t);
    for (const uid of interruptedBatches) this.#batches.delete(uid);
    return touched.map((t) => t.uid);
  }

  async startBatch(
    next: NextBatch,
    progress: () => unknown,
    uid?: number,
  ): Promise<{ batch: BatchRecord; processing: TaskRecord[] }> {
    const startedAt = nowIso();
    const batchUid = uid ?? this.#nextBatchUid;
    this.#nextBatchUid = Math.max(this.#nextBatchUid, batchUid + 1);
    const batch: BatchRecord = {
      uid: batchUid,
      taskUids: next.tasks.map((t) => t.uid),
      details: {},
      stats: {
        totalNbTasks: next.tasks.length,
        status: { processing: next.tasks.length },
        types: {},
        indexUids: {},
        progressTrace: {},
      },
      startedAt,
      finishedAt: null,
      batchStrategy: next.strategy,
    };
    const processing = next.tasks.map((t) => ({ ...t, status: 'processing' as const, batchUid: batch.uid, startedAt }));
    await this.#durable.commit([...processing.map(taskOp), batchOp(batch), this.#countersOp()]);
    for (const t of processing) this.#tasks.set(t.uid, t);
    this.#batches.set(batch.uid, batch);
    this.#current = { batch, indexUid: next.indexUid, progress };
    return { batch, processing };
  }

  async abandonBatch(batch: BatchRecord): Promise<void> {
    const back = batch.taskUids
      .map((u) => this.#tasks.get(u))
      .filter((t): t is TaskRecord => t !== undefined)
      .map((t) => ({ ...t, status: 'enqueued' as const, batchUid: null, startedAt: null }));
    await this.#durable.commit([...back.map(taskOp), deleteBatchOp(batch.uid)]);
    for (const t of back) this.#tasks.set(t.uid, t);
    this.#batches.delete(batch.uid);
    this.#current = null;
  }

  async finishBatch(done: TaskRecord[], finished: BatchRecord, writes: QueueWrites, ops: KvOp[]): Promise<void> {
    await this.#durable.commit([
      ...ops,
      ...writes.tasks.map(taskOp),
      ...writes.deletedTasks.map(deleteTaskOp),
      ...writes.deletedBatches.map(deleteBatchOp),
      ...done.map(taskOp),
      batchOp(finished),
    ]);
    for (const t of done) this.#tasks.set(t.uid, t);
    this.#batches.set(finished.uid, finished);
    for (const t of writes.tasks) this.#tasks.set(t.uid, t);
    for (const uid of writes.deletedTasks) this.#tasks.delete(uid);
    for (const uid of writes.deletedBatches) this.#batches.delete(uid);
    this.#current = null;
  }
}

export function taskOp(t: TaskRecord): KvOp {
  return { db: TASKS, key: uidKey(t.uid), value: jsonValue(t) };
}

function deleteTaskOp(uid: number): KvOp {
  return { db: TASKS, key: uidKey(uid), value: null };
}

export function batchOp(b: BatchRecord): KvOp {
  return { db: BATCHES, key: uidKey(b.uid), value: jsonValue(b) };
}

function deleteBatchOp(uid: number): KvOp {
  return { db: BATCHES, key: uidKey(uid), value: null };
}

/**
 * Where a document addition's payload is: in `updateFiles`, by its file name (the record may
 * hold the path it had in another data directory, one a dump or snapshot came from).
 */
export function payloadFile(updateFiles: string, t: TaskRecord): string | null {
  return t.payload.kind === 'documentAddition' ? path.join(updateFiles, path.basename(t.payload.file)) : null;
}

/** Deletes a payload file once its task can never run again. */
export function removePayload(updateFiles: string, t: TaskRecord): void {
  const file = payloadFile(updateFiles, t);
  if (file) fs.rmSync(file, { force: true });
}

/** `task_not_found` for task `uid`. */
export function taskNotFound(uid: number): ApiError {
  return new ApiError('task_not_found', `Task \`${uid}\` not found.`);
}

export function summaryView(t: TaskRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {
    taskUid: t.uid,
    indexUid: t.indexUid,
    status: t.status,
    type: t.type,
    enqueuedAt: t.enqueuedAt,
  };
  if (t.customMetadata !== undefined) out.customMetadata = t.customMetadata;
  return out;
}

export function taskView(t: TaskRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {
    uid: t.uid,
    batchUid: t.batchUid,
    indexUid: t.indexUid,
    status: t.status,
    type: t.type,
    canceledBy: t.canceledBy,
  };
  if (t.details !== null) out.details = t.details;
  out.error = t.error;
  out.duration = t.startedAt && t.finishedAt ? durationIso(t.startedAt, t.finishedAt) : null;
  out.enqueuedAt = t.enqueuedAt;
  out.startedAt = t.startedAt;
  out.finishedAt = t.finishedAt;
  if (t.network !== undefined) out.network = t.network;
  if (t.customMetadata !== undefined) out.customMetadata = t.customMetadata;
  return out;
}

export function batchView(b: BatchRecord, progress: unknown): Record<string, unknown> {
  return {
    uid: b.uid,
    progress: b.finishedAt === null ? (progress ?? null) : null,
    details: b.details,
    stats: b.stats,
    duration: b.finishedAt ? durationIso(b.startedAt, b.finishedAt) : null,
    startedAt: b.startedAt,
    finishedAt: b.finishedAt,
    batchStrategy: b.batchStrategy,
  };
}
