/**
 * What a request is read as, and which of its faults is answered first, over HTTP. Every
 * expectation is Meilisearch 1.50's answer to the same request, read from the reference binary:
 * - a GET route's `filter` is JSON when it parses as JSON (an array of conditions, a quoted
 *   string), the text itself otherwise, and a JSON value that is no filter is refused;
 * - a GET parameter outside its words is named "for parameter", not "at" a path;
 * - a route reads its query string and body before the index's name (the extractors run before
 *   the handler), except a deletion by filter, whose filter's type is checked after the name,
 *   and the fields route, which looks the name up as given;
 * - a body's first wrong field in its order is answered, whichever check reads it;
 * - a multi-search reads every query's shape before it looks at any query further.
 */
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
let uid: string;
const BAD = encodeURIComponent('bad uid!');
const BAD_UID =
  '`bad uid!` is not a valid index uid. Index uid can be an integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.';

beforeAll(async () => {
  s = await startTestServer();
  uid = uniqueIndex('order');
  const add = await s.api('POST', `/indexes/${uid}/documents`, {
    body: [
      { id: 1, t: 'hello' },
      { id: 2, t: 'world' },
    ],
  });
  expect((await s.waitTask(add.body.taskUid)).status).toBe('succeeded');
  const set = await s.api('PATCH', `/indexes/${uid}/settings`, { body: { filterableAttributes: ['t', 'id'] } });
  expect((await s.waitTask(set.body.taskUid)).status).toBe('succeeded');
});
afterAll(async () => {
  await s.close();
});

const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

describe('a GET filter', () => {
  it.each([
    ['t = hello', [1]],
    ['"t = hello"', [1]],
    ['["t = hello"]', [1]],
    ['[["t = hello", "t = world"]]', [1, 2]],
  ])('when it is %s, then it is read as Meilisearch reads it', async (filter, ids) => {
    for (const path of [`/indexes/${uid}/search`, `/indexes/${uid}/documents`]) {
      const r = await s.api('GET', `${path}?${q({ filter })}`);
      expect(r.status).toBe(200);
      const rows = (r.body.hits ?? r.body.results) as Array<{ id: number }>;
      expect(rows.map((d) => d.id).sort()).toEqual(ids);
    }
  });

  it.each([
    ['1', 'expected String, Array, found: 1'],
    ['null', 'expected String, Array, found: null'],
    ['true', 'expected String, Array, found: true'],
    ['{}', 'expected String, Array, found: {}'],
    ['2.5', 'expected String, Array, found: 2.5'],
    ['[1]', 'expected String, [String], found: 1'],
  ])('when it is the JSON %s, then it is refused as no filter', async (filter, why) => {
    const message = `Invalid syntax for the filter parameter: \`${why}\`.`;
    const search = await s.api('GET', `/indexes/${uid}/search?${q({ filter })}`);
    expect({ status: search.status, body: search.body }).toMatchObject({
      status: 400,
      body: { code: 'invalid_search_filter', message },
    });
    if (why.includes('[String]')) return;
    const docs = await s.api('GET', `/indexes/${uid}/documents?${q({ filter })}`);
    expect({ status: docs.status, body: docs.body }).toMatchObject({
      status: 400,
      body: { code: 'invalid_document_filter', message },
    });
  });

  it('when it is a quoted string that is no condition, then the filter syntax error is answered', async () => {
    const r = await s.api('GET', `/indexes/${uid}/search?${q({ filter: '"1"' })}`);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_search_filter');
    expect(r.body.message).toMatch(/^Was expecting an operation `=`/);
  });
});

describe('a GET parameter outside its words', () => {
  it.each([
    ['frequencyx', 'did you mean `frequency`? '],
    ['', ''],
  ])('when matchingStrategy is "%s", then it is named "for parameter"', async (value, suggestion) => {
    const r = await s.api('GET', `/indexes/${uid}/search?${q({ matchingStrategy: value })}`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      code: 'invalid_search_matching_strategy',
      message: `Unknown value \`${value}\` for parameter \`matchingStrategy\`: ${suggestion}expected one of \`last\`, \`all\`, \`frequency\``,
    });
  });
});

describe('a request with a bad index name and a bad body', () => {
  it.each([
    [
      'POST',
      'search',
      { hybrid: 'x' },
      'invalid_search_hybrid_query',
      'Invalid value type at `.hybrid`: expected an object, but found a string: `"x"`',
    ],
    [
      'POST',
      'facet-search',
      { facetName: 1 },
      'invalid_facet_search_facet_name',
      'Invalid value type at `.facetName`: expected a string, but found a positive integer: `1`',
    ],
    [
      'POST',
      'documents/fetch',
      { limit: 'x' },
      'invalid_document_limit',
      'Invalid value type at `.limit`: expected a positive integer, but found a string: `"x"`',
    ],
    ['POST', 'similar', { id: [] }, 'bad_request', 'Missing field `embedder`'],
    [
      'PATCH',
      'settings',
      { rankingRules: 1 },
      'invalid_settings_ranking_rules',
      'Invalid value type at `.rankingRules`: expected an array, but found a positive integer: `1`',
    ],
    [
      'PUT',
      'settings/ranking-rules',
      1,
      'invalid_settings_ranking_rules',
      'Invalid value type: expected an array, but found a positive integer: `1`',
    ],
    [
      'PATCH',
      '',
      { primaryKey: 1 },
      'invalid_index_primary_key',
      'Invalid value type at `.primaryKey`: expected a string, but found a positive integer: `1`',
    ],
    [
      'POST',
      'documents/edit',
      { function: 1 },
      'invalid_document_edition_function_filter',
      'Invalid value type at `.function`: expected a string, but found a positive integer: `1`',
    ],
    [
      'POST',
      'fields',
      { offset: 'x' },
      'invalid_index_offset',
      'Invalid value type at `.offset`: expected a positive integer, but found a string: `"x"`',
    ],
  ])('when it is %s %s, then the body is answered first', async (method, route, body, code, message) => {
    const r = await s.api(method, `/indexes/${BAD}${route ? `/${route}` : ''}`, { body });
    expect({ status: r.status, body: r.body }).toMatchObject({ status: 400, body: { code, message } });
  });

  it('when the body is good, then the name is refused', async () => {
    const r = await s.api('POST', `/indexes/${BAD}/search`, { body: { q: 'x' } });
    expect(r.body).toMatchObject({ code: 'invalid_index_uid', message: BAD_UID });
  });

  it('when it is a deletion by filter, then the name is answered before the filter', async () => {
    const r = await s.api('POST', `/indexes/${BAD}/documents/delete`, { body: { filter: 1 } });
    expect(r.body).toMatchObject({ code: 'invalid_index_uid', message: BAD_UID });
  });

  it('when it asks the fields with a good body, then the name is looked up as given', async () => {
    const r = await s.api('POST', `/indexes/${BAD}/fields`, { body: {} });
    expect({ status: r.status, body: r.body }).toMatchObject({
      status: 404,
      body: { code: 'index_not_found', message: 'Index `bad uid!` not found.' },
    });
  });

  it('when an edition is asked, then its parameters, its body and the feature come before the name', async () => {
    const param = await s.api('POST', `/indexes/${BAD}/documents/edit?customMetadata=1&x=2`, { body: { function: 1 } });
    expect(param.body).toMatchObject({
      code: 'bad_request',
      message: 'Unknown parameter `x`: expected one of `customMetadata`',
    });
    const feature = await s.api('POST', `/indexes/${BAD}/documents/edit`, { body: { function: 'x' } });
    expect(feature.body.code).toBe('feature_not_enabled');
  });

  it('when index stats are asked with a bad parameter, then the parameter is answered first', async () => {
    const r = await s.api('GET', `/indexes/${BAD}/stats?sizeFormat=x`);
    expect(r.body).toMatchObject({
      code: 'invalid_stats_size_format',
      message: 'Unknown value `x` for parameter `sizeFormat`: expected one of `human`, `raw`',
    });
  });
});

describe('a body with several faults', () => {
  it('when hybrid comes before another wrong field, then hybrid is answered', async () => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { body: { hybrid: 'x', q: 'a', page: true } });
    expect(r.body).toMatchObject({
      code: 'invalid_search_hybrid_query',
      message: 'Invalid value type at `.hybrid`: expected an object, but found a string: `"x"`',
    });
  });

  it('when hybrid comes after another wrong field, then that field is answered', async () => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { body: { page: true, hybrid: 'x' } });
    expect(r.body).toMatchObject({
      code: 'invalid_search_page',
      message: 'Invalid value type at `.page`: expected a positive integer, but found a boolean: `true`',
    });
  });

  it('when a later query of a multi-search has a wrong type, then it is answered before an earlier unknown index', async () => {
    const r = await s.api('POST', '/multi-search', {
      body: {
        queries: [
          { indexUid: 'nope', q: '' },
          { indexUid: uid, facets: [1, 2] },
        ],
      },
    });
    expect(r.body).toMatchObject({
      code: 'invalid_search_facets',
      message: 'Invalid value type at `.queries[1].facets[0]`: expected a string, but found a positive integer: `1`',
    });
  });

  it('when a later federated query has a wrong type, then it is answered before an earlier query refused by the federation', async () => {
    const r = await s.api('POST', '/multi-search', {
      body: {
        queries: [
          { indexUid: uid, showPerformanceDetails: false },
          { indexUid: uid, showRankingScoreDetails: null },
        ],
        federation: {},
      },
    });
    expect(r.body).toMatchObject({
      code: 'invalid_search_show_ranking_score_details',
      message: 'Invalid value type at `.queries[1].showRankingScoreDetails`: expected a boolean, but found null',
    });
  });
});

describe('a search of an index that does not exist', () => {
  const SYNTAX = 'Was expecting a value but instead got nothing.\n5:5 a = ';
  it('when its filter does not parse, then the filter is answered first, as Meilisearch parses it before the lookup', async () => {
    const post = await s.api('POST', '/indexes/nope/search', { body: { filter: 'a = ' } });
    expect(post.body).toMatchObject({ code: 'invalid_search_filter', message: SYNTAX });
    const get = await s.api('GET', `/indexes/nope/search?${q({ filter: 'a = ' })}`);
    expect(get.body).toMatchObject({ code: 'invalid_search_filter', message: SYNTAX });
    for (const federation of [undefined, {}]) {
      const multi = await s.api('POST', '/multi-search', {
        body: { queries: [{ indexUid: 'nope', filter: 'a = ' }], ...(federation ? { federation } : {}) },
      });
      expect(multi.body).toMatchObject({ code: 'invalid_search_filter', message: `Inside \`.queries[0]\`: ${SYNTAX}` });
    }
    const contains = await s.api('POST', '/indexes/nope/search', { body: { filter: 'a CONTAINS b' } });
    expect(contains.body.code).toBe('feature_not_enabled');
  });

  it('when its filter parses, or another route reads it, then the index is not found', async () => {
    const search = await s.api('POST', '/indexes/nope/search', { body: { filter: 'a = 1', sort: ['a'] } });
    expect(search.status).toBe(404);
    expect(search.body.code).toBe('index_not_found');
    for (const [route, body] of [
      ['documents/fetch', { filter: 'a = ' }],
      ['facet-search', { facetName: 'x', filter: 'a = ' }],
      ['similar', { id: 1, embedder: 'x', filter: 'a = ' }],
    ] as const) {
      const r = await s.api('POST', `/indexes/nope/${route}`, { body });
      expect({ route, code: r.body.code }).toEqual({ route, code: 'index_not_found' });
    }
  });
});

describe('words of refused values', () => {
  const ID_RULE =
    'is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.';
  it('when a fetched id is no identifier, then it is shown as JSON once, in the body and in the GET form', async () => {
    const post = await s.api('POST', `/indexes/${uid}/documents/fetch`, { body: { ids: ['{"a":1}'] } });
    expect(post.body.message).toBe(`In \`.ids[0]\`: Document identifier \`"{\\"a\\":1}"\` ${ID_RULE}`);
    const get = await s.api('GET', `/indexes/${uid}/documents?${q({ ids: 'a b' })}`);
    expect(get.body.message).toBe(`In \`.ids[0]\`: Document identifier \`"a b"\` ${ID_RULE}`);
  });

  it.each([
    [
      '_geoPoint(1):asc',
      'Invalid syntax for the geo parameter: expected expression formated like `_geoPoint(latitude, longitude)` and ending by `:asc` or `:desc`, found `_geoPoint(1)`.',
    ],
    ['_geoPoint(100,0):asc', 'Bad latitude `100`. Latitude must be contained between -90 and 90 degrees.'],
    [
      '_geoPoint(0,200):asc',
      'Bad longitude `200`. Longitude must be contained between -180 and 180 degrees. Hint: try using `-160` instead.',
    ],
    [
      'a b:asc',
      'Index `{uid}`: Attribute `a b` is not sortable. This index does not have configured sortable attributes.',
    ],
  ])('when the sort is %s, then it is refused in Meilisearch words', async (sort, message) => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { body: { sort: [sort] } });
    expect(r.body).toMatchObject({ code: 'invalid_search_sort', message: message.replace('{uid}', uid) });
  });
});

describe('a search with several faults, read in Meilisearch order', () => {
  const search = (body: Record<string, unknown>) => s.api('POST', `/indexes/${uid}/search`, { body });
  it.each([
    [{ filter: {}, vector: [1, 2, 3] }, 'invalid_search_filter'],
    [{ filter: 'nope = 3', vector: [1, 2, 3] }, 'missing_search_hybrid'],
    [{ filter: 'nope = 3', media: { image: 'x' }, vector: [1, 2] }, 'invalid_search_media_and_vector'],
    [{ filter: 'nope = 3', sort: ['year'] }, 'invalid_search_sort'],
    [{ filter: 'nope = 3', sort: ['_geoPoint(1):asc'] }, 'invalid_search_sort'],
    [{ distinct: 'nope', attributesToSearchOn: ['nope'] }, 'invalid_search_distinct'],
    [{ filter: 'nope = 3', distinct: 'nope' }, 'invalid_search_distinct'],
    [{ filter: 'nope = 3', sort: ['t:asc'] }, 'invalid_search_filter'],
    [{ q: 'hello', hybrid: { embedder: 'nope' }, sort: ['year'] }, 'invalid_search_embedder'],
    [{ hybrid: { embedder: 'nope' }, sort: ['year'] }, 'invalid_search_sort'],
    [{ sort: ['t:asc'], facets: ['nope'] }, 'invalid_search_sort'],
    [{ filter: 'nope = 1', facets: ['nope'] }, 'invalid_search_filter'],
  ])('when it is %j, then %s is answered', async (body, code) => {
    const r = await search(body);
    expect({ status: r.status, code: r.body.code }).toEqual({ status: 400, code });
  });

  it('when media and vector come together, then Meilisearch words are answered', async () => {
    const r = await search({ media: { image: 'x' }, vector: [1, 2] });
    expect(r.body.message).toBe('Invalid request: both `media` and `vector` parameters are present.');
  });

  it('when a facet search has a vector without hybrid, then that is answered before its filter and facet', async () => {
    const r = await s.api('POST', `/indexes/${uid}/facet-search`, {
      body: { facetName: 'nope', vector: [0.1, 0.2, 0.3], filter: {} },
    });
    expect(r.body).toMatchObject({
      code: 'missing_search_hybrid',
      message: 'Invalid request: missing `hybrid` parameter when `vector` or `media` are present.',
    });
  });
});

describe("a facet search's attributesToSearchOn", () => {
  it('when it names no searchable attribute, then it is refused with or without a query, after the filter syntax and before its filterability and the facet', async () => {
    const fuid = uniqueIndex('facet-on');
    const add = await s.api('POST', `/indexes/${fuid}/documents`, { body: [{ id: 1, t: 'hello', a: 'x', g: 2 }] });
    expect((await s.waitTask(add.body.taskUid)).status).toBe('succeeded');
    const set = await s.api('PATCH', `/indexes/${fuid}/settings`, {
      body: { filterableAttributes: ['t'], searchableAttributes: ['t'] },
    });
    expect((await s.waitTask(set.body.taskUid)).status).toBe('succeeded');
    const expected = {
      code: 'invalid_search_attributes_to_search_on',
      message: expect.stringContaining('Attribute `nope` is not searchable.'),
    };
    for (const body of [
      { facetName: 't', attributesToSearchOn: ['nope'] },
      { facetName: 't', q: 'hello', attributesToSearchOn: ['nope'] },
      { facetName: 'zz', attributesToSearchOn: ['nope'] },
      { facetName: 't', filter: 'unknown = 2', attributesToSearchOn: ['nope'] },
    ]) {
      const r = await s.api('POST', `/indexes/${fuid}/facet-search`, { body });
      expect(r.body).toMatchObject(expected);
    }
    const syntax = await s.api('POST', `/indexes/${fuid}/facet-search`, {
      body: { facetName: 't', filter: 'g =', attributesToSearchOn: ['nope'] },
    });
    expect(syntax.body.code).toBe('invalid_search_filter');
    const every = await s.api('POST', `/indexes/${fuid}/facet-search`, {
      body: { facetName: 't', attributesToSearchOn: ['*'] },
    });
    expect(every.status).toBe(200);
  });
});

describe('a hybrid search that embeds nothing', () => {
  it('when it is a placeholder or keywords only, then its missing embedder is no error', async () => {
    for (const body of [
      { hybrid: { embedder: 'nope' } },
      { q: '', hybrid: { embedder: 'nope', semanticRatio: 1 } },
      { q: 'hello', hybrid: { embedder: 'nope', semanticRatio: 0 } },
    ]) {
      const r = await s.api('POST', `/indexes/${uid}/search`, { body });
      expect({ body, status: r.status }).toEqual({ body, status: 200 });
    }
    const facets = await s.api('POST', `/indexes/${uid}/facet-search`, {
      body: { facetName: 't', hybrid: { embedder: 'nope' } },
    });
    expect(facets.status).toBe(200);
    expect(facets.body.facetHits).toEqual([
      { value: 'hello', count: 1 },
      { value: 'world', count: 1 },
    ]);
  });

  it('when it must embed its query, then the missing embedder is refused', async () => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { body: { q: 'hello', hybrid: { embedder: 'nope' } } });
    expect(r.body).toMatchObject({
      code: 'invalid_search_embedder',
      message: 'Cannot find embedder with name `nope`.',
    });
  });
});

describe('a facet search with rankingScoreThreshold', () => {
  it('when a threshold is given, then only documents whose search score reaches it count, as on Meilisearch', async () => {
    const ft = uniqueIndex('ft');
    const add = await s.api('POST', `/indexes/${ft}/documents`, {
      body: [
        { id: 1, t: 'hello world', g: 'a' },
        { id: 2, t: 'hello', g: 'b' },
        { id: 3, t: 'hello there big blue world foo', g: 'c' },
        { id: 4, t: 'helo world', g: 'd' },
      ],
    });
    expect((await s.waitTask(add.body.taskUid)).status).toBe('succeeded');
    const set = await s.api('PATCH', `/indexes/${ft}/settings`, { body: { filterableAttributes: ['g'] } });
    expect((await s.waitTask(set.body.taskUid)).status).toBe('succeeded');
    const values = async (threshold: number, q: string | undefined = 'hello world') => {
      const r = await s.api('POST', `/indexes/${ft}/facet-search`, {
        body: { facetName: 'g', ...(q === undefined ? {} : { q }), rankingScoreThreshold: threshold },
      });
      expect(r.status).toBe(200);
      return r.body.facetHits.map((h: { value: string }) => h.value);
    };
    // The reference's scores for `hello world`: 1 (a), 0.87 (c), 0.83 (d), 0.5 (b).
    expect(await values(0.99)).toEqual(['a']);
    expect(await values(0.8)).toEqual(['a', 'c', 'd']);
    expect(await values(0.3)).toEqual(['a', 'b', 'c', 'd']);
    expect(await values(0)).toEqual(['a', 'b', 'c', 'd']);
    expect(await values(0.5, undefined)).toEqual(['a', 'b', 'c', 'd']);
  });
});

describe('errors named after their index, and missing fields last', () => {
  it("when a settings task fails in the engine, then its error names the index, as Meilisearch's batches do", async () => {
    // Valid alone, the second patch breaks the rule only against the settings the first left,
    // which the engine checks when the task runs.
    const first = await s.api('PATCH', `/indexes/${uid}/settings`, {
      body: { typoTolerance: { minWordSizeForTypos: { oneTypo: 5 } } },
    });
    expect((await s.waitTask(first.body.taskUid)).status).toBe('succeeded');
    const r = await s.api('PATCH', `/indexes/${uid}/settings`, {
      body: { typoTolerance: { minWordSizeForTypos: { twoTypos: 2 } } },
    });
    const t = await s.waitTask(r.body.taskUid);
    expect(t.status).toBe('failed');
    expect(t.error.message).toBe(
      `Index \`${uid}\`: \`minWordSizeForTypos\` setting is invalid. \`oneTypo\` and \`twoTypos\` fields should be between \`0\` and \`255\`, and \`twoTypos\` should be greater or equals to \`oneTypo\` but found \`oneTypo: 5\` and twoTypos: 2\`.`,
    );
  });

  it('when a facet search lacks facetName and another field is wrong, then the wrong field is answered first', async () => {
    const r = await s.api('POST', `/indexes/${uid}/facet-search`, { body: { q: 'kurosawa', facetQuery: {} } });
    expect(r.body).toMatchObject({
      code: 'invalid_facet_search_query',
      message: 'Invalid value type at `.facetQuery`: expected a string, but found an object: `{}`',
    });
    const missing = await s.api('POST', `/indexes/${uid}/facet-search`, { body: { q: 'kurosawa' } });
    expect(missing.body).toMatchObject({
      code: 'missing_facet_search_facet_name',
      message: 'Missing field `facetName`',
    });
  });
});

describe("a filter's type, read where Meilisearch reads it", () => {
  const shape = (found: string, expected = 'String, Array') =>
    `Invalid syntax for the filter parameter: \`expected ${expected}, found: ${found}\`.`;

  it('when a search has a filter of the wrong type and another wrong field, then the other field is answered, wherever the filter sits', async () => {
    for (const body of [
      { filter: 5, limit: 'x' },
      { limit: 'x', filter: 5 },
    ]) {
      const r = await s.api('POST', `/indexes/${uid}/search`, { body });
      expect(r.body).toMatchObject({
        code: 'invalid_search_limit',
        message: 'Invalid value type at `.limit`: expected a positive integer, but found a string: `"x"`',
      });
    }
    const sort = await s.api('POST', `/indexes/${uid}/search`, { body: { filter: [1], sort: 5 } });
    expect(sort.body.code).toBe('invalid_search_sort');
    const fetch = await s.api('POST', `/indexes/${uid}/documents/fetch`, { body: { filter: 5, limit: 'x' } });
    expect(fetch.body.code).toBe('invalid_document_limit');
  });

  it('when the filter alone is wrong, then its shape is answered with the route’s code', async () => {
    const search = await s.api('POST', `/indexes/${uid}/search`, { body: { filter: 5, vector: [1, 2] } });
    expect(search.body).toMatchObject({ code: 'invalid_search_filter', message: shape('5') });
    const fetch = await s.api('POST', `/indexes/${uid}/documents/fetch`, { body: { filter: [[1]] } });
    expect(fetch.body).toMatchObject({ code: 'invalid_document_filter', message: shape('1', 'String') });
    const facet = await s.api('POST', `/indexes/${uid}/facet-search`, { body: { facetName: 'zz', filter: 5 } });
    expect(facet.body).toMatchObject({ code: 'invalid_search_filter', message: shape('5') });
    // An object is no filter, whatever it holds (resolved `_foreign` ids travel apart).
    const object = { filter: 't = hello', foreignIds: [] };
    const forged = await s.api('POST', `/indexes/${uid}/search`, { body: { filter: object } });
    expect(forged.body).toMatchObject({ code: 'invalid_search_filter', message: shape(JSON.stringify(object)) });
  });

  it('when a multi-search query has a wrong filter, then a later query’s wrong type comes first, and the filter is answered inside its query', async () => {
    for (const federation of [undefined, {}]) {
      const r = await s.api('POST', '/multi-search', {
        body: {
          federation,
          queries: [
            { indexUid: uid, filter: 5 },
            { indexUid: uid, limit: 'x' },
          ],
        },
      });
      expect(r.body).toMatchObject({
        code: 'invalid_search_limit',
        message: 'Invalid value type at `.queries[1].limit`: expected a positive integer, but found a string: `"x"`',
      });
      const alone = await s.api('POST', '/multi-search', {
        body: { federation, queries: [{ indexUid: uid, filter: [3] }] },
      });
      expect(alone.body).toMatchObject({
        code: 'invalid_search_filter',
        message: `Inside \`.queries[0]\`: ${shape('3', 'String, [String]')}`,
      });
    }
  });

  it('when a deletion by filter has no filter or an empty one, then each is refused as Meilisearch refuses it', async () => {
    const del = (filter: unknown) => s.api('POST', `/indexes/${uid}/documents/delete`, { body: { filter } });
    expect((await del(null)).body).toMatchObject({ code: 'invalid_document_filter', message: shape('null') });
    expect((await del({})).body).toMatchObject({ code: 'invalid_document_filter', message: shape('{}') });
    expect((await del([5])).body).toMatchObject({ message: shape('5', 'String, [String]') });
    for (const empty of ['', '  ', [], [''], [[]]]) {
      const r = await del(empty);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({
        code: 'invalid_document_filter',
        message: 'Sending an empty filter is forbidden.',
      });
    }
  });

  it('when an edition has a wrong filter, then its shape names the index and an empty one does not', async () => {
    const f = await s.api('PATCH', '/experimental-features', { body: { editDocumentsByFunction: true } });
    expect(f.status).toBe(200);
    const edit = (filter: unknown) =>
      s.api('POST', `/indexes/${uid}/documents/edit`, { body: { function: 'doc', filter } });
    expect((await edit(5)).body).toMatchObject({
      code: 'invalid_document_filter',
      message: `Index \`${uid}\`: ${shape('5')}`,
    });
    for (const empty of ['', [], ['']]) {
      expect((await edit(empty)).body).toMatchObject({
        code: 'invalid_document_filter',
        message: 'Sending an empty filter is forbidden.',
      });
    }
  });
});

describe('counts past 2^53, read as Meilisearch reads a usize', () => {
  it('when limit, offset, page or hitsPerPage are past 2^53, then the search answers, as Meilisearch 1.50 does', async () => {
    const big = 2 ** 53;
    const r = await s.api('POST', `/indexes/${uid}/search`, { body: { limit: big, attributesToRetrieve: ['id'] } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ limit: big, offset: 0, estimatedTotalHits: 2 });
    expect(r.body.hits).toHaveLength(2);
    const far = await s.api('POST', `/indexes/${uid}/search`, { body: { offset: big, limit: big } });
    expect(far.body).toMatchObject({ hits: [], estimatedTotalHits: 2 });
    const paged = await s.api('POST', `/indexes/${uid}/search`, { body: { hitsPerPage: big, page: big } });
    expect(paged.body).toMatchObject({ hits: [], totalHits: 2, totalPages: 1 });
    // u64::MAX is a usize; its double is 2^64, as JavaScript reads the body.
    const max = await s.api('POST', `/indexes/${uid}/search`, { raw: '{"limit":18446744073709551615}' });
    expect(max.status).toBe(200);
    const docs = await s.api('POST', `/indexes/${uid}/documents/fetch`, { body: { limit: big, offset: big } });
    expect(docs.body).toMatchObject({ results: [], total: 2 });
    const get = await s.api('GET', `/indexes/${uid}/search?limit=18446744073709551615`);
    expect(get.status).toBe(200);
    const plus = await s.api('GET', `/indexes/${uid}/documents?limit=%2B1`);
    expect(plus.body.results).toHaveLength(1);
  });

  it('when a count is past a usize, then it is refused as Meilisearch refuses it', async () => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { raw: '{"limit":1e20}' });
    expect(r.body).toMatchObject({
      code: 'invalid_search_limit',
      message: 'Invalid value type at `.limit`: expected a positive integer, but found a number: `1e+20`',
    });
    const get = await s.api('GET', `/indexes/${uid}/search?limit=18446744073709551616`);
    expect(get.body).toMatchObject({
      code: 'invalid_search_limit',
      message: 'Invalid value in parameter `limit`: could not parse `18446744073709551616` as a positive integer',
    });
  });
});

describe('a filter against the refusals Meilisearch makes after reading it', () => {
  const SYNTAX =
    'Found unexpected characters at the end of the filter: `b`. You probably forgot an `OR` or an `AND` rule.';
  it.each([
    ['POST', { filter: 't = 1 b', useNetwork: true }, 'invalid_search_filter', SYNTAX],
    [
      'POST',
      { filter: 't CONTAINS x', useNetwork: true },
      'feature_not_enabled',
      'Using `CONTAINS` in a filter requires enabling the `contains filter` experimental feature.',
    ],
    [
      'POST',
      { filter: '_foreign(t, a = 1)', useNetwork: true },
      'feature_not_enabled',
      'using a foreign filter requires enabling the `foreign_keys` experimental feature.',
    ],
    [
      'POST',
      { filter: 't = 1', useNetwork: true },
      'feature_not_enabled',
      'passing `useNetwork` in a search query requires enabling the `network` experimental feature.',
    ],
    ['GET', { filter: 't = 1 b', useNetwork: 'true' }, 'invalid_search_filter', SYNTAX],
  ])(
    'when a %s search with useNetwork (no network) has the filter %j, then %s answers',
    async (method, body, code, start) => {
      const r =
        method === 'GET'
          ? await s.api('GET', `/indexes/${uid}/search?${q(body as Record<string, string>)}`)
          : await s.api('POST', `/indexes/${uid}/search`, { body });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe(code);
      expect(r.body.message.startsWith(start)).toBe(true);
    },
  );

  it.each([
    [{ showPerformanceDetails: true }],
    [{ limit: 3 }],
    [{ page: 1 }],
    [{ facets: ['t'] }],
    [{ useNetwork: true }],
  ])('when a federated query with %j has a filter that does not parse, then the filter is answered', async (extra) => {
    const r = await s.api('POST', '/multi-search', {
      body: {
        federation: {},
        queries: [
          { indexUid: uid, q: 'x' },
          { indexUid: uid, filter: 't = 1 b', ...extra },
        ],
      },
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_search_filter');
    expect(r.body.message.startsWith(`Inside \`.queries[1]\`: ${SYNTAX}`)).toBe(true);
  });
});
