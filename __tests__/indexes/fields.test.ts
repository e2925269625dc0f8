/**
 * `POST /indexes/{uid}/fields`: every attribute with what the settings make of it, paged and
 * filtered. Expected bodies were read from Meilisearch 1.50 on the same documents and settings.
 */
import { startTestServer, type TestServer } from '../helpers/server';

let s: TestServer;

const SETTINGS = {
  searchableAttributes: ['title'],
  displayedAttributes: ['title', 'genre'],
  sortableAttributes: ['genre'],
  rankingRules: ['genre:asc', 'words', 'typo', 'proximity', 'attribute', 'sort', 'exactness'],
  filterableAttributes: [
    { attributePatterns: ['genre'], features: { facetSearch: true, filter: { equality: true, comparison: true } } },
  ],
  faceting: { sortFacetValuesBy: { genre: 'alpha' } },
  facetSearch: true,
  localizedAttributes: [{ attributePatterns: ['title'], locales: ['eng', 'fra'] }],
  distinctAttribute: 'genre',
};

beforeAll(async () => {
  s = await startTestServer();
  await s.waitTask((await s.api('POST', '/indexes', { body: { uid: 'f', primaryKey: 'id' } })).body.taskUid);
  // Every attribute searchable first, so the nested paths get their ids.
  const add = await s.api('POST', '/indexes/f/documents', {
    body: [
      { id: 1, title: 'Alpha', genre: 'sci-fi', nested: { a: 1, b: 'x' } },
      { id: 2, title: 'Bravo', genre: 'fantasy' },
    ],
  });
  expect((await s.waitTask(add.body.taskUid)).status).toBe('succeeded');
  const set = await s.api('PATCH', '/indexes/f/settings', { body: SETTINGS });
  expect((await s.waitTask(set.body.taskUid)).status).toBe('succeeded');
});
afterAll(() => s.close());

const fields = (body: unknown, uid = 'f') => s.api('POST', `/indexes/${uid}/fields`, { body });
const off = {
  displayed: { enabled: false },
  searchable: { enabled: false },
  sortable: { enabled: false },
  distinct: { enabled: false },
  rankingRule: { enabled: false },
  filterable: { enabled: false, sortBy: 'alpha', facetSearch: false, equality: false, comparison: false },
  localized: { locales: [] },
};

it('lists every attribute in name order with its settings', async () => {
  const r = await fields({});
  expect(r.status).toBe(200);
  expect(r.body).toEqual({
    results: [
      {
        name: 'genre',
        displayed: { enabled: true },
        searchable: { enabled: false },
        sortable: { enabled: true },
        distinct: { enabled: true },
        rankingRule: { enabled: true, order: 'asc' },
        filterable: { enabled: true, sortBy: 'alpha', facetSearch: true, equality: true, comparison: true },
        localized: { locales: [] },
      },
      { name: 'id', ...off },
      { name: 'nested', ...off },
      { name: 'nested.a', ...off },
      { name: 'nested.b', ...off },
      {
        name: 'title',
        ...off,
        displayed: { enabled: true },
        searchable: { enabled: true },
        localized: { locales: ['Eng', 'Fra'] },
      },
    ],
    offset: 0,
    limit: 20,
    total: 6,
  });
});

it('pages and filters', async () => {
  const page = await fields({ offset: 1, limit: 2 });
  expect(page.body.results.map((f: any) => f.name)).toEqual(['id', 'nested']);
  expect(page.body).toMatchObject({ offset: 1, limit: 2, total: 6 });
  const hidden = await fields({ filter: { displayed: false } });
  expect(hidden.body.results.map((f: any) => f.name)).toEqual(['id', 'nested', 'nested.a', 'nested.b']);
  const patterns = await fields({ filter: { attributePatterns: ['ti*', 'nested.*'] } });
  expect(patterns.body.results.map((f: any) => f.name)).toEqual(['nested.a', 'nested.b', 'title']);
  const ranked = await fields({ filter: { rankingRule: true, filterable: true } });
  expect(ranked.body.results.map((f: any) => f.name)).toEqual(['genre']);
  expect((await fields({}, 'missing_index')).body.code).toBe('index_not_found');
});

it.each([
  [
    { filter: { bogus: true } },
    'invalid_index_fields_filter',
    'Unknown field `bogus` inside `.filter`: expected one of `attributePatterns`, `displayed`, `searchable`, `sortable`, `distinct`, `rankingRule`, `filterable`',
  ],
  [{ filter: { displayed: 'yes' } }, 'invalid_index_fields_filter_displayed', null],
  [{ filter: { rankingRule: 1 } }, 'invalid_index_fields_filter_ranking_rule', null],
  [{ limit: -1 }, 'invalid_index_limit', null],
  [{ offset: 'x' }, 'invalid_index_offset', null],
  [{ x: 1 }, 'bad_request', null],
])('refuses %j with %s', async (body, code, message) => {
  const r = await fields(body);
  expect(r.status).toBe(400);
  expect(r.body.code).toBe(code);
  if (message) expect(r.body.message).toBe(message);
});

it('needs a body and the fields.post action', async () => {
  expect((await s.api('POST', '/indexes/f/fields', { raw: '', contentType: 'application/json' })).body.code).toBe(
    'missing_payload',
  );
  const k = await s.api('POST', '/keys', { body: { actions: ['search'], indexes: ['*'], expiresAt: null } });
  expect((await s.api('POST', '/indexes/f/fields', { body: {}, key: k.body.key })).status).toBe(403);
});
