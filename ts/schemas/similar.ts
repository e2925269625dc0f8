/**
 * `/indexes/{uid}/similar` parameters (POST body and GET query string) with Meilisearch's
 * per-field codes, and the normalized query handed to the engine.
 */
import { z } from 'zod';
import { ApiError } from '../errors/api-error';
import { parseWith } from '../errors/from-zod';
import { boundedList, count, filterValue, scoreThreshold } from './limits';
import type { SimilarQuery } from '../native';
import { bodyFromParams, type ParamKinds } from './query';

export const SimilarSchema = z.strictObject({
  // Checked after the body is read (see `parseSimilar`), for Meilisearch's message.
  id: z.union([z.string(), z.number().int()]).or(z.unknown()),
  offset: count().optional(),
  limit: count().optional(),
  filter: filterValue.optional(),
  embedder: z.string(),
  attributesToRetrieve: boundedList(z.string()).nullable().optional(),
  retrieveVectors: z.boolean().optional(),
  showRankingScore: z.boolean().optional(),
  showRankingScoreDetails: z.boolean().optional(),
  showPerformanceDetails: z.boolean().optional(),
  rankingScoreThreshold: scoreThreshold.nullable().optional(),
});

export type SimilarBody = z.infer<typeof SimilarSchema>;

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const CODES: Record<string, string> = Object.fromEntries(
  Object.keys(SimilarSchema.shape).map((k) => [k, `invalid_similar_${snake(k)}`]),
);

const SIMILAR_PARAMS: ParamKinds = {
  numbers: new Set(['offset', 'limit', 'rankingScoreThreshold']),
  bools: new Set(['retrieveVectors', 'showRankingScore', 'showRankingScoreDetails', 'showPerformanceDetails']),
  lists: new Set(['attributesToRetrieve']),
  codes: CODES,
};

/** The GET query string in the POST body's shape. */
export function similarQueryFromParams(query: Record<string, unknown>): Record<string, unknown> {
  return bodyFromParams(query, SIMILAR_PARAMS);
}

const ID_RULE = /^[A-Za-z0-9_-]{1,511}$/;

export function parseSimilar(body: unknown): SimilarBody {
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    for (const field of ['id', 'embedder']) {
      if ((body as Record<string, unknown>)[field] === undefined)
        throw new ApiError('bad_request', `Missing field \`${field}\``);
    }
  }
  const b = parseWith(SimilarSchema, body ?? {}, CODES);
  const id = b.id as unknown;
  if (!(Number.isInteger(id) || (typeof id === 'string' && ID_RULE.test(id)))) {
    throw new ApiError(
      'invalid_similar_id',
      `Invalid value at \`.id\`: Document identifier \`${JSON.stringify(id)}\` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.`,
    );
  }
  return b as SimilarBody & { id: string | number };
}

/** The normalized query handed to the engine. */
export function similarEngineQuery(b: SimilarBody, filter: unknown, containsFilter: boolean): SimilarQuery {
  return {
    id: String(b.id),
    embedder: b.embedder,
    filter: filter ?? null,
    containsFilter,
    offset: b.offset ?? 0,
    limit: b.limit ?? 20,
    attributesToRetrieve: b.attributesToRetrieve ?? null,
    retrieveVectors: b.retrieveVectors ?? false,
    showRankingScore: b.showRankingScore ?? false,
    showRankingScoreDetails: b.showRankingScoreDetails ?? false,
    rankingScoreThreshold: b.rankingScoreThreshold ?? null,
    showPerformanceDetails: b.showPerformanceDetails ?? false,
  };
}
