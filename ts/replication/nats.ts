/**
 * The replicated log's transport: two JetStream streams and two object store buckets on the
 * NATS servers the operator named (`--replication-nats`). The only module that imports the
 * NATS client; everything above it speaks of entries, decisions, sequences and objects.
 *
 * - `<stream>` (subject `<stream>.log`): every write any instance accepted, in one order
 *   (tasks and changes of instance-wide records). A task's uid is its sequence minus one.
 * - `<stream>-batches` (subject `<stream>.batches`): the batches, each a list of task uids,
 *   appended with JetStream's compare-and-set on the stream's last sequence, so exactly one
 *   instance's proposal becomes batch N; a batch's uid is its sequence minus one.
 * - `<stream>-payloads`: document payloads too large to travel in their message.
 * - `<stream>-snapshots`: data directories a new or lagging instance starts from.
 * - `<stream>-positions` (a key-value bucket): where each instance is in the log, so that the
 *   log keeps what a live instance has yet to read.
 *
 * Only the servers named are dialed (`ignoreClusterUpdates`: the addresses a cluster gossips
 * are not followed). Reconnection never gives up; a server that stops answering is left after
 * about three seconds without a pong, so one paused server does not hold writes for long.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import {
  DeliverPolicy,
  jetstream,
  type JetStreamClient,
  type JetStreamManager,
  JetStreamApiError,
  jetstreamManager,
  StorageType,
} from '@nats-io/jetstream';
import { type KV, Kvm } from '@nats-io/kv';
import { type ObjectStore, Objm, setSha256Backend } from '@nats-io/obj';

// Objects' digests by node:crypto, not the client's pure-JS default: a 50,000-row payload of
// PyPI (8 MB) went into a bucket of three copies in 66 ms instead of 180, and back in 25 instead of 130.
setSha256Backend('native');

/** Objects are stored in chunks of this size (the client's default is 128 KiB). */
const CHUNK_BYTES = 512 * 1024;

/**
 * JetStream's refusals of a stream as configured, whatever their status: more copies than one
 * server not in a cluster can keep (10074). Too few servers of a cluster (10023) is waited out:
 * the missing ones may be starting.
 */
const REFUSALS = new Set([10074]);

/** JetStream's "wrong last sequence": another instance's batch was appended first. */
const WRONG_LAST_SEQUENCE = 10071;

export type LogName = 'log' | 'batches';

export interface StoredMessage {
  seq: number;
  data: Uint8Array;
  /** When the stream stored it (its leader's clock), ISO 8601. */
  time: string;
  /** How many messages the stream held after it when it was sent. */
  pending: number;
}

export interface StreamState {
  /** When the stream was created: tells one incarnation of a stream name from another. */
  created: string;
  firstSeq: number;
  lastSeq: number;
}

/** Where an instance is: the last entry it received and the last batch it ran, and when it said so. */
export interface Position {
  node: string;
  received: number;
  decided: number;
  at: string;
}

export interface ObjectEntry {
  name: string;
  size: number;
  mtime: string;
  metadata: Record<string, string>;
}

/** The log could not be reached or did not acknowledge in time; `reason` says which. */
export class LogUnavailable extends Error {}

/** NATS refused what the options ask for: starting again will not help. */
export class LogRefused extends Error {}

export interface LogOptions {
  servers: string[];
  stream: string;
  replicas: number;
  node: string;
  /** How long a write may wait for the log's acknowledgement. */
  timeoutMs: number;
}

export class NatsLog {
  #status: { connected: boolean; since: number; lastError: string | null } = {
    connected: false,
    since: Date.now(),
    lastError: null,
  };
  #buckets = new Map<string, ObjectStore>();
  #positions: KV | null = null;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    /** The same, answering within a second: for the health probe. */
    private readonly quick: JetStreamManager,
    readonly opts: LogOptions,
  ) {
    this.#status.connected = true;
    void this.#watchStatus();
  }

  /**
   * Connects to the first server that answers, retrying until `waitMs` has passed (then
   * `LogUnavailable`). Once connected, the client reconnects by itself for ever.
   */
  static async connect(opts: LogOptions, waitMs: number): Promise<NatsLog> {
    const deadline = Date.now() + waitMs;
    let last: unknown = null;
    for (;;) {
      try {
        const nc = await connect({
          servers: opts.servers,
          name: `quarry ${opts.node}`,
          ignoreClusterUpdates: true,
          maxReconnectAttempts: -1,
          reconnectTimeWait: 250,
          reconnectJitter: 100,
          pingInterval: 1000,
          maxPingOut: 2,
          timeout: Math.min(2000, Math.max(250, waitMs)),
        });
        const jsm = await jetstreamManager(nc, { timeout: opts.timeoutMs, checkAPI: false });
        const quick = await jetstreamManager(nc, { timeout: 1000, checkAPI: false });
        return new NatsLog(nc, jetstream(nc, { timeout: opts.timeoutMs }), jsm, quick, opts);
      } catch (err) {
        last = err;
        if (Date.now() >= deadline)
          throw new LogUnavailable(`no NATS server of ${opts.servers.join(', ')} answered: ${describe(last)}`);
        await sleep(Math.min(500, Math.max(0, deadline - Date.now())));
      }
    }
  }

  async #watchStatus(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === 'disconnect' || s.type === 'staleConnection') {
        this.#status = {
          connected: false,
          since: Date.now(),
          lastError: `disconnected from ${s.type === 'disconnect' ? s.server : 'a stale server'}`,
        };
      } else if (s.type === 'reconnect') {
        this.#status = { connected: true, since: Date.now(), lastError: null };
      } else if (s.type === 'close') {
        this.#status = { connected: false, since: Date.now(), lastError: 'connection closed' };
      }
    }
  }

  /** Whether a server is connected now, and why not. */
  connection(): { connected: boolean; reason: string | null } {
    return { connected: this.#status.connected, reason: this.#status.lastError };
  }

  streamName(which: LogName): string {
    return which === 'log' ? this.opts.stream : `${this.opts.stream}-batches`;
  }

  #subject(which: LogName): string {
    return `${this.opts.stream}.${which}`;
  }

  /** Creates the streams and buckets that do not exist yet; returns both streams' states. */
  async ensure(): Promise<Record<LogName, StreamState>> {
    const out = {} as Record<LogName, StreamState>;
    for (const which of ['log', 'batches'] as const) {
      const name = this.streamName(which);
      try {
        out[which] = await this.state(which);
        continue;
      } catch (err) {
        if (!(err instanceof JetStreamApiError) || err.status !== 404) throw err;
      }
      try {
        await this.jsm.streams.add({
          name,
          subjects: [this.#subject(which)],
          num_replicas: this.opts.replicas,
          storage: StorageType.File,
          duplicate_window: 120 * 1e9,
        });
      } catch (err) {
        // Another instance created it first: same configuration, nothing to do.
        const raced = err instanceof JetStreamApiError && /already in use/i.test(err.message);
        // NATS refuses the stream as asked (more copies than servers, say): waiting will not help.
        if (!raced && err instanceof JetStreamApiError && (err.status === 400 || REFUSALS.has(err.code))) {
          throw new LogRefused(
            `NATS refused to create the stream \`${name}\` with ${this.opts.replicas} copies: ${err.message}${/replicas|insufficient|cluster/i.test(err.message) ? ' (with a single NATS server, start with --replication-replicas 1)' : ''}`,
          );
        }
        if (!raced) throw err;
      }
      out[which] = await this.state(which);
    }
    const objm = new Objm(this.js);
    for (const kind of ['payloads', 'snapshots']) {
      this.#buckets.set(
        kind,
        await objm.create(`${this.opts.stream}-${kind}`, { replicas: this.opts.replicas, storage: StorageType.File }),
      );
    }
    this.#positions = await new Kvm(this.js).create(`${this.opts.stream}-positions`, {
      replicas: this.opts.replicas,
      history: 1,
    });
    return out;
  }

  /** Records where this instance is. */
  async putPosition(p: Position): Promise<void> {
    if (!this.#positions) return;
    await this.#positions.put(positionKey(p.node), JSON.stringify(p));
  }

  /** Every instance's last recorded position. */
  async positions(): Promise<Position[]> {
    const kv = this.#positions;
    if (!kv) return [];
    const out: Position[] = [];
    for await (const key of await kv.keys()) {
      const e = await kv.get(key);
      if (e?.operation !== 'PUT') continue;
      try {
        out.push(JSON.parse(e.string()) as Position);
      } catch {
        // not ours
      }
    }
    return out;
  }

  /** The stream's state, asked with the given patience. */
  async state(which: LogName, quick = false): Promise<StreamState> {
    const info = await (quick ? this.quick : this.jsm).streams.info(this.streamName(which));
    return { created: info.created, firstSeq: info.state.first_seq, lastSeq: info.state.last_seq };
  }

  /**
   * Appends one entry to the log and resolves with its sequence once a quorum stored it. A
   * publish that gets no answer is sent again with the same `msgId` (stored once) until the
   * deadline; then `LogUnavailable` (the entry may still have been stored). The first try
   * waits up to a second; the next ones a quarter of that, so that a write waiting out the
   * election of a new stream leader is taken within 250 ms of it (a stream without a leader
   * does not answer at all) rather than within a second.
   */
  async append(data: Uint8Array, msgId: string): Promise<number> {
    const deadline = Date.now() + this.opts.timeoutMs;
    let last: unknown = null;
    let wait = 1000;
    while (Date.now() < deadline) {
      try {
        const ack = await this.js.publish(this.#subject('log'), data, {
          msgID: msgId,
          timeout: Math.max(100, Math.min(wait, deadline - Date.now())),
          retries: 0,
        });
        return ack.seq;
      } catch (err) {
        last = err;
        if (!retryable(err)) break;
        wait = 250;
        await sleep(Math.min(100, Math.max(0, deadline - Date.now())));
      }
    }
    throw new LogUnavailable(
      `the log did not acknowledge the write within ${this.opts.timeoutMs} ms (${describe(last)})`,
    );
  }

  /** Appends an entry only if the log is empty: its sequence, or null when it is not. */
  async appendFirst(data: Uint8Array): Promise<number | null> {
    try {
      const ack = await this.js.publish(this.#subject('log'), data, {
        expect: { lastSequence: 0 },
        timeout: this.opts.timeoutMs,
        retries: 0,
      });
      return ack.seq;
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === WRONG_LAST_SEQUENCE) return null;
      throw new LogUnavailable(`the entry was not appended: ${describe(err)}`);
    }
  }

  /**
   * Appends a batch if the batches stream's last sequence is still `after`: its sequence, or
   * null when another batch came first.
   */
  async propose(data: Uint8Array, after: number): Promise<number | null> {
    try {
      const ack = await this.js.publish(this.#subject('batches'), data, {
        expect: { lastSequence: after },
        timeout: this.opts.timeoutMs,
        retries: 0,
      });
      return ack.seq;
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === WRONG_LAST_SEQUENCE) return null;
      throw new LogUnavailable(`the batch was not appended: ${describe(err)}`);
    }
  }

  /**
   * The messages of a stream from `from` on, in order, for as long as the caller reads
   * (an ordered consumer: it recreates itself after a lost server). Ends with `stop()`.
   */
  async read(which: LogName, from: number): Promise<{ messages: AsyncIterable<StoredMessage>; stop(): void }> {
    const consumer = await this.js.consumers.get(this.streamName(which), {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: Math.max(1, from),
    });
    // Heartbeats every second: a consumer on a server that died is noticed and made again.
    const iter = await consumer.consume({ max_messages: 256, expires: 5000, idle_heartbeat: 1000 });
    async function* messages(): AsyncGenerator<StoredMessage> {
      for await (const m of iter)
        yield { seq: m.seq, data: m.data, time: m.time.toISOString(), pending: m.info.pending };
    }
    return { messages: messages(), stop: () => void iter.stop() };
  }

  /** Whether the stream holds message `seq` (asked of its leader, quickly). */
  async holds(which: LogName, seq: number): Promise<boolean> {
    try {
      return (await this.quick.streams.getMessage(this.streamName(which), { seq })) !== null;
    } catch (err) {
      if (err instanceof JetStreamApiError && err.status === 404) return false;
      throw err;
    }
  }

  /** Removes the messages before `keepFrom`. */
  async purgeBefore(which: LogName, keepFrom: number): Promise<void> {
    await this.jsm.streams.purge(this.streamName(which), { seq: keepFrom });
  }

  #bucket(kind: 'payloads' | 'snapshots'): ObjectStore {
    const b = this.#buckets.get(kind);
    if (!b) throw new LogUnavailable(`the ${kind} bucket is not open`);
    return b;
  }

  async putObject(
    kind: 'payloads' | 'snapshots',
    name: string,
    data: ReadableStream<Uint8Array>,
    metadata: Record<string, string> = {},
  ): Promise<void> {
    await this.#bucket(kind).put({ name, metadata, options: { max_chunk_size: CHUNK_BYTES } }, data, {
      timeout: this.opts.timeoutMs,
    });
  }

  /** The object's bytes as a stream, or null when it does not exist. */
  async getObject(
    kind: 'payloads' | 'snapshots',
    name: string,
  ): Promise<{ data: ReadableStream<Uint8Array>; error: Promise<Error | null> } | null> {
    const r = await this.#bucket(kind).get(name);
    return r ? { data: r.data, error: r.error } : null;
  }

  async listObjects(kind: 'payloads' | 'snapshots'): Promise<ObjectEntry[]> {
    const all = await this.#bucket(kind).list();
    return all
      .filter((o) => !o.deleted)
      .map((o) => ({ name: o.name, size: o.size, mtime: o.mtime, metadata: o.metadata ?? {} }));
  }

  async deleteObject(kind: 'payloads' | 'snapshots', name: string): Promise<void> {
    await this.#bucket(kind).delete(name);
  }

  async close(): Promise<void> {
    if (!this.nc.isClosed()) await this.nc.close();
  }
}

/**
 * Failures a second publish may cure: no answer, no stream leader yet, a lost connection, a
 * server that lost JetStream's quorum. Only a refusal of the request itself is final.
 */
function retryable(err: unknown): boolean {
  if (err instanceof JetStreamApiError) return err.status >= 500 || err.status === 408;
  return true;
}

/** A key-value key for an instance's name (keys take letters, digits and `-_=/.`). */
function positionKey(node: string): string {
  return Buffer.from(node).toString('base64url');
}

export function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
