/**
 * Federated multi-search: the `federation` object and each query's `federationOptions`, with
 * Meilisearch's codes and messages, and the rules of what a federated query may not carry.
 * The merge itself is the engine's (`engine::search::federated`).
 */
import { z } from 'zod';
import { count } from './limits';
import { ApiError, insideQuery } from '../errors/api-error';
import { parseWith } from '../errors/from-zod';
import { checkPersonalize } from './search';

const uint = count();

export const FederationSchema = z.strictObject({
  limit: uint.optional(),
  offset: uint.optional(),
  page: uint.optional(),
  hitsPerPage: uint.optional(),
  facetsByIndex: z.record(z.string(), z.array(z.string()).nullable()).optional(),
  mergeFacets: z.strictObject({ maxValuesPerFacet: uint.optional() }).nullable().optional(),
  distinct: z.string().nullable().optional(),
  showPerformanceDetails: z.boolean().optional(),
  personalize: z.unknown().optional(),
});
/** From another Quarry instance (with the runs header): also the derivations of each query. */
const InternalFederationSchema = FederationSchema.extend({ quarryPins: z.array(z.unknown()).optional() });
const FEDERATION_CODES = {
  offset: 'invalid_search_offset',
  limit: 'invalid_search_limit',
  page: 'invalid_search_page',
  hitsPerPage: 'invalid_search_hits_per_page',
  facetsByIndex: 'invalid_multi_search_facets_by_index',
  mergeFacets: 'invalid_multi_search_merge_facets',
  'mergeFacets.maxValuesPerFacet': 'invalid_multi_search_max_values_per_facet',
  distinct: 'invalid_multi_search_distinct',
};

export type Federation = z.infer<typeof InternalFederationSchema>;

/** `internal`: the request comes from another Quarry instance (it may pin derivations). */
export function parseFederation(raw: unknown, internal = false): Federation {
  // deserr names the object: "Unknown field `x` inside `.federation`", "at `.federation.limit`".
  const f = parseWith(internal ? InternalFederationSchema : FederationSchema, raw, FEDERATION_CODES, 'bad_request', {
    at: ['federation'],
  });
  f.personalize = checkPersonalize(f.personalize, '.federation') ?? undefined;
  return f;
}

export const OptionsSchema = z.strictObject({
  weight: z.number().optional(),
  remote: z.string().nullable().optional(),
  queryPosition: uint.nullable().optional(),
});

export interface FederatedQueryParts {
  indexUid: unknown;
  weight: number;
  /** `federationOptions.remote`: the instance of the network that answers the query. */
  remote: string | null;
  /** The query without `indexUid` and `federationOptions`: a plain search body. */
  search: Record<string, unknown>;
}

const PAGINATION = ['limit', 'offset', 'page', 'hitsPerPage'];

/**
 * Splits query `i` of a multi-search. `federated`: the request has `federation`; otherwise
 * `federationOptions` is refused. Errors name the query as Meilisearch does.
 */
export function splitQuery(
  raw: unknown,
  i: number,
  federated: boolean,
  federationDistinct = false,
): FederatedQueryParts {
  try {
    return split(raw, i, federated, federationDistinct);
  } catch (err) {
    if (err instanceof ApiError && !err.message.includes('.queries[')) throw insideQuery(err, i);
    throw err;
  }
}

function split(raw: unknown, i: number, federated: boolean, federationDistinct: boolean): FederatedQueryParts {
  const { indexUid, federationOptions, ...search } = (raw ?? {}) as Record<string, unknown>;
  if (!federated) {
    if (federationOptions !== undefined && federationOptions !== null) {
      throw new ApiError(
        'invalid_multi_search_federation_options',
        'Using `federationOptions` is not allowed in a non-federated search.\n - Hint: remove `federationOptions` from the query or add `federation` to the request.',
      );
    }
    return { indexUid, weight: 1, remote: null, search };
  }
  for (const k of PAGINATION) {
    if (search[k] !== undefined) {
      throw new ApiError(
        'invalid_multi_search_query_pagination',
        `Using pagination options is not allowed in federated queries.\n - Hint: remove \`${k}\` from the query or remove \`federation\` from the request\n - Hint: pass \`federation.limit\` and \`federation.offset\` for pagination in federated search`,
      );
    }
  }
  if (search.facets !== undefined && search.facets !== null) {
    throw new ApiError(
      'invalid_multi_search_query_facets',
      `Using facet options is not allowed in federated queries.\n - Hint: remove \`facets\` from the query or remove \`federation\` from the request\n - Hint: pass \`federation.facetsByIndex.${String(indexUid)}: ${JSON.stringify(search.facets)}\` for facets in federated search`,
    );
  }
  if (federationDistinct && search.distinct !== undefined && search.distinct !== null) {
    throw new ApiError(
      'invalid_multi_search_distinct',
      'Using `.distinct` is not allowed in federated queries when `federation.distinct` is set.\n - Hint: remove `distinct` from the query or from `federation`',
    );
  }
  if (search.personalize !== undefined && search.personalize !== null) {
    throw new ApiError(
      'invalid_multi_search_query_personalization',
      'Using `.personalize` is not allowed in federated queries.\n - Hint: remove `personalize` from the query or remove `federation` from the request\n - Hint: pass `federation.personalize` for personalization in federated search',
    );
  }
  if (search.showPerformanceDetails !== undefined) {
    throw new ApiError(
      'invalid_multi_search_query_show_performance_details',
      'Using `.showPerformanceDetails` is not allowed in federated queries.\n - Hint: remove `showPerformanceDetails` from the query or remove `federation` from the request',
    );
  }
  let weight = 1;
  let remote: string | null = null;
  if (federationOptions !== undefined && federationOptions !== null) {
    if (typeof federationOptions === 'object' && !Array.isArray(federationOptions)) {
      for (const k of Object.keys(federationOptions)) {
        if (!(k in OptionsSchema.shape)) {
          throw new ApiError(
            'bad_request',
            `Unknown field \`${k}\` inside \`.queries[${i}].federationOptions\`: expected one of \`weight\`, \`remote\`, \`queryPosition\``,
          );
        }
      }
    }
    const o = parseWith(OptionsSchema, federationOptions, {}, 'invalid_multi_search_federation_options');
    if (o.weight !== undefined) {
      if (!(o.weight >= 0)) {
        throw new ApiError(
          'invalid_multi_search_weight',
          `Invalid value at \`.queries[${i}].federationOptions.weight\`: the value of \`weight\` is invalid, expected a positive float (>= 0.0).`,
        );
      }
      weight = o.weight;
    }
    remote = o.remote ?? null;
  }
  return { indexUid, weight, remote, search };
}
