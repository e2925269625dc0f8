/**
 * The interim keyword engine over HTTP (issue 3 replaces it with the relevance engine):
 * every-word documents first, the last word searched as a prefix.
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
  { id: 1, title: 'Harry Potter and the Half-Blood Prince' },
  { id: 2, title: 'The Hobbit' },
  { id: 3, title: 'Hamlet', genre: 'sci fi' },
  { id: 4, title: 'Alice in Wonderland' },
  { id: 5, title: 'Harp music' },
];

async function index(settings: Record<string, unknown> = {}): Promise<string> {
  const uid = uniqueIndex('kw');
  let r = await s.api('POST', `/indexes/${uid}/documents`, { body: DOCS });
  expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
  r = await s.api('PATCH', `/indexes/${uid}/settings`, { body: settings });
  expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
  return uid;
}

const ids = (hits: { id: number }[]) => hits.map((h) => h.id).sort((a, b) => a - b);

describe('last word as a prefix', () => {
  let uid: string;
  beforeAll(async () => {
    uid = await index();
  });
  const search = (q: string) => s.api('POST', `/indexes/${uid}/search`, { body: { q } });

  it('when the query ends inside a word, then words starting with it match', async () => {
    expect(ids((await search('har')).body.hits)).toEqual([1, 5]);
    expect(ids((await search('h')).body.hits)).toEqual([1, 2, 3, 5]);
    expect((await search('h')).body.estimatedTotalHits).toBe(4);
  });

  it('when a space follows the last word, then only the whole word matches', async () => {
    expect(ids((await search('har ')).body.hits)).toEqual([]);
    expect(ids((await search('harp ')).body.hits)).toEqual([5]);
  });

  it('when only the last word is a prefix, then earlier words must be whole', async () => {
    const r = await search('harry pri');
    expect(r.body.hits[0].id).toBe(1);
    expect(ids((await search('har prince')).body.hits)).toEqual([1]);
  });

  it('when prefixSearch is disabled, then no completion is tried', async () => {
    const u = await index({ prefixSearch: 'disabled' });
    const r = await s.api('POST', `/indexes/${u}/search`, { body: { q: 'har' } });
    expect(r.body.hits).toEqual([]);
  });
});
