/**
 * Hostile requests that once answered 500 or were accepted where Meilisearch refuses them.
 * Each test is named after what it guards; every answer must be a 4xx error object, and the
 * server must keep answering afterwards.
 */
import zlib from 'node:zlib';
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
let uid: string;
beforeAll(async () => {
  s = await startTestServer();
  uid = uniqueIndex('hostile');
  const r = await s.api('POST', `/indexes/${uid}/documents`, {
    body: [
      { id: 1, title: 'carol', year: 3 },
      { id: 2, title: 'wonder', year: 5 },
    ],
  });
  expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
  const t = await s.api('PATCH', `/indexes/${uid}/settings`, {
    body: { filterableAttributes: ['title'], sortableAttributes: ['year'] },
  });
  expect((await s.waitTask(t.body.taskUid)).status).toBe('succeeded');
});
afterAll(async () => {
  await s.close();
});

function expectError(r: { status: number; body: any }, status: number, code: string): void {
  expect({ status: r.status, code: r.body?.code, type: typeof r.body?.type, link: typeof r.body?.link }).toEqual({
    status,
    code,
    type: 'string',
    link: 'string',
  });
}

async function stillServing(): Promise<void> {
  const r = await s.api('POST', `/indexes/${uid}/search`, { body: { q: 'carol' } });
  expect(r.status).toBe(200);
  expect(r.body.hits.map((h: any) => h.id)).toEqual([1]);
}

describe('malformed percent-encoding in a path parameter', () => {
  it.each(['%zz', '%ff', '%C3%28'])('DELETE /indexes/%s answers 400 invalid_index_uid, not 500', async (seg) => {
    expectError(await s.api('DELETE', `/indexes/${seg}`), 400, 'invalid_index_uid');
  });

  it('the undecodable segment reaches the route as typed', async () => {
    const r = await s.api('GET', '/indexes/%zz/search');
    expectError(r, 400, 'invalid_index_uid');
    expect(r.body.message).toContain('`%zz` is not a valid index uid');
    expectError(await s.api('GET', '/tasks/%zz'), 400, 'invalid_task_uids');
    await stillServing();
  });
});

describe('deeply nested JSON', () => {
  const deep = '['.repeat(10000) + ']'.repeat(10000);
  it.each([
    ['POST', 'search (whole body)', () => `/indexes/${uid}/search`, deep],
    ['POST', 'search (q)', () => `/indexes/${uid}/search`, `{"q":${deep}}`],
    ['PATCH', 'settings', () => `/indexes/${uid}/settings`, `{"rankingRules":${deep}}`],
    ['POST', 'multi-search', () => '/multi-search', `{"queries":${deep}}`],
    ['POST', 'keys', () => '/keys', `{"actions":${deep}}`],
  ])('%s %s with 10,000 levels answers 400 malformed_payload', async (method, _label, path, raw) => {
    const r = await s.api(method, path(), { raw });
    expectError(r, 400, 'malformed_payload');
    expect(r.body.message).toContain('recursion limit exceeded');
  });

  it('127 levels parse, 128 are refused where Meilisearch refuses them', async () => {
    const body = (n: number) => `{"filter":${'['.repeat(n)}${']'.repeat(n)}}`;
    const refused = await s.api('POST', `/indexes/${uid}/search`, { raw: body(127) });
    expectError(refused, 400, 'malformed_payload');
    expect(refused.body.message).toBe(
      'The json payload provided is malformed. `recursion limit exceeded at line 1 column 137`.',
    );
    // 127 levels are read (the filter itself is then refused for what it says).
    expect((await s.api('POST', `/indexes/${uid}/search`, { raw: body(126) })).body.code).toBe('invalid_search_filter');
  });

  it("a malformed body is described in Meilisearch's words, at its place", async () => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { raw: '{\n  "q": "x",\n  "limit": ,\n}' });
    expectError(r, 400, 'malformed_payload');
    expect(r.body.message).toBe('The json payload provided is malformed. `expected value at line 3 column 12`.');
    const bytes = await s.api('POST', `/indexes/${uid}/search`, { raw: Buffer.from('{"q":"a\xff"}', 'latin1') });
    expect(bytes.body.message).toBe(
      'The json payload provided is malformed. `invalid unicode code point at line 1 column 9`.',
    );
  });

  it('126 levels still parse', async () => {
    const ok = `{"q":"carol","filter":${'['.repeat(1)}"title = carol"${']'.repeat(1)},"x":${'['.repeat(125)}${']'.repeat(125)}}`;
    const r = await s.api('POST', `/indexes/${uid}/search`, { raw: ok });
    expectError(r, 400, 'bad_request');
    await stillServing();
  });
});

describe('a Content-Encoding whose body does not decode', () => {
  it.each(['gzip', 'deflate', 'br'])('%s answers 400 bad_request', async (encoding) => {
    const res = await fetch(`${s.url}/indexes/${uid}/search`, {
      method: 'POST',
      headers: {
        Authorization: 'Bearer test-master-key-0123456789',
        'Content-Type': 'application/json',
        'Content-Encoding': encoding,
      },
      body: 'this is not compressed',
    });
    const body = await res.json();
    expectError({ status: res.status, body }, 400, 'bad_request');
  });

  it('a body that does decode is searched', async () => {
    const res = await fetch(`${s.url}/indexes/${uid}/search`, {
      method: 'POST',
      headers: {
        Authorization: 'Bearer test-master-key-0123456789',
        'Content-Type': 'application/json',
        'Content-Encoding': 'gzip',
      },
      body: zlib.gzipSync(JSON.stringify({ q: 'wonder' })),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).hits.map((h: any) => h.id)).toEqual([2]);
  });
});

describe('a lone surrogate escape', () => {
  it.each([
    ['q (high)', () => `/indexes/${uid}/search`, '{"q":"\\uD800"}'],
    ['q (low)', () => `/indexes/${uid}/search`, '{"q":"a\\uDC00b"}'],
    ['filter', () => `/indexes/${uid}/search`, '{"filter":"title = \\"\\uD800\\""}'],
    ['facetQuery', () => `/indexes/${uid}/facet-search`, '{"facetName":"title","facetQuery":"\\uD800"}'],
  ])('in %s answers 400 malformed_payload', async (_label, path, raw) => {
    expectError(await s.api('POST', path(), { raw }), 400, 'malformed_payload');
  });

  it('a surrogate pair is a character', async () => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { raw: '{"q":"\\uD83D\\uDE00"}' });
    expect(r.status).toBe(200);
    expect(r.body.query).toBe('😀');
  });
});

describe('an empty document id', () => {
  it('GET /documents?ids= and ids=1,,2 skip the empty entries', async () => {
    const none = await s.api('GET', `/indexes/${uid}/documents?ids=`);
    expect(none.status).toBe(200);
    expect(none.body.results).toEqual([]);
    const two = await s.api('GET', `/indexes/${uid}/documents?ids=1,,2`);
    expect(two.status).toBe(200);
    expect(two.body.results.map((d: any) => d.id)).toEqual([1, 2]);
  });

  it.each([[['']], [['a b']], [[1.5]], [['x'.repeat(512)]]])(
    'POST /documents/fetch with ids %j answers 400 invalid_document_ids',
    async (ids) => {
      const r = await s.api('POST', `/indexes/${uid}/documents/fetch`, { body: { ids } });
      expectError(r, 400, 'invalid_document_ids');
      expect(r.body.message).toContain('In `.ids[0]`: Document identifier');
    },
  );

  it('POST /documents/delete-batch with an empty or 600-byte id deletes nothing and succeeds (it once failed its batch with MDB_BAD_VALSIZE)', async () => {
    for (const ids of [[''], ['x'.repeat(600)], ['', 'nope']]) {
      const r = await s.api('POST', `/indexes/${uid}/documents/delete-batch`, { body: ids });
      const task = await s.waitTask(r.body.taskUid);
      expect({ status: task.status, deleted: task.details.deletedDocuments }).toEqual({
        status: 'succeeded',
        deleted: 0,
      });
    }
    expect((await s.api('GET', `/indexes/${uid}/documents`)).body.total).toBe(2);
  });
});

describe('numbers out of range', () => {
  it('POST /documents/delete-batch [1e400] is refused with malformed_payload', async () => {
    expectError(
      await s.api('POST', `/indexes/${uid}/documents/delete-batch`, { raw: '[1e400]' }),
      400,
      'malformed_payload',
    );
    expectError(
      await s.api('POST', `/indexes/${uid}/search`, { raw: '{"q":"a","limit":-1e999}' }),
      400,
      'malformed_payload',
    );
    // No exponent, but 400 digits: past f64 as surely.
    expectError(
      await s.api('POST', `/indexes/${uid}/search`, { raw: `{"q":"a","rankingScoreThreshold":1${'0'.repeat(400)}}` }),
      400,
      'malformed_payload',
    );
    const docs = await s.api('GET', `/indexes/${uid}/documents`);
    expect(docs.body.total).toBe(2);
  });

  it('a query vector holding 1e300 is read as infinity, as Meilisearch does (it once answered 500)', async () => {
    const v = uniqueIndex('vec');
    const add = await s.api('POST', `/indexes/${v}/documents`, { body: [{ id: 1, _vectors: { e: [1, 2] } }] });
    expect((await s.waitTask(add.body.taskUid)).status).toBe('succeeded');
    const set = await s.api('PATCH', `/indexes/${v}/settings`, {
      body: { embedders: { e: { source: 'userProvided', dimensions: 2 } } },
    });
    expect((await s.waitTask(set.body.taskUid)).status).toBe('succeeded');
    const r = await s.api('POST', `/indexes/${v}/search`, {
      body: { vector: [1e300, 1], hybrid: { embedder: 'e', semanticRatio: 1 } },
    });
    expect(r.status).toBe(200);
    expect(r.body.hits.map((h: any) => h.id)).toEqual([1]);
    // Past f64 inside the vector is refused where it stands; a small exponent is a number.
    const body = (x: string) => `{"vector":[${x},1],"hybrid":{"embedder":"e","semanticRatio":1}}`;
    const refused = await s.api('POST', `/indexes/${v}/search`, { raw: body('1e400') });
    expectError(refused, 400, 'malformed_payload');
    expect(refused.body.message).toContain('number out of range at line 1 column 16');
    expectError(
      await s.api('POST', `/indexes/${v}/search`, { raw: body(`-1${'0'.repeat(309)}`) }),
      400,
      'malformed_payload',
    );
    const small = await s.api('POST', `/indexes/${v}/search`, { raw: body('1e-7') });
    expect(small.status).toBe(200);
    expect(small.body.hits.map((h: any) => h.id)).toEqual([1]);
  });
});

describe('echoed values in error messages', () => {
  it('a 1 MB offending value comes back as a short excerpt', async () => {
    const huge = 'x'.repeat(1 << 20);
    for (const r of [
      await s.api('POST', '/indexes', { body: { uid: `bad uid ${huge}` } }),
      await s.api('POST', `/indexes/${uid}/search`, { body: { filter: `title = ${huge.slice(0, 1 << 19)} AND` } }),
      await s.api('POST', `/indexes/${uid}/search`, { body: { sort: [`${huge}:asc`] } }),
    ]) {
      expect(r.status).toBe(400);
      expect(r.text.length).toBeLessThan(1400);
      expect(r.body.message).toContain('xxxxxxxxxx…');
    }
  });

  it('short messages are sent whole', async () => {
    const r = await s.api('POST', '/indexes', { body: { uid: 'bad uid' } });
    expect(r.body.message).toBe(
      'Invalid value at `.uid`: `bad uid` is not a valid index uid. Index uid can be an integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.',
    );
  });
});

describe('allocations sized by the request', () => {
  it('a placeholder search with a sort and offset 2^53-1 answers an empty page (it once aborted the process)', async () => {
    for (const body of [
      { sort: ['year:desc'], offset: 9007199254740991 },
      { sort: ['year:asc'], offset: 9007199254740991, limit: 9007199254740991 },
      { sort: ['year:desc'], page: 9007199254740991, hitsPerPage: 9007199254740991 },
    ]) {
      const r = await s.api('POST', `/indexes/${uid}/search`, { body });
      expect(r.status).toBe(200);
      expect(r.body.hits).toEqual([]);
    }
    const get = await s.api('GET', `/indexes/${uid}/search?sort=year:desc&offset=9007199254740991`);
    expect(get.status).toBe(200);
    expect(get.body.hits).toEqual([]);
    await stillServing();
  });
});

describe('explicit limits', () => {
  const many = (n: number, f: (i: number) => unknown = (i) => `f${i}`) => Array.from({ length: n }, (_, i) => f(i));

  it('a document with more than 65,535 fields fails its task with max_fields_limit_exceeded and writes nothing', async () => {
    const wide = Object.fromEntries([['id', 9], ...many(70_000).map((f) => [f, 1])]);
    const r = await s.api('POST', `/indexes/${uid}/documents`, { body: [{ id: 8, title: 'kept out' }, wide] });
    const task = await s.waitTask(r.body.taskUid);
    expect(task.status).toBe('failed');
    expect(task.error.code).toBe('max_fields_limit_exceeded');
    expect(task.error.message).toBe('A document cannot contain more than 65,535 fields.');
    expect(task.details.indexedDocuments).toBe(0);
    expect((await s.api('GET', `/indexes/${uid}/documents/8`)).status).toBe(404);
    // Nested searchable paths count too.
    const nested = { id: 10, n: Object.fromEntries(many(70_000).map((f) => [f, 'word'])) };
    const n = await s.waitTask((await s.api('POST', `/indexes/${uid}/documents`, { body: [nested] })).body.taskUid);
    expect(n.error?.code).toBe('max_fields_limit_exceeded');
    await stillServing();
  });

  it('a filter longer than 1 MiB answers invalid_search_filter; one just under it is parsed', async () => {
    const long = `title = ${'x'.repeat(1 << 20)}`;
    const r = await s.api('POST', `/indexes/${uid}/search`, { body: { filter: long } });
    expectError(r, 400, 'invalid_search_filter');
    expect(r.body.message).toMatch(/at most 1048576 bytes/);
    const split = await s.api('POST', `/indexes/${uid}/search`, {
      body: { filter: [long.slice(0, 600_000), long.slice(0, 600_000)] },
    });
    expectError(split, 400, 'invalid_search_filter');
    expectError(
      await s.api('POST', `/indexes/${uid}/documents/fetch`, { body: { filter: long } }),
      400,
      'invalid_document_filter',
    );
    const ok = await s.api('POST', `/indexes/${uid}/search`, {
      body: { filter: `title IN [${many(80_000, (i) => `v${i}`).join(',')}]` },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.hits).toEqual([]);
  });

  it('a filter naming 80,000 distinct attributes is refused without quadratic work', async () => {
    const r = await s.api('POST', `/indexes/${uid}/search`, {
      body: { filter: many(80_000, (i) => `a${i}=1`).join(' OR ') },
    });
    expectError(r, 400, 'invalid_search_filter');
    expect(r.body.message).toContain('is not filterable');
  });

  it.each([
    ['facets', 'invalid_search_facets'],
    ['attributesToRetrieve', 'invalid_search_attributes_to_retrieve'],
    ['sort', 'invalid_search_sort'],
    ['attributesToHighlight', 'invalid_search_attributes_to_highlight'],
  ])('search %s with more than 1,000 entries answers %s', async (field, code) => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { body: { [field]: many(1001) } });
    expectError(r, 400, code);
    expect(r.body.message).toContain('at most 1000 entries are accepted');
  });

  it('a filter array of 1,001 conditions is read as any filter: its text is what is bounded (1 MiB)', async () => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { body: { filter: many(1001, () => 'title = carol') } });
    expect(r.status).toBe(200);
    const empty = await s.api('POST', `/indexes/${uid}/search`, { body: { filter: many(100_000, () => '') } });
    expect(empty.status).toBe(200);
  });

  it('more than 1,000 multi-search queries answer bad_request', async () => {
    const r = await s.api('POST', '/multi-search', {
      body: { queries: many(1001, () => ({ indexUid: uid, q: 'carol' })) },
    });
    expectError(r, 400, 'bad_request');
    expect(r.body.message).toContain('at most 1000 queries');
    const fine = await s.api('POST', '/multi-search', {
      body: { queries: many(3, () => ({ indexUid: uid, q: 'carol' })) },
    });
    expect(fine.status).toBe(200);
  });

  it('more than 1,000 swap operations answer invalid_swap_indexes', async () => {
    const r = await s.api('POST', '/swap-indexes', { body: many(1001, (i) => ({ indexes: [`a${i}`, `b${i}`] })) });
    expectError(r, 400, 'invalid_swap_indexes');
  });

  it('API key names, descriptions and index lists are bounded', async () => {
    const base = { actions: ['search'], indexes: ['*'], expiresAt: null };
    expectError(
      await s.api('POST', '/keys', { body: { ...base, name: 'n'.repeat(1025) } }),
      400,
      'invalid_api_key_name',
    );
    expectError(
      await s.api('POST', '/keys', { body: { ...base, description: 'd'.repeat(10_001) } }),
      400,
      'invalid_api_key_description',
    );
    expectError(
      await s.api('POST', '/keys', { body: { ...base, indexes: many(10_001, (i) => `i${i}`) } }),
      400,
      'invalid_api_key_indexes',
    );
    expectError(
      await s.api('POST', '/keys', { body: { ...base, actions: many(101, () => 'search') } }),
      400,
      'invalid_api_key_actions',
    );
    const ok = await s.api('POST', '/keys', {
      body: { ...base, name: 'n'.repeat(1024), indexes: many(10_000, (i) => `i${i}`) },
    });
    expect(ok.status).toBe(201);
    expectError(
      await s.api('PATCH', `/keys/${ok.body.uid}`, { body: { description: 'd'.repeat(10_001) } }),
      400,
      'invalid_api_key_description',
    );
  });

  it('a primary key name longer than 512 bytes answers invalid_index_primary_key', async () => {
    const pk = 'é'.repeat(257);
    expectError(
      await s.api('POST', '/indexes', { body: { uid: uniqueIndex('pk'), primaryKey: pk } }),
      400,
      'invalid_index_primary_key',
    );
    expectError(
      await s.api('PATCH', `/indexes/${uid}`, { body: { primaryKey: pk } }),
      400,
      'invalid_index_primary_key',
    );
    const q = await s.api('POST', `/indexes/${uniqueIndex('pk')}/documents?primaryKey=${encodeURIComponent(pk)}`, {
      body: [{ [pk]: 1 }],
    });
    expectError(q, 400, 'invalid_index_primary_key');
  });

  it('an Authorization header past the 16 KB header limit answers 431 with an error object', async () => {
    const r = await s.api('GET', '/indexes', { key: 'a'.repeat(20_000) });
    expect(r.status).toBe(431);
    expect(r.body.code).toBe('bad_request');
  });
});

describe('an index deleted while it is searched', () => {
  it('the deletion completes and the uid can be created again (closing a handle in use once failed after the commit)', async () => {
    const busy = uniqueIndex('busy');
    const add = await s.api('POST', `/indexes/${busy}/documents`, {
      body: Array.from({ length: 2000 }, (_, i) => ({ id: i, title: `carol number ${i}` })),
    });
    expect((await s.waitTask(add.body.taskUid)).status).toBe('succeeded');
    const searches = Array.from({ length: 40 }, () =>
      s.api('POST', `/indexes/${busy}/search`, { body: { q: 'carol', limit: 200 } }),
    );
    const del = await s.api('DELETE', `/indexes/${busy}`);
    expect((await s.waitTask(del.body.taskUid)).status).toBe('succeeded');
    for (const r of await Promise.all(searches)) expect([200, 404]).toContain(r.status);
    const again = await s.api('POST', `/indexes/${busy}/documents`, { body: [{ id: 1, title: 'wonder' }] });
    expect((await s.waitTask(again.body.taskUid)).status).toBe('succeeded');
    const found = await s.api('POST', `/indexes/${busy}/search`, { body: { q: 'wonder' } });
    expect(found.status).toBe(200);
    expect(found.body.hits).toEqual([{ id: 1, title: 'wonder' }]);
    await stillServing();
  });
});
