/**
 * One value order for every sort: search `sort` (read from value columns) and the sort of
 * `/documents` (GET and POST fetch, read from documents) order strings by the same normal
 * form, Meilisearch's facet form (trimmed, compatibility decomposed, lowercased). These
 * values were ordered differently by the two before issue 11; the expected order is the one
 * Meilisearch 1.50 gives for the same documents.
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
  { id: 1, v: 'b' },
  { id: 2, v: ' c' }, // leading space: trimmed
  { id: 3, v: 'ﬁg' }, // ligature: `fig`
  { id: 4, v: 'Élan' }, // precomposed accent: `e` + combining acute
  { id: 5, v: 'd' },
  { id: 6, v: 'g' },
  { id: 7, v: 'Zebra' },
  { id: 8, v: 10 },
  { id: 9 },
  { id: 10, v: true },
  { id: 11, v: 'e\u0301lan' }, // decomposed accent: equal to 4
  { id: 12, v: 'ez' },
  { id: 13, v: '①' }, // compatibility form: `1`
  { id: 14, v: '1' },
  { id: 15, v: 'Ａbc' }, // full-width letter: `abc`
  { id: 16, v: '\u00a0f' }, // no-break space: trimmed
  { id: 17, v: ['z', 'a2'] },
];

const ASC = [8, 13, 14, 17, 15, 1, 2, 5, 12, 4, 11, 16, 3, 6, 10, 7, 9];
const DESC = [8, 7, 17, 10, 6, 3, 16, 4, 11, 12, 5, 2, 1, 15, 13, 14, 9];

async function task(r: { status: number; body: any }): Promise<any> {
  expect(r.status).toBe(202);
  return s.waitTask(r.body.taskUid);
}

const ids = (hits: { id: number }[]) => hits.map((h) => h.id);

describe('sort: one value order (issue 11)', () => {
  let uid: string;
  beforeAll(async () => {
    uid = uniqueIndex('vord');
    expect((await task(await s.api('POST', `/indexes/${uid}/documents`, { body: DOCS }))).status).toBe('succeeded');
    const t = await task(
      await s.api('PATCH', `/indexes/${uid}/settings`, { body: { sortableAttributes: ['v', 'id'] } }),
    );
    expect(t.status).toBe('succeeded');
  });

  it.each([
    ['asc', ASC],
    ['desc', DESC],
  ])(
    'when sorting by v:%s, then search, GET /documents and POST /documents/fetch give one order',
    async (dir, expected) => {
      const search = await s.api('POST', `/indexes/${uid}/search`, { body: { sort: [`v:${dir}`], limit: 100 } });
      expect(search.status).toBe(200);
      expect(ids(search.body.hits)).toEqual(expected);
      // Two keys take the ranked path (sort keys per document) instead of the value index.
      const ranked = await s.api('POST', `/indexes/${uid}/search`, {
        body: { sort: [`v:${dir}`, 'id:asc'], limit: 100 },
      });
      expect(ranked.status).toBe(200);
      expect(ids(ranked.body.hits)).toEqual(expected);
      const get = await s.api('GET', `/indexes/${uid}/documents?sort=v:${dir}&limit=100`);
      expect(get.status).toBe(200);
      expect(ids(get.body.results)).toEqual(expected);
      const fetch = await s.api('POST', `/indexes/${uid}/documents/fetch`, {
        body: { sort: [`v:${dir}`], limit: 100 },
      });
      expect(fetch.status).toBe(200);
      expect(ids(fetch.body.results)).toEqual(expected);
    },
  );
});
