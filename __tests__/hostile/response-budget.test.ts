/**
 * Issue 71: the byte budget of answers in flight (`--experimental-search-response-budget`), on
 * a real server over loopback with its store on disk. A client that stops reading a large
 * answer keeps it in flight (the answer is larger than the sockets' buffers), which makes the
 * budget full without any timing: meanwhile every search, multi-search and document fetch is
 * refused with 503 `too_many_search_requests`; once the answer is read, the budget is free
 * again, also when a client disconnects in the middle of its answer. One answer larger than the
 * whole budget is sent when nothing else is in flight.
 */
import net from 'node:net';
import type { ChildProcess } from 'node:child_process';
import { CHILD_KEY, call, startChild, finishedTask } from '../helpers/child';
import { tempDir } from '../helpers/server';

jest.setTimeout(180_000);

/** 1 MB: less than one answer of all the books (about 70 MB). */
const BUDGET = 1_000_000;
const BOOKS = 700;

let child: ChildProcess;
let url: string;
let port: number;

beforeAll(async () => {
  ({ child, url } = await startChild(tempDir('quarry-budget-'), [
    '--experimental-search-response-budget',
    String(BUDGET),
    '--experimental-mcp',
  ]));
  port = Number(new URL(url).port);
  // 700 documents of about 100 KB each: a 70 MB answer, more than loopback's socket buffers
  // hold, so a client that stops reading keeps most of it in the server.
  const docs = Array.from({ length: BOOKS }, (_, i) => ({
    id: i,
    title: `book ${i}`,
    text: `chapter ${i} `.repeat(9000),
  }));
  const r = await call(url, 'POST', '/indexes/books/documents', docs);
  const t = await finishedTask(url, r.body.taskUid);
  if (t.status !== 'succeeded') throw new Error(JSON.stringify(t.error));
});

afterAll(async () => {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ALL_BOOKS = { q: '', limit: 1000, attributesToRetrieve: ['id', 'text'] };

/** A request over fetch: status, Retry-After and body (never throws on status). */
async function ask(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; retryAfter: string | null; body: any }> {
  const res = await fetch(url + path, {
    method,
    headers: { Authorization: `Bearer ${CHILD_KEY}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: JSON.parse(text) };
}

/** A raw connection that sends `request`, stops reading once the status line arrived, and can read on or hang up. */
function stalledRequest(
  request: string,
): Promise<{ socket: net.Socket; received: () => string; ended: Promise<void>; resume: () => void }> {
  return new Promise((resolve, reject) => {
    let data = '';
    let reading = true;
    let resolved = false;
    const buffer = Buffer.alloc(64 * 1024);
    const socket = net.connect({
      port,
      host: '127.0.0.1',
      onread: {
        buffer,
        callback: (n: number, buf: Buffer) => {
          data += buf.toString('latin1', 0, n);
          if (!resolved && data.includes('\r\n\r\n')) {
            resolved = true;
            // Returning false stops reading from the socket: the server's writes back up.
            reading = false;
            socket.pause();
            resolve({
              socket,
              received: () => data,
              ended,
              resume: () => {
                reading = true;
                socket.resume();
              },
            });
          }
          return reading;
        },
      },
    });
    const ended = new Promise<void>((r) => socket.once('close', () => r()));
    socket.on('error', () => undefined);
    socket.once('connect', () => socket.write(request));
    socket.once('error', reject);
  });
}

const rawPost = (path: string, body: string, accept = 'application/json') =>
  `POST ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${CHILD_KEY}\r\nContent-Type: application/json\r\nAccept: ${accept}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;

const searchRequest = () => rawPost('/indexes/books/search', JSON.stringify(ALL_BOOKS));

/** The MCP search tool asked for every book: its result is as large as the route's answer. */
const mcpSearch = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'search', arguments: { indexUid: 'books', ...ALL_BOOKS } },
});

/** The refusal, as every route answers it (a multi-search names the query, as for the limiter's refusal). */
function expectRefused(r: { status: number; retryAfter: string | null; body: any }, inside?: string): void {
  expect(r.status).toBe(503);
  expect(r.retryAfter).toBe('10');
  if (inside !== undefined) {
    expect(r.body.message.startsWith(`Inside \`${inside}\`: `)).toBe(true);
    r.body.message = r.body.message.slice(`Inside \`${inside}\`: `.length);
  }
  expect(r.body).toMatchInlineSnapshot(`
{
  "code": "too_many_search_requests",
  "link": "https://docs.meilisearch.com/errors#too_many_search_requests",
  "message": "Too many search answers being sent at the same time: together they would hold more than the response budget of 1000000 bytes. Retry after 10s.",
  "type": "system",
}
`);
}

/** A complete and correct answer of every book. */
function expectAllBooks(r: { status: number; body: any }): void {
  expect(r.status).toBe(200);
  expect(r.body.hits).toHaveLength(BOOKS);
  expect(new Set(r.body.hits.map((h: { id: number }) => h.id)).size).toBe(BOOKS);
  for (const h of r.body.hits) expect(h.text).toBe(`chapter ${h.id} `.repeat(9000));
}

/** Asks until the budget takes the search again (a hung-up client's bytes are given back when the server sees the socket close). */
async function searchOnceFree(): Promise<{ status: number; retryAfter: string | null; body: any }> {
  for (let i = 0; ; i++) {
    const r = await ask('POST', '/indexes/books/search', ALL_BOOKS);
    if (r.status !== 503 || i >= 200) return r;
    await sleep(50);
  }
}

describe('the response budget (issue 71)', () => {
  it('when an answer larger than the budget is the only one in flight, then it is sent whole', async () => {
    expectAllBooks(await ask('POST', '/indexes/books/search', ALL_BOOKS));
  });

  it('when a stalled reader holds an answer, then searches, multi-searches and document fetches are refused 503 until it has read it', async () => {
    const stalled = await stalledRequest(searchRequest());
    expect(stalled.received()).toMatch(/^HTTP\/1\.1 200 /);

    expectRefused(await ask('POST', '/indexes/books/search', ALL_BOOKS));
    expectRefused(await ask('GET', '/indexes/books/search?q=book&limit=5'));
    expectRefused(
      await ask('POST', '/multi-search', { queries: [{ indexUid: 'books', q: 'book', limit: 2 }] }),
      '.queries[0]',
    );
    expectRefused(await ask('POST', '/multi-search', { federation: {}, queries: [{ indexUid: 'books', q: 'book' }] }));
    expectRefused(await ask('GET', `/indexes/books/documents?limit=${BOOKS}`));
    expectRefused(await ask('POST', '/indexes/books/documents/fetch', { limit: 3 }));
    // What is not a search answer is not held back.
    expect((await ask('GET', '/health')).status).toBe(200);

    stalled.resume();
    await stalled.ended;
    const raw = stalled.received();
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    expectAllBooks({ status: 200, body });

    // Read to the end: the budget is free again.
    expectAllBooks(await searchOnceFree());
    expect((await ask('GET', `/indexes/books/documents?limit=${BOOKS}`)).body.results).toHaveLength(BOOKS);
  });

  it('when large searches arrive together, then each is either refused 503 or answered complete and correct, and at least one is answered', async () => {
    // Each answer (20 books of 100 KB) is about 2 MB, more than the budget alone.
    const twenty = { ...ALL_BOOKS, limit: 20 };
    const answers = await Promise.all(Array.from({ length: 8 }, () => ask('POST', '/indexes/books/search', twenty)));
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const a of ok) {
      expect(new Set(a.body.hits.map((h: { id: number }) => h.id)).size).toBe(20);
      for (const h of a.body.hits) expect(h.text).toBe(`chapter ${h.id} `.repeat(9000));
    }
    for (const a of answers.filter((x) => x.status !== 200)) expectRefused(a);
    // After the burst, the next search is answered.
    expectAllBooks(await searchOnceFree());
  });

  it('when a stalled reader holds an MCP tool result, then searches are refused until it has read it', async () => {
    const stalled = await stalledRequest(
      rawPost('/mcp', JSON.stringify(mcpSearch(1)), 'application/json, text/event-stream'),
    );
    expect(stalled.received()).toMatch(/^HTTP\/1\.1 200 /);
    expectRefused(await ask('POST', '/indexes/books/search', ALL_BOOKS));
    stalled.resume();
    await stalled.ended;
    const raw = stalled.received();
    const rpc = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    expect(rpc.result.isError).toBeFalsy();
    expect(rpc.result.structuredContent.hits).toHaveLength(BOOKS);
    expectAllBooks(await searchOnceFree());
  });

  it('when a client hangs up in the middle of its answer, then its bytes are given back', async () => {
    const stalled = await stalledRequest(searchRequest());
    expectRefused(await ask('POST', '/indexes/books/search', ALL_BOOKS));
    stalled.socket.destroy();
    await stalled.ended;
    expectAllBooks(await searchOnceFree());
  });
});
