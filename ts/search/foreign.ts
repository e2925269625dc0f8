/**
 * Hydration of foreign keys (the `foreignKeys` experimental feature), as Meilisearch 1.39+ does
 * it: a field an index's `foreignKeys` setting lists holds ids of documents of another index,
 * and a search's hits (and their `_formatted`) show those documents, with the foreign index's
 * displayed attributes, in place of the ids. Each id of an array is replaced; an id that names
 * no document becomes `{}`; a value that is not a document id stays as it is. Documents fetches
 * and similar searches show the ids, as Meilisearch does.
 *
 * The engine is one index, so this is done here: the ids are read out of the engine's answer,
 * each foreign index is asked for its documents in one fetch, and the documents are spliced
 * into the answer's bytes. The answer is never parsed into objects and written again: that
 * would change what JSON.parse cannot keep (`1.0`, integers beyond 2^53, the order of
 * integer-like keys such as facet values).
 */
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { foreignConditions, type NativeIndex } from '../native';

/** A `foreignKeys` entry: `fieldName` holds ids of documents of `foreignIndexUid`. */
export interface ForeignKey {
  foreignIndexUid: string;
  fieldName: string;
}

/** The foreign keys searches of `uid` hydrate: none when the feature is off or none is set. */
export function foreignKeysOf(deps: Deps, handle: NativeIndex): ForeignKey[] {
  if (!deps.features.enabled('foreignKeys')) return [];
  return handle.foreignKeys();
}

// ---- a scanner over compact JSON text, giving spans and never building values ----

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function skipWs(s: string, i: number): number {
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

function stringEnd(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j + 1;
  }
  throw new Error('unterminated string in a search answer');
}

/** The end (exclusive) of the JSON value that starts at `i`. */
function valueEnd(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === QUOTE) return stringEnd(s, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (let j = i; j < s.length; j++) {
      const d = s.charCodeAt(j);
      if (d === QUOTE) j = stringEnd(s, j) - 1;
      else if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    throw new Error('unterminated value in a search answer');
  }
  let j = i;
  while (j < s.length) {
    const d = s.charCodeAt(j);
    if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break;
    j++;
  }
  return j;
}

interface Span {
  start: number;
  end: number;
}

interface Entry {
  key: string;
  /** From the key's opening quote to the value's end. */
  whole: Span;
  value: Span;
}

/** The entries of the object at `i` (`{` expected). */
function entries(s: string, i: number): Entry[] {
  const out: Entry[] = [];
  let j = skipWs(s, i + 1);
  if (s.charCodeAt(j) === 0x7d) return out;
  for (;;) {
    const keyStart = j;
    const keyEnd = stringEnd(s, j);
    j = skipWs(s, keyEnd);
    j = skipWs(s, j + 1); // the colon
    const end = valueEnd(s, j);
    out.push({ key: JSON.parse(s.slice(keyStart, keyEnd)), whole: { start: keyStart, end }, value: { start: j, end } });
    j = skipWs(s, end);
    if (s.charCodeAt(j) !== 0x2c) return out;
    j = skipWs(s, j + 1);
  }
}

/** The elements of the array at `i` (`[` expected). */
function elements(s: string, i: number): Span[] {
  const out: Span[] = [];
  let j = skipWs(s, i + 1);
  if (s.charCodeAt(j) === 0x5d) return out;
  for (;;) {
    const end = valueEnd(s, j);
    out.push({ start: j, end });
    j = skipWs(s, end);
    if (s.charCodeAt(j) !== 0x2c) return out;
    j = skipWs(s, j + 1);
  }
}

/** The value of `key` in the object at `i`, if any. */
function member(s: string, i: number, key: string): Span | undefined {
  return entries(s, i).find((e) => e.key === key)?.value;
}

/**
 * The document id a JSON value is, as Meilisearch reads one (a string of at most 511 ASCII
 * letters, digits, hyphens and underscores, or a non-negative integer); null for anything else.
 */
function idOf(text: string): string | null {
  if (text.charCodeAt(0) === QUOTE) {
    const id = JSON.parse(text) as string;
    return /^[A-Za-z0-9_-]{1,511}$/.test(id) ? id : null;
  }
  return /^\d+$/.test(text) ? text : null;
}

/**
 * Calls `fn` with each value that field `path` holds in the object at `i`: the field itself,
 * or, for a dotted path, within the objects (and arrays of objects) on the way.
 */
function visitField(s: string, i: number, path: string, fn: (value: Span) => void): void {
  for (const e of entries(s, i)) {
    if (e.key === path) fn(e.value);
    else if (path.startsWith(`${e.key}.`)) visitWithin(s, e.value.start, path.slice(e.key.length + 1), fn);
  }
}

function visitWithin(s: string, i: number, path: string, fn: (value: Span) => void): void {
  const c = s.charCodeAt(i);
  if (c === 0x7b) visitField(s, i, path, fn);
  else if (c === 0x5b) for (const el of elements(s, i)) visitWithin(s, el.start, path, fn);
}

/** Calls `fn` with each id (its span and value) the value at `span` holds, an array's elements each. */
function visitIds(s: string, span: Span, fn: (leaf: Span, id: string | null) => void): void {
  const c = s.charCodeAt(span.start);
  if (c === 0x5b) {
    for (const el of elements(s, span.start)) visitIds(s, el, fn);
    return;
  }
  if (c === 0x7b) return;
  fn(span, idOf(s.slice(span.start, span.end)));
}

/** A hit of the answer, with the index it comes from. */
interface Hit {
  span: Span;
  keys: ForeignKey[];
}

/**
 * The answer `bytes` (a search's, or a federated search's: `{"hits":[...],...}`) with the
 * foreign keys of its hits hydrated. `keysOf(hit)`: the foreign keys of the index a hit comes
 * from (the hit's span given); `requireAll`: the foreign indexes that must exist once there is
 * a hit, even one holding no id (Meilisearch opens them all for a single-index search's hits).
 */
export async function hydrate(
  deps: Deps,
  bytes: Buffer,
  keysOf: (text: string, hit: Span) => ForeignKey[],
  requireAll: ForeignKey[] = [],
): Promise<Buffer> {
  const text = bytes.toString('utf8');
  const hitsSpan = member(text, skipWs(text, 0), 'hits');
  if (!hitsSpan || text.charCodeAt(hitsSpan.start) !== 0x5b) return bytes;
  const all = elements(text, hitsSpan.start);
  if (!all.length) return bytes;
  for (const k of requireAll) deps.registry.require(k.foreignIndexUid);
  const hits: Hit[] = [];
  for (const span of all) {
    const keys = keysOf(text, span);
    if (keys.length) hits.push({ span, keys });
  }
  if (!hits.length) return bytes;
  // Every place an id is, and the ids wanted of each foreign index.
  const places: Array<{ leaf: Span; id: string; foreign: string }> = [];
  const wanted = new Map<string, Set<string>>();
  for (const hit of hits) {
    const formatted = member(text, hit.span.start, '_formatted');
    for (const key of hit.keys) {
      const onValue = (value: Span) =>
        visitIds(text, value, (leaf, id) => {
          if (id === null) return;
          places.push({ leaf, id, foreign: key.foreignIndexUid });
          let ids = wanted.get(key.foreignIndexUid);
          if (!ids) {
            ids = new Set();
            wanted.set(key.foreignIndexUid, ids);
          }
          ids.add(id);
        });
      visitField(text, hit.span.start, key.fieldName, onValue);
      if (formatted && text.charCodeAt(formatted.start) === 0x7b)
        visitField(text, formatted.start, key.fieldName, onValue);
    }
  }
  if (!places.length) return bytes;
  // One fetch per foreign index.
  const documents = new Map<string, Map<string, string>>();
  await Promise.all(
    [...wanted].map(async ([uid, ids]) => {
      documents.set(uid, await foreignDocuments(deps.registry.handle(uid), [...ids]));
    }),
  );
  places.sort((a, b) => a.leaf.start - b.leaf.start);
  const parts: string[] = [];
  let at = 0;
  for (const p of places) {
    parts.push(text.slice(at, p.leaf.start), documents.get(p.foreign)?.get(p.id) ?? '{}');
    at = p.leaf.end;
  }
  parts.push(text.slice(at));
  return Buffer.from(parts.join(''), 'utf8');
}

/**
 * The documents of `ids` in `handle`'s index, as the index displays them, by id (JSON text).
 * The primary key is fetched to know each document's id, and left out when not displayed.
 */
async function foreignDocuments(handle: NativeIndex, ids: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const pk = handle.primaryKey();
  if (pk === null) return out;
  const displayed = handle.settings().displayedAttributes as string[] | undefined;
  const all = !displayed || displayed.includes('*');
  const pkShown = all || displayed.includes(pk);
  const fields = all ? null : pkShown ? displayed : [...displayed, pk];
  const text = (await handle.fetchDocuments({ ids, offset: 0, limit: ids.length, fields })).toString('utf8');
  const results = member(text, skipWs(text, 0), 'results');
  if (!results) return out;
  for (const doc of elements(text, results.start)) {
    const es = entries(text, doc.start);
    const idEntry = es.find((e) => e.key === pk);
    if (!idEntry) continue;
    const id = idOf(text.slice(idEntry.value.start, idEntry.value.end));
    if (id === null) continue;
    const json = pkShown
      ? text.slice(doc.start, doc.end)
      : `{${es
          .filter((e) => e.key !== pk)
          .map((e) => text.slice(e.whole.start, e.whole.end))
          .join(',')}}`;
    out.set(id, json);
  }
  return out;
}

/** The foreign keys a single-index answer's hits all share. */
export const sameKeys = (keys: ForeignKey[]) => (): ForeignKey[] => keys;

/**
 * For a federated answer: the foreign keys of the index each hit's query ran on, read from the
 * hit's `_federation.queriesPosition`; `byPosition`: the keys of each local query.
 */
export function keysByPosition(byPosition: Map<number, ForeignKey[]>) {
  return (text: string, hit: Span): ForeignKey[] => {
    const fed = member(text, hit.start, '_federation');
    if (!fed || text.charCodeAt(fed.start) !== 0x7b) return [];
    const es = entries(text, fed.start);
    if (es.some((e) => e.key === 'remote')) return [];
    const pos = es.find((e) => e.key === 'queriesPosition');
    if (!pos) return [];
    return byPosition.get(Number(text.slice(pos.value.start, pos.value.end))) ?? [];
  };
}

/**
 * The `foreignIds` of a request on `uid` whose filter is `filter`: none without `_foreign`
 * conditions; else each one's inner expression is run on its foreign index (one call per
 * foreign index), and the engine, given the ids each selects beside the filter, reads the
 * condition as `field IN [ids]` (Meilisearch 1.42+). `document`: the filter of a documents route (errors
 * `invalid_document_filter`), else of a search (`invalid_search_filter`). Errors as
 * Meilisearch's: a field that is not a foreign key, a `_foreign` within a `_foreign`, a foreign
 * index missing; the foreign index's own errors (`invalid_document_filter`) name it.
 */
export async function resolveForeign(
  deps: Deps,
  uid: string,
  filter: unknown,
  document: boolean,
): Promise<string[][] | undefined> {
  if (filter === null || filter === undefined) return undefined;
  // Only a filter that spells `_foreign` can hold one: the others cost nothing more.
  if (!JSON.stringify(filter).includes('_foreign')) return undefined;
  const conditions = foreignConditions(filter, document, deps.features.enabled('foreignKeys'));
  if (!conditions.length) return undefined;
  const code = document ? 'invalid_document_filter' : 'invalid_search_filter';
  const keys = foreignKeysOf(deps, deps.registry.handle(uid));
  const byIndex = new Map<string, number[]>();
  for (const [i, [field, nested]] of conditions.entries()) {
    const key = keys.find((k) => k.fieldName === field);
    if (!key) throw new ApiError(code, `Index \`${uid}\`: Field \`${field}\` is not a foreign key`);
    if (nested) throw new ApiError(code, `Index \`${uid}\`: Nested foreign filters are not supported`);
    const which = byIndex.get(key.foreignIndexUid) ?? [];
    which.push(i);
    byIndex.set(key.foreignIndexUid, which);
  }
  const lists: string[][] = new Array(conditions.length);
  for (const [foreign, which] of byIndex) {
    const handle = deps.registry.handle(foreign);
    let ids: string[][];
    try {
      ids = await handle.foreignIds(filter, which);
    } catch (err) {
      if (err instanceof ApiError) throw new ApiError(err.code, `Index \`${foreign}\`: ${err.message}`);
      throw err;
    }
    which.forEach((k, j) => {
      lists[k] = ids[j];
    });
  }
  return lists;
}

/**
 * A filter of a route that takes no `_foreign` condition (deletions and editions by filter):
 * with the feature off, a `_foreign` is `feature_not_enabled`, as Meilisearch checks features
 * first; with it on, the engine's check refuses it for this endpoint.
 */
export function gateForeign(deps: Deps, filter: unknown): void {
  if (filter === null || filter === undefined || deps.features.enabled('foreignKeys')) return;
  if (JSON.stringify(filter).includes('_foreign')) foreignConditions(filter, true, false);
}
