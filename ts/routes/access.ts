/** Per-index access checks for routes whose index comes from the body or the query. */
import type { Request } from 'express';
import { ApiError } from '../errors/api-error';

/** 403 `invalid_api_key` unless the caller's key (and tenant token) reaches `uid`. */
export function requireIndexAccess(req: Request, uid: string): void {
  req.auth!.assertIndex(uid);
}

/**
 * Task cancelation and deletion need a key that reaches every index (spec, Authentication
 * rule 4): an index-restricted key is refused outright rather than acting on a filtered subset.
 */
export function requireAllIndexes(req: Request, route: string): void {
  if (!req.auth!.allIndexes) {
    throw new ApiError(
      'invalid_api_key',
      `The provided API key is invalid. The API key for the \`${route}\` route must allow access to all indexes.`,
    );
  }
}
