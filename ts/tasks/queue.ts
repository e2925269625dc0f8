/**
 * The task queue's public surface: routes enqueue, read, list, cancel and delete through
 * it and never process anything. Only `worker.ts` moves a task out of `enqueued`.
 *
 * Durability: `enqueue` resolves only after the task (and, for document additions, its
 * already-fsynced payload file) is committed in the KvStore, so a 202 is never lost. The
 * in-memory maps are a cache of the store, updated after each commit.
 */
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import type { KvOp } from '../native';
import { type Durable, jsonValue, uidKey } from '../store/durable';
import { durationIso, nowIso } from '../util/time';
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
}

export interface Page<T> {
  results: T[];
  total: number;
  limit: number;
  from: number | null;
  next: number | null;
}

export class TaskQueue extends EventEmitter {
  readonly tasks = new Map<number, TaskRecord>();
  readonly batches = new Map<number, BatchRecord>();
  private nextUid = 0;
  nextBatchUid = 0;
  /** The batch being processed, for `progress` and `isIndexing`. */
  current: { batch: BatchRecord; indexUid: string | null; progress: () => unknown } | null = null;

  constructor(readonly durable: Durable) {
    super();
    for (const { value } of durable.kv.scan(TASKS)) {
      const t = JSON.parse(value.toString()) as TaskRecord;
      this.tasks.set(t.uid, t);
      this.nextUid = Math.max(this.nextUid, t.uid + 1);
    }
    for (const { value } of durable.kv.scan(BATCHES)) {
      const b = JSON.parse(value.toString()) as BatchRecord;
      this.batches.set(b.uid, b);
      this.nextBatchUid = Math.max(this.nextBatchUid, b.uid + 1);
    }
    const meta = durable.kv.get('meta', 'counters');
    if (meta) {
      const c = JSON.parse(meta.toString()) as { nextUid: number; nextBatchUid: number };
      this.nextUid = Math.max(this.nextUid, c.nextUid);
      this.nextBatchUid = Math.max(this.nextBatchUid, c.nextBatchUid);
    }
  }

  /** Persists the counters so uids are never reused after deletions. */
  countersOp(): KvOp {
    return { db: 'meta', key: 'counters', value: jsonValue({ nextUid: this.nextUid, nextBatchUid: this.nextBatchUid }) };
  }

  async enqueue(init: EnqueueInit): Promise<TaskRecord> {
    const task: TaskRecord = {
      uid: this.nextUid++,
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
    await this.durable.commit([this.taskOp(task), this.countersOp()]);
    this.tasks.set(task.uid, task);
    this.emit('enqueued', task);
    return task;
  }

  /** The uids of tasks matching a filter, excluding `newerThan` and later (cancel/delete registration). */
  matching(filter: TaskFilter, visible: (t: TaskRecord) => boolean): number[] {
    const out: number[] = [];
    for (const t of this.tasks.values()) {
      if (visible(t) && matchesTask(filter, t, this.startedAtOf(t))) out.push(t.uid);
    }
    return out;
  }

  get(uid: number): TaskRecord | undefined {
    return this.tasks.get(uid);
  }

  /** `startedAt` filters see processing tasks through their running batch. */
  private startedAtOf(t: TaskRecord): string | null {
    if (t.status === 'processing' && this.current) return this.current.batch.startedAt;
    return t.startedAt;
  }

  list(filter: TaskFilter, limit: number, from: number | null, reverse: boolean, visible: (t: TaskRecord) => boolean): Page<TaskRecord> {
    const uids = [...this.tasks.keys()].sort((a, b) => a - b);
    if (!reverse) uids.reverse();
    const matched: TaskRecord[] = [];
    let total = 0;
    for (const uid of uids) {
      const t = this.tasks.get(uid)!;
      if (!matchesTask(filter, t, this.startedAtOf(t))) continue;
      total++;
      if (!visible(t)) continue;
      if (from !== null && (reverse ? uid < from : uid > from)) continue;
      if (matched.length <= limit) matched.push(t);
    }
    const results = matched.slice(0, limit);
    const next = matched.length > limit ? matched[limit].uid : null;
    return { results, total, limit, from: results.length ? results[0].uid : null, next };
  }

  listBatches(filter: TaskFilter, limit: number, from: number | null, reverse: boolean, visible: (t: TaskRecord) => boolean): Page<BatchRecord> {
    const uids = [...this.batches.keys()].sort((a, b) => a - b);
    if (!reverse) uids.reverse();
    const { uids: batchFilter, ...taskFilter } = filter;
    const matched: BatchRecord[] = [];
    let total = 0;
    for (const uid of uids) {
      const b = this.batches.get(uid)!;
      if (batchFilter && !batchFilter.has(uid)) continue;
      if (filter.batchUids && !filter.batchUids.has(uid)) continue;
      const members = b.taskUids.map((u) => this.tasks.get(u)).filter((t): t is TaskRecord => t !== undefined);
      const hasTaskFilter = Object.values(taskFilter).some((v) => v !== undefined);
      if (hasTaskFilter && !members.some((t) => matchesTask({ ...taskFilter, batchUids: undefined }, t, t.startedAt ?? b.startedAt))) continue;
      if (members.length > 0 && !members.some(visible)) continue;
      total++;
      if (from !== null && (reverse ? uid < from : uid > from)) continue;
      if (matched.length <= limit) matched.push(b);
    }
    const results = matched.slice(0, limit);
    const next = matched.length > limit ? matched[limit].uid : null;
    return { results, total, limit, from: results.length ? results[0].uid : null, next };
  }

  taskOp(t: TaskRecord): KvOp {
    return { db: TASKS, key: uidKey(t.uid), value: jsonValue(t) };
  }

  deleteTaskOp(uid: number): KvOp {
    return { db: TASKS, key: uidKey(uid), value: null };
  }

  batchOp(b: BatchRecord): KvOp {
    return { db: BATCHES, key: uidKey(b.uid), value: jsonValue(b) };
  }

  deleteBatchOp(uid: number): KvOp {
    return { db: BATCHES, key: uidKey(uid), value: null };
  }

  /** Deletes a payload file once its task can never run again. */
  static removePayload(t: TaskRecord): void {
    if (t.payload.kind === 'documentAddition') fs.rmSync(t.payload.file, { force: true });
  }
}

export function summaryView(t: TaskRecord): Record<string, unknown> {
  const out: Record<string, unknown> = { taskUid: t.uid, indexUid: t.indexUid, status: t.status, type: t.type, enqueuedAt: t.enqueuedAt };
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
