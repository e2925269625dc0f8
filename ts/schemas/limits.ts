/**
 * Bounds on request shapes that Meilisearch 1.50 leaves open (it accepts 100,000-entry
 * lists and 100 KB key names). Each is far above any real use and keeps one request's cost
 * small; ARCHITECTURE.md ("Limits") lists them with the engine's own.
 */
import { z } from 'zod';
import { ApiError } from '../errors/api-error';
import { countSchema } from '../errors/from-zod';
import { COUNT_MAX, THRESHOLD_RANGE } from './query';

/** Entries of a list parameter: `facets`, `sort`, `attributesToRetrieve`, `fields`... */
export const MAX_LIST_ENTRIES = 1000;
/** Queries in one `/multi-search` request. */
export const MAX_MULTI_SEARCH_QUERIES = 1000;
/** Operations in one `/swap-indexes` request. */
export const MAX_SWAPS = 1000;
/** Characters of an API key's name and description. */
export const MAX_KEY_NAME = 1024;
export const MAX_KEY_DESCRIPTION = 10_000;
/** Entries of an API key's `indexes` and `actions`. */
export const MAX_KEY_INDEXES = 10_000;
export const MAX_KEY_ACTIONS = 100;
/** Bytes of a primary-key attribute name. */
export const MAX_PRIMARY_KEY_BYTES = 512;

/**
 * A count (deserr's `usize`): a non-negative integer below 2^64, as Meilisearch reads one. A
 * JSON number of 2^64 or more is refused, except those that round to 2^64 itself (as
 * `u64::MAX`, `18446744073709551615`, does), which are read as [`COUNT_MAX`].
 */
export function count(): z.ZodNumber {
  const s = z
    .number()
    .min(0)
    .max(2 ** 64)
    .refine(Number.isInteger)
    .overwrite((v) => Math.min(v, COUNT_MAX));
  return countSchema(s);
}

/** A list of strings holding at most [`MAX_LIST_ENTRIES`]. */
export function boundedList<T extends z.ZodType>(item: T, max = MAX_LIST_ENTRIES): z.ZodArray<T> {
  return z.array(item).max(max, `at most ${max} entries are accepted`);
}

/** A string of at most `max` characters. */
export function boundedString(max: number): z.ZodString {
  return z.string().max(max, `at most ${max} characters are accepted`);
}

const PRIMARY_KEY_TOO_LONG = `a primary key name holds at most ${MAX_PRIMARY_KEY_BYTES} bytes`;
const primaryKeyFits = (s: string) => Buffer.byteLength(s) <= MAX_PRIMARY_KEY_BYTES;

/** A primary-key attribute name in a body: at most [`MAX_PRIMARY_KEY_BYTES`] bytes. */
export const primaryKeyName = z.string().refine(primaryKeyFits, PRIMARY_KEY_TOO_LONG);

/** The same rule for the `primaryKey` query parameter. */
export function checkPrimaryKeyParam(pk: string | null): string | null {
  if (pk !== null && !primaryKeyFits(pk))
    throw new ApiError(
      'invalid_index_primary_key',
      `Invalid value in parameter \`primaryKey\`: ${PRIMARY_KEY_TOO_LONG}`,
    );
  return pk;
}

/** The `filter` parameter: a string, or an array of strings and arrays of strings. */
/** `rankingScoreThreshold`: a float in [0, 1], with Meilisearch's message when out of range. */
export const scoreThreshold = z.number().min(0, THRESHOLD_RANGE).max(1, THRESHOLD_RANGE);

/**
 * A filter is read as any JSON value here, as Meilisearch's bodies read it: its shape (a string,
 * or an array of strings and arrays of strings) and syntax are the engine's to check, in the
 * order the engine checks a request.
 */
export const filterValue = z.unknown();
