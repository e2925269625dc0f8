/**
 * A remote embedder that never answers: each request gives up after
 * `--experimental-rest-embedder-timeout-seconds` (Meilisearch's
 * `MEILI_EXPERIMENTAL_REST_EMBEDDER_TIMEOUT_SECONDS`), is tried again at most three times and
 * not once `--experimental-rest-embedder-max-retry-duration-seconds` has passed since its
 * first try; the task then fails with `vector_embedding_error` and writes nothing. The
 * embedder is a real HTTP server on loopback that reads each request and holds it open.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let stalled: http.Server;
let base: string;
const seen: string[] = [];

beforeAll(async () => {
  stalled = http.createServer((req) => {
    req.resume();
    req.on('end', () => seen.push(req.url ?? ''));
  });
  await new Promise<void>((r) => stalled.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`;
});
afterAll(async () => {
  stalled.closeAllConnections();
  await new Promise((r) => stalled.close(r));
});

const rest = (path: string) => ({
  source: 'rest',
  url: `${base}${path}`,
  dimensions: 3,
  request: { input: '{{text}}' },
  response: { embedding: '{{embedding}}' },
  documentTemplate: '{{doc.title}}',
});

async function addWith(s: TestServer, path: string): Promise<{ uid: string; task: any }> {
  const uid = uniqueIndex('stall');
  const settings = await s.waitTask(
    (await s.api('PATCH', `/indexes/${uid}/settings`, { body: { embedders: { e: rest(path) } } })).body.taskUid,
    60_000,
  );
  expect(settings.status).toBe('succeeded');
  const r = await s.api('POST', `/indexes/${uid}/documents`, { body: [{ id: 1, title: 'a cat' }] });
  return { uid, task: await s.waitTask(r.body.taskUid, 60_000) };
}

it('when the embedder never answers, then each try times out, three tries are made and the task fails with nothing written', async () => {
  const s = await startTestServer({ args: ['--experimental-rest-embedder-timeout-seconds', '0.5'] });
  try {
    const { uid, task } = await addWith(s, '/three');
    expect(task.status).toBe('failed');
    expect(task.error.code).toBe('vector_embedding_error');
    expect(task.error.message).toContain('timed out');
    expect(task.error.message).toContain('after 3 attempts');
    expect(seen.filter((p) => p === '/three').length).toBe(3);
    expect((await s.api('GET', `/indexes/${uid}/stats`)).body.numberOfDocuments).toBe(0);
  } finally {
    await s.close();
  }
});

it('when the retry duration has passed after the first try, then it is not tried again', async () => {
  const s = await startTestServer({
    args: [
      '--experimental-rest-embedder-timeout-seconds',
      '0.5',
      '--experimental-rest-embedder-max-retry-duration-seconds',
      '0.1',
    ],
  });
  try {
    const { task } = await addWith(s, '/once');
    expect(task.status).toBe('failed');
    expect(task.error.message).toContain('after 1 attempt)');
    expect(seen.filter((p) => p === '/once').length).toBe(1);
  } finally {
    await s.close();
  }
});

it('when the time-out is not a positive number of seconds, then start-up is refused', async () => {
  await expect(startTestServer({ args: ['--experimental-rest-embedder-timeout-seconds', '0'] })).rejects.toThrow(
    'not a positive number of seconds',
  );
});
