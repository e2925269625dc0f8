/**
 * `personalize` in search over HTTP. Without `--experimental-personalization-api-key`,
 * Meilisearch 1.50's `feature_not_enabled` error (settled on the reference binary), never a
 * silent drop; with it, the page's hits reranked through the reranking API, here a loopback
 * server that speaks Cohere's rerank API (`--experimental-personalization-url` points at it).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer } from '../helpers/server';

const DOCS = [
  { id: 1, title: 'Alien horror', genre: 'horror' },
  { id: 2, title: 'Brazil comedy horror', genre: 'comedy' },
  { id: 3, title: 'Carrie horror', genre: 'horror' },
];

const NOT_ENABLED = {
  message:
    'reranking search results requires enabling the `personalization` experimental feature. See https://github.com/orgs/meilisearch/discussions/866',
  code: 'feature_not_enabled',
  type: 'invalid_request',
  link: 'https://docs.meilisearch.com/errors#feature_not_enabled',
};

interface RerankCall {
  authorization: string | undefined;
  body: { query: string; documents: string[]; model: string };
}

/**
 * A loopback reranking API: `answer(call, n)` gives the status and body; by default it ranks
 * the documents in reverse order.
 */
async function rerankApi(answer?: (c: RerankCall, n: number) => { status: number; body: unknown } | undefined) {
  const calls: RerankCall[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const call: RerankCall = {
        authorization: req.headers.authorization,
        body: JSON.parse(Buffer.concat(chunks).toString()),
      };
      calls.push(call);
      const a = answer?.(call, calls.length - 1) ?? {
        status: 200,
        body: {
          id: 'r',
          results: call.body.documents.map((_, i) => ({
            index: call.body.documents.length - 1 - i,
            relevance_score: 1 / (i + 1),
          })),
          meta: {},
        },
      };
      res
        .writeHead(a.status, { 'Content-Type': 'application/json' })
        .end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/rerank`,
    calls,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function withDocs(s: TestServer): Promise<void> {
  const t = await s.api('POST', '/indexes/movies/documents', { body: DOCS });
  await s.waitTask(t.body.taskUid);
}

describe('personalize without --experimental-personalization-api-key', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
    await withDocs(s);
  });
  afterAll(async () => {
    await s.close();
  });

  test('a personalized search is refused with feature_not_enabled, in every form', async () => {
    for (const userContext of ['likes comedy', '']) {
      const r = await s.api('POST', '/indexes/movies/search', { body: { q: 'horror', personalize: { userContext } } });
      expect([r.status, r.body]).toEqual([400, NOT_ENABLED]);
    }
    const get = await s.api('GET', '/indexes/movies/search?q=horror&personalizeUserContext=x');
    expect([get.status, get.body]).toEqual([400, NOT_ENABLED]);
    const multi = await s.api('POST', '/multi-search', {
      body: { queries: [{ indexUid: 'movies', q: 'horror', personalize: { userContext: 'x' } }] },
    });
    expect([multi.status, multi.body]).toEqual([
      400,
      { ...NOT_ENABLED, message: `Inside \`.queries[0]\`: ${NOT_ENABLED.message}` },
    ]);
    const federated = await s.api('POST', '/multi-search', {
      body: { federation: { personalize: { userContext: 'x' } }, queries: [{ indexUid: 'movies', q: 'horror' }] },
    });
    expect([federated.status, federated.body]).toEqual([400, NOT_ENABLED]);
  });

  test('a null personalize is no personalization', async () => {
    const r = await s.api('POST', '/indexes/movies/search', { body: { q: 'horror', personalize: null } });
    expect(r.status).toBe(200);
    expect(r.body.hits.map((h: any) => h.id)).toEqual([1, 3, 2]);
  });

  test.each([
    [
      1,
      'invalid_search_personalize',
      'Invalid value type at `.personalize`: expected an object, but found a positive integer: `1`',
    ],
    [{}, 'invalid_search_personalize', 'Missing field `userContext` inside `.personalize`'],
    [
      { userContext: 1 },
      'invalid_search_personalize_user_context',
      'Invalid value type at `.personalize.userContext`: expected a string, but found a positive integer: `1`',
    ],
    [
      { userContext: 'x', foo: 1 },
      'invalid_search_personalize',
      'Unknown field `foo` inside `.personalize`: expected one of `userContext`',
    ],
  ])('personalize %j is refused with %s', async (personalize, code, message) => {
    const r = await s.api('POST', '/indexes/movies/search', { body: { q: 'horror', personalize } });
    expect([r.status, r.body]).toEqual([
      400,
      { message, code, type: 'invalid_request', link: `https://docs.meilisearch.com/errors#${code}` },
    ]);
  });

  test('a federated query may not carry its own personalize', async () => {
    const r = await s.api('POST', '/multi-search', {
      body: {
        federation: {},
        queries: [{ indexUid: 'movies', q: 'horror', personalize: { userContext: 'likes comedy' } }],
      },
    });
    expect([r.status, r.body.code, r.body.message]).toEqual([
      400,
      'invalid_multi_search_query_personalization',
      'Inside `.queries[0]`: Using `.personalize` is not allowed in federated queries.\n - Hint: remove `personalize` from the query or remove `federation` from the request\n - Hint: pass `federation.personalize` for personalization in federated search',
    ]);
  });
});

describe('personalize through the reranking API', () => {
  let s: TestServer;
  let api: Awaited<ReturnType<typeof rerankApi>>;
  let behaviour: ((c: RerankCall, n: number) => { status: number; body: unknown } | undefined) | undefined;
  beforeAll(async () => {
    api = await rerankApi((c, n) => behaviour?.(c, n));
    s = await startTestServer({
      args: ['--experimental-personalization-api-key', 'cohere-key', '--experimental-personalization-url', api.url],
    });
    await withDocs(s);
  });
  afterAll(async () => {
    await s.close();
    await api.close();
  });
  beforeEach(() => {
    api.calls.length = 0;
    behaviour = undefined;
  });

  test("the page's hits come back in the API's order, and the API is asked as Meilisearch asks Cohere", async () => {
    const plain = await s.api('POST', '/indexes/movies/search', { body: { q: 'horror', showRankingScore: true } });
    expect(plain.body.hits.map((h: any) => h.id)).toEqual([1, 3, 2]);
    expect(api.calls).toEqual([]);

    const r = await s.api('POST', '/indexes/movies/search', {
      body: { q: 'horror', showRankingScore: true, personalize: { userContext: 'likes comedy' } },
    });
    expect(r.status).toBe(200);
    expect(r.body.hits.map((h: any) => h.id)).toEqual([2, 3, 1]);
    // Each hit keeps what the search gave it; the totals are the search's.
    expect(r.body.hits[0]).toEqual(plain.body.hits[2]);
    expect(r.body.estimatedTotalHits).toBe(3);
    expect(api.calls).toHaveLength(1);
    expect(api.calls[0].authorization).toBe('Bearer cohere-key');
    expect(api.calls[0].body).toEqual({
      query: 'User Context: likes comedy\nQuery: horror',
      documents: plain.body.hits.map((h: any) => JSON.stringify({ id: h.id, title: h.title, genre: h.genre })),
      model: 'rerank-english-v3.0',
    });
  });

  test('without q the prompt is the user context alone; GET takes personalizeUserContext', async () => {
    await s.api('POST', '/indexes/movies/search', { body: { personalize: { userContext: 'likes comedy' } } });
    expect(api.calls[0].body.query).toBe('User Context: likes comedy');
    const get = await s.api('GET', '/indexes/movies/search?q=carrie&personalizeUserContext=fan');
    expect(get.body.hits.map((h: any) => h.id)).toEqual([3]);
    expect(api.calls[1].body.query).toBe('User Context: fan\nQuery: carrie');
  });

  test('a hit the API leaves out is left out; no hits, no call', async () => {
    behaviour = () => ({ status: 200, body: { results: [{ index: 1, relevance_score: 0.9 }] } });
    const r = await s.api('POST', '/indexes/movies/search', {
      body: { q: 'horror', personalize: { userContext: 'likes comedy' } },
    });
    expect(r.body.hits.map((h: any) => h.id)).toEqual([3]);
    const none = await s.api('POST', '/indexes/movies/search', {
      body: { q: 'zzzzqqq', personalize: { userContext: 'x' } },
    });
    expect([none.status, none.body.hits]).toEqual([200, []]);
    expect(api.calls).toHaveLength(1);
  });

  test('multi-search reranks each personalized query, and federation.personalize the merged page', async () => {
    const multi = await s.api('POST', '/multi-search', {
      body: {
        queries: [
          { indexUid: 'movies', q: 'horror', personalize: { userContext: 'x' } },
          { indexUid: 'movies', q: 'horror' },
        ],
      },
    });
    expect(multi.body.results.map((r: any) => r.hits.map((h: any) => h.id))).toEqual([
      [2, 3, 1],
      [1, 3, 2],
    ]);
    const federated = await s.api('POST', '/multi-search', {
      body: {
        federation: { personalize: { userContext: 'likes comedy' } },
        queries: [{ indexUid: 'movies', q: 'horror' }],
      },
    });
    expect(federated.body.hits.map((h: any) => h.id)).toEqual([2, 3, 1]);
    expect(federated.body.hits[0]._federation).toMatchObject({ indexUid: 'movies', queriesPosition: 0 });
    expect(api.calls[1].body.query).toBe('User Context: likes comedy');
    expect(JSON.parse(api.calls[1].body.documents[0])).toEqual(DOCS[0]);
  });

  test('a 5xx is tried again', async () => {
    behaviour = (_c, n) => (n === 0 ? { status: 503, body: 'busy' } : undefined);
    const r = await s.api('POST', '/indexes/movies/search', {
      body: { q: 'horror', personalize: { userContext: 'x' } },
    });
    expect(r.body.hits.map((h: any) => h.id)).toEqual([2, 3, 1]);
    expect(api.calls).toHaveLength(2);
  });

  test.each([
    [
      401,
      { message: 'invalid api token' },
      403,
      'remote_invalid_api_key',
      'Personalization service: Unauthorized: invalid API key',
    ],
    [400, { message: 'bad' }, 400, 'remote_bad_request', 'Personalization service: Bad request: {"message":"bad"}'],
    [
      404,
      { message: 'nope' },
      502,
      'remote_bad_response',
      'Personalization service: Cohere API error: Status 404: {"message":"nope"}',
    ],
  ])("the API's %i fails the search", async (status, body, httpStatus, code, message) => {
    behaviour = () => ({ status, body });
    const r = await s.api('POST', '/indexes/movies/search', {
      body: { q: 'horror', personalize: { userContext: 'x' } },
    });
    expect([r.status, r.body.code, r.body.message]).toEqual([httpStatus, code, message]);
    expect(api.calls).toHaveLength(1);
  });
});
