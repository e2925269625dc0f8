/** Index uid rules and the bodies of the index routes. */
import { z } from 'zod';
import { ApiError } from '../errors/api-error';
import { found, parseWith } from '../errors/from-zod';
import type { SwapSpec } from '../tasks/types';
import { boundedList, MAX_SWAPS } from './limits';

export function isValidIndexUid(uid: string): boolean {
  return /^[A-Za-z0-9_-]{1,400}$/.test(uid);
}

export function invalidIndexUidMessage(uid: string): string {
  return `\`${uid}\` is not a valid index uid. Index uid can be an integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.`;
}

/**
 * An index uid given in a body at `at` (`.uid`, `[0].indexes[1]`), in Meilisearch's words: a
 * type error for a non-string, the uid rule (after `Invalid value at ...` with `prefixed`) for
 * a bad string.
 */
export function checkBodyIndexUid(uid: unknown, at: string, prefixed: boolean, code = 'invalid_index_uid'): string {
  if (typeof uid !== 'string')
    throw new ApiError(code, `Invalid value type at \`${at}\`: expected a string, but found ${found(uid)}`);
  if (!isValidIndexUid(uid))
    throw new ApiError(code, `${prefixed ? `Invalid value at \`${at}\`: ` : ''}${invalidIndexUidMessage(uid)}`);
  return uid;
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
        `Two indexes must be given for each swap. The list \`[${s.indexes.map((x) => JSON.stringify(x)).join(', ')}]\` contains ${s.indexes.length} indexes.`,
      );
    }
    const pair = s.indexes.map((u, j) =>
      checkBodyIndexUid(u, `[${i}].indexes[${j}]`, true, 'invalid_swap_indexes'),
    ) as [string, string];
    for (const u of pair) {
      reach(u);
      if (seen.has(u)) {
        throw new ApiError(
          'invalid_swap_duplicate_index_found',
          `Indexes must be declared only once during a swap. \`${u}\` was specified several times.`,
        );
      }
      seen.add(u);
    }
    return { indexes: pair, rename: s.rename ?? false };
  });
}
