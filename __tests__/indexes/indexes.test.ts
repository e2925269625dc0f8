import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

describe('POST /indexes', () => {
  it('when the uid is valid, then the task creates the index with its primary key', async () => {
    const uid = uniqueIndex('movies');
    const r = await s.api('POST', '/indexes', { body: { uid, primaryKey: 'id' } });
    expect(r.status).toBe(202);
    expect(Object.keys(r.body).sort()).toEqual(['enqueuedAt', 'indexUid', 'status', 'taskUid', 'type']);
    expect(r.body).toMatchObject({ indexUid: uid, status: 'enqueued', type: 'indexCreation' });
    const t = await s.waitTask(r.body.taskUid);
    expect(t.status).toBe('succeeded');
    expect(t.details).toEqual({ primaryKey: 'id' });
    const g = await s.api('GET', `/indexes/${uid}`);
    expect(g.status).toBe(200);
    expect(g.body).toMatchObject({ uid, primaryKey: 'id' });
    expect(typeof g.body.createdAt).toBe('string');
  });

  it('when the index already exists, then the task fails with index_already_exists', async () => {
    const uid = uniqueIndex();
    await s.waitTask((await s.api('POST', '/indexes', { body: { uid } })).body.taskUid);
    const t = await s.waitTask((await s.api('POST', '/indexes', { body: { uid } })).body.taskUid);
    expect(t.status).toBe('failed');
    expect(t.error).toEqual({
      message: `Index \`${uid}\` already exists.`,
      code: 'index_already_exists',
      type: 'invalid_request',
      link: 'https://docs.meilisearch.com/errors#index_already_exists',
    });
  });

  it.each([
    [{ primaryKey: 'id' }, 400, 'missing_index_uid'],
    [{ uid: 'bad uid!' }, 400, 'invalid_index_uid'],
    [{ uid: 'a'.repeat(401) }, 400, 'invalid_index_uid'],
    [{ uid: 12 }, 400, 'invalid_index_uid'],
    [{ uid: 'ok', primaryKey: 3 }, 400, 'invalid_index_primary_key'],
    [{ uid: 'ok', createdAt: 'x' }, 400, 'bad_request'],
  ])('when the body is %j, then it answers %i %s', async (body, status, code) => {
    const r = await s.api('POST', '/indexes', { body });
    expect(r.status).toBe(status);
    expect(r.body.code).toBe(code);
  });

  it('when the JSON is malformed, missing or of the wrong type, then it answers the payload codes', async () => {
    expect((await s.api('POST', '/indexes', { raw: '{"uid":', contentType: 'application/json' })).body.code).toBe(
      'malformed_payload',
    );
    expect((await s.api('POST', '/indexes', { raw: '', contentType: 'application/json' })).body.code).toBe(
      'missing_payload',
    );
    const noType = await s.api('POST', '/indexes', { raw: '{"uid":"a"}', contentType: null });
    expect([noType.status, noType.body.code]).toEqual([415, 'missing_content_type']);
    const wrongType = await s.api('POST', '/indexes', { raw: '{"uid":"a"}', contentType: 'text/plain' });
    expect([wrongType.status, wrongType.body.code]).toEqual([415, 'invalid_content_type']);
  });
});

describe('GET /indexes', () => {
  it('when indexes exist, then it pages them sorted by uid with the offset/limit envelope', async () => {
    const prefix = uniqueIndex('list');
    for (const n of ['c', 'a', 'b'])
      await s.waitTask((await s.api('POST', '/indexes', { body: { uid: `${prefix}_${n}` } })).body.taskUid);
    const r = await s.api('GET', '/indexes?limit=1000');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['limit', 'offset', 'results', 'total']);
    const mine = r.body.results.map((i: any) => i.uid).filter((u: string) => u.startsWith(prefix));
    expect(mine).toEqual([`${prefix}_a`, `${prefix}_b`, `${prefix}_c`]);
    const page = await s.api('GET', '/indexes?offset=1&limit=1');
    expect(page.body).toMatchObject({ offset: 1, limit: 1, total: r.body.total });
    expect(page.body.results).toHaveLength(1);
    expect((await s.api('GET', '/indexes?limit=abc')).body.code).toBe('invalid_index_limit');
    expect((await s.api('GET', '/indexes?offset=-1')).body.code).toBe('invalid_index_offset');
    expect((await s.api('GET', '/indexes?foo=1')).body.code).toBe('bad_request');
  });

  it('when the index is missing, then GET answers 404 index_not_found', async () => {
    const r = await s.api('GET', '/indexes/nope_nope');
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('index_not_found');
    expect((await s.api('GET', '/indexes/bad!uid')).body.code).toBe('invalid_index_uid');
  });
});

describe('PATCH and DELETE /indexes/{uid}', () => {
  it('when renaming with uid, then the index moves and earlier tasks follow it', async () => {
    const a = uniqueIndex('old');
    const b = uniqueIndex('new');
    const created = await s.waitTask((await s.api('POST', '/indexes', { body: { uid: a } })).body.taskUid);
    const r = await s.api('PATCH', `/indexes/${a}`, { body: { uid: b } });
    expect(r.status).toBe(202);
    const t = await s.waitTask(r.body.taskUid);
    expect(t.status).toBe('succeeded');
    expect(t.details).toEqual({ primaryKey: null, oldIndexUid: a, newIndexUid: b });
    expect((await s.api('GET', `/indexes/${a}`)).status).toBe(404);
    expect((await s.api('GET', `/indexes/${b}`)).status).toBe(200);
    expect((await s.api('GET', `/tasks/${created.uid}`)).body.indexUid).toBe(b);
  });

  it('when setting the primary key of an index with documents, then the task fails', async () => {
    const uid = uniqueIndex();
    await s.waitTask((await s.api('POST', `/indexes/${uid}/documents`, { body: [{ id: 1 }] })).body.taskUid);
    const t = await s.waitTask(
      (await s.api('PATCH', `/indexes/${uid}`, { body: { primaryKey: 'other' } })).body.taskUid,
    );
    expect(t.status).toBe('failed');
    expect(t.error.code).toBe('index_primary_key_already_exists');
    const ok = await s.waitTask((await s.api('PATCH', `/indexes/${uid}`, { body: { primaryKey: 'id' } })).body.taskUid);
    expect(ok.status).toBe('succeeded');
  });

  it('when the body has unknown fields, then it answers bad_request', async () => {
    const r = await s.api('PATCH', '/indexes/whatever', { body: { createdAt: '2020-01-01' } });
    expect([r.status, r.body.code]).toEqual([400, 'bad_request']);
  });

  it('when deleting a missing index, then the task fails with index_not_found', async () => {
    const r = await s.api('DELETE', `/indexes/${uniqueIndex('missing')}`);
    expect(r.status).toBe(202);
    const t = await s.waitTask(r.body.taskUid);
    expect(t.status).toBe('failed');
    expect(t.error.code).toBe('index_not_found');
    expect(t.details).toEqual({ deletedDocuments: 0 });
  });

  it('when deleting an index with documents, then it reports the count and the index is gone', async () => {
    const uid = uniqueIndex();
    await s.waitTask((await s.api('POST', `/indexes/${uid}/documents`, { body: [{ id: 1 }, { id: 2 }] })).body.taskUid);
    const t = await s.waitTask((await s.api('DELETE', `/indexes/${uid}`)).body.taskUid);
    expect(t).toMatchObject({ status: 'succeeded', details: { deletedDocuments: 2 } });
    expect((await s.api('GET', `/indexes/${uid}`)).status).toBe(404);
  });
});

describe('POST /swap-indexes', () => {
  it('when swapping two indexes, then their documents exchange', async () => {
    const a = uniqueIndex('sa');
    const b = uniqueIndex('sb');
    await s.waitTask((await s.api('POST', `/indexes/${a}/documents`, { body: [{ id: 'a1' }] })).body.taskUid);
    await s.waitTask(
      (await s.api('POST', `/indexes/${b}/documents`, { body: [{ id: 'b1' }, { id: 'b2' }] })).body.taskUid,
    );
    const r = await s.api('POST', '/swap-indexes', { body: [{ indexes: [a, b] }] });
    expect(r.status).toBe(202);
    expect(r.body.indexUid).toBeNull();
    const t = await s.waitTask(r.body.taskUid);
    expect(t.status).toBe('succeeded');
    expect(t.details).toEqual({ swaps: [{ indexes: [a, b], rename: false }] });
    expect((await s.api('GET', `/indexes/${a}/documents`)).body.total).toBe(2);
    expect((await s.api('GET', `/indexes/${b}/documents`)).body.total).toBe(1);
  });

  it('when rename is true, then the first index takes the new name', async () => {
    const a = uniqueIndex('ra');
    const b = uniqueIndex('rb');
    await s.waitTask((await s.api('POST', '/indexes', { body: { uid: a } })).body.taskUid);
    const t = await s.waitTask(
      (await s.api('POST', '/swap-indexes', { body: [{ indexes: [a, b], rename: true }] })).body.taskUid,
    );
    expect(t.status).toBe('succeeded');
    expect((await s.api('GET', `/indexes/${b}`)).status).toBe(200);
    expect((await s.api('GET', `/indexes/${a}`)).status).toBe(404);
  });

  it('when an index is missing or listed twice, then it fails with the documented codes', async () => {
    const t = await s.waitTask(
      (await s.api('POST', '/swap-indexes', { body: [{ indexes: [uniqueIndex('x'), uniqueIndex('y')] }] })).body
        .taskUid,
    );
    expect(t.error.code).toBe('index_not_found');
    expect(
      (await s.api('POST', '/swap-indexes', { body: [{ indexes: ['a', 'b'] }, { indexes: ['b', 'c'] }] })).body.code,
    ).toBe('invalid_swap_duplicate_index_found');
    expect((await s.api('POST', '/swap-indexes', { body: [{ indexes: ['a'] }] })).body.code).toBe(
      'invalid_swap_indexes',
    );
  });
});

describe('GET /indexes/{uid}/stats and /stats', () => {
  it('when documents exist, then stats count them and their fields', async () => {
    const uid = uniqueIndex();
    await s.waitTask(
      (await s.api('POST', `/indexes/${uid}/documents`, { body: [{ id: 1, title: 'a' }, { id: 2 }] })).body.taskUid,
    );
    const r = await s.api('GET', `/indexes/${uid}/stats`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ numberOfDocuments: 2, isIndexing: false, fieldDistribution: { id: 2, title: 1 } });
    expect(r.body.rawDocumentDbSize).toBeGreaterThan(0);
    const all = await s.api('GET', '/stats');
    expect(all.body.indexes[uid]).toMatchObject({ numberOfDocuments: 2 });
    expect(typeof all.body.databaseSize).toBe('number');
    expect((await s.api('GET', '/indexes/nope_x/stats')).status).toBe(404);
  });

  it('when sizes are asked, then they are the files on disk', async () => {
    const uid = uniqueIndex();
    const docs = Array.from({ length: 3000 }, (_, i) => ({ id: i, text: `word${i} common ${'x'.repeat(i % 200)}` }));
    await s.waitTask((await s.api('POST', `/indexes/${uid}/documents`, { body: docs })).body.taskUid);
    // Every file of the data directory but lock files, staged payloads, the version mark and the instance uid.
    const onDisk = (dir: string): number =>
      fs.readdirSync(dir, { withFileTypes: true }).reduce((n, e) => {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) return e.name === 'update_files' ? n : n + onDisk(p);
        return e.name === 'lock.mdb' || e.name.endsWith('.lock') || e.name === 'VERSION' || e.name === 'instance-uid'
          ? n
          : n + fs.statSync(p).size;
      }, 0);
    const all = (await s.api('GET', '/stats')).body;
    expect(all.databaseSize).toBe(onDisk(s.dbPath));
    expect(all.usedDatabaseSize).toBeGreaterThan(0);
    expect(all.usedDatabaseSize).toBeLessThanOrEqual(all.databaseSize);
    const one = (await s.api('GET', `/indexes/${uid}/stats?showInternalDatabaseSizes=true`)).body;
    expect(Object.keys(one)).toEqual([
      'numberOfDocuments',
      'rawDocumentDbSize',
      'avgDocumentSize',
      'isIndexing',
      'internalDatabaseSizes',
      'numberOfEmbeddings',
      'numberOfEmbeddedDocuments',
      'fieldDistribution',
    ]);
    expect(one.internalDatabaseSizes.documents).toBe(one.rawDocumentDbSize);
    expect(one.internalDatabaseSizes.invertedIndex).toBeGreaterThan(0);
    expect(one.internalDatabaseSizes.externalDocumentsIds).toBeGreaterThan(0);
    const human = (await s.api('GET', `/indexes/${uid}/stats?showInternalDatabaseSizes=true&sizeFormat=human`)).body;
    expect(human.internalDatabaseSizes.documents).toMatch(/^[\d.]+ (B|KiB|MiB)$/);
  });
});
