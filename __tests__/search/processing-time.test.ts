/**
 * `processingTimeMs` counts from the moment the server received the request, not from the
 * moment the engine started: parsing, validation and the waits for a search slot and a thread
 * are in it. Here the request's headers go first and its body 400 ms later, so an answer
 * timed from the engine alone would say a few milliseconds. Both the fast path (a plain POST)
 * and Express (a `?` in the URL sends the request there) are checked, and a request sent in
 * one piece still reports a small figure.
 */
import net from 'node:net';
import { MASTER_KEY, startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let t: TestServer;
const uid = uniqueIndex('ptime');

beforeAll(async () => {
  t = await startTestServer();
  const a = await t.api('POST', `/indexes/${uid}/documents`, { body: [{ id: 1, title: 'Carol' }] });
  expect((await t.waitTask(a.body.taskUid)).status).toBe('succeeded');
});
afterAll(async () => {
  await t.close();
});

/** Sends a search with its body `delayMs` after its headers; resolves with the parsed answer. */
function slowSearch(path: string, delayMs: number): Promise<{ status: number; body: any }> {
  const { port, hostname } = new URL(t.url);
  const body = JSON.stringify({ q: 'carol' });
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

  it('when the request comes in one piece, then the figure is the short time the server took', async () => {
    const r = await slowSearch(`/indexes/${uid}/search`, 0);
    expect(r.status).toBe(200);
    expect(r.body.processingTimeMs).toBeLessThan(400);
  });
});
