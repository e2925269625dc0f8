/**
 * Tenant tokens: JWTs that a customer's backend signs with one of its API keys to hand a
 * narrower search permission to an end user. Only routes guarded by `search` (and
 * `chatCompletions`) read them; anywhere else the string is just an unknown API key.
 *
 * A token is `header.claims.signature` (split at its last two dots), each part base64url
 * without padding; the standard alphabet's `+` and `/` are read too (older official JS clients
 * wrote header and claims with it). The steps, and the reason a refused token gets (all 403
 * `invalid_api_key`), follow Meilisearch's order:
 *
 * 1. header, then claims: base64 ("Base64 error: ..."), then JSON of their shapes
 *    ("JSON error: ... at line L column C", see `token-claims.ts`);
 * 2. the algorithm must be HS256, HS384 or HS512 ("InvalidAlgorithm");
 * 3. the HMAC of `header.claims` under the parent key's value must be the signature
 *    ("InvalidSignature"). A key's value derives from its uid and the master key
 *    (`keys.ts`), so a token naming a uid that no key has is refused here too;
 * 4. a token with an audience is refused ("InvalidAudience");
 * 5. `exp`, when not null, must not be past ("Tenant token expired. ...");
 * 6. the parent key must exist: else the token is read as an API key, which fails with the
 *    generic "The provided API key is invalid." (a key deleted since the token was signed).
 *
 * Design choice: the signature is checked with `node:crypto` rather than a JOSE library,
 * because such a library applies rules of its own to the claims and the header (it refuses
 * `"exp": null`, which the official Python client signs for a token without expiry, and
 * checks `nbf`, `iat` and `crit`, which Meilisearch ignores), and would give its own reason
 * for a refusal. The HMAC is compared in constant time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../errors/api-error';
import { patternMatches } from './actions';
import type { KeyRecord, KeyStore } from './keys';
import { JsonError, type Json, readClaims, readHeader, type RuleMap } from './token-claims';

/** HMAC hash of each algorithm a token may be signed with. */
const HASHES: Record<string, string> = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' };
const PAD = 0x3d;

/** The search rules of a token: which indexes it opens, and the filter forced on each. */
export class SearchRules {
  /** `filter` is `undefined` when the pattern carries no filter. */
  constructor(private readonly rules: RuleMap) {}

  /** Patterns in byte order, for error messages. */
  patterns(): string[] {
    return [...this.rules.keys()].sort();
  }

  allows(uid: string): boolean {
    for (const p of this.rules.keys()) if (patternMatches(p, uid)) return true;
    return false;
  }

  allIndexes(): boolean {
    return this.rules.has('*');
  }

  /**
   * The filter the token forces on `uid`, or null. When several patterns match, the most
   * specific one wins: an exact uid beats any prefix, a longer prefix beats a shorter one.
   */
  filterFor(uid: string): unknown {
    let best: string | null = null;
    for (const p of this.rules.keys()) {
      if (!patternMatches(p, uid)) continue;
      if (best === null || specificity(p) > specificity(best)) best = p;
    }
    if (best === null) return null;
    const f = this.rules.get(best)!.filter;
    return f === undefined ? null : f;
  }
}

function specificity(p: string): number {
  // Exact patterns rank above every prefix; among each kind, longer is more specific.
  return (p.endsWith('*') ? 0 : 1_000_000) + p.length;
}

export type TokenOutcome =
  | { kind: 'notToken' }
  | { kind: 'unknownKey' }
  | { kind: 'valid'; key: KeyRecord; rules: SearchRules };

const undecodable = (reason: string) => new ApiError('invalid_api_key', `Could not decode tenant token, ${reason}.`);

/** The value of one base64url symbol (`+` and `/` too), or -1. */
function symbolValue(c: number): number {
  if (c >= 0x41 && c <= 0x5a) return c - 0x41;
  if (c >= 0x61 && c <= 0x7a) return c - 0x61 + 26;
  if (c >= 0x30 && c <= 0x39) return c - 0x30 + 52;
  if (c === 0x2d || c === 0x2b) return 62;
  if (c === 0x5f || c === 0x2f) return 63;
  return -1;
}

/**
 * The bytes of one part, or why not, worded as the base64 crate Meilisearch uses words it: a
 * bad symbol (a `=` too, but in the last group, where padding is "Invalid padding") by its
 * code and offset, then a lone symbol left over.
 */
export function decodePart(text: string): Buffer {
  const fail = (detail: string) => undecodable(`Base64 error: ${detail}`);
  const invalid = (at: number) => fail(`Invalid symbol ${text.charCodeAt(at)}, offset ${at}.`);
  const rem = text.length % 4;
  if (rem === 1 && text.charCodeAt(text.length - 1) !== PAD && symbolValue(text.charCodeAt(text.length - 1)) < 0)
    throw invalid(text.length - 1);
  const last = Math.max(0, text.length - rem - (rem === 0 ? 4 : 0));
  for (let i = 0; i < last; i++) if (symbolValue(text.charCodeAt(i)) < 0) throw invalid(i);
  let symbols = 0;
  let firstPad = -1;
  for (let i = last; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === PAD) {
      if (i - last < 2) throw invalid(i);
      if (firstPad < 0) firstPad = i;
      continue;
    }
    if (firstPad >= 0) throw invalid(firstPad);
    if (symbolValue(c) < 0) throw invalid(i);
    symbols++;
  }
  if (text.length > 0 && symbols < 2) throw fail(`Invalid input length: ${last + symbols}`);
  if (firstPad >= 0) throw fail('Invalid padding');
  return Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** Reads one JSON part; its shape errors become refusals. */
function readPart<T>(read: (bytes: Buffer) => T, bytes: Buffer): T {
  try {
    return read(bytes);
  } catch (err) {
    if (err instanceof JsonError) throw undecodable(`JSON error: ${err.message}`);
    throw err;
  }
}

/** Whether the token names an audience (a string, or a list of strings), which Meilisearch refuses. */
function hasAudience(aud: Json | undefined): boolean {
  if (aud === undefined) return false;
  return aud.kind === 'string' || (aud.kind === 'seq' && aud.items.every((a) => a.kind === 'string'));
}

function signatureMatches(alg: string, signed: string, signature: Buffer, secret: string): boolean {
  const expected = createHmac(HASHES[alg]!, secret).update(signed).digest();
  return expected.length === signature.length && timingSafeEqual(expected, signature);
}

/** Whether `token` has a JWT's shape (at least two dots), so it is read as one. */
export function isJwtShaped(token: string): boolean {
  const last = token.lastIndexOf('.');
  return last > 0 && token.lastIndexOf('.', last - 1) >= 0;
}

/**
 * Reads a JWT-shaped `token` as a tenant token (the steps in the module doc). Returns
 * `unknownKey` when its parent key does not exist (the caller then reads it as an API key),
 * and throws 403 `invalid_api_key` with the reason for a malformed, forged or expired token.
 */
export function readTenantToken(token: string, keys: KeyStore, now = Date.now()): TokenOutcome {
  const last = token.lastIndexOf('.');
  const middle = token.lastIndexOf('.', last - 1);
  if (last < 0 || middle < 0) return { kind: 'notToken' };
  const signed = token.slice(0, last);
  const header = readPart(readHeader, decodePart(token.slice(0, middle)));
  const claims = readPart(readClaims, decodePart(token.slice(middle + 1, last)));
  if (HASHES[header.alg] === undefined) throw undecodable('InvalidAlgorithm');
  const signature = decodePart(token.slice(last + 1));
  if (!signatureMatches(header.alg, signed, signature, keys.keyValue(claims.apiKeyUid)))
    throw undecodable('InvalidSignature');
  if (hasAudience(claims.aud)) throw undecodable('InvalidAudience');
  const nowSeconds = BigInt(Math.floor(now / 1000));
  if (claims.exp !== null && nowSeconds > claims.exp) {
    throw new ApiError(
      'invalid_api_key',
      `Tenant token expired. Was valid up to \`${claims.exp}\` and we're now \`${nowSeconds}\`.`,
    );
  }
  const key = keys.get(claims.apiKeyUid);
  if (!key) return { kind: 'unknownKey' };
  return { kind: 'valid', key, rules: new SearchRules(claims.searchRules) };
}

/**
 * ANDs a token's rule filter with the query's own filter. Both may be a string (one
 * expression) or the array form (outer array = AND of its elements, each a string or an
 * OR-array of strings), so the result is the concatenation of both as AND-terms: it stays a
 * valid filter, and no precedence of either side can leak into the other.
 */
export function mergeFilters(query: unknown, rule: unknown): unknown {
  if (rule === null || rule === undefined) return query ?? null;
  const terms = (f: unknown): unknown[] => {
    if (f === null || f === undefined) return [];
    if (typeof f === 'string') return f.trim() === '' ? [] : [f];
    if (Array.isArray(f)) return f;
    return [f];
  };
  const ruleTerms = terms(rule);
  if (ruleTerms.length === 0) return query ?? null;
  const queryTerms = terms(query);
  if (queryTerms.length === 0 && typeof rule === 'string') return rule;
  return [...queryTerms, ...ruleTerms];
}
