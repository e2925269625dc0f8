/**
 * Snapshots of the replicated state, and how a new or lagging instance starts from one.
 *
 * Every `--replication-snapshot-interval` seconds an instance whose worker is idle (between
 * two batches) writes a snapshot of its data directory (`dumps/create.ts`'s, the task store
 * included, so it carries the log cursors of the moment it was taken) into the
 * `<stream>-snapshots` bucket, unless another instance's newest snapshot already covers the
 * batches this one ran. Two snapshots are kept; once there are two, the log drops what the
 * older one covers and every live instance has read (entries and batches up to those cursors,
 * and payload objects stored well before the last entry dropped), so the log does not grow for
 * ever, an instance that starts from the older snapshot still finds every entry after it, and
 * an instance that is only slow (or paused for a while) is not left behind. Live: its
 * position (`<stream>-positions`) is younger than `--replication-lagging-grace`; an instance
 * down longer starts from a snapshot when it comes back.
 *
 * At start-up, an instance with no data, or whose cursors are behind what the log still
 * holds, replaces its data directory with the newest snapshot of the same stream, then reads
 * the log from the snapshot's cursors. Its old data is only a stale copy of the same log, so
 * nothing the group acknowledged is lost.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { unpackArchive } from '../dumps/archive';
import type { Logger } from '../logging';
import { KvStore } from '../native';
import { DATA_FORMAT } from '../startup/data-dir';
import { META_MAP_SIZE } from '../store/durable';
import { DECIDED_KEY } from './batches';
import { describe, type NatsLog, type ObjectEntry, type StreamState } from './nats';
import { RECEIVED_KEY, readCursor } from './receiver';

/** Which incarnation of the streams a data directory replicates (`meta/replication.stream`). */
export const STREAM_KEY = 'replication.stream';

/** Payload objects stored this long before the last entry dropped are dropped too. */
const PAYLOAD_MARGIN_MS = 10 * 60_000;

export interface StreamIdentity {
  name: string;
  log: string;
  batches: string;
}

interface SnapshotMeta {
  name: string;
  received: number;
  receivedTime: string | null;
  decided: number;
  identity: StreamIdentity;
}

function metaOf(o: ObjectEntry): SnapshotMeta | null {
  const m = o.metadata;
  const received = Number(m.received);
  const decided = Number(m.decided);
  if (!Number.isInteger(received) || !Number.isInteger(decided) || m.format !== DATA_FORMAT || !m.identity) return null;
  try {
    return {
      name: o.name,
      received,
      decided,
      receivedTime: m.receivedTime || null,
      identity: JSON.parse(m.identity) as StreamIdentity,
    };
  } catch {
    return null;
  }
}

function sameStream(a: StreamIdentity, b: StreamIdentity): boolean {
  return a.name === b.name && a.log === b.log && a.batches === b.batches;
}

/** The snapshots of this incarnation of the streams, newest (most batches) first. */
async function snapshotsOf(log: NatsLog, identity: StreamIdentity): Promise<SnapshotMeta[]> {
  const all = (await log.listObjects('snapshots'))
    .map(metaOf)
    .filter((m): m is SnapshotMeta => m !== null && sameStream(m.identity, identity));
  return all.sort((a, b) => b.decided - a.decided || b.received - a.received);
}

export class Snapshots {
  #last = Date.now();
  #running = false;

  constructor(
    private readonly log: NatsLog,
    private readonly identity: StreamIdentity,
    private readonly intervalMs: number,
    /** An instance whose position is older than this no longer holds the log back. */
    private readonly graceMs: number,
    private readonly node: string,
    private readonly logger: Logger,
    /** Writes a snapshot of this instance's data directory, alone in a new directory; resolves with its file (both removed once published). */
    private readonly write: () => Promise<string>,
    private readonly cursors: () => { received: { seq: number; time: string | null }; decided: number },
  ) {}

  /** Takes a snapshot if one is due (called by the worker between two batches). */
  async maybeTake(): Promise<void> {
    if (this.#running || Date.now() - this.#last < this.intervalMs) return;
    this.#running = true;
    this.#last = Date.now();
    try {
      await this.take();
    } catch (err) {
      this.logger.warn('replication: the snapshot was not published', { error: describe(err) });
    } finally {
      this.#running = false;
    }
  }

  /** Publishes a snapshot unless the newest one already covers this instance's batches. */
  async take(): Promise<boolean> {
    const { received, decided } = this.cursors();
    const newest = (await snapshotsOf(this.log, this.identity))[0];
    if (newest && newest.decided >= decided) return false;
    const t0 = performance.now();
    // The cursors are read before the copy: the copy holds at least those entries.
    const file = await this.write();
    try {
      const name = `snapshot-${String(decided).padStart(12, '0')}-${String(received.seq).padStart(12, '0')}`;
      const metadata = {
        received: String(received.seq),
        receivedTime: received.time ?? '',
        decided: String(decided),
        identity: JSON.stringify(this.identity),
        format: DATA_FORMAT,
        node: this.node,
      };
      await this.log.putObject(
        'snapshots',
        name,
        Readable.toWeb(fs.createReadStream(file)) as ReadableStream<Uint8Array>,
        metadata,
      );
      this.logger.info('replication: snapshot published', {
        name,
        bytes: fs.statSync(file).size,
        ms: Math.round(performance.now() - t0),
      });
    } finally {
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
    await this.retain();
    return true;
  }

  /** Keeps the two newest snapshots and drops from the log what the older of them covers and live instances read. */
  async retain(): Promise<void> {
    const kept = await snapshotsOf(this.log, this.identity);
    for (const old of kept.slice(2)) await this.log.deleteObject('snapshots', old.name);
    if (kept.length < 2) return;
    const older = kept[1];
    let received = older.received;
    let decided = older.decided;
    const now = Date.now();
    for (const p of await this.log.positions()) {
      if (now - Date.parse(p.at) > this.graceMs) continue;
      received = Math.min(received, p.received);
      decided = Math.min(decided, p.decided);
    }
    if (received > 0) await this.log.purgeBefore('log', received + 1);
    if (decided > 0) await this.log.purgeBefore('batches', decided + 1);
    // Payload objects are put before their entry is appended: those stored well before the
    // last entry dropped belong to dropped entries (or to writes that were never appended).
    const time = received === older.received ? older.receivedTime : null;
    if (time) {
      const before = Date.parse(time) - PAYLOAD_MARGIN_MS;
      for (const o of await this.log.listObjects('payloads')) {
        if (Date.parse(o.mtime) < before) await this.log.deleteObject('payloads', o.name);
      }
    }
  }
}

/** The cursors and stream identity a data directory holds (zeros when it has none). */
export function localState(dbPath: string): {
  exists: boolean;
  received: number;
  decided: number;
  identity: StreamIdentity | null;
} {
  const tasks = path.join(dbPath, 'tasks');
  if (!fs.existsSync(path.join(tasks, 'data.mdb'))) return { exists: false, received: 0, decided: 0, identity: null };
  const kv = KvStore.open(tasks, META_MAP_SIZE);
  try {
    const raw = kv.get('meta', STREAM_KEY);
    return {
      exists: true,
      received: readCursor(kv, RECEIVED_KEY).seq,
      decided: readCursor(kv, DECIDED_KEY).seq,
      identity: raw ? (JSON.parse(raw.toString()) as StreamIdentity) : null,
    };
  } finally {
    kv.close();
  }
}

export class ReplicationStartError extends Error {}

/**
 * Before the stores open: refuses a data directory of another stream, and replaces one that
 * is empty or behind the log's retention with the newest snapshot. `dbPath` is locked.
 */
export async function joinLog(
  log: NatsLog,
  states: Record<'log' | 'batches', StreamState>,
  dbPath: string,
  logger: Logger,
): Promise<StreamIdentity> {
  const identity: StreamIdentity = { name: log.opts.stream, log: states.log.created, batches: states.batches.created };
  const local = localState(dbPath);
  if (local.identity && !sameStream(local.identity, identity)) {
    throw new ReplicationStartError(
      `the data directory \`${dbPath}\` replicates the stream \`${local.identity.name}\` created at ${local.identity.log}, not the stream \`${identity.name}\` created at ${identity.log}: start this instance on an empty --db-path to join this stream`,
    );
  }
  if (local.exists && !local.identity) {
    // A directory of a single instance: its tasks are not the log's. Joining would mix them.
    const kv = KvStore.open(path.join(dbPath, 'tasks'), META_MAP_SIZE);
    const hasTasks = kv.scan('tasks').length > 0 || kv.scan('keys').length > 0;
    kv.close();
    if (hasTasks) {
      throw new ReplicationStartError(
        `the data directory \`${dbPath}\` was written without replication: start the replicated instance on an empty --db-path (move data across with a dump loaded into a single instance, then its documents and settings sent to the group)`,
      );
    }
  }
  const behind = local.received < states.log.firstSeq - 1 || local.decided < states.batches.firstSeq - 1;
  if (local.exists && !behind) return identity;
  const newest = (await snapshotsOf(log, identity))[0];
  if (!newest || (local.exists && newest.decided <= local.decided && newest.received <= local.received)) {
    if (!behind) return identity;
    throw new ReplicationStartError(
      `this instance is behind the log (it received ${local.received} entries and ran ${local.decided} batches; the log starts at entry ${states.log.firstSeq} and batch ${states.batches.firstSeq}) and no snapshot of the stream covers the gap`,
    );
  }
  const t0 = performance.now();
  await restore(log, newest, dbPath);
  logger.info('replication: started from a snapshot', {
    snapshot: newest.name,
    received: newest.received,
    decided: newest.decided,
    replaced: local.exists,
    ms: Math.round(performance.now() - t0),
  });
  return identity;
}

/** Replaces the contents of `dbPath` (but its lock file) with the snapshot. */
async function restore(log: NatsLog, snap: SnapshotMeta, dbPath: string): Promise<void> {
  const parent = path.dirname(path.resolve(dbPath));
  const staging = fs.mkdtempSync(path.join(parent, `.${path.basename(dbPath)}.snapshot-`));
  try {
    const file = path.join(staging, 'snapshot.tar.gz');
    const obj = await log.getObject('snapshots', snap.name);
    if (!obj) throw new ReplicationStartError(`the snapshot ${snap.name} disappeared while it was being read`);
    await pipeline(
      Readable.fromWeb(obj.data as import('node:stream/web').ReadableStream<Uint8Array>),
      fs.createWriteStream(file),
    );
    const failed = await obj.error;
    if (failed) throw failed;
    const db = path.join(staging, 'db');
    await unpackArchive(file, db);
    if (!fs.existsSync(path.join(db, 'tasks', 'data.mdb')))
      throw new ReplicationStartError(`the snapshot ${snap.name} holds no task store`);
    const trash = path.join(staging, 'old');
    fs.mkdirSync(trash);
    for (const f of fs.readdirSync(dbPath))
      if (f !== 'quarry.lock') fs.renameSync(path.join(dbPath, f), path.join(trash, f));
    for (const f of fs.readdirSync(db)) fs.renameSync(path.join(db, f), path.join(dbPath, f));
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}
