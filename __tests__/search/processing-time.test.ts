/**
 * `processingTimeMs` counts from the moment the server received the request, not from the
 * moment the engine started: parsing, validation and the waits for a search slot and a thread
 * are in it. Here the request's headers go first and its body 400 ms later, so an answer
 * timed from the engine alone would say a few milliseconds. Both the fast path (a plain POST)
 * and Express (a `?` in the URL sends the request there) are checked, so are similar
 * documents and multi-search (each result, and a federated answer), and a request sent in one
 * piece still reports a small figure. Facet search counts from the engine, as Meilisearch's
 * does from its handler (the official client's snapshots pin 0 on a small index).
 */
import net from 'node:net';
import { MASTER_KEY, startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let t: TestServer;
const uid = uniqueIndex('ptime');

beforeAll(async () => {
  t = await startTestServer();
  const settings = { filterableAttributes: ['title'], embedders: { man: { source: 'userProvided', dimensions: 2 } } };
  const s = await t.api('PATCH', `/indexes/${uid}/settings`, { body: settings });
  expect((await t.waitTask(s.body.taskUid)).status).toBe('succeeded');
  const docs = [
    { id: 1, title: 'Carol', _vectors: { man: [1, 0] } },
    { id: 2, title: 'Dave', _vectors: { man: [1, 1] } },
  ];
  const a = await t.api('POST', `/indexes/${uid}/documents`, { body: docs });
  expect((await t.waitTask(a.body.taskUid)).status).toBe('succeeded');
});
afterAll(async () => {
  await t.close();
});

/** Sends a request with its body `delayMs` after its headers; resolves with the parsed answer. */
function slowSearch(
  path: string,
  delayMs: number,
  json: object = { q: 'carol' },
): Promise<{ status: number; body: any }> {
  const { port, hostname } = new URL(t.url);
  const body = JSON.stringify(json);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let raw = '';
    socket.on('data', (c) => (raw += c.toString()));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head, payload] = raw.split('\r\n\r\n');
      resolve({ status: Number(head!.split(' ')[1]), body: JSON.parse(payload!) });
    });
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${MASTER_KEY}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
    );
    setTimeout(() => socket.write(body), delayMs);
  });
}

describe('processingTimeMs', () => {
  it.each([
    ['the fast path', `/indexes/${uid}/search`],
    ['Express', `/indexes/${uid}/search?x=1`],
  ])('when the body comes 400 ms after the headers (%s), then the figure counts from the arrival', async (_, path) => {
    const r = await slowSearch(path, 400);
    expect(r.status).toBe(200);
    expect(r.body.hits.map((h: { id: number }) => h.id)).toEqual([1]);
    // Not 400 exactly: the server's clock starts once the headers are in, a little after
    // they were sent, and the figure is rounded down.
    expect(r.body.processingTimeMs).toBeGreaterThanOrEqual(350);
  });

  it('when similar documents or a multi-search come 400 ms after their headers, then each figure counts from the arrival', async () => {
    const similar = await slowSearch(`/indexes/${uid}/similar`, 400, { id: 1, embedder: 'man' });
    expect(similar.status).toBe(200);
    expect(similar.body.hits.map((h: { id: number }) => h.id)).toEqual([2]);
    const queries = [
      { indexUid: uid, q: 'carol' },
      { indexUid: uid, q: 'dave' },
    ];
    const multi = await slowSearch('/multi-search', 400, { queries });
    expect(multi.status).toBe(200);
    expect(multi.body.results.map((r: { hits: { id: number }[] }) => r.hits[0]!.id)).toEqual([1, 2]);
    const federated = await slowSearch('/multi-search', 400, { queries, federation: {} });
    expect(federated.status).toBe(200);
    expect(federated.body.hits.map((h: { id: number }) => h.id).sort()).toEqual([1, 2]);
    const figures = [similar.body, ...multi.body.results, federated.body].map((b) => b.processingTimeMs);
    for (const ms of figures) expect(ms).toBeGreaterThanOrEqual(350);
  });

  it('when a facet search comes 400 ms after its headers, then its figure counts from the engine only', async () => {
    const facets = await slowSearch(`/indexes/${uid}/facet-search`, 400, { facetName: 'title', facetQuery: 'car' });
    expect(facets.status).toBe(200);
    expect(facets.body.facetHits).toEqual([{ value: 'Carol', count: 1 }]);
    expect(facets.body.processingTimeMs).toBeLessThan(350);
  });

  it('when the request comes in one piece, then the figure is the short time the server took', async () => {
    const r = await slowSearch(`/indexes/${uid}/search`, 0);
    expect(r.status).toBe(200);
    expect(r.body.processingTimeMs).toBeLessThan(400);
  });
});
