/**
 * Remote embedders against real HTTP servers on loopback that speak each API (OpenAI-style,
 * Ollama-style, a custom REST shape), including their failures; and the outbound allowlist
 * refusing an embedder outside loopback before anything is sent.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

/** A 3-dimension "model": which of cat, dog, car the text mentions (never all zero). */
function fakeEmbedding(text: string): number[] {
  const t = text.toLowerCase();
  return [t.includes('cat') ? 1 : 0.01, t.includes('dog') ? 1 : 0.01, t.includes('car') ? 1 : 0.01];
}

interface Seen {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

let api: http.Server;
let base: string;
const seen: Seen[] = [];
let flaky = 0;

beforeAll(async () => {
  api = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = raw ? JSON.parse(raw) : null;
      seen.push({ path: req.url ?? '', headers: req.headers, body });
      const send = (status: number, value: unknown) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      switch (req.url) {
        case '/v1/embeddings':
          if (req.headers.authorization !== 'Bearer sk-test') return send(401, { error: 'bad key' });
          return send(200, {
            data: body.input.map((t: string, index: number) => ({ index, embedding: fakeEmbedding(t) })).reverse(),
          });
        case '/api/embed':
          return send(200, { model: body.model, embeddings: body.input.map(fakeEmbedding) });
        case '/custom':
          return send(200, { results: body.inputs.map((t: { text: string }) => ({ vec: fakeEmbedding(t.text) })) });
        case '/flaky':
          flaky += 1;
          return flaky === 1
            ? send(500, { error: 'try again' })
            : send(200, { results: body.inputs.map((t: { text: string }) => ({ vec: fakeEmbedding(t.text) })) });
        case '/broken':
          return send(500, { error: 'down' });
        case '/wide':
          return send(200, { results: body.inputs.map(() => ({ vec: [1, 2, 3, 4] })) });
        default:
          return send(404, {});
      }
    });
  });
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
  await new Promise((r) => api.close(r));
});

let s: TestServer;
const DOCS = [
  { id: 1, title: 'a cat on a mat', other: 1 },
  { id: 2, title: 'a dog in the park', other: 1 },
  { id: 3, title: 'a fast car', other: 1 },
];

async function task(r: { body: { taskUid: number } }): Promise<any> {
  return s.waitTask(r.body.taskUid, 60_000);
}

const rest = (url: string, extra: Record<string, unknown> = {}) => ({
  source: 'rest',
  url,
  request: { inputs: [{ text: '{{text}}' }, '{{..}}'] },
  response: { results: [{ vec: '{{embedding}}' }, '{{..}}'] },
  documentTemplate: '{{doc.title}}',
  ...extra,
});

async function indexWith(embedder: Record<string, unknown>): Promise<{ uid: string; settings: any; docs: any }> {
  const uid = uniqueIndex('remote');
  const settings = await task(
    await s.api('PATCH', `/indexes/${uid}/settings`, { body: { embedders: { e: embedder } } }),
  );
  const docs = await task(await s.api('POST', `/indexes/${uid}/documents`, { body: DOCS }));
  return { uid, settings, docs };
}

const first = async (uid: string, q: string) =>
  (
    await s.api('POST', `/indexes/${uid}/search`, {
      body: { q, hybrid: { embedder: 'e', semanticRatio: 1 }, limit: 1 },
    })
  ).body.hits[0]?.id;

it('when the source is OpenAI-style, then documents and queries are embedded with the key, model and dimensions', async () => {
  const { uid, settings, docs } = await indexWith({
    source: 'openAi',
    url: `${base}/v1/embeddings`,
    apiKey: 'sk-test',
    model: 'text-embedding-3-small',
    dimensions: 3,
    documentTemplate: '{{doc.title}}',
  });
  expect(settings.status).toBe('succeeded');
  expect(docs.error).toBeNull();
  const sent = seen.filter((x) => x.path === '/v1/embeddings');
  expect(sent[0].body).toMatchObject({
    model: 'text-embedding-3-small',
    dimensions: 3,
    input: ['a cat on a mat', 'a dog in the park', 'a fast car'],
  });
  expect(await first(uid, 'my dog')).toBe(2);
  expect((await s.api('GET', `/indexes/${uid}/stats`)).body.numberOfEmbeddings).toBe(3);
});

it('when the source is Ollama-style, then the model embeds batches through /api/embed', async () => {
  const { uid, docs } = await indexWith({ source: 'ollama', url: `${base}/api/embed`, model: 'nomic-embed-text' });
  expect(docs.error).toBeNull();
  expect(seen.filter((x) => x.path === '/api/embed')[0].body.model).toBe('nomic-embed-text');
  expect(await first(uid, 'car')).toBe(3);
});

it('when the source is a custom REST API, then its templates shape the batch and its headers and key are sent', async () => {
  const { uid, docs } = await indexWith(rest(`${base}/custom`, { apiKey: 'secret', headers: { 'X-Tenant': 'blue' } }));
  expect(docs.error).toBeNull();
  const sent = seen.filter((x) => x.path === '/custom');
  expect(sent[0].body).toEqual({
    inputs: [{ text: 'a cat on a mat' }, { text: 'a dog in the park' }, { text: 'a fast car' }],
  });
  expect(sent[0].headers.authorization).toBe('Bearer secret');
  expect(sent[0].headers['x-tenant']).toBe('blue');
  expect(await first(uid, 'cats')).toBe(1);
  const d = await s.api('GET', `/indexes/${uid}/documents/1?retrieveVectors=true`);
  expect(d.body._vectors.e.regenerate).toBe(true);

  // An update that renders the same text is not embedded again; a changed text is.
  const before = seen.filter((x) => x.path === '/custom').length;
  await task(await s.api('PUT', `/indexes/${uid}/documents`, { body: [{ id: 1, other: 2 }] }));
  expect(seen.filter((x) => x.path === '/custom').length).toBe(before);
  await task(await s.api('PUT', `/indexes/${uid}/documents`, { body: [{ id: 1, title: 'a car now' }] }));
  const after = seen.filter((x) => x.path === '/custom');
  expect(after.length).toBe(before + 1);
  expect(after[after.length - 1].body).toEqual({ inputs: [{ text: 'a car now' }] });
});

it('when the API fails once, then the request is tried again and the task succeeds', async () => {
  const { docs } = await indexWith(rest(`${base}/flaky`));
  expect(docs.status).toBe('succeeded');
  expect(seen.filter((x) => x.path === '/flaky').length).toBe(2);
});

it('when the API keeps failing or answers the wrong dimensions, then the task fails and nothing is written', async () => {
  const broken = await indexWith(rest(`${base}/broken`));
  expect(broken.docs.status).toBe('failed');
  expect(broken.docs.error.code).toBe('vector_embedding_error');
  expect(broken.docs.error.message).toContain('answered 500');
  expect(seen.filter((x) => x.path === '/broken').length).toBe(3);
  expect((await s.api('GET', `/indexes/${broken.uid}/stats`)).body.numberOfDocuments).toBe(0);
  const wide = await indexWith(rest(`${base}/wide`, { dimensions: 3 }));
  expect(wide.docs.status).toBe('failed');
  expect(wide.docs.error.message).toContain('an embedding has 4 dimensions, expected 3');
});

it('when an embedder lives outside the allowed networks, then nothing is sent and the task says why', async () => {
  const count = seen.length;
  const { docs } = await indexWith(rest('http://192.0.2.1/embed'));
  expect(docs.status).toBe('failed');
  expect(docs.error.code).toBe('vector_embedding_error');
  expect(docs.error.message).toContain('outside the networks outbound requests may reach');
  expect(seen.length).toBe(count);
});
