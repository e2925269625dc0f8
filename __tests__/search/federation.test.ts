/**
 * Federated multi-search on hand-made indexes: each merge rule, duplicates, pagination,
 * facets by index and merged, `distinct`, the errors Meilisearch gives, and keys and tenant
 * tokens applied per query. Expected values were read from Meilisearch 1.50 on the same
 * documents.
 */
import { createHmac } from 'node:crypto';
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
let a: string;
let b: string;

async function index(uid: string, docs: unknown[], settings: unknown): Promise<void> {
  const add = await s.api('POST', `/indexes/${uid}/documents`, { body: docs });
  expect((await s.waitTask(add.body.taskUid)).status).toBe('succeeded');
  const set = await s.api('PATCH', `/indexes/${uid}/settings`, { body: settings });
  expect((await s.waitTask(set.body.taskUid)).status).toBe('succeeded');
}

beforeAll(async () => {
  s = await startTestServer();
  a = uniqueIndex('fed_a');
  b = uniqueIndex('fed_b');
  const settings = { filterableAttributes: ['g', 'n'], sortableAttributes: ['n'] };
  await index(
    a,
    [
      { id: 1, t: 'red apple', n: 5, g: 'x' },
      { id: 2, t: 'green apple pie', n: 3, g: 'y' },
    ],
    settings,
  );
  await index(
    b,
    [
      { id: 1, t: 'apple', n: 4, g: 'x' },
      { id: 3, t: 'red', n: 1, g: 'z' },
    ],
    settings,
  );
});
afterAll(async () => {
  await s.close();
});

const fed = (queries: unknown[], federation: unknown = {}, key?: string) =>
  s.api('POST', '/multi-search', { body: { federation, queries }, key });
const ids = (r: { body: any }) => r.body.hits.map((h: any) => `${h._federation.indexUid === a ? 'a' : 'b'}${h.id}`);

describe('the merge order', () => {
  it('relevance decides first: the exact match of b ranks above the partial matches of a', async () => {
    const r = await fed([
      { indexUid: a, q: 'apple' },
      { indexUid: b, q: 'apple' },
    ]);
    expect(r.status).toBe(200);
    expect(ids(r)).toEqual(['b1', 'a1', 'a2']);
    expect(r.body.hits[0]._federation).toEqual({ indexUid: b, queriesPosition: 1, weightedRankingScore: 1 });
    expect(r.body.hits[1]._federation.weightedRankingScore).toBeCloseTo(0.9242424242424242, 12);
    expect(r.body).toMatchObject({ limit: 20, offset: 0, estimatedTotalHits: 3 });
    expect(Object.keys(r.body)).toEqual([
      'hits',
      'processingTimeMs',
      'limit',
      'offset',
      'estimatedTotalHits',
      'requestUid',
    ]);
  });

  it('a weight below one flips that order, and _rankingScore stays unweighted after _federation', async () => {
    const r = await fed([
      { indexUid: a, q: 'apple', showRankingScore: true },
      { indexUid: b, q: 'apple', federationOptions: { weight: 0.5 } },
    ]);
    expect(ids(r)).toEqual(['a1', 'a2', 'b1']);
    expect(r.body.hits[2]._federation.weightedRankingScore).toBe(0.5);
    expect(Object.keys(r.body.hits[0]).slice(-2)).toEqual(['_federation', '_rankingScore']);
    expect(r.body.hits[0]._rankingScore).toBeCloseTo(0.9242424242424242, 12);
  });

  it('sort values interleave across indexes in their direction', async () => {
    const r = await fed([
      { indexUid: a, q: '', sort: ['n:asc'] },
      { indexUid: b, q: '', sort: ['n:asc'] },
    ]);
    expect(ids(r)).toEqual(['b3', 'a2', 'b1', 'a1']);
  });

  it('a sort run wins over a query that has no more runs (a sorted query against an unsorted one)', async () => {
    const r = await fed([
      { indexUid: a, q: 'apple', sort: ['n:asc'] },
      { indexUid: b, q: 'apple' },
    ]);
    expect(ids(r)).toEqual(['a2', 'a1', 'b1']);
  });

  it('perfect ties go to the lower query position', async () => {
    const r = await fed([
      { indexUid: b, q: '' },
      { indexUid: a, q: '' },
    ]);
    expect(ids(r)).toEqual(['b1', 'b3', 'a1', 'a2']);
    const swapped = await fed([
      { indexUid: a, q: '' },
      { indexUid: b, q: '' },
    ]);
    expect(ids(swapped)).toEqual(['a1', 'a2', 'b1', 'b3']);
  });

  it('a document two queries of one index find comes once, from the first in merge order; across indexes there is no deduplication', async () => {
    const r = await fed([
      { indexUid: a, q: 'apple' },
      { indexUid: a, q: 'red' },
    ]);
    expect(ids(r)).toEqual(['a1', 'a2']);
    expect(r.body.hits[0]._federation.queriesPosition).toBe(1);
    expect(r.body.estimatedTotalHits).toBe(2);
    const both = await fed([
      { indexUid: a, q: 'apple' },
      { indexUid: b, q: 'apple' },
    ]);
    expect(ids(both).filter((x: string) => x.endsWith('1'))).toEqual(['b1', 'a1']);
  });

  it('opposite sort directions at the same step are refused', async () => {
    const r = await fed([
      { indexUid: a, q: '', sort: ['n:asc'] },
      { indexUid: b, q: '', sort: ['n:desc'] },
    ]);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_multi_search_query_ranking_rules');
    expect(r.body.message).toMatch(/^Inside `\.queries\[1\]`: The results of queries #0 and #1 are incompatible/);
  });

  it('useNetwork without the network feature is refused in a query of a plain multi-search too', async () => {
    const r = await s.api('POST', '/multi-search', {
      body: {
        queries: [
          { indexUid: a, q: 'apple' },
          { indexUid: b, q: 'apple', useNetwork: false },
        ],
      },
    });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      code: 'feature_not_enabled',
      message:
        'Inside `.queries[1]`: passing `useNetwork` in a search query requires enabling the `network` experimental feature. See https://github.com/orgs/meilisearch/discussions/805',
    });
  });

  it('useNetwork without the network feature is refused in a federated query, as in any other', async () => {
    const r = await fed([
      { indexUid: a, q: 'apple' },
      { indexUid: b, q: 'apple', useNetwork: false },
    ]);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      code: 'feature_not_enabled',
      message:
        'Inside `.queries[1]`: passing `useNetwork` in a search query requires enabling the `network` experimental feature. See https://github.com/orgs/meilisearch/discussions/805',
    });
  });

  it('a relevancy run against a sort at the same step is refused, as Meilisearch refuses it; runs that line up merge', async () => {
    const refused = async (queries: unknown[], where: string, reason: string) => {
      const r = await fed(queries);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('invalid_multi_search_query_ranking_rules');
      expect(r.body.message).toBe(`${where} are incompatible: \n  - ${reason}`);
    };
    // A keyword query ranks by relevancy first; a placeholder one by its sort alone.
    await refused(
      [
        { indexUid: a, q: 'apple', sort: ['n:asc'] },
        { indexUid: b, sort: ['n:asc'] },
      ],
      'Inside `.queries[1]`: The results of queries #0 and #1',
      'cannot compare a relevancy rule with a sort rule',
    );
    // Queries are compared index by index (by name), each with the one before it.
    await refused(
      [
        { indexUid: a, q: 'apple' },
        { indexUid: b, q: 'apple' },
        { indexUid: a, sort: ['n:asc'] },
      ],
      'Inside `.queries[2]`: The results of queries #0 and #2',
      'cannot compare a relevancy rule with a sort rule',
    );
    for (const queries of [
      [
        { indexUid: a, sort: ['n:asc'] },
        { indexUid: b, q: '' },
      ],
      [
        { indexUid: a, q: 'apple', sort: ['n:asc'] },
        { indexUid: b, q: 'apple' },
      ],
      [
        { indexUid: a, q: 'apple', matchingStrategy: 'all', sort: ['n:asc'] },
        { indexUid: b, q: 'apple', sort: ['n:asc'] },
      ],
    ]) {
      expect((await fed(queries)).status).toBe(200);
    }
  });
});

describe('the window', () => {
  it('offset and limit cut the merged list', async () => {
    const r = await fed(
      [
        { indexUid: a, q: 'apple' },
        { indexUid: a, q: 'red' },
      ],
      { limit: 2, offset: 1 },
    );
    expect(ids(r)).toEqual(['a2']);
    expect(r.body).toMatchObject({ limit: 2, offset: 1 });
  });

  it('page and hitsPerPage give exhaustive totals', async () => {
    const r = await fed(
      [
        { indexUid: a, q: 'apple' },
        { indexUid: b, q: 'red' },
      ],
      { page: 1, hitsPerPage: 2 },
    );
    expect(ids(r)).toEqual(['b3', 'a1']);
    expect(r.body).toMatchObject({ hitsPerPage: 2, page: 1, totalPages: 2, totalHits: 3 });
    expect(r.body.limit).toBeUndefined();
  });

  it('showPerformanceDetails times the steps', async () => {
    const r = await fed(
      [
        { indexUid: a, q: 'apple' },
        { indexUid: a, q: 'red' },
      ],
      { showPerformanceDetails: true },
    );
    expect(Object.keys(r.body.performanceDetails)).toEqual([
      'search > execute local search',
      'search > merge results',
      'search > hydrate documents',
      'search > merge facets',
      'search',
    ]);
    expect(r.body.performanceDetails.search).toMatch(/^[0-9.]+(ns|µs|ms|s)$/);
  });

  it('no queries answer an empty list', async () => {
    const r = await fed([]);
    expect(r.body).toMatchObject({ hits: [], limit: 20, offset: 0, estimatedTotalHits: 0 });
  });
});

describe('facets', () => {
  it('facetsByIndex gives each index its distribution and stats', async () => {
    const r = await fed(
      [
        { indexUid: a, q: 'apple' },
        { indexUid: b, q: '' },
      ],
      { facetsByIndex: { [a]: ['g', 'n'], [b]: ['g'] } },
    );
    expect(r.body.facetsByIndex).toEqual({
      [a]: { distribution: { g: { x: 1, y: 1 }, n: { '3': 1, '5': 1 } }, stats: { n: { min: 3, max: 5 } } },
      [b]: { distribution: { g: { x: 1, z: 1 } }, stats: {} },
    });
  });

  it('facetsByIndex counts every query of an index, a document found twice once, each query after its own distinct', async () => {
    const m = uniqueIndex('fed_m');
    await index(
      m,
      [
        { id: 1, t: 'red apple', g: ['A', 'B'], av: true },
        { id: 2, t: 'red pear', g: ['B'], av: true },
        { id: 3, t: 'green apple', g: ['C'], av: false },
        { id: 4, t: 'blue sky', g: ['A'], av: false },
        { id: 5, t: 'red sky', g: ['D'], av: true },
      ],
      { filterableAttributes: ['g', 'av'] },
    );
    const facets = async (queries: unknown[], federation: Record<string, unknown> = {}) =>
      (await fed(queries, { facetsByIndex: { [m]: ['g'] }, ...federation })).body.facetsByIndex[m].distribution.g;
    // Each expectation is Meilisearch 1.50's answer on these documents.
    expect(
      await facets(
        [
          { indexUid: m, q: 'apple' },
          { indexUid: m, q: 'sky' },
        ],
        { limit: 1 },
      ),
    ).toEqual({ A: 2, B: 1, C: 1, D: 1 });
    expect(
      await facets([
        { indexUid: m, q: 'apple' },
        { indexUid: m, q: 'red', distinct: 'av' },
      ]),
    ).toEqual({ A: 1, B: 1, C: 1 });
    expect(
      await facets([
        { indexUid: m, q: 'apple', filter: 'g = C' },
        { indexUid: m, q: 'sky' },
      ]),
    ).toEqual({ A: 1, C: 1, D: 1 });
  });

  it('facetsByIndex null is refused as Meilisearch refuses it; an index given null has no facets', async () => {
    const r = await fed([{ indexUid: a }], { facetsByIndex: null });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      code: 'invalid_multi_search_facets_by_index',
      message: 'Invalid value type at `.federation.facetsByIndex`: expected an object, but found null',
    });
    expect((await fed([{ indexUid: a }], { facetsByIndex: { [a]: null } })).status).toBe(200);
  });

  it('mergeFacets sums the counts and bounds the stats; maxValuesPerFacet cuts each facet', async () => {
    const r = await fed([{ indexUid: a }, { indexUid: b }], {
      facetsByIndex: { [a]: ['g', 'n'], [b]: ['g', 'n'] },
      mergeFacets: {},
    });
    expect(r.body.facetsByIndex).toBeUndefined();
    expect(r.body.facetDistribution).toEqual({ g: { x: 2, y: 1, z: 1 }, n: { '1': 1, '3': 1, '4': 1, '5': 1 } });
    expect(r.body.facetStats).toEqual({ n: { min: 1, max: 5 } });
    const cut = await fed([{ indexUid: a }, { indexUid: b }], {
      facetsByIndex: { [a]: ['g'], [b]: ['g'] },
      mergeFacets: { maxValuesPerFacet: 1 },
    });
    expect(cut.body.facetDistribution).toEqual({ g: { x: 2 } });
  });

  it('an index of facetsByIndex that no query uses is skipped; one that does not exist is an error', async () => {
    const unused = await fed([{ indexUid: a }], { facetsByIndex: { [b]: ['g'] } });
    expect(unused.status).toBe(200);
    expect(unused.body.facetsByIndex).toBeUndefined();
    const missing = await fed([{ indexUid: a }], { facetsByIndex: { nope_index: ['g'] } });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe(
      'Inside `.federation.facetsByIndex.nope_index`: Index `nope_index` not found.\n - Note: index `nope_index` is not used in queries',
    );
  });
});

describe('federation.distinct', () => {
  it('keeps the first hit of each value across indexes', async () => {
    const r = await fed([{ indexUid: a }, { indexUid: b }], { distinct: 'g' });
    expect(ids(r)).toEqual(['a1', 'a2', 'b3']);
    expect(r.body.estimatedTotalHits).toBe(3);
  });
});

describe('errors', () => {
  it.each([
    [
      { indexUid: 'A', limit: 3 },
      'invalid_multi_search_query_pagination',
      'Inside `.queries[0]`: Using pagination options is not allowed in federated queries.\n - Hint: remove `limit` from the query or remove `federation` from the request\n - Hint: pass `federation.limit` and `federation.offset` for pagination in federated search',
    ],
    [{ indexUid: 'A', page: 1 }, 'invalid_multi_search_query_pagination', null],
    [{ indexUid: 'A', facets: ['g'] }, 'invalid_multi_search_query_facets', null],
    [{ indexUid: 'A', showPerformanceDetails: true }, 'invalid_multi_search_query_show_performance_details', null],
    [
      { indexUid: 'A', federationOptions: { weight: -1 } },
      'invalid_multi_search_weight',
      'Invalid value at `.queries[0].federationOptions.weight`: the value of `weight` is invalid, expected a positive float (>= 0.0).',
    ],
    [
      { indexUid: 'A', federationOptions: { bogus: 1 } },
      'bad_request',
      'Unknown field `bogus` inside `.queries[0].federationOptions`: expected one of `weight`, `remote`, `queryPosition`',
    ],
    [{ indexUid: 'A', federationOptions: { remote: 'x' } }, 'feature_not_enabled', null],
    [{ indexUid: 'missing_index_x' }, 'index_not_found', 'Inside `.queries[0]`: Index `missing_index_x` not found.'],
  ])('query %j answers %s', async (query, code, message) => {
    const q = { ...(query as Record<string, unknown>) };
    if (q.indexUid === 'A') q.indexUid = a;
    const r = await fed([q]);
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.body.code).toBe(code);
    if (message) expect(r.body.message).toBe(message);
  });

  it('a weight of zero is allowed', async () => {
    const r = await fed([{ indexUid: a, federationOptions: { weight: 0 } }]);
    expect(r.status).toBe(200);
    expect(r.body.hits.map((h: any) => h._federation.weightedRankingScore)).toEqual([0, 0]);
  });

  it('federationOptions without federation is refused', async () => {
    const r = await s.api('POST', '/multi-search', {
      body: { queries: [{ indexUid: a, federationOptions: { weight: 2 } }] },
    });
    expect(r.body.code).toBe('invalid_multi_search_federation_options');
    expect(r.body.message).toBe(
      'Inside `.queries[0]`: Using `federationOptions` is not allowed in a non-federated search.\n - Hint: remove `federationOptions` from the query or add `federation` to the request.',
    );
  });

  it('an unknown field of federation is a bad_request naming the accepted ones', async () => {
    const r = await fed([{ indexUid: a }], { bogus: 1 });
    expect(r.body.code).toBe('bad_request');
    expect(r.body.message).toBe(
      'Unknown field `bogus` inside `.federation`: expected one of `limit`, `offset`, `page`, `hitsPerPage`, `facetsByIndex`, `mergeFacets`, `distinct`, `showPerformanceDetails`, `personalize`',
    );
  });
});

describe('keys and tenant tokens apply per query', () => {
  it('a key restricted to one index cannot federate another', async () => {
    const k = await s.api('POST', '/keys', { body: { actions: ['search'], indexes: [a], expiresAt: null } });
    expect(k.status).toBe(201);
    expect((await fed([{ indexUid: a }], {}, k.body.key)).status).toBe(200);
    const r = await fed([{ indexUid: a }, { indexUid: b }], {}, k.body.key);
    expect(r.status).toBe(403);
  });

  it("a tenant token's filter restricts its index inside the federation", async () => {
    const k = await s.api('POST', '/keys', { body: { actions: ['search'], indexes: ['*'], expiresAt: null } });
    const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const head = enc({ alg: 'HS256', typ: 'JWT' });
    const body = enc({ apiKeyUid: k.body.uid, searchRules: { [a]: { filter: 'g = y' }, [b]: {} } });
    const token = `${head}.${body}.${createHmac('sha256', k.body.key).update(`${head}.${body}`).digest('base64url')}`;
    const r = await fed([{ indexUid: a }, { indexUid: b }], {}, token);
    expect(r.status).toBe(200);
    expect(ids(r)).toEqual(['a2', 'b1', 'b3']);
  });
});
