/** Single-index search: validate, one engine call, send the engine's JSON bytes as they are. */
import { type Request, type Response, Router } from 'express';
import { mergeFilters } from '../auth/tenant-token';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { readJson } from '../http/body';
import { DERIVATION_CANDIDATES_HEADER, FEDERATION_RUNS_HEADER, NativeIndex } from '../native';
import { facetSearchOverNetwork } from '../network/facets';
import { networkTargets, remoteTarget, type Target, usesNetwork } from '../network/search';
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
function scopedQuery(req: Request, deps: Deps, uid: string, query: SearchBody): Record<string, unknown> {
  const filter = scopedFilter(req, uid, query.filter);
  const eq = engineQuery({ ...query, filter: filter as SearchBody['filter'] });
  if (filter !== null && req.auth!.tenantToken && (eq.filter === undefined || eq.filter === null)) {
    throw new ApiError('invalid_search_filter', `This tenant token restricts \`${uid}\` with a filter, and the search could not carry it.`);
  }
  const features = deps.features.get();
  const out: Record<string, unknown> = { ...eq, containsFilter: features.containsFilter };
  // Documents the dynamic search rules pin for this query.
  if (features.dynamicSearchRules) {
    const pins = deps.searchRules.pinsFor(uid, typeof query.q === 'string' ? query.q : '');
    if (pins.length) out.pinnedDocuments = pins;
  }
  return out;
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
    if (usesNetwork(deps, query.useNetwork)) {
      res.status(200).type('application/json').send(await limited(res, () => overNetwork(req, uid, (body ?? {}) as Record<string, unknown>)));
      return;
    }
    const index = registry.handle(uid);
    const engineQ = scopedQuery(req, deps, uid, query);
    res.status(200).type('application/json').send(await limited(res, () => index.search(engineQ)));
  }

  r.post('/indexes/:indexUid/search', guard('search', 'param'), (req, res) => run(req, res, readJson(req, true)));
  r.get('/indexes/:indexUid/search', guard('search', 'param'), (req, res) => run(req, res, searchQueryFromParams(req.query as Record<string, unknown>)));

  /** Facet search: the values of one facet among the documents `q` and `filter` match. */
  r.post('/indexes/:indexUid/facet-search', guard('search', 'param'), async (req, res) => {
    const uid = checkIndexUid(req.params.indexUid);
    const raw = readJson(req, true);
    const body = parseFacetSearch(raw);
    const index = registry.handle(uid);
    const filter = scopedFilter(req, uid, body.filter);
    const query = facetEngineQuery({ ...body, filter: filter as FacetSearchBody['filter'] }, deps.features.get().containsFilter);
    const useNetwork = (raw as Record<string, unknown> | undefined)?.useNetwork;
    if (!usesNetwork(deps, useNetwork)) {
      res.status(200).type('application/json').send(await limited(res, () => index.facetSearch(query)));
      return;
    }
    // The caller's tenant-token rule travels with the request.
    const remoteBody = { ...(raw as Record<string, unknown>), filter };
    res.status(200).type('application/json').send(await facetSearchOverNetwork(deps, uid, remoteBody, () => limited(res, () => index.facetSearch(query))));
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
        const parsed = parseSearch(search);
        let bytes: Buffer;
        if (usesNetwork(deps, parsed.useNetwork)) {
          bytes = await limited(res, () => overNetwork(req, uid, search));
        } else {
          const engineQ = scopedQuery(req, deps, uid, parsed);
          const handle = registry.handle(uid);
          bytes = await limited(res, () => handle.search(engineQ));
        }
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

  /** One query of a federation, where it runs. */
  interface Item {
    position: number;
    uid: string;
    weight: number;
    search: Record<string, unknown>;
    target: Target;
  }

  /**
   * Runs `items` as one federated search in the engine: local ones on their indexes, the
   * others asked of their instances while the local ones run.
   */
  function federate(req: Request, items: Item[], federation: Record<string, unknown>, pins?: unknown[]): Promise<Buffer> {
    const handles: NativeIndex[] = [];
    const queries: Array<Record<string, unknown>> = [];
    const remotes = new Map<string, { name: string; url: string; apiKey: string | null; queries: Array<Record<string, unknown>> }>();
    for (const item of items) {
      try {
        const parsed = parseSearch(item.search);
        if (item.target.local) {
          const query = scopedQuery(req, deps, item.uid, parsed);
          handles.push(registry.handle(item.uid));
          if (pins?.[item.position] !== undefined) query.pins = pins[item.position];
          queries.push({ indexUid: item.uid, weight: item.weight, position: item.position, remote: item.target.name, query });
          continue;
        }
        const { name, remote } = item.target;
        // The caller's tenant-token rule travels with the query.
        const filter = scopedFilter(req, item.uid, parsed.filter);
        const body = { ...item.search };
        if (filter !== null) body.filter = filter;
        else delete body.filter;
        const entry = remotes.get(name) ?? { name, url: remote.url, apiKey: remote.searchApiKey, queries: [] };
        entry.queries.push({ position: item.position, indexUid: item.uid, weight: item.weight, body });
        remotes.set(name, entry);
      } catch (err) {
        if (err instanceof ApiError && !err.message.startsWith('Inside')) throw new ApiError(err.code, `Inside \`.queries[${item.position}]\`: ${err.message}`);
        throw err;
      }
    }
    const request = {
      queries,
      remotes: [...remotes.values()],
      federation: { ...federation, showRuns: req.get(FEDERATION_RUNS_HEADER) === 'true', remoteTimeoutMs: deps.config.remoteTimeoutMs },
    };
    // Another instance running a search over the network asks what the words derive from.
    if (req.get(DERIVATION_CANDIDATES_HEADER) === 'true') return NativeIndex.derivationCandidates(handles, request);
    return NativeIndex.federatedSearch(handles, request);
  }

  /** A search over the network: the same query on every instance it asks, merged, read as one search. */
  function overNetwork(req: Request, uid: string, body: Record<string, unknown>): Promise<Buffer> {
    const { limit, offset, page, hitsPerPage, facets, showPerformanceDetails, useNetwork: _useNetwork, ...search } = body;
    const items: Item[] = networkTargets(deps).map((target) => ({ position: 0, uid, weight: 1, search, target }));
    const faceted = Array.isArray(facets) && facets.length > 0;
    return federate(req, items, {
      offset,
      limit,
      page,
      hitsPerPage,
      facetsByIndex: faceted ? [[uid, facets]] : null,
      mergeFacets: faceted ? {} : null,
      pinDerivations: true,
      showPerformanceDetails: showPerformanceDetails === true,
      query: typeof search.q === 'string' ? search.q : '',
    });
  }

  /** `federation`: every query is checked, then the engine runs and merges them in one call. */
  async function federated(req: Request, res: Response, queries: unknown[], raw: unknown): Promise<void> {
    const internal = req.get(FEDERATION_RUNS_HEADER) === 'true' || req.get(DERIVATION_CANDIDATES_HEADER) === 'true';
    const federation = parseFederation(raw, internal);
    const facetsByIndex = federation.facetsByIndex ?? null;
    const items: Item[] = [];
    let overNetwork = false;
    for (const [i, rawQuery] of queries.entries()) {
      const { indexUid, weight, remote, search } = splitQuery(rawQuery, i, true, typeof federation.distinct === 'string');
      try {
        const uid = queryIndex(req, indexUid);
        if (remote !== null) {
          items.push({ position: i, uid, weight, search, target: remoteTarget(deps, remote) });
        } else if (usesNetwork(deps, search.useNetwork)) {
          const { useNetwork: _useNetwork, ...rest } = search;
          overNetwork = true;
          for (const target of networkTargets(deps)) items.push({ position: i, uid, weight, search: rest, target });
        } else {
          items.push({ position: i, uid, weight, search, target: { local: true, name: null } });
        }
      } catch (err) {
        if (err instanceof ApiError) throw new ApiError(err.code, `Inside \`.queries[${i}]\`: ${err.message}`);
        throw err;
      }
    }
    const used = new Set(items.map((q) => q.uid));
    for (const uid of Object.keys(facetsByIndex ?? {})) {
      if (used.has(uid)) continue;
      try {
        registry.require(checkIndexUid(uid));
      } catch (err) {
        if (err instanceof ApiError) throw new ApiError(err.code, `Inside \`.federation.facetsByIndex.${uid}\`: ${err.message}\n - Note: index \`${uid}\` is not used in queries`);
        throw err;
      }
    }
    const bytes = await limited(res, () =>
      federate(req, items, {
        offset: federation.offset,
        limit: federation.limit,
        page: federation.page,
        hitsPerPage: federation.hitsPerPage,
        facetsByIndex: facetsByIndex ? Object.entries(facetsByIndex).map(([uid, f]) => [uid, f ?? []]) : null,
        mergeFacets: federation.mergeFacets ?? null,
        distinct: federation.distinct ?? null,
        showPerformanceDetails: federation.showPerformanceDetails ?? false,
        pinDerivations: overNetwork,
      }, federation.quarryPins),
    );
    res.status(200).type('application/json').send(bytes);
  }

  return r;
}
