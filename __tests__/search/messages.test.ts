/**
 * The words of a refused request, over HTTP: searches through both the fast search path and the
 * GET form, then multi-search, federation, index, swap, task and key requests.
 * Every expectation is Meilisearch 1.50's answer to the same request (code and message, read
 * from the reference binary): deserr names the kind of value it found ("a negative integer",
 * "null" without a value), names counts "a positive integer", reports the first bad field in
 * the order the body lists them, and has its own words for filters, thresholds, ratios and
 * GET parameters.
 */
import { MASTER_KEY, startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
let uid: string;
beforeAll(async () => {
  s = await startTestServer();
  uid = uniqueIndex('msg');
  const r = await s.api('PATCH', `/indexes/${uid}/settings`, {
    body: { embedders: { man: { source: 'userProvided', dimensions: 3 } } },
  });
  expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
});
afterAll(async () => {
  await s.close();
});

const THRESHOLD = 'the value of `rankingScoreThreshold` is invalid, expected a float between `0.0` and `1.0`.';
const RATIO = 'the value of `semanticRatio` is invalid, expected a float between `0.0` and `1.0`.';

describe('a refused POST search', () => {
  it.each([
    [
      { offset: -1 },
      'invalid_search_offset',
      'Invalid value type at `.offset`: expected a positive integer, but found a negative integer: `-1`',
    ],
    [
      { limit: -5 },
      'invalid_search_limit',
      'Invalid value type at `.limit`: expected a positive integer, but found a negative integer: `-5`',
    ],
    [
      { offset: 1.5 },
      'invalid_search_offset',
      'Invalid value type at `.offset`: expected a positive integer, but found a number: `1.5`',
    ],
    [
      { limit: 'x' },
      'invalid_search_limit',
      'Invalid value type at `.limit`: expected a positive integer, but found a string: `"x"`',
    ],
    [
      { offset: null },
      'invalid_search_offset',
      'Invalid value type at `.offset`: expected a positive integer, but found null',
    ],
    [
      { page: -1 },
      'invalid_search_page',
      'Invalid value type at `.page`: expected a positive integer, but found a negative integer: `-1`',
    ],
    [
      { hitsPerPage: -1 },
      'invalid_search_hits_per_page',
      'Invalid value type at `.hitsPerPage`: expected a positive integer, but found a negative integer: `-1`',
    ],
    [
      { cropLength: -1 },
      'invalid_search_crop_length',
      'Invalid value type at `.cropLength`: expected a positive integer, but found a negative integer: `-1`',
    ],
    [{ q: 5 }, 'invalid_search_q', 'Invalid value type at `.q`: expected a string, but found a positive integer: `5`'],
    [
      { filter: 5 },
      'invalid_search_filter',
      'Invalid syntax for the filter parameter: `expected String, Array, found: 5`.',
    ],
    [
      { filter: [5] },
      'invalid_search_filter',
      'Invalid syntax for the filter parameter: `expected String, [String], found: 5`.',
    ],
    [
      { matchingStrategy: 5 },
      'invalid_search_matching_strategy',
      'Invalid value type at `.matchingStrategy`: expected a string, but found a positive integer: `5`',
    ],
    [
      { rankingScoreThreshold: 2 },
      'invalid_search_ranking_score_threshold',
      `Invalid value at \`.rankingScoreThreshold\`: ${THRESHOLD}`,
    ],
    [
      { hybrid: 5 },
      'invalid_search_hybrid_query',
      'Invalid value type at `.hybrid`: expected an object, but found a positive integer: `5`',
    ],
    [
      { hybrid: { embedder: 5 } },
      'invalid_search_embedder',
      'Invalid value type at `.hybrid.embedder`: expected a string, but found a positive integer: `5`',
    ],
    [
      { hybrid: { embedder: 'man', semanticRatio: 'x' } },
      'invalid_search_semantic_ratio',
      'Invalid value type at `.hybrid.semanticRatio`: expected a number, but found a string: `"x"`',
    ],
    [
      { vector: [1, null, 0], hybrid: { embedder: 'man' } },
      'invalid_search_vector',
      'Invalid value type at `.vector[1]`: expected a number, but found null',
    ],
    [
      { vector: [1, 'a', 0], hybrid: { embedder: 'man' } },
      'invalid_search_vector',
      'Invalid value type at `.vector[1]`: expected a number, but found a string: `"a"`',
    ],
    [
      { vector: 'x', hybrid: { embedder: 'man' } },
      'invalid_search_vector',
      'Invalid value type at `.vector`: expected an array, but found a string: `"x"`',
    ],
    // The first bad field in the body's order, whatever the schema's.
    [
      { limit: -1, offset: -1 },
      'invalid_search_limit',
      'Invalid value type at `.limit`: expected a positive integer, but found a negative integer: `-1`',
    ],
    [
      { offset: -1, q: 5 },
      'invalid_search_offset',
      'Invalid value type at `.offset`: expected a positive integer, but found a negative integer: `-1`',
    ],
    [
      { vector: [1, 'a', 0], offset: -1, hybrid: { embedder: 'man' } },
      'invalid_search_vector',
      'Invalid value type at `.vector[1]`: expected a number, but found a string: `"a"`',
    ],
    [
      { offset: -1, vector: [1, 'a', 0], hybrid: { embedder: 'man' } },
      'invalid_search_offset',
      'Invalid value type at `.offset`: expected a positive integer, but found a negative integer: `-1`',
    ],
  ])('when the body is %j, then it answers %s', async (body, code, message) => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { body });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code, message });
  });

  it('when the vector is well formed, then it reaches the engine whole', async () => {
    const r = await s.api('POST', `/indexes/${uid}/documents`, {
      body: [
        { id: 1, _vectors: { man: [0.25, -1.5, 3] } },
        { id: 2, _vectors: { man: [1, 0, 0] } },
      ],
    });
    expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
    const hit = await s.api('POST', `/indexes/${uid}/search`, {
      body: { vector: [0.25, -1.5, 3], hybrid: { embedder: 'man', semanticRatio: 1 }, showRankingScore: true },
    });
    expect(hit.body.hits.map((h: { id: number; _rankingScore: number }) => [h.id, h._rankingScore])).toEqual([
      [1, 1],
      [2, expect.any(Number)],
    ]);
  });
});

describe('a refused GET search', () => {
  it.each([
    [
      'limit=-1',
      'invalid_search_limit',
      'Invalid value in parameter `limit`: could not parse `-1` as a positive integer',
    ],
    [
      'offset=1.5',
      'invalid_search_offset',
      'Invalid value in parameter `offset`: could not parse `1.5` as a positive integer',
    ],
    [
      'cropLength=-3',
      'invalid_search_crop_length',
      'Invalid value in parameter `cropLength`: could not parse `-3` as a positive integer',
    ],
    [
      'rankingScoreThreshold=x',
      'invalid_search_ranking_score_threshold',
      `Invalid value in parameter \`rankingScoreThreshold\`: ${THRESHOLD}`,
    ],
    [
      'vector=1,x,0&hybridEmbedder=man',
      'invalid_search_vector',
      'Invalid value in parameter `vector`: invalid float literal',
    ],
    [
      'hybridSemanticRatio=2&hybridEmbedder=man&q=a',
      'invalid_search_semantic_ratio',
      `Invalid value in parameter \`hybridSemanticRatio\`: ${RATIO}`,
    ],
    [
      'hybridSemanticRatio=x&hybridEmbedder=man&q=a',
      'invalid_search_semantic_ratio',
      `Invalid value in parameter \`hybridSemanticRatio\`: ${RATIO}`,
    ],
    // Empty entries of the list are skipped: two numbers, not three.
    [
      'vector=1,,0&hybridEmbedder=man',
      'invalid_vector_dimensions',
      'Invalid vector dimensions: expected: `3`, found: `2`.',
    ],
  ])('when the query string is %s, then it answers %s', async (query, code, message) => {
    const r = await s.api('GET', `/indexes/${uid}/search?${query}`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code, message });
  });

  it('when a count has a plus sign, then it is read as Rust reads it', async () => {
    const r = await s.api('GET', `/indexes/${uid}/search?limit=%2B5`);
    expect(r.status).toBe(200);
    expect(r.body.limit).toBe(5);
  });

  it('when a locale is unknown, then the accepted ones are listed two-letter codes first, each alphabetically', async () => {
    const r = await s.api('GET', `/indexes/${uid}/search?locales=xx`);
    expect(r.body.code).toBe('invalid_search_locales');
    expect(r.body.message).toMatch(
      /^Invalid value in parameter `locales`: Unsupported locale `xx`, expected one of af, ak, am, ar, az, be, bg, bn, ca, cs, /,
    );
    expect(r.body.message).toMatch(/, zh, zu, afr, aka, amh, .*, ces, cmn, dan, .*, zho, zul$/);
  });
});

describe('a refused request elsewhere', () => {
  // Meilisearch's answers to the same requests, on an index named `m` (here the test's own).
  const on = (text: string) => text.replace(/\bm\b(?=["/]|$)/g, uid);
  it.each([
    ['POST', '/indexes/m/documents/delete', {}, 'missing_document_filter', 'Missing field `filter`'],
    [
      'POST',
      '/multi-search',
      { queries: [{ indexUid: 'm', limit: -1 }] },
      'invalid_search_limit',
      'Invalid value type at `.queries[0].limit`: expected a positive integer, but found a negative integer: `-1`',
    ],
    [
      'POST',
      '/multi-search',
      { queries: [{ indexUid: 5 }] },
      'invalid_index_uid',
      'Invalid value type at `.queries[0].indexUid`: expected a string, but found a positive integer: `5`',
    ],
    [
      'POST',
      '/multi-search',
      { queries: 5 },
      'bad_request',
      'Invalid value type at `.queries`: expected an array, but found a positive integer: `5`',
    ],
    [
      'POST',
      '/multi-search',
      { federation: { limit: -1 }, queries: [] },
      'invalid_search_limit',
      'Invalid value type at `.federation.limit`: expected a positive integer, but found a negative integer: `-1`',
    ],
    [
      'POST',
      '/multi-search',
      { federation: { offset: 'x' }, queries: [] },
      'invalid_search_offset',
      'Invalid value type at `.federation.offset`: expected a positive integer, but found a string: `"x"`',
    ],
    [
      'POST',
      '/multi-search',
      { queries: [{ indexUid: 'm', federationOptions: { weight: -1 } }], federation: {} },
      'invalid_multi_search_weight',
      'Invalid value at `.queries[0].federationOptions.weight`: the value of `weight` is invalid, expected a positive float (>= 0.0).',
    ],
    [
      'GET',
      '/tasks?statuses=nope',
      undefined,
      'invalid_task_statuses',
      'Invalid value in parameter `statuses`: `nope` is not a valid task status. Available statuses are `enqueued`, `processing`, `succeeded`, `failed`, `canceled`.',
    ],
    [
      'POST',
      '/indexes',
      { uid: 5 },
      'invalid_index_uid',
      'Invalid value type at `.uid`: expected a string, but found a positive integer: `5`',
    ],
    [
      'POST',
      '/indexes',
      { uid: 'bad uid' },
      'invalid_index_uid',
      'Invalid value at `.uid`: `bad uid` is not a valid index uid. Index uid can be an integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.',
    ],
    [
      'POST',
      '/swap-indexes',
      [{ indexes: 'x' }],
      'invalid_swap_indexes',
      'Invalid value type at `[0].indexes`: expected an array, but found a string: `"x"`',
    ],
    [
      'POST',
      '/swap-indexes',
      [{ indexes: ['a'] }],
      'invalid_swap_indexes',
      'Two indexes must be given for each swap. The list `["a"]` contains 1 indexes.',
    ],
    [
      'POST',
      '/swap-indexes',
      5,
      'bad_request',
      'Invalid value type: expected an array, but found a positive integer: `5`',
    ],
    [
      'PATCH',
      '/indexes/m',
      { uid: 5 },
      'invalid_index_uid',
      'Invalid value type at `.uid`: expected a string, but found a positive integer: `5`',
    ],
    [
      'POST',
      '/multi-search',
      { federation: { page: -1 }, queries: [] },
      'invalid_search_page',
      'Invalid value type at `.federation.page`: expected a positive integer, but found a negative integer: `-1`',
    ],
    [
      'POST',
      '/multi-search',
      { federation: { hitsPerPage: 'x' }, queries: [] },
      'invalid_search_hits_per_page',
      'Invalid value type at `.federation.hitsPerPage`: expected a positive integer, but found a string: `"x"`',
    ],
    [
      'POST',
      '/multi-search',
      { queries: [{ indexUid: 'bad uid' }] },
      'invalid_index_uid',
      'Invalid value at `.queries[0].indexUid`: `bad uid` is not a valid index uid. Index uid can be an integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.',
    ],
    [
      'POST',
      '/multi-search',
      { queries: [{ limit: -1, indexUid: 5 }] },
      'invalid_search_limit',
      'Invalid value type at `.queries[0].limit`: expected a positive integer, but found a negative integer: `-1`',
    ],
    [
      'POST',
      '/multi-search',
      { queries: [{ indexUid: 'm', matchingStrategy: 'any' }] },
      'invalid_search_matching_strategy',
      'Unknown value `any` at `.queries[0].matchingStrategy`: expected one of `last`, `all`, `frequency`',
    ],
    ['POST', '/multi-search', {}, 'bad_request', 'Missing field `queries`'],
    [
      'POST',
      '/multi-search',
      { queries: [{ indexUid: 'm', hybrid: { semanticRatio: 0.5 } }] },
      'invalid_search_hybrid_query',
      'Missing field `embedder` inside `.queries[0].hybrid`',
    ],
    [
      'POST',
      '/multi-search',
      { federation: { mergeFacets: { maxValuesPerFacet: -1 } }, queries: [] },
      'invalid_multi_search_max_values_per_facet',
      'Invalid value type at `.federation.mergeFacets.maxValuesPerFacet`: expected a positive integer, but found a negative integer: `-1`',
    ],
    [
      'POST',
      '/multi-search',
      { federation: {}, queries: [{ indexUid: 'm', limit: 5 }] },
      'invalid_multi_search_query_pagination',
      'Inside `.queries[0]`: Using pagination options is not allowed in federated queries.\n - Hint: remove `limit` from the query or remove `federation` from the request\n - Hint: pass `federation.limit` and `federation.offset` for pagination in federated search',
    ],
    [
      'POST',
      '/multi-search',
      { federation: {}, queries: [{ indexUid: 'm', offset: -1 }] },
      'invalid_search_offset',
      'Invalid value type at `.queries[0].offset`: expected a positive integer, but found a negative integer: `-1`',
    ],
    [
      'POST',
      '/multi-search',
      { queries: [{ limit: 5 }] },
      'missing_index_uid',
      'Missing field `indexUid` inside `.queries[0]`',
    ],
    [
      'POST',
      '/multi-search',
      { queries: [{ indexUid: 'm', hybrid: 5 }] },
      'invalid_search_hybrid_query',
      'Invalid value type at `.queries[0].hybrid`: expected an object, but found a positive integer: `5`',
    ],
    [
      'POST',
      '/multi-search',
      { queries: [{ indexUid: 'nope', limit: -1 }] },
      'invalid_search_limit',
      'Invalid value type at `.queries[0].limit`: expected a positive integer, but found a negative integer: `-1`',
    ],
    [
      'POST',
      '/multi-search',
      { queries: [{ indexUid: 'm', filter: 5 }] },
      'invalid_search_filter',
      'Inside `.queries[0]`: Invalid syntax for the filter parameter: `expected String, Array, found: 5`.',
    ],
    [
      'POST',
      '/multi-search',
      { queries: [{ indexUid: 'm', vector: [1, 'a'], hybrid: { embedder: 'x' } }] },
      'invalid_search_vector',
      'Invalid value type at `.queries[0].vector[1]`: expected a number, but found a string: `"a"`',
    ],
    [
      'POST',
      '/multi-search',
      { queries: [{ indexUid: 'm', hybrid: { embedder: 'x', semanticRatio: 3 } }] },
      'invalid_search_semantic_ratio',
      'Invalid value at `.queries[0].hybrid.semanticRatio`: the value of `semanticRatio` is invalid, expected a float between `0.0` and `1.0`.',
    ],
    [
      'POST',
      '/multi-search',
      { federation: { nope: 1 }, queries: [] },
      'bad_request',
      'Unknown field `nope` inside `.federation`: expected one of `limit`, `offset`, `page`, `hitsPerPage`, `facetsByIndex`, `mergeFacets`, `distinct`, `showPerformanceDetails`, `personalize`',
    ],
    [
      'POST',
      '/multi-search',
      { federation: 5, queries: [] },
      'bad_request',
      'Invalid value type at `.federation`: expected an object, but found a positive integer: `5`',
    ],
    [
      'POST',
      '/multi-search',
      { queries: [5] },
      'bad_request',
      'Invalid value type at `.queries[0]`: expected an object, but found a positive integer: `5`',
    ],
    [
      'POST',
      '/swap-indexes',
      [{ indexes: ['a', 'b c'] }],
      'invalid_swap_indexes',
      'Invalid value at `[0].indexes[1]`: `b c` is not a valid index uid. Index uid can be an integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.',
    ],
    [
      'PATCH',
      '/indexes/m',
      { uid: 'bad uid' },
      'invalid_index_uid',
      '`bad uid` is not a valid index uid. Index uid can be an integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.',
    ],
    [
      'POST',
      '/indexes',
      { uid: 'm2', primaryKey: 5 },
      'invalid_index_primary_key',
      'Invalid value type at `.primaryKey`: expected a string, but found a positive integer: `5`',
    ],
    [
      'POST',
      '/indexes/m/documents/fetch',
      { nope: 1 },
      'bad_request',
      'Unknown field `nope`: expected one of `offset`, `limit`, `fields`, `retrieveVectors`, `ids`, `filter`, `sort`, `useNetwork`',
    ],
    [
      'POST',
      '/keys',
      { actions: ['search'], indexes: ['m'], expiresAt: null, nope: 1 },
      'bad_request',
      'Unknown field `nope`: expected one of `description`, `name`, `uid`, `actions`, `indexes`, `expiresAt`',
    ],
    [
      'PATCH',
      '/keys/1',
      { actions: ['search'] },
      'immutable_api_key_actions',
      'Immutable field `actions`: expected one of `description`, `name`',
    ],
    [
      'GET',
      '/tasks?nope=1',
      undefined,
      'bad_request',
      'Unknown parameter `nope`: expected one of `limit`, `from`, `reverse`, `batchUids`, `uids`, `canceledBy`, `types`, `statuses`, `indexUids`, `afterEnqueuedAt`, `beforeEnqueuedAt`, `afterStartedAt`, `beforeStartedAt`, `afterFinishedAt`, `beforeFinishedAt`',
    ],
    [
      'POST',
      '/indexes/m/similar',
      { id: 1, embedder: 'man', nope: 1 },
      'bad_request',
      'Unknown field `nope`: expected one of `id`, `offset`, `limit`, `filter`, `embedder`, `attributesToRetrieve`, `retrieveVectors`, `showRankingScore`, `showRankingScoreDetails`, `showPerformanceDetails`, `rankingScoreThreshold`',
    ],
    [
      'POST',
      '/indexes/m/similar',
      { id: {}, embedder: 'man' },
      'invalid_similar_id',
      'Invalid value at `.id`: Document identifier `{}` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.',
    ],
    [
      'POST',
      '/indexes/m/similar',
      { id: 'a b', embedder: 'man' },
      'invalid_similar_id',
      'Invalid value at `.id`: Document identifier `"a b"` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.',
    ],
    [
      'POST',
      '/indexes/m/similar',
      { id: 1.5, embedder: 'man' },
      'invalid_similar_id',
      'Invalid value at `.id`: Document identifier `1.5` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.',
    ],
    [
      'POST',
      '/indexes/m/similar',
      { id: {}, embedder: 'man' },
      'invalid_similar_id',
      'Invalid value at `.id`: Document identifier `{}` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.',
    ],
    [
      'POST',
      '/indexes/m/similar',
      { id: [], embedder: 'man' },
      'invalid_similar_id',
      'Invalid value at `.id`: Document identifier `[]` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.',
    ],
    [
      'POST',
      '/indexes/m/similar',
      { id: true, embedder: 'man' },
      'invalid_similar_id',
      'Invalid value at `.id`: Document identifier `true` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.',
    ],
    [
      'POST',
      '/indexes/m/similar',
      { id: null, embedder: 'man' },
      'invalid_similar_id',
      'Invalid value at `.id`: Document identifier `null` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.',
    ],
    [
      'GET',
      '/indexes/m/similar?id=a%20b&embedder=man',
      undefined,
      'invalid_similar_id',
      'Invalid value at `.id`: Document identifier `"a b"` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.',
    ],
    [
      'PATCH',
      '/keys/nope',
      { nope: 1, actions: [] },
      'bad_request',
      'Unknown field `nope`: expected one of `description`, `name`',
    ],
  ] as Array<[string, string, unknown, string, string]>)(
    'when %s %s sends %j, then it answers %s',
    async (method, path, body, code, message) => {
      const r = await s.api(method, on(path), body === undefined ? {} : { body: JSON.parse(on(JSON.stringify(body))) });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code, message });
    },
  );

  it('when a feature or an action is unknown, then the accepted ones are listed in the order Meilisearch lists them', async () => {
    const f = await s.api('PATCH', '/experimental-features', { body: { nope: true } });
    expect(f.body.message).toBe(
      'Unknown field `nope`: expected one of `metrics`, `logsRoute`, `editDocumentsByFunction`, `containsFilter`, `dynamicSearchRules`, `network`, `getTaskDocumentsRoute`, `taskQueueCompactionRoute`, `compositeEmbedders`, `chatCompletions`, `multimodal`, `foreignKeys`, `disableDocumentsFetchQueue`, `legacySearch`, `renderRoute`',
    );
    expect(Object.keys((await s.api('GET', '/experimental-features')).body)).toEqual([
      'metrics',
      'logsRoute',
      'editDocumentsByFunction',
      'containsFilter',
      'dynamicSearchRules',
      'network',
      'getTaskDocumentsRoute',
      'taskQueueCompactionRoute',
      'compositeEmbedders',
      'chatCompletions',
      'multimodal',
      'foreignKeys',
      'disableDocumentsFetchQueue',
      'legacySearch',
      'renderRoute',
    ]);
    const k = await s.api('POST', '/keys', { body: { actions: ['nope'], indexes: ['*'], expiresAt: null } });
    expect(k.body.code).toBe('invalid_api_key_actions');
    expect(k.body.message).toMatch(
      /^Unknown value `nope` at `\.actions\[0\]`: expected one of `\*`, `search`, `documents\.\*`, .*, `tasks\.\*`, `tasks\.cancel`, `tasks\.delete`, `tasks\.get`, .*, `chatsSettings\.update`, `\*\.get`, `webhooks\.get`, .*, `dynamicSearchRules\.\*`$/,
    );
  });
});

describe('a malformed payload of documents', () => {
  it.each([
    ['{"id":', 'EOF while parsing a value at line 1 column 6'],
    ['[{"id":1},', 'EOF while parsing a value at line 1 column 10'],
    ['nope', 'expected ident at line 1 column 2'],
  ])("when the body is %s, then its error opens as Meilisearch's does", async (raw, detail) => {
    const r = await s.api('POST', `/indexes/${uid}/documents`, { raw, contentType: 'application/json' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      code: 'malformed_payload',
      message: `The \`json\` payload provided is malformed. \`Couldn't serialize document value: ${detail}\`.`,
    });
  });
});

describe('a known path asked with another method', () => {
  it.each([
    ['PUT', '/indexes/m/settings/typo-tolerance', 'GET, PATCH, DELETE'],
    ['POST', '/indexes/m/settings/typo-tolerance', 'GET, PATCH, DELETE'],
    ['PUT', '/health', 'GET'],
    ['PUT', '/indexes/m/search', 'GET, POST'],
    ['PATCH', '/tasks', 'GET, DELETE'],
  ])('when %s %s, then it is 405 with Allow: %s and no body', async (method, path, allow) => {
    const r = await fetch(`${s.url}${path.replace('/m/', `/${uid}/`)}`, {
      method,
      headers: { Authorization: `Bearer ${MASTER_KEY}` },
    });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe(allow);
    expect(await r.text()).toBe('');
  });

  it('when the path is no route, then it stays a 404', async () => {
    for (const path of ['/nope', `/indexes/${uid}/documents/1/x`]) {
      const r = await fetch(`${s.url}${path}`, {
        method: 'DELETE',
        headers: { Authorization: `Bearer ${MASTER_KEY}` },
      });
      expect(r.status).toBe(404);
    }
  });
});
