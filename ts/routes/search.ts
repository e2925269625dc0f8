/** Single-index search: validate, one engine call, send the engine's JSON bytes as they are. */
import { type Request, type Response, Router } from 'express';
import { mergeFilters } from '../auth/tenant-token';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { readJson } from '../http/body';
import { NativeIndex } from '../native';
import { checkIndexUid } from '../schemas/indexes';
import { parseFederation, splitQuery } from '../schemas/federation';
import { MAX_MULTI_SEARCH_QUERIES } from '../schemas/limits';
import { parseSimilar, similarEngineQuery, similarQueryFromParams } from '../schemas/similar';
import { engineQuery, type FacetSearchBody, facetEngineQuery, parseFacetSearch, parseSearch, type SearchBody, searchQueryFromParams } from '../schemas/search';

const filterTerm = (t: unknown) => typeof t === 'string' || (Array.isArray(t) && t.every((x) => typeof x === 'string'));

/**
 * The filter a search on `uid` must run: the query's own `filter`, ANDed with the rule filter
 * of the caller's tenant token for that index (if any). Every route that searches with a
 * token (search, multi-search, and facet-search or similar when they exist) goes through here.
 */
export function scopedFilter(req: Request, uid: string, filter: unknown): unknown {
  const rule = req.auth!.searchFilter(uid);
  if (rule === null || rule === undefined) return filter ?? null;
  if (!(typeof rule === 'string' || (Array.isArray(rule) && rule.every(filterTerm)))) {
    throw new ApiError('invalid_search_filter', `The tenant token's search rule filter for \`${uid}\` is not a valid filter: expected a string or an array of strings and arrays of strings.`);
  }
  return mergeFilters(filter, rule);
}

/**
 * The engine query for `query` on `uid`, its filter scoped by `scopedFilter`. Fails closed: a
 * rule filter that the engine query would not carry refuses the search rather than answering
 * hits the token may not see.
 */
function scopedQuery(req: Request, uid: string, query: SearchBody, containsFilter: boolean): Record<string, unknown> {
  const filter = scopedFilter(req, uid, query.filter);
  const eq = engineQuery({ ...query, filter: filter as SearchBody['filter'] });
  if (filter !== null && req.auth!.tenantToken && (eq.filter === undefined || eq.filter === null)) {
    throw new ApiError('invalid_search_filter', `This tenant token restricts \`${uid}\` with a filter, and the search could not carry it.`);
  }
  return { ...eq, containsFilter };
}

export function searchRoutes(deps: Deps): Router {
  const r = Router();
  const { guard, registry, searchLimiter } = deps;

  /** Runs one search call within the limiter; a refusal carries `Retry-After: 10`. */
  async function limited(res: Response, fn: () => Promise<Buffer>): Promise<Buffer> {
    try {
      return await searchLimiter.run(fn);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'too_many_search_requests') res.setHeader('Retry-After', '10');
      throw err;
    }
  }

  async function run(req: Request, res: Response, body: unknown): Promise<void> {
    const uid = checkIndexUid(req.params.indexUid);
    const query = parseSearch(body);
    const index = registry.handle(uid);
    const engineQ = scopedQuery(req, uid, query, deps.features.get().containsFilter);
    res.status(200).type('application/json').send(await limited(res, () => index.search(engineQ)));
  }

  r.post('/indexes/:indexUid/search', guard('search', 'param'), (req, res) => run(req, res, readJson(req, true)));
  r.get('/indexes/:indexUid/search', guard('search', 'param'), (req, res) => run(req, res, searchQueryFromParams(req.query as Record<string, unknown>)));

  /** Facet search: the values of one facet among the documents `q` and `filter` match. */
  r.post('/indexes/:indexUid/facet-search', guard('search', 'param'), async (req, res) => {
    const uid = checkIndexUid(req.params.indexUid);
    const body = parseFacetSearch(readJson(req, true));
    const index = registry.handle(uid);
    const query = facetEngineQuery({ ...body, filter: scopedFilter(req, uid, body.filter) as FacetSearchBody['filter'] }, deps.features.get().containsFilter);
    res.status(200).type('application/json').send(await limited(res, () => index.facetSearch(query)));
  });

  /** Similar documents: the nearest neighbours of one document's embedding. */
  async function similar(req: Request, res: Response, body: unknown): Promise<void> {
    const uid = checkIndexUid(req.params.indexUid);
    const query = parseSimilar(body);
    const index = registry.handle(uid);
    const engineQ = similarEngineQuery(query, scopedFilter(req, uid, query.filter), deps.features.get().containsFilter);
    res.status(200).type('application/json').send(await limited(res, () => index.similar(engineQ)));
  }
  r.post('/indexes/:indexUid/similar', guard('search', 'param'), (req, res) => similar(req, res, readJson(req, true)));
  r.get('/indexes/:indexUid/similar', guard('search', 'param'), (req, res) => similar(req, res, similarQueryFromParams(req.query as Record<string, unknown>)));

  /**
   * Multi-search, non-federated: every query runs as a single-index search and its response
   * gets `indexUid` first. The first failing query fails the request, its message prefixed
   * with its position. Federation arrives with the multi-search issue.
   */
  r.post('/multi-search', guard('search', 'none'), async (req, res) => {
    const body = readJson(req) as { queries?: unknown; federation?: unknown } | null;
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      throw new ApiError('bad_request', 'Invalid value type: expected an object');
    }
    for (const k of Object.keys(body)) {
      if (k !== 'queries' && k !== 'federation') {
        throw new ApiError('bad_request', `Unknown field \`${k}\`: expected one of \`queries\`, \`federation\``);
      }
    }
    if (!Array.isArray(body.queries)) throw new ApiError('bad_request', 'Missing field `queries`');
    if (body.queries.length > MAX_MULTI_SEARCH_QUERIES) {
      throw new ApiError('bad_request', `Invalid value at \`.queries\`: at most ${MAX_MULTI_SEARCH_QUERIES} queries are accepted in one request`);
    }
    if (body.federation !== undefined && body.federation !== null) {
      await federated(req, res, body.queries, body.federation);
      return;
    }
    const parts: Buffer[] = [];
    for (const [i, raw] of body.queries.entries()) {
      const { indexUid, search } = splitQuery(raw, i, false);
      try {
        const uid = queryIndex(req, indexUid);
        const engineQ = scopedQuery(req, uid, parseSearch(search), deps.features.get().containsFilter);
        const handle = registry.handle(uid);
        const bytes = await limited(res, () => handle.search(engineQ));
        parts.push(Buffer.from(`{"indexUid":${JSON.stringify(uid)},`), bytes.subarray(1));
      } catch (err) {
        if (err instanceof ApiError) throw new ApiError(err.code, `Inside \`.queries[${i}]\`: ${err.message}`);
        throw err;
      }
      if (i < body.queries.length - 1) parts.push(Buffer.from(','));
    }
    res.status(200).type('application/json').send(Buffer.concat([Buffer.from('{"results":['), ...parts, Buffer.from(']}')]));
  });

  /** The index a multi-search query names, checked against the key (or token). */
  function queryIndex(req: Request, indexUid: unknown): string {
    if (typeof indexUid !== 'string') throw new ApiError('missing_index_uid', 'Missing field `indexUid`');
    const uid = checkIndexUid(indexUid);
    req.auth!.assertIndex(uid);
    if (!req.auth!.can('search', uid)) throw new ApiError('invalid_api_key', 'The provided API key is invalid.');
    return uid;
  }

  /** `federation`: every query is checked, then the engine runs and merges them in one call. */
  async function federated(req: Request, res: Response, queries: unknown[], raw: unknown): Promise<void> {
    const federation = parseFederation(raw);
    const facetsByIndex = federation.facetsByIndex ?? null;
    const handles: NativeIndex[] = [];
    const wire: Array<Record<string, unknown>> = [];
    for (const [i, rawQuery] of queries.entries()) {
      const { indexUid, weight, search } = splitQuery(rawQuery, i, true, typeof federation.distinct === 'string');
      try {
        const uid = queryIndex(req, indexUid);
        const query = scopedQuery(req, uid, parseSearch(search), deps.features.get().containsFilter);
        handles.push(registry.handle(uid));
        wire.push({ indexUid: uid, weight, query });
      } catch (err) {
        if (err instanceof ApiError) throw new ApiError(err.code, `Inside \`.queries[${i}]\`: ${err.message}`);
        throw err;
      }
    }
    const used = new Set(wire.map((q) => q.indexUid));
    for (const uid of Object.keys(facetsByIndex ?? {})) {
      if (used.has(uid)) continue;
      try {
        registry.require(checkIndexUid(uid));
      } catch (err) {
        if (err instanceof ApiError) throw new ApiError(err.code, `Inside \`.federation.facetsByIndex.${uid}\`: ${err.message}\n - Note: index \`${uid}\` is not used in queries`);
        throw err;
      }
    }
    const request = {
      queries: wire,
      federation: {
        offset: federation.offset,
        limit: federation.limit,
        page: federation.page,
        hitsPerPage: federation.hitsPerPage,
        facetsByIndex: facetsByIndex ? Object.entries(facetsByIndex).map(([uid, f]) => [uid, f ?? []]) : null,
        mergeFacets: federation.mergeFacets ?? null,
        distinct: federation.distinct ?? null,
        showPerformanceDetails: federation.showPerformanceDetails ?? false,
      },
    };
    res.status(200).type('application/json').send(await limited(res, () => NativeIndex.federatedSearch(handles, request)));
  }

  return r;
}
