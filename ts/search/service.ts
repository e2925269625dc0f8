/**
 * Searches as the routes and the embedded library run them: validate, scope by the caller's
 * key or tenant token, one engine call within the search limiter, and the engine's JSON bytes
 * as they are. Nothing here knows HTTP: the caller is an `AuthContext`, and the two headers
 * instances send each other during a search over the network arrive as `Internal` flags.
 */
import type { AuthContext } from '../auth/guard';
import { mergeFilters } from '../auth/tenant-token';
import type { Deps } from '../deps';
import { ApiError, insideQuery } from '../errors/api-error';
import { found } from '../errors/from-zod';
import { NativeIndex, type SearchQuery } from '../native';
import { checkSearchFilter, foreignConditions } from '../native/documents';
import { facetSearchOverNetwork } from '../network/facets';
import { checkSearchFeatures, networkTargets, remoteTarget, type Target, usesNetwork } from '../network/search';
import { checkIndexUid } from '../schemas/indexes';
import { parseFederation, splitQuery } from '../schemas/federation';
import { MAX_MULTI_SEARCH_QUERIES } from '../schemas/limits';
import { parseSimilar, similarEngineQuery } from '../schemas/similar';
import {
  engineQuery,
  type FacetSearchBody,
  facetEngineQuery,
  parseFacetSearch,
  parseQueries,
  parseSearch,
  type Personalize,
  type SearchBody,
} from '../schemas/search';
import { DEFAULT_PERSONALIZATION_URL } from '../config';
import { LARGE_PAGE } from './limiter';
import { type ForeignKey, foreignKeysOf, hydrate, keysByPosition, resolveForeign, sameKeys } from './foreign';
import { DEFAULT_BUDGET_MS, Reranker } from './personalize';
import { FEDERATED_TAIL, queryMetadata, type QueryMetadata, SEARCH_TAIL, uuidV7, withMetadata } from './metadata';

/** What another instance asks of this one during a search over the network. */
export interface Internal {
  /** Answer the federation's runs, not the merged page (`FEDERATION_RUNS_HEADER`). */
  runs: boolean;
  /** Answer what the query's words derive from (`DERIVATION_CANDIDATES_HEADER`). */
  derivations: boolean;
}

const NOT_INTERNAL: Internal = { runs: false, derivations: false };

const filterTerm = (t: unknown) => typeof t === 'string' || (Array.isArray(t) && t.every((x) => typeof x === 'string'));

/**
 * The filter a search on `uid` must run: the query's own `filter`, ANDed with the rule filter
 * of the caller's tenant token for that index (if any). Every search goes through here.
 */
export function scopedFilter(auth: AuthContext, uid: string, filter: unknown): unknown {
  const rule = auth.searchFilter(uid);
  if (rule === null || rule === undefined) return filter ?? null;
  if (!(typeof rule === 'string' || (Array.isArray(rule) && rule.every(filterTerm)))) {
    throw new ApiError(
      'invalid_search_filter',
      `The tenant token's search rule filter for \`${uid}\` is not a valid filter: expected a string or an array of strings and arrays of strings.`,
    );
  }
  return mergeFilters(filter, rule);
}

/** One query of a federation, where it runs. */
interface Item {
  position: number;
  uid: string;
  weight: number;
  search: Record<string, unknown>;
  /** `search` as checked (once, where the request is read). */
  parsed: SearchBody;
  target: Target;
}

/** What a search over the network leaves to the merge: its page, facets and details. */
const MERGED = ['limit', 'offset', 'page', 'hitsPerPage', 'facets', 'showPerformanceDetails', 'useNetwork'] as const;

/** `o` without the keys of `MERGED`, as each instance of the network is asked. */
function withoutMerged<T extends object>(o: T): Omit<T, (typeof MERGED)[number]> {
  const rest = { ...o } as Record<string, unknown>;
  for (const k of MERGED) delete rest[k];
  return rest as Omit<T, (typeof MERGED)[number]>;
}

export class SearchService {
  /** Reranks the hits of a search that asks for `personalize`. */
  private readonly reranker: Reranker;

  constructor(private readonly deps: Deps) {
    this.reranker = new Reranker(
      deps.config.personalizationApiKey ?? null,
      deps.config.personalizationUrl ?? DEFAULT_PERSONALIZATION_URL,
      deps.logger.child({ target: 'quarry::personalization' }),
    );
  }

  /**
   * `answer` reranked for the query's `personalize` (unchanged without it); the time budget is
   * the index's `searchCutoffMs` (else 1.5 s) from the request's arrival.
   */
  private async personalized(
    answer: Buffer,
    query: SearchBody,
    uid: string | null,
    receivedAt: bigint | undefined,
  ): Promise<Buffer> {
    const personalize = query.personalize as Personalize | null | undefined;
    if (personalize === undefined || personalize === null) return answer;
    this.reranker.requireEnabled();
    const cutoff =
      uid === null ? null : (this.deps.registry.handle(uid).settings().searchCutoffMs as number | null | undefined);
    const arrived =
      receivedAt === undefined ? Date.now() : Date.now() - Number(process.hrtime.bigint() - receivedAt) / 1e6;
    return this.reranker.rerank(
      answer,
      personalize,
      typeof query.q === 'string' ? query.q : null,
      arrived + (cutoff ?? DEFAULT_BUDGET_MS),
    );
  }

  /**
   * The engine query for `query` on `uid`, its filter scoped by `scopedFilter`. Fails closed: a
   * rule filter that the engine query would not carry refuses the search rather than answering
   * hits the token may not see.
   */
  private scopedQuery(auth: AuthContext, uid: string, query: SearchBody, plainErrors = false): SearchQuery {
    const filter = scopedFilter(auth, uid, query.filter);
    const out: SearchQuery = engineQuery({ ...query, filter: filter as SearchBody['filter'] });
    // Errors about the index's settings name it, and quote the filter as written out, as
    // Meilisearch's search routes answer (not what its chat tool gives the model).
    if (!plainErrors) out.indexUid = uid;
    if (filter !== null && auth.tenantToken && (out.filter === undefined || out.filter === null)) {
      throw new ApiError(
        'invalid_search_filter',
        `This tenant token restricts \`${uid}\` with a filter, and the search could not carry it.`,
      );
    }
    const features = this.deps.features;
    out.containsFilter = features.enabled('containsFilter');
    out.multimodal = features.enabled('multimodal');
    // Documents the dynamic search rules pin for this query.
    if (features.enabled('dynamicSearchRules')) {
      const pins = this.deps.searchRules.pinsFor(uid, typeof query.q === 'string' ? query.q : '', filter);
      if (pins.length) out.pinnedDocuments = pins;
    }
    return out;
  }

  /**
   * Runs one engine call within the limiter (503 `too_many_search_requests` when saturated, or
   * when the answers being sent already hold the response budget, checked again after the wait).
   */
  private limited(fn: () => Promise<Buffer>, hits = 0): Promise<Buffer> {
    const budget = this.deps.responseBudget;
    budget.refuseWhenFull();
    return this.deps.searchLimiter.run(() => {
      budget.refuseWhenFull();
      return fn();
    }, hits > LARGE_PAGE);
  }

  /**
   * A single-index search (`POST /indexes/{uid}/search`'s body); `receivedAt`: when its request
   * arrived (`http/observe.ts` `arrivalOf`), which `processingTimeMs` counts from; `metadata`:
   * whether the answer carries the query's metadata (`search/metadata.ts`); `plainErrors`:
   * errors about the index's settings as the engine words them, without the index's name and
   * with the filter as sent (what the chat tool gives the model).
   */
  async search(
    auth: AuthContext,
    indexUid: unknown,
    body: unknown,
    receivedAt?: bigint,
    metadata = false,
    plainErrors = false,
  ): Promise<Buffer> {
    const requestUid = uuidV7();
    const query = parseSearch(body);
    const uid = checkIndexUid(indexUid);
    searchFeatures(this.deps, query);
    const network = usesNetwork(this.deps, query.useNetwork);
    const meta = metadata ? this.metadataOf(query.q, uid, network ? this.deps.network.get().self : null) : undefined;
    if (network) {
      // The other instances answer the plain search; this one reranks the merged hits.
      const { personalize: _personalize, ...forwarded } = (body ?? {}) as Record<string, unknown>;
      const answer = await this.limited(
        () => this.overNetwork(auth, uid, forwarded, query, receivedAt),
        hitsAsked(query),
      );
      return withMetadata(
        await this.personalized(answer, query, uid, receivedAt),
        { requestUid, metadata: meta },
        SEARCH_TAIL,
      );
    }
    const index = this.searchedIndex(uid, query.filter);
    const engineQ = this.scopedQuery(auth, uid, query, plainErrors);
    engineQ.foreignIds = await resolveForeign(this.deps, uid, engineQ.filter, false);
    const answer = await this.hydrated(
      index,
      await this.limited(() => index.search(engineQ, receivedAt), hitsAsked(query)),
    );
    return withMetadata(
      await this.personalized(answer, query, uid, receivedAt),
      { requestUid, metadata: meta },
      SEARCH_TAIL,
    );
  }

  /**
   * A single-index search on the calling thread, for the embedded library's `searchSync`: the
   * same checks and engine call as `search`, without the limiter (the caller's thread is the
   * only one waiting). A search that would wait on something else (another instance, an
   * embedder for the query, the reranker) is refused: it belongs to `search`.
   */
  searchSync(auth: AuthContext, indexUid: unknown, body: unknown): Buffer {
    const requestUid = uuidV7();
    const query = parseSearch(body);
    const uid = checkIndexUid(indexUid);
    searchFeatures(this.deps, query);
    const waits = waitsOn(this.deps, query);
    if (waits) throw new Error(`searchSync cannot run a search that waits on ${waits}; use search()`);
    const engineQ = this.scopedQuery(auth, uid, query);
    const index = this.searchedIndex(uid, query.filter);
    if (foreignKeysOf(this.deps, index).length)
      throw new Error('searchSync cannot run a search that waits on the indexes of its foreign keys; use search()');
    return withMetadata(index.searchSync(engineQ), { requestUid, metadata: undefined }, SEARCH_TAIL);
  }

  /**
   * The metadata of a query `q` on `uid`; `remote`: the instance it is labelled with. A query
   * that names its instance (`named`) is asked of it as of a remote, even of this one, and
   * Meilisearch then gives no primary key.
   */
  private metadataOf(q: unknown, uid: string, remote: string | null = null, named = false): QueryMetadata {
    return queryMetadata(q, uid, named ? null : this.deps.registry.get(uid)?.primaryKey, remote);
  }

  /**
   * Facet search: the values of one facet among the documents `q` and `filter` match. Its
   * `processingTimeMs` counts from the engine, as Meilisearch's does from its handler: the
   * official client's snapshots pin 0 for a small index, which the HTTP path alone can exceed.
   */
  async facetSearch(auth: AuthContext, indexUid: unknown, raw: unknown): Promise<Buffer> {
    const body = parseFacetSearch(raw);
    const uid = checkIndexUid(indexUid);
    checkSearchFeatures(this.deps, body);
    const index = this.deps.registry.handle(uid);
    const filter = scopedFilter(auth, uid, body.filter);
    const query = facetEngineQuery(
      { ...body, filter: filter as FacetSearchBody['filter'] },
      this.deps.features.enabled('containsFilter'),
    );
    query.foreignIds = await resolveForeign(this.deps, uid, query.filter, false);
    const useNetwork = (raw as Record<string, unknown> | undefined)?.useNetwork;
    if (!usesNetwork(this.deps, useNetwork)) return this.limited(() => index.facetSearch(query));
    // The caller's tenant-token rule travels with the request.
    const remoteBody = { ...(raw as Record<string, unknown>), filter };
    return facetSearchOverNetwork(this.deps, uid, remoteBody, () => this.limited(() => index.facetSearch(query)));
  }

  /** Similar documents: the nearest neighbours of one document's embedding; `receivedAt` as for `search`. */
  async similar(auth: AuthContext, indexUid: unknown, body: unknown, receivedAt?: bigint): Promise<Buffer> {
    const query = parseSimilar(body);
    const uid = checkIndexUid(indexUid);
    const index = this.deps.registry.handle(uid);
    const engineQ = similarEngineQuery(
      query,
      scopedFilter(auth, uid, query.filter),
      this.deps.features.enabled('containsFilter'),
    );
    engineQ.foreignIds = await resolveForeign(this.deps, uid, engineQ.filter, false);
    return this.limited(() => index.similar(engineQ, receivedAt));
  }

  /**
   * Multi-search. Without `federation`, every query runs as a single-index search and its
   * response gets `indexUid` first; the first failing query fails the request, its message
   * prefixed with its position. With `federation`, one merged answer. `receivedAt`: when the
   * request arrived; each `processingTimeMs` counts from it (so a query's figure includes the
   * queries answered before it). `metadata` as for `search`; the request uid is the same in
   * every result.
   */
  async multiSearch(
    auth: AuthContext,
    raw: unknown,
    internal: Internal = NOT_INTERNAL,
    receivedAt?: bigint,
    metadata = false,
  ): Promise<Buffer> {
    const requestUid = uuidV7();
    const body = raw as { queries?: unknown; federation?: unknown } | null;
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      throw new ApiError('bad_request', 'Invalid value type: expected an object');
    }
    for (const k of Object.keys(body)) {
      if (k !== 'queries' && k !== 'federation') {
        throw new ApiError('bad_request', `Unknown field \`${k}\`: expected one of \`queries\`, \`federation\``);
      }
    }
    if (body.queries === undefined) throw new ApiError('bad_request', 'Missing field `queries`');
    if (!Array.isArray(body.queries))
      throw new ApiError(
        'bad_request',
        `Invalid value type at \`.queries\`: expected an array, but found ${found(body.queries)}`,
      );
    if (body.queries.length > MAX_MULTI_SEARCH_QUERIES) {
      throw new ApiError(
        'bad_request',
        `Invalid value at \`.queries\`: at most ${MAX_MULTI_SEARCH_QUERIES} queries are accepted in one request`,
      );
    }
    if (body.federation !== undefined && body.federation !== null) {
      const [answer, metas] = await this.federated(auth, body.queries, body.federation, internal, receivedAt, metadata);
      // What another instance asks of this one is not a search answer.
      return internal.runs || internal.derivations
        ? answer
        : withMetadata(answer, { requestUid, metadata: metas }, FEDERATED_TAIL);
    }
    const parsedQueries = parseQueries(body.queries);
    const parts: Buffer[] = [];
    for (const [i, rawQuery] of body.queries.entries()) {
      const parsed = parsedQueries[i];
      const { indexUid, search } = splitQuery(rawQuery, i, false);
      try {
        if (!internal.runs && !internal.derivations) searchFeatures(this.deps, parsed);
        const uid = this.queryIndex(auth, indexUid, parsed.filter);
        const network = usesNetwork(this.deps, parsed.useNetwork);
        const meta = metadata
          ? this.metadataOf(parsed.q, uid, network ? this.deps.network.get().self : null)
          : undefined;
        let bytes: Buffer;
        if (network) {
          const { personalize: _personalize, ...forwarded } = search;
          bytes = await this.limited(
            () => this.overNetwork(auth, uid, forwarded, parsed, receivedAt),
            hitsAsked(parsed),
          );
        } else {
          const engineQ = this.scopedQuery(auth, uid, parsed);
          engineQ.foreignIds = await resolveForeign(this.deps, uid, engineQ.filter, false);
          const handle = this.deps.registry.handle(uid);
          bytes = await this.hydrated(
            handle,
            await this.limited(() => handle.search(engineQ, receivedAt), hitsAsked(parsed)),
          );
        }
        bytes = await this.personalized(bytes, parsed, uid, receivedAt);
        bytes = withMetadata(bytes, { requestUid, metadata: meta }, SEARCH_TAIL);
        parts.push(Buffer.from(`{"indexUid":${JSON.stringify(uid)},`), bytes.subarray(1));
      } catch (err) {
        if (err instanceof ApiError) throw insideQuery(err, i);
        throw err;
      }
      if (i < body.queries.length - 1) parts.push(Buffer.from(','));
    }
    return Buffer.concat([Buffer.from('{"results":['), ...parts, Buffer.from(']}')]);
  }

  /**
   * A single-index answer of `index` with its foreign keys hydrated (`search/foreign.ts`); as it
   * is when the feature is off or the index has none. Every foreign index must exist.
   */
  private async hydrated(index: NativeIndex, answer: Buffer): Promise<Buffer> {
    const keys = foreignKeysOf(this.deps, index);
    return keys.length ? hydrate(this.deps, answer, sameKeys(keys), keys) : answer;
  }

  /** A federated answer with the foreign keys of its local queries' hits hydrated. */
  private async federatedHydrated(items: Item[], answer: Buffer): Promise<Buffer> {
    if (!this.deps.features.enabled('foreignKeys')) return answer;
    const byPosition = new Map<number, ForeignKey[]>();
    for (const item of items) {
      if (!item.target.local) continue;
      const keys = foreignKeysOf(this.deps, this.deps.registry.handle(item.uid));
      if (keys.length) byPosition.set(item.position, keys);
    }
    return byPosition.size ? hydrate(this.deps, answer, keysByPosition(byPosition)) : answer;
  }

  /** The index a multi-search query names, checked against the key (or token). */
  private queryIndex(auth: AuthContext, indexUid: unknown, filter: unknown): string {
    if (typeof indexUid !== 'string') throw new ApiError('missing_index_uid', 'Missing field `indexUid`');
    const uid = checkIndexUid(indexUid);
    auth.assertIndex(uid);
    if (!auth.can('search', uid)) throw new ApiError('invalid_api_key', 'The provided API key is invalid.');
    this.filterBeforeIndex(uid, filter);
    return uid;
  }

  /** The index a search reads, its filter's syntax checked first when there is none (see below). */
  private searchedIndex(uid: string, filter: unknown): NativeIndex {
    this.filterBeforeIndex(uid, filter);
    return this.deps.registry.handle(uid);
  }

  /**
   * Meilisearch parses a search's filter before it looks the index up, so a filter that does
   * not parse is answered before an index that does not exist. The engine parses it with the
   * index; only when there is no index is it parsed here, on that error's path.
   */
  private filterBeforeIndex(uid: string, filter: unknown): void {
    if (filter === undefined || filter === null || this.deps.registry.has(uid)) return;
    checkSearchFilter(filter, this.deps.features.enabled('containsFilter'));
  }

  /**
   * Runs `items` as one federated search in the engine: local ones on their indexes, the
   * others asked of their instances while the local ones run.
   */
  private async federate(
    auth: AuthContext,
    items: Item[],
    federation: Record<string, unknown>,
    internal: Internal,
    receivedAt: bigint | undefined,
    pins?: unknown[],
  ): Promise<Buffer> {
    const handles: NativeIndex[] = [];
    const queries: Array<Record<string, unknown>> = [];
    const remotes = new Map<
      string,
      { name: string; url: string; apiKey: string | null; queries: Array<Record<string, unknown>> }
    >();
    for (const item of items) {
      try {
        const { parsed } = item;
        if (item.target.local) {
          const query = this.scopedQuery(auth, item.uid, parsed);
          query.foreignIds = await resolveForeign(this.deps, item.uid, query.filter, false);
          handles.push(this.deps.registry.handle(item.uid));
          if (pins?.[item.position] !== undefined) query.pins = pins[item.position];
          queries.push({
            indexUid: item.uid,
            weight: item.weight,
            position: item.position,
            remote: item.target.name,
            query,
          });
          continue;
        }
        const { name, remote } = item.target;
        // The caller's tenant-token rule travels with the query.
        const filter = scopedFilter(auth, item.uid, parsed.filter);
        const body = { ...item.search };
        if (filter !== null) body.filter = filter;
        else delete body.filter;
        const entry = remotes.get(name) ?? { name, url: remote.url, apiKey: remote.searchApiKey, queries: [] };
        entry.queries.push({ position: item.position, indexUid: item.uid, weight: item.weight, body });
        remotes.set(name, entry);
      } catch (err) {
        if (err instanceof ApiError && !err.message.startsWith('Inside')) throw insideQuery(err, item.position);
        throw err;
      }
    }
    const request = {
      queries,
      remotes: [...remotes.values()],
      federation: { ...federation, showRuns: internal.runs, remoteTimeoutMs: this.deps.config.remoteTimeoutMs },
    };
    // Another instance running a search over the network asks what the words derive from.
    if (internal.derivations) return NativeIndex.derivationCandidates(handles, request);
    return NativeIndex.federatedSearch(handles, request, receivedAt);
  }

  /**
   * A search over the network: the same query on every instance it asks, merged, read as one
   * search. `body` as sent, `query` as checked; the page, facets and details go to the merge.
   */
  private overNetwork(
    auth: AuthContext,
    uid: string,
    body: Record<string, unknown>,
    query: SearchBody,
    receivedAt?: bigint,
  ): Promise<Buffer> {
    const { limit, offset, page, hitsPerPage, facets, showPerformanceDetails } = body;
    const search = withoutMerged(body);
    const parsed = withoutMerged(query);
    const items: Item[] = networkTargets(this.deps).map((target) => ({
      position: 0,
      uid,
      weight: 1,
      search,
      parsed,
      target,
    }));
    const faceted = Array.isArray(facets) && facets.length > 0;
    return this.federate(
      auth,
      items,
      {
        offset,
        limit,
        page,
        hitsPerPage,
        facetsByIndex: faceted ? [[uid, facets]] : null,
        mergeFacets: faceted ? {} : null,
        pinDerivations: true,
        showPerformanceDetails: showPerformanceDetails === true,
        query: typeof search.q === 'string' ? search.q : '',
      },
      NOT_INTERNAL,
      receivedAt,
    );
  }

  /**
   * `federation`: every query is checked, then the engine runs and merges them in one call.
   * Also the queries' metadata, in query order, when `metadata` asks for it.
   */
  private async federated(
    auth: AuthContext,
    queries: unknown[],
    raw: unknown,
    internal: Internal,
    receivedAt: bigint | undefined,
    metadata: boolean,
  ): Promise<[Buffer, QueryMetadata[] | undefined]> {
    const federation = parseFederation(raw, internal.runs || internal.derivations);
    const facetsByIndex = federation.facetsByIndex ?? null;
    const items: Item[] = [];
    const metas: QueryMetadata[] = [];
    let overNetwork = false;
    let remoteNamed = false;
    const parsedQueries = parseQueries(queries);
    for (const [i, rawQuery] of queries.entries()) {
      const parsed = parsedQueries[i];
      let split: ReturnType<typeof splitQuery>;
      try {
        split = splitQuery(rawQuery, i, true, typeof federation.distinct === 'string');
      } catch (err) {
        // Parameters a federated query may not carry are refused after its filter is read.
        if (err instanceof ApiError && FEDERATED_REFUSALS.has(err.code)) {
          try {
            filterFirst(this.deps, parsed.filter);
          } catch (filterErr) {
            if (filterErr instanceof ApiError) throw insideQuery(filterErr, i);
            throw filterErr;
          }
        }
        throw err;
      }
      const { indexUid, weight, remote, search } = split;
      try {
        // What another instance forwards (`useNetwork: false` to stay there) is not refused.
        if (!internal.runs && !internal.derivations) searchFeatures(this.deps, parsed);
        const uid = this.queryIndex(auth, indexUid, parsed.filter);
        if (remote !== null) {
          items.push({ position: i, uid, weight, search, parsed, target: remoteTarget(this.deps, remote) });
          remoteNamed = true;
        } else if (usesNetwork(this.deps, search.useNetwork)) {
          const { useNetwork: _useNetwork, ...rest } = search;
          overNetwork = true;
          for (const target of networkTargets(this.deps))
            items.push({ position: i, uid, weight, search: rest, parsed, target });
        } else {
          items.push({ position: i, uid, weight, search, parsed, target: { local: true, name: null } });
        }
        if (metadata) metas.push(this.metadataOf(parsed.q, uid, remote, remote !== null));
      } catch (err) {
        if (err instanceof ApiError) throw insideQuery(err, i);
        throw err;
      }
    }
    const used = new Set(items.map((q) => q.uid));
    for (const uid of Object.keys(facetsByIndex ?? {})) {
      if (used.has(uid)) continue;
      try {
        this.deps.registry.require(checkIndexUid(uid));
      } catch (err) {
        if (err instanceof ApiError)
          throw new ApiError(
            err.code,
            `Inside \`.federation.facetsByIndex.${uid}\`: ${err.message}\n - Note: index \`${uid}\` is not used in queries`,
          );
        throw err;
      }
    }
    // A federation that asks other instances labels the queries it runs here with this one.
    const self = this.deps.network.get().self;
    if ((overNetwork || remoteNamed) && self !== null) for (const m of metas) m.remote ??= self;
    const answer = await this.limited(
      () =>
        this.federate(
          auth,
          items,
          {
            offset: federation.offset,
            limit: federation.limit,
            page: federation.page,
            hitsPerPage: federation.hitsPerPage,
            facetsByIndex: facetsByIndex ? Object.entries(facetsByIndex).map(([uid, f]) => [uid, f ?? []]) : null,
            mergeFacets: federation.mergeFacets ?? null,
            distinct: federation.distinct ?? null,
            showPerformanceDetails: federation.showPerformanceDetails ?? false,
            pinDerivations: overNetwork,
          },
          internal,
          receivedAt,
          federation.quarryPins,
        ),
      hitsAsked(federation),
    );
    // The merged hits of local queries show the documents their foreign keys name.
    const hydrated = internal.runs || internal.derivations ? answer : await this.federatedHydrated(items, answer);
    // `federation.personalize` reranks the merged page (no query line: the queries are several).
    const personalized = federation.personalize
      ? await this.personalized(hydrated, { personalize: federation.personalize } as SearchBody, null, receivedAt)
      : hydrated;
    return [personalized, metadata ? metas : undefined];
  }
}

/** The refusals of parameters a federated query may not carry (its filter is read before them). */
const FEDERATED_REFUSALS = new Set([
  'invalid_multi_search_query_show_performance_details',
  'invalid_multi_search_query_pagination',
  'invalid_multi_search_query_facets',
]);

/**
 * Meilisearch reads a search's filter (its syntax, and `CONTAINS` or `_foreign` without their
 * features) before it refuses `useNetwork` without the network or a parameter a federated
 * query may not carry. Only on those paths is the filter read here, ahead of the engine.
 */
function filterFirst(deps: Deps, filter: unknown): void {
  if (filter === undefined || filter === null) return;
  const foreign = foreignConditions(filter, false, deps.features.enabled('foreignKeys'));
  if (foreign.length === 0) checkSearchFilter(filter, deps.features.enabled('containsFilter'));
}

/** `checkSearchFeatures`, the filter read first when it is about to refuse the query. */
function searchFeatures(deps: Deps, query: { useNetwork?: unknown; filter?: unknown }): void {
  if (query.useNetwork != null && !deps.features.enabled('network')) filterFirst(deps, query.filter);
  checkSearchFeatures(deps, query);
}

/** What a search would wait on outside the engine (another instance, an embedder, the reranker), if anything. */
function waitsOn(deps: Deps, query: SearchBody): string | null {
  if (usesNetwork(deps, query.useNetwork)) return 'other instances (`useNetwork`)';
  if (query.personalize !== undefined && query.personalize !== null) return 'the reranker (`personalize`)';
  if (query.media !== undefined && query.media !== null) return 'an embedder (`media`)';
  if (query.hybrid !== undefined && query.hybrid !== null && query.vector == null)
    return 'an embedder (`hybrid` without `vector`)';
  return null;
}

/** How many hits a search asks for: its page's end (offset + limit, or page × hitsPerPage). */
function hitsAsked(q: {
  offset?: number | null;
  limit?: number | null;
  page?: number | null;
  hitsPerPage?: number | null;
}): number {
  if (typeof q.page === 'number' || typeof q.hitsPerPage === 'number') return (q.page ?? 1) * (q.hitsPerPage ?? 20);
  return (q.offset ?? 0) + (q.limit ?? 20);
}
