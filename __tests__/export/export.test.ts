/**
 * `POST /export` over HTTP: Meilisearch 1.50's request shape, validation errors, task type and
 * details (settled on the reference binary), and the export itself, between two Quarry servers
 * on loopback and towards a loopback recorder that stands in for a target to see each request
 * (batches bounded by `payloadSize`, gzip NDJSON, the target's errors failing the task).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { startTestServer, type TestServer } from '../helpers/server';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** The body as sent (gunzipped when it was compressed). */
  body: string;
}

/**
 * A loopback stand-in for a target instance: it records every request and answers each with
 * `answer(request, n)` (default: the index does not exist, everything else is enqueued).
 */
async function recorder(answer?: (r: Seen, n: number) => { status: number; body?: unknown } | undefined) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let bytes = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') bytes = zlib.gunzipSync(bytes);
      const r: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: bytes.toString() };
      seen.push(r);
      const a =
        answer?.(r, seen.length - 1) ??
        (r.method === 'GET'
          ? {
              status: 404,
              body: { message: 'Index not found', code: 'index_not_found', type: 'invalid_request', link: 'x' },
            }
          : { status: 202, body: { taskUid: seen.length } });
      res
        .writeHead(a.status, { 'Content-Type': 'application/json' })
        .end(a.body === undefined ? '' : JSON.stringify(a.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Waits for every task of a server to be done. */
async function settle(s: TestServer): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    const r = await s.api('GET', '/tasks?statuses=enqueued,processing&limit=0');
    if (r.body.total === 0) return;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error('tasks still running');
}

async function exportTask(s: TestServer, body: unknown): Promise<any> {
  const r = await s.api('POST', '/export', { body });
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ indexUid: null, status: 'enqueued', type: 'export' });
  return s.waitTask(r.body.taskUid);
}

const MOVIES = [
  { id: 1, title: 'Alien', genre: 'horror', _vectors: { m: [0.5, 0.25] } },
  { id: 2, title: 'Brazil', genre: 'comedy', _vectors: { m: [0.75, 0.5] } },
  { id: 3, title: 'Carrie', genre: 'horror', _vectors: { m: [0.125, 1] } },
  { id: 4, title: 'Dune', genre: 'scifi', _vectors: { m: [1, 0] } },
];
const MOVIE_SETTINGS = {
  filterableAttributes: ['genre'],
  rankingRules: ['words', 'typo', 'sort'],
  stopWords: ['the'],
  embedders: { m: { source: 'userProvided', dimensions: 2 } },
};

describe('POST /export: the request', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    await s.close();
  });

  test.each([
    [
      { url: 1 },
      'invalid_export_url',
      'Invalid value type at `.url`: expected a string, but found a positive integer: `1`',
    ],
    [{ url: null }, 'invalid_export_url', 'Invalid value type at `.url`: expected a string, but found null'],
    [
      { url: 'x', apiKey: 1 },
      'invalid_export_api_key',
      'Invalid value type at `.apiKey`: expected a string, but found a positive integer: `1`',
    ],
    [
      { url: 'x', payloadSize: 'abc' },
      'invalid_export_payload_size',
      "Invalid value at `.payloadSize`: the character 'a' is not a number",
    ],
    [
      { url: 'x', payloadSize: '-1' },
      'invalid_export_payload_size',
      "Invalid value at `.payloadSize`: the character '-' is not a number",
    ],
    [
      { url: 'x', payloadSize: '' },
      'invalid_export_payload_size',
      'Invalid value at `.payloadSize`: no value can be found',
    ],
    [
      { url: 'x', payloadSize: 1.5 },
      'invalid_export_payload_size',
      'Invalid value type at `.payloadSize`: expected a positive integer or a string, but found a number: `1.5`',
    ],
    [
      { url: 'x', payloadSize: -1 },
      'invalid_export_payload_size',
      'Invalid value type at `.payloadSize`: expected a positive integer or a string, but found a negative integer: `-1`',
    ],
    [
      { url: 'x', payloadSize: true },
      'invalid_export_payload_size',
      'Invalid value type at `.payloadSize`: expected a positive integer or a string, but found a boolean: `true`',
    ],
    [
      { url: 'x', payloadSize: '5 XB' },
      'invalid_export_payload_size',
      "Invalid value at `.payloadSize`: the character 'X' is incorrect ('B', 'K', 'M', 'G', 'T', 'P', 'E' or no character or no character is expected)",
    ],
    [
      { url: 'x', payloadSize: '5 KiBx' },
      'invalid_export_payload_size',
      "Invalid value at `.payloadSize`: the character 'x' is incorrect ('i' or no character is expected)",
    ],
    [
      { url: 'x', payloadSize: '1e3' },
      'invalid_export_payload_size',
      "Invalid value at `.payloadSize`: the character '3' is incorrect ('B', 'b' or no character or no character is expected)",
    ],
    [
      { url: 'x', payloadSize: '5. KB' },
      'invalid_export_payload_size',
      "Invalid value at `.payloadSize`: the character ' ' is not a number",
    ],
    [
      { url: 'x', payloadSize: '20 EB' },
      'invalid_export_payload_size',
      'Invalid value at `.payloadSize`: the value 20 exceeds the valid range',
    ],
    [
      { url: 'x', indexes: 1 },
      'bad_request',
      'Invalid value type at `.indexes`: expected an object, but found a positive integer: `1`',
    ],
    [
      { url: 'x', indexes: [] },
      'bad_request',
      'Invalid value type at `.indexes`: expected an object, but found an array: `[]`',
    ],
    [
      { url: 'x', indexes: { 'bad pattern!': {} } },
      'bad_request',
      'Invalid value at `.indexes`: the key "bad pattern!" could not be deserialized into the key type `meilisearch_types::index_uid_pattern::IndexUidPattern`',
    ],
    [
      { url: 'x', indexes: { '*a*': {} } },
      'bad_request',
      'Invalid value at `.indexes`: the key "*a*" could not be deserialized into the key type `meilisearch_types::index_uid_pattern::IndexUidPattern`',
    ],
    [
      { url: 'x', indexes: { a: null } },
      'bad_request',
      'Invalid value type at `.indexes.a`: expected an object, but found null',
    ],
    [
      { url: 'x', indexes: { a: { overrideSettings: 1 } } },
      'invalid_export_index_override_settings',
      'Invalid value type at `.indexes.a.overrideSettings`: expected a boolean, but found a positive integer: `1`',
    ],
    [
      { url: 'x', indexes: { a: { foo: 1 } } },
      'bad_request',
      'Unknown field `foo` inside `.indexes.a`: expected one of `filter`, `overrideSettings`',
    ],
    [
      { url: 'x', foo: 1 },
      'bad_request',
      'Unknown field `foo`: expected one of `url`, `apiKey`, `payloadSize`, `indexes`',
    ],
    [[], 'bad_request', 'Invalid value type: expected an object, but found an array: `[]`'],
  ])('%j is refused with %s', async (body, code, message) => {
    const r = await s.api('POST', '/export', { body });
    expect([r.status, r.body]).toEqual([
      400,
      { message, code, type: 'invalid_request', link: `https://docs.meilisearch.com/errors#${code}` },
    ]);
  });

  test('bodies that are not JSON answer the JSON routes’ errors', async () => {
    expect((await s.api('POST', '/export', { raw: 'nope' })).body.code).toBe('malformed_payload');
    expect((await s.api('POST', '/export', { raw: '' })).body.code).toBe('missing_payload');
    expect((await s.api('POST', '/export', { raw: '{}', contentType: 'text/plain' })).body.code).toBe(
      'invalid_content_type',
    );
  });

  test('the task is answered 200, and its details show the key hidden and the size in words', async () => {
    const t = await exportTask(s, {
      url: 'http://127.0.0.1:9',
      apiKey: 'secretkey1234567890',
      payloadSize: '1.5 MB',
      indexes: { 'nomatch*': {}, none: { filter: 'a = 1', overrideSettings: true } },
    });
    expect(t).toMatchObject({ type: 'export', status: 'succeeded', indexUid: null, error: null });
    // No index matched: nothing was sent, and the details name no index.
    expect(t.details).toEqual({
      url: 'http://127.0.0.1:9',
      apiKey: 'seXXXX...',
      payloadSize: '1.430511474609375 MiB',
      indexes: {},
    });
    const short = await exportTask(s, { url: 'x', apiKey: 'short', indexes: { none: {} } });
    expect(short.details).toEqual({ url: 'x', apiKey: 'XXX...', indexes: {} });
    const empty = await exportTask(s, {});
    expect(empty.details).toEqual({ url: '', indexes: {} });
  });

  test.each([
    ['1.5 MB', '1.430511474609375 MiB'],
    ['10 gb', '1.1641532182693481 GiB'],
    ['1 TB', '1 TB'],
    ['50MiB', '50 MiB'],
    ['1 kb', '125 B'],
    ['5 Kb', '625 B'],
    ['5 k', '4.8828125 KiB'],
    ['5 mib', '640 KiB'],
    ['1.5', '2 B'],
    ['1024', '1 KiB'],
    [' 5 MiB ', '5 MiB'],
    [1, '1 B'],
    ['0', '0 B'],
  ])('payloadSize %j is shown as %s', async (size, shown) => {
    const t = await exportTask(s, { url: 'x', payloadSize: size, indexes: { none: {} } });
    expect(t.details.payloadSize).toBe(shown);
  });

  test('the export action is needed, and an index-scoped key cannot have it', async () => {
    const k = await s.api('POST', '/keys', { body: { actions: ['search'], indexes: ['*'], expiresAt: null } });
    const r = await s.api('POST', '/export', { body: { url: 'x' }, key: k.body.key });
    expect([r.status, r.body.code]).toEqual([403, 'invalid_api_key']);
    const scoped = await s.api('POST', '/keys', { body: { actions: ['export'], indexes: ['mov*'], expiresAt: null } });
    expect([scoped.status, scoped.body.code]).toEqual([400, 'index_scoped_api_key_with_global_action']);
  });
});

describe('POST /export: what is sent', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
    await s.api('PATCH', '/indexes/movies/settings', { body: MOVIE_SETTINGS });
    await s.api('POST', '/indexes/movies/documents', { body: MOVIES });
    // A number beyond 2^53 travels as written.
    await s.api('POST', '/indexes/movies/documents', {
      raw: '[{"id":5,"title":"Eraserhead","genre":"horror","big":12345678901234567890,"_vectors":{"m":null}}]',
    });
    await s.api('POST', '/indexes', { body: { uid: 'nopk' } });
    await settle(s);
  });
  afterAll(async () => {
    await s.close();
  });

  test('a missing index is created with its primary key and every setting, then documents follow in gzip NDJSON batches', async () => {
    const target = await recorder();
    try {
      const t = await exportTask(s, { url: `${target.url}/`, apiKey: 'target-key', payloadSize: '200 B' });
      expect(t.status).toBe('succeeded');
      expect(t.details).toEqual({
        url: `${target.url}/`,
        apiKey: 'taXXXX...',
        payloadSize: '200 B',
        indexes: {
          movies: { filter: null, overrideSettings: false, matched_documents: 5 },
          nopk: { filter: null, overrideSettings: false, matched_documents: 0 },
        },
      });
      const calls = target.seen.map((r) => `${r.method} ${r.url}`);
      const docs = target.seen.filter((r) => r.url === '/indexes/movies/documents');
      expect(calls).toEqual([
        'GET /indexes/movies',
        'POST /indexes',
        'PATCH /indexes/movies/settings',
        ...docs.map(() => 'POST /indexes/movies/documents'),
        'GET /indexes/nopk',
        'POST /indexes',
        'PATCH /indexes/nopk/settings',
      ]);
      for (const r of target.seen) expect(r.headers.authorization).toBe('Bearer target-key');
      expect(JSON.parse(target.seen[1].body)).toEqual({ uid: 'movies', primaryKey: 'id' });
      expect(JSON.parse(target.seen[5 + docs.length - 1].body)).toEqual({ uid: 'nopk', primaryKey: null });
      const settings = JSON.parse(target.seen[2].body);
      expect(settings).toEqual((await s.api('GET', '/indexes/movies/settings')).body);
      expect(settings).toMatchObject({
        filterableAttributes: ['genre'],
        rankingRules: ['words', 'typo', 'sort'],
        stopWords: ['the'],
      });

      // Several requests, each within 200 bytes unless one document alone is larger.
      expect(docs.length).toBeGreaterThan(1);
      for (const r of docs) {
        expect([r.headers['content-type'], r.headers['content-encoding']]).toEqual(['application/x-ndjson', 'gzip']);
        const lines = r.body.split('\n');
        if (lines.length > 1) expect(Buffer.byteLength(r.body)).toBeLessThanOrEqual(200);
      }
      const sent = docs.flatMap((r) => r.body.split('\n'));
      expect(sent.map((l) => JSON.parse(l).id).sort()).toEqual([1, 2, 3, 4, 5]);
      // Documents go as stored: a number keeps every digit, vectors go with them.
      expect(sent.find((l) => JSON.parse(l).id === 5)).toContain('"big":12345678901234567890');
      expect(JSON.parse(sent.find((l) => JSON.parse(l).id === 2)!)._vectors).toEqual({
        m: { embeddings: [[0.75, 0.5]], regenerate: false },
      });
    } finally {
      await target.close();
    }
  });

  test('an index the target has keeps its settings unless overrideSettings, which sets its primary key and settings', async () => {
    const exists = (r: Seen) =>
      r.method === 'GET' ? { status: 200, body: { uid: 'movies', primaryKey: 'id' } } : undefined;
    const target = await recorder(exists);
    try {
      expect((await exportTask(s, { url: target.url, indexes: { movies: {} } })).status).toBe('succeeded');
      expect(target.seen.map((r) => `${r.method} ${r.url}`)).toEqual([
        'GET /indexes/movies',
        'POST /indexes/movies/documents',
      ]);
      expect(target.seen[0].headers.authorization).toBeUndefined();
      target.seen.length = 0;
      expect((await exportTask(s, { url: target.url, indexes: { 'mov*': { overrideSettings: true } } })).status).toBe(
        'succeeded',
      );
      expect(target.seen.map((r) => `${r.method} ${r.url}`)).toEqual([
        'GET /indexes/movies',
        'PATCH /indexes/movies',
        'PATCH /indexes/movies/settings',
        'POST /indexes/movies/documents',
      ]);
      expect(JSON.parse(target.seen[1].body)).toEqual({ primaryKey: 'id' });
    } finally {
      await target.close();
    }
  });

  test('a filter sends only the documents it selects, and a bad one fails the task before anything is sent', async () => {
    const target = await recorder();
    try {
      const t = await exportTask(s, { url: target.url, indexes: { movies: { filter: 'genre = horror' } } });
      expect(t.details.indexes).toEqual({
        movies: { filter: 'genre = horror', overrideSettings: false, matched_documents: 3 },
      });
      const sent = target.seen
        .filter((r) => r.url.endsWith('/documents'))
        .flatMap((r) => r.body.split('\n').map((l) => JSON.parse(l).id));
      expect(sent).toEqual([1, 3, 5]);
      target.seen.length = 0;

      const bad = await exportTask(s, { url: target.url, indexes: { 'mov*': { filter: 'title = x' } } });
      expect(bad.status).toBe('failed');
      expect(bad.error.code).toBe('invalid_document_filter');
      expect(bad.error.message).toMatch(/^Index `movies`: Attribute `title` is not filterable\./);
      // A failed export keeps the details it was enqueued with.
      expect(bad.details).toEqual({
        url: target.url,
        indexes: { 'mov*': { filter: 'title = x', overrideSettings: false } },
      });
      const typed = await exportTask(s, { url: target.url, indexes: { movies: { filter: 1 } } });
      expect(typed.error).toMatchObject({
        code: 'invalid_document_filter',
        message: 'Index `movies`: Invalid syntax for the filter parameter: `expected String, Array, found: 1`.',
      });
      expect(target.seen).toEqual([]);
    } finally {
      await target.close();
    }
  });

  test('an index whose embedder has an API key is refused before anything is sent', async () => {
    const target = await recorder();
    try {
      const embedders = {
        e: {
          source: 'rest',
          url: 'http://127.0.0.1:9/embed',
          apiKey: 'sk-0123456789abcdef',
          request: { input: '{{text}}' },
          response: { data: '{{embedding}}' },
          dimensions: 2,
        },
      };
      const set = await s.api('PATCH', '/indexes/keyed/settings', { body: { embedders } });
      expect((await s.waitTask(set.body.taskUid)).status).toBe('succeeded');
      const t = await exportTask(s, { url: target.url, indexes: { keyed: {} } });
      expect([t.status, t.error.code, t.error.message]).toEqual([
        'failed',
        'internal',
        'Index `keyed`: the embedder `e` has an API key, which Quarry cannot export yet: its settings show the key masked.',
      ]);
      expect(target.seen).toEqual([]);
    } finally {
      await target.close();
    }
  });

  test("the target's error fails the task with Meilisearch's message", async () => {
    const target = await recorder((r) =>
      r.url.endsWith('/documents')
        ? {
            status: 400,
            body: { message: 'boom doc', code: 'invalid_document_id', type: 'invalid_request', link: 'x' },
          }
        : undefined,
    );
    try {
      const t = await exportTask(s, { url: target.url, indexes: { movies: {} } });
      expect([t.status, t.error]).toEqual([
        'failed',
        {
          message: 'Failed to export documents to remote server invalid_document_id (invalid_request): boom doc <x>',
          code: 'internal',
          type: 'internal',
          link: 'https://docs.meilisearch.com/errors#internal',
        },
      ]);
    } finally {
      await target.close();
    }
  });

  test('a 5xx from the target is tried again', async () => {
    const target = await recorder((_r, n) => (n === 0 ? { status: 503, body: 'busy' } : undefined));
    try {
      const t = await exportTask(s, { url: target.url, indexes: { movies: {} } });
      expect(t.status).toBe('succeeded');
      expect(target.seen.slice(0, 2).map((r) => `${r.method} ${r.url}`)).toEqual([
        'GET /indexes/movies',
        'GET /indexes/movies',
      ]);
    } finally {
      await target.close();
    }
  });

  test('the export runs in a batch of its own, which names the index it exported', async () => {
    const target = await recorder();
    try {
      const t = await exportTask(s, { url: target.url, indexes: { movies: {} } });
      const b = await s.api('GET', `/batches/${t.batchUid}`);
      expect(b.body.stats.types).toEqual({ export: 1 });
      expect(b.body.batchStrategy).toBe(
        `created batch containing only task with id ${t.uid} of type \`export\` that cannot be batched with any other task.`,
      );
      expect(Object.keys(b.body.stats.progressTrace)).toContain('processing tasks > Exporting index `movies`');
    } finally {
      await target.close();
    }
  });
});

describe('POST /export between two Quarry servers', () => {
  let source: TestServer;
  let target: TestServer;
  beforeAll(async () => {
    source = await startTestServer();
    target = await startTestServer({ masterKey: 'target-master-key-0123456789' });
    await source.api('PATCH', '/indexes/movies/settings', { body: MOVIE_SETTINGS });
    await source.api('POST', '/indexes/movies/documents', { body: MOVIES });
    await source.api('POST', '/indexes/books/documents?primaryKey=isbn', { body: [{ isbn: 'b1', title: 'Dune' }] });
    await source.api('POST', '/indexes/other/documents', { body: [{ id: 1 }] });
    await settle(source);
  });
  afterAll(async () => {
    await source.close();
    await target.close();
  });

  test('indexes, settings, documents and vectors arrive; an index no pattern matches stays home', async () => {
    const t = await exportTask(source, {
      url: target.url,
      apiKey: 'target-master-key-0123456789',
      payloadSize: '150 B',
      indexes: { 'mov*': {}, books: {} },
    });
    expect(t.status).toBe('succeeded');
    expect(t.details.indexes).toEqual({
      books: { filter: null, overrideSettings: false, matched_documents: 1 },
      movies: { filter: null, overrideSettings: false, matched_documents: 4 },
    });
    await settle(target);
    const failed = await target.api('GET', '/tasks?statuses=failed');
    expect(failed.body.results).toEqual([]);
    const indexes = await target.api('GET', '/indexes');
    expect(indexes.body.results.map((i: any) => [i.uid, i.primaryKey])).toEqual([
      ['books', 'isbn'],
      ['movies', 'id'],
    ]);
    expect((await target.api('GET', '/indexes/movies/settings')).body).toEqual(
      (await source.api('GET', '/indexes/movies/settings')).body,
    );
    const docs = async (s: TestServer) =>
      (await s.api('POST', '/indexes/movies/documents/fetch', { body: { retrieveVectors: true, limit: 10 } })).text;
    expect(await docs(target)).toBe(await docs(source));
    const hits = await target.api('POST', '/indexes/movies/search', {
      body: { filter: 'genre = horror', q: 'the carrie' },
    });
    expect(hits.body.hits.map((h: any) => h.id)).toEqual([3]);
  });

  test("a wrong key fails the task with the target's error", async () => {
    const t = await exportTask(source, { url: target.url, apiKey: 'wrong', indexes: { books: {} } });
    expect(t.error).toEqual({
      message:
        'Failed to export documents to remote server invalid_api_key (auth): The provided API key is invalid. <https://docs.meilisearch.com/errors#invalid_api_key>',
      code: 'internal',
      type: 'internal',
      link: 'https://docs.meilisearch.com/errors#internal',
    });
  });
});

describe('POST /export outside the allowed networks', () => {
  test('nothing is sent and the task fails', async () => {
    const target = await recorder();
    const s = await startTestServer({ args: ['--experimental-allowed-ip-networks', '10.0.0.0/8'] });
    try {
      await s.api('POST', '/indexes/movies/documents', { body: MOVIES.slice(0, 1) });
      await settle(s);
      const t = await exportTask(s, { url: target.url, indexes: { movies: {} } });
      expect(t.status).toBe('failed');
      expect(t.error.code).toBe('internal');
      expect(t.error.message).toMatch(/outside the networks/);
      expect(target.seen).toEqual([]);
    } finally {
      await s.close();
      await target.close();
    }
  });
});
