/**
 * Writes through the replicated log: the task queue routes are given, and the records the
 * key, feature, network and webhook stores write through.
 *
 * A write is validated here as on one instance and appended to the log: a 202 or 200 only once
 * JetStream acknowledged it, i.e. a quorum of its servers stored it. A change of records then
 * waits (up to the write timeout) until this instance applied it, so the answer and the reads
 * after it here see it; a task waits a moment only (`GET /tasks/:uid` here finds it either
 * way: the queue keeps the tasks it appended until they arrive).
 *
 * When the log cannot be reached or does not acknowledge in time, the write is refused with
 * `replication_unavailable` (503); nothing was applied anywhere, unless the log stored the
 * entry after all (an acknowledgement lost on the way), in which case every instance applies
 * it: a client that retries such a write may apply it twice, as with any timed-out request.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { ApiError } from '../errors/api-error';
import type { KvOp } from '../native';
import type { Durable, Records } from '../store/durable';
import type { EnqueueInit, LocalQueue, TaskQueue, Visible } from '../tasks/queue';
import type { TaskFilter } from '../tasks/filter';
import type { TaskRecord } from '../tasks/types';
import { nowIso } from '../util/time';
import { encodeEntry, INLINE_PAYLOAD_MAX, recordsEntry, type TaskEntry } from './entries';
import { LogUnavailable, type NatsLog } from './nats';
import type { Receiver } from './receiver';

/** How long a 202 waits for this instance to have received its task (else it answers from what it appended). */
const TASK_WAIT_MS = 250;

export function unavailable(err: unknown): ApiError {
  const why = err instanceof Error ? err.message : String(err);
  return new ApiError(
    'replication_unavailable',
    `The replicated task log is unavailable: ${why}. The write was not acknowledged; searches and reads keep answering from this instance.`,
  );
}

/** Appends an entry; `LogUnavailable` becomes `replication_unavailable`. */
async function append(
  log: NatsLog,
  bytes: Buffer,
  msgId: string,
  onOutcome: (ok: boolean, err?: unknown) => void,
): Promise<number> {
  try {
    const seq = await log.append(bytes, msgId);
    onOutcome(true);
    return seq;
  } catch (err) {
    onOutcome(false, err);
    if (err instanceof LogUnavailable) throw unavailable(err);
    throw err;
  }
}

export interface WriteContext {
  log: NatsLog;
  receiver: Receiver;
  node: string;
  /** How long an answer waits for this instance to apply its own write. */
  applyWaitMs: number;
  /** Told of every append's outcome (the health check). */
  onOutcome: (ok: boolean, err?: unknown) => void;
}

/** The queue routes use: enqueues go through the log, reads are this instance's. */
export function replicatedQueue(local: LocalQueue, ctx: WriteContext): TaskQueue {
  /** Tasks this instance appended and has not received yet (so `GET /tasks/:uid` finds them). */
  const pending = new Map<number, TaskRecord>();

  async function enqueue(init: EnqueueInit, msgId: string = randomUUID()): Promise<TaskRecord> {
    const entry: TaskEntry = {
      kind: 'task',
      node: ctx.node,
      enqueuedAt: nowIso(),
      indexUid: init.indexUid,
      type: init.type,
      details: init.details,
      payload: init.payload,
    };
    if (init.customMetadata !== undefined) entry.customMetadata = init.customMetadata;
    if (init.network !== undefined) entry.network = init.network;
    let inline: Buffer | null = null;
    const staged = init.payload.kind === 'documentAddition' ? init.payload.file : null;
    try {
      if (staged !== null && init.payload.kind === 'documentAddition') {
        entry.payload = { ...init.payload, file: '' };
        entry.staged = path.basename(staged);
        const size = fs.statSync(staged).size;
        if (size <= INLINE_PAYLOAD_MAX) {
          inline = fs.readFileSync(staged);
          entry.documents = { inline: inline.length };
        } else {
          try {
            await ctx.log.putObject(
              'payloads',
              msgId,
              Readable.toWeb(fs.createReadStream(staged)) as ReadableStream<Uint8Array>,
            );
          } catch (err) {
            ctx.onOutcome(false, err);
            throw unavailable(err);
          }
          entry.documents = { object: msgId, size };
        }
      }
      const seq = await append(ctx.log, encodeEntry(entry, inline), msgId, ctx.onOutcome);
      const uid = seq - 1;
      const record: TaskRecord = {
        uid,
        batchUid: null,
        indexUid: entry.indexUid,
        status: 'enqueued',
        type: entry.type,
        canceledBy: null,
        details: entry.details,
        error: null,
        enqueuedAt: entry.enqueuedAt,
        startedAt: null,
        finishedAt: null,
        payload: init.payload,
      };
      if (entry.customMetadata !== undefined) record.customMetadata = entry.customMetadata;
      if (entry.network !== undefined) record.network = entry.network;
      pending.set(uid, record);
      void ctx.receiver.waitFor(seq, 24 * 3600_000).then(() => pending.delete(uid));
      // The task is the log's now; a moment's wait lets this instance's task list show it too
      // (a receiver held up by a lost NATS server must not hold the answer up).
      await ctx.receiver.waitFor(seq, TASK_WAIT_MS);
      return local.get(uid) ?? record;
    } finally {
      // The receiver linked its own copy, or will write it from the log.
      if (staged !== null) fs.rmSync(staged, { force: true });
    }
  }

  const queue: TaskQueue = {
    enqueue: (init) => enqueue(init),
    get: (uid) => local.get(uid) ?? pending.get(uid),
    list: (filter, limit, from, reverse, visible) => local.list(filter, limit, from, reverse, visible),
    cancel: (filter: TaskFilter, visible: Visible, originalFilter: string) =>
      enqueue(local.cancelation(filter, visible, originalFilter)),
    delete: (filter: TaskFilter, visible: Visible, originalFilter: string) =>
      enqueue(local.deletion(filter, visible, originalFilter)),
    getBatch: (uid) => local.getBatch(uid),
    listBatches: (filter, limit, from, reverse, visible) => local.listBatches(filter, limit, from, reverse, visible),
    allBatches: () => local.allBatches(),
    batchProgress: (uid) => local.batchProgress(uid),
    isIndexing: (uid) => local.isIndexing(uid),
  };
  return Object.assign(queue, { enqueueOnce: enqueue });
}

/**
 * A task that instances enqueuing the same `id` within the log's duplicate window (two
 * minutes) enqueue once: the clock's scheduled snapshots, which every instance's clock asks for.
 */
export function enqueueOnce(queue: TaskQueue, init: EnqueueInit, id: string): Promise<TaskRecord> {
  const once = (queue as TaskQueue & { enqueueOnce?: (i: EnqueueInit, id: string) => Promise<TaskRecord> }).enqueueOnce;
  return once ? once(init, id) : queue.enqueue(init);
}

/** The records of keys, features, network and webhooks, changed through the log. */
export class ReplicatedRecords implements Records {
  constructor(
    private readonly local: Durable,
    private readonly ctx: WriteContext,
  ) {}

  get kv() {
    return this.local.kv;
  }

  watch(db: string, listener: (op: KvOp) => void): void {
    this.local.watch(db, listener);
  }

  async commit(ops: KvOp[]): Promise<void> {
    const seq = await append(
      this.ctx.log,
      encodeEntry(recordsEntry(this.ctx.node, ops)),
      randomUUID(),
      this.ctx.onOutcome,
    );
    await this.ctx.receiver.waitFor(seq, this.ctx.applyWaitMs);
  }
}
