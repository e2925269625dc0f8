/**
 * A seeded generator of hostile HTTP requests over every route family, and a small client
 * that sends them as raw bytes (node:http, so paths such as `/indexes/%2e%2e/x` or `%zz`
 * reach the server exactly as generated: `fetch` would normalize dot segments).
 *
 * Everything is driven by one PRNG (mulberry32): the same seed gives the same list of
 * requests, whatever the order in which their answers come back.
 *
 * Safety contract with the test that uses it: requests that change data (document writes,
 * settings updates, index deletion, renames, swaps) only ever name `ctx.writeUids` or hostile
 * uids; `ctx.protectedUid` appears only in reads (search, documents, settings GET...), and in
 * traversal attempts such as `<writeUid>/../<protectedUid>` that a correct server must refuse.
 * The test checks afterwards that the protected index did not change.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import zlib from 'node:zlib';

/** mulberry32: a tiny, fast, seedable 32-bit PRNG. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  u32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** A float in [0, 1). */
  float(): number {
    return this.u32() / 4294967296;
  }
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.float() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.float() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.float() * items.length)];
  }
  /** Picks by weight: `[[weight, value], ...]`. */
  weighted<T>(items: readonly (readonly [number, T])[]): T {
    const total = items.reduce((s, [w]) => s + w, 0);
    let x = this.float() * total;
    for (const [w, v] of items) {
      x -= w;
      if (x < 0) return v;
    }
    return items[items.length - 1][1];
  }
}

export interface FuzzRequest {
  /** Route family, for the summary. */
  family: string;
  method: string;
  /** Path and query string, sent byte for byte. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** No route serves this method and path: an empty 404 is the expected answer. */
  unrouted?: boolean;
}

export interface FuzzContext {
  masterKey: string;
  /** Read-only for the fuzz: never the target of a write. */
  protectedUid: string;
  /** Indexes the fuzz may write to, rename, swap and delete. */
  writeUids: readonly string[];
  /** A search key whose `key` signs well-formed tenant tokens. */
  searchKey: { uid: string; key: string };
}

// ---------------------------------------------------------------- values

const ATTRIBUTES = ['id', 'title', 'genre', 'year', 'tags', 'nested.a', 'nested', '_geo', '_vectors', '_rankingScore', '*', '', 'unknown', 'a.b.c.d', 'title.x'];

const HOSTILE_STRINGS = [
  '',
  ' ',
  '..',
  '../',
  '../../etc/passwd',
  '%2e%2e',
  '%2e%2e%2f',
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDC00y',
  '\uFFFF',
  '\u202E',
  '😀',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '"',
  '\\',
  '\n\r\t',
  'NaN',
  'Infinity',
  '-0',
  '1e400',
  'null',
  'true',
  '*',
  '_geo',
  'title',
  'carol',
  'wonder',
  'x'.repeat(600),
  'é'.repeat(300),
  '%zz',
  '%C3%28',
];

const NUMBERS = [
  0, -0, 1, -1, 2, 3, 1.5, -0.5, 0.999, 20, 1000, 65535, 65536, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 32 + 1, 2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, -(2 ** 53 - 1), 1e9, 1e21, 1e308, -1e308,
  Number.MIN_VALUE, 9007199254740991,
];

/** Number literals JSON.stringify cannot produce. */
const RAW_NUMBERS = ['1e400', '-1e400', '1' + '0'.repeat(400), '0.' + '0'.repeat(400) + '1', '-0', '1E+2', '9007199254740993', '18446744073709551616', '-9223372036854775809', '1e-400'];

/** A v4-shaped uuid drawn from `rng`, so that runs repeat. */
export function uuid(rng: Rng): string {
  const hex = Array.from({ length: 32 }, () => rng.int(0, 15).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}

export function hostileString(rng: Rng): string {
  if (rng.chance(0.1)) return rng.pick(ATTRIBUTES);
  if (rng.chance(0.01)) return 'y'.repeat(rng.int(1000, 70000));
  if (rng.chance(0.1)) {
    // Random code points, surrogates included.
    let s = '';
    for (let i = rng.int(0, 12); i > 0; i--) s += String.fromCharCode(rng.int(0, 0xffff));
    return s;
  }
  return rng.pick(HOSTILE_STRINGS);
}

export function hostileNumber(rng: Rng): number {
  if (rng.chance(0.2)) return rng.int(-5, 100);
  return rng.pick(NUMBERS);
}

/** Any JSON value, biased toward the awkward ones; `depth` bounds nesting. */
export function hostileValue(rng: Rng, depth = 3): unknown {
  const kind = rng.int(0, depth > 0 ? 9 : 5);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
    case 3:
      return hostileNumber(rng);
    case 4:
    case 5:
      return hostileString(rng);
    case 6:
    case 7: {
      // Long arrays hold scalars only, so that a value stays well under a megabyte.
      if (rng.chance(0.05)) return Array.from({ length: rng.int(100, 2000) }, () => hostileValue(rng, 0));
      return Array.from({ length: rng.int(0, 4) }, () => hostileValue(rng, depth - 1));
    }
    default: {
      const o: Record<string, unknown> = {};
      for (let i = rng.int(0, 4); i > 0; i--) o[rng.chance(0.5) ? rng.pick(ATTRIBUTES) : hostileString(rng)] = hostileValue(rng, depth - 1);
      return o;
    }
  }
}

/** Deep nesting, as a value (the raw text form is in `rawBody`). */
function nested(rng: Rng): unknown {
  let v: unknown = rng.chance(0.5) ? 'deep' : 1;
  for (let i = rng.int(20, 140); i > 0; i--) v = rng.chance(0.5) ? [v] : { a: v };
  return v;
}

/** Usually a plausible value of the right shape, sometimes anything. */
function maybe<T>(rng: Rng, good: () => T): unknown {
  const x = rng.float();
  if (x < 0.55) return good();
  if (x < 0.95) return hostileValue(rng);
  return nested(rng);
}

function attrList(rng: Rng): string[] {
  return Array.from({ length: rng.int(0, 4) }, () => (rng.chance(0.7) ? rng.pick(ATTRIBUTES) : hostileString(rng)));
}

// ---------------------------------------------------------------- filters

const FILTER_TOKENS = [
  'AND', 'OR', 'NOT', 'IN', 'TO', 'EXISTS', 'IS', 'NULL', 'EMPTY', 'CONTAINS', 'STARTS', 'WITH', 'NOT IN', 'IS NOT NULL', 'IS EMPTY',
  '=', '!=', '>', '>=', '<', '<=', '(', ')', '[', ']', ',', '"', "'", '\\', '\\"', '""', "''",
  '_geoRadius(45.4, 9.1, 2000)', '_geoRadius(1, 2)', '_geoRadius(999, -999, -1)', '_geoBoundingBox([45.5, 9.1], [45.4, 9.2])', '_geoBoundingBox([1], [2,3])',
  '_geoPolygon([0,0],[0,1],[1,1])', '_geoPoint(1,2)', '_geo', '_geoRadius(', 'title', 'genre', 'year', 'tags', 'nested.a', 'id', '`title`',
  '0', '-1', '1.5', '1e400', '9007199254740993', 'NaN', 'inf', '"carol"', "'wonder'", '"unterminated', 'drama', 'comedy', '😀', '\u0000',
];

export function randomFilter(rng: Rng): string {
  if (rng.chance(0.25)) {
    // Well-formed, so the engine's evaluation runs too.
    return rng.pick([
      'genre = drama',
      'year > 2000 AND genre != comedy',
      'year 1990 TO 2010',
      'genre IN [drama, comedy] OR year < 0',
      'NOT title EXISTS',
      'tags IS EMPTY OR tags IS NULL',
      '_geoRadius(45.47, 9.18, 1000)',
      '_geoBoundingBox([46, 9], [45, 10])',
      `year = ${rng.pick(RAW_NUMBERS)}`,
      `title = "${hostileString(rng).replace(/"/g, '\\"')}"`,
      '(((((((((((((((((((((((((((((((((((((((((((((((((year = 1)))))))))))))))))))))))))))))))))))))))))))))))))',
      Array.from({ length: 200 }, (_, i) => `year = ${i}`).join(' OR '),
      'title CONTAINS car',
      'title STARTS WITH car',
    ]);
  }
  const n = rng.chance(0.05) ? rng.int(50, 400) : rng.int(0, 14);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(rng.chance(0.85) ? rng.pick(FILTER_TOKENS) : hostileString(rng));
  return parts.join(rng.chance(0.9) ? ' ' : '');
}

function filterValue(rng: Rng): unknown {
  const x = rng.float();
  if (x < 0.6) return randomFilter(rng);
  if (x < 0.85) return Array.from({ length: rng.int(0, 3) }, () => (rng.chance(0.6) ? randomFilter(rng) : Array.from({ length: rng.int(0, 3) }, () => randomFilter(rng))));
  if (x < 0.95) return hostileValue(rng);
  return nested(rng);
}

// ---------------------------------------------------------------- uids, ids, paths

export function hostileUid(rng: Rng, ctx: FuzzContext): string {
  return rng.pick([
    '..',
    '.',
    '%2e%2e',
    '%2E%2E%2F' + ctx.protectedUid,
    `${rng.pick(ctx.writeUids)}%2F..%2F${ctx.protectedUid}`,
    `..%2F${ctx.protectedUid}`,
    `..%5C${ctx.protectedUid}`,
    '%00',
    `${rng.pick(ctx.writeUids)}%00${ctx.protectedUid}`,
    '%zz',
    '%',
    '%C3%28',
    '%ff%fe',
    '%E2%82',
    'a'.repeat(rng.pick([511, 512, 513, 4096, 70000])),
    '%20',
    '*',
    'idx*',
    'Ünï',
    '%F0%9F%98%80',
    'a%2Fb',
    'with space'.replace(' ', '%20'),
    '-',
    '_',
    '0',
    '-1',
    '9007199254740993',
  ]);
}

/** A uid for a request that may write: never the protected index by name. */
function writeUid(rng: Rng, ctx: FuzzContext): string {
  return rng.chance(0.8) ? rng.pick(ctx.writeUids) : hostileUid(rng, ctx);
}

/** A uid for a read: the protected index is welcome. */
function readUid(rng: Rng, ctx: FuzzContext): string {
  const x = rng.float();
  if (x < 0.45) return ctx.protectedUid;
  if (x < 0.8) return rng.pick(ctx.writeUids);
  return hostileUid(rng, ctx);
}

function hostileDocId(rng: Rng): string {
  return rng.pick(['1', '2', '0', '-1', '1.5', '..', '%2e%2e', '%2F', '..%2F..%2Fetc', '%00', 'a%00b', '%zz', '%C3%28', 'a'.repeat(600), '%20', 'é', '9007199254740993', '1e400', 'null', '*']);
}

/** Percent-encodes for a query string, or leaves it raw (malformed on purpose) now and then. */
function q(rng: Rng, v: string): string {
  if (rng.chance(0.1)) return v.replace(/[\s#&\u0000-\u001f\u007f-\uffff]/g, (c) => pct(c));
  return pct(v);
}

/**
 * encodeURIComponent, except that a lone surrogate becomes its WTF-8 bytes (`%ED%A0%80`,
 * which is not UTF-8) instead of throwing.
 */
function pct(v: string): string {
  let out = '';
  for (const ch of v) {
    const c = ch.charCodeAt(0);
    if (ch.length === 1 && c >= 0xd800 && c <= 0xdfff) {
      out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else out += encodeURIComponent(ch);
  }
  return out;
}

function queryString(rng: Rng, params: Record<string, () => string>): string {
  const names = Object.keys(params);
  const parts: string[] = [];
  for (let i = rng.int(0, 4); i > 0; i--) {
    if (rng.chance(0.15)) {
      parts.push(`${q(rng, hostileString(rng))}=${q(rng, hostileString(rng))}`);
      continue;
    }
    const name = rng.pick(names);
    parts.push(`${name}=${q(rng, params[name]())}`);
  }
  if (rng.chance(0.05)) parts.push(rng.pick(['%zz', '=', '&&', '%', 'a=%', 'limit', 'limit=', `limit=${'9'.repeat(400)}`]));
  return parts.length ? `?${parts.join('&')}` : '';
}

const numStr = (rng: Rng) => (rng.chance(0.3) ? rng.pick(RAW_NUMBERS) : String(hostileNumber(rng)));
const listStr = (rng: Rng) => attrList(rng).join(',');

// ---------------------------------------------------------------- bodies

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'APPLICATION/JSON',
  'application/x-ndjson',
  'text/csv',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'garbage',
  '',
  ';;;',
];

/**
 * Serializes `value` and then, sometimes, breaks it: truncated, invalid UTF-8 spliced in,
 * raw out-of-range numbers, deep raw nesting, empty, or plain garbage.
 */
export function rawBody(rng: Rng, value: unknown): Buffer {
  let text = JSON.stringify(value) ?? 'null';
  const x = rng.float();
  if (x < 0.7) return Buffer.from(text);
  if (x < 0.76) return Buffer.from(text.slice(0, rng.int(0, Math.max(0, text.length - 1))));
  if (x < 0.82) {
    const b = Buffer.from(text);
    const at = rng.int(0, b.length);
    const bad = Buffer.from(rng.pick([[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xe2, 0x82], [0x00], [0xef, 0xbb, 0xbf]]));
    return Buffer.concat([b.subarray(0, at), bad, b.subarray(at)]);
  }
  if (x < 0.87) {
    // A raw number JSON.stringify would never write, in place of a number (or appended).
    const replaced = text.replace(/-?\d+(\.\d+)?(e[+-]?\d+)?/i, rng.pick(RAW_NUMBERS));
    if (replaced !== text) return Buffer.from(replaced);
    const n = rng.pick(RAW_NUMBERS);
    if (text.startsWith('{')) return Buffer.from(text === '{}' ? `{"n":${n}}` : `{"n":${n},${text.slice(1)}`);
    if (text.startsWith('[')) return Buffer.from(text === '[]' ? `[${n}]` : `[${n},${text.slice(1)}`);
    return Buffer.from(n);
  }
  if (x < 0.9) {
    const d = rng.pick([127, 128, 129, 200, 5000]);
    return Buffer.from('['.repeat(d) + ']'.repeat(rng.chance(0.8) ? d : 1));
  }
  if (x < 0.93) return Buffer.alloc(0);
  if (x < 0.96) {
    text = rng.pick(['{', '}', '[', 'nul', 'tru', '"', '{"a":}', '{,}', '[,]', '{"a" 1}', "{'a':1}", '\u0000', 'undefined', 'NaN', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}']);
    return Buffer.from(text);
  }
  return Buffer.from(Array.from({ length: rng.int(1, 64) }, () => rng.int(0, 255)));
}

/** Content-Type and Content-Encoding, usually honest. */
function bodyHeaders(rng: Rng, body: Buffer): { headers: Record<string, string>; body: Buffer } {
  const headers: Record<string, string> = {};
  if (rng.chance(0.85)) headers['Content-Type'] = 'application/json';
  else {
    const ct = rng.pick(CONTENT_TYPES);
    if (ct !== '' || rng.chance(0.5)) headers['Content-Type'] = ct;
  }
  if (rng.chance(0.08)) {
    const enc = rng.pick(['gzip', 'deflate', 'br', 'identity', 'compress', 'gzip, br', 'x-unknown', 'GZIP']);
    headers['Content-Encoding'] = enc;
    if (rng.chance(0.4)) {
      // Sometimes honest: the body really is compressed.
      if (enc === 'gzip' || enc === 'GZIP') body = zlib.gzipSync(body);
      else if (enc === 'deflate') body = zlib.deflateSync(body);
      else if (enc === 'br') body = zlib.brotliCompressSync(body);
    } else if (rng.chance(0.3) && body.length > 4) {
      body = zlib.gzipSync(body).subarray(0, Math.floor(body.length / 2));
    }
  }
  return { headers, body };
}

// ---------------------------------------------------------------- auth

function b64(s: string | Buffer, url = true): string {
  const out = Buffer.from(s).toString('base64');
  return url ? out.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '') : out;
}

function signed(header: unknown, claims: unknown, secret: string, alg = 'sha256'): string {
  const head = `${b64(JSON.stringify(header))}.${b64(JSON.stringify(claims))}`;
  return `${head}.${b64(crypto.createHmac(alg, secret).update(head).digest())}`;
}

/** A tenant token: valid, or broken in one of many ways. */
export function hostileToken(rng: Rng, ctx: FuzzContext): string {
  const { uid, key } = ctx.searchKey;
  const rules = () => rng.pick<unknown>([['*'], { '*': null }, { [ctx.protectedUid]: { filter: randomFilter(rng) } }, { '*': { filter: filterValue(rng) } }, hostileValue(rng), { [hostileString(rng)]: hostileValue(rng) }, []]);
  const exp = () => rng.pick<unknown>([undefined, 4102444800, 0, -1, 1e300, '2030-01-01', 9007199254740993, 1.5, null]);
  const header = { alg: 'HS256', typ: 'JWT' };
  switch (rng.int(0, 12)) {
    case 0:
      return signed(header, { apiKeyUid: uid, searchRules: rules(), exp: exp() }, key);
    case 1:
      return `${b64(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${b64(JSON.stringify({ apiKeyUid: uid, searchRules: ['*'] }))}.`;
    case 2:
      return `${b64(JSON.stringify({ alg: 'none' }))}.${b64(JSON.stringify({ apiKeyUid: uid, searchRules: ['*'] }))}`;
    case 3:
      return signed(header, { apiKeyUid: uuid(rng), searchRules: ['*'] }, key);
    case 4:
      return signed(header, { apiKeyUid: uid, searchRules: ['*'] }, 'not-the-key');
    case 5:
      return signed({ alg: rng.pick(['HS384', 'HS512', 'RS256', 'ES256', 'HS999', '', null, 1]) }, { apiKeyUid: uid, searchRules: ['*'] }, key, rng.pick(['sha384', 'sha512', 'sha256']));
    case 6:
      return `${'!!!not-base64'}.${'$$$'}.${'***'}`;
    case 7:
      return signed(header, { apiKeyUid: uid, searchRules: { '*': { filter: 'x'.repeat(rng.int(1000, 200000)) } } }, key);
    case 8:
      return signed(header, hostileValue(rng), key);
    case 9:
      return signed(header, { apiKeyUid: hostileValue(rng), searchRules: ['*'] }, key);
    case 10:
      return rng.pick(['a.b', 'a.b.c.d', '..', '...', 'eyJ.eyJ.x', b64('{') + '.' + b64('{') + '.x', `${b64(JSON.stringify(header))}.${b64('[1,2')}.sig`]);
    case 11:
      return signed(header, { apiKeyUid: uid, searchRules: nested(rng) }, key);
    default:
      return signed(header, { apiKeyUid: uid, searchRules: rules(), exp: exp(), extra: hostileValue(rng) }, key);
  }
}

function authHeader(rng: Rng, ctx: FuzzContext, search: boolean): Record<string, string> {
  const x = rng.float();
  if (x < 0.78) return { Authorization: `Bearer ${ctx.masterKey}` };
  if (x < 0.81) return {};
  if (search && x < 0.93) return { Authorization: `Bearer ${hostileToken(rng, ctx)}` };
  return {
    Authorization: rng.pick([
      'Bearer',
      'Bearer ',
      `bearer ${ctx.masterKey}`,
      `Basic ${b64('a:b', false)}`,
      `Bearer ${ctx.masterKey}x`,
      `Bearer ${ctx.searchKey.key}`,
      `Bearer ${ctx.searchKey.uid}`,
      `Bearer ${'k'.repeat(rng.pick([64, 1000, 8000]))}`,
      `Bearer ${uuid(rng)}`,
      `Bearer  ${ctx.masterKey}`,
      'Bearer \u00e9',
    ]),
  };
}

// ---------------------------------------------------------------- routes

const SETTINGS = [
  ['filterable-attributes', 'filterableAttributes', 'put'],
  ['sortable-attributes', 'sortableAttributes', 'put'],
  ['displayed-attributes', 'displayedAttributes', 'put'],
  ['typo-tolerance', 'typoTolerance', 'patch'],
  ['searchable-attributes', 'searchableAttributes', 'put'],
  ['stop-words', 'stopWords', 'put'],
  ['non-separator-tokens', 'nonSeparatorTokens', 'put'],
  ['separator-tokens', 'separatorTokens', 'put'],
  ['dictionary', 'dictionary', 'put'],
  ['synonyms', 'synonyms', 'put'],
  ['distinct-attribute', 'distinctAttribute', 'put'],
  ['proximity-precision', 'proximityPrecision', 'put'],
  ['localized-attributes', 'localizedAttributes', 'put'],
  ['ranking-rules', 'rankingRules', 'put'],
  ['faceting', 'faceting', 'patch'],
  ['pagination', 'pagination', 'patch'],
  ['embedders', 'embedders', 'patch'],
  ['search-cutoff-ms', 'searchCutoffMs', 'put'],
  ['facet-search', 'facetSearch', 'put'],
  ['prefix-search', 'prefixSearch', 'put'],
  ['chat', 'chat', 'patch'],
  ['foreign-keys', 'foreignKeys', 'put'],
] as const;

function settingValue(rng: Rng, field: string): unknown {
  switch (field) {
    case 'filterableAttributes':
      return maybe(rng, () => (rng.chance(0.7) ? attrList(rng) : [{ attributePatterns: attrList(rng), features: { facetSearch: hostileValue(rng), filter: { equality: hostileValue(rng), comparison: rng.chance(0.5) } } }]));
    case 'sortableAttributes':
    case 'displayedAttributes':
    case 'searchableAttributes':
    case 'stopWords':
    case 'nonSeparatorTokens':
    case 'separatorTokens':
    case 'dictionary':
      return maybe(rng, () => Array.from({ length: rng.int(0, 5) }, () => (rng.chance(0.5) ? rng.pick(ATTRIBUTES) : hostileString(rng))));
    case 'rankingRules':
      return maybe(rng, () => Array.from({ length: rng.int(0, 6) }, () => rng.pick(['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness', 'attributeRank', 'wordPosition', 'year:asc', 'title:desc', 'year:up', ':asc', 'asc(year)', hostileString(rng)])));
    case 'typoTolerance':
      return maybe(rng, () => ({ enabled: maybe(rng, () => rng.chance(0.5)), minWordSizeForTypos: maybe(rng, () => ({ oneTypo: hostileNumber(rng), twoTypos: hostileNumber(rng) })), disableOnWords: maybe(rng, () => attrList(rng)), disableOnAttributes: maybe(rng, () => attrList(rng)), disableOnNumbers: maybe(rng, () => true) }));
    case 'synonyms':
      return maybe(rng, () => Object.fromEntries(Array.from({ length: rng.int(0, 4) }, () => [hostileString(rng), maybe(rng, () => attrList(rng))])));
    case 'distinctAttribute':
      return maybe(rng, () => rng.pick(ATTRIBUTES));
    case 'proximityPrecision':
      return maybe(rng, () => rng.pick(['byWord', 'byAttribute', 'byLetter', '']));
    case 'localizedAttributes':
      return maybe(rng, () => [{ attributePatterns: attrList(rng), locales: maybe(rng, () => [rng.pick(['eng', 'fra', 'jpn', 'xx', 'zh-TW', ''])]) }]);
    case 'faceting':
      return maybe(rng, () => ({ maxValuesPerFacet: hostileNumber(rng), sortFacetValuesBy: maybe(rng, () => ({ '*': rng.pick(['alpha', 'count', 'random']) })) }));
    case 'pagination':
      return maybe(rng, () => ({ maxTotalHits: hostileNumber(rng) }));
    case 'embedders':
      return maybe(rng, () => ({ [rng.pick(['default', '', 'x'.repeat(300)])]: maybe(rng, () => ({ source: 'userProvided', dimensions: hostileNumber(rng) })) }));
    case 'searchCutoffMs':
      return maybe(rng, () => hostileNumber(rng));
    case 'facetSearch':
    case 'prefixSearch':
      return maybe(rng, () => rng.pick([true, false, 'indexingTime', 'disabled']));
    default:
      return hostileValue(rng);
  }
}

function settingsBody(rng: Rng): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (let i = rng.int(0, 4); i > 0; i--) {
    const [, field] = rng.pick(SETTINGS);
    o[field] = settingValue(rng, field);
  }
  if (rng.chance(0.15)) o[hostileString(rng)] = hostileValue(rng);
  return o;
}

function searchBody(rng: Rng): Record<string, unknown> {
  const gens: Record<string, () => unknown> = {
    q: () => maybe(rng, () => rng.pick(['carol', 'wonder drama', '"quoted phrase"', '-negated', 'a', '', hostileString(rng)])),
    offset: () => maybe(rng, () => rng.pick([0, 1, 9007199254740991, 1e9, -1, 2 ** 32])),
    limit: () => maybe(rng, () => rng.pick([0, 1, 20, 1e9, 9007199254740991, -1, 2 ** 32])),
    page: () => maybe(rng, () => rng.pick([0, 1, 2, 1e9, 9007199254740991, -1])),
    hitsPerPage: () => maybe(rng, () => rng.pick([0, 1, 20, 1e9, 9007199254740991, -1])),
    filter: () => filterValue(rng),
    sort: () => maybe(rng, () => Array.from({ length: rng.int(0, 3) }, () => rng.pick(['year:asc', 'title:desc', 'year', ':asc', 'year:up', '_geoPoint(45.4, 9.1):asc', '_geoPoint(1):asc', '_geoPoint(999, 999):desc', `${hostileString(rng)}:asc`]))),
    facets: () => maybe(rng, () => attrList(rng)),
    attributesToRetrieve: () => maybe(rng, () => attrList(rng)),
    attributesToHighlight: () => maybe(rng, () => attrList(rng)),
    attributesToCrop: () => maybe(rng, () => attrList(rng).map((a) => (rng.chance(0.3) ? `${a}:${rng.pick(['5', '0', '-1', '1e9', 'x', ''])}` : a))),
    cropLength: () => maybe(rng, () => rng.pick([0, 1, 10, 1e9, -1, 65536])),
    cropMarker: () => maybe(rng, () => hostileString(rng)),
    highlightPreTag: () => maybe(rng, () => hostileString(rng)),
    highlightPostTag: () => maybe(rng, () => hostileString(rng)),
    showMatchesPosition: () => maybe(rng, () => true),
    showRankingScore: () => maybe(rng, () => true),
    showRankingScoreDetails: () => maybe(rng, () => true),
    matchingStrategy: () => maybe(rng, () => rng.pick(['last', 'all', 'frequency', 'first'])),
    attributesToSearchOn: () => maybe(rng, () => attrList(rng)),
    rankingScoreThreshold: () => maybe(rng, () => rng.pick([0, 0.5, 1, 1.01, -0.1])),
    distinct: () => maybe(rng, () => rng.pick(ATTRIBUTES)),
    locales: () => maybe(rng, () => [rng.pick(['eng', 'fra', 'xx', ''])]),
    vector: () => maybe(rng, () => Array.from({ length: rng.int(0, 4) }, () => hostileNumber(rng))),
    hybrid: () => maybe(rng, () => ({ embedder: rng.pick(['default', '', 'none']), semanticRatio: hostileNumber(rng) })),
    retrieveVectors: () => maybe(rng, () => true),
  };
  const o: Record<string, unknown> = {};
  const names = Object.keys(gens);
  for (let i = rng.int(0, 6); i > 0; i--) {
    const k = rng.pick(names);
    o[k] = gens[k]();
  }
  if (rng.chance(0.1)) o[hostileString(rng)] = hostileValue(rng);
  return o;
}

function searchParams(rng: Rng): Record<string, () => string> {
  return {
    q: () => hostileString(rng),
    offset: () => numStr(rng),
    limit: () => numStr(rng),
    page: () => numStr(rng),
    hitsPerPage: () => numStr(rng),
    filter: () => randomFilter(rng),
    sort: () => rng.pick(['year:asc', 'title:desc,year:asc', ':asc', '_geoPoint(1,2):asc', hostileString(rng)]),
    facets: () => listStr(rng),
    attributesToRetrieve: () => listStr(rng),
    attributesToHighlight: () => listStr(rng),
    attributesToCrop: () => listStr(rng),
    cropLength: () => numStr(rng),
    showRankingScore: () => rng.pick(['true', 'false', 'yes', '1', '']),
    matchingStrategy: () => rng.pick(['last', 'all', 'x']),
    rankingScoreThreshold: () => numStr(rng),
    vector: () => rng.pick(['1,2', 'a,b', '', '1e400']),
    hybrid: () => hostileString(rng),
  };
}

function documents(rng: Rng): unknown {
  const n = rng.chance(0.05) ? rng.int(100, 600) : rng.int(0, 6);
  return Array.from({ length: n }, () => {
    const d: Record<string, unknown> = {};
    d.id = rng.chance(0.7) ? rng.int(0, 50) : rng.pick<unknown>(['a-b_c', '', '../x', 'a b', '%2e%2e', 'é', 'x'.repeat(600), 1.5, -1, 9007199254740993, 1e21, null, true, [], {}, '\u0000']);
    if (rng.chance(0.1)) delete d.id;
    for (let i = rng.int(0, 4); i > 0; i--) d[rng.chance(0.6) ? rng.pick(ATTRIBUTES) : hostileString(rng)] = hostileValue(rng, n > 10 ? 1 : 3);
    if (rng.chance(0.1)) d._geo = maybe(rng, () => ({ lat: hostileNumber(rng), lng: hostileNumber(rng) }));
    if (rng.chance(0.05)) d._vectors = hostileValue(rng);
    return d;
  });
}

function documentsPayload(rng: Rng): { body: Buffer; contentType?: string } {
  const x = rng.float();
  const docs = maybe(rng, () => documents(rng));
  if (x < 0.75) return { body: rawBody(rng, docs) };
  if (x < 0.87) {
    const lines = Array.isArray(docs) ? docs.map((d) => JSON.stringify(d)).join('\n') : JSON.stringify(docs) ?? '';
    return { body: Buffer.from(rng.chance(0.8) ? lines : `${lines}\n{"id":`), contentType: 'application/x-ndjson' };
  }
  const csv = rng.pick(['id,title\n1,a\n2,b', 'id:number,year:number\n1,x\n', 'id\n"unterminated', '', 'a,b,c\n1,2', `id,t\n${'x'.repeat(2000)},1`, 'id;title\n1;a', '\uFEFFid,title\n3,c', 'id,id\n1,2']);
  return { body: Buffer.from(csv), contentType: 'text/csv' };
}

function taskParams(rng: Rng): Record<string, () => string> {
  const date = () => rng.pick(['2020-01-01', '2020-13-45', '2020-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '0000-00-00', '1e400', '-1', 'now', '2024-02-30', '', hostileString(rng)]);
  const uids = () => Array.from({ length: rng.int(1, 4) }, () => numStr(rng)).join(',');
  return {
    uids,
    batchUids: uids,
    canceledBy: uids,
    types: () => rng.pick(['documentAdditionOrUpdate', 'settingsUpdate,indexDeletion', 'taskCancelation', 'dumpCreation', 'x', '*', '']),
    statuses: () => rng.pick(['enqueued', 'processing', 'succeeded', 'failed', 'canceled', 'enqueued,failed', 'x', '*', '']),
    indexUids: () => rng.pick(['*', 'a,b', '', '%zz', '..', 'x'.repeat(600)]),
    limit: () => numStr(rng),
    from: () => numStr(rng),
    reverse: () => rng.pick(['true', 'false', 'x', '']),
    afterEnqueuedAt: date,
    beforeEnqueuedAt: date,
    afterStartedAt: date,
    beforeStartedAt: date,
    afterFinishedAt: date,
    beforeFinishedAt: date,
  };
}

type Gen = (rng: Rng, ctx: FuzzContext) => Omit<FuzzRequest, 'headers' | 'family'> & { headers?: Record<string, string>; search?: boolean };

/** Routes that do not exist (yet): `similar` arrives with vector search. */
const UNROUTED_FAMILIES = new Set(['similar', 'unrouted']);

const jsonBody = (rng: Rng, v: unknown) => rawBody(rng, v);
const idx = (uid: string) => `/indexes/${uid}`;

/** Route families with their weights. */
export const FAMILIES: readonly (readonly [number, string, Gen])[] = [
  [4, 'indexes.list', (rng) => ({ method: 'GET', path: `/indexes${queryString(rng, { offset: () => numStr(rng), limit: () => numStr(rng) })}` })],
  [3, 'indexes.create', (rng, ctx) => ({ method: 'POST', path: '/indexes', body: jsonBody(rng, maybe(rng, () => ({ uid: rng.chance(0.5) ? rng.pick(ctx.writeUids) : hostileUid(rng, ctx), primaryKey: maybe(rng, () => rng.pick(['id', 'title', '', 'a.b'])) }))) })],
  [3, 'indexes.get', (rng, ctx) => ({ method: 'GET', path: idx(readUid(rng, ctx)) })],
  [2, 'indexes.update', (rng, ctx) => ({ method: 'PATCH', path: idx(writeUid(rng, ctx)), body: jsonBody(rng, maybe(rng, () => ({ primaryKey: maybe(rng, () => 'id'), uid: maybe(rng, () => (rng.chance(0.5) ? rng.pick(ctx.writeUids) : ctx.protectedUid)) }))) })],
  [2, 'indexes.delete', (rng, ctx) => ({ method: 'DELETE', path: idx(writeUid(rng, ctx)) })],
  [2, 'indexes.stats', (rng, ctx) => ({ method: 'GET', path: `${idx(readUid(rng, ctx))}/stats` })],
  [2, 'swap-indexes', (rng, ctx) => ({ method: 'POST', path: '/swap-indexes', body: jsonBody(rng, maybe(rng, () => Array.from({ length: rng.int(0, 3) }, () => maybe(rng, () => ({ indexes: maybe(rng, () => [writeUid(rng, ctx), writeUid(rng, ctx)]), rename: maybe(rng, () => rng.chance(0.5)) }))))) })],
  [8, 'documents.add', (rng, ctx) => {
    const p = documentsPayload(rng);
    return { method: rng.pick(['POST', 'PUT']), path: `${idx(writeUid(rng, ctx))}/documents${queryString(rng, { primaryKey: () => rng.pick(['id', 'title', '', 'a.b', hostileString(rng)]), csvDelimiter: () => rng.pick([',', ';', '', ',,', 'é', '\u0000']), customMetadata: () => hostileString(rng) })}`, body: p.body, headers: p.contentType ? { 'Content-Type': p.contentType } : undefined };
  }],
  [6, 'documents.get', (rng, ctx) => ({ method: 'GET', path: `${idx(readUid(rng, ctx))}/documents${queryString(rng, { offset: () => numStr(rng), limit: () => numStr(rng), fields: () => listStr(rng), filter: () => randomFilter(rng), ids: () => rng.pick(['1,2', '', ',,', '1.5', 'a b', 'x'.repeat(600)]), retrieveVectors: () => rng.pick(['true', 'x']), sort: () => rng.pick(['year:asc', 'x']) })}` })],
  [5, 'documents.fetch', (rng, ctx) => ({ method: 'POST', path: `${idx(readUid(rng, ctx))}/documents/fetch`, body: jsonBody(rng, maybe(rng, () => ({ offset: maybe(rng, () => hostileNumber(rng)), limit: maybe(rng, () => hostileNumber(rng)), fields: maybe(rng, () => attrList(rng)), filter: filterValue(rng), ids: maybe(rng, () => Array.from({ length: rng.int(0, 3) }, () => maybe(rng, () => rng.int(0, 30)))), retrieveVectors: maybe(rng, () => false), sort: maybe(rng, () => ['year:asc']) }))) })],
  [4, 'documents.getOne', (rng, ctx) => ({ method: 'GET', path: `${idx(readUid(rng, ctx))}/documents/${hostileDocId(rng)}${queryString(rng, { fields: () => listStr(rng), retrieveVectors: () => rng.pick(['true', 'x']) })}` })],
  [3, 'documents.deleteOne', (rng, ctx) => ({ method: 'DELETE', path: `${idx(writeUid(rng, ctx))}/documents/${hostileDocId(rng)}` })],
  [2, 'documents.deleteAll', (rng, ctx) => ({ method: 'DELETE', path: `${idx(writeUid(rng, ctx))}/documents` })],
  [3, 'documents.deleteBatch', (rng, ctx) => ({ method: 'POST', path: `${idx(writeUid(rng, ctx))}/documents/delete-batch`, body: jsonBody(rng, maybe(rng, () => Array.from({ length: rng.int(0, 4) }, () => maybe(rng, () => rng.int(0, 50))))) })],
  [3, 'documents.deleteByFilter', (rng, ctx) => ({ method: 'POST', path: `${idx(writeUid(rng, ctx))}/documents/delete`, body: jsonBody(rng, maybe(rng, () => ({ filter: filterValue(rng) }))) })],
  [1, 'documents.edit', (rng, ctx) => ({ method: 'POST', path: `${idx(writeUid(rng, ctx))}/documents/edit`, body: jsonBody(rng, maybe(rng, () => ({ function: hostileString(rng), filter: filterValue(rng), context: hostileValue(rng) }))) })],
  [3, 'settings.get', (rng, ctx) => ({ method: 'GET', path: `${idx(readUid(rng, ctx))}/settings` })],
  [4, 'settings.update', (rng, ctx) => ({ method: 'PATCH', path: `${idx(writeUid(rng, ctx))}/settings`, body: jsonBody(rng, maybe(rng, () => settingsBody(rng))) })],
  [1, 'settings.reset', (rng, ctx) => ({ method: 'DELETE', path: `${idx(writeUid(rng, ctx))}/settings` })],
  [8, 'settings.sub', (rng, ctx) => {
    const [route, field, verb] = rng.pick(SETTINGS);
    const m = rng.weighted<string>([[2, 'GET'], [5, verb.toUpperCase()], [1, 'DELETE'], [1, verb === 'put' ? 'PATCH' : 'PUT'], [0.3, 'POST']]);
    const uid = m === 'GET' ? readUid(rng, ctx) : writeUid(rng, ctx);
    return { method: m, path: `${idx(uid)}/settings/${route}`, body: m === 'GET' || m === 'DELETE' ? undefined : jsonBody(rng, settingValue(rng, field)), unrouted: ![`GET`, verb.toUpperCase(), 'DELETE'].includes(m) };
  }],
  [14, 'search.post', (rng, ctx) => ({ method: 'POST', path: `${idx(readUid(rng, ctx))}/search`, body: rng.chance(0.05) ? undefined : jsonBody(rng, maybe(rng, () => searchBody(rng))), search: true })],
  [8, 'search.get', (rng, ctx) => ({ method: 'GET', path: `${idx(readUid(rng, ctx))}/search${queryString(rng, searchParams(rng))}`, search: true })],
  [6, 'multi-search', (rng, ctx) => ({
    method: 'POST',
    path: '/multi-search',
    body: jsonBody(
      rng,
      maybe(rng, () => {
        const o: Record<string, unknown> = { queries: maybe(rng, () => Array.from({ length: rng.int(0, 4) }, () => maybe(rng, () => ({ ...searchBody(rng), indexUid: maybe(rng, () => readUid(rng, ctx)), federationOptions: rng.chance(0.2) ? hostileValue(rng) : undefined })))) };
        if (rng.chance(0.3)) o.federation = maybe(rng, () => ({ offset: hostileNumber(rng), limit: hostileNumber(rng), facetsByIndex: hostileValue(rng), mergeFacets: hostileValue(rng) }));
        return o;
      }),
    ),
    search: true,
  })],
  [4, 'facet-search', (rng, ctx) => ({ method: 'POST', path: `${idx(readUid(rng, ctx))}/facet-search`, body: jsonBody(rng, maybe(rng, () => ({ facetName: maybe(rng, () => rng.pick(ATTRIBUTES)), facetQuery: maybe(rng, () => hostileString(rng)), q: maybe(rng, () => 'carol'), filter: filterValue(rng), matchingStrategy: maybe(rng, () => 'all'), attributesToSearchOn: maybe(rng, () => attrList(rng)), exhaustiveFacetCount: maybe(rng, () => true) }))), search: true })],
  [3, 'similar', (rng, ctx) => ({ method: rng.pick(['POST', 'GET']), path: `${idx(readUid(rng, ctx))}/similar`, body: jsonBody(rng, maybe(rng, () => ({ id: maybe(rng, () => 1), embedder: maybe(rng, () => 'default'), limit: hostileNumber(rng), filter: filterValue(rng) }))), search: true })],
  [6, 'tasks.list', (rng) => ({ method: 'GET', path: `/tasks${queryString(rng, taskParams(rng))}` })],
  [3, 'tasks.get', (rng) => ({ method: 'GET', path: `/tasks/${rng.chance(0.5) ? numStr(rng) : hostileDocId(rng)}${rng.chance(0.1) ? '/documents' : ''}` })],
  [2, 'tasks.cancel', (rng) => ({ method: 'POST', path: `/tasks/cancel${queryString(rng, taskParams(rng))}` })],
  [2, 'tasks.delete', (rng) => ({ method: 'DELETE', path: `/tasks${queryString(rng, taskParams(rng))}` })],
  [3, 'batches', (rng) => ({ method: 'GET', path: rng.chance(0.5) ? `/batches${queryString(rng, taskParams(rng))}` : `/batches/${rng.chance(0.5) ? numStr(rng) : hostileDocId(rng)}` })],
  [2, 'keys.list', (rng) => ({ method: 'GET', path: `/keys${queryString(rng, { offset: () => numStr(rng), limit: () => numStr(rng) })}` })],
  [2, 'keys.get', (rng, ctx) => ({ method: 'GET', path: `/keys/${rng.pick([ctx.searchKey.uid, ctx.searchKey.key, uuid(rng), hostileDocId(rng), '..', '%zz'])}` })],
  [2, 'keys.create', (rng) => ({ method: 'POST', path: '/keys', body: jsonBody(rng, maybe(rng, () => ({ actions: maybe(rng, () => [rng.pick(['search', 'documents.*', '*', 'keys.create', 'indexes.swap', 'x'])]), indexes: maybe(rng, () => [rng.pick(['*', 'fuzz*', '', '..'])]), expiresAt: maybe(rng, () => rng.pick([null, '2099-01-01', '2000-01-01', '2099-13-01', '9999-12-31T23:59:59Z'])), uid: rng.chance(0.3) ? maybe(rng, () => uuid(rng)) : undefined, name: rng.chance(0.3) ? hostileValue(rng) : undefined }))) })],
  [1, 'keys.update', (rng, ctx) => ({ method: 'PATCH', path: `/keys/${rng.pick([uuid(rng), hostileDocId(rng), ctx.searchKey.uid])}`, body: jsonBody(rng, maybe(rng, () => ({ name: maybe(rng, () => 'n'), description: hostileValue(rng) }))) })],
  [1, 'keys.delete', (rng) => ({ method: 'DELETE', path: `/keys/${rng.pick([uuid(rng), hostileDocId(rng), '..'])}` })],
  [2, 'stats', (rng) => ({ method: 'GET', path: `/stats${queryString(rng, { x: () => hostileString(rng) })}` })],
  [1, 'version', () => ({ method: 'GET', path: '/version' })],
  [1, 'health', (rng) => {
    const method = rng.pick(['GET', 'GET', 'POST', 'DELETE']);
    return { method, path: '/health', unrouted: method !== 'GET' };
  }],
  [2, 'experimental-features', (rng) =>
    rng.chance(0.4)
      ? { method: 'GET', path: `/experimental-features${queryString(rng, { x: () => '1' })}` }
      : { method: 'PATCH', path: '/experimental-features', body: jsonBody(rng, maybe(rng, () => ({ [rng.pick(['containsFilter', 'getTaskDocumentsRoute', 'metrics', 'logsRoute', 'editDocumentsByFunction', 'vectorStore', 'compositeEmbedders', hostileString(rng)])]: maybe(rng, () => rng.chance(0.5)) }))) }],
  [1, 'unrouted', (rng) => ({ method: rng.pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH']), path: rng.pick(['/', '/%zz', '/indexes/', '//indexes', '/indexes//documents', '/dumps', '/snapshots', '/metrics', '/logs/stream', '/network', '/chats', '/export', '/..', '/%2e%2e/indexes']) })],
];

/** The next request of the sequence `rng` drives. */
export function generateRequest(rng: Rng, ctx: FuzzContext): FuzzRequest {
  const [, family, gen] = rng.weighted(FAMILIES.map(([w, name, g]) => [w, [w, name, g] as const] as const));
  const r = gen(rng, ctx);
  let headers: Record<string, string> = { ...authHeader(rng, ctx, r.search === true) };
  let body = r.body;
  if (body !== undefined) {
    const h = bodyHeaders(rng, body);
    body = h.body;
    // A route's own content type (NDJSON, CSV) wins unless the dice change it.
    headers = { ...headers, ...h.headers, ...(r.headers && rng.chance(0.85) ? r.headers : {}) };
  } else if (rng.chance(0.05)) {
    // A body where none is expected.
    body = rawBody(rng, hostileValue(rng));
    headers['Content-Type'] = 'application/json';
  }
  return { family, method: r.method, path: r.path, headers, body, unrouted: r.unrouted === true || UNROUTED_FAMILIES.has(family) };
}

// ---------------------------------------------------------------- client

export interface FuzzResponse {
  status: number;
  text: string;
  /** Set when no HTTP answer came back (reset connection, timeout...). */
  error?: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

/** Sends one request exactly as generated; never throws. */
export function send(baseUrl: string, req: FuzzRequest, timeoutMs = 30000): Promise<FuzzResponse> {
  const u = new URL(baseUrl);
  return new Promise((resolve) => {
    let done = false;
    const finish = (r: FuzzResponse) => {
      if (!done) {
        done = true;
        resolve(r);
      }
    };
    let cr: http.ClientRequest;
    try {
      cr = http.request({ host: u.hostname, port: u.port, method: req.method, path: req.path, headers: { ...req.headers, 'Content-Length': String(req.body?.length ?? 0) }, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => finish({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (e) => finish({ status: 0, text: '', error: `response: ${e.message}` }));
      });
    } catch (e) {
      // The client itself refuses some headers (characters outside latin-1...): not a server answer.
      finish({ status: -1, text: '', error: `client refused: ${(e as Error).message}` });
      return;
    }
    cr.setTimeout(timeoutMs, () => {
      finish({ status: 0, text: '', error: `timeout after ${timeoutMs} ms` });
      cr.destroy();
    });
    cr.on('error', (e) => finish({ status: 0, text: '', error: `request: ${e.message}` }));
    cr.end(req.body);
  });
}

export function closeClient(): void {
  agent.destroy();
}

/** A short printable form of a request, for failure reports. */
export function describeRequest(req: FuzzRequest, max = 600): string {
  const cut = (s: string) => (s.length > max ? `${s.slice(0, max)}… (${s.length} chars)` : s);
  const headers = Object.entries(req.headers)
    .map(([k, v]) => `${k}: ${cut(v)}`)
    .join('; ');
  const body = req.body === undefined ? '(none)' : /^[\x09\x0a\x0d\x20-\x7e]*$/.test(req.body.toString('latin1')) ? cut(req.body.toString('latin1')) : `base64:${cut(req.body.toString('base64'))}`;
  return `${req.method} ${cut(req.path)}\n  headers: ${headers}\n  body: ${body}`;
}

/** What a 4xx answer must look like: exactly `{message, code, type, link}`, all strings. */
export function isErrorObject(text: string): boolean {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return false;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort();
  return keys.join(',') === 'code,link,message,type' && keys.every((k) => typeof o[k] === 'string');
}
