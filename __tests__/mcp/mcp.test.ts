/**
 * `POST /mcp` with the official MCP TypeScript SDK as the client (`Client` over
 * `StreamableHTTPClientTransport`) against a real Quarry on loopback: the handshake, each
 * tool against the REST route it stands for, key and tenant-token scopes, the start-up option,
 * bad arguments; then the transport's edges with plain HTTP (what the SDK never sends).
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { FetchSchema } from '../../ts/schemas/documents';
import { SearchSchema } from '../../ts/schemas/search';
import { MASTER_KEY, startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
let embedder: http.Server;
let movies: string;
let books: string;
const open: Client[] = [];

const MOVIES = [
  { id: 1, title: 'Carol', genre: 'drama', year: 2015, plot: 'a cat and a woman in New York' },
  { id: 2, title: 'Wonder Woman', genre: 'action', year: 2017, plot: 'an amazon princess goes to war' },
  { id: 3, title: 'Life of Pi', genre: 'adventure', year: 2012, plot: 'a boy, a tiger and a boat' },
  { id: 4, title: 'Mad Max', genre: 'action', year: 2015, plot: 'a car chase across the desert' },
  { id: 5, title: 'Moana', genre: 'adventure', year: 2016, plot: 'a girl sails with a demigod' },
  { id: 6, title: 'Dog Day Afternoon', genre: 'drama', year: 1975, plot: 'a dog day bank robbery' },
];

/** A 3-dimension "model" served on loopback: which of cat, dog, car the text mentions. */
function embedding(text: string): number[] {
  const t = text.toLowerCase();
  return [t.includes('cat') ? 1 : 0.01, t.includes('dog') ? 1 : 0.01, t.includes('car') ? 1 : 0.01];
}

async function task(r: { status: number; body: any }): Promise<any> {
  if (r.status !== 202) throw new Error(`expected a task, got ${r.status} ${JSON.stringify(r.body)}`);
  const t = await s.waitTask(r.body.taskUid, 60_000);
  if (t.status !== 'succeeded') throw new Error(JSON.stringify(t.error));
  return t;
}

async function createKey(
  actions: string[],
  indexes: string[] = ['*'],
  expiresAt: string | null = null,
): Promise<{ uid: string; key: string }> {
  const r = await s.api('POST', '/keys', { body: { actions, indexes, expiresAt } });
  if (r.status !== 201) throw new Error(r.text);
  return r.body;
}

function tenantToken(claims: Record<string, unknown>, secret: string): string {
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const signed = `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc(claims)}`;
  return `${signed}.${createHmac('sha256', secret).update(signed).digest('base64url')}`;
}

/** An SDK client connected to Quarry's `/mcp` with `key` as its bearer token. */
async function connect(key: string | null = MASTER_KEY, url = s.url): Promise<Client> {
  const client = new Client({ name: 'quarry-test', version: '1.0.0' });
  const headers: Record<string, string> = key === null ? {} : { Authorization: `Bearer ${key}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  open.push(client);
  return client;
}

/** A tool's result: its JSON text parsed, whether it is an error, and its structured content. */
async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError: boolean; json: any; structured: any }> {
  const r: any = await client.callTool({ name, arguments: args });
  expect(r.content).toHaveLength(1);
  expect(r.content[0].type).toBe('text');
  return { isError: r.isError === true, json: JSON.parse(r.content[0].text), structured: r.structuredContent };
}

/** The REST answer for the same search, without what differs from one run to the next. */
const stable = (body: any) => {
  const { processingTimeMs: _t, requestUid: _u, ...rest } = body;
  return rest;
};

const mcpPost = (body: unknown, opts: { key?: string | null; headers?: Record<string, string>; raw?: string } = {}) =>
  s.api('POST', '/mcp', {
    key: opts.key,
    body: opts.raw === undefined ? body : undefined,
    raw: opts.raw,
    headers: { Accept: 'application/json, text/event-stream', ...opts.headers },
  });

beforeAll(async () => {
  embedder = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ results: body.inputs.map((t: { text: string }) => ({ vec: embedding(t.text) })) }));
    });
  });
  await new Promise<void>((r) => embedder.listen(0, '127.0.0.1', r));
  s = await startTestServer({ args: ['--experimental-mcp'] });
  movies = uniqueIndex('mcp_movies');
  books = uniqueIndex('mcp_books');
  const url = `http://127.0.0.1:${(embedder.address() as AddressInfo).port}/embed`;
  await task(
    await s.api('PATCH', `/indexes/${movies}/settings`, {
      body: {
        filterableAttributes: ['genre', 'year'],
        sortableAttributes: ['year'],
        embedders: {
          plots: {
            source: 'rest',
            url,
            request: { inputs: [{ text: '{{text}}' }, '{{..}}'] },
            response: { results: [{ vec: '{{embedding}}' }, '{{..}}'] },
            documentTemplate: '{{doc.plot}}',
          },
        },
      },
    }),
  );
  await task(await s.api('POST', `/indexes/${movies}/documents`, { body: MOVIES }));
  await task(await s.api('POST', `/indexes/${books}/documents`, { body: [{ id: 'b1', title: 'Dune' }] }));
});
afterAll(async () => {
  for (const c of open) await c.close();
  await s?.close();
  await new Promise((r) => embedder?.close(r));
});

describe('without --experimental-mcp', () => {
  let off: TestServer;
  beforeAll(async () => {
    off = await startTestServer();
  });
  afterAll(() => off?.close());

  it('then /mcp is no route: 404 with no body for every method, with or without a key, as Meilisearch answers an unknown route', async () => {
    const seen = [];
    for (const method of ['POST', 'GET', 'DELETE']) {
      for (const key of [MASTER_KEY, null, 'not-a-key']) {
        const r = await off.api(method, '/mcp', {
          key,
          body: method === 'POST' ? { jsonrpc: '2.0', id: 1, method: 'ping' } : undefined,
        });
        seen.push({ method, key, status: r.status, text: r.text, allow: r.headers.get('allow') });
      }
    }
    expect(seen).toEqual(seen.map(({ method, key }) => ({ method, key, status: 404, text: '', allow: null })));
    await expect(connect(MASTER_KEY, off.url)).rejects.toMatchObject({ code: 404 });
  });

  it("then /experimental-features is Meilisearch's: no `mcp` flag to read or to set", async () => {
    expect(Object.keys((await off.api('GET', '/experimental-features')).body)).not.toContain('mcp');
    const r = await off.api('PATCH', '/experimental-features', { body: { mcp: true } });
    expect([r.status, r.body.code]).toEqual([400, 'bad_request']);
    expect(r.body.message).toMatch(/^Unknown field `mcp`: expected one of `metrics`, .*, `renderRoute`$/);
    // With the option, the flags are the same: the option is no feature.
    expect((await s.api('GET', '/experimental-features')).body).toEqual(
      (await off.api('GET', '/experimental-features')).body,
    );
  });

  it('then /openapi.json does not describe /mcp; with the option it does', async () => {
    expect((await off.api('GET', '/openapi.json', { key: null })).body.paths['/mcp']).toBeUndefined();
    expect(Object.keys((await s.api('GET', '/openapi.json', { key: null })).body.paths['/mcp'])).toEqual(['post']);
  });
});

describe('with --experimental-mcp', () => {
  it('when the key is not a key, then invalid_api_key before any JSON-RPC', async () => {
    expect((await mcpPost({ jsonrpc: '2.0', id: 1, method: 'ping' }, { key: 'not-a-key' })).body.code).toBe(
      'invalid_api_key',
    );
  });

  it('when the SDK connects, then the server names itself, offers tools and a version the client speaks', async () => {
    const client = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: 'quarry' });
    expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: false } });
    expect(client.getInstructions()).toContain('list_indexes');
    await expect(client.ping()).resolves.toEqual({});
  });

  it("when the tools are listed with the master key, then the four read tools come with input schemas over the routes' own fields", async () => {
    const { tools } = await (await connect()).listTools();
    expect(tools.map((t) => t.name)).toEqual(['list_indexes', 'search', 'get_documents', 'get_settings']);
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      expect(t.description!.length).toBeGreaterThan(40);
    }
    const props = (name: string) => Object.keys(tools.find((t) => t.name === name)!.inputSchema.properties ?? {});
    // Every argument but the index is a field of the route's body, validated by the route's schema.
    for (const p of props('search').filter((p) => p !== 'indexUid'))
      expect(Object.keys(SearchSchema.shape)).toContain(p);
    for (const p of props('get_documents').filter((p) => p !== 'indexUid'))
      expect(Object.keys(FetchSchema.shape)).toContain(p);
    expect(props('search')).toEqual(
      expect.arrayContaining([
        'indexUid',
        'q',
        'filter',
        'facets',
        'sort',
        'limit',
        'offset',
        'hybrid',
        'attributesToRetrieve',
      ]),
    );
    expect(tools.find((t) => t.name === 'get_settings')!.inputSchema.required).toEqual(['indexUid']);
  });

  it("when list_indexes is called, then it answers GET /indexes's page", async () => {
    const client = await connect();
    const r = await call(client, 'list_indexes', { limit: 1000 });
    expect(r.isError).toBe(false);
    expect(r.json).toEqual((await s.api('GET', '/indexes?limit=1000')).body);
    expect(r.structured).toEqual(r.json);
    expect(r.json.results.map((i: any) => i.uid)).toEqual(expect.arrayContaining([movies, books]));
    const page = await call(client, 'list_indexes', { limit: 1, offset: 1 });
    expect(page.json).toMatchObject({ offset: 1, limit: 1, total: r.json.total });
    expect(page.json.results).toEqual([r.json.results[1]]);
  });

  it('when search is called with q, filter, facets, sort, limit, offset and attributesToRetrieve, then it answers what POST /search answers', async () => {
    const client = await connect();
    const body = {
      q: 'a',
      filter: 'genre IN [action, adventure]',
      facets: ['genre'],
      sort: ['year:desc'],
      limit: 2,
      offset: 1,
      attributesToRetrieve: ['title', 'year'],
    };
    const r = await call(client, 'search', { indexUid: movies, ...body });
    expect(r.isError).toBe(false);
    const rest = (await s.api('POST', `/indexes/${movies}/search`, { body })).body;
    expect(stable(r.json)).toEqual(stable(rest));
    expect(r.json.hits).toEqual([
      { title: 'Moana', year: 2016 },
      { title: 'Mad Max', year: 2015 },
    ]);
    expect(r.json.facetDistribution).toEqual({ genre: { action: 2, adventure: 2 } });
    expect(r.json.estimatedTotalHits).toBe(4);
  });

  it("when search is hybrid, then the query is embedded by the index's embedder and semantic hits come first", async () => {
    const client = await connect();
    const r = await call(client, 'search', {
      indexUid: movies,
      q: 'dog',
      hybrid: { embedder: 'plots', semanticRatio: 1 },
      limit: 1,
      attributesToRetrieve: ['id'],
    });
    expect(r.isError).toBe(false);
    expect(r.json.hits).toEqual([{ id: 6 }]);
    const car = await call(client, 'search', {
      indexUid: movies,
      q: 'car',
      hybrid: { embedder: 'plots', semanticRatio: 1 },
      limit: 1,
      attributesToRetrieve: ['id'],
    });
    expect(car.json.hits).toEqual([{ id: 4 }]);
    expect(car.json.semanticHitCount).toBe(1);
  });

  it('when get_documents is called by ids or by a filter with a limit, then it answers POST /documents/fetch', async () => {
    const client = await connect();
    const byIds = await call(client, 'get_documents', { indexUid: movies, ids: [3, '5'], fields: ['title'] });
    expect(byIds.isError).toBe(false);
    expect(byIds.json).toEqual({
      results: [{ title: 'Life of Pi' }, { title: 'Moana' }],
      offset: 0,
      limit: 20,
      total: 2,
    });
    const filtered = await call(client, 'get_documents', { indexUid: movies, filter: 'year = 2015', limit: 1 });
    expect(filtered.json).toEqual(
      (await s.api('POST', `/indexes/${movies}/documents/fetch`, { body: { filter: 'year = 2015', limit: 1 } })).body,
    );
    expect(filtered.json).toMatchObject({ limit: 1, total: 2 });
    expect(filtered.json.results).toHaveLength(1);
  });

  it('when get_settings is called, then it answers GET /settings', async () => {
    const r = await call(await connect(), 'get_settings', { indexUid: movies });
    expect(r.isError).toBe(false);
    expect(r.json).toEqual((await s.api('GET', `/indexes/${movies}/settings`)).body);
    expect(r.json.filterableAttributes).toEqual(['genre', 'year']);
  });

  describe('when the key is limited', () => {
    it('when a key holds search on one index, then it sees the search tool only, searches that index and is refused the others', async () => {
      const { key } = await createKey(['search'], [movies]);
      const client = await connect(key);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['search']);
      const ok = await call(client, 'search', { indexUid: movies, q: 'moana' });
      expect(ok.isError).toBe(false);
      expect(ok.json.hits.map((h: any) => h.id)).toEqual([5]);
      const other = await call(client, 'search', { indexUid: books, q: 'dune' });
      expect(other.isError).toBe(true);
      expect(other.json).toEqual({
        message: `The API key cannot acces the index \`${books}\`, authorized indexes are ["${movies}"].`,
        code: 'invalid_api_key',
        type: 'auth',
        link: 'https://docs.meilisearch.com/errors#invalid_api_key',
      });
      for (const [name, args] of [
        ['list_indexes', {}],
        ['get_documents', { indexUid: movies }],
        ['get_settings', { indexUid: movies }],
      ] as const) {
        const r = await call(client, name, args);
        expect([name, r.isError, r.json.code, r.json.message]).toEqual([
          name,
          true,
          'invalid_api_key',
          'The provided API key is invalid.',
        ]);
      }
    });

    it('when a key holds indexes.get on some indexes, then list_indexes shows only those', async () => {
      const { key } = await createKey(['indexes.get'], [movies]);
      const r = await call(await connect(key), 'list_indexes', {});
      expect(r.json).toMatchObject({ total: 1 });
      expect(r.json.results.map((i: any) => i.uid)).toEqual([movies]);
    });

    it('when a key holds documents.get and settings.get, then those tools answer and search is refused', async () => {
      const { key } = await createKey(['documents.get', 'settings.get'], ['*']);
      const client = await connect(key);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['get_documents', 'get_settings']);
      expect((await call(client, 'get_documents', { indexUid: books })).json.results).toEqual([
        { id: 'b1', title: 'Dune' },
      ]);
      expect((await call(client, 'get_settings', { indexUid: books })).isError).toBe(false);
      expect((await call(client, 'search', { indexUid: books })).json.code).toBe('invalid_api_key');
    });

    it('when the caller holds a tenant token, then its rule filter narrows searches as on /search and no other tool answers', async () => {
      const parent = await createKey(['search', 'documents.get'], ['*']);
      const token = tenantToken(
        { apiKeyUid: parent.uid, searchRules: { [movies]: { filter: 'genre = drama' } }, exp: null },
        parent.key,
      );
      const client = await connect(token);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['search']);
      const r = await call(client, 'search', { indexUid: movies, filter: 'year > 2000' });
      expect(r.json.hits.map((h: any) => h.id)).toEqual([1]);
      expect(stable(r.json)).toEqual(
        stable(
          (await s.api('POST', `/indexes/${movies}/search`, { key: token, body: { filter: 'year > 2000' } })).body,
        ),
      );
      const books_ = await call(client, 'search', { indexUid: books });
      expect([books_.isError, books_.json.code]).toEqual([true, 'invalid_api_key']);
      expect(books_.json.message).toContain('tenant token cannot acces the index');
      // The parent key holds documents.get; the token does not hand it on.
      expect((await call(client, 'get_documents', { indexUid: movies })).json.code).toBe('invalid_api_key');
    });

    it('when the key is unknown, expired or missing, then the request is refused before the protocol, as every route refuses it', async () => {
      await expect(connect('nope')).rejects.toThrow(/invalid_api_key/);
      const expiresAt = Date.now() + 1000;
      const expiring = await createKey(['search'], ['*'], new Date(expiresAt).toISOString());
      await connect(expiring.key);
      await new Promise((r) => setTimeout(r, expiresAt + 200 - Date.now()));
      await expect(connect(expiring.key)).rejects.toThrow(/The provided API key is invalid/);
      await expect(connect(null)).rejects.toThrow(/missing_authorization_header/);
      const r = await mcpPost({ jsonrpc: '2.0', id: 1, method: 'ping' }, { key: null });
      expect([r.status, r.body.code]).toEqual([401, 'missing_authorization_header']);
    });
  });

  describe('when the input is bad', () => {
    let client: Client;
    beforeAll(async () => {
      client = await connect();
    });

    it.each([
      ['search', { indexUid: 'MOVIES!' }, 'invalid_index_uid', '`MOVIES!` is not a valid index uid.'],
      ['search', { q: 'x' }, 'missing_index_uid', 'Missing field `indexUid`'],
      ['search', { indexUid: 'nowhere_mcp' }, 'index_not_found', 'Index `nowhere_mcp` not found.'],
      [
        'search',
        { indexUid: '{movies}', vector: [1, 2, 3] },
        'bad_request',
        'Unknown field `vector`: expected one of `indexUid`, `q`, `filter`, `facets`, `sort`, `limit`, `offset`, `attributesToRetrieve`, `matchingStrategy`, `hybrid`, `showRankingScore`',
      ],
      [
        'search',
        { indexUid: '{movies}', limit: 'ten' },
        'invalid_search_limit',
        'Invalid value type at `.limit`: expected a positive integer, but found a string: `"ten"`',
      ],
      [
        'search',
        { indexUid: '{movies}', filter: 'title = Carol' },
        'invalid_search_filter',
        'Index `{movies}`: Attribute `title` is not filterable. Available filterable attribute patterns are: `genre`, `year`.\n2:7 "title" = "Carol"',
      ],
      [
        'search',
        { indexUid: '{movies}', sort: ['title:asc'] },
        'invalid_search_sort',
        'Index `{movies}`: Attribute `title` is not sortable. Available sortable attributes are: `year`.',
      ],
      [
        'search',
        { indexUid: '{movies}', q: 'x', hybrid: { embedder: 'nope' } },
        'invalid_search_embedder',
        'Cannot find embedder with name `nope`.',
      ],
      [
        'get_documents',
        { indexUid: '{movies}', ids: ['a b'] },
        'invalid_document_ids',
        'In `.ids[0]`: Document identifier `"a b"` is invalid.',
      ],
      [
        'get_documents',
        { indexUid: '{movies}', limit: -1 },
        'invalid_document_limit',
        'Invalid value type at `.limit`: expected a positive integer, but found a negative integer: `-1`',
      ],
      [
        'list_indexes',
        { limit: 'all' },
        'invalid_index_limit',
        'Invalid value type at `.limit`: expected a positive integer, but found a string: `"all"`',
      ],
      [
        'get_settings',
        { indexUid: '{movies}', fields: ['x'] },
        'bad_request',
        'Unknown field `fields`: expected one of `indexUid`',
      ],
    ])('when %s gets %j, then the tool answers isError with %s', async (name, args, code, message) => {
      const resolved = Object.fromEntries(Object.entries(args).map(([k, v]) => [k, v === '{movies}' ? movies : v]));
      const r = await call(client, name, resolved);
      expect(r.isError).toBe(true);
      expect(r.structured).toBeUndefined();
      expect(r.json.code).toBe(code);
      const expected = message.replace('{movies}', movies);
      expect(r.json.message.slice(0, expected.length)).toBe(expected);
      expect(Object.keys(r.json)).toEqual(['message', 'code', 'type', 'link']);
    });

    it('when the REST route gets the same bad body, then it answers the same error', async () => {
      const r = await call(client, 'search', { indexUid: movies, filter: 'title = Carol' });
      expect(r.json).toEqual(
        (await s.api('POST', `/indexes/${movies}/search`, { body: { filter: 'title = Carol' } })).body,
      );
    });

    it('when an unknown tool is called, then it is a JSON-RPC invalid params error', async () => {
      const err = await client.callTool({ name: 'delete_everything', arguments: {} }).catch((e) => e);
      expect(err).toBeInstanceOf(McpError);
      expect(err.code).toBe(ErrorCode.InvalidParams);
      expect(err.message).toContain('Unknown tool: delete_everything');
    });

    it('when a method the server does not offer is asked, then it is method not found', async () => {
      const err = await client.listResources().catch((e) => e);
      expect(err).toBeInstanceOf(McpError);
      expect(err.code).toBe(ErrorCode.MethodNotFound);
    });
  });

  it('when tool arguments and messages are hostile (seeded), then nothing answers 5xx or an internal error, and the server still searches', async () => {
    let seed = 0x69;
    const rand = () => {
      // mulberry32: a fixed stream, so a failure replays.
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
    const deep = (n: number): unknown => (n === 0 ? 'genre = drama' : [deep(n - 1)]);
    const values = (): unknown =>
      pick([
        null,
        true,
        0,
        -1,
        1.5,
        2 ** 60,
        '',
        'genre = drama',
        '\u0000\ud800',
        'x'.repeat(5000),
        movies,
        books,
        ['genre'],
        ['year:desc'],
        [null],
        [1, 'a b'],
        {},
        { embedder: 'plots' },
        { embedder: 'plots', semanticRatio: 7 },
        { embedder: 5 },
        deep(20),
        deep(200),
        '*',
        ['*'],
      ]);
    const tools = (await (await connect()).listTools()).tools;
    const failures: string[] = [];
    for (let i = 0; i < 300; i++) {
      let message: Record<string, unknown>;
      if (rand() < 0.85) {
        const tool = pick(tools);
        const args: Record<string, unknown> = {};
        for (const p of Object.keys(tool.inputSchema.properties ?? {}))
          if (rand() < 0.6) args[p] = p === 'indexUid' && rand() < 0.7 ? movies : values();
        if (rand() < 0.1) args[pick(['vector', 'useNetwork', '__proto__', 'constructor'])] = values();
        message = {
          jsonrpc: '2.0',
          id: i,
          method: 'tools/call',
          params: { name: tool.name, arguments: rand() < 0.95 ? args : values() },
        };
      } else {
        message = {
          jsonrpc: pick(['2.0', '1.0', 2, null]),
          id: pick([i, 'x', null, 1.5, {}]),
          method: pick(['initialize', 'tools/list', 'ping', 'tools/call', 'resources/read', '', 7]),
          params: values(),
        };
      }
      const r = await mcpPost(message);
      const text = r.body?.result?.content?.[0]?.text;
      const failed = r.body?.result?.isError ? JSON.parse(text) : null;
      if (
        r.status >= 500 ||
        (failed && (failed.code === 'internal' || Object.keys(failed).join() !== 'message,code,type,link'))
      )
        failures.push(`${JSON.stringify(message).slice(0, 300)} -> ${r.status} ${r.text.slice(0, 300)}`);
      if (r.status === 200 && r.body.result === undefined && r.body.error === undefined)
        failures.push(`${JSON.stringify(message).slice(0, 300)} -> neither result nor error`);
    }
    expect(failures).toEqual([]);
    expect(
      (await s.api('POST', `/indexes/${movies}/search`, { body: { q: 'moana' } })).body.hits.map((h: any) => h.id),
    ).toEqual([5]);
  });

  describe('the transport, with plain HTTP', () => {
    const init = (protocolVersion: unknown) => ({
      jsonrpc: '2.0',
      id: 'a',
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
    });

    it('when a client asks for 2025-06-18, then that revision is answered; an unknown one gets the newest', async () => {
      const r = await mcpPost(init('2025-06-18'));
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(r.headers.get('mcp-session-id')).toBeNull();
      expect(r.body).toMatchObject({
        jsonrpc: '2.0',
        id: 'a',
        result: { protocolVersion: '2025-06-18', capabilities: { tools: { listChanged: false } } },
      });
      expect((await mcpPost(init('1999-01-01'))).body.result.protocolVersion).toBe('2025-11-25');
      expect((await mcpPost(init(7))).body).toEqual({
        jsonrpc: '2.0',
        id: 'a',
        error: { code: -32602, message: 'Invalid params: `protocolVersion` must be a string' },
      });
    });

    it('when a notification or a response arrives, then 202 with no body', async () => {
      for (const msg of [
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 9, result: {} },
      ]) {
        const r = await mcpPost(msg);
        expect([r.status, r.text]).toEqual([202, '']);
      }
    });

    it('when tools are called without initializing first, then they answer (the server keeps no session)', async () => {
      const r = await mcpPost({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'get_settings', arguments: { indexUid: books } },
      });
      expect(r.body.result.isError).toBe(false);
      expect(JSON.parse(r.body.result.content[0].text).rankingRules).toBeDefined();
    });

    it('when the body is not JSON, a batch, or not a JSON-RPC message, then 400 with a JSON-RPC error', async () => {
      const parse = await mcpPost(undefined, { raw: '{"jsonrpc": "2.0",' });
      expect(parse.status).toBe(400);
      expect(parse.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
      const batch = await mcpPost([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
      expect([batch.status, batch.body.error.code]).toEqual([400, -32600]);
      const noVersion = await mcpPost({ id: 3, method: 'ping' });
      expect([noVersion.status, noVersion.body]).toEqual([
        400,
        { jsonrpc: '2.0', id: 3, error: { code: -32600, message: 'Invalid Request: `jsonrpc` must be "2.0"' } },
      ]);
      const badParams = await mcpPost({
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/call',
        params: { name: 'search', arguments: 'q=x' },
      });
      expect([badParams.status, badParams.body.error.code]).toEqual([200, -32602]);
    });

    it('when the MCP-Protocol-Version header names a revision not spoken, then 400', async () => {
      const r = await mcpPost(
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { headers: { 'MCP-Protocol-Version': '2024-11-05' } },
      );
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe(-32600);
      const ok = await mcpPost(
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { headers: { 'MCP-Protocol-Version': '2025-06-18' } },
      );
      expect(ok.body).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    });

    it('when GET or DELETE /mcp is sent, then 405 (no server stream, no session to end)', async () => {
      for (const method of ['GET', 'DELETE']) {
        const r = await s.api(method, '/mcp', { headers: { Accept: 'text/event-stream' } });
        expect([method, r.status, r.headers.get('allow')]).toEqual([method, 405, 'POST']);
      }
    });
  });
});
