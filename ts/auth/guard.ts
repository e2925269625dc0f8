/**
 * The action guard: every route declares the action it needs; the guard authenticates
 * the bearer token and attaches what the caller may see. Auth runs before body and
 * query validation, so 401/403 win over 400.
 */
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors/api-error';
import { grants, indexAllowed } from './actions';
import { isMasterKey, type KeyStore } from './keys';

export interface AuthContext {
  /** True for the master key, and for everyone when no master key is set. */
  master: boolean;
  indexes: readonly string[];
  canSeeIndex(uid: string): boolean;
  /** True when the key reaches every index (needed to see global tasks). */
  allIndexes: boolean;
  /** Whether the caller holds `action` on `uid`. */
  can(action: string, uid: string | null): boolean;
}

declare module 'express-serve-static-core' {
  interface Request {
    auth?: AuthContext;
  }
}

const FULL: AuthContext = { master: true, indexes: ['*'], canSeeIndex: () => true, allIndexes: true, can: () => true };

const invalidKey = () => new ApiError('invalid_api_key', 'The provided API key is invalid.');

function bearer(req: Request): string | null {
  const h = req.headers.authorization;
  if (h === undefined) return null;
  if (!h.startsWith('Bearer')) {
    throw new ApiError('missing_authorization_header', 'The Authorization header is missing. It must use the bearer authorization method.');
  }
  const token = h.slice('Bearer'.length).trim();
  if (h.length === 'Bearer'.length || token === '') throw invalidKey();
  return token;
}

export function authenticate(req: Request, keys: KeyStore, masterKey: string | null, action: string, indexUid: string | null): AuthContext {
  const token = bearer(req);
  if (masterKey === null) return FULL;
  if (token === null) {
    throw new ApiError('missing_authorization_header', 'The Authorization header is missing. It must use the bearer authorization method.');
  }
  if (isMasterKey(masterKey, token)) return FULL;
  if (action.startsWith('keys.')) throw invalidKey();
  const key = keys.findByValue(token);
  if (!key) throw invalidKey();
  if (key.expiresAt !== null && Date.parse(key.expiresAt) <= Date.now()) throw invalidKey();
  if (!grants(key.actions, action)) throw invalidKey();
  if (indexUid !== null && !indexAllowed(key.indexes, indexUid)) {
    throw new ApiError(
      'invalid_api_key',
      `The API key cannot acces the index \`${indexUid}\`, authorized indexes are [${key.indexes.map((i) => `"${i}"`).join(', ')}].`,
    );
  }
  return {
    master: false,
    indexes: key.indexes,
    canSeeIndex: (uid) => indexAllowed(key.indexes, uid),
    allIndexes: key.indexes.includes('*'),
    can: (a, uid) => grants(key.actions, a) && (uid === null || indexAllowed(key.indexes, uid)),
  };
}

export type Guard = (action: string, index?: 'param' | 'none') => (req: Request, res: Response, next: NextFunction) => void;

export function makeGuard(keys: KeyStore, masterKey: string | null): Guard {
  return (action, index = 'none') =>
    (req, _res, next) => {
      const uid = index === 'param' ? String(req.params.indexUid) : null;
      req.auth = authenticate(req, keys, masterKey, action, uid);
      next();
    };
}
