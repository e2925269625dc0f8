/**
 * The receiver: applies the log to this instance, each entry once, in the log's order.
 *
 * A task entry becomes an `enqueued` task whose uid is its sequence minus one (its payload
 * written to this instance's `update_files` first, fsynced); a change of records is committed
 * as it is. Either way the sequence received is written in the SAME transaction
 * (`meta/replication.received`), so a restart resumes at the next entry: none is applied twice
 * and none is skipped. Batches are not the receiver's: the worker runs them as the batches
 * stream orders (`batches.ts`).
 *
 * An entry that cannot be read (it is not ours, or is damaged) is skipped on every instance
 * alike, its sequence recorded; a sequence missing (the log was purged past this instance)
 * stops the receiver and asks for a restart, which starts from a snapshot (`behind`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Logger } from '../logging';
import type { KvOp } from '../native';
import { type Durable, jsonValue } from '../store/durable';
import type { LocalQueue } from '../tasks/queue';
import type { TaskRecord } from '../tasks/types';
import { BadEntry, decodeEntry, recordsOps, type TaskEntry } from './entries';
import { describe, type NatsLog, type StoredMessage } from './nats';
import { StreamReader } from './reader';

export const RECEIVED_KEY = 'replication.received';

export interface Cursor {
  seq: number;
  /** When the log stored entry `seq`. */
  time: string | null;
}

export function readCursor(kv: { get(db: string, key: string): Buffer | null }, key: string): Cursor {
  const raw = kv.get('meta', key);
  return raw ? (JSON.parse(raw.toString()) as Cursor) : { seq: 0, time: null };
}

export function cursorOp(key: string, c: Cursor): KvOp {
  return { db: 'meta', key, value: jsonValue(c) };
}

export class Receiver {
  #cursor: Cursor;
  #waiters: Array<{ seq: number; resolve: (ok: boolean) => void }> = [];
  readonly #reader: StreamReader;
  /** Why the receiver stopped for good (this instance fell behind the log), else null. */
  stuck: string | null = null;
  /** Why the next entry cannot be applied here for now (a local failure, retried), else null. */
  failing: string | null = null;
  /** The last sequence the log is known to hold (from what it sent and from the probe). */
  #known = 0;

  constructor(
    private readonly log: NatsLog,
    private readonly queue: LocalQueue,
    private readonly durable: Durable,
    private readonly updateFiles: string,
    private readonly node: string,
    private readonly logger: Logger,
    start: Cursor,
    /** Told when this instance fell behind the log's retention (it must start again from a snapshot). */
    private readonly behind: (reason: string) => void = () => undefined,
  ) {
    this.#cursor = start;
    this.#reader = new StreamReader({
      log,
      which: 'log',
      logger,
      next: () => this.#cursor.seq + 1,
      seen: () => this.#cursor.seq,
      handle: (m) => this.#handle(m),
    });
  }

  /** The last sequence applied here. */
  received(): Cursor {
    return this.#cursor;
  }

  /** The last sequence the log is known to hold. */
  knownLast(): number {
    return Math.max(this.#known, this.#cursor.seq);
  }

  /** Resolves true once entry `seq` is applied here, or false after `ms`. */
  waitFor(seq: number, ms: number): Promise<boolean> {
    if (this.#cursor.seq >= seq) return Promise.resolve(true);
    return new Promise((resolve) => {
      const w = { seq, resolve };
      this.#waiters.push(w);
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((x) => x !== w);
        resolve(false);
      }, ms);
      timer.unref?.();
      w.resolve = (ok) => {
        clearTimeout(timer);
        resolve(ok);
      };
    });
  }

  start(): void {
    this.#reader.start();
  }

  stop(): Promise<void> {
    return this.#reader.stop();
  }

  /** Told the log's last sequence (the health probe); see `StreamReader.nudge`. */
  nudge(lastSeq: number): void {
    this.#known = Math.max(this.#known, lastSeq);
    this.#reader.nudge(lastSeq);
  }

  async #handle(m: StoredMessage): Promise<boolean> {
    if (m.seq !== this.#cursor.seq + 1) {
      this.#fail(
        `the log no longer holds entries ${this.#cursor.seq + 1} to ${m.seq - 1}: this instance fell behind its retention and starts again from the latest snapshot`,
      );
      return false;
    }
    this.#known = Math.max(this.#known, m.seq + m.pending);
    try {
      await this.#apply(m.seq, m.data, m.time);
    } catch (err) {
      if (this.stuck !== null) return false;
      throw err;
    }
    return true;
  }

  #fail(reason: string): void {
    this.stuck = reason;
    this.logger.error(`replication: ${reason}`);
    this.behind(reason);
  }

  async #apply(seq: number, data: Uint8Array, time: string): Promise<void> {
    const cursor = cursorOp(RECEIVED_KEY, { seq, time });
    try {
      const { entry, inline } = decodeEntry(data);
      if (entry.kind === 'records') {
        await this.durable.commit([...recordsOps(entry), cursor]);
      } else {
        const task = await this.#task(seq - 1, entry, inline);
        await this.queue.receive(task, [cursor]);
      }
    } catch (err) {
      if (!(err instanceof BadEntry)) {
        this.failing = `entry ${seq} of the log cannot be applied on this instance (retried): ${describe(err)}`;
        throw err;
      }
      this.logger.error('replication: skipped an entry that cannot be applied', { seq, reason: err.message });
      await this.queue.commitOps([cursor]);
    }
    this.failing = null;
    this.#cursor = { seq, time };
    const ready = this.#waiters.filter((w) => w.seq <= seq);
    if (ready.length) {
      this.#waiters = this.#waiters.filter((w) => w.seq > seq);
      for (const w of ready) w.resolve(true);
    }
  }

  async #task(uid: number, e: TaskEntry, inline: Buffer): Promise<TaskRecord> {
    let payload = e.payload;
    if (payload.kind === 'documentAddition') {
      const file = path.join(this.updateFiles, `${uid}.ndjson`);
      await this.#writePayload(file, e, inline);
      payload = { ...payload, file };
    }
    const task: TaskRecord = {
      uid,
      batchUid: null,
      indexUid: e.indexUid,
      status: 'enqueued',
      type: e.type,
      canceledBy: null,
      details: e.details,
      error: null,
      enqueuedAt: e.enqueuedAt,
      startedAt: null,
      finishedAt: null,
      payload,
    };
    if (e.customMetadata !== undefined) task.customMetadata = e.customMetadata;
    if (e.network !== undefined) task.network = e.network;
    return task;
  }

  /**
   * Writes a document addition's payload to `file`, durably: the accepting instance links the
   * file it staged; the others write the entry's bytes or the object's.
   */
  async #writePayload(file: string, e: TaskEntry, inline: Buffer): Promise<void> {
    fs.mkdirSync(this.updateFiles, { recursive: true });
    const tmp = `${file}.part`;
    fs.rmSync(tmp, { force: true });
    try {
      await this.#writePart(tmp, e, inline, path.basename(file, '.ndjson'));
      syncFile(tmp);
    } catch (err) {
      // A full disk or a read cut short leaves no partial payload behind.
      fs.rmSync(tmp, { force: true });
      throw err;
    }
    fs.renameSync(tmp, file);
    syncFile(this.updateFiles);
  }

  async #writePart(tmp: string, e: TaskEntry, inline: Buffer, uid: string): Promise<void> {
    let linked = false;
    if (e.node === this.node && e.staged) {
      try {
        fs.linkSync(path.join(this.updateFiles, path.basename(e.staged)), tmp);
        linked = true;
      } catch {
        // gone already (answered, or a restart removed it): written from the log below
      }
    }
    if (!linked) {
      const docs = e.documents;
      if (!docs) throw new BadEntry('a document addition without its documents');
      if ('inline' in docs) {
        fs.writeFileSync(tmp, inline);
      } else {
        const obj = await this.log.getObject('payloads', docs.object);
        if (!obj) {
          this.#fail(
            `the payload of task ${uid} is no longer in the payloads bucket: this instance fell behind the log's retention and starts again from the latest snapshot`,
          );
          throw new Error('payload missing');
        }
        await pipeline(
          Readable.fromWeb(obj.data as import('node:stream/web').ReadableStream<Uint8Array>),
          fs.createWriteStream(tmp),
        );
        const failed = await obj.error;
        if (failed) throw failed;
      }
    }
  }
}

function syncFile(p: string): void {
  const fd = fs.openSync(p, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
