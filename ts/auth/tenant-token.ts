/**
 * Tenant tokens: JWTs that a customer's backend signs with one of its API keys to hand a
 * narrower search permission to an end user. Only routes guarded by `search` (and
 * `chatCompletions`) read them; anywhere else the string is just an unknown API key.
 *
 * A token is `header.claims.signature`, each part base64 (the official JS client uses the
 * standard alphabet for the first two parts and base64url for the signature, so both are
 * read). The signature, the algorithm and the expiry are checked by a kept JWT library
 * (`jose`), pinned to HS256, HS384 and HS512 (`none` and every asymmetric algorithm are
 * refused); the secret is the parent key's 64-hex `key` text. Claims:
 * `apiKeyUid` (the parent key's uid), `searchRules` (an array of index patterns, or an object
 * from pattern to `null` or `{filter}`), and an optional `exp` in Unix seconds.
 *
 * Design choice: the claims are checked for shape before the signature, like Meilisearch does,
 * so a token that is not even well formed is answered "Could not decode tenant token"
 * whatever key it names; a token naming an unknown key falls back to being read as an API key,
 * which fails with the generic "The provided API key is invalid." and so reveals nothing about
 * which key uids exist.
 */
import { errors, jwtVerify } from 'jose';
import { ApiError } from '../errors/api-error';
import { isIndexPattern, patternMatches } from './actions';
import type { KeyRecord, KeyStore } from './keys';

const ALGORITHMS = ['HS256', 'HS384', 'HS512'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** The search rules of a token: which indexes it opens, and the filter forced on each. */
export class SearchRules {
  /** `filter` is `undefined` when the pattern carries no filter. */
  constructor(private readonly rules: ReadonlyMap<string, { filter: unknown }>) {}

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

export type TokenOutcome = { kind: 'notToken' } | { kind: 'unknownKey' } | { kind: 'valid'; key: KeyRecord; rules: SearchRules };

const undecodable = (reason: string) => new ApiError('invalid_api_key', `Could not decode tenant token, ${reason}.`);

function decodeSegment(text: string): Buffer | null {
  if (!BASE64.test(text)) return null;
  return Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

function decodeJson(text: string): unknown {
  const bytes = decodeSegment(text);
  if (bytes === null) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function parseRules(raw: unknown): SearchRules {
  const rules = new Map<string, { filter: unknown }>();
  if (Array.isArray(raw)) {
    for (const p of raw) {
      if (typeof p !== 'string' || !isIndexPattern(p)) throw undecodable(`\`searchRules\` holds an invalid index pattern \`${JSON.stringify(p)}\``);
      rules.set(p, { filter: undefined });
    }
    return new SearchRules(rules);
  }
  if (!isObject(raw)) throw undecodable('`searchRules` must be an array of index patterns or an object');
  for (const [p, rule] of Object.entries(raw)) {
    if (!isIndexPattern(p)) throw undecodable(`\`searchRules\` holds an invalid index pattern \`${JSON.stringify(p)}\``);
    if (rule === null) rules.set(p, { filter: undefined });
    else if (isObject(rule)) rules.set(p, { filter: rule.filter === null ? undefined : rule.filter });
    else throw undecodable(`the search rule of \`${p}\` must be null or an object`);
  }
  return new SearchRules(rules);
}

/** Whether `token` has a JWT's shape (three dot-separated parts), so it is read as one. */
export function isJwtShaped(token: string): boolean {
  const first = token.indexOf('.');
  return first >= 0 && token.indexOf('.', first + 1) > first && token.split('.').length === 3;
}

/**
 * Reads a JWT-shaped `token` as a tenant token. Resolves `unknownKey` when its parent key does
 * not exist (the caller then reads it as an API key), and rejects with 403 `invalid_api_key`
 * for a malformed, forged or expired token.
 */
export async function readTenantToken(token: string, keys: KeyStore, now = Date.now()): Promise<TokenOutcome> {
  const parts = token.split('.');
  if (parts.length !== 3) return { kind: 'notToken' };
  const header = decodeJson(parts[0]);
  if (!isObject(header)) throw undecodable('the header is not base64-encoded JSON');
  const claims = decodeJson(parts[1]);
  if (!isObject(claims)) throw undecodable('the claims are not base64-encoded JSON');
  if (typeof claims.apiKeyUid !== 'string' || !UUID.test(claims.apiKeyUid)) throw undecodable('`apiKeyUid` is missing or is not a UUID');
  if (!('searchRules' in claims)) throw undecodable('`searchRules` is missing');
  const rules = parseRules(claims.searchRules);
  const exp = claims.exp;
  if (exp !== undefined && exp !== null && !(typeof exp === 'number' && Number.isInteger(exp))) throw undecodable('`exp` must be an integer');

  const key = keys.get(claims.apiKeyUid.toLowerCase());
  if (!key) return { kind: 'unknownKey' };

  if (typeof header.alg !== 'string' || !ALGORITHMS.includes(header.alg)) throw undecodable('InvalidAlgorithm');
  try {
    await jwtVerify(token, new TextEncoder().encode(keys.keyValue(key.uid)), { algorithms: ALGORITHMS, currentDate: new Date(now) });
  } catch (err) {
    if (err instanceof errors.JWTExpired) {
      throw new ApiError('invalid_api_key', `Tenant token expired. Was valid up to \`${exp}\` and we're now \`${Math.floor(now / 1000)}\`.`);
    }
    if (err instanceof errors.JOSEAlgNotAllowed) throw undecodable('InvalidAlgorithm');
    throw undecodable('InvalidSignature');
  }
  return { kind: 'valid', key, rules };
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
