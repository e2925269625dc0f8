/** Document identifiers in read requests, checked as Meilisearch checks them. */
import { z } from 'zod';
import { ApiError } from '../errors/api-error';
import { boundedList, count, filterValue } from './limits';

const ID = /^[A-Za-z0-9_-]{1,511}$/;

/** Why `id` (at `.ids[i]`) is not a document identifier, or null when it is one. */
function idError(id: unknown, i: number): string | null {
  if (typeof id === 'number' ? Number.isSafeInteger(id) : typeof id === 'string' && ID.test(id)) return null;
  const shown = typeof id === 'string' ? JSON.stringify(id) : String(id);
  return `In \`.ids[${i}]\`: Document identifier \`${shown}\` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.`;
}

/**
 * The ids of a fetch as strings, each checked (`invalid_document_ids`). `skipEmpty` drops
 * empty entries, as Meilisearch does for the comma list of `GET /documents?ids=`.
 */
export function documentIds(ids: ReadonlyArray<string | number>, skipEmpty = false): string[] {
  const kept = skipEmpty ? ids.filter((id) => id !== '') : ids;
  kept.forEach((id, i) => {
    const err = idError(id, i);
    if (err) throw new ApiError('invalid_document_ids', err);
  });
  return kept.map(String);
}

/** `POST /indexes/{uid}/documents/fetch`'s body (and the library's `getDocuments`). */
export const FetchSchema = z.strictObject({
  offset: count().optional(),
  limit: count().optional(),
  fields: boundedList(z.string()).nullable().optional(),
  retrieveVectors: z.boolean().optional(),
  ids: z
    .array(z.union([z.string(), z.number()]))
    .nullable()
    .optional(),
  filter: filterValue.optional(),
  sort: boundedList(z.string()).nullable().optional(),
  useNetwork: z.boolean().nullable().optional(),
});
export type FetchBody = z.infer<typeof FetchSchema>;
export const FETCH_CODES = {
  offset: 'invalid_document_offset',
  limit: 'invalid_document_limit',
  fields: 'invalid_document_fields',
  filter: 'invalid_document_filter',
  retrieveVectors: 'invalid_document_retrieve_vectors',
  ids: 'invalid_document_ids',
  sort: 'invalid_document_sort',
  useNetwork: 'invalid_document_use_network',
};
