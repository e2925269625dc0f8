/** `POST /indexes/{uid}/fields`: the body, with Meilisearch's codes and messages. */
import { z } from 'zod';
import { ApiError } from '../errors/api-error';
import { parseWith } from '../errors/from-zod';
import { boundedList, count } from './limits';

const FILTER_FIELDS = [
  'attributePatterns',
  'displayed',
  'searchable',
  'sortable',
  'distinct',
  'rankingRule',
  'filterable',
];

export const FieldsSchema = z.strictObject({
  offset: count().optional(),
  limit: count().optional(),
  filter: z
    .strictObject({
      attributePatterns: boundedList(z.string()).nullable().optional(),
      displayed: z.boolean().nullable().optional(),
      searchable: z.boolean().nullable().optional(),
      sortable: z.boolean().nullable().optional(),
      distinct: z.boolean().nullable().optional(),
      rankingRule: z.boolean().nullable().optional(),
      filterable: z.boolean().nullable().optional(),
    })
    .nullable()
    .optional(),
});

export interface FieldsQuery {
  offset: number;
  limit: number;
  filter: Record<string, unknown>;
}

export function parseFields(body: unknown): FieldsQuery {
  const filter = (body as Record<string, unknown> | null)?.filter;
  if (filter !== null && typeof filter === 'object' && !Array.isArray(filter)) {
    for (const [k, v] of Object.entries(filter)) {
      if (!FILTER_FIELDS.includes(k)) {
        throw new ApiError(
          'invalid_index_fields_filter',
          `Unknown field \`${k}\` inside \`.filter\`: expected one of ${FILTER_FIELDS.map((f) => `\`${f}\``).join(', ')}`,
        );
      }
      const code = `invalid_index_fields_filter_${k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;
      const patterns = k === 'attributePatterns';
      const ok =
        v === null || (patterns ? Array.isArray(v) && v.every((p) => typeof p === 'string') : typeof v === 'boolean');
      if (!ok) {
        throw new ApiError(
          code,
          `Invalid value type at \`.filter.${k}\`: expected ${patterns ? 'an array of strings' : 'a boolean'}, but found ${JSON.stringify(v)}`,
        );
      }
    }
  }
  const b = parseWith(FieldsSchema, body, {
    offset: 'invalid_index_offset',
    limit: 'invalid_index_limit',
    filter: 'invalid_index_fields_filter',
  });
  return { offset: b.offset ?? 0, limit: b.limit ?? 20, filter: b.filter ?? {} };
}
