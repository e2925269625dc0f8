import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ConfigError, loadConfig, parseByteSize } from '../../ts/config';
import { MASTER_KEY, startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

describe('health, version, unknown routes', () => {
  it('when calling /health without a key, then it is available', async () => {
    const r = await s.api('GET', '/health', { key: null });
    expect([r.status, r.body]).toEqual([200, { status: 'available' }]);
  });

  it('when calling /version, then it has the three fields', async () => {
    const r = await s.api('GET', '/version');
    expect(Object.keys(r.body).sort()).toEqual(['commitDate', 'commitSha', 'pkgVersion']);
  });

  it('when the route is unknown, then it answers 404 with an empty body', async () => {
    const r = await s.api('GET', '/nowhere');
    expect(r.status).toBe(404);
    expect(r.text).toBe('');
  });
});

describe('authentication', () => {
  it('when no header is sent, then 401 missing_authorization_header', async () => {
    const r = await s.api('GET', '/indexes', { key: null });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({
      message: 'The Authorization header is missing. It must use the bearer authorization method.',
      code: 'missing_authorization_header',
      type: 'auth',
      link: 'https://docs.meilisearch.com/errors#missing_authorization_header',
    });
  });

  it('when the key is wrong, then 403 invalid_api_key', async () => {
    const r = await s.api('GET', '/indexes', { key: 'nope' });
    expect([r.status, r.body.code, r.body.type]).toEqual([403, 'invalid_api_key', 'auth']);
  });

  it('when using the default keys, then search works with the search key and admin routes need the admin key', async () => {
    const keys = await s.api('GET', '/keys');
    expect(keys.status).toBe(200);
    const byName = Object.fromEntries(keys.body.results.map((k: any) => [k.name, k]));
    expect(Object.keys(byName)).toEqual(expect.arrayContaining(['Default Search API Key', 'Default Admin API Key']));
    const search = byName['Default Search API Key'];
    const admin = byName['Default Admin API Key'];
    expect(search.key).toMatch(/^[0-9a-f]{64}$/);
    const uid = uniqueIndex();
    await s.waitTask(
      (await s.api('POST', `/indexes/${uid}/documents`, { body: [{ id: 1 }], key: admin.key })).body.taskUid,
    );
    expect((await s.api('POST', `/indexes/${uid}/search`, { body: {}, key: search.key })).status).toBe(200);
    expect((await s.api('GET', '/indexes', { key: search.key })).status).toBe(403);
    // Like Meilisearch 1.50, a key holding `*` may manage keys; the search key may not.
    expect((await s.api('GET', '/keys', { key: admin.key })).status).toBe(200);
    expect((await s.api('GET', '/keys', { key: search.key })).status).toBe(403);
  });
});

describe('experimental features', () => {
  it('when patching flags, then every flag is stored and returned', async () => {
    const before = await s.api('GET', '/experimental-features');
    expect(before.body).toMatchObject({ metrics: false, logsRoute: false, network: false });
    const r = await s.api('PATCH', '/experimental-features', {
      body: { metrics: true, renderRoute: true, network: null },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ metrics: true, renderRoute: true, network: false });
    expect((await s.api('GET', '/experimental-features')).body.metrics).toBe(true);
    expect((await s.api('PATCH', '/experimental-features', { body: { flying: true } })).body.code).toBe('bad_request');
  });
});

describe('placeholder search', () => {
  it('when searching without q, then hits come in insertion order with the envelope', async () => {
    const uid = uniqueIndex('search');
    await s.waitTask(
      (
        await s.api('POST', `/indexes/${uid}/documents`, {
          body: Array.from({ length: 25 }, (_, i) => ({ id: i, n: i })),
        })
      ).body.taskUid,
    );
    const r = await s.api('POST', `/indexes/${uid}/search`, { body: { offset: 2, limit: 3 } });
    expect(r.status).toBe(200);
    expect(r.body.hits).toEqual([
      { id: 2, n: 2 },
      { id: 3, n: 3 },
      { id: 4, n: 4 },
    ]);
    expect(r.body).toMatchObject({ query: '', limit: 3, offset: 2, estimatedTotalHits: 25 });
    const paged = await s.api('GET', `/indexes/${uid}/search?page=2&hitsPerPage=10&attributesToRetrieve=id`);
    expect(paged.body).toMatchObject({ page: 2, hitsPerPage: 10, totalHits: 25, totalPages: 3 });
    expect(paged.body.hits[0]).toEqual({ id: 10 });
    expect((await s.api('POST', `/indexes/${uid}/search`, { body: { limit: 'x' } })).body.code).toBe(
      'invalid_search_limit',
    );
    expect((await s.api('POST', `/indexes/${uniqueIndex('none')}/search`, { body: {} })).body.code).toBe(
      'index_not_found',
    );
  });
});

describe('configuration', () => {
  it('when options are valid, then flags win over QUARRY_* which win over MEILI_*', () => {
    const c = loadConfig(['--http-addr', '127.0.0.1:7701'], {
      QUARRY_DB_PATH: '/tmp/q',
      MEILI_DB_PATH: '/tmp/m',
      MEILI_MASTER_KEY: 'k'.repeat(16),
      MEILI_NO_ANALYTICS: 'true',
    });
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 7701,
      dbPath: '/tmp/q',
      masterKey: 'k'.repeat(16),
      noAnalytics: true,
      payloadSizeLimit: 100_000_000,
    });
    expect(loadConfig([], {}).allowedNetworks).toEqual(['127.0.0.0/8', '::1/128']);
    expect(parseByteSize('2 GiB')).toBe(2 * 1024 ** 3);
    expect(parseByteSize('100Mb')).toBe(100_000_000);
  });

  it.each([
    [['--env', 'production']],
    [['--env', 'production', '--master-key', 'short']],
    [['--env', 'staging']],
    [['--http-addr', 'nowhere']],
    [['--log-level', 'loud']],
    [['--bogus']],
    [['--http-payload-size-limit', '12 parsecs']],
  ])('when options are %j, then loading fails with a ConfigError', (args) => {
    expect(() => loadConfig(args as string[], {})).toThrow(ConfigError);
  });

  it('when the CLI gets a bad option, then it exits non-zero with a message', () => {
    const r = spawnSync(process.execPath, [path.join(__dirname, '../../bin/quarry.js'), '--env', 'production'], {
      encoding: 'utf8',
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/master key/);
    void MASTER_KEY;
  });
});

describe('keyword search and multi-search', () => {
  let uid: string;
  beforeAll(async () => {
    uid = uniqueIndex('kw');
    const docs = [
      { id: 1, title: 'Red apple pie' },
      { id: 2, title: 'Green pear' },
      { id: 3, title: 'Apple juice', note: 'apple apple' },
    ];
    await s.waitTask((await s.api('POST', `/indexes/${uid}/documents`, { body: docs })).body.taskUid);
  });

  it('when q has words, then only documents with one of them come back, counted exactly', async () => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { body: { q: 'apple' } });
    expect(r.status).toBe(200);
    expect(r.body.hits.map((h: { id: number }) => h.id).sort()).toEqual([1, 3]);
    expect(r.body.estimatedTotalHits).toBe(2);
    const none = await s.api('POST', `/indexes/${uid}/search`, { body: { q: 'banana' } });
    expect(none.body).toMatchObject({ hits: [], estimatedTotalHits: 0, query: 'banana' });
  });

  it('when retrieveVectors is true, then each hit carries _vectors', async () => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { body: { q: 'pear', retrieveVectors: true } });
    expect(r.body.hits).toEqual([{ id: 2, title: 'Green pear', _vectors: {} }]);
    const plain = await s.api('POST', `/indexes/${uid}/search`, { body: { q: 'pear' } });
    expect(plain.body.hits).toEqual([{ id: 2, title: 'Green pear' }]);
  });

  it('when multi-searching, then each result is tagged with its index in query order', async () => {
    const r = await s.api('POST', '/multi-search', {
      body: {
        queries: [
          { indexUid: uid, q: 'pear' },
          { indexUid: uid, limit: 1 },
        ],
      },
    });
    expect(r.status).toBe(200);
    expect(r.body.results).toHaveLength(2);
    expect(Object.keys(r.body.results[0])[0]).toBe('indexUid');
    expect(r.body.results[0]).toMatchObject({ indexUid: uid, hits: [{ id: 2 }], estimatedTotalHits: 1 });
    expect(r.body.results[1]).toMatchObject({ indexUid: uid, limit: 1, estimatedTotalHits: 3 });
  });

  it('when one query of a multi-search is wrong, then the error names its position', async () => {
    const missing = uniqueIndex('none');
    const r = await s.api('POST', '/multi-search', { body: { queries: [{ indexUid: uid }, { indexUid: missing }] } });
    // 400 inside a multi-search, as Meilisearch answers (404 on the index's own route).
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('index_not_found');
    expect(r.body.message).toMatch(/^Inside `\.queries\[1\]`: /);
    const bad = await s.api('POST', '/multi-search', { body: { queries: [{ indexUid: uid, limit: 'x' }] } });
    expect(bad.body.code).toBe('invalid_search_limit');
    expect((await s.api('POST', '/multi-search', { body: { nope: [] } })).body.code).toBe('bad_request');
  });
});
