/**
 * The plain search request skips Express (`ts/http/fast-search.ts`). Here the same requests go
 * to a loopback server that answers ONLY through the fast path (anything it declines answers
 * 599) and to the real server's Express app (a `?` in the URL sends it there): status, body and
 * headers must be the same.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { requestObservers } from '../../ts/app';
import { fastSearch } from '../../ts/http/fast-search';
import { SearchService } from '../../ts/search/service';
import { MASTER_KEY, startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let t: TestServer;
let fastOnly: http.Server;
let fastUrl: string;
const uid = uniqueIndex('fast');
let searchKey: string;

beforeAll(async () => {
  t = await startTestServer();
  const deps = t.server.deps;
  const fast = fastSearch(deps, new SearchService(deps), requestObservers(deps));
  fastOnly = http.createServer((req, res) => {
    if (!fast(req, res)) res.writeHead(599).end('declined');
  });
  await new Promise<void>((r) => fastOnly.listen(0, '127.0.0.1', r));
  fastUrl = `http://127.0.0.1:${(fastOnly.address() as AddressInfo).port}`;
  const s = await t.api('PATCH', `/indexes/${uid}/settings`, { body: { filterableAttributes: ['genre'] } });
  await t.waitTask(s.body.taskUid);
  const a = await t.api('POST', `/indexes/${uid}/documents`, {
    body: [
      { id: 1, title: 'Carol', genre: 'drama' },
      { id: 2, title: 'Carol and the sea', genre: 'sea' },
    ],
  });
  await t.waitTask(a.body.taskUid);
  const keys = await t.api('GET', '/keys');
  searchKey = keys.body.results.find(
    (k: { actions: string[] }) => k.actions.includes('search') && k.actions.length === 1,
  ).key;
});
afterAll(async () => {
  await new Promise((r) => fastOnly.close(r));
  await t.close();
});

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | null>;
}

async function ask(
  base: string,
  suffix: string,
  body: string | undefined,
  headers: Record<string, string>,
): Promise<Answer> {
  const res = await fetch(`${base}/indexes/${uid}/search${suffix}`, { method: 'POST', headers, body });
  const pick = (h: string) => res.headers.get(h);
  // The engine's own clock differs between two runs of the same search, and each request and
  // query gets its own uid.
  const text = (await res.text())
    .replace(/"processingTimeMs":\d+/, '"processingTimeMs":0')
    .replace(/"(request|query)Uid":"[0-9a-f-]{36}"/g, '"$1Uid":"UID"');
  return {
    status: res.status,
    body: text,
    headers: {
      'content-type': pick('content-type'),
      'access-control-allow-origin': pick('access-control-allow-origin'),
      'retry-after': pick('retry-after'),
    },
  };
}

const CASES: Array<[string, string | undefined, Record<string, string>]> = [
  [
    'a query with hits and highlights',
    JSON.stringify({ q: 'carol', attributesToHighlight: ['title'], showRankingScore: true }),
    { 'Content-Type': 'application/json', Authorization: `Bearer ${MASTER_KEY}` },
  ],
  [
    'a filter and facets',
    JSON.stringify({ q: '', filter: 'genre = sea', facets: ['genre'] }),
    { 'Content-Type': 'application/json; charset=utf-8', Authorization: `Bearer ${MASTER_KEY}` },
  ],
  ['an empty body', '', { 'Content-Type': 'application/json', Authorization: `Bearer ${MASTER_KEY}` }],
  [
    'a request for metadata',
    JSON.stringify({ q: 'carol' }),
    { 'Content-Type': 'application/json', Authorization: `Bearer ${MASTER_KEY}`, 'Meili-Include-Metadata': 'true' },
  ],
  [
    'an invalid parameter',
    JSON.stringify({ q: 'x', limit: -1 }),
    { 'Content-Type': 'application/json', Authorization: `Bearer ${MASTER_KEY}` },
  ],
  [
    'a filter on an attribute that is not filterable',
    JSON.stringify({ filter: 'title = x' }),
    { 'Content-Type': 'application/json', Authorization: `Bearer ${MASTER_KEY}` },
  ],
  ['malformed JSON', '{"q": ', { 'Content-Type': 'application/json', Authorization: `Bearer ${MASTER_KEY}` }],
  [
    'JSON nested too deep',
    `${'['.repeat(200)}${']'.repeat(200)}`,
    { 'Content-Type': 'application/json', Authorization: `Bearer ${MASTER_KEY}` },
  ],
  ['no Authorization header', JSON.stringify({ q: 'carol' }), { 'Content-Type': 'application/json' }],
  ['a wrong key', JSON.stringify({ q: 'carol' }), { 'Content-Type': 'application/json', Authorization: 'Bearer nope' }],
  [
    'another scheme',
    JSON.stringify({ q: 'carol' }),
    { 'Content-Type': 'application/json', Authorization: 'Basic abc' },
  ],
];

describe('given the same search request', () => {
  it.each(CASES)('when it is %s, then the fast path answers what Express answers', async (_name, body, headers) => {
    const viaExpress = await ask(t.url, '?', body, headers);
    const viaFast = await ask(fastUrl, '', body, headers);
    expect(viaFast.status).not.toBe(599);
    expect(viaFast).toEqual(viaExpress);
  });

  it('when a search-only key searches, then both paths answer its hits', async () => {
    const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${searchKey}` };
    const viaFast = await ask(fastUrl, '', JSON.stringify({ q: 'sea' }), headers);
    expect(viaFast.status).toBe(200);
    expect(viaFast).toEqual(await ask(t.url, '?', JSON.stringify({ q: 'sea' }), headers));
  });

  it('when an index does not exist, then both paths answer index_not_found', async () => {
    const r = await fetch(`${fastUrl}/indexes/missing_idx/search`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${MASTER_KEY}` },
      body: '{}',
    });
    expect(r.status).toBe(404);
    expect(((await r.json()) as { code: string }).code).toBe('index_not_found');
  });
});

describe('given a request that is not the plain form', () => {
  it.each([
    ['a query string', '?x=1', { 'Content-Type': 'application/json' }],
    ['no content type', '', {}],
    ['another content type', '', { 'Content-Type': 'text/plain' }],
    ['a content encoding', '', { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }],
  ])('when it has %s, then the fast path leaves it to Express', async (_name, suffix, headers) => {
    const r = await fetch(`${fastUrl}/indexes/${uid}/search${suffix}`, {
      method: 'POST',
      headers: { ...headers, Authorization: `Bearer ${MASTER_KEY}` },
      body: '{}',
    });
    expect(r.status).toBe(599);
  });
});

describe('given a client that leaves in the middle of its body', () => {
  it('when the connection closes before the body is complete, then the server goes on answering', async () => {
    const net = await import('node:net');
    const { port } = new URL(t.url);
    await new Promise<void>((resolve, reject) => {
      const s = net.connect(Number(port), '127.0.0.1', () => {
        s.write(
          `POST /indexes/${uid}/search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${MASTER_KEY}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"q":`,
        );
        setTimeout(() => {
          s.destroy();
          resolve();
        }, 50);
      });
      s.on('error', reject);
    });
    const after = await t.api('POST', `/indexes/${uid}/search`, { body: { q: 'carol' } });
    expect(after.status).toBe(200);
    expect(after.body.hits.length).toBe(2);
  });
});
