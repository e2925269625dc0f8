/**
 * The HTTP side of the fuzz (`fuzz.ts`): hostile uids, ids and query strings, broken bodies
 * and content headers, API keys and tenant tokens, and a client that sends the bytes as they
 * are (node:http, so paths such as `/indexes/%2e%2e/x` or `%zz` reach the server exactly as
 * generated: `fetch` would normalize dot segments).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import zlib from 'node:zlib';
import {
  attrList,
  filterValue,
  hostileNumber,
  hostileString,
  hostileValue,
  nested,
  RAW_NUMBERS,
  randomFilter,
  type Rng,
  uuid,
} from './fuzz-values';

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

// ---------------------------------------------------------------- uids, ids, paths

export function hostileUid(rng: Rng, ctx: FuzzContext): string {
  return rng.pick([
    '..',
    '.',
    '%2e%2e',
    `%2E%2E%2F${ctx.protectedUid}`,
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
export function writeUid(rng: Rng, ctx: FuzzContext): string {
  return rng.chance(0.8) ? rng.pick(ctx.writeUids) : hostileUid(rng, ctx);
}

/** A uid for a read: the protected index is welcome. */
export function readUid(rng: Rng, ctx: FuzzContext): string {
  const x = rng.float();
  if (x < 0.45) return ctx.protectedUid;
  if (x < 0.8) return rng.pick(ctx.writeUids);
  return hostileUid(rng, ctx);
}

export function hostileDocId(rng: Rng): string {
  return rng.pick([
    '1',
    '2',
    '0',
    '-1',
    '1.5',
    '..',
    '%2e%2e',
    '%2F',
    '..%2F..%2Fetc',
    '%00',
    'a%00b',
    '%zz',
    '%C3%28',
    'a'.repeat(600),
    '%20',
    'é',
    '9007199254740993',
    '1e400',
    'null',
    '*',
  ]);
}

/** Percent-encodes for a query string, or leaves it raw (malformed on purpose) now and then. */
export function q(rng: Rng, v: string): string {
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
      out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    } else out += encodeURIComponent(ch);
  }
  return out;
}

export function queryString(rng: Rng, params: Record<string, () => string>): string {
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
  if (rng.chance(0.05))
    parts.push(rng.pick(['%zz', '=', '&&', '%', 'a=%', 'limit', 'limit=', `limit=${'9'.repeat(400)}`]));
  return parts.length ? `?${parts.join('&')}` : '';
}

export const numStr = (rng: Rng) => (rng.chance(0.3) ? rng.pick(RAW_NUMBERS) : String(hostileNumber(rng)));
export const listStr = (rng: Rng) => attrList(rng).join(',');

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
    const bad = Buffer.from(
      rng.pick([
        [0xff],
        [0xc3, 0x28],
        [0xed, 0xa0, 0x80],
        [0xf8, 0x88, 0x80, 0x80, 0x80],
        [0x80],
        [0xe2, 0x82],
        [0x00],
        [0xef, 0xbb, 0xbf],
      ]),
    );
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
    text = rng.pick([
      '{',
      '}',
      '[',
      'nul',
      'tru',
      '"',
      '{"a":}',
      '{,}',
      '[,]',
      '{"a" 1}',
      "{'a':1}",
      '\u0000',
      'undefined',
      'NaN',
      '{"__proto__":{"x":1}}',
      '{"constructor":{"prototype":{"x":1}}}',
    ]);
    return Buffer.from(text);
  }
  return Buffer.from(Array.from({ length: rng.int(1, 64) }, () => rng.int(0, 255)));
}

/** Content-Type and Content-Encoding, usually honest. */
export function bodyHeaders(rng: Rng, body: Buffer): { headers: Record<string, string>; body: Buffer } {
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
  const rules = () =>
    rng.pick<unknown>([
      ['*'],
      { '*': null },
      { [ctx.protectedUid]: { filter: randomFilter(rng) } },
      { '*': { filter: filterValue(rng) } },
      hostileValue(rng),
      { [hostileString(rng)]: hostileValue(rng) },
      [],
    ]);
  const exp = () => rng.pick<unknown>([undefined, 4102444800, 0, -1, 1e300, '2030-01-01', 2 ** 53, 1.5, null]);
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
      return signed(
        { alg: rng.pick(['HS384', 'HS512', 'RS256', 'ES256', 'HS999', '', null, 1]) },
        { apiKeyUid: uid, searchRules: ['*'] },
        key,
        rng.pick(['sha384', 'sha512', 'sha256']),
      );
    case 6:
      return `${'!!!not-base64'}.${'$$$'}.${'***'}`;
    case 7:
      return signed(
        header,
        { apiKeyUid: uid, searchRules: { '*': { filter: 'x'.repeat(rng.int(1000, 200000)) } } },
        key,
      );
    case 8:
      return signed(header, hostileValue(rng), key);
    case 9:
      return signed(header, { apiKeyUid: hostileValue(rng), searchRules: ['*'] }, key);
    case 10:
      return rng.pick([
        'a.b',
        'a.b.c.d',
        '..',
        '...',
        'eyJ.eyJ.x',
        `${b64('{')}.${b64('{')}.x`,
        `${b64(JSON.stringify(header))}.${b64('[1,2')}.sig`,
      ]);
    case 11:
      return signed(header, { apiKeyUid: uid, searchRules: nested(rng) }, key);
    default:
      return signed(header, { apiKeyUid: uid, searchRules: rules(), exp: exp(), extra: hostileValue(rng) }, key);
  }
}

export function authHeader(rng: Rng, ctx: FuzzContext, search: boolean): Record<string, string> {
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
      cr = http.request(
        {
          host: u.hostname,
          port: u.port,
          method: req.method,
          path: req.path,
          headers: { ...req.headers, 'Content-Length': String(req.body?.length ?? 0) },
          agent,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => finish({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', (e) => finish({ status: 0, text: '', error: `response: ${e.message}` }));
        },
      );
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
  const body =
    req.body === undefined
      ? '(none)'
      : /^[\x09\x0a\x0d\x20-\x7e]*$/.test(req.body.toString('latin1'))
        ? cut(req.body.toString('latin1'))
        : `base64:${cut(req.body.toString('base64'))}`;
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
