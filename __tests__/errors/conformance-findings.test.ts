/**
 * Differences the conformance harness (__tests__/conformance) found against Meilisearch 1.50,
 * each answered here as the reference answered the same request (settled on the binary): the
 * first fault in the order the request lists its parameters, the suggestion for an unknown one,
 * `useNetwork` and `personalize` without their features, `page: null`, a multi-search query's
 * missing index as a 400, `_geoPoint` in a GET `sort`, empty bodies and content types, and the
 * index named in the errors found while searching it.
 */
import { MASTER_KEY, startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
const uid = uniqueIndex('conf_findings');

beforeAll(async () => {
  s = await startTestServer();
  const settings = await s.api('PATCH', `/indexes/${uid}/settings`, {
    body: { filterableAttributes: ['genre'], sortableAttributes: ['year', '_geo'] },
  });
  await s.waitTask(settings.body.taskUid);
  const docs = [
    { id: 1, genre: 'a', year: 2000, _geo: { lat: 50, lng: 10 } },
    { id: 2, genre: 'b', year: 1990, _geo: { lat: 45, lng: 5 } },
  ];
  await s.waitTask((await s.api('POST', `/indexes/${uid}/documents`, { body: docs })).body.taskUid);
});
afterAll(() => s.close());

const search = (body: unknown) => s.api('POST', `/indexes/${uid}/search`, { body });

describe('unknown fields and parameters', () => {
  it('when a body field is one typo from a known one, then the message suggests it', async () => {
    const r = await search({ limits: 1 });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/^Unknown field `limits`: did you mean `limit`\? expected one of `q`, `offset`/);
  });

  it('when a GET search parameter is unknown, then it is an unknown parameter with the GET form’s list', async () => {
    const r = await s.api('GET', `/indexes/${uid}/search?limits=1`);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('bad_request');
    expect(r.body.message).toMatch(
      /^Unknown parameter `limits`: did you mean `limit`\? expected one of .*`hybridEmbedder`, `hybridSemanticRatio`, `vector`, `retrieveVectors`, `personalizeUserContext`, `useNetwork`/,
    );
  });

  it('when a tasks parameter is bad before an unknown one, then the bad value is answered, and the other way round', async () => {
    const bad = await s.api('GET', '/tasks?afterFinishedAt=yesterday&bogus=1');
    expect(bad.body.code).toBe('invalid_task_after_finished_at');
    const unknown = await s.api('GET', '/tasks?bogus=1&afterFinishedAt=yesterday');
    expect(unknown.body.code).toBe('bad_request');
    const typo = await s.api('GET', '/tasks?limitt=1');
    expect(typo.body.message).toMatch(/^Unknown parameter `limitt`: did you mean `limit`\?/);
  });

  it('when two stats parameters are bad, then the first listed is answered', async () => {
    expect((await s.api('GET', '/stats?sizeFormat=HUMAN&showInternalDatabaseSizes=yes')).body.code).toBe(
      'invalid_stats_size_format',
    );
    expect((await s.api('GET', '/stats?showInternalDatabaseSizes=yes&sizeFormat=HUMAN')).body.code).toBe(
      'invalid_stats_show_internal_database_sizes',
    );
  });
});

describe('experimental search parameters without their feature', () => {
  it('when useNetwork is sent, even false, then it is feature_not_enabled before the index is looked at', async () => {
    for (const [path, body] of [
      [`/indexes/${uid}/search`, { useNetwork: false }],
      ['/indexes/missing_index_x/search', { useNetwork: true }],
      [`/indexes/${uid}/facet-search`, { facetName: 'genre', useNetwork: false }],
    ] as const) {
      const r = await s.api('POST', path, { body });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('feature_not_enabled');
      expect(r.body.message).toBe(
        'passing `useNetwork` in a search query requires enabling the `network` experimental feature. See https://github.com/orgs/meilisearch/discussions/805',
      );
    }
    expect((await search({ useNetwork: null })).status).toBe(200);
  });

  it('when personalize is sent, then it must be an object, and an object asks for the personalization feature', async () => {
    const wrong = await search({ personalize: 'x' });
    expect(wrong.body).toMatchObject({
      code: 'invalid_search_personalize',
      message: 'Invalid value type at `.personalize`: expected an object, but found a string: `"x"`',
    });
    const asked = await search({ personalize: { userContext: 'x' } });
    expect(asked.body.code).toBe('feature_not_enabled');
    expect((await s.api('GET', `/indexes/${uid}/search?personalizeUserContext=x`)).body.code).toBe(
      'feature_not_enabled',
    );
    expect((await search({ personalize: null })).status).toBe(200);
  });

  it('when a vector comes without hybrid, then that is answered before the index’s own errors', async () => {
    const r = await search({ vector: [], distinct: 'nope' });
    expect(r.body).toMatchObject({
      code: 'missing_search_hybrid',
      message: 'Invalid request: missing `hybrid` parameter when `vector` or `media` are present.',
    });
    // But after the index is found and the filter read, as on Meilisearch.
    expect(
      (await s.api('POST', '/indexes/no-such-index/search', { body: { vector: [1], media: { a: 1 } } })).body.code,
    ).toBe('index_not_found');
    expect((await search({ vector: [1], filter: 'year >' })).body.code).toBe('invalid_search_filter');
    const multi = await s.api('POST', '/multi-search', {
      body: { queries: [{ indexUid: 'no-such-index', vector: [1] }] },
    });
    expect(multi.body).toMatchObject({
      code: 'index_not_found',
      message: 'Inside `.queries[0]`: Index `no-such-index` not found.',
    });
    // A similar search's embedder is checked before its filter; a facet search's filter before its facet.
    expect(
      (await s.api('POST', `/indexes/${uid}/similar`, { body: { id: 1, embedder: 'x', filter: 'year >' } })).body.code,
    ).toBe('invalid_similar_embedder');
    expect(
      (await s.api('POST', `/indexes/${uid}/facet-search`, { body: { facetName: '*', filter: 'year >' } })).body.code,
    ).toBe('invalid_search_filter');
    const get = await s.api('GET', `/indexes/${uid}/search?vector=0.1,0.2`);
    expect(get.body).toMatchObject({
      code: 'missing_search_hybrid',
      message: '`hybridEmbedder` is mandatory when `vector` is present',
    });
    const ratio = await s.api('GET', `/indexes/${uid}/search?hybridSemanticRatio=0.5`);
    expect(ratio.body).toMatchObject({
      code: 'invalid_search_hybrid_query',
      message: '`hybridEmbedder` is mandatory when `hybridSemanticRatio` is present',
    });
  });
});

describe('search answers', () => {
  it('when page and hitsPerPage are null, then they are absent', async () => {
    const r = await search({ page: null, hitsPerPage: null });
    expect(r.status).toBe(200);
    expect(r.body.estimatedTotalHits).toBe(2);
  });

  it('when a GET sort holds a _geoPoint, then its comma does not split it', async () => {
    const r = await s.api('GET', `/indexes/${uid}/search?sort=${encodeURIComponent('_geoPoint(50, 10):asc,year:asc')}`);
    expect(r.status).toBe(200);
    expect(r.body.hits.map((h: { id: number }) => h.id)).toEqual([1, 2]);
    const docs = await s.api(
      'GET',
      `/indexes/${uid}/documents?sort=${encodeURIComponent('year:asc,_geoPoint(50, 10):asc')}`,
    );
    expect(docs.status).toBe(200);
    expect(docs.body.results.map((h: { id: number }) => h.id)).toEqual([2, 1]);
  });

  it('when the engine refuses an attribute, then the message names the index; a syntax error does not', async () => {
    const distinct = await search({ distinct: 'nope' });
    expect(distinct.body.message).toMatch(
      new RegExp(
        `^Index \`${uid}\`: Attribute \`nope\` is not filterable and thus, cannot be used as distinct attribute`,
      ),
    );
    const sort = await search({ sort: ['nope:asc'] });
    expect(sort.body.message).toMatch(new RegExp(`^Index \`${uid}\`: Attribute \`nope\` is not sortable`));
    const syntax = await search({ sort: ['year'] });
    expect(syntax.body.message).toMatch(/^Invalid syntax for the sort parameter/);
  });

  it('when a multi-search query names a missing index, then it is a 400, federated or not', async () => {
    for (const body of [
      { queries: [{ indexUid: uid }, { indexUid: 'missing_index_y' }] },
      { federation: {}, queries: [{ indexUid: 'missing_index_y' }] },
    ]) {
      const r = await s.api('POST', '/multi-search', { body });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('index_not_found');
      expect(r.body.message).toMatch(/^Inside `\.queries\[\d\]`: Index `missing_index_y` not found\.$/);
    }
  });
});

describe('search bodies', () => {
  it('when the body is empty, then it is missing_payload with a JSON content type and missing_content_type without one', async () => {
    const empty = await s.api('POST', `/indexes/${uid}/search`, { raw: '', contentType: 'application/json' });
    expect([empty.status, empty.body.code]).toEqual([400, 'missing_payload']);
    const none = await s.api('POST', `/indexes/${uid}/search`, { contentType: null });
    expect([none.status, none.body.code]).toEqual([415, 'missing_content_type']);
    const facet = await s.api('POST', `/indexes/${uid}/facet-search`, { raw: '', contentType: 'application/json' });
    expect(facet.body.code).toBe('missing_payload');
  });

  it('when the Content-Type header is empty, then it is an invalid content type', async () => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { raw: '{}', contentType: '' });
    expect(r.status).toBe(415);
    expect(r.body).toMatchObject({
      code: 'invalid_content_type',
      message: 'The Content-Type `` is invalid. Accepted values for the Content-Type header are: `application/json`',
    });
  });
});

describe('more request shapes', () => {
  it('when the search body is JSON null, then it is refused as not an object', async () => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { raw: 'null', contentType: 'application/json' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      code: 'bad_request',
      message: 'Invalid value type: expected an object, but found null',
    });
  });

  it('when a key is created with an expiry in the past and no actions, then the expiry is answered, its message ending with a line break', async () => {
    const r = await s.api('POST', '/keys', { body: { expiresAt: '2000-01-01T00:00:00Z', name: null } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_api_key_expires_at');
    expect(r.body.message.endsWith("e.g. 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'.\n")).toBe(true);
    expect((await s.api('POST', '/keys', { body: { indexes: ['*'], expiresAt: null } })).body.code).toBe(
      'missing_api_key_actions',
    );
  });

  it('when a key is created with a bad expiry and another bad field, then the first of them in the body is answered', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ indexes: ['*'], expiresAt: 'soon', actions: 'search' }, 'invalid_api_key_expires_at'],
      [{ actions: 'search', expiresAt: 'soon', indexes: ['*'] }, 'invalid_api_key_actions'],
      [{ expiresAt: '2000-01-01', actions: ['search'], indexes: 5 }, 'invalid_api_key_expires_at'],
      [{ indexes: 5, expiresAt: '2000-01-01', actions: ['search'] }, 'invalid_api_key_indexes'],
    ];
    for (const [body, code] of cases) {
      const r = await s.api('POST', '/keys', { body });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe(code);
    }
  });

  it('when fetch, delete-batch or delete is asked with another method than POST, then it is a 405, not a document', async () => {
    for (const method of ['GET', 'DELETE']) {
      for (const route of ['fetch', 'delete-batch', 'delete']) {
        const r = await fetch(`${s.url}/indexes/${uid}/documents/${route}`, {
          method,
          headers: { Authorization: `Bearer ${MASTER_KEY}` },
        });
        expect([method, route, r.status, r.headers.get('allow')]).toEqual([method, route, 405, 'POST']);
      }
    }
  });

  it('when a cancelation has an unknown filter, then the list names uids first', async () => {
    const r = await s.api('POST', '/tasks/cancel?bogus=1');
    expect(r.body.message).toMatch(/^Unknown parameter `bogus`: expected one of `uids`, `batchUids`, `canceledBy`/);
  });

  it('when a delete-batch lists null and an object, then they are provided ids that name no document', async () => {
    const r = await s.api('POST', `/indexes/${uid}/documents/delete-batch`, { body: [null, { a: 1 }, 99] });
    expect(r.status).toBe(202);
    const task = await s.waitTask(r.body.taskUid);
    expect(task.status).toBe('succeeded');
    expect(task.details).toEqual({ providedIds: 3, deletedDocuments: 0, originalFilter: null });
    const map = await s.api('POST', `/indexes/${uid}/documents/delete-batch`, { body: { a: 1 } });
    expect(map.body).toMatchObject({
      code: 'bad_request',
      message: 'Json deserialize error: invalid type: map, expected a sequence at line 1 column 0',
    });
  });
});

describe('nested attributes that are not searchable', () => {
  const nested = uniqueIndex('conf_nested');
  beforeAll(async () => {
    const docs = [
      { id: 1, title: 'golden fire', director: { name: 'Bong', country: { code: 'JP' } }, misc: { a: 1 } },
      { id: 2, title: 'golden sea', other: { x: 'y' }, cast: [{ name: 'Varda', role: 'lead' }] },
    ];
    await s.waitTask((await s.api('POST', `/indexes/${nested}/documents`, { body: docs })).body.taskUid);
    const settings = await s.api('PATCH', `/indexes/${nested}/settings`, { body: { searchableAttributes: ['title'] } });
    await s.waitTask(settings.body.taskUid);
  });
  const formatted = async (crop: string[]) => {
    const r = await s.api('POST', `/indexes/${nested}/search`, {
      body: { q: 'golden', attributesToCrop: crop, attributesToRetrieve: ['id'] },
    });
    expect(r.status).toBe(200);
    return r.body.hits.map((h: any) => h._formatted);
  };

  it('when one is asked to crop, then hits are formatted as the index knows the path, and not when no document has it', async () => {
    expect(await formatted(['director.country.code'])).toEqual([
      { id: '1', director: { country: { code: 'JP' } } },
      { id: '2' },
    ]);
    expect(await formatted(['director.country'])).toEqual([
      { id: '1', director: { country: { code: 'JP' } } },
      { id: '2' },
    ]);
    expect(await formatted(['misc.a'])).toEqual([{ id: '1', misc: { a: '1' } }, { id: '2' }]);
    expect(await formatted(['cast.name'])).toEqual([{ id: '1' }, { id: '2', cast: [{ name: 'Varda' }] }]);
    expect(await formatted(['director.nothing'])).toEqual([undefined, undefined]);
    expect(await formatted(['nothere'])).toEqual([undefined, undefined]);
  });

  it('when the fields are listed, then every nested path is there', async () => {
    const r = await s.api('POST', `/indexes/${nested}/fields`, { body: { limit: 100 } });
    expect(r.status).toBe(200);
    expect(r.body.results.map((f: any) => f.name)).toEqual([
      'cast',
      'cast.name',
      'cast.role',
      'director',
      'director.country',
      'director.country.code',
      'director.name',
      'id',
      'misc',
      'misc.a',
      'other',
      'other.x',
      'title',
    ]);
    expect(r.body.results.find((f: any) => f.name === 'director.country.code').searchable).toEqual({ enabled: false });
  });
});
