import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

function link(code: string): string {
  return `https://docs.meilisearch.com/errors#${code}`;
}

async function enableEdition(on: boolean): Promise<void> {
  const r = await s.api('PATCH', '/experimental-features', { body: { editDocumentsByFunction: on } });
  expect(r.status).toBe(200);
}

async function indexWith(docs: unknown[], settings?: unknown): Promise<string> {
  const uid = uniqueIndex('edit');
  const r = await s.api('POST', `/indexes/${uid}/documents`, { body: docs });
  expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
  if (settings) {
    const t = await s.api('PATCH', `/indexes/${uid}/settings`, { body: settings });
    expect((await s.waitTask(t.body.taskUid)).status).toBe('succeeded');
  }
  return uid;
}

async function edit(uid: string, body: unknown): Promise<any> {
  const r = await s.api('POST', `/indexes/${uid}/documents/edit`, { body });
  expect(r.status).toBe(202);
  return s.waitTask(r.body.taskUid);
}

async function documents(uid: string): Promise<unknown[]> {
  return (await s.api('GET', `/indexes/${uid}/documents?limit=100`)).body.results;
}

const MOVIES = [
  { id: 1, title: 'alien', genre: 'scifi' },
  { id: 2, title: 'heat', genre: 'crime' },
  { id: 3, title: 'solaris', genre: 'scifi' },
];

describe('POST /indexes/{uid}/documents/edit', () => {
  it('when the feature is off, then it answers feature_not_enabled', async () => {
    await enableEdition(false);
    const r = await s.api('POST', '/indexes/movies/documents/edit', { body: { function: 'doc.n = 1' } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      message:
        'Using the documents edit route requires enabling the `edit documents by function` experimental feature. See https://github.com/orgs/meilisearch/discussions/762',
      code: 'feature_not_enabled',
      type: 'invalid_request',
      link: link('feature_not_enabled'),
    });
    await enableEdition(true);
  });

  it('when a key holds documents.* but not *, then the route refuses it, as Meilisearch does', async () => {
    const uid = await indexWith(MOVIES);
    const key = async (actions: string[]) =>
      (await s.api('POST', '/keys', { body: { actions, indexes: ['*'], expiresAt: null } })).body.key;
    const refused = await s.api('POST', `/indexes/${uid}/documents/edit`, {
      key: await key(['documents.*']),
      body: { function: 'doc.n = 1' },
    });
    expect([refused.status, refused.body.code]).toEqual([403, 'invalid_api_key']);
    const allowed = await s.api('POST', `/indexes/${uid}/documents/edit`, {
      key: await key(['*']),
      body: { function: 'doc.n = 1' },
    });
    expect(allowed.status).toBe(202);
    await s.waitTask(allowed.body.taskUid);
  });

  it.each([
    [{}, 'missing_document_edition_function', 'Missing field `function`'],
    [
      { function: 1 },
      'invalid_document_edition_function_filter',
      'Invalid value type at `.function`: expected a string, but found a positive integer: `1`',
    ],
    [
      { function: null },
      'invalid_document_edition_function_filter',
      'Invalid value type at `.function`: expected a string, but found null',
    ],
    [
      { function: 'doc.n = 1', foo: 1 },
      'bad_request',
      'Unknown field `foo`: expected one of `filter`, `context`, `function`',
    ],
    [[], 'bad_request', 'Invalid value type: expected an object, but found an array: `[]`'],
    [{ function: 'doc.n = 1', context: 1 }, 'invalid_document_edition_context', 'The context must be an object'],
    [{ function: 'doc.n = 1', context: [1] }, 'invalid_document_edition_context', 'The context must be an object'],
    [{ function: 'doc.n = 1', filter: '' }, 'invalid_document_filter', 'Sending an empty filter is forbidden.'],
    [{ function: 'doc.n = 1', filter: [] }, 'invalid_document_filter', 'Sending an empty filter is forbidden.'],
    [
      { function: 'doc.n = 1', filter: 1 },
      'invalid_document_filter',
      'Index `movies`: Invalid syntax for the filter parameter: `expected String, Array, found: 1`.',
    ],
    [
      { function: 'doc.n = 1', filter: 'n = ' },
      'invalid_document_filter',
      'Index `movies`: Was expecting a value but instead got nothing.\n5:5 n = ',
    ],
    [{ function: 'doc.n = ' }, 'bad_request', 'Script is incomplete (line 1, position 9)'],
    [{ function: 'let x = ;' }, 'bad_request', "Unexpected ';' (line 1, position 9)"],
    [
      { function: 1.5 },
      'invalid_document_edition_function_filter',
      'Invalid value type at `.function`: expected a string, but found a number: `1.5`',
    ],
    [null, 'bad_request', 'Invalid value type: expected an object, but found null'],
    // The function compiles before the context and the filter are looked at.
    [{ context: 5, function: 'doc.m.x = ' }, 'bad_request', 'Script is incomplete (line 1, position 11)'],
    [{ filter: 'n =', function: 'doc.m.x = ' }, 'bad_request', 'Script is incomplete (line 1, position 11)'],
    [{ filter: 'n =', context: 1 }, 'missing_document_edition_function', 'Missing field `function`'],
  ])('when the body is %j, then it answers %s', async (body, code, message) => {
    const r = await s.api('POST', '/indexes/movies/documents/edit', { body });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message, code, type: 'invalid_request', link: link(code) });
  });

  it('when a function edits the filtered documents, then searches see the edition and the task has Meilisearch details', async () => {
    const uid = await indexWith(MOVIES, { filterableAttributes: ['genre'] });
    const body = {
      function: 'doc.title = doc.title.to_upper() + context.suffix; doc.seen = true',
      filter: 'genre = scifi',
      context: { suffix: ' remastered' },
    };
    const r = await s.api('POST', `/indexes/${uid}/documents/edit`, { body });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ indexUid: uid, status: 'enqueued', type: 'documentEdition' });
    const task = await s.waitTask(r.body.taskUid);
    expect(task).toMatchObject({
      status: 'succeeded',
      type: 'documentEdition',
      error: null,
      details: {
        editedDocuments: 2,
        deletedDocuments: 2,
        originalFilter: '"genre = scifi"',
        context: { suffix: ' remastered' },
        function: body.function,
      },
    });
    expect(await documents(uid)).toEqual([
      { id: 1, title: 'ALIEN remastered', genre: 'scifi', seen: true },
      { id: 2, title: 'heat', genre: 'crime' },
      { id: 3, title: 'SOLARIS remastered', genre: 'scifi', seen: true },
    ]);
    const hits = (await s.api('POST', `/indexes/${uid}/search`, { body: { q: 'remastered' } })).body.hits;
    expect(hits.map((h: any) => h.id).sort()).toEqual([1, 3]);
  });

  it('when customMetadata is given, then the task carries it; an unknown parameter is refused', async () => {
    const uid = await indexWith(MOVIES);
    const r = await s.api('POST', `/indexes/${uid}/documents/edit?customMetadata=abc`, {
      body: { function: 'doc.n = 1' },
    });
    expect(r.status).toBe(202);
    expect(r.body.customMetadata).toBe('abc');
    expect((await s.waitTask(r.body.taskUid)).customMetadata).toBe('abc');
    const bad = await s.api('POST', `/indexes/${uid}/documents/edit?foo=1`, { body: { function: 'doc.n = 1' } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('Unknown parameter `foo`: expected one of `customMetadata`');
  });

  it('when the index has no documents yet, then nothing is edited', async () => {
    const uid = uniqueIndex('empty');
    const c = await s.api('POST', '/indexes', { body: { uid } });
    await s.waitTask(c.body.taskUid);
    const task = await edit(uid, { function: 'doc.x = 1' });
    expect(task).toMatchObject({ status: 'succeeded', details: { editedDocuments: 0, deletedDocuments: 0 } });
  });

  it('when the index does not exist, then the task fails with index_not_found', async () => {
    const uid = uniqueIndex('missing');
    const r = await s.api('POST', `/indexes/${uid}/documents/edit`, { body: { function: 'doc.n = 1' } });
    expect(r.status).toBe(202);
    const task = await s.waitTask(r.body.taskUid);
    expect(task).toMatchObject({
      status: 'failed',
      details: {
        editedDocuments: 0,
        deletedDocuments: null,
        originalFilter: null,
        context: null,
        function: 'doc.n = 1',
      },
      error: { code: 'index_not_found', message: `Index \`${uid}\` not found.` },
    });
  });

  it('when the function sets doc to (), then the document is deleted', async () => {
    const uid = await indexWith(MOVIES);
    const task = await edit(uid, { function: 'if doc.id == 2 { doc = () }' });
    expect(task.status).toBe('succeeded');
    expect(task.details).toMatchObject({ editedDocuments: 3, deletedDocuments: 3 });
    expect(await documents(uid)).toEqual([MOVIES[0], MOVIES[2]]);
    expect((await s.api('POST', `/indexes/${uid}/search`, { body: { q: 'heat' } })).body.hits).toEqual([]);
  });

  it('when the function changes the primary key, then the task fails and nothing changes', async () => {
    const uid = await indexWith(MOVIES);
    const task = await edit(uid, { function: 'doc.title = "x"; if doc.id == 3 { doc.id = 99 }' });
    expect(task.status).toBe('failed');
    expect(task.details).toMatchObject({ editedDocuments: 0, deletedDocuments: null });
    expect(task.error).toEqual({
      message: `Index \`${uid}\`: Document editions cannot modify a document's primary key`,
      code: 'edit_documents_by_function_error',
      type: 'invalid_request',
      link: link('edit_documents_by_function_error'),
    });
    expect(await documents(uid)).toEqual(MOVIES);
  });

  it('when the filter names an attribute that is not filterable, then the task fails', async () => {
    const uid = await indexWith(MOVIES);
    const task = await edit(uid, { function: 'doc.n = 1', filter: ['genre = scifi'] });
    expect(task.status).toBe('failed');
    expect(task.details.originalFilter).toBe('["genre = scifi"]');
    expect(task.error.code).toBe('invalid_document_filter');
  });

  it('when the function loops forever, then its task fails while searches keep answering', async () => {
    // Each document costs most of the operation budget; the last one never ends.
    const docs = Array.from({ length: 60 }, (_, i) => ({ id: i, title: `movie ${i}` }));
    const uid = await indexWith(docs);
    const r = await s.api('POST', `/indexes/${uid}/documents/edit`, {
      body: { function: 'let i = 0; while i < 150000 { i += 1; } if doc.id == 59 { loop {} }' },
    });
    expect(r.status).toBe(202);
    const taskUid = r.body.taskUid;
    let searchedWhileProcessing = 0;
    let detailsWhileProcessing: unknown = null;
    for (;;) {
      const running = (await s.api('GET', `/tasks/${taskUid}`)).body;
      const before = running.status;
      if (before === 'processing') detailsWhileProcessing = running.details;
      const search = await s.api('POST', `/indexes/${uid}/search`, { body: { q: 'movie', limit: 1 } });
      expect(search.status).toBe(200);
      expect(search.body.estimatedTotalHits).toBe(60);
      const after = (await s.api('GET', `/tasks/${taskUid}`)).body.status;
      if (before === 'processing' && after === 'processing') searchedWhileProcessing++;
      if (after === 'failed' || after === 'succeeded') break;
    }
    expect(searchedWhileProcessing).toBeGreaterThan(0);
    // Until the task ends, its counts are null.
    expect(detailsWhileProcessing).toEqual({
      editedDocuments: null,
      deletedDocuments: null,
      originalFilter: null,
      context: null,
      function: 'let i = 0; while i < 150000 { i += 1; } if doc.id == 59 { loop {} }',
    });
    const task = await s.waitTask(taskUid);
    expect(task.status).toBe('failed');
    expect(task.error.code).toBe('edit_documents_by_function_error');
    expect(task.error.message).toMatch(
      /^Index `[^`]+`: Document edition runtime error encountered while running the function: Too many operations \(line 1, position \d+\)$/,
    );
  });

  it('when the function builds an ever larger string or recurses forever, then its task fails', async () => {
    const uid = await indexWith(MOVIES);
    for (const fn of [
      'let s = "ab"; loop { s += s; }',
      'fn f(x) { f(x + 1) } f(1)',
      'let a = []; loop { a.push(1); }',
    ]) {
      const task = await edit(uid, { function: fn });
      expect(task.status).toBe('failed');
      expect(task.error.code).toBe('edit_documents_by_function_error');
    }
    expect(await documents(uid)).toEqual(MOVIES);
  });
});
