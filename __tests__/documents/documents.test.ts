import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ args: ['--http-payload-size-limit', '1 MB'] });
});
afterAll(async () => {
  await s.close();
});

async function add(uid: string, docs: unknown, method = 'POST', query = ''): Promise<any> {
  const r = await s.api(method, `/indexes/${uid}/documents${query}`, { body: docs });
  expect(r.status).toBe(202);
  return s.waitTask(r.body.taskUid);
}

describe('POST /indexes/{uid}/documents', () => {
  it('when the index is missing, then the addition creates it and infers the primary key', async () => {
    const uid = uniqueIndex('docs');
    const t = await add(uid, [
      { movie_id: 1, title: 'Carol' },
      { movie_id: 2, title: 'Wonder Woman' },
    ]);
    expect(t).toMatchObject({
      status: 'succeeded',
      type: 'documentAdditionOrUpdate',
      details: { receivedDocuments: 2, indexedDocuments: 2 },
    });
    expect((await s.api('GET', `/indexes/${uid}`)).body.primaryKey).toBe('movie_id');
    const d = await s.api('GET', `/indexes/${uid}/documents/1`);
    expect(d.status).toBe(200);
    expect(d.body).toEqual({ movie_id: 1, title: 'Carol' });
  });

  it('when POST replaces and PUT updates, then fields are dropped or merged', async () => {
    const uid = uniqueIndex();
    await add(uid, [{ id: 'a', title: 'one', year: 2000 }]);
    await add(uid, [{ id: 'a', year: 2001 }], 'PUT');
    expect((await s.api('GET', `/indexes/${uid}/documents/a`)).body).toEqual({ id: 'a', title: 'one', year: 2001 });
    await add(uid, [{ id: 'a', genre: 'x' }]);
    expect((await s.api('GET', `/indexes/${uid}/documents/a`)).body).toEqual({ id: 'a', genre: 'x' });
  });

  it('when a single object is sent, then it is one document', async () => {
    const uid = uniqueIndex();
    const t = await add(uid, { id: 7, name: 'solo' });
    expect(t.details).toEqual({ receivedDocuments: 1, indexedDocuments: 1 });
  });

  it('when primaryKey is given, then it is used; when it differs from the index pk, then the task fails', async () => {
    const uid = uniqueIndex();
    await add(uid, [{ ref: 'x1', other_id: 3 }], 'POST', '?primaryKey=ref');
    expect((await s.api('GET', `/indexes/${uid}`)).body.primaryKey).toBe('ref');
    const t = await add(uid, [{ ref: 'x2', other_id: 4 }], 'POST', '?primaryKey=other_id');
    expect(t.status).toBe('failed');
    expect(t.error.code).toBe('index_primary_key_already_exists');
  });

  it.each([
    [[{ title: 'no id' }], 'index_primary_key_no_candidate_found'],
    [[{ a_id: 1, b_id: 2 }], 'index_primary_key_multiple_candidates_found'],
    [[{ id: 'bad id!' }], 'invalid_document_id'],
    [[{ id: 1.5 }], 'invalid_document_id'],
    [[{ id: 'a'.repeat(512) }], 'invalid_document_id'],
    [[{ id: 1 }, { title: 'missing' }], 'missing_document_id'],
  ])('when documents are %j, then the task fails with %s and nothing is stored', async (docs, code) => {
    const uid = uniqueIndex();
    const t = await add(uid, docs);
    expect(t.status).toBe('failed');
    expect(t.error.code).toBe(code);
    expect(t.details.indexedDocuments).toBe(0);
    const list = await s.api('GET', `/indexes/${uid}/documents`);
    expect(list.body.total ?? 0).toBe(0);
  });

  it('when NDJSON is sent, then every line is a document', async () => {
    const uid = uniqueIndex();
    const r = await s.api('POST', `/indexes/${uid}/documents`, {
      raw: '{"id":1,"a":"x"}\n{"id":2,"a":"y"}\n',
      contentType: 'application/x-ndjson',
    });
    expect(r.status).toBe(202);
    const t = await s.waitTask(r.body.taskUid);
    expect(t.details).toEqual({ receivedDocuments: 2, indexedDocuments: 2 });
  });

  it('when CSV with typed headers and a custom delimiter is sent, then values are typed', async () => {
    const uid = uniqueIndex();
    const csv = 'id;title;price:number;used:boolean\n1;Hello;9.5;true\n2;World;;false\n';
    const r = await s.api('POST', `/indexes/${uid}/documents?csvDelimiter=;`, {
      raw: csv,
      contentType: 'text/csv; charset=utf-8',
    });
    expect(r.status).toBe(202);
    expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
    expect((await s.api('GET', `/indexes/${uid}/documents/1`)).body).toEqual({
      id: '1',
      title: 'Hello',
      price: 9.5,
      used: true,
    });
    expect((await s.api('GET', `/indexes/${uid}/documents/2`)).body).toEqual({
      id: '2',
      title: 'World',
      price: null,
      used: false,
    });
  });

  it.each([
    ['{"id": 1', 'application/json', 400, 'malformed_payload'],
    ['[1, 2]', 'application/json', 400, 'malformed_payload'],
    ['', 'application/json', 400, 'missing_payload'],
    ['{"id":1}\nnot json\n', 'application/x-ndjson', 400, 'malformed_payload'],
    ['id,price:number\n1,abc\n', 'text/csv', 400, 'malformed_payload'],
    ['{"id":1}', 'text/plain', 415, 'invalid_content_type'],
    ['{"id":1}', null, 415, 'missing_content_type'],
  ])(
    'when the payload is %j as %s, then it answers %i %s and enqueues nothing',
    async (raw, contentType, status, code) => {
      const before = (await s.api('GET', '/tasks?limit=1')).body.results[0]?.uid;
      const r = await s.api('POST', `/indexes/${uniqueIndex()}/documents`, { raw, contentType });
      expect(r.status).toBe(status);
      expect(r.body.code).toBe(code);
      expect(Object.keys(r.body).sort()).toEqual(['code', 'link', 'message', 'type']);
      expect((await s.api('GET', '/tasks?limit=1')).body.results[0]?.uid).toBe(before);
    },
  );

  it('when the JSON is nested 10000 levels deep, then it is malformed_payload, not a crash', async () => {
    const raw = `[{"id":1,"x":${'['.repeat(10000)}${']'.repeat(10000)}}]`;
    const r = await s.api('POST', `/indexes/${uniqueIndex()}/documents`, { raw, contentType: 'application/json' });
    expect([r.status, r.body.code]).toEqual([400, 'malformed_payload']);
    expect((await s.api('GET', '/health')).status).toBe(200);
  });

  it('when the payload exceeds the limit, then it answers 413 payload_too_large', async () => {
    const big = JSON.stringify([{ id: 1, text: 'x'.repeat(1_100_000) }]);
    const r = await s.api('POST', `/indexes/${uniqueIndex()}/documents`, { raw: big, contentType: 'application/json' });
    expect([r.status, r.body.code]).toEqual([413, 'payload_too_large']);
  });

  it('when csvDelimiter comes with JSON or is not one ASCII char, then it is rejected', async () => {
    const a = await s.api('POST', `/indexes/${uniqueIndex()}/documents?csvDelimiter=;`, { body: [{ id: 1 }] });
    expect([a.status, a.body.code]).toEqual([415, 'invalid_content_type']);
    const b = await s.api('POST', `/indexes/${uniqueIndex()}/documents?csvDelimiter=ab`, {
      raw: 'id\n1\n',
      contentType: 'text/csv',
    });
    expect([b.status, b.body.code]).toEqual([400, 'invalid_document_csv_delimiter']);
  });

  it('when an unknown query parameter or a bad index uid is sent, then it is rejected', async () => {
    expect((await s.api('POST', `/indexes/${uniqueIndex()}/documents?nope=1`, { body: [] })).body.code).toBe(
      'bad_request',
    );
    expect((await s.api('POST', '/indexes/bad%20uid/documents', { body: [] })).body.code).toBe('invalid_index_uid');
  });

  it('when an empty array is sent, then the task succeeds with zero documents', async () => {
    const t = await add(uniqueIndex(), []);
    expect(t).toMatchObject({ status: 'succeeded', details: { receivedDocuments: 0, indexedDocuments: 0 } });
  });
});

describe('reading documents', () => {
  let uid: string;
  beforeAll(async () => {
    uid = uniqueIndex('read');
    await add(
      uid,
      Array.from({ length: 30 }, (_, i) => ({
        id: i,
        title: `t${i}`,
        genre: i % 2 ? 'odd' : 'even',
        _vectors: { e: [1, 2] },
      })),
    );
  });

  it('when paging with GET /documents, then offset, limit, total and fields apply', async () => {
    const r = await s.api('GET', `/indexes/${uid}/documents?offset=5&limit=3&fields=id,title`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      results: [
        { id: 5, title: 't5' },
        { id: 6, title: 't6' },
        { id: 7, title: 't7' },
      ],
      offset: 5,
      limit: 3,
      total: 30,
    });
    const def = await s.api('GET', `/indexes/${uid}/documents`);
    expect(def.body.results).toHaveLength(20);
    expect(def.body.results[0]._vectors).toBeUndefined();
  });

  it('when POST /documents/fetch asks for ids, then only they come back', async () => {
    const r = await s.api('POST', `/indexes/${uid}/documents/fetch`, { body: { ids: [3, '4', 99], fields: ['id'] } });
    expect(r.status).toBe(200);
    expect(r.body.results).toEqual([{ id: 3 }, { id: 4 }]);
    expect((await s.api('POST', `/indexes/${uid}/documents/fetch`, { body: { limit: 'x' } })).body.code).toBe(
      'invalid_document_limit',
    );
    expect((await s.api('POST', `/indexes/${uid}/documents/fetch`, { body: { useNetwork: null } })).status).toBe(200);
    expect((await s.api('POST', `/indexes/${uid}/documents/fetch`, { body: { nope: 1 } })).body.code).toBe(
      'bad_request',
    );
  });

  it('when a document or index is missing, then it answers 404 with the right code', async () => {
    const r = await s.api('GET', `/indexes/${uid}/documents/404404`);
    expect([r.status, r.body.code]).toEqual([404, 'document_not_found']);
    expect((await s.api('GET', `/indexes/${uniqueIndex('none')}/documents`)).body.code).toBe('index_not_found');
    expect((await s.api('GET', `/indexes/${uid}/documents/1?fields=title`)).body).toEqual({ title: 't1' });
  });
});

describe('deleting documents', () => {
  it('when deleting one, a batch, then all, then counts follow', async () => {
    const uid = uniqueIndex('del');
    await add(
      uid,
      Array.from({ length: 10 }, (_, i) => ({ id: i })),
    );
    const one = await s.waitTask((await s.api('DELETE', `/indexes/${uid}/documents/0`)).body.taskUid);
    expect(one).toMatchObject({
      type: 'documentDeletion',
      status: 'succeeded',
      details: { providedIds: 1, deletedDocuments: 1, originalFilter: null },
    });
    const batch = await s.waitTask(
      (await s.api('POST', `/indexes/${uid}/documents/delete-batch`, { body: [1, '2', 404] })).body.taskUid,
    );
    expect(batch.details).toEqual({ providedIds: 3, deletedDocuments: 2, originalFilter: null });
    // Its batch shows no originalFilter, as Meilisearch's does.
    expect((await s.api('GET', `/batches/${batch.batchUid}`)).body.details).toEqual({
      providedIds: 3,
      deletedDocuments: 2,
    });
    expect((await s.api('GET', `/indexes/${uid}/documents`)).body.total).toBe(7);
    const all = await s.waitTask((await s.api('DELETE', `/indexes/${uid}/documents`)).body.taskUid);
    expect(all.details).toEqual({ deletedDocuments: 7 });
    expect((await s.api('GET', `/indexes/${uid}/documents`)).body.total).toBe(0);
  });

  it('when deleting by filter, then an empty body is missing_document_filter and an empty filter is refused', async () => {
    const uid = uniqueIndex();
    expect((await s.api('POST', `/indexes/${uid}/documents/delete`, { body: {} })).body).toMatchObject({
      code: 'missing_document_filter',
      message: 'Missing field `filter`',
    });
    const empty = await s.api('POST', `/indexes/${uid}/documents/delete`, { body: { filter: '' } });
    expect(empty.body).toMatchObject({
      code: 'invalid_document_filter',
      message: 'Sending an empty filter is forbidden.',
    });
    expect((await s.api('POST', `/indexes/${uid}/documents/delete-batch`, { body: { ids: [1] } })).body.code).toBe(
      'bad_request',
    );
  });

  it('when deleting by a filter on an attribute that is not filterable, then the task fails cleanly', async () => {
    const uid = uniqueIndex();
    await add(uid, [{ id: 1, genre: 'a' }]);
    const r = await s.api('POST', `/indexes/${uid}/documents/delete`, { body: { filter: 'genre = a' } });
    expect(r.status).toBe(202);
    const t = await s.waitTask(r.body.taskUid);
    expect(t.status).toBe('failed');
    expect(t.error.code).toBe('invalid_document_filter');
    expect(t.details).toEqual({ providedIds: 0, deletedDocuments: 0, originalFilter: '"genre = a"' });
    expect((await s.api('GET', `/indexes/${uid}/documents`)).body.total).toBe(1);
  });
});

describe('autobatching', () => {
  it('when several additions to one index are enqueued together, then they share one batch', async () => {
    const uid = uniqueIndex('batch');
    await add(uid, [{ id: 0 }]);
    const blocker = uniqueIndex('blocker');
    // A larger batch on another index keeps the worker busy while the additions queue up.
    const big = Array.from({ length: 20000 }, (_, i) => ({ id: i, text: `document number ${i}` }));
    const first = await s.api('POST', `/indexes/${blocker}/documents`, { body: big });
    const uids: number[] = [];
    for (let i = 1; i <= 5; i++)
      uids.push((await s.api('POST', `/indexes/${uid}/documents`, { body: [{ id: i }] })).body.taskUid);
    await s.waitTask(first.body.taskUid, 60000);
    const tasks = await Promise.all(uids.map((u) => s.waitTask(u)));
    expect(tasks.every((t) => t.status === 'succeeded')).toBe(true);
    expect(new Set(tasks.map((t) => t.batchUid)).size).toBe(1);
    const batch = await s.api('GET', `/batches/${tasks[0].batchUid}`);
    expect(batch.body.stats).toMatchObject({
      totalNbTasks: 5,
      status: { succeeded: 5 },
      types: { documentAdditionOrUpdate: 5 },
      indexUids: { [uid]: 5 },
    });
    expect(batch.body.details).toEqual({ receivedDocuments: 5, indexedDocuments: 5 });
    expect((await s.api('GET', `/indexes/${uid}/documents`)).body.total).toBe(6);
  });
});

describe('sorting documents', () => {
  let uid: string;
  beforeAll(async () => {
    uid = uniqueIndex('sort');
    const r = await s.api('PATCH', `/indexes/${uid}/settings`, { body: { sortableAttributes: ['rank', 'title'] } });
    await s.waitTask(r.body.taskUid);
    await add(uid, [
      { id: 1, title: 'Orders', rank: 3 },
      { id: 2, title: 'orders', rank: 'high' },
      { id: 3, title: 'Payments' },
      { id: 4, title: 'Apples', rank: [10, 1] },
      { id: 5, title: 'Orders', rank: 2 },
    ]);
  });

  it('when GET /documents sorts, then numbers come first, then strings, then documents without the field', async () => {
    const r = await s.api('GET', `/indexes/${uid}/documents?sort=rank:asc&fields=id`);
    expect(r.status).toBe(200);
    expect(r.body.results.map((d: { id: number }) => d.id)).toEqual([4, 5, 1, 2, 3]);
    expect(r.body.total).toBe(5);
    const desc = await s.api('GET', `/indexes/${uid}/documents?sort=rank:desc&fields=id&limit=2&offset=1`);
    expect(desc.body).toEqual({ results: [{ id: 1 }, { id: 5 }], offset: 1, limit: 2, total: 5 });
  });

  it('when POST /documents/fetch sorts by several keys, then ties fall through to the next key', async () => {
    const r = await s.api('POST', `/indexes/${uid}/documents/fetch`, {
      body: { sort: ['title:asc', 'rank:desc'], fields: ['id'] },
    });
    expect(r.body.results.map((d: { id: number }) => d.id)).toEqual([4, 1, 5, 2, 3]);
    const some = await s.api('POST', `/indexes/${uid}/documents/fetch`, {
      body: { ids: [3, 1], sort: ['rank:asc'], fields: ['id'] },
    });
    expect(some.body.results).toEqual([{ id: 1 }, { id: 3 }]);
  });

  it('when the attribute is not sortable or the syntax is wrong, then invalid_document_sort', async () => {
    const r = await s.api('GET', `/indexes/${uid}/documents?sort=id:asc`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      code: 'invalid_document_sort',
      message: 'Attribute `id` is not sortable. Available sortable attributes are: `rank, title`.',
    });
    const bare = uniqueIndex('nosort');
    await add(bare, [{ id: 1 }]);
    const none = await s.api('POST', `/indexes/${bare}/documents/fetch`, { body: { sort: ['id:asc'] } });
    expect(none.body.message).toBe(
      'Attribute `id` is not sortable. This index does not have configured sortable attributes.',
    );
    const syntax = await s.api('POST', `/indexes/${uid}/documents/fetch`, { body: { sort: ['rank:up'] } });
    expect(syntax.body).toMatchObject({ code: 'invalid_document_sort' });
    expect(syntax.body.message).toMatch(/^Invalid syntax for the sort parameter/);
    expect((await s.api('POST', `/indexes/${uid}/documents/fetch`, { body: { sort: 'rank:asc' } })).body.code).toBe(
      'invalid_document_sort',
    );
  });
});

describe('editing documents by function', () => {
  it('when the feature is off, then feature_not_enabled; without a key, then auth errors win', async () => {
    const uid = uniqueIndex('edit');
    await add(uid, [{ id: 1 }]);
    const r = await s.api('POST', `/indexes/${uid}/documents/edit`, { body: { function: 'doc.x = 1' } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('feature_not_enabled');
    const anon = await s.api('POST', `/indexes/${uid}/documents/edit`, { body: { function: 'doc.x = 1' }, key: null });
    expect(anon.status).toBe(401);
  });
});
