/**
 * What a search answer says about the request besides its hits: the `requestUid` every search
 * answer carries (one per request, also in each result of a multi-search), and, when the
 * request has the `Meili-Include-Metadata` header, a `metadata` object per query (an array of
 * them, in query order, for a federated search): `{query?, queryUid, indexUid, primaryKey?,
 * remote?}`. Both are UUID v7, as Meilisearch's are. Facet searches and similar-document
 * searches carry neither.
 *
 * Design choice: the engine answers a search as JSON bytes, which are sent as they are; the two
 * fields are spliced into them rather than parsed and written again. Meilisearch puts them after
 * the facets and before `performanceDetails`, `remoteErrors` and `semanticHitCount`, which the
 * engine writes last: the splice finds its place by walking back over those members from the
 * end, so the hits (the bulk of an answer) are never read, and writes those members in
 * Meilisearch's order, which differs between a search and a federated search.
 */
import { randomBytes } from 'node:crypto';

/** The metadata of one query, its fields in Meilisearch's order. */
export interface QueryMetadata {
  /** The query's `q`, when it is a string. */
  query?: string;
  queryUid: string;
  indexUid: string;
  /** The index's primary key, when it has one (and is here to be asked). */
  primaryKey?: string;
  /** The instance the query ran on, when it named one or searched the network. */
  remote?: string;
}

/** What a search answer gets: always a request uid, metadata when the request asked for it. */
export interface SearchMetadata {
  requestUid: string;
  /** One object per query (a single search), an array (a federated search), or none. */
  metadata?: QueryMetadata | QueryMetadata[];
}

/** The members after `requestUid` and `metadata`, in Meilisearch's order, in a search's answer. */
export const SEARCH_TAIL = ['performanceDetails', 'remoteErrors', 'semanticHitCount'] as const;
/** The same in a federated search's answer. */
export const FEDERATED_TAIL = ['remoteErrors', 'semanticHitCount', 'performanceDetails'] as const;

const QUOTE = 0x22;

/** Random bits to start a millisecond with; the top one clear, to leave room to count up. */
const freshBits = () => BigInt(`0x${randomBytes(10).toString('hex')}`) >> 7n;

/** The last UUID v7 made: its millisecond and its 74 bits after the version and variant. */
let last = { ms: 0, bits: 0n };
const BITS = (1n << 74n) - 1n;

/**
 * A UUID v7: the time in milliseconds, then random bits; within one millisecond the bits count
 * up from the first one's, so that uids made one after the other sort in that order.
 */
export function uuidV7(now = Date.now()): string {
  let ms = now;
  let bits: bigint;
  if (ms <= last.ms) {
    ms = last.ms;
    bits = last.bits + 1n + BigInt(randomBytes(2).readUInt16BE());
    if (bits > BITS) [ms, bits] = [ms + 1, freshBits()];
  } else {
    bits = freshBits();
  }
  last = { ms, bits };
  const hex =
    ms.toString(16).padStart(12, '0') +
    (0x7000n | (bits >> 62n)).toString(16) +
    ((2n << 62n) | (bits & ((1n << 62n) - 1n))).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The request header that asks for the queries' metadata. */
export const METADATA_HEADER = 'Meili-Include-Metadata';

/** Whether a `Meili-Include-Metadata` header value asks for metadata (`true`, any case, or `1`). */
export function wantsMetadata(header: string | undefined): boolean {
  if (header === undefined) return false;
  const v = header.trim().toLowerCase();
  return v === 'true' || v === '1';
}

/** The metadata of one query on `indexUid`. */
export function queryMetadata(
  q: unknown,
  indexUid: string,
  primaryKey: string | null | undefined,
  remote: string | null = null,
): QueryMetadata {
  const m: QueryMetadata =
    typeof q === 'string' ? { query: q, queryUid: uuidV7(), indexUid } : { queryUid: uuidV7(), indexUid };
  if (primaryKey) m.primaryKey = primaryKey;
  if (remote !== null) m.remote = remote;
  return m;
}

/**
 * `answer` (one search's or a federation's JSON object) with `meta` in Meilisearch's place, and
 * the members of `tail` that the answer has after it, in that order.
 */
export function withMetadata(answer: Buffer, meta: SearchMetadata, tail: readonly string[]): Buffer {
  let fields = `,"requestUid":${JSON.stringify(meta.requestUid)}`;
  if (meta.metadata !== undefined) fields += `,"metadata":${JSON.stringify(meta.metadata)}`;
  const members = tailMembers(answer, tail);
  const at = members.length ? members[members.length - 1]!.start : answer.length - 1;
  members.sort((a, b) => tail.indexOf(a.key) - tail.indexOf(b.key));
  return Buffer.concat([
    answer.subarray(0, at),
    Buffer.from(fields),
    ...members.map((m) => answer.subarray(m.start, m.end)),
    answer.subarray(answer.length - 1),
  ]);
}

/**
 * The members of `tail` that end the object `b`, last first: each from its `,` to its value's
 * end. Walks back member by member from the end; a member whose value is a list (the hits)
 * ends the walk unread.
 */
function tailMembers(b: Buffer, tail: readonly string[]): Array<{ key: string; start: number; end: number }> {
  const members: Array<{ key: string; start: number; end: number }> = [];
  let end = b.length - 1;
  while (end > 0) {
    const value = valueStartBefore(b, end - 1);
    if (value < 0 || b[value - 1] !== 0x3a) break;
    const keyStart = stringStart(b, value - 2);
    const key = b.toString('utf8', keyStart + 1, value - 2);
    if (!tail.includes(key)) break;
    members.push({ key, start: keyStart - 1, end });
    end = keyStart - 1;
  }
  return members;
}

/** The first byte of the JSON value whose last byte is at `end`; -1 for a list. */
function valueStartBefore(b: Buffer, end: number): number {
  const last = b[end];
  if (last === 0x5d) return -1;
  if (last === QUOTE) return stringStart(b, end);
  if (last !== 0x7d) {
    let i = end;
    while (i > 0 && b[i - 1] !== 0x3a) i--;
    return i;
  }
  let depth = 0;
  for (let i = end; i >= 0; i--) {
    const c = b[i];
    if (c === QUOTE) i = stringStart(b, i);
    else if (c === 0x7d || c === 0x5d) depth++;
    else if ((c === 0x7b || c === 0x5b) && --depth === 0) return i;
  }
  return -1;
}

/** The opening quote of the string whose closing quote is at `close`. */
function stringStart(b: Buffer, close: number): number {
  for (let i = close - 1; i >= 0; i--) {
    if (b[i] !== QUOTE) continue;
    let backslashes = 0;
    while (b[i - 1 - backslashes] === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return i;
  }
  return -1;
}
