/**
 * Filters over HTTP: search, document fetches (GET and POST) and delete-by-filter, against a
 * real server. Issue 4 (filters).
 */
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const MOVIES = [
  { id: 1, title: 'Carol', genre: 'Drama', year: 2015, tags: ['romance', 'period'], _geo: { lat: 48.85, lng: 2.35 } },
  { id: 2, title: 'Wonder Woman', genre: 'action', year: 2017, tags: ['hero'], _geo: { lat: 45.75, lng: 4.85 } },
  { id: 3, title: 'Life of Pi', genre: 'drama', year: '2012', tags: [], director: null },
  { id: 4, title: 'Mad Max', genre: 'Action', year: 2015, meta: { rating: 8.1 } },
  { id: 5, title: 'Rust', year: 2024 },
];

async function task(r: { status: number; body: any }): Promise<any> {
  expect(r.status).toBe(202);
  return s.waitTask(r.body.taskUid);
}

/** A fresh index with MOVIES and `filterable` as filterableAttributes. */
async function movies(
  filterable: unknown[] = ['genre', 'year', 'tags', 'director', 'meta', '_geo', 'title'],
): Promise<string> {
  const uid = uniqueIndex('flt');
  expect((await task(await s.api('POST', `/indexes/${uid}/documents`, { body: MOVIES }))).status).toBe('succeeded');
  const t = await task(
    await s.api('PATCH', `/indexes/${uid}/settings`, { body: { filterableAttributes: filterable } }),
  );
  expect(t.status).toBe('succeeded');
  return uid;
}

const ids = (hits: { id: number }[]) => hits.map((h) => h.id);

describe('POST /indexes/{uid}/search with filter', () => {
  let uid: string;
  beforeAll(async () => {
    uid = await movies();
  });

  const search = (body: unknown) => s.api('POST', `/indexes/${uid}/search`, { body });

  it('when filtering a placeholder search, then hits and totals count only matches', async () => {
    const r = await search({ filter: 'genre = drama' });
    expect(r.status).toBe(200);
    expect(ids(r.body.hits)).toEqual([1, 3]);
    expect(r.body.estimatedTotalHits).toBe(2);
    const paged = await search({ filter: 'year = 2015', hitsPerPage: 1, page: 2 });
    expect(ids(paged.body.hits)).toEqual([4]);
    expect(paged.body.totalHits).toBe(2);
    expect(paged.body.totalPages).toBe(2);
  });

  it('when every operator is used, then each matches as Meilisearch does', async () => {
    const cases: [unknown, number[]][] = [
      ['year > 2015', [2, 5]],
      ['year 2012 TO 2015', [1, 3, 4]], // the string "2012" is in the lexicographic range too
      ['year = 2012', [3]],
      ['genre != action', [1, 3, 5]],
      ['genre IN [Action, DRAMA]', [1, 2, 3, 4]],
      ['genre NOT IN [action]', [1, 3, 5]],
      ['genre EXISTS', [1, 2, 3, 4]],
      ['genre NOT EXISTS', [5]],
      ['director IS NULL', [3]],
      ['tags IS EMPTY', [3]],
      ['tags IS NOT EMPTY', [1, 2, 4, 5]],
      ['tags = hero', [2]],
      ['meta.rating >= 8', [4]],
      ['NOT (genre = drama OR year = 2024)', [2, 4]],
      ['_geoRadius(48.8566, 2.3522, 5000)', [1]],
      ['_geoBoundingBox([50, 5], [45, 0])', [1, 2]],
      [['genre = action', ['year = 2017', 'year = 2024']], [2]],
      ["title = 'Wonder Woman'", [2]],
    ];
    for (const [filter, expected] of cases) {
      const r = await search({ filter });
      expect({ filter, status: r.status, ids: r.status === 200 ? ids(r.body.hits) : r.body }).toEqual({
        filter,
        status: 200,
        ids: expected,
      });
    }
  });

  it('when a keyword search is filtered, then only matching documents rank', async () => {
    const r = await search({ q: 'woman', filter: 'genre = action' });
    expect(ids(r.body.hits)).toEqual([2]);
    expect(r.body.estimatedTotalHits).toBe(1);
    const none = await search({ q: 'carol', filter: 'genre = action' });
    expect(none.body.hits).toEqual([]);
    expect(none.body.estimatedTotalHits).toBe(0);
  });

  it('when GET search carries a filter, then it applies too', async () => {
    const r = await s.api('GET', `/indexes/${uid}/search?filter=${encodeURIComponent('year < 2015')}`);
    expect(ids(r.body.hits)).toEqual([3]);
  });

  it('when the filter does not parse, then 400 invalid_search_filter with its position', async () => {
    const r = await search({ filter: 'genre = ' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      message: 'Was expecting a value but instead got nothing.\n9:9 genre = ',
      code: 'invalid_search_filter',
      type: 'invalid_request',
      link: 'https://docs.meilisearch.com/errors#invalid_search_filter',
    });
  });

  it('when the attribute is not filterable, then the message lists the filterable patterns', async () => {
    const r = await search({ filter: 'id = 1' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_search_filter');
    expect(r.body.message).toBe(
      `Index \`${uid}\`: Attribute \`id\` is not filterable. Available filterable attribute patterns are: \`_geo\`, \`director\`, \`genre\`, \`meta\`, \`tags\`, \`title\`, \`year\`.\n2:4 "id" = "1"`,
    );
  });

  it.each([
    ['year = 2000 AND id = 1', '25:27 ("year" = "2000") AND ("id" = "1")'],
    [
      'genre = a OR (year 1 TO 5 AND NOT id EXISTS)',
      '52:54 ("genre" = "a") OR (("year" "1" TO "5") AND (NOT ("id" EXISTS)))',
    ],
    ['id NOT IN [1, "a b"]', '7:9 NOT ("id" IN ["1", "a b"])'],
    ['id = \'say "hi"\'', '2:4 "id" = "say \\"hi\\""'],
    [
      ['year = 1', ['genre = x', 'id IS NOT NULL']],
      '47:49 ("year" = "1") AND (("genre" = "x") OR (NOT ("id" IS NULL)))',
    ],
  ])(
    'when %j reads an attribute that is not filterable, then the filter is quoted as written out',
    async (filter, tail) => {
      const r = await search({ filter });
      expect(r.body.code).toBe('invalid_search_filter');
      expect(r.body.message.split('\n')[1]).toBe(tail);
    },
  );

  it('when a multi-search query reads an attribute that is not filterable, then the query and the index are named', async () => {
    const r = await s.api('POST', '/multi-search', { body: { queries: [{ indexUid: uid, filter: 'id = 1' }] } });
    expect(r.body.message).toBe(
      `Inside \`.queries[0]\`: Index \`${uid}\`: Attribute \`id\` is not filterable. Available filterable attribute patterns are: \`_geo\`, \`director\`, \`genre\`, \`meta\`, \`tags\`, \`title\`, \`year\`.\n2:4 "id" = "1"`,
    );
    // Documents fetch and facet search quote the filter as sent, without the index.
    const docs = await s.api('POST', `/indexes/${uid}/documents/fetch`, { body: { filter: 'id = 1' } });
    expect(docs.body.message).toBe(
      'Attribute `id` is not filterable. Available filterable attribute patterns are: `_geo`, `director`, `genre`, `meta`, `tags`, `title`, `year`.\n1:3 id = 1',
    );
  });
});

describe('filterableAttributes pattern rules', () => {
  it('when a rule disables comparison, then `>` is refused and `=` works', async () => {
    const uid = await movies([
      { attributePatterns: ['ye*'], features: { facetSearch: false, filter: { equality: true, comparison: false } } },
    ]);
    const ok = await s.api('POST', `/indexes/${uid}/search`, { body: { filter: 'year = 2017' } });
    expect(ids(ok.body.hits)).toEqual([2]);
    const bad = await s.api('POST', `/indexes/${uid}/search`, { body: { filter: 'year > 2017' } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_search_filter');
    expect(bad.body.message.split('\n')[0]).toBe(
      `Index \`${uid}\`: Filter operator \`>\` is not allowed for the attribute \`year\`.`,
    );
  });
});

describe('documents fetch with filter', () => {
  let uid: string;
  beforeAll(async () => {
    uid = await movies();
  });

  it('when POST /documents/fetch has a filter, then results and total are filtered', async () => {
    const r = await s.api('POST', `/indexes/${uid}/documents/fetch`, {
      body: { filter: 'year = 2015', fields: ['id'] },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ results: [{ id: 1 }, { id: 4 }], offset: 0, limit: 20, total: 2 });
    const arr = await s.api('POST', `/indexes/${uid}/documents/fetch`, {
      body: { filter: [['genre = action', 'genre = drama'], 'year = 2015'], ids: [1, 2, 4] },
    });
    expect(ids(arr.body.results)).toEqual([1, 4]);
  });

  it('when GET /documents has a filter, then it behaves as fetch', async () => {
    const r = await s.api('GET', `/indexes/${uid}/documents?filter=${encodeURIComponent('genre = drama')}&fields=id`);
    expect(r.body).toEqual({ results: [{ id: 1 }, { id: 3 }], offset: 0, limit: 20, total: 2 });
  });

  it('when the filter is wrong, then 400 invalid_document_filter', async () => {
    const r = await s.api('POST', `/indexes/${uid}/documents/fetch`, { body: { filter: 'id = 1' } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_document_filter');
    const g = await s.api('GET', `/indexes/${uid}/documents?filter=${encodeURIComponent('genre IN [a')}`);
    expect(g.status).toBe(400);
    expect(g.body.code).toBe('invalid_document_filter');
  });
});

describe('POST /indexes/{uid}/documents/delete', () => {
  it('when the filter matches, then the task deletes exactly those documents', async () => {
    const uid = await movies();
    const t = await task(
      await s.api('POST', `/indexes/${uid}/documents/delete`, { body: { filter: 'genre = action OR year > 2020' } }),
    );
    expect(t.status).toBe('succeeded');
    expect(t.details).toEqual({
      providedIds: 0,
      deletedDocuments: 3,
      originalFilter: '"genre = action OR year > 2020"',
    });
    const left = await s.api('GET', `/indexes/${uid}/documents?fields=id`);
    expect(left.body.results).toEqual([{ id: 1 }, { id: 3 }]);
    const hits = await s.api('POST', `/indexes/${uid}/search`, { body: { q: 'max' } });
    expect(hits.body.hits).toEqual([]);
  });

  it('when the syntax is wrong, then the route answers 400 before enqueueing', async () => {
    const uid = await movies();
    const r = await s.api('POST', `/indexes/${uid}/documents/delete`, { body: { filter: 'genre =' } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_document_filter');
    expect(r.body.message).toBe('Was expecting a value but instead got nothing.\n8:8 genre =');
  });

  it('when the attribute is not filterable, then the task fails naming the index', async () => {
    const uid = await movies(['genre']);
    const t = await task(
      await s.api('POST', `/indexes/${uid}/documents/delete`, { body: { filter: ['year = 2015'] } }),
    );
    expect(t.status).toBe('failed');
    expect(t.error.code).toBe('invalid_document_filter');
    expect(t.error.message).toBe(
      `Index \`${uid}\`: Attribute \`year\` is not filterable. Available filterable attribute patterns are: \`genre\`.\n1:5 year = 2015`,
    );
    expect((await s.api('GET', `/indexes/${uid}/documents`)).body.total).toBe(5);
  });
});

describe('CONTAINS and the containsFilter feature', () => {
  it('when the feature is off, then CONTAINS is refused; when on, then it matches substrings', async () => {
    const uid = await movies();
    const off = await s.api('POST', `/indexes/${uid}/search`, { body: { filter: 'title CONTAINS wonder' } });
    expect(off.status).toBe(400);
    expect(off.body.code).toBe('feature_not_enabled');
    expect(off.body.message).toBe(
      'Using `CONTAINS` in a filter requires enabling the `contains filter` experimental feature. See https://github.com/orgs/meilisearch/discussions/763\n7:15 title CONTAINS wonder',
    );
    expect((await s.api('PATCH', '/experimental-features', { body: { containsFilter: true } })).status).toBe(200);
    try {
      const on = await s.api('POST', `/indexes/${uid}/search`, { body: { filter: 'title CONTAINS "ad ma"' } });
      expect(ids(on.body.hits)).toEqual([4]);
      const fetched = await s.api('POST', `/indexes/${uid}/documents/fetch`, {
        body: { filter: 'title NOT CONTAINS a', fields: ['id'] },
      });
      expect(fetched.body.results).toEqual([{ id: 3 }, { id: 5 }]);
    } finally {
      await s.api('PATCH', '/experimental-features', { body: { containsFilter: false } });
    }
  });
});
