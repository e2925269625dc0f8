/**
 * The action guard: every route declares the action it needs; the guard authenticates
 * the bearer token and attaches what the caller may see. Auth runs before body and
 * query validation, so 401/403 win over 400.
 *
 * Order of the checks, for a token that is not the master key: tenant token (search routes
 * only) or API key lookup; then the index in the path, against the token's rules first and
 * the key's patterns second (so the messages say which of the two refused); then the action
 * and the key's expiry. Routes without an index in the path either filter what they show
 * (`GET /indexes`, `/stats`, `/tasks`, `/batches`) or check each index they touch with
 * `assertIndex` (multi-search, index creation, swaps); other index-less actions need a key
 * that reaches every index.
 */
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors/api-error';
import { grants, indexAllowed, routeChecksIndex } from './actions';
import { isMasterKey, type KeyRecord, type KeyStore } from './keys';
import { isJwtShaped, readTenantToken, type SearchRules } from './tenant-token';

export interface AuthContext {
  /** True for the master key, and for everyone when no master key is set. */
  master: boolean;
  /** The key's index patterns (`["*"]` for the master key). */
  indexes: readonly string[];
  /** Whether the key (and the tenant token, if any) reaches `uid`. */
  canSeeIndex(uid: string): boolean;
  /** True when the key (and the token, if any) reaches every index (needed to see global tasks). */
  allIndexes: boolean;
  /** Whether the caller holds `action` on `uid` (`null`: on the route without an index). */
  can(action: string, uid: string | null): boolean;
  /** Throws 403 `invalid_api_key`, saying whether the token or the key refused, unless `uid` is reachable. */
  assertIndex(uid: string): void;
  /** True when the caller authenticated with a tenant token. */
  tenantToken: boolean;
  /** The filter a tenant token forces on searches of `uid`, or null. */
  searchFilter(uid: string): unknown;
}

declare module 'express-serve-static-core' {
  interface Request {
    auth?: AuthContext;
  }
}

/** The whole instance: the master key, any request when no master key is set, and the embedded library. */
export const FULL_ACCESS: AuthContext = {
  master: true,
  indexes: ['*'],
  canSeeIndex: () => true,
  allIndexes: true,
  can: () => true,
  assertIndex: () => undefined,
  tenantToken: false,
  searchFilter: () => null,
};

/** Actions whose routes accept tenant tokens; a token grants no other action. */
const TOKEN_ACTIONS = new Set(['search', 'chatCompletions']);

const invalidKey = () => new ApiError('invalid_api_key', 'The provided API key is invalid.');
const missingHeader = () =>
  new ApiError(
    'missing_authorization_header',
    'The Authorization header is missing. It must use the bearer authorization method.',
  );
const missingMasterKey = () =>
  new ApiError(
    'missing_master_key',
    'Meilisearch is running without a master key. To access this API endpoint, you must have set a master key at launch.',
  );

const list = (patterns: readonly string[]) =>
  `[${[...patterns]
    .sort()
    .map((i) => JSON.stringify(i))
    .join(', ')}]`;

/** The token of `Authorization: Bearer <token>`; null when the header is absent. */
function bearer(req: Pick<Request, 'headers'>): string | null {
  const h = req.headers.authorization;
  if (h === undefined) return null;
  const space = h.indexOf(' ');
  const scheme = space < 0 ? h : h.slice(0, space);
  if (scheme !== 'Bearer') throw missingHeader();
  if (space < 0) throw invalidKey();
  return h.slice(space + 1);
}

function isExpired(key: KeyRecord, now: number): boolean {
  return key.expiresAt !== null && Date.parse(key.expiresAt) <= now;
}

/**
 * Who is asking, for `action` on `indexUid`: the master key, an API key, or a tenant token
 * (JWT-shaped, on the routes that read them). Throws the refusal. A null `action` is a route
 * that checks an action for each thing it does (`/mcp`, with `authorize`): any key that has
 * not expired is let in, and tenant tokens are read.
 */
export function authenticate(
  req: Pick<Request, 'headers'>,
  keys: KeyStore,
  masterKey: string | null,
  action: string | null,
  indexUid: string | null,
): AuthContext {
  const token = bearer(req);
  if (masterKey === null) {
    if (action?.startsWith('keys.')) throw missingMasterKey();
    return FULL_ACCESS;
  }
  if (token === null) throw missingHeader();
  if (isMasterKey(masterKey, token)) return FULL_ACCESS;
  if ((action === null || TOKEN_ACTIONS.has(action)) && isJwtShaped(token)) {
    const outcome = readTenantToken(token, keys);
    return outcome.kind === 'valid'
      ? contextOf(outcome.key, outcome.rules, action, indexUid)
      : contextOf(keys.findByValue(token), null, action, indexUid);
  }
  return contextOf(keys.findByValue(token), null, action, indexUid);
}

function contextOf(
  key: KeyRecord | undefined,
  rules: SearchRules | null,
  action: string | null,
  indexUid: string | null,
): AuthContext {
  if (!key) throw invalidKey();
  const k = key;

  const keyAllIndexes = k.indexes.includes('*');
  const ctx: AuthContext = {
    master: false,
    indexes: k.indexes,
    tenantToken: rules !== null,
    allIndexes: keyAllIndexes && (rules === null || rules.allIndexes()),
    canSeeIndex: (uid) => indexAllowed(k.indexes, uid) && (rules === null || rules.allows(uid)),
    can(a, uid) {
      if (isExpired(k, Date.now()) || !grants(k.actions, a)) return false;
      if (rules !== null && !TOKEN_ACTIONS.has(a)) return false;
      if (uid !== null) return ctx.canSeeIndex(uid);
      return keyAllIndexes || (routeChecksIndex(a) && k.indexes.length > 0);
    },
    assertIndex(uid) {
      if (rules !== null && !rules.allows(uid)) {
        throw new ApiError(
          'invalid_api_key',
          `The provided tenant token cannot acces the index \`${uid}\`, allowed indexes are ${list(rules.patterns())}.`,
        );
      }
      if (!indexAllowed(k.indexes, uid)) {
        // A token's holder must not learn which indexes its parent key reaches.
        throw new ApiError(
          'invalid_api_key',
          rules !== null
            ? `The API key used to generate this tenant token cannot acces the index \`${uid}\`.`
            : `The API key cannot acces the index \`${uid}\`, authorized indexes are ${list(k.indexes)}.`,
        );
      }
    },
    searchFilter: (uid) => (rules === null ? null : rules.filterFor(uid)),
  };

  if (action === null) {
    if (isExpired(k, Date.now())) throw invalidKey();
    return ctx;
  }
  authorize(ctx, action, indexUid);
  return ctx;
}

/**
 * Throws the guard's refusal unless `auth` may perform `action` on `uid` (null: the action
 * without an index): the index first (the message says whether the token or the key refused
 * it), then the action (`The provided API key is invalid.`, as Meilisearch says it).
 */
export function authorize(auth: AuthContext, action: string, uid: string | null): void {
  if (uid !== null) auth.assertIndex(uid);
  if (!auth.can(action, uid)) throw invalidKey();
}

/**
 * Waits until this instance applied what the replicated log held when asked; resolves true if
 * it had anything left to apply (null on a single instance).
 */
export type CatchUp = (() => Promise<boolean>) | null;

/**
 * `authenticate`, asked again once when a key is refused and `catchUp` brought something new:
 * in a replicated group a key created through another instance may not have arrived here yet,
 * and its first use must not fail for that.
 */
export function authenticateLatest(
  req: Pick<Request, 'headers'>,
  keys: KeyStore,
  masterKey: string | null,
  action: string | null,
  indexUid: string | null,
  catchUp: CatchUp,
): AuthContext | Promise<AuthContext> {
  try {
    return authenticate(req, keys, masterKey, action, indexUid);
  } catch (err) {
    if (!catchUp || !(err instanceof ApiError) || err.code !== 'invalid_api_key') throw err;
    return catchUp().then((newer) => {
      if (!newer) throw err;
      return authenticate(req, keys, masterKey, action, indexUid);
    });
  }
}

/** A route's guard for `action` (null: any key; the route checks each action with `authorize`). */
export type Guard = (
  action: string | null,
  index?: 'param' | 'none',
) => (req: Request, res: Response, next: NextFunction) => void;

export function makeGuard(keys: KeyStore, masterKey: string | null, catchUp: CatchUp = null): Guard {
  return (action, index = 'none') =>
    (req, _res, next) => {
      const uid = index === 'param' ? String(req.params.indexUid) : null;
      let auth: AuthContext | Promise<AuthContext>;
      try {
        auth = authenticateLatest(req, keys, masterKey, action, uid, catchUp);
      } catch (err) {
        next(err);
        return;
      }
      if (auth instanceof Promise) {
        auth.then((ctx) => {
          req.auth = ctx;
          next();
        }, next);
        return;
      }
      req.auth = auth;
      next();
    };
}
