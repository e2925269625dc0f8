/** Per-index access checks for routes whose index comes from the body or the query. */
import type { Request } from 'express';
import { ApiError } from '../errors/api-error';

export function requireIndexAccess(req: Request, uid: string): void {
  const auth = req.auth!;
  if (!auth.canSeeIndex(uid)) {
    throw new ApiError(
      'invalid_api_key',
      `The API key cannot acces the index \`${uid}\`, authorized indexes are [${auth.indexes.map((i) => `"${i}"`).join(', ')}].`,
    );
  }
}
