/**
 * r68: every search answer carries a `requestUid`, and with the `Meili-Include-Metadata`
 * header a `metadata` object per query (an array in a federated answer), with the names, the
 * places and the field order Meilisearch 1.50 gives them. The expected key orders are what the
 * reference answered to the same requests.
 */
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
const movies = uniqueIndex('meta_movies');
const books = uniqueIndex('meta_books');
const bare = uniqueIndex('meta_bare');

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const META = { 'Meili-Include-Metadata': 'true' };

const search = (body: unknown, headers: Record<string, string> = META, uid = movies) =>
  s.api('POST', `/indexes/${uid}/search`, { body, headers });
const multi = (body: unknown, headers: Record<string, string> = META) =>
  s.api('POST', '/multi-search', { body, headers });

beforeAll(async () => {
  s = await startTestServer();
  const settings = await s.api('PATCH', `/indexes/${movies}/settings`, {
    body: { filterableAttributes: ['t'], embedders: { e: { source: 'userProvided', dimensions: 2 } } },
  });
  await s.waitTask(settings.body.taskUid);
  const docs = [
    { id: 1, t: 'a', _vectors: { e: [1, 0] } },
    { id: 2, t: 'b', _vectors: { e: [0, 1] } },
  ];
  await s.waitTask((await s.api('POST', `/indexes/${movies}/documents`, { body: docs })).body.taskUid);
  await s.waitTask(
    (await s.api('POST', `/indexes/${books}/documents?primaryKey=isbn`, { body: [{ isbn: 'x1', t: 'a' }] })).body
      .taskUid,
  );
  await s.waitTask((await s.api('POST', '/indexes', { body: { uid: bare } })).body.taskUid);
});
afterAll(() => s.close());

describe('POST /indexes/{uid}/search', () => {
  it('when the header is absent, then the answer ends with a requestUid and has no metadata', async () => {
    for (const r of [await search({ q: 'a' }, {}), await s.api('GET', `/indexes/${movies}/search?q=a`)]) {
      expect(r.status).toBe(200);
      expect(Object.keys(r.body)).toEqual([
        'hits',
        'query',
        'processingTimeMs',
        'limit',
        'offset',
        'estimatedTotalHits',
        'requestUid',
      ]);
      expect(r.body.requestUid).toMatch(UUID_V7);
    }
    const [a, b] = [await search({}, {}), await search({}, {})];
    expect(a.body.requestUid).not.toBe(b.body.requestUid);
  });

  it('when the header asks for metadata, then one object follows the requestUid, fields in order', async () => {
    for (const r of [
      await search({ q: 'a' }),
      await s.api('GET', `/indexes/${movies}/search?q=a`, { headers: META }),
    ]) {
      expect(Object.keys(r.body)).toEqual([
        'hits',
        'query',
        'processingTimeMs',
        'limit',
        'offset',
        'estimatedTotalHits',
        'requestUid',
        'metadata',
      ]);
      expect(Object.keys(r.body.metadata)).toEqual(['query', 'queryUid', 'indexUid', 'primaryKey']);
      expect(r.body.metadata).toEqual({
        query: 'a',
        queryUid: expect.stringMatching(UUID_V7),
        indexUid: movies,
        primaryKey: 'id',
      });
      expect(r.body.metadata.queryUid).not.toBe(r.body.requestUid);
    }
  });

  it.each([
    ['TRUE', true],
    ['1', true],
    [' true ', true],
    ['false', false],
    ['yes', false],
    ['0', false],
  ])('when the header is "%s", then metadata is %s', async (value, expected) => {
    const r = await search({ q: 'a' }, { 'Meili-Include-Metadata': value });
    expect('metadata' in r.body).toBe(expected);
    expect(r.body.requestUid).toMatch(UUID_V7);
  });

  it('when q is not a string or the index has no primary key, then those fields are left out', async () => {
    expect((await search({ q: null })).body.metadata).toEqual({
      queryUid: expect.any(String),
      indexUid: movies,
      primaryKey: 'id',
    });
    expect((await search({})).body.metadata).toEqual({
      queryUid: expect.any(String),
      indexUid: movies,
      primaryKey: 'id',
    });
    expect((await search({ q: '' })).body.metadata).toEqual({
      query: '',
      queryUid: expect.any(String),
      indexUid: movies,
      primaryKey: 'id',
    });
    expect((await search({ q: 'x' }, META, bare)).body.metadata).toEqual({
      query: 'x',
      queryUid: expect.any(String),
      indexUid: bare,
    });
  });

  it('when facets, performance details and semantic hits are asked, then both fields sit after the facets and before the rest', async () => {
    const r = await search({
      q: 'a',
      facets: ['t'],
      showPerformanceDetails: true,
      vector: [1, 0],
      hybrid: { embedder: 'e', semanticRatio: 0.5 },
    });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual([
      'hits',
      'query',
      'processingTimeMs',
      'limit',
      'offset',
      'estimatedTotalHits',
      'facetDistribution',
      'facetStats',
      'requestUid',
      'metadata',
      'performanceDetails',
      'semanticHitCount',
    ]);
  });

  it('when it is a facet search or a similar-documents search, then neither field is there', async () => {
    const facets = await s.api('POST', `/indexes/${movies}/facet-search`, { body: { facetName: 't' }, headers: META });
    expect(Object.keys(facets.body)).toEqual(['facetHits', 'facetQuery', 'processingTimeMs']);
    const similar = await s.api('POST', `/indexes/${movies}/similar`, {
      body: { id: 1, embedder: 'e' },
      headers: META,
    });
    expect(Object.keys(similar.body)).toEqual([
      'hits',
      'id',
      'processingTimeMs',
      'limit',
      'offset',
      'estimatedTotalHits',
    ]);
  });
});

describe('POST /multi-search', () => {
  it('when not federated, then every result has the request uid, and its own metadata with the header', async () => {
    const body = { queries: [{ indexUid: movies, q: 'a' }, { indexUid: books }, { indexUid: bare }] };
    const plain = await multi(body, {});
    expect(new Set(plain.body.results.map((r: any) => r.requestUid)).size).toBe(1);
    expect(plain.body.results.every((r: any) => UUID_V7.test(r.requestUid) && !('metadata' in r))).toBe(true);
    const r = await multi(body);
    expect(Object.keys(r.body.results[0])).toEqual([
      'indexUid',
      'hits',
      'query',
      'processingTimeMs',
      'limit',
      'offset',
      'estimatedTotalHits',
      'requestUid',
      'metadata',
    ]);
    expect(r.body.results.map((x: any) => x.metadata)).toEqual([
      { query: 'a', queryUid: expect.stringMatching(UUID_V7), indexUid: movies, primaryKey: 'id' },
      { queryUid: expect.stringMatching(UUID_V7), indexUid: books, primaryKey: 'isbn' },
      { queryUid: expect.stringMatching(UUID_V7), indexUid: bare },
    ]);
    expect(new Set(r.body.results.map((x: any) => x.metadata.queryUid)).size).toBe(3);
    expect((await multi({ queries: [] })).body).toEqual({ results: [] });
  });

  it('when federated, then one request uid and the metadata of every query, in query order', async () => {
    const body = {
      federation: {},
      queries: [{ indexUid: movies, q: 'a' }, { indexUid: books }, { indexUid: bare, q: 'none' }],
    };
    expect(Object.keys((await multi(body, {})).body)).toEqual([
      'hits',
      'processingTimeMs',
      'limit',
      'offset',
      'estimatedTotalHits',
      'requestUid',
    ]);
    const r = await multi(body);
    expect(Object.keys(r.body)).toEqual([
      'hits',
      'processingTimeMs',
      'limit',
      'offset',
      'estimatedTotalHits',
      'requestUid',
      'metadata',
    ]);
    expect(r.body.metadata).toEqual([
      { query: 'a', queryUid: expect.stringMatching(UUID_V7), indexUid: movies, primaryKey: 'id' },
      { queryUid: expect.stringMatching(UUID_V7), indexUid: books, primaryKey: 'isbn' },
      { query: 'none', queryUid: expect.stringMatching(UUID_V7), indexUid: bare },
    ]);
    expect((await multi({ federation: {}, queries: [] })).body).toMatchObject({
      hits: [],
      requestUid: expect.stringMatching(UUID_V7),
      metadata: [],
    });
  });

  it('when federated with facets, semantic hits and performance details, then the two fields sit after the facets', async () => {
    const body = {
      federation: { facetsByIndex: { [movies]: ['t'] }, showPerformanceDetails: true },
      queries: [{ indexUid: movies, q: 'a', vector: [1, 0], hybrid: { embedder: 'e', semanticRatio: 0.5 } }],
    };
    const r = await multi(body);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual([
      'hits',
      'processingTimeMs',
      'limit',
      'offset',
      'estimatedTotalHits',
      'facetsByIndex',
      'requestUid',
      'metadata',
      'semanticHitCount',
      'performanceDetails',
    ]);
  });

  it('when queries name instances of the network, then their metadata names them, without the primary key of a remote', async () => {
    await s.api('PATCH', '/experimental-features', { body: { network: true } });
    const network = await s.api('PATCH', '/network', {
      body: {
        self: 'a',
        remotes: { a: { url: s.url, searchApiKey: 'k' }, b: { url: 'http://127.0.0.1:9', searchApiKey: 'k' } },
      },
    });
    expect(network.status).toBe(200);
    try {
      const r = await multi({
        federation: {},
        queries: [
          { indexUid: movies, q: 'a' },
          { indexUid: movies, q: 'a', federationOptions: { remote: 'b' } },
          { indexUid: movies, q: 'b', federationOptions: { remote: 'a' } },
        ],
      });
      expect(r.status).toBe(200);
      expect(Object.keys(r.body)).toEqual([
        'hits',
        'processingTimeMs',
        'limit',
        'offset',
        'estimatedTotalHits',
        'requestUid',
        'metadata',
        'remoteErrors',
      ]);
      expect(r.body.metadata).toEqual([
        { query: 'a', queryUid: expect.any(String), indexUid: movies, primaryKey: 'id', remote: 'a' },
        { query: 'a', queryUid: expect.any(String), indexUid: movies, remote: 'b' },
        { query: 'b', queryUid: expect.any(String), indexUid: movies, remote: 'a' },
      ]);
      const single = await search({ q: 'a', useNetwork: true });
      expect(single.body.metadata).toEqual({
        query: 'a',
        queryUid: expect.any(String),
        indexUid: movies,
        primaryKey: 'id',
        remote: 'a',
      });
    } finally {
      await s.api('PATCH', '/network', { body: { self: null, remotes: { a: null, b: null } } });
    }
  });
});
