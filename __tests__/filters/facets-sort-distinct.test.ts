/**
 * Facets (distribution, stats, ordering, limits), facet search, the `sort` parameter, custom
 * ranking rules, distinct and geo sort, over HTTP against a real server. Issue 4.
 */
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const BOOKS = [
  {
    id: 1,
    title: 'Le Petit Prince',
    genres: ['Adventure', 'comedy'],
    price: 10,
    author: 'Saint-Exupéry',
    _geo: { lat: 48.8566, lng: 2.3522 },
  },
  {
    id: 2,
    title: 'Le Rouge et le Noir',
    genres: 'romance',
    price: 9,
    author: 'Stendhal',
    _geo: { lat: '45.764', lng: '4.8357' },
  },
  {
    id: 3,
    title: 'Alice in Wonderland',
    genres: ['adventure'],
    price: 9.5,
    author: 'Carroll',
    _geo: { lat: 51.5072, lng: -0.1276 },
  },
  { id: 4, title: 'Pride and Prejudice', genres: ['romance', 'action'], price: '12', author: 'Austen' },
  { id: 5, title: 'Emma', genres: ['Romance'], author: 'Austen', price: null },
  {
    id: 6,
    title: 'Éducation sentimentale',
    genres: [],
    author: 'Flaubert',
    price: 7,
    _geo: { lat: -33.8688, lng: 151.2093 },
  },
];

async function task(r: { status: number; body: any }): Promise<any> {
  expect(r.status).toBe(202);
  return s.waitTask(r.body.taskUid);
}

async function books(settings: Record<string, unknown>): Promise<string> {
  const uid = uniqueIndex('fct');
  expect((await task(await s.api('POST', `/indexes/${uid}/documents`, { body: BOOKS }))).status).toBe('succeeded');
  const t = await task(await s.api('PATCH', `/indexes/${uid}/settings`, { body: settings }));
  expect(t.status).toBe('succeeded');
  return uid;
}

const ids = (hits: { id: number }[]) => hits.map((h) => h.id);

describe('facets in search', () => {
  let uid: string;
  beforeAll(async () => {
    uid = await books({
      filterableAttributes: ['genres', 'price', 'author', '_geo'],
      sortableAttributes: ['price', 'title', '_geo', 'author'],
    });
  });
  const search = (body: unknown) => s.api('POST', `/indexes/${uid}/search`, { body });

  it('when facets are asked, then every candidate counts once per value, spellings grouped', async () => {
    const r = await search({ facets: ['genres', 'price'] });
    expect(r.status).toBe(200);
    // "Romance" and "romance" are one value; the first document's spelling is shown.
    expect(r.body.facetDistribution).toEqual({
      genres: { action: 1, Adventure: 2, comedy: 1, romance: 3 },
      price: { '10': 1, '7': 1, '9': 1, '9.5': 1, '12': 1 },
    });
    // Numbers first; with few candidates they sort by their printed form. (JSON.parse puts
    // integer-like keys first, so the order is read from the text.)
    expect(r.text).toContain('"price":{"10":1,"7":1,"9":1,"9.5":1,"12":1}');
    // Stats cover numbers only: the string "12" is not among them.
    expect(r.body.facetStats).toEqual({ price: { min: 7, max: 10 } });
    // The facets come last but for the request's uid, as Meilisearch orders them.
    const keys = Object.keys(r.body);
    expect(keys.slice(-3)).toEqual(['facetDistribution', 'facetStats', 'requestUid']);
  });

  it('when the search has a query and a filter, then facets count only its candidates', async () => {
    const r = await search({ q: 'le', filter: 'genres = romance', facets: ['genres', 'author'] });
    expect(ids(r.body.hits)).toEqual([2]);
    expect(r.body.facetDistribution).toEqual({ author: { Stendhal: 1 }, genres: { romance: 1 } });
    expect(r.body.facetStats).toEqual({});
  });

  it('when facets is `*` or a pattern, then it expands to the filterable attributes', async () => {
    const all = await search({ facets: ['*'], limit: 0 });
    // A filterable `_geo` comes with its parts, as on Meilisearch.
    expect(Object.keys(all.body.facetDistribution)).toEqual([
      '_geo',
      '_geo.lat',
      '_geo.lng',
      'author',
      'genres',
      'price',
    ]);
    const some = await search({ facets: ['gen*'], limit: 0 });
    expect(Object.keys(some.body.facetDistribution)).toEqual(['genres']);
    const get = await s.api('GET', `/indexes/${uid}/search?facets=genres,author&limit=0`);
    expect(Object.keys(get.body.facetDistribution)).toEqual(['author', 'genres']);
  });

  it('when _geo is a facet, then it has no values and its parts are counted, as on Meilisearch', async () => {
    const r = await search({ facets: ['_geo'], limit: 0 });
    expect(r.body.facetDistribution).toEqual({
      _geo: {},
      '_geo.lat': { '48.8566': 1, '45.764': 1, '51.5072': 1, '-33.8688': 1 },
      '_geo.lng': { '2.3522': 1, '4.8357': 1, '-0.1276': 1, '151.2093': 1 },
    });
    expect(r.body.facetStats).toEqual({
      '_geo.lat': { min: -33.8688, max: 51.5072 },
      '_geo.lng': { min: -0.1276, max: 151.2093 },
    });
  });

  it('when a facet is not filterable, then invalid_search_facets lists what is', async () => {
    const r = await search({ facets: ['title'] });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_search_facets');
    // Meilisearch 1.50's words: the first name that is not filterable, called a pattern.
    expect(r.body.message).toBe(
      'Invalid facet distribution: Pattern `title` is not filterable. Available filterable attributes patterns are: `_geo, author, genres, price`.',
    );
    const two = await search({ facets: ['genres', 'title', 'id'] });
    expect(two.body.message).toBe(
      'Invalid facet distribution: Pattern `title` is not filterable. Available filterable attributes patterns are: `_geo, author, genres, price`.',
    );
    // A pattern that matches no filterable attribute of the documents is refused the same way.
    const pattern = await search({ facets: ['pri*', 'tit*'] });
    expect(pattern.body.message).toBe(
      'Invalid facet distribution: Pattern `tit*` is not filterable. Available filterable attributes patterns are: `_geo, author, genres, price`.',
    );
  });

  it('when maxValuesPerFacet and sortFacetValuesBy are set, then values are capped and ordered', async () => {
    const u = await books({
      filterableAttributes: ['genres', 'price'],
      faceting: { maxValuesPerFacet: 2, sortFacetValuesBy: { '*': 'alpha', genres: 'count' } },
    });
    const r = await s.api('POST', `/indexes/${u}/search`, { body: { facets: ['genres', 'price'] } });
    expect(Object.entries(r.body.facetDistribution.genres)).toEqual([
      ['romance', 3],
      ['Adventure', 2],
    ]);
    expect(r.text).toContain('"price":{"10":1,"7":1}');
    // Stats are not capped.
    expect(r.body.facetStats.price).toEqual({ min: 7, max: 10 });
  });
});

describe('POST /indexes/{uid}/facet-search', () => {
  let uid: string;
  beforeAll(async () => {
    uid = await books({
      filterableAttributes: [
        'genres',
        'price',
        { attributePatterns: ['author'], features: { facetSearch: false, filter: { equality: true } } },
      ],
    });
  });
  const fs = (body: unknown) => s.api('POST', `/indexes/${uid}/facet-search`, { body });

  it('when searching values, then those starting with the query come with their counts', async () => {
    const r = await fs({ facetName: 'genres', facetQuery: 'a' });
    expect(r.status).toBe(200);
    expect(r.body.facetHits).toEqual([
      { value: 'action', count: 1 },
      { value: 'Adventure', count: 2 },
    ]);
    expect(r.body.facetQuery).toBe('a');
    expect(typeof r.body.processingTimeMs).toBe('number');
    expect(Object.keys(r.body)).toEqual(['facetHits', 'facetQuery', 'processingTimeMs']);
  });

  it('when there is no facetQuery, then every value of the candidates is listed', async () => {
    const r = await fs({ facetName: 'genres', filter: 'price >= 9.5' });
    expect(r.body.facetHits).toEqual([
      { value: 'Adventure', count: 2 },
      { value: 'comedy', count: 1 },
    ]);
    expect(r.body.facetQuery).toBeNull();
  });

  it('when q is given, then only documents it matches count', async () => {
    const r = await fs({ facetName: 'genres', facetQuery: 'a', q: 'alice' });
    expect(r.body.facetHits).toEqual([{ value: 'Adventure', count: 1 }]);
  });

  it('when the query has diacritics or a typo, then normalized values still match', async () => {
    const r = await fs({ facetName: 'genres', facetQuery: 'ROMÁNCE' });
    expect(r.body.facetHits).toEqual([{ value: 'romance', count: 3 }]);
    const typo = await fs({ facetName: 'genres', facetQuery: 'advanture' });
    expect(typo.body.facetHits).toEqual([{ value: 'Adventure', count: 2 }]);
    const short = await fs({ facetName: 'genres', facetQuery: 'acton' });
    expect(short.body.facetHits).toEqual([{ value: 'action', count: 1 }]);
    const none = await fs({ facetName: 'genres', facetQuery: 'xcton' });
    expect(none.body.facetHits).toEqual([]);
  });

  it('when the facet is not facet-searchable, then invalid_facet_search_facet_name explains', async () => {
    const r = await fs({ facetName: 'author' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_facet_search_facet_name');
    expect(r.body.message).toContain(
      'Attribute `author` is not facet-searchable. Note: this attribute matches rule #2',
    );
    const unknown = await fs({ facetName: 'title' });
    expect(unknown.body.code).toBe('invalid_facet_search_facet_name');
    expect(unknown.body.message).toBe(
      'Attribute `title` is not facet-searchable. Available facet-searchable attributes patterns are: `genres, price`. To make it facet-searchable add it to the `filterableAttributes` index settings.',
    );
  });

  it('when the body is wrong, then the facet-search codes answer; unknown fields are ignored', async () => {
    expect((await fs({ facetQuery: 'a' })).body.code).toBe('missing_facet_search_facet_name');
    expect((await fs({ facetName: 3 })).body.code).toBe('invalid_facet_search_facet_name');
    expect((await fs({ facetName: 'genres', facetQuery: 3 })).body.code).toBe('invalid_facet_search_query');
    expect((await fs({ facetName: 'genres', exhaustiveFacetCount: 'yes' })).body.code).toBe(
      'invalid_facet_search_exhaustive_facet_count',
    );
    expect((await fs({ facetName: 'genres', filter: 'nope = 1' })).body.code).toBe('invalid_search_filter');
    expect((await fs({ facetName: 'genres', whatever: 1 })).status).toBe(200);
    // null is no value, as on Meilisearch.
    expect((await fs({ facetName: 'genres', useNetwork: null })).status).toBe(200);
    const missing = await s.api('POST', `/indexes/${uniqueIndex('none')}/facet-search`, {
      body: { facetName: 'genres' },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('index_not_found');
  });

  it('when facetSearch is off for the index, then facet_search_disabled', async () => {
    const u = await books({ filterableAttributes: ['genres'], facetSearch: false });
    const r = await s.api('POST', `/indexes/${u}/facet-search`, { body: { facetName: 'genres' } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('facet_search_disabled');
  });

  it('when exhaustiveFacetCount is set on an index with distinct, then duplicates count once', async () => {
    const u = await books({ filterableAttributes: ['genres', 'author'], distinctAttribute: 'author' });
    const plain = await s.api('POST', `/indexes/${u}/facet-search`, {
      body: { facetName: 'genres', facetQuery: 'rom' },
    });
    expect(plain.body.facetHits).toEqual([{ value: 'romance', count: 3 }]);
    const exact = await s.api('POST', `/indexes/${u}/facet-search`, {
      body: { facetName: 'genres', facetQuery: 'rom', exhaustiveFacetCount: true },
    });
    // Emma and Pride and Prejudice share their author: only the first is kept.
    expect(exact.body.facetHits).toEqual([{ value: 'romance', count: 2 }]);
  });
});

describe('sort', () => {
  let uid: string;
  beforeAll(async () => {
    uid = await books({
      filterableAttributes: ['genres', 'author'],
      sortableAttributes: ['price', 'title', '_geo', 'author'],
    });
  });
  const search = (body: unknown) => s.api('POST', `/indexes/${uid}/search`, { body });

  it('when sorting on a mixed field, then numbers come first, then strings, then missing, both ways', async () => {
    const asc = await search({ sort: ['price:asc'] });
    expect(ids(asc.body.hits)).toEqual([6, 2, 3, 1, 4, 5]);
    const desc = await search({ sort: ['price:desc'] });
    expect(ids(desc.body.hits)).toEqual([1, 3, 2, 6, 4, 5]);
  });

  it('when several keys are given, then later keys break the ties of earlier ones', async () => {
    const r = await search({ sort: ['author:asc', 'title:desc'] });
    expect(ids(r.body.hits)).toEqual([4, 5, 3, 6, 1, 2]);
    const get = await s.api('GET', `/indexes/${uid}/search?sort=author:asc,title:asc`);
    expect(ids(get.body.hits)).toEqual([5, 4, 3, 6, 1, 2]);
  });

  it('when a query is sorted, then documents holding every word stay first and sort within', async () => {
    const r = await search({ q: 'le noir', sort: ['title:asc'] });
    expect(ids(r.body.hits)).toEqual([2, 1]);
    const one = await search({ q: 'le', sort: ['title:asc'] });
    expect(ids(one.body.hits)).toEqual([1, 2]);
    const paged = await search({ sort: ['price:asc'], offset: 2, limit: 2 });
    expect(ids(paged.body.hits)).toEqual([3, 1]);
    expect(paged.body.estimatedTotalHits).toBe(6);
  });

  it('when sorting by _geoPoint, then nearest first, documents without _geo last, with _geoDistance', async () => {
    const r = await search({ sort: ['_geoPoint(48.8566, 2.3522):asc'], attributesToRetrieve: ['id', '_geo'] });
    expect(ids(r.body.hits)).toEqual([1, 3, 2, 6, 4, 5]);
    expect(r.body.hits[0]._geoDistance).toBe(0);
    expect(r.body.hits[1]._geoDistance).toBeGreaterThan(340_000);
    expect(r.body.hits[1]._geoDistance).toBeLessThan(350_000);
    expect(r.body.hits[4]._geoDistance).toBeUndefined();
    // Without `_geo` retrieved there is no distance.
    const noGeo = await search({ sort: ['_geoPoint(48.8566, 2.3522):desc'], attributesToRetrieve: ['id'] });
    expect(ids(noGeo.body.hits)).toEqual([6, 2, 3, 1, 4, 5]);
    expect(noGeo.body.hits[0]._geoDistance).toBeUndefined();
  });

  it('when sorting on a non-sortable field or without the sort rule, then invalid_search_sort', async () => {
    const r = await search({ sort: ['genres:asc'] });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_search_sort');
    expect(r.body.message).toMatch(
      /^Index `[^`]+`: Attribute `genres` is not sortable. Available sortable attributes are: `_geo, author, price, title`.$/,
    );
    expect((await search({ sort: ['price'] })).body.code).toBe('invalid_search_sort');
    const u = await books({ sortableAttributes: ['price'], rankingRules: ['words', 'typo'] });
    const noRule = await s.api('POST', `/indexes/${u}/search`, { body: { sort: ['price:asc'] } });
    expect(noRule.body.code).toBe('invalid_search_sort');
    expect(noRule.body.message).toBe(
      `Index \`${u}\`: You must specify where \`sort\` is listed in the rankingRules setting to use the sort parameter at search time.`,
    );
  });

  it('when rankingRules hold a custom rule, then a placeholder search follows it', async () => {
    const u = await books({ rankingRules: ['price:desc', 'words', 'typo'] });
    const r = await s.api('POST', `/indexes/${u}/search`, { body: {} });
    expect(ids(r.body.hits)).toEqual([1, 3, 2, 6, 4, 5]);
  });
});

describe('distinct', () => {
  it('when distinct is asked, then the best document per value is kept and totals shrink', async () => {
    const uid = await books({ filterableAttributes: ['author', 'genres'], sortableAttributes: ['price'] });
    const r = await s.api('POST', `/indexes/${uid}/search`, {
      body: { distinct: 'author', sort: ['price:asc'], hitsPerPage: 10 },
    });
    expect(r.status).toBe(200);
    expect(ids(r.body.hits)).toEqual([6, 2, 3, 1, 4]);
    expect(r.body.totalHits).toBe(5);
    // A document sharing any value with a kept one is dropped (4 shares "romance" with 2);
    // one without a value (6) is always kept. Facets count the kept documents.
    const g = await s.api('POST', `/indexes/${uid}/search`, { body: { distinct: 'genres', facets: ['genres'] } });
    expect(ids(g.body.hits)).toEqual([1, 2, 6]);
    expect(g.body.facetDistribution.genres).toEqual({ Adventure: 1, comedy: 1, romance: 1 });
  });

  it('when the index has a distinctAttribute, then searches apply it', async () => {
    const uid = await books({ distinctAttribute: 'author' });
    const r = await s.api('POST', `/indexes/${uid}/search`, { body: {} });
    expect(ids(r.body.hits)).toEqual([1, 2, 3, 4, 6]);
  });

  it('when the distinct attribute is not filterable, then invalid_search_distinct', async () => {
    const uid = await books({ filterableAttributes: ['genres'] });
    const r = await s.api('POST', `/indexes/${uid}/search`, { body: { distinct: 'author' } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_search_distinct');
    expect(r.body.message).toBe(
      `Index \`${uid}\`: Attribute \`author\` is not filterable and thus, cannot be used as distinct attribute. Available filterable attributes patterns are: \`genres\`.`,
    );
  });
});

describe('columns follow writes', () => {
  it('when documents change after a faceted search, then the next search sees the new values', async () => {
    const uid = await books({ filterableAttributes: ['genres'], sortableAttributes: ['price'] });
    const before = await s.api('POST', `/indexes/${uid}/search`, {
      body: { facets: ['genres'], sort: ['price:desc'], limit: 1 },
    });
    expect(before.body.facetDistribution.genres.romance).toBe(3);
    expect(ids(before.body.hits)).toEqual([1]);
    await task(await s.api('PUT', `/indexes/${uid}/documents`, { body: [{ id: 5, genres: 'horror', price: 99 }] }));
    const after = await s.api('POST', `/indexes/${uid}/search`, {
      body: { facets: ['genres'], sort: ['price:desc'], limit: 1 },
    });
    expect(after.body.facetDistribution.genres.romance).toBe(2);
    expect(after.body.facetDistribution.genres.horror).toBe(1);
    expect(ids(after.body.hits)).toEqual([5]);
  });
});
