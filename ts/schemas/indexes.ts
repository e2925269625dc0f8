/** Index uid rules and the bodies of the index routes. */
import { z } from 'zod';
import { ApiError } from '../errors/api-error';
import { parseWith } from '../errors/from-zod';
import type { SwapSpec } from '../tasks/types';
import { boundedList, MAX_SWAPS } from './limits';

export function isValidIndexUid(uid: string): boolean {
  return /^[A-Za-z0-9_-]{1,400}$/.test(uid);
}

export function invalidIndexUidMessage(uid: string): string {
  return `\`${uid}\` is not a valid index uid. Index uid can be an integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.`;
}

export function checkIndexUid(uid: unknown, code = 'invalid_index_uid'): string {
  if (typeof uid !== 'string' || !isValidIndexUid(uid)) {
    throw new ApiError(code, invalidIndexUidMessage(String(uid)));
  }
  return uid;
}

/** `POST /swap-indexes`'s body. */
export const SwapSchema = boundedList(
  z.strictObject({
    indexes: z.array(z.unknown()),
    rename: z.boolean().optional(),
  }),
  MAX_SWAPS,
);

/**
 * The swaps of a `POST /swap-indexes` body (or the library's `swapIndexes`), checked as
 * Meilisearch checks them: two valid uids per swap, each uid once. `reach` is called on every
 * uid as it is checked (the caller's key must reach it).
 */
export function checkSwaps(raw: unknown, reach: (uid: string) => void): SwapSpec[] {
  const parsed = parseWith(SwapSchema, raw, {}, 'invalid_swap_indexes');
  const seen = new Set<string>();
  return parsed.map((s, i) => {
    if (s.indexes.length !== 2) {
      throw new ApiError(
        'invalid_swap_indexes',
        `Invalid value at \`[${i}].indexes\`: Two indexes must be given for each swap. The list \`[${s.indexes.map((x) => JSON.stringify(x)).join(', ')}]\` contains ${s.indexes.length} indexes.`,
      );
    }
    const pair = s.indexes.map((u) => checkIndexUid(u)) as [string, string];
    for (const u of pair) {
      reach(u);
      if (seen.has(u)) {
        throw new ApiError('invalid_swap_duplicate_index_found', `Indexes must be declared only once during a swap. \`${u}\` was specified several times.`);
      }
      seen.add(u);
    }
    return { indexes: pair, rename: s.rename ?? false };
  });
}
