/**
 * What the replicated log carries, and its bytes.
 *
 * An entry of the log is a task (what `TaskQueue.enqueue` was given, with the moment and the
 * instance that accepted it) or a change of instance-wide records (the KvOps a key, feature,
 * network or webhook write committed on one instance, applied as they are on every other).
 * A document addition's payload travels in its entry when small, else as an object of the
 * payloads bucket named in the entry.
 *
 * Bytes: a 4-byte big-endian length, that many bytes of JSON, then the inline payload if any.
 * A batch is JSON: the uids of its tasks, its index and why it stopped where it did.
 */
import type { KvOp } from '../native';
import type { EnqueueInit } from '../tasks/queue';

/** A payload up to this size travels in its entry (NATS' default message limit is 1 MiB). */
export const INLINE_PAYLOAD_MAX = 512 * 1024;

/** The instance-wide records a change may write: the databases and meta keys of keys, features, network, webhooks and chat workspaces. */
const RECORD_DBS = new Set(['keys', 'webhooks', 'chats']);
const RECORD_META_KEYS = new Set(['features', 'network']);

export interface TaskEntry extends EnqueueInit {
  kind: 'task';
  node: string;
  enqueuedAt: string;
  /** Where a document addition's payload is: after the JSON, or in the payloads bucket (its `file` is left out). */
  documents?: { inline: number } | { object: string; size: number };
  /** The file the accepting instance staged the payload in (it links it instead of copying). */
  staged?: string;
}

export interface RecordsEntry {
  kind: 'records';
  node: string;
  ops: Array<{ db: string; key: string; value: string | null }>;
}

export type LogEntry = TaskEntry | RecordsEntry;

export interface BatchDecision {
  tasks: number[];
  indexUid: string | null;
  strategy: string;
  /** The instance whose proposal this is (it announces the batch to webhooks). */
  node: string;
}

export function encodeEntry(entry: LogEntry, inline: Buffer | null = null): Buffer {
  const json = Buffer.from(JSON.stringify(entry));
  const head = Buffer.alloc(4);
  head.writeUInt32BE(json.length);
  return Buffer.concat(inline ? [head, json, inline] : [head, json]);
}

export class BadEntry extends Error {}

export function decodeEntry(bytes: Uint8Array): { entry: LogEntry; inline: Buffer } {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < 4) throw new BadEntry('shorter than its header');
  const len = buf.readUInt32BE(0);
  if (4 + len > buf.length) throw new BadEntry('its JSON runs past its end');
  let entry: LogEntry;
  try {
    entry = JSON.parse(buf.subarray(4, 4 + len).toString()) as LogEntry;
  } catch (err) {
    throw new BadEntry(`its JSON does not parse: ${(err as Error).message}`);
  }
  if (entry === null || typeof entry !== 'object' || (entry.kind !== 'task' && entry.kind !== 'records'))
    throw new BadEntry('it is neither a task nor a change of records');
  const inline = buf.subarray(4 + len);
  if (
    entry.kind === 'task' &&
    entry.documents &&
    'inline' in entry.documents &&
    entry.documents.inline !== inline.length
  )
    throw new BadEntry('its payload is cut short');
  return { entry, inline };
}

export function recordsEntry(node: string, ops: KvOp[]): RecordsEntry {
  return {
    kind: 'records',
    node,
    ops: ops.map((o) => ({ db: o.db, key: o.key, value: o.value ? o.value.toString('base64') : null })),
  };
}

/** The ops of a change, refused when one writes outside the instance-wide records. */
export function recordsOps(entry: RecordsEntry): KvOp[] {
  return entry.ops.map((o) => {
    if (!RECORD_DBS.has(o.db) && !(o.db === 'meta' && RECORD_META_KEYS.has(o.key)))
      throw new BadEntry(`it writes \`${o.db}/${o.key}\`, which is not an instance-wide record`);
    return { db: o.db, key: o.key, value: o.value === null ? null : Buffer.from(o.value, 'base64') };
  });
}

export function encodeDecision(d: BatchDecision): Buffer {
  return Buffer.from(JSON.stringify(d));
}

export function decodeDecision(bytes: Uint8Array): BatchDecision {
  try {
    const d = JSON.parse(Buffer.from(bytes).toString()) as BatchDecision;
    if (Array.isArray(d.tasks) && d.tasks.every((u) => Number.isInteger(u))) return d;
  } catch {
    // fall through
  }
  throw new BadEntry('a batch that is not a list of task uids');
}
