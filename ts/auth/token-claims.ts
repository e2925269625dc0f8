/**
 * The header and the claims of a tenant token, read with the shapes Meilisearch gives them, so
 * that it accepts the same tokens and refuses the others with the same words:
 *
 * - header: `alg` (required, one of the JOSE names Meilisearch's decoder knows), the standard
 *   fields `typ`, `cty`, `jku`, `kid`, `x5u`, `x5t`, `x5t#S256`, `enc`, `zip`, `url`, `nonce`
 *   (a string or null), `x5c` and `crit` (a list of strings or null), `jwk` (an object or null);
 *   any other field must be a string.
 * - claims: `searchRules` (required: a list of index patterns, or an object from pattern to
 *   null or to an object with an optional `filter`), `apiKeyUid` (required: a UUID in any form
 *   the uuid crate reads), `exp` (optional: null or an integer of the i64 range). Other claims
 *   are ignored, but `aud` is kept: Meilisearch's decoder refuses a token with an audience.
 *
 * Design choice: no claim is checked by a JWT library's rules (a library refuses `"exp": null`,
 * which the official Python client signs when a token has no expiry, and checks `nbf` and `iat`,
 * which Meilisearch ignores); what Meilisearch checks, it checks here.
 */
import { type Json, JsonError, JsonReader, Mismatch, unexpected } from './token-json';

/** The algorithms Meilisearch's decoder knows by name; only the HS ones verify (later). */
const ALGORITHMS = [
  'HS256',
  'HS384',
  'HS512',
  'ES256',
  'ES384',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'EdDSA',
];
const STRING_FIELDS = new Set(['typ', 'cty', 'jku', 'kid', 'x5u', 'x5t', 'x5t#S256', 'enc', 'zip', 'url', 'nonce']);
const LIST_FIELDS = new Set(['x5c', 'crit']);

export interface TokenHeader {
  alg: string;
}

/** Index pattern → the filter its rule forces (`undefined`: none). */
export type RuleMap = Map<string, { filter: unknown }>;

export interface TokenClaims {
  searchRules: RuleMap;
  /** Unix seconds; null when the token does not expire. */
  exp: bigint | null;
  /** The parent key's uid, lowercase and hyphenated whatever form the token wrote it in. */
  apiKeyUid: string;
  /** The `aud` claim as written (undefined when absent). */
  aud: Json | undefined;
}

export { type Json, JsonError };

/** The header of a token, from its decoded bytes; throws {@link JsonError}. */
export function readHeader(bytes: Buffer): TokenHeader {
  const r = new JsonReader(bytes);
  const c = r.peek();
  if (c === -1) r.failAhead('EOF while parsing a value');
  if (c !== 0x7b) r.invalidType('struct Header');
  r.eat();
  let alg: string | undefined;
  const others: Array<[string, Json]> = [];
  try {
    for (let key = r.nextKey(true); key !== null; key = r.nextKey(false)) {
      if (key === 'alg') {
        if (alg !== undefined) throw new Mismatch('duplicate field `alg`');
        r.colon();
        alg = readAlgorithm(r);
      } else if (STRING_FIELDS.has(key) || LIST_FIELDS.has(key) || key === 'jwk') {
        r.colon();
        readStandardField(r, key);
      } else {
        r.colon();
        others.push([key, r.value()]);
      }
    }
    if (alg === undefined) throw new Mismatch('missing field `alg`');
    for (const [, v] of others)
      if (v.kind !== 'string') throw new Mismatch(`invalid type: ${unexpected(v)}, expected a string`);
    r.closeMap(true);
    r.end();
    return { alg };
  } catch (err) {
    return placeAfterObject(r, err);
  }
}

/** A shape error inside an object is placed after the object's closing step (module doc of `token-json`). */
function placeAfterObject(r: JsonReader, err: unknown): never {
  if (!(err instanceof Mismatch)) throw err;
  r.closeMap(false);
  return r.fail(err.message);
}

/** The same for a shape error inside a list (a `,` after the item is taken first). */
function placeAfterList(r: JsonReader, err: unknown): never {
  if (!(err instanceof Mismatch)) throw err;
  r.closeSeq(false);
  return r.fail(err.message);
}

/** `alg`: a name, or serde's other form of an enum, `{"HS256": null}`. */
function readAlgorithm(r: JsonReader): string {
  const c = r.peek();
  if (c !== 0x22 && c !== 0x7b) r.failAhead('expected value');
  r.eat();
  if (c === 0x7b && r.peek() !== 0x22) r.failAhead('expected value');
  if (c === 0x7b) r.eat();
  const name = r.string();
  if (!ALGORITHMS.includes(name))
    r.fail(`unknown variant \`${name}\`, expected one of ${ALGORITHMS.map((a) => `\`${a}\``).join(', ')}`);
  if (c === 0x7b) {
    r.colon();
    const v = r.peek();
    if (v !== 0x6e) r.invalidType('unit');
    r.value();
    if (r.peek() !== 0x7d) r.fail(r.peek() === -1 ? 'EOF while parsing an object' : 'expected value');
    r.eat();
  }
  return name;
}

/** A standard header field other than `alg`, of the type Meilisearch's decoder gives it. */
function readStandardField(r: JsonReader, key: string): void {
  const c = r.peek();
  if (c === 0x6e) {
    r.value();
    return;
  }
  if (key === 'jwk') {
    // Any object is taken: a key embedded in the header plays no part in HS signatures.
    if (c !== 0x7b) r.invalidType('struct Jwk');
    r.value();
  } else if (LIST_FIELDS.has(key)) {
    if (c !== 0x5b) r.invalidType('a sequence');
    r.eat();
    for (let first = true; r.nextItem(first); first = false) readString(r);
    r.closeSeq(true);
  } else {
    readString(r);
  }
}

/** A string where serde wants one (its errors placed after the value). */
function readString(r: JsonReader, expected = 'a string'): string {
  if (r.peek() !== 0x22) r.invalidType(expected);
  r.eat();
  return r.string();
}

/** The claims of a token, from their decoded bytes; throws {@link JsonError}. */
export function readClaims(bytes: Buffer): TokenClaims {
  const r = new JsonReader(bytes);
  const c = r.peek();
  if (c === -1) r.failAhead('EOF while parsing a value');
  if (c === 0x5b) return readClaimList(r);
  if (c !== 0x7b) r.invalidType('struct Claims');
  r.eat();
  const seen: Partial<TokenClaims> = {};
  let aud: Json | undefined;
  try {
    for (let key = r.nextKey(true); key !== null; key = r.nextKey(false)) {
      if (key === 'searchRules' || key === 'exp' || key === 'apiKeyUid') {
        if (key in seen) throw new Mismatch(`duplicate field \`${key}\``);
        r.colon();
        readClaim(r, key, seen);
      } else {
        r.colon();
        const v = r.value(false);
        if (key === 'aud') aud = v;
      }
    }
    if (seen.searchRules === undefined) throw new Mismatch('missing field `searchRules`');
    if (seen.apiKeyUid === undefined) throw new Mismatch('missing field `apiKeyUid`');
    r.closeMap(true);
    r.end();
    return { searchRules: seen.searchRules, exp: seen.exp ?? null, apiKeyUid: seen.apiKeyUid, aud };
  } catch (err) {
    return placeAfterObject(r, err);
  }
}

/** serde's other form of a struct: its fields in order, `[searchRules, exp, apiKeyUid]`. */
function readClaimList(r: JsonReader): TokenClaims {
  r.eat();
  const seen: Partial<TokenClaims> = {};
  const order = ['searchRules', 'exp', 'apiKeyUid'] as const;
  try {
    for (const [n, key] of order.entries()) {
      if (!r.nextItem(n === 0)) throw new Mismatch(`invalid length ${n}, expected struct Claims with 3 elements`);
      readClaim(r, key, seen);
    }
  } catch (err) {
    placeAfterList(r, err);
  }
  r.closeSeq(true);
  r.end();
  return { searchRules: seen.searchRules!, exp: seen.exp ?? null, apiKeyUid: seen.apiKeyUid!, aud: undefined };
}

function readClaim(r: JsonReader, key: 'searchRules' | 'exp' | 'apiKeyUid', seen: Partial<TokenClaims>): void {
  if (key === 'searchRules') seen.searchRules = searchRulesOf(r.value());
  else if (key === 'exp') seen.exp = readExpiry(r);
  else seen.apiKeyUid = readUuid(r);
}

/** `exp`: null, or an integer of the i64 range. */
function readExpiry(r: JsonReader): bigint | null {
  const c = r.peek();
  if (c === 0x6e) {
    r.value();
    return null;
  }
  if (c !== 0x2d && !(c >= 0x30 && c <= 0x39)) r.invalidType('i64');
  const n = r.number();
  if (n.kind === 'f64') r.fail(`invalid type: ${unexpected({ kind: 'number', value: n })}, expected i64`);
  if (n.int >= 1n << 63n) r.fail(`invalid value: integer \`${n.int}\`, expected i64`);
  return n.int;
}

/** `searchRules`, read as each of its two forms in turn, like serde's untagged enum. */
function searchRulesOf(v: Json): RuleMap {
  const rules: RuleMap = new Map();
  if (v.kind === 'seq' && v.items.every((p) => p.kind === 'string')) {
    for (const p of v.items) rules.set((p as { value: string }).value, { filter: undefined });
    return rules;
  }
  if (v.kind === 'map') {
    let matches = true;
    for (const [pattern, rule] of v.entries) {
      const r = indexRule(rule);
      if (r === null) matches = false;
      else rules.set(pattern, r);
    }
    if (matches) return rules;
  }
  throw new Mismatch('data did not match any variant of untagged enum SearchRules');
}

/** One index's rule: null, `{filter?}` (other fields ignored) or serde's list form `[filter]`. */
function indexRule(v: Json): { filter: unknown } | null {
  if (v.kind === 'null') return { filter: undefined };
  if (v.kind === 'seq') return v.items.length === 1 ? { filter: plain(v.items[0]!) ?? undefined } : null;
  if (v.kind !== 'map') return null;
  const filters = v.entries.filter(([k]) => k === 'filter');
  if (filters.length > 1) return null;
  return { filter: filters.length ? (plain(filters[0]![1]) ?? undefined) : undefined };
}

/** A kept value as plain JavaScript. */
function plain(v: Json): unknown {
  switch (v.kind) {
    case 'null':
      return null;
    case 'bool':
    case 'string':
      return v.value;
    case 'number':
      return v.value.kind === 'f64' ? v.value.float : Number(v.value.int);
    case 'seq':
      return v.items.map(plain);
    case 'map':
      return Object.fromEntries(v.entries.map(([k, x]) => [k, plain(x)]));
  }
}

const HEX = /^[0-9a-f]$/i;
const HYPHENATED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const GROUP_ENDS = [8, 13, 18, 23];
const GROUP_LENGTHS = [8, 4, 4, 4, 12];

/** `apiKeyUid`: a UUID string, simple, hyphenated, braced or `urn:uuid:`; its canonical form. */
function readUuid(r: JsonReader): string {
  const s = readString(r, 'a formatted UUID string');
  const canonical = canonicalUuid(s);
  if (canonical === null) r.fail(`UUID parsing failed: ${uuidFault(s)}`);
  return canonical;
}

function canonicalUuid(s: string): string | null {
  const inner = s.startsWith('{') && s.endsWith('}') ? s.slice(1, -1) : s.startsWith('urn:uuid:') ? s.slice(9) : s;
  if (inner === s && /^[0-9a-f]{32}$/i.test(s))
    return s.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5').toLowerCase();
  return HYPHENATED.test(inner) ? inner.toLowerCase() : null;
}

/** What the uuid crate says of a string it cannot read as a UUID. */
function uuidFault(s: string): string {
  const wrapped = s.length >= 2 && s.startsWith('{') && s.endsWith('}') ? 1 : s.startsWith('urn:uuid:') ? 9 : 0;
  const inner = wrapped === 1 ? s.slice(1, -1) : wrapped === 9 ? s.slice(9) : s;
  const hyphens: number[] = [];
  let index = 0;
  for (const ch of inner) {
    if (ch === '-') hyphens.push(index);
    else if (!HEX.test(ch)) return `invalid character: found \`${ch}\` at ${index}`;
    index += Buffer.byteLength(ch);
  }
  // A string of the hyphenated length is read as a hyphenated UUID, whatever it holds.
  if (hyphens.length === 0 && wrapped === 0 && inner.length !== 36)
    return `invalid length: found ${Buffer.byteLength(s)}`;
  if (hyphens.length !== 4) return `invalid group count: expected 5, found ${hyphens.length + 1}`;
  for (let g = 0; g < 4; g++) {
    if (hyphens[g] !== GROUP_ENDS[g])
      return `invalid group length in group ${g}: expected ${GROUP_LENGTHS[g]}, found ${hyphens[g]! - (g === 0 ? 0 : GROUP_ENDS[g - 1]! + 1)}`;
  }
  return `invalid group length in group 4: expected 12, found ${index - 24}`;
}
