/**
 * One instance of a replicated group (`--replication-nats`): the pieces of `replication/`
 * put together for `runtime.ts`, and the health of the whole.
 *
 * Start-up order: connect to NATS and make sure the streams and buckets exist; while the data
 * directory is locked but not yet open, start from a snapshot if this instance has no data or
 * fell behind the log (`snapshots.ts`); once the stores are open, record which stream the
 * directory replicates; then the receiver applies the log from its cursor (`receiver.ts`), the
 * worker runs the batches the log orders (`batches.ts`), and routes write through the log
 * (`writes.ts`). Without `--replication-nats` none of this exists and the queue is the one
 * instance's LMDB queue, as before.
 */
import path from 'node:path';
import { defaultKeys, keyOp, type KeyStore } from '../auth/keys';
import type { Logger } from '../logging';
import type { KvStore } from '../native';
import { type Durable, jsonValue, type Records } from '../store/durable';
import type { BatchPlanner } from '../tasks/planner';
import type { LocalQueue, TaskQueue } from '../tasks/queue';
import { DECIDED_KEY, ReplicatedBatches } from './batches';
import { encodeEntry, recordsEntry } from './entries';
import { describe, LogRefused, NatsLog } from './nats';
import { readCursor, RECEIVED_KEY, Receiver } from './receiver';
import { joinLog, localState, ReplicationStartError, Snapshots, STREAM_KEY, type StreamIdentity } from './snapshots';
import { replicatedQueue, ReplicatedRecords, type WriteContext } from './writes';

export interface ReplicationConfig {
  servers: string[];
  stream: string;
  replicas: number;
  node: string;
  snapshotIntervalSeconds: number;
  /** How long a write waits for the log before `replication_unavailable`. */
  timeoutMs: number;
  /** How long an instance that stopped reporting its position still holds back the log's retention. */
  laggingGraceSeconds: number;
}

/** How long start-up waits for the log before refusing to start (an instance with data starts degraded instead). */
const STARTUP_WAIT_MS = 30_000;

export class Replica {
  #receiver: Receiver | null = null;
  #batches: ReplicatedBatches | null = null;
  #snapshots: Snapshots | null = null;
  #lastWrite: { ok: boolean; error: string | null } = { ok: true, error: null };
  #probe: { ok: boolean; error: string | null } = { ok: true, error: null };
  #probeTimer: NodeJS.Timeout | null = null;
  #ctx: WriteContext | null = null;
  /** Told when this instance fell behind the log's retention and must start again (`runtime.ts`). */
  onBehind: (reason: string) => void = () => undefined;

  private constructor(
    readonly log: NatsLog,
    readonly config: ReplicationConfig,
    private identity: StreamIdentity | null,
    private readonly logger: Logger,
  ) {}

  /** Connects and, with `dbPath` locked and not yet opened, starts it from a snapshot if it must. */
  static async join(config: ReplicationConfig, dbPath: string, logger: Logger): Promise<Replica> {
    const deadline = Date.now() + STARTUP_WAIT_MS;
    const log = await NatsLog.connect(
      {
        servers: config.servers,
        stream: config.stream,
        replicas: config.replicas,
        node: config.node,
        timeoutMs: config.timeoutMs,
      },
      STARTUP_WAIT_MS,
    ).catch((err: unknown) => {
      throw new ReplicationStartError(describe(err));
    });
    let last: unknown = null;
    try {
      while (Date.now() < deadline) {
        try {
          const states = await log.ensure();
          const identity = await joinLog(log, states, dbPath, logger);
          return new Replica(log, config, identity, logger);
        } catch (err) {
          if (err instanceof ReplicationStartError) throw err;
          if (err instanceof LogRefused) throw new ReplicationStartError(err.message);
          // Streams just created elect their leaders; a lost quorum may come back.
          last = err;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
      // No quorum now. A directory that already replicates this stream starts on its own
      // data (reads answer; writes wait for the log); an empty one cannot start.
      const local = localState(dbPath);
      if (!local.identity || local.identity.name !== config.stream)
        throw new ReplicationStartError(
          `the streams could not be opened within ${STARTUP_WAIT_MS / 1000} s: ${describe(last)}`,
        );
      logger.warn("replication: the log has no quorum; starting on this instance's data", { error: describe(last) });
      return new Replica(log, config, local.identity, logger);
    } catch (err) {
      await log.close();
      throw err;
    }
  }

  /** Records, on first start, which stream this data directory replicates. */
  async adopt(durable: Durable): Promise<void> {
    if (durable.kv.get('meta', STREAM_KEY) || !this.identity) return;
    await durable.commit([{ db: 'meta', key: STREAM_KEY, value: jsonValue(this.identity) }]);
  }

  /** Wires the receiver and the batches to this instance's queue; returns the worker's planner. */
  attach(
    queue: LocalQueue,
    durable: Durable,
    updateFiles: string,
    wake: () => void,
  ): { planner: BatchPlanner; records: Records } {
    const kv: KvStore = durable.kv;
    this.#receiver = new Receiver(
      this.log,
      queue,
      durable,
      path.resolve(updateFiles),
      this.config.node,
      this.logger,
      readCursor(kv, RECEIVED_KEY),
      (reason) => this.onBehind(reason),
    );
    this.#batches = new ReplicatedBatches(
      this.log,
      queue,
      this.config.node,
      wake,
      this.logger,
      readCursor(kv, DECIDED_KEY),
    );
    this.#ctx = {
      log: this.log,
      receiver: this.#receiver,
      node: this.config.node,
      applyWaitMs: this.config.timeoutMs,
      onOutcome: (ok, err) => {
        this.#lastWrite = { ok, error: ok ? null : describe(err) };
      },
    };
    return { planner: this.#batches, records: new ReplicatedRecords(durable, this.#ctx) };
  }

  /** The queue routes use. */
  queue(local: LocalQueue): TaskQueue {
    if (!this.#ctx) throw new Error('replication: attach() first');
    return replicatedQueue(local, this.#ctx);
  }

  /** Starts receiving, running batches and publishing snapshots. */
  async start(keys: KeyStore, writeSnapshot: () => Promise<string>): Promise<void> {
    const receiver = this.#receiver!;
    const batches = this.#batches!;
    if (this.identity && this.config.snapshotIntervalSeconds > 0) {
      this.#snapshots = new Snapshots(
        this.log,
        this.identity,
        this.config.snapshotIntervalSeconds * 1000,
        this.config.laggingGraceSeconds * 1000,
        this.config.node,
        this.logger,
        writeSnapshot,
        () => ({
          received: receiver.received(),
          decided: batches.decided(),
        }),
      );
      const snapshots = this.#snapshots;
      batches.beforePlan = () => snapshots.maybeTake();
    }
    receiver.start();
    batches.start();
    await this.#defaultKeys(keys);
    this.#probeTimer = setInterval(() => void this.#runProbe(), 1000);
    this.#probeTimer.unref?.();
  }

  /**
   * A new group's default keys: written by the first instance to find the log empty, appended
   * only if the log is still empty (compare-and-set), so a group has one set.
   */
  async #defaultKeys(keys: KeyStore): Promise<void> {
    if (keys.list().length > 0 || this.#receiver!.received().seq > 0) return;
    try {
      const state = await this.log.state('log');
      if (state.lastSeq > 0) return;
      const seq = await this.log.appendFirst(encodeEntry(recordsEntry(this.config.node, defaultKeys().map(keyOp))));
      if (seq !== null) await this.#receiver!.waitFor(seq, this.config.timeoutMs);
    } catch (err) {
      // The group then starts without default keys, as after they were all deleted.
      this.logger.warn('replication: the default keys were not written', { error: describe(err) });
    }
  }

  async #runProbe(): Promise<void> {
    try {
      const [log, batches] = await Promise.all([this.log.state('log', true), this.log.state('batches', true)]);
      this.#probe = { ok: true, error: null };
      // The log answers again: an earlier refused write no longer says anything of now.
      this.#lastWrite = { ok: true, error: null };
      this.#receiver?.nudge(log.lastSeq);
      this.#batches?.nudge(batches.lastSeq);
      await this.#sayPosition();
    } catch (err) {
      this.#probe = { ok: false, error: describe(err) };
    }
  }

  #said: { received: number; decided: number; at: number } | null = null;

  /** Records where this instance is when it moved, and every 30 s anyway (the log's retention reads it). */
  async #sayPosition(): Promise<void> {
    const { received, decided } = this.position();
    const said = this.#said;
    if (said && said.received === received && said.decided === decided && Date.now() - said.at < 30_000) return;
    await this.log.putPosition({ node: this.config.node, received, decided, at: new Date().toISOString() });
    this.#said = { received, decided, at: Date.now() };
  }

  /** Why this instance is degraded (it answers reads, but writes may fail), or null. */
  health(): string | null {
    if (this.#receiver?.stuck) return this.#receiver.stuck;
    if (this.#receiver?.failing) return this.#receiver.failing;
    const conn = this.log.connection();
    if (!conn.connected) return `not connected to the NATS servers: ${conn.reason ?? 'connecting'}`;
    if (!this.#probe.ok) return `the replicated log does not answer: ${this.#probe.error}`;
    if (!this.#lastWrite.ok)
      return `the last write was not acknowledged by the replicated log: ${this.#lastWrite.error}`;
    if (this.#batches?.blocked) return this.#batches.blocked;
    return null;
  }

  #catchingUp: Promise<boolean> | null = null;

  /**
   * Waits (up to the write timeout) until this instance applied every entry the log holds
   * now; true if there was any left. Concurrent callers share one question to the log; when
   * the log does not answer, what it last said is the target.
   */
  catchUp(): Promise<boolean> {
    this.#catchingUp ??= (async () => {
      try {
        const receiver = this.#receiver;
        if (!receiver) return false;
        let last = receiver.knownLast();
        try {
          last = Math.max(last, (await this.log.state('log', true)).lastSeq);
        } catch {
          // the log is slow or away: what it said last
        }
        if (receiver.received().seq >= last) return false;
        return await receiver.waitFor(last, this.config.timeoutMs);
      } finally {
        this.#catchingUp = null;
      }
    })();
    return this.#catchingUp;
  }

  /**
   * Waits (up to the write timeout) until task `uid` is here, when the log holds it but this
   * instance has not received it yet: a client that wrote through one instance and asks
   * another finds its task. False when there is nothing to wait for.
   */
  async awaitTask(uid: number): Promise<boolean> {
    const receiver = this.#receiver;
    const seq = uid + 1;
    if (!receiver || !Number.isSafeInteger(seq) || receiver.received().seq >= seq) return false;
    if (seq > receiver.knownLast()) {
      try {
        if (!(await this.log.holds('log', seq))) return false;
      } catch {
        return false;
      }
    }
    return receiver.waitFor(seq, this.config.timeoutMs);
  }

  /** Where this instance is in the log (for `/health` details and tests). */
  position(): { received: number; decided: number } {
    return { received: this.#receiver?.received().seq ?? 0, decided: this.#batches?.decided() ?? 0 };
  }

  async close(): Promise<void> {
    if (this.#probeTimer) clearInterval(this.#probeTimer);
    await this.#receiver?.stop();
    await this.#batches?.stop();
    await this.log.close();
  }
}
