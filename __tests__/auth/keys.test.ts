/** `/keys`: CRUD, validation codes, key values, default keys, and servers without a master key. */
import { createHmac } from 'node:crypto';
import { MASTER_KEY, startTestServer, tempDir, type TestServer } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const create = (body: unknown, key?: string) => s.api('POST', '/keys', { body, key });
const byName = async (name: string) =>
  (await s.api('GET', '/keys?limit=1000')).body.results.find((k: any) => k.name === name);

describe('default keys', () => {
  it('when the server starts on an empty store, then the four default keys exist, newest first', async () => {
    const r = await s.api('GET', '/keys');
    expect(r.status).toBe(200);
    const names = r.body.results.map((k: any) => k.name);
    expect(names).toEqual([
      'Default Search API Key',
      'Default Admin API Key',
      'Default Read-Only Admin API Key',
      'Default Chat API Key',
    ]);
    const actions = Object.fromEntries(r.body.results.map((k: any) => [k.name, k.actions]));
    expect(actions).toEqual({
      'Default Search API Key': ['search'],
      'Default Admin API Key': ['*'],
      'Default Read-Only Admin API Key': ['*.get', 'keys.get'],
      'Default Chat API Key': ['chatCompletions', 'search'],
    });
    for (const k of r.body.results) {
      expect(k.indexes).toEqual(['*']);
      expect(k.expiresAt).toBeNull();
      expect(Object.keys(k).sort()).toEqual([
        'actions',
        'createdAt',
        'description',
        'expiresAt',
        'indexes',
        'key',
        'name',
        'uid',
        'updatedAt',
      ]);
    }
  });

  it('when every key was deleted and the server restarts, then the defaults are created again', async () => {
    const dbPath = tempDir();
    const first = await startTestServer({ dbPath });
    const uids = (await first.api('GET', '/keys')).body.results.map((k: any) => k.uid);
    for (const u of uids) expect((await first.api('DELETE', `/keys/${u}`)).status).toBe(204);
    expect((await first.api('GET', '/keys')).body.total).toBe(0);
    await first.close();
    const second = await startTestServer({ dbPath });
    const again = (await second.api('GET', '/keys')).body;
    expect(again.total).toBe(4);
    expect(again.results.map((k: any) => k.uid)).not.toContain(uids[0]);
    await second.close();
  });

  it('when a custom key exists at restart, then no default key is added', async () => {
    const dbPath = tempDir();
    const first = await startTestServer({ dbPath });
    for (const k of (await first.api('GET', '/keys')).body.results) await first.api('DELETE', `/keys/${k.uid}`);
    await first.api('POST', '/keys', { body: { actions: ['search'], indexes: ['*'], expiresAt: null } });
    await first.close();
    const second = await startTestServer({ dbPath });
    expect((await second.api('GET', '/keys')).body.total).toBe(1);
    await second.close();
  });
});

describe('key values', () => {
  it('when a key is created, then its value is the hex HMAC-SHA256 of its uid under the master key', async () => {
    const uid = '3db051e0-423d-4b5c-a63a-f82a7043dce6';
    const r = await create({ uid, actions: ['search'], indexes: ['*'], expiresAt: null });
    expect(r.status).toBe(201);
    expect(r.body.key).toBe(createHmac('sha256', MASTER_KEY).update(uid).digest('hex'));
    expect(r.body.uid).toBe(uid);
  });

  it('when a key is fetched by uid or by value, then both give the same key', async () => {
    const k = (await create({ actions: ['search'], indexes: ['*'], expiresAt: null, name: 'n1' })).body;
    const a = await s.api('GET', `/keys/${k.uid}`);
    const b = await s.api('GET', `/keys/${k.key}`);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body).toEqual(b.body);
    expect(a.body).toEqual(k);
  });

  it('when no response ever carries the master key, then the key routes are safe to log', async () => {
    const texts = [
      (await s.api('GET', '/keys?limit=1000')).text,
      (await create({ actions: ['*'], indexes: ['*'], expiresAt: null })).text,
      (await s.api('GET', '/keys/nope')).text,
      (await s.api('GET', '/indexes', { key: 'wrong' })).text,
    ];
    for (const t of texts) expect(t).not.toContain(MASTER_KEY);
  });
});

describe('POST /keys', () => {
  it('when every field is given, then 201 with the key echoed', async () => {
    const r = await create({
      name: 'n',
      description: 'd',
      actions: ['documents.add', 'search'],
      indexes: ['movies', 'books*'],
      expiresAt: '2099-01-02T03:04:05Z',
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      name: 'n',
      description: 'd',
      actions: ['documents.add', 'search'],
      indexes: ['movies', 'books*'],
      expiresAt: '2099-01-02T03:04:05Z',
    });
    expect(r.body.createdAt).toBe(r.body.updatedAt);
  });

  it.each([
    ['2099-01-02', '2099-01-02T00:00:00Z'],
    ['2099-01-02T03:04:05', '2099-01-02T03:04:05Z'],
    ['2099-01-02 03:04:05', '2099-01-02T03:04:05Z'],
    // As Meilisearch 1.50 keeps them: the offset, and the fraction without trailing zeros.
    ['2099-01-02T03:04:05+02:00', '2099-01-02T03:04:05+02:00'],
    ['2099-01-02T03:04:05.123456Z', '2099-01-02T03:04:05.123456Z'],
    ['2099-01-02T03:04:05.120Z', '2099-01-02T03:04:05.12Z'],
    ['2099-01-02T03:04:05.5+02:00', '2099-01-02T03:04:05.5+02:00'],
    ['2099-01-02T03:04:05.000Z', '2099-01-02T03:04:05Z'],
  ])('when expiresAt is %j, then it is stored as %j', async (given, stored) => {
    const r = await create({ actions: ['search'], indexes: ['*'], expiresAt: given });
    expect([r.status, r.body.expiresAt]).toEqual([201, stored]);
  });

  it.each([
    [{ indexes: ['*'], expiresAt: null }, 'missing_api_key_actions'],
    [{ actions: ['search'], expiresAt: null }, 'missing_api_key_indexes'],
    [{ actions: ['search'], indexes: ['*'] }, 'missing_api_key_expires_at'],
    [{ actions: ['nope'], indexes: ['*'], expiresAt: null }, 'invalid_api_key_actions'],
    [{ actions: 'search', indexes: ['*'], expiresAt: null }, 'invalid_api_key_actions'],
    [{ actions: ['keys.*'], indexes: ['*'], expiresAt: null }, 'invalid_api_key_actions'],
    [{ actions: ['search'], indexes: '*', expiresAt: null }, 'invalid_api_key_indexes'],
    [{ actions: ['search'], indexes: ['*_movies'], expiresAt: null }, 'invalid_api_key_indexes'],
    [{ actions: ['search'], indexes: ['*'], expiresAt: '2000-01-01' }, 'invalid_api_key_expires_at'],
    [
      { actions: ['search'], indexes: ['*'], expiresAt: new Date(Date.now() - 1000).toISOString() },
      'invalid_api_key_expires_at',
    ],
    [{ actions: ['search'], indexes: ['*'], expiresAt: 'tomorrow' }, 'invalid_api_key_expires_at'],
    [{ actions: ['search'], indexes: ['*'], expiresAt: 12 }, 'invalid_api_key_expires_at'],
    [{ actions: ['search'], indexes: ['*'], expiresAt: null, uid: 'not-a-uuid' }, 'invalid_api_key_uid'],
    [{ actions: ['search'], indexes: ['*'], expiresAt: null, name: 3 }, 'invalid_api_key_name'],
    [{ actions: ['search'], indexes: ['*'], expiresAt: null, description: false }, 'invalid_api_key_description'],
    [{ actions: ['search'], indexes: ['*'], expiresAt: null, key: 'abc' }, 'bad_request'],
    [{ actions: ['version'], indexes: ['movies'], expiresAt: null }, 'index_scoped_api_key_with_global_action'],
  ])('when the body is %j, then 400 %s', async (body, code) => {
    const r = await create(body);
    expect([r.status, r.body.code]).toEqual([400, code]);
  });

  it('when the uid already exists, then 409 api_key_already_exists', async () => {
    const uid = 'a5c7a1f4-0b5e-4b0b-9a34-6b7a4c2d9e11';
    expect((await create({ uid, actions: ['search'], indexes: ['*'], expiresAt: null })).status).toBe(201);
    const r = await create({ uid, actions: ['search'], indexes: ['*'], expiresAt: null });
    expect([r.status, r.body.code]).toEqual([409, 'api_key_already_exists']);
  });
});

describe('PATCH /keys', () => {
  it('when name and description change, then only they and updatedAt change', async () => {
    const k = (await create({ name: 'a', description: 'b', actions: ['search'], indexes: ['*'], expiresAt: null }))
      .body;
    const r = await s.api('PATCH', `/keys/${k.key}`, { body: { name: 'A', description: null } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ...k, name: 'A', description: null, updatedAt: expect.any(String) });
    expect(r.body.updatedAt > k.updatedAt || r.body.updatedAt.length !== k.updatedAt.length).toBe(true);
    expect((await s.api('GET', `/keys/${k.uid}`)).body.name).toBe('A');
  });

  it.each([
    ['uid', '3db051e0-423d-4b5c-a63a-f82a7043dce6', 'immutable_api_key_uid'],
    ['actions', ['*'], 'immutable_api_key_actions'],
    ['indexes', ['*'], 'immutable_api_key_indexes'],
    ['expiresAt', null, 'immutable_api_key_expires_at'],
    ['createdAt', '2020-01-01T00:00:00Z', 'immutable_api_key_created_at'],
    ['updatedAt', '2020-01-01T00:00:00Z', 'immutable_api_key_updated_at'],
    ['key', 'x', 'bad_request'],
    ['name', 4, 'invalid_api_key_name'],
  ])('when the patch sets %s, then 400 %s', async (field, value, code) => {
    const k = (await create({ actions: ['search'], indexes: ['*'], expiresAt: null })).body;
    const r = await s.api('PATCH', `/keys/${k.uid}`, { body: { [field]: value } });
    expect([r.status, r.body.code]).toEqual([400, code]);
  });

  it('when the key does not exist, then 404 api_key_not_found', async () => {
    const r = await s.api('PATCH', '/keys/00000000-0000-4000-8000-000000000000', { body: { name: 'x' } });
    expect([r.status, r.body.code]).toEqual([404, 'api_key_not_found']);
  });
});

describe('DELETE and GET /keys', () => {
  it('when a key is deleted by value, then 204 with an empty body, and it is gone and refused', async () => {
    const k = (await create({ actions: ['indexes.get'], indexes: ['*'], expiresAt: null })).body;
    expect((await s.api('GET', '/indexes', { key: k.key })).status).toBe(200);
    const r = await s.api('DELETE', `/keys/${k.key}`);
    expect([r.status, r.text]).toEqual([204, '']);
    expect((await s.api('GET', `/keys/${k.uid}`)).body.code).toBe('api_key_not_found');
    expect((await s.api('GET', '/indexes', { key: k.key })).status).toBe(403);
    expect((await s.api('DELETE', `/keys/${k.uid}`)).status).toBe(404);
  });

  it('when paginating, then the envelope has offset, limit and total', async () => {
    const all = (await s.api('GET', '/keys?limit=1000')).body;
    const r = await s.api('GET', '/keys?offset=1&limit=2');
    expect(r.body).toEqual({ results: all.results.slice(1, 3), offset: 1, limit: 2, total: all.total });
    expect((await s.api('GET', '/keys?limit=-1')).body.code).toBe('invalid_api_key_limit');
    expect((await s.api('GET', '/keys?offset=x')).body.code).toBe('invalid_api_key_offset');
    expect((await s.api('GET', '/keys?foo=1')).body.code).toBe('bad_request');
  });

  it('when keys are listed, then the newest comes first', async () => {
    const a = (await create({ actions: ['search'], indexes: ['*'], expiresAt: null })).body;
    const b = (await create({ actions: ['search'], indexes: ['*'], expiresAt: null })).body;
    const uids = (await s.api('GET', '/keys?limit=2')).body.results.map((k: any) => k.uid);
    expect(uids).toEqual([b.uid, a.uid]);
  });
});

describe('who may use /keys', () => {
  it.each([
    ['GET', '/keys', 'keys.get'],
    ['POST', '/keys', 'keys.create'],
  ])(
    'when %s %s is called with a key holding %s, then it is allowed, and refused without it',
    async (method, path, action) => {
      const body = method === 'POST' ? { actions: ['search'], indexes: ['*'], expiresAt: null } : undefined;
      const withIt = (await create({ actions: [action], indexes: ['*'], expiresAt: null })).body.key;
      const without = (await create({ actions: ['*.get', 'search', 'documents.*'], indexes: ['*'], expiresAt: null }))
        .body.key;
      expect((await s.api(method, path, { key: withIt, body })).status).toBe(method === 'POST' ? 201 : 200);
      const r = await s.api(method, path, { key: without, body });
      expect([r.status, r.body.code]).toEqual([403, 'invalid_api_key']);
    },
  );

  it('when the default admin key (`*`) manages keys, then it may; the search key may not', async () => {
    const admin = await byName('Default Admin API Key');
    const search = await byName('Default Search API Key');
    expect((await s.api('GET', '/keys', { key: admin.key })).status).toBe(200);
    const created = await s.api('POST', '/keys', {
      key: admin.key,
      body: { actions: ['search'], indexes: ['*'], expiresAt: null },
    });
    expect(created.status).toBe(201);
    expect((await s.api('PATCH', `/keys/${created.body.uid}`, { key: admin.key, body: { name: 'x' } })).status).toBe(
      200,
    );
    expect((await s.api('DELETE', `/keys/${created.body.uid}`, { key: admin.key })).status).toBe(204);
    const denied = await s.api('GET', '/keys', { key: search.key });
    expect([denied.status, denied.body.code]).toEqual([403, 'invalid_api_key']);
  });

  it('when no header is sent, then 401 missing_authorization_header', async () => {
    const r = await s.api('GET', '/keys', { key: null });
    expect([r.status, r.body.code]).toEqual([401, 'missing_authorization_header']);
  });
});

describe('a server without a master key', () => {
  let open: TestServer;
  beforeAll(async () => {
    open = await startTestServer({ masterKey: null });
  });
  afterAll(async () => {
    await open.close();
  });

  it.each([
    ['GET', '/keys'],
    ['POST', '/keys'],
    ['GET', '/keys/3db051e0-423d-4b5c-a63a-f82a7043dce6'],
    ['PATCH', '/keys/3db051e0-423d-4b5c-a63a-f82a7043dce6'],
    ['DELETE', '/keys/3db051e0-423d-4b5c-a63a-f82a7043dce6'],
  ])('when %s %s is called, then 401 missing_master_key', async (method, path) => {
    for (const key of [null, 'anything']) {
      const r = await open.api(method, path, { key, body: method === 'POST' || method === 'PATCH' ? {} : undefined });
      expect([r.status, r.body.code, r.body.type]).toEqual([401, 'missing_master_key', 'auth']);
    }
  });

  it('when any other route is called, with no key or any key, then it is open', async () => {
    for (const key of [null, 'garbage', 'x.y.z']) {
      expect((await open.api('GET', '/indexes', { key })).status).toBe(200);
      expect((await open.api('GET', '/version', { key })).status).toBe(200);
    }
  });

  it('when the header is not a bearer one, then 401 missing_authorization_header; a bare `Bearer` is 403', async () => {
    const basic = await fetch(`${open.url}/indexes`, { headers: { Authorization: 'Basic abc' } });
    expect(basic.status).toBe(401);
    expect(((await basic.json()) as { code: string }).code).toBe('missing_authorization_header');
    const bare = await fetch(`${open.url}/indexes`, { headers: { Authorization: 'Bearer' } });
    expect(bare.status).toBe(403);
  });
});
