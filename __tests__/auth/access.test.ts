/**
 * Access control on every route family: each route against a key holding exactly its action,
 * a key holding every other action, and a key restricted to other indexes; then index
 * patterns, list filtering and task cancelation/deletion (spec rule 4) for restricted keys.
 */
import { ACTIONS, grants } from '../../ts/auth/actions';
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
let idx: string;
beforeAll(async () => {
  s = await startTestServer();
  idx = uniqueIndex('acc');
  const t = await s.api('POST', `/indexes/${idx}/documents`, { body: [{ id: 1, title: 'a' }] });
  await s.waitTask(t.body.taskUid);
});
afterAll(async () => {
  await s.close();
});

async function createKey(
  actions: string[],
  indexes: string[] = ['*'],
  extra: Record<string, unknown> = {},
): Promise<{ key: string; uid: string }> {
  const r = await s.api('POST', '/keys', { body: { actions, indexes, expiresAt: null, ...extra } });
  if (r.status !== 201) throw new Error(`POST /keys ${r.status} ${r.text}`);
  return r.body;
}

interface Route {
  method: string;
  path: (uid: string) => string;
  action: string;
  /** The route names an index in its path. */
  scoped: boolean;
  body?: unknown;
}

const doc = (u: string) => `/indexes/${u}`;
const ROUTES: Route[] = [
  { method: 'GET', path: () => '/version', action: 'version', scoped: false },
  { method: 'GET', path: () => '/stats', action: 'stats.get', scoped: false },
  { method: 'GET', path: () => '/experimental-features', action: 'experimental.get', scoped: false },
  { method: 'PATCH', path: () => '/experimental-features', action: 'experimental.update', scoped: false, body: {} },
  { method: 'GET', path: () => '/indexes', action: 'indexes.get', scoped: false },
  { method: 'POST', path: (_u) => '/indexes', action: 'indexes.create', scoped: false, body: 'uid' },
  { method: 'GET', path: doc, action: 'indexes.get', scoped: true },
  { method: 'PATCH', path: doc, action: 'indexes.update', scoped: true, body: {} },
  { method: 'DELETE', path: (u) => `/indexes/${u}_gone`, action: 'indexes.delete', scoped: true },
  { method: 'GET', path: (u) => `${doc(u)}/stats`, action: 'stats.get', scoped: true },
  { method: 'POST', path: () => '/swap-indexes', action: 'indexes.swap', scoped: false, body: 'swap' },
  { method: 'GET', path: (u) => `${doc(u)}/documents`, action: 'documents.get', scoped: true },
  { method: 'POST', path: (u) => `${doc(u)}/documents/fetch`, action: 'documents.get', scoped: true, body: {} },
  { method: 'GET', path: (u) => `${doc(u)}/documents/1`, action: 'documents.get', scoped: true },
  { method: 'POST', path: (u) => `${doc(u)}/documents`, action: 'documents.add', scoped: true, body: [{ id: 2 }] },
  { method: 'PUT', path: (u) => `${doc(u)}/documents`, action: 'documents.add', scoped: true, body: [{ id: 2 }] },
  { method: 'DELETE', path: (u) => `${doc(u)}/documents/999`, action: 'documents.delete', scoped: true },
  {
    method: 'POST',
    path: (u) => `${doc(u)}/documents/delete-batch`,
    action: 'documents.delete',
    scoped: true,
    body: [999],
  },
  {
    method: 'POST',
    path: (u) => `/indexes/${u}_x/documents/delete`,
    action: 'documents.delete',
    scoped: true,
    body: { filter: 'id = 999' },
  },
  { method: 'DELETE', path: (u) => `/indexes/${u}_x/documents`, action: 'documents.delete', scoped: true },
  { method: 'GET', path: (u) => `${doc(u)}/settings`, action: 'settings.get', scoped: true },
  { method: 'PATCH', path: (u) => `${doc(u)}/settings`, action: 'settings.update', scoped: true, body: {} },
  { method: 'DELETE', path: (u) => `/indexes/${u}_x/settings`, action: 'settings.update', scoped: true },
  { method: 'GET', path: (u) => `${doc(u)}/settings/stop-words`, action: 'settings.get', scoped: true },
  { method: 'PUT', path: (u) => `${doc(u)}/settings/stop-words`, action: 'settings.update', scoped: true, body: [] },
  { method: 'POST', path: (u) => `${doc(u)}/search`, action: 'search', scoped: true, body: {} },
  { method: 'GET', path: (u) => `${doc(u)}/search`, action: 'search', scoped: true },
  { method: 'POST', path: () => '/multi-search', action: 'search', scoped: false, body: 'multi' },
  { method: 'GET', path: () => '/tasks', action: 'tasks.get', scoped: false },
  { method: 'GET', path: () => '/tasks/0', action: 'tasks.get', scoped: false },
  { method: 'GET', path: () => '/batches', action: 'tasks.get', scoped: false },
  { method: 'GET', path: () => '/batches/0', action: 'tasks.get', scoped: false },
  { method: 'POST', path: () => '/tasks/cancel?uids=4000000', action: 'tasks.cancel', scoped: false },
  { method: 'DELETE', path: () => '/tasks?uids=4000000', action: 'tasks.delete', scoped: false },
  { method: 'GET', path: () => '/keys', action: 'keys.get', scoped: false },
  { method: 'POST', path: () => '/keys', action: 'keys.create', scoped: false, body: 'key' },
];

const FAMILY_WILDCARD: Record<string, string> = {
  documents: 'documents.*',
  indexes: 'indexes.*',
  tasks: 'tasks.*',
  settings: 'settings.*',
  stats: 'stats.*',
};

function bodyFor(r: Route, uid: string): unknown {
  if (r.body === 'uid') return { uid: `${uid}_new` };
  if (r.body === 'swap') return [{ indexes: [uid, `${uid}_other`] }];
  if (r.body === 'multi') return { queries: [{ indexUid: uid }] };
  if (r.body === 'key') return { actions: ['search'], indexes: ['*'], expiresAt: null };
  return r.body;
}

function call(r: Route, key: string, uid = idx) {
  return s.api(r.method, r.path(uid), { key, body: bodyFor(r, uid) });
}

/** Every action but `action` and the wildcards that stand for it. */
function allBut(action: string): string[] {
  const family = FAMILY_WILDCARD[action.split('.')[0]];
  return ACTIONS.filter(
    (a) => a !== action && a !== '*' && a !== family && !(a === '*.get' && grants(['*.get'], action)),
  );
}

describe('every route family against the actions', () => {
  it.each(ROUTES.map((r) => [`${r.method} ${r.path('{uid}')}`, r] as const))(
    'when %s is called with a key holding only its action, then it is not refused',
    async (_name, r) => {
      const { key } = await createKey([r.action]);
      const res = await call(r, key);
      expect([401, 403]).not.toContain(res.status);
    },
  );

  it.each(ROUTES.map((r) => [`${r.method} ${r.path('{uid}')}`, r] as const))(
    'when %s is called with a key holding every other action, then 403 invalid_api_key',
    async (_name, r) => {
      const { key } = await createKey(allBut(r.action));
      const res = await call(r, key);
      expect([res.status, res.body.code]).toEqual([403, 'invalid_api_key']);
    },
  );

  it.each(ROUTES.map((r) => [`${r.method} ${r.path('{uid}')}`, r] as const))(
    'when %s is called with the default admin key (`*`), then it is not refused',
    async (_name, r) => {
      const { key } = await createKey(['*']);
      const res = await call(r, key);
      expect([401, 403]).not.toContain(res.status);
    },
  );

  it.each(ROUTES.filter((r) => r.scoped).map((r) => [`${r.method} ${r.path('{uid}')}`, r] as const))(
    'when %s is called with its action on other indexes only, then 403 naming the authorized indexes',
    async (_name, r) => {
      const { key } = await createKey([r.action], ['elsewhere', 'other*']);
      const res = await call(r, key);
      expect([res.status, res.body.code]).toEqual([403, 'invalid_api_key']);
      expect(res.body.message).toContain('authorized indexes are ["elsewhere", "other*"]');
    },
  );

  it('when a key holds documents.* only, then it can add, get and delete documents but not search', async () => {
    const { key } = await createKey(['documents.*'], [idx]);
    expect((await s.api('GET', `/indexes/${idx}/documents`, { key })).status).toBe(200);
    expect((await s.api('POST', `/indexes/${idx}/documents`, { key, body: [{ id: 3 }] })).status).toBe(202);
    expect((await s.api('DELETE', `/indexes/${idx}/documents/3`, { key })).status).toBe(202);
    expect((await s.api('POST', `/indexes/${idx}/search`, { key, body: {} })).status).toBe(403);
  });

  it('when a key holds *.get, then reads pass and writes and keys are refused', async () => {
    const { key } = await createKey(['*.get']);
    for (const p of [
      '/indexes',
      `/indexes/${idx}`,
      `/indexes/${idx}/documents`,
      `/indexes/${idx}/settings`,
      '/tasks',
      '/stats',
      '/version',
    ]) {
      expect([p, (await s.api('GET', p, { key })).status]).toEqual([p, 200]);
    }
    expect((await s.api('POST', `/indexes/${idx}/search`, { key, body: {} })).status).toBe(200);
    expect((await s.api('GET', '/keys', { key })).status).toBe(403);
    expect((await s.api('POST', `/indexes/${idx}/documents`, { key, body: [{ id: 4 }] })).status).toBe(403);
  });
});

describe('index patterns', () => {
  it('when a key covers `prefix*`, then it reaches the prefix and longer uids, nothing else', async () => {
    const base = uniqueIndex('pat');
    const { key } = await createKey(['search', 'indexes.get'], [`${base}mov*`]);
    for (const u of [`${base}mov`, `${base}movies`, `${base}mov_2`]) {
      expect([u, (await s.api('GET', `/indexes/${u}`, { key })).status]).toEqual([u, 404]);
    }
    for (const u of [`${base}mo`, `x${base}movies`, `${base}_movies`]) {
      expect([u, (await s.api('GET', `/indexes/${u}`, { key })).status]).toEqual([u, 403]);
    }
  });

  it.each([['*_movies'], ['mo*ies'], ['movies**'], ['movies.*'], [''], ['a b']])(
    'when a key is created with the pattern %j, then 400 invalid_api_key_indexes',
    async (p) => {
      const r = await s.api('POST', '/keys', { body: { actions: ['search'], indexes: [p], expiresAt: null } });
      expect([r.status, r.body.code]).toEqual([400, 'invalid_api_key_indexes']);
    },
  );

  it('when a key restricted to some indexes carries a global action, then 400 index_scoped_api_key_with_global_action', async () => {
    for (const a of [
      'version',
      'dumps.create',
      'snapshots.*',
      'keys.get',
      'experimental.get',
      'tasks.compact',
      'metrics.*',
    ]) {
      const r = await s.api('POST', '/keys', {
        body: { actions: ['search', a], indexes: ['movies*'], expiresAt: null },
      });
      expect([a, r.status, r.body.code]).toEqual([a, 400, 'index_scoped_api_key_with_global_action']);
    }
    const ok = await s.api('POST', '/keys', {
      body: { actions: ['search', 'tasks.*', 'indexes.*', '*.get'], indexes: ['movies*'], expiresAt: null },
    });
    expect(ok.status).toBe(201);
  });

  it('when a key has an empty index list, then it reaches no index and no global route', async () => {
    const { key } = await createKey(['*'], []);
    expect((await s.api('POST', `/indexes/${idx}/search`, { key, body: {} })).status).toBe(403);
    expect((await s.api('GET', '/version', { key })).status).toBe(403);
  });
});

describe('lists for an index-restricted key', () => {
  const base = uniqueIndex('lst');
  const movies = `${base}movies`;
  const movies2 = `${base}movies_fr`;
  const books = `${base}books`;
  let key: string;

  beforeAll(async () => {
    for (const u of [movies, movies2, books]) {
      const t = await s.api('POST', `/indexes/${u}/documents`, { body: [{ id: 1 }] });
      await s.waitTask(t.body.taskUid);
    }
    key = (
      await createKey(
        ['indexes.get', 'stats.get', 'tasks.*', 'search', 'indexes.create', 'indexes.swap'],
        [`${base}movies*`],
      )
    ).key;
  });

  it('when listing indexes, then only the matching ones are shown and counted', async () => {
    const r = await s.api('GET', '/indexes?limit=1000', { key });
    const uids = r.body.results.map((i: any) => i.uid);
    expect(uids).toEqual([movies, movies2]);
    expect(r.body.total).toBe(2);
  });

  it('when reading /stats, then only the matching indexes appear', async () => {
    const r = await s.api('GET', '/stats', { key });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.indexes).sort()).toEqual([movies, movies2]);
  });

  it('when listing tasks, then only tasks of matching indexes appear, never global ones', async () => {
    await s.api('POST', `/tasks/cancel?uids=4000001`);
    const r = await s.api('GET', '/tasks?limit=1000', { key });
    expect(r.status).toBe(200);
    expect(r.body.results.length).toBeGreaterThanOrEqual(2);
    for (const t of r.body.results) expect([movies, movies2]).toContain(t.indexUid);
    const all = await s.api('GET', '/tasks?limit=1000');
    const hidden = all.body.results.find((t: any) => t.indexUid === books);
    expect((await s.api('GET', `/tasks/${hidden.uid}`, { key })).status).toBe(404);
  });

  it('when listing batches, then only batches of matching indexes appear', async () => {
    const r = await s.api('GET', '/batches?limit=1000', { key });
    expect(r.status).toBe(200);
    expect(r.body.results.length).toBeGreaterThanOrEqual(2);
    for (const b of r.body.results)
      for (const u of Object.keys(b.stats.indexUids)) expect([movies, movies2]).toContain(u);
    const all = await s.api('GET', '/batches?limit=1000');
    const hidden = all.body.results.find((b: any) => Object.keys(b.stats.indexUids).includes(books));
    expect((await s.api('GET', `/batches/${hidden.uid}`, { key })).status).toBe(404);
  });

  it('when creating, swapping or multi-searching outside the patterns, then 403', async () => {
    expect((await s.api('POST', '/indexes', { key, body: { uid: `${base}movies_new` } })).status).toBe(202);
    expect((await s.api('POST', '/indexes', { key, body: { uid: `${base}tv` } })).status).toBe(403);
    expect((await s.api('POST', '/swap-indexes', { key, body: [{ indexes: [movies, books] }] })).status).toBe(403);
    const ms = await s.api('POST', '/multi-search', {
      key,
      body: { queries: [{ indexUid: movies }, { indexUid: books }] },
    });
    expect([ms.status, ms.body.code]).toEqual([403, 'invalid_api_key']);
    expect(ms.body.message.startsWith('Inside `.queries[1]`: ')).toBe(true);
    const ok = await s.api('POST', '/multi-search', {
      key,
      body: { queries: [{ indexUid: movies }, { indexUid: movies2 }] },
    });
    expect(ok.status).toBe(200);
  });

  it('when cancelling or deleting tasks with an index-restricted key, then 403 (spec rule 4)', async () => {
    const c = await s.api('POST', '/tasks/cancel?statuses=enqueued', { key });
    expect([c.status, c.body.code]).toEqual([403, 'invalid_api_key']);
    const d = await s.api('DELETE', '/tasks?statuses=succeeded', { key });
    expect([d.status, d.body.code]).toEqual([403, 'invalid_api_key']);
  });

  it('when cancelling or deleting tasks with a key on every index, then it is accepted', async () => {
    const { key: all } = await createKey(['tasks.cancel', 'tasks.delete', 'tasks.get']);
    const c = await s.api('POST', '/tasks/cancel?uids=4000002', { key: all });
    expect(c.status).toBe(200);
    const d = await s.api('DELETE', `/tasks?indexUids=${books}`, { key: all });
    expect(d.status).toBe(200);
    const task = await s.waitTask(d.body.taskUid);
    expect(task.details.matchedTasks).toBeGreaterThanOrEqual(1);
  });
});

describe('expiry', () => {
  it('when a key expires, then it is refused on use but still listed', async () => {
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const { key, uid } = await createKey(['search'], ['*'], { expiresAt });
    expect((await s.api('POST', `/indexes/${idx}/search`, { key, body: {} })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1700));
    const r = await s.api('POST', `/indexes/${idx}/search`, { key, body: {} });
    expect([r.status, r.body.code]).toEqual([403, 'invalid_api_key']);
    expect((await s.api('GET', `/keys/${uid}`)).status).toBe(200);
  });
});
