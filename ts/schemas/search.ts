/**
 * Search parameters (POST body and GET query string) with Meilisearch's per-field codes.
 * The engine receives the normalized query; parameters whose feature arrives in a later
 * issue (filters, facets, sort, formatting, vectors) are validated and accepted here.
 */
import { z } from 'zod';
import { ApiError } from '../errors/api-error';
import { found, parseWith, pathText, type Within } from '../errors/from-zod';
import { invalidIndexUidMessage, isValidIndexUid } from './indexes';
import { bodyFromParams, enumsOf, type ParamKinds } from './query';
import { boundedList, count, filterValue, scoreThreshold } from './limits';
import type { FacetSearchQuery, Hybrid, SearchQuery } from '../native';
import { LOCALES } from '../settings/vocabulary';

const strList = boundedList(z.string()).nullable();
/** `locales` (search and facet search): the codes Meilisearch accepts, checked as it does. */
const localesShape = z
  .array(z.enum(LOCALES as [string, ...string[]]))
  .nullable()
  .optional();

const SEMANTIC_RATIO_RANGE = 'the value of `semanticRatio` is invalid, expected a float between `0.0` and `1.0`.';

export const SearchSchema = z.strictObject({
  // Meilisearch's order, which its error for an unknown field lists.
  q: z.string().nullable().optional(),
  offset: count().optional(),
  limit: count().optional(),
  // null is no page (Meilisearch 1.50 reads it so), unlike offset and limit.
  page: count().nullable().optional(),
  hitsPerPage: count().nullable().optional(),
  attributesToRetrieve: strList.optional(),
  attributesToCrop: strList.optional(),
  cropLength: count().optional(),
  cropMarker: z.string().optional(),
  attributesToHighlight: strList.optional(),
  highlightPreTag: z.string().optional(),
  highlightPostTag: z.string().optional(),
  showMatchesPosition: z.boolean().optional(),
  filter: filterValue.optional(),
  sort: strList.optional(),
  distinct: z.string().nullable().optional(),
  facets: strList.optional(),
  matchingStrategy: z.enum(['last', 'all', 'frequency']).optional(),
  attributesToSearchOn: strList.optional(),
  rankingScoreThreshold: scoreThreshold.nullable().optional(),
  locales: localesShape,
  hybrid: z.unknown().optional(),
  vector: z.array(z.number()).nullable().optional(),
  retrieveVectors: z.boolean().optional(),
  media: z.unknown().optional(),
  personalize: z.looseObject({}).nullable().optional(),
  useNetwork: z.boolean().nullable().optional(),
  showRankingScore: z.boolean().optional(),
  showRankingScoreDetails: z.boolean().optional(),
  showPerformanceDetails: z.boolean().optional(),
});

export type SearchBody = z.infer<typeof SearchSchema>;

/** The fields of one query of a multi-search, in Meilisearch's order. */
export const QUERY_FIELDS = ['indexUid', ...Object.keys(SearchSchema.shape), 'federationOptions'];

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
export const SEARCH_CODES: Record<string, string> = Object.fromEntries(
  Object.keys(SearchSchema.shape).map((k) => [k, `invalid_search_${snake(k)}`]),
);
// `hybrid` is the one field whose code is not `invalid_search_<field>` (Meilisearch's name).
SEARCH_CODES.hybrid = 'invalid_search_hybrid_query';

const SEARCH_PARAMS: ParamKinds = {
  numbers: new Set(['offset', 'limit', 'page', 'hitsPerPage', 'cropLength', 'rankingScoreThreshold']),
  bools: new Set([
    'retrieveVectors',
    'showMatchesPosition',
    'showRankingScore',
    'showRankingScoreDetails',
    'showPerformanceDetails',
    'useNetwork',
  ]),
  lists: new Set([
    'attributesToRetrieve',
    'attributesToCrop',
    'attributesToHighlight',
    'sort',
    'facets',
    'attributesToSearchOn',
  ]),
  enums: enumsOf(SearchSchema.shape),
  codes: SEARCH_CODES,
  // The GET form's parameters, in Meilisearch's order (its error for an unknown one lists them).
  known: [
    ...Object.keys(SearchSchema.shape).flatMap((k) =>
      k === 'hybrid'
        ? ['hybridEmbedder', 'hybridSemanticRatio']
        : k === 'personalize'
          ? ['personalizeUserContext']
          : k === 'media'
            ? []
            : [k],
    ),
  ],
  special: (k, v, out) => {
    if (k === 'vector') {
      // Empty entries are skipped, as Meilisearch does (`1,,0` is two numbers).
      const parts = v.split(',').filter((p) => p.trim() !== '');
      if (parts.some((p) => Number.isNaN(Number(p))))
        throw new ApiError('invalid_search_vector', 'Invalid value in parameter `vector`: invalid float literal');
      out[k] = parts.map(Number);
    } else if (k === 'hybridEmbedder' || k === 'hybridSemanticRatio') {
      // The GET form of `hybrid`: two flat parameters.
      const h = (out.hybrid ?? {}) as Record<string, unknown>;
      if (k === 'hybridEmbedder') h.embedder = v;
      else {
        const r = v.trim() === '' ? Number.NaN : Number(v);
        if (!(r >= 0 && r <= 1))
          throw new ApiError(
            'invalid_search_semantic_ratio',
            `Invalid value in parameter \`hybridSemanticRatio\`: ${SEMANTIC_RATIO_RANGE}`,
          );
        h.semanticRatio = r;
      }
      out.hybrid = h;
    } else if (k === 'personalizeUserContext') {
      // The GET form of `personalize`.
      out.personalize = { userContext: v };
    } else if (k === 'locales') {
      const codes = v.split(',').map((c) => c.trim());
      const unknown = codes.find((c) => !LOCALES.includes(c));
      if (unknown !== undefined) {
        // Meilisearch lists the two-letter codes, then the three-letter ones, each alphabetically.
        const sorted = [...LOCALES].sort((a, b) => a.length - b.length || a.localeCompare(b));
        throw new ApiError(
          'invalid_search_locales',
          `Invalid value in parameter \`locales\`: Unsupported locale \`${unknown}\`, expected one of ${sorted.join(', ')}`,
        );
      }
      out[k] = codes;
    } else {
      return false;
    }
    return true;
  },
};

/** Converts the GET query string into the POST body shape. */
export function searchQueryFromParams(query: Record<string, unknown>): unknown {
  const body = bodyFromParams(query, SEARCH_PARAMS);
  const hybrid = body.hybrid as { embedder?: unknown; semanticRatio?: unknown } | undefined;
  if (hybrid !== undefined && hybrid.embedder === undefined) {
    throw new ApiError(
      'invalid_search_hybrid_query',
      '`hybridEmbedder` is mandatory when `hybridSemanticRatio` is present',
    );
  }
  if (body.vector !== undefined && hybrid === undefined) {
    throw new ApiError('missing_search_hybrid', '`hybridEmbedder` is mandatory when `vector` is present');
  }
  return body;
}

/** A search body (a multi-search's query: `parseQuery`). */
export function parseSearch(body: unknown): SearchBody {
  return parseBody(SearchSchema, SEARCH_CODES, body);
}

/** The index of a multi-search query: a string, and a valid uid. */
const queryIndexUid = z.string().superRefine((uid, ctx) => {
  if (!isValidIndexUid(uid)) ctx.addIssue({ code: 'custom', message: invalidIndexUidMessage(uid) });
});
const QuerySchema = SearchSchema.extend({
  indexUid: queryIndexUid.optional(),
  federationOptions: z.unknown().optional(),
});
const QUERY_CODES: Record<string, string> = { ...SEARCH_CODES, indexUid: 'invalid_index_uid' };

/**
 * Query `i` of a multi-search, its shape checked as Meilisearch reads it: the first bad field
 * in the query's order, at its whole path (`.queries[0].limit`), a missing `indexUid` last. What
 * is found wrong later (the index, the filter, the rules of a federation) says "Inside" it.
 * Returns the query's search parameters (without `indexUid` and `federationOptions`).
 */
/**
 * A multi-search's queries, every one's shape read before any is looked at further, as deserr
 * reads the whole body before the handler runs: a wrong type in the last query is answered
 * before an unknown index in the first, federated or not.
 */
export function parseQueries(queries: unknown[]): SearchBody[] {
  return queries.map((q, i) => parseQuery(q, i));
}

export function parseQuery(raw: unknown, i: number): SearchBody {
  const {
    indexUid,
    federationOptions: _options,
    ...search
  } = parseBody(QuerySchema, QUERY_CODES, raw, { at: ['queries', i], fields: QUERY_FIELDS });
  if (indexUid === undefined)
    throw new ApiError('missing_index_uid', `Missing field \`indexUid\` inside \`.queries[${i}]\``);
  return search;
}

function parseBody<T extends { vector?: number[] | null; hybrid?: unknown }>(
  schema: z.ZodType<T>,
  codes: Record<string, string>,
  body: unknown,
  within?: Within,
): T {
  // No body reads as `{}`; a JSON `null` is refused as deserr refuses it.
  const raw = body === undefined ? {} : body;
  // A query vector of finite numbers passes the schema unchanged, so it is checked by this one
  // loop and handed on as it is: zod would copy it element by element, with a result object
  // per number (hundreds per semantic search, most of the garbage such a request leaves). Any
  // other `vector` is left to the schema, for the same error as ever.
  const vector = raw === null ? undefined : (raw as { vector?: unknown }).vector;
  const fast = isVector(vector) && typeof raw === 'object' && !Array.isArray(raw);
  const input = fast ? { ...raw, vector: undefined } : raw;
  const outer = within ? pathText(within.at) : '';
  let b: T;
  try {
    b = parseWith(schema, input, codes, 'bad_request', within);
  } catch (err) {
    throw firstInBodyOrder(err, input, (part) => parseWith(schema, part, codes, 'bad_request', within), outer);
  }
  if (fast) b.vector = vector;
  checkHybrid(b.hybrid, outer);
  checkPersonalize((b as { personalize?: unknown }).personalize, outer);
  return b;
}

/**
 * The error deserr answers for a body the schema refused (`err`): `hybrid` and `personalize`
 * are checked outside the schema, so when one of them is wrong and comes before every field the
 * schema refuses (`parse` of the fields before it passes), its error is the first.
 */
function firstInBodyOrder(err: unknown, body: unknown, parse: (part: object) => unknown, outer: string): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return err;
  const entries = Object.entries(body);
  for (const [idx, [k, v]] of entries.entries()) {
    if (k !== 'hybrid' && k !== 'personalize') continue;
    try {
      if (k === 'hybrid') checkHybrid(v, outer);
      else checkPersonalize(v, outer);
    } catch (own) {
      try {
        parse(Object.fromEntries(entries.slice(0, idx)));
      } catch {
        return err;
      }
      return own;
    }
  }
  return err;
}

function isVector(v: unknown): v is number[] {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== 'number' || !Number.isFinite(v[i])) return false;
  return true;
}

/** `personalize` of a search: the caller's description, which the hits are reranked for. */
export interface Personalize {
  userContext: string;
}

/** Checks `personalize` of a search body (at `outer`, e.g. `.queries[0]`), with Meilisearch's codes. */
export function checkPersonalize(value: unknown, outer = ''): Personalize | null {
  const at = `${outer}.personalize`;
  if (value === undefined || value === null) return null;
  const code = 'invalid_search_personalize';
  if (typeof value !== 'object' || Array.isArray(value))
    throw new ApiError(code, `Invalid value type at \`${at}\`: expected an object, but found ${describe(value)}`);
  const p = value as Record<string, unknown>;
  for (const k of Object.keys(p)) {
    if (k !== 'userContext')
      throw new ApiError(code, `Unknown field \`${k}\` inside \`${at}\`: expected one of \`userContext\``);
    if (typeof p.userContext !== 'string') {
      throw new ApiError(
        'invalid_search_personalize_user_context',
        `Invalid value type at \`${at}.userContext\`: expected a string, but found ${describe(p.userContext)}`,
      );
    }
  }
  if (p.userContext === undefined) throw new ApiError(code, `Missing field \`userContext\` inside \`${at}\``);
  return { userContext: p.userContext as string };
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `an array: \`${JSON.stringify(v)}\``;
  switch (typeof v) {
    case 'boolean':
      return `a boolean: \`${v}\``;
    case 'number':
      return `${Number.isInteger(v) ? (v >= 0 ? 'a positive integer' : 'a negative integer') : 'a number'}: \`${v}\``;
    case 'string':
      return `a string: \`${JSON.stringify(v)}\``;
    default:
      return `an object: \`${JSON.stringify(v)}\``;
  }
}

/** The shape of `hybrid` (`{embedder, semanticRatio?}`), with Meilisearch's codes and messages. */
export function checkHybrid(hybrid: unknown, outer = ''): void {
  const at = `${outer}.hybrid`;
  if (hybrid === undefined || hybrid === null) return;
  const code = 'invalid_search_hybrid_query';
  if (typeof hybrid !== 'object' || Array.isArray(hybrid)) {
    throw new ApiError(code, `Invalid value type at \`${at}\`: expected an object, but found ${found(hybrid)}`);
  }
  const h = hybrid as Record<string, unknown>;
  for (const k of Object.keys(h)) {
    if (k !== 'embedder' && k !== 'semanticRatio') {
      throw new ApiError(
        code,
        `Unknown field \`${k}\` inside \`${at}\`: expected one of \`semanticRatio\`, \`embedder\``,
      );
    }
  }
  if (h.semanticRatio !== undefined) {
    const r = h.semanticRatio;
    if (typeof r !== 'number') {
      throw new ApiError(
        'invalid_search_semantic_ratio',
        `Invalid value type at \`${at}.semanticRatio\`: expected a number, but found ${found(r)}`,
      );
    }
    if (!(r >= 0 && r <= 1))
      throw new ApiError(
        'invalid_search_semantic_ratio',
        `Invalid value at \`${at}.semanticRatio\`: ${SEMANTIC_RATIO_RANGE}`,
      );
  }
  if (h.embedder === undefined) throw new ApiError(code, `Missing field \`embedder\` inside \`${at}\``);
  if (typeof h.embedder !== 'string') {
    throw new ApiError(
      'invalid_search_embedder',
      `Invalid value type at \`${at}.embedder\`: expected a string, but found ${found(h.embedder)}`,
    );
  }
}

/** The normalized query handed to the engine (see docs/native-contract.md). */
export function engineQuery(b: SearchBody): SearchQuery {
  return {
    q: b.q ?? null,
    offset: b.offset ?? 0,
    limit: b.limit ?? 20,
    page: b.page ?? null,
    hitsPerPage: b.hitsPerPage ?? null,
    attributesToRetrieve: b.attributesToRetrieve ?? null,
    retrieveVectors: b.retrieveVectors ?? false,
    filter: b.filter ?? null,
    sort: b.sort ?? null,
    facets: b.facets ?? null,
    distinct: b.distinct ?? null,
    attributesToHighlight: b.attributesToHighlight ?? null,
    attributesToCrop: b.attributesToCrop ?? null,
    // Left out when not sent: the engine's defaults apply.
    cropLength: b.cropLength,
    cropMarker: b.cropMarker,
    highlightPreTag: b.highlightPreTag,
    highlightPostTag: b.highlightPostTag,
    showMatchesPosition: b.showMatchesPosition ?? false,
    matchingStrategy: b.matchingStrategy ?? null,
    showPerformanceDetails: b.showPerformanceDetails ?? false,
    attributesToSearchOn: b.attributesToSearchOn ?? null,
    locales: b.locales ?? null,
    showRankingScore: b.showRankingScore ?? false,
    showRankingScoreDetails: b.showRankingScoreDetails ?? false,
    rankingScoreThreshold: b.rankingScoreThreshold ?? null,
    vector: b.vector ?? null,
    // Its shape is checked by `checkHybrid` when the body is parsed.
    hybrid: (b.hybrid ?? null) as Hybrid | null,
    media: b.media ?? undefined,
  };
}

/** `POST /indexes/{uid}/facet-search`: unknown fields are ignored, as Meilisearch does. */
export const FacetSearchSchema = z.object({
  facetName: z.string(),
  facetQuery: z.string().nullable().optional(),
  q: z.string().nullable().optional(),
  filter: filterValue.optional(),
  matchingStrategy: z.enum(['last', 'all', 'frequency']).optional(),
  attributesToSearchOn: strList.optional(),
  rankingScoreThreshold: z.number().min(0).max(1).nullable().optional(),
  locales: localesShape,
  exhaustiveFacetCount: z.boolean().nullable().optional(),
  vector: z.array(z.number()).nullable().optional(),
  hybrid: z.unknown().optional(),
  useNetwork: z.boolean().nullable().optional(),
});

export type FacetSearchBody = z.infer<typeof FacetSearchSchema>;

const FACET_SEARCH_CODES: Record<string, string> = {
  ...SEARCH_CODES,
  facetName: 'invalid_facet_search_facet_name',
  facetQuery: 'invalid_facet_search_query',
  exhaustiveFacetCount: 'invalid_facet_search_exhaustive_facet_count',
};

/** The normalized facet-search query handed to the engine (see docs/native-contract.md). */
export function facetEngineQuery(b: FacetSearchBody, containsFilter: boolean): FacetSearchQuery {
  return {
    facetName: b.facetName,
    facetQuery: b.facetQuery ?? null,
    q: b.q ?? null,
    filter: b.filter ?? null,
    containsFilter,
    exhaustiveFacetCount: b.exhaustiveFacetCount ?? false,
    matchingStrategy: b.matchingStrategy ?? null,
    attributesToSearchOn: b.attributesToSearchOn ?? null,
    locales: b.locales ?? null,
    vector: b.vector ?? null,
    // Its shape is checked by `checkHybrid` when the body is parsed.
    hybrid: (b.hybrid ?? null) as Hybrid | null,
    rankingScoreThreshold: b.rankingScoreThreshold ?? null,
  };
}

export function parseFacetSearch(body: unknown): FacetSearchBody {
  if (
    body &&
    typeof body === 'object' &&
    !Array.isArray(body) &&
    (body as Record<string, unknown>).facetName === undefined
  ) {
    // A missing field is reported after the fields present, as deserr reads a body: the
    // others' shapes first (any of their errors wins), then the missing `facetName`.
    parseWith(FacetSearchSchema, { ...body, facetName: '' }, FACET_SEARCH_CODES);
    throw new ApiError('missing_facet_search_facet_name', 'Missing field `facetName`');
  }
  const b = parseWith(FacetSearchSchema, body ?? {}, FACET_SEARCH_CODES);
  checkHybrid(b.hybrid);
  return b;
}
