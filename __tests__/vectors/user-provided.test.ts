/**
 * Vectors given by the user (`userProvided` embedders) over HTTP: every `_vectors` form, what
 * `retrieveVectors` shows, the index statistics, semantic and hybrid search, and the errors of
 * each misuse. Expected values are what Meilisearch 1.50 answers for the same requests.
 */
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const DOCS = [
  { id: 1, t: 'red', _vectors: { man: [1, 0, 0] } },
  {
    id: 2,
    t: 'green red',
    _vectors: {
      man: {
        embeddings: [
          [0, 1, 0],
          [0.5, 0.5, 0],
        ],
        regenerate: false,
      },
    },
  },
  { id: 3, t: 'blue', _vectors: { man: null } },
  { id: 5, t: 'other', _vectors: { man: [], other: [1, 2] } },
  { id: 6, t: 'six', _vectors: { man: { embeddings: [0, 0, 1], regenerate: false } } },
];

async function task(r: { body: { taskUid: number } }): Promise<any> {
  return s.waitTask(r.body.taskUid);
}

async function vectorIndex(extra: Record<string, unknown> = {}): Promise<string> {
  const uid = uniqueIndex('vec');
  await task(await s.api('POST', '/indexes', { body: { uid, primaryKey: 'id' } }));
  const t = await task(
    await s.api('PATCH', `/indexes/${uid}/settings`, {
      body: { embedders: { man: { source: 'userProvided', dimensions: 3, ...extra } } },
    }),
  );
  expect(t.status).toBe('succeeded');
  expect((await task(await s.api('POST', `/indexes/${uid}/documents`, { body: DOCS }))).status).toBe('succeeded');
  return uid;
}

const ids = (hits: { id: number }[]) => hits.map((h) => h.id);

describe('documents with vectors', () => {
  let uid: string;
  beforeAll(async () => {
    uid = await vectorIndex();
  });

  it('when vectors are retrieved, then every configured embedder shows {embeddings, regenerate} after the entries it does not know', async () => {
    const r = await s.api('GET', `/indexes/${uid}/documents?retrieveVectors=true`);
    expect(r.body.results).toEqual([
      { id: 1, t: 'red', _vectors: { man: { embeddings: [[1, 0, 0]], regenerate: false } } },
      {
        id: 2,
        t: 'green red',
        _vectors: {
          man: {
            embeddings: [
              [0, 1, 0],
              [0.5, 0.5, 0],
            ],
            regenerate: false,
          },
        },
      },
      { id: 3, t: 'blue', _vectors: { man: { embeddings: [], regenerate: false } } },
      { id: 5, t: 'other', _vectors: { other: [1, 2], man: { embeddings: [], regenerate: false } } },
      { id: 6, t: 'six', _vectors: { man: { embeddings: [[0, 0, 1]], regenerate: false } } },
    ]);
    expect(Object.keys(r.body.results[3]._vectors)).toEqual(['other', 'man']);
    const one = await s.api('GET', `/indexes/${uid}/documents/2?retrieveVectors=true`);
    expect(one.body._vectors.man.embeddings).toEqual([
      [0, 1, 0],
      [0.5, 0.5, 0],
    ]);
    const fetched = await s.api('POST', `/indexes/${uid}/documents/fetch`, {
      body: { ids: ['6'], retrieveVectors: true },
    });
    expect(fetched.body.results[0]._vectors.man.embeddings).toEqual([[0, 0, 1]]);
  });

  it('when vectors are not asked for, then `_vectors` is absent even when listed in fields', async () => {
    const r = await s.api('GET', `/indexes/${uid}/documents?fields=t,_vectors`);
    expect(r.body.results.map((d: object) => Object.keys(d))).toEqual([['t'], ['t'], ['t'], ['t'], ['t']]);
    expect(Object.keys((await s.api('GET', `/indexes/${uid}/documents/1`)).body)).toEqual(['id', 't']);
  });

  it('when stats are read, then embeddings and embedded documents are counted and `_vectors` is no field', async () => {
    const r = await s.api('GET', `/indexes/${uid}/stats`);
    expect(r.body).toMatchObject({
      numberOfDocuments: 5,
      numberOfEmbeddings: 4,
      numberOfEmbeddedDocuments: 3,
      fieldDistribution: { id: 5, t: 5 },
    });
  });

  it('when a document is deleted or replaced, then its vectors go with it', async () => {
    const u = await vectorIndex();
    await task(await s.api('DELETE', `/indexes/${u}/documents/2`));
    await task(
      await s.api('POST', `/indexes/${u}/documents`, {
        body: [
          {
            id: 1,
            t: 'red again',
            _vectors: {
              man: [
                [0, 0, 1],
                [0, 1, 1],
              ],
            },
          },
        ],
      }),
    );
    await task(await s.api('PUT', `/indexes/${u}/documents`, { body: [{ id: 6, t: 'six, same vectors' }] }));
    const st = await s.api('GET', `/indexes/${u}/stats`);
    expect(st.body).toMatchObject({ numberOfDocuments: 4, numberOfEmbeddings: 3, numberOfEmbeddedDocuments: 2 });
    const d1 = await s.api('GET', `/indexes/${u}/documents/1?retrieveVectors=true`);
    expect(d1.body._vectors.man.embeddings).toEqual([
      [0, 0, 1],
      [0, 1, 1],
    ]);
    const d6 = await s.api('GET', `/indexes/${u}/documents/6?retrieveVectors=true`);
    expect(d6.body).toEqual({
      id: 6,
      t: 'six, same vectors',
      _vectors: { man: { embeddings: [[0, 0, 1]], regenerate: false } },
    });
    await task(await s.api('DELETE', `/indexes/${u}/documents`));
    expect((await s.api('GET', `/indexes/${u}/stats`)).body).toMatchObject({
      numberOfEmbeddings: 0,
      numberOfEmbeddedDocuments: 0,
    });
  });
});

describe('documents refused for their vectors', () => {
  let uid: string;
  beforeAll(async () => {
    uid = await vectorIndex();
  });
  const failure = async (docs: unknown[]) =>
    (await task(await s.api('POST', `/indexes/${uid}/documents`, { body: docs }))).error;

  it('when a new document gives no vectors to a userProvided embedder, then the task fails and names it', async () => {
    const e = await failure([{ id: 10, t: 'x' }, { id: 11 }, { id: 12, _vectors: { man: { regenerate: true } } }]);
    expect(e.code).toBe('vector_embedding_error');
    // Meilisearch names the index in the errors of a document's vectors.
    expect(e.message.startsWith(`Index \`${uid}\`: While embedding documents for embedder \`man\``)).toBe(true);
    expect(e.message).toContain('no vectors provided for document `10` and at least 2 other document(s)');
    expect(e.message).toContain('opt-out for a document with `_vectors.man: null`');
  });

  it('when an embedding has the wrong length, then invalid_vector_dimensions names the embedding', async () => {
    const e = await failure([
      {
        id: 13,
        _vectors: {
          man: [
            [1, 0, 0],
            [1, 0],
          ],
        },
      },
    ]);
    expect(e.code).toBe('invalid_vector_dimensions');
    expect(e.message).toBe(
      `Index \`${uid}\`: Invalid vector dimensions in document with id \`13\` in \`._vectors.man\`.\n  - note: embedding #1 has dimensions 2\n  - note: embedder \`man\` requires 3`,
    );
  });

  it('when `_vectors` has a bad shape, then invalid_vectors_type says where', async () => {
    expect((await failure([{ id: 14, _vectors: { man: 'abc' } }])).message).toMatch(
      /^Index `[^`]+`: Bad embedder configuration/,
    );
    expect((await failure([{ id: 14, _vectors: { man: 'abc' } }])).message).toContain(
      'Expected `._vectors.man` to be an array of floats, an array of arrays of floats, or an object with at least the field `regenerate`, but got the string `abc`',
    );
    expect((await failure([{ id: 15, _vectors: { man: [1, 'a', 0] } }])).message).toContain(
      'Invalid value type at `._vectors.man[1]`: expected a number, but found a string: `"a"`',
    );
    expect((await failure([{ id: 16, _vectors: { man: { embeddings: [1, 0, 0] } } }])).message).toContain(
      'Missing field `._vectors.man.regenerate`',
    );
    expect((await failure([{ id: 17, _vectors: [1, 2, 3] }])).code).toBe('invalid_vectors_type');
    // Nothing of the failed tasks was written.
    expect((await s.api('GET', `/indexes/${uid}/stats`)).body.numberOfDocuments).toBe(5);
  });
});

describe('semantic and hybrid search', () => {
  let uid: string;
  beforeAll(async () => {
    uid = await vectorIndex();
  });
  const search = (body: Record<string, unknown>) => s.api('POST', `/indexes/${uid}/search`, { body });

  it('when only a vector is given, then every document ranks by similarity, those without an embedding last', async () => {
    const r = await search({
      vector: [1, 0.1, 0],
      hybrid: { embedder: 'man', semanticRatio: 1 },
      showRankingScore: true,
      showRankingScoreDetails: true,
    });
    expect(r.status).toBe(200);
    expect(ids(r.body.hits)).toEqual([1, 2, 6, 3, 5]);
    expect(r.body.hits[0]._rankingScore).toBeCloseTo(0.99751853, 6);
    expect(r.body.hits[1]._rankingScore).toBeCloseTo(0.88697862, 6);
    expect(r.body.hits[2]._rankingScoreDetails).toEqual({ vectorSort: { order: 0, similarity: 0.5 } });
    expect(r.body.hits[3]._rankingScoreDetails).toEqual({ vectorSort: { order: 0, similarity: null } });
    expect(r.body.hits[4]._rankingScore).toBe(0);
    expect(r.body).toMatchObject({ estimatedTotalHits: 5, semanticHitCount: 5 });
  });

  it('when a query and a vector are mixed half and half, then the lists merge by weighted score, semantic first on a tie', async () => {
    const r = await search({
      q: 'red',
      vector: [0, 1, 0],
      hybrid: { embedder: 'man', semanticRatio: 0.5 },
      showRankingScore: true,
      retrieveVectors: true,
    });
    expect(ids(r.body.hits)).toEqual([2, 1, 6, 3, 5]);
    expect(r.body.hits.map((h: { _rankingScore: number }) => h._rankingScore)).toEqual([1, 1, 0.5, 0, 0]);
    expect(r.body).toMatchObject({ queryVector: [0, 1, 0], estimatedTotalHits: 5, semanticHitCount: 4 });
    expect(r.body.hits[0]._vectors.man.embeddings).toEqual([
      [0, 1, 0],
      [0.5, 0.5, 0],
    ]);
    const page = await search({
      q: 'red',
      vector: [0, 1, 0],
      hybrid: { embedder: 'man', semanticRatio: 0.5 },
      limit: 2,
      offset: 1,
    });
    expect(ids(page.body.hits)).toEqual([1, 6]);
    expect(page.body.semanticHitCount).toBe(1);
  });

  it('when the ratio is 0, then the search is keyword only with no semanticHitCount', async () => {
    const r = await search({
      q: 'red',
      vector: [0, 1, 0],
      hybrid: { embedder: 'man', semanticRatio: 0 },
      showRankingScore: true,
    });
    expect(ids(r.body.hits)).toEqual([1, 2]);
    expect(r.body.hits[1]._rankingScore).toBeLessThan(1);
    expect(r.body).not.toHaveProperty('semanticHitCount');
  });

  it('when a userProvided embedder gets a query without a vector, then keyword results come with semanticHitCount 0', async () => {
    const r = await search({ q: 'red', hybrid: { embedder: 'man', semanticRatio: 0.5 } });
    expect(ids(r.body.hits)).toEqual([1, 2]);
    expect(r.body.semanticHitCount).toBe(0);
    const placeholder = await search({ hybrid: { embedder: 'man' } });
    expect(ids(placeholder.body.hits)).toEqual([1, 2, 3, 5, 6]);
    expect(placeholder.body).not.toHaveProperty('semanticHitCount');
  });

  it('when semantic search is filtered, paged or thresholded, then those apply to the similarity order', async () => {
    await task(await s.api('PATCH', `/indexes/${uid}/settings`, { body: { filterableAttributes: ['id'] } }));
    const r = await search({
      vector: [0, 1, 0],
      hybrid: { embedder: 'man', semanticRatio: 1 },
      filter: 'id > 1',
      limit: 2,
    });
    expect(ids(r.body.hits)).toEqual([2, 6]);
    expect(r.body.estimatedTotalHits).toBe(4);
    const t = await search({
      vector: [0, 1, 0],
      hybrid: { embedder: 'man', semanticRatio: 1 },
      rankingScoreThreshold: 0.9,
    });
    expect(ids(t.body.hits)).toEqual([2]);
    expect(t.body.estimatedTotalHits).toBe(1);
  });

  it('when the GET form names the embedder, then it searches the same', async () => {
    const r = await s.api('GET', `/indexes/${uid}/search?vector=1,0.1,0&hybridEmbedder=man&hybridSemanticRatio=1`);
    expect(ids(r.body.hits)).toEqual([1, 2, 6, 3, 5]);
  });

  it.each([
    [
      { vector: [1, 0, 0] },
      'missing_search_hybrid',
      'Invalid request: missing `hybrid` parameter when `vector` or `media` are present.',
    ],
    [
      { vector: [1, 0], hybrid: { embedder: 'man' } },
      'invalid_vector_dimensions',
      'Invalid vector dimensions: expected: `3`, found: `2`.',
    ],
    [{ q: 'red', hybrid: { embedder: 'nope' } }, 'invalid_search_embedder', 'Cannot find embedder with name `nope`.'],
    [
      { q: 'red', hybrid: { semanticRatio: 0.5 } },
      'invalid_search_hybrid_query',
      'Missing field `embedder` inside `.hybrid`',
    ],
    [
      { media: { image: 'x' } },
      'missing_search_hybrid',
      'Invalid request: missing `hybrid` parameter when `vector` or `media` are present.',
    ],
    [
      { media: { image: 'x' }, hybrid: { embedder: 'man' } },
      'vector_embedding_error',
      "Error while generating embeddings: user error: `media` requested but the configuration doesn't have source `rest`",
    ],
    [
      { q: 'red', hybrid: { embedder: 'man', semanticRatio: 1.5 } },
      'invalid_search_semantic_ratio',
      'Invalid value at `.hybrid.semanticRatio`: the value of `semanticRatio` is invalid, expected a float between `0.0` and `1.0`.',
    ],
  ])('when the request is %j, then it answers %s', async (body, code, message) => {
    const r = await search(body);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code, message });
  });

  it('when a federated query retrieves vectors, then queryVectors holds each such query vector by position', async () => {
    const fed = async (queries: unknown[]) =>
      (await s.api('POST', '/multi-search', { body: { federation: {}, queries } })).body;
    const keyword = { indexUid: uid, q: 'red' };
    const semantic = { indexUid: uid, vector: [1, 0, 0], hybrid: { embedder: 'man' } };
    expect(Object.keys(await fed([keyword, semantic]))).not.toContain('queryVectors');
    const kept = await fed([keyword, { ...semantic, retrieveVectors: true }]);
    expect(kept.queryVectors).toEqual({ '1': [1, 0, 0] });
    expect(Object.keys(kept).slice(0, 3)).toEqual(['hits', 'queryVectors', 'processingTimeMs']);
    expect((await fed([{ ...keyword, retrieveVectors: true }])).queryVectors).toEqual({});
  });
});

describe('binary quantization', () => {
  it('when an embedder is quantized, then similarity is measured on bits and cannot be undone', async () => {
    const uid = await vectorIndex();
    expect(
      (
        await task(
          await s.api('PATCH', `/indexes/${uid}/settings`, { body: { embedders: { man: { binaryQuantized: true } } } }),
        )
      ).status,
    ).toBe('succeeded');
    const r = await s.api('POST', `/indexes/${uid}/search`, {
      body: { vector: [1, 0.1, 0], hybrid: { embedder: 'man', semanticRatio: 1 }, showRankingScore: true },
    });
    expect(ids(r.body.hits)).toEqual([2, 1, 6, 3, 5]);
    expect(r.body.hits.map((h: { _rankingScore: number }) => h._rankingScore)).toEqual([1, 0.984375, 0.953125, 0, 0]);
    const d = await s.api('GET', `/indexes/${uid}/documents/2?retrieveVectors=true`);
    expect(d.body._vectors.man.embeddings).toEqual([
      [0, 1, 0],
      [1, 1, 0],
    ]);
    const undo = await task(
      await s.api('PATCH', `/indexes/${uid}/settings`, { body: { embedders: { man: { binaryQuantized: false } } } }),
    );
    expect(undo.status).toBe('failed');
    expect(undo.error.code).toBe('invalid_settings_embedders');
    expect(undo.error.message).toContain('Cannot disable the binary quantization.');
  });

  it('when an embedder is removed, then its vectors are gone from the statistics', async () => {
    const uid = await vectorIndex();
    await task(await s.api('PATCH', `/indexes/${uid}/settings`, { body: { embedders: { man: null } } }));
    expect((await s.api('GET', `/indexes/${uid}/stats`)).body).toMatchObject({
      numberOfEmbeddings: 0,
      numberOfEmbeddedDocuments: 0,
    });
  });
});

describe('similar documents', () => {
  let uid: string;
  beforeAll(async () => {
    uid = await vectorIndex();
    await task(await s.api('PATCH', `/indexes/${uid}/settings`, { body: { filterableAttributes: ['id'] } }));
  });
  const similar = (body: Record<string, unknown>) => s.api('POST', `/indexes/${uid}/similar`, { body });

  it('when a document has embeddings, then the others with embeddings come nearest first, itself left out', async () => {
    const r = await similar({ id: 1, embedder: 'man', showRankingScore: true });
    expect(r.status).toBe(200);
    expect(ids(r.body.hits)).toEqual([2, 6]);
    // Only embeddings of the same rank meet: document 2's second one ([0.5, 0.5, 0]) is not
    // compared with document 1's first.
    expect(r.body.hits.map((h: { _rankingScore: number }) => h._rankingScore)).toEqual([0.5, 0.5]);
    expect(r.body).toMatchObject({ id: '1', limit: 20, offset: 0, estimatedTotalHits: 4 });
    expect(Object.keys(r.body)).toEqual(['hits', 'id', 'processingTimeMs', 'limit', 'offset', 'estimatedTotalHits']);
  });

  it('when paged, filtered or asked by GET, then those apply', async () => {
    const g = await s.api('GET', `/indexes/${uid}/similar?id=1&embedder=man&limit=1&offset=1`);
    expect(ids(g.body.hits)).toEqual([6]);
    const f = await similar({
      id: 1,
      embedder: 'man',
      filter: 'id > 2',
      retrieveVectors: true,
      showRankingScoreDetails: true,
      showPerformanceDetails: true,
    });
    expect(Object.keys(f.body.performanceDetails)).toContain('similar');
    expect(ids(f.body.hits)).toEqual([6]);
    expect(f.body.hits[0]._vectors.man.embeddings).toEqual([[0, 0, 1]]);
    expect(f.body.hits[0]._rankingScoreDetails).toEqual({ vectorSort: { order: 0, similarity: 0.5 } });
  });

  it('when the document has no embedding, then there is nothing similar', async () => {
    const r = await similar({ id: 3, embedder: 'man' });
    expect(r.body.hits).toEqual([]);
    expect(r.body.estimatedTotalHits).toBe(4);
  });

  it.each([
    [{ id: 99, embedder: 'man' }, 'not_found_similar_id', 'Document `99` not found.'],
    [{ id: 1 }, 'bad_request', 'Missing field `embedder`'],
    [{ id: 1, embedder: 'zz' }, 'invalid_similar_embedder', 'Cannot find embedder with name `zz`.'],
    [{ id: 'a b', embedder: 'man' }, 'invalid_similar_id', undefined],
    [{ id: 1, embedder: 'man', filter: 'nope = 1' }, 'invalid_similar_filter', undefined],
  ])('when asked %j, then it answers %s', async (body, code, message) => {
    const r = await similar(body);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe(code);
    if (message) expect(r.body.message).toBe(message);
  });
});

describe('facet search with vectors', () => {
  it('when the query is semantic or hybrid, then every allowed document counts; misuses answer as search does', async () => {
    const uid = uniqueIndex('vfacet');
    await task(await s.api('POST', '/indexes', { body: { uid, primaryKey: 'id' } }));
    await task(
      await s.api('PATCH', `/indexes/${uid}/settings`, {
        body: { filterableAttributes: ['c'], embedders: { man: { source: 'userProvided', dimensions: 3 } } },
      }),
    );
    const docs = [
      { id: 1, t: 'red', c: 'x', _vectors: { man: [1, 0, 0] } },
      { id: 2, t: 'green', c: 'y', _vectors: { man: [0, 1, 0] } },
      { id: 3, t: 'blue red', c: 'z', _vectors: { man: null } },
    ];
    await task(await s.api('POST', `/indexes/${uid}/documents`, { body: docs }));
    const facet = (body: Record<string, unknown>) =>
      s.api('POST', `/indexes/${uid}/facet-search`, { body: { facetName: 'c', ...body } });
    expect((await facet({ q: 'red' })).body.facetHits.map((h: { value: string }) => h.value)).toEqual(['x', 'z']);
    expect(
      (
        await facet({ q: 'red', vector: [0, 1, 0], hybrid: { embedder: 'man', semanticRatio: 0.5 } })
      ).body.facetHits.map((h: { value: string }) => h.value),
    ).toEqual(['x', 'y', 'z']);
    expect((await facet({ vector: [0, 1, 0] })).body.code).toBe('missing_search_hybrid');
    expect((await facet({ q: 'red', hybrid: { embedder: 'nope' } })).body.code).toBe('invalid_search_embedder');
    const multi = await s.api('POST', '/multi-search', {
      body: { queries: [{ indexUid: uid, vector: [0, 1, 0], hybrid: { embedder: 'man' }, limit: 1 }] },
    });
    expect(multi.body.results[0]).toMatchObject({ hits: [{ id: 2 }], estimatedTotalHits: 3, semanticHitCount: 1 });
  });
});

describe('hybrid search with distinct', () => {
  it('when both lists hold a document of the same value, then only the first of the merge stays', async () => {
    const uid = uniqueIndex('vdistinct');
    await task(await s.api('POST', '/indexes', { body: { uid, primaryKey: 'id' } }));
    await task(
      await s.api('PATCH', `/indexes/${uid}/settings`, {
        body: { filterableAttributes: ['g'], embedders: { man: { source: 'userProvided', dimensions: 3 } } },
      }),
    );
    const docs = [
      { id: 1, t: 'red', g: 'a', _vectors: { man: [1, 0, 0] } },
      { id: 2, t: 'blue', g: 'a', _vectors: { man: [0, 1, 0] } },
      { id: 3, t: 'green', g: 'b', _vectors: { man: [0, 0, 1] } },
    ];
    await task(await s.api('POST', `/indexes/${uid}/documents`, { body: docs }));
    const r = await s.api('POST', `/indexes/${uid}/search`, {
      body: { q: 'red', vector: [0, 1, 0], hybrid: { embedder: 'man', semanticRatio: 0.5 }, distinct: 'g' },
    });
    expect(ids(r.body.hits)).toEqual([2, 3]);
  });
});

/**
 * Documents where each embedding rank and each rule group decides. Every expectation is what
 * Meilisearch 1.50 answered for the same requests.
 */
describe('merging by rule groups, and similar documents by embedding rank', () => {
  let uid: string;
  beforeAll(async () => {
    uid = uniqueIndex('vgroups');
    await task(await s.api('POST', '/indexes', { body: { uid, primaryKey: 'id' } }));
    await task(
      await s.api('PATCH', `/indexes/${uid}/settings`, {
        body: { sortableAttributes: ['rank'], embedders: { man: { source: 'userProvided', dimensions: 3 } } },
      }),
    );
    const docs = [
      { id: 1, t: 'red', rank: 10, _vectors: { man: [1, 0, 0] } },
      {
        id: 2,
        t: 'green red',
        rank: 5,
        _vectors: {
          man: [
            [0, 1, 0],
            [0.5, 0.5, 0],
          ],
        },
      },
      { id: 3, t: 'blue', rank: 1, _vectors: { man: [0, 0.8, 0.6] } },
      {
        id: 4,
        t: 'yellow',
        rank: 2,
        _vectors: {
          man: [
            [0.9, 0.1, 0],
            [0, 1, 0],
          ],
        },
      },
      { id: 6, t: 'six', rank: 3, _vectors: { man: [0, 0, 1] } },
    ];
    expect((await task(await s.api('POST', `/indexes/${uid}/documents`, { body: docs }))).status).toBe('succeeded');
  });
  const scores = (hits: { _rankingScore: number }[]) => hits.map((h) => Number(h._rankingScore.toFixed(5)));

  it.each([
    // The first embedding of 1 meets only first embeddings: 2 scores 0.5, not 0.854.
    [1, [4, 2, 3, 6], [0.99694, 0.5, 0.5, 0.5]],
    // The second embedding of 2 meets the second of 4.
    [2, [3, 4, 1, 6], [0.9, 0.85355, 0.5, 0.5]],
    [4, [1, 2, 3, 6], [0.99694, 0.85355, 0.54417, 0.5]],
  ])(
    'when documents like %j are asked, then each rank is compared with its own',
    async (id, expected, expectedScores) => {
      const r = await s.api('POST', `/indexes/${uid}/similar`, {
        body: { id, embedder: 'man', showRankingScore: true },
      });
      expect(ids(r.body.hits)).toEqual(expected);
      expect(scores(r.body.hits)).toEqual(expectedScores);
    },
  );

  it.each([
    // Relevancy up to attributeRank ties (0.5 each side), then the sort key: 4 first; 2 ties
    // on both groups, and the keyword hit has one more (wordPosition, exactness), so 2 comes
    // from the keyword list with its keyword score.
    [
      { q: 'red', vector: [0, 1, 0], semanticRatio: 0.5, sort: ['rank:asc'] },
      [4, 2, 1, 3, 6],
      [1, 0.92424, 1, 0.9, 0.5],
      3,
    ],
    [{ q: 'red', vector: [0, 1, 0], semanticRatio: 0.5 }, [2, 4, 1, 3, 6], [1, 1, 1, 0.9, 0.5], 4],
    [
      { q: 'red', vector: [0, 0.8, 0.6], semanticRatio: 0.5, sort: ['rank:asc'] },
      [3, 2, 1, 4, 6],
      [1, 0.92424, 1, 0.9, 0.8],
      3,
    ],
    [{ q: 'red', vector: [0, 0.8, 0.6], semanticRatio: 0.5 }, [3, 1, 2, 4, 6], [1, 1, 0.92424, 0.9, 0.8], 3],
    // With 0.9 on the similarity every semantic hit outweighs the keyword ones; 4 and 2 have
    // the same similarity (0.9), and the sort key puts 4 (rank 2) first.
    [
      { q: 'red', vector: [0, 0.8, 0.6], semanticRatio: 0.9, sort: ['rank:asc'] },
      [3, 4, 2, 6, 1],
      [1, 0.9, 0.9, 0.8, 0.5],
      5,
    ],
    // With most of the weight on keywords, keyword hits come first whatever their rank.
    [
      { q: 'red', vector: [0, 0.8, 0.6], semanticRatio: 0.1, sort: ['rank:asc'] },
      [2, 1, 3, 4, 6],
      [0.92424, 1, 1, 0.9, 0.8],
      3,
    ],
    [
      { q: 'green', vector: [0, 0.8, 0.6], semanticRatio: 0.5, sort: ['rank:asc'] },
      [3, 2, 4, 6, 1],
      [1, 0.98485, 0.9, 0.8, 0.5],
      4,
    ],
    [
      { q: 'red', vector: [0, 0, 1], semanticRatio: 0.5, sort: ['rank:desc'] },
      [1, 2, 6, 3, 4],
      [1, 0.92424, 1, 0.8, 0.5],
      3,
    ],
  ])(
    'when a hybrid search is %j, then the lists merge rule group by rule group',
    async ({ semanticRatio, ...body }, expected, expectedScores, semanticHits) => {
      const r = await s.api('POST', `/indexes/${uid}/search`, {
        body: { ...body, hybrid: { embedder: 'man', semanticRatio }, showRankingScore: true },
      });
      expect(ids(r.body.hits)).toEqual(expected);
      expect(scores(r.body.hits)).toEqual(expectedScores);
      expect(r.body.semanticHitCount).toBe(semanticHits);
    },
  );
});
