/**
 * Relations between indexes (the `foreignKeys` experimental feature): the hits of a search, a
 * multi-search and a federated search show the documents their foreign keys name, with the
 * foreign index's displayed attributes; documents fetches show the ids. Every expected value
 * was read from Meilisearch 1.50 on the same documents and settings.
 */
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
let movies: string;
let people: string;

async function done(r: { status: number; body: any }): Promise<any> {
  expect(r.status).toBe(202);
  const task = await s.waitTask(r.body.taskUid);
  expect(task.status).toBe('succeeded');
  return task;
}

const search = (uid: string, body: unknown = {}) => s.api('POST', `/indexes/${uid}/search`, { body });
const features = (foreignKeys: boolean) =>
  s.api('PATCH', '/experimental-features', { body: { foreignKeys } }).then((r) => expect(r.status).toBe(200));

const SIGOURNEY = { id: 1, name: 'Sigourney', age: 70 };
const JOHN = { id: 2, name: 'John', age: 50 };
const RIDLEY = { id: 3, name: 'Ridley', age: 85 };
const ALDEN = { id: 4, name: 'Alden', age: 30 };

beforeAll(async () => {
  s = await startTestServer();
  movies = uniqueIndex('movies');
  people = uniqueIndex('people');
  await features(true);
  await done(
    await s.api('POST', `/indexes/${movies}/documents`, {
      body: [
        { id: 1, title: 'Alien', actors: [1, 2], director: 3 },
        { id: 2, title: 'Heat', actors: [2, 99], director: 99 },
        { id: 3, title: 'Solo', actors: 4, director: 'x y' },
      ],
    }),
  );
  await done(
    await s.api('POST', `/indexes/${people}/documents`, {
      body: [
        { ...SIGOURNEY, secret: 's1' },
        { ...JOHN, secret: 's2' },
        { ...RIDLEY, secret: 's3' },
        { ...ALDEN, secret: 's4' },
      ],
    }),
  );
  await done(
    await s.api('PUT', `/indexes/${movies}/settings/foreign-keys`, {
      body: [
        { foreignIndexUid: people, fieldName: 'actors' },
        { foreignIndexUid: people, fieldName: 'director' },
      ],
    }),
  );
  await done(
    await s.api('PATCH', `/indexes/${people}/settings`, { body: { displayedAttributes: ['id', 'name', 'age'] } }),
  );
});
afterAll(async () => {
  await s.close();
});

const HYDRATED = [
  { id: 1, title: 'Alien', actors: [SIGOURNEY, JOHN], director: RIDLEY },
  // An id that names no document becomes `{}`.
  { id: 2, title: 'Heat', actors: [JOHN, {}], director: {} },
  // A single id becomes one document; a value that is no document id stays.
  { id: 3, title: 'Solo', actors: ALDEN, director: 'x y' },
];

describe('hydration', () => {
  it('a search shows the referenced documents, with the foreign index displayed attributes', async () => {
    const r = await search(movies);
    expect(r.status).toBe(200);
    expect(r.body.hits).toEqual(HYDRATED);
    expect(r.text).not.toContain('secret');
  });

  it('`_formatted` is hydrated too, the foreign documents as they are; matches positions untouched', async () => {
    const r = await search(movies, { q: 'alien', attributesToHighlight: ['*'], showMatchesPosition: true });
    expect(r.body.hits).toEqual([
      {
        ...HYDRATED[0],
        _formatted: { id: '1', title: '<em>Alien</em>', actors: [SIGOURNEY, JOHN], director: RIDLEY },
        _matchesPosition: { title: [{ start: 0, length: 5 }] },
      },
    ]);
  });

  it('attributesToRetrieve picks the fields first, then they are hydrated', async () => {
    const r = await search(movies, { attributesToRetrieve: ['title', 'actors'], limit: 1 });
    expect(r.body.hits).toEqual([{ title: 'Alien', actors: [SIGOURNEY, JOHN] }]);
  });

  it('a multi-search query and a federated search hydrate their hits', async () => {
    const multi = await s.api('POST', '/multi-search', { body: { queries: [{ indexUid: movies, limit: 1 }] } });
    expect(multi.status).toBe(200);
    expect(multi.body.results[0].hits).toEqual([HYDRATED[0]]);
    const fed = await s.api('POST', '/multi-search', {
      body: {
        federation: {},
        queries: [
          { indexUid: movies, q: 'heat' },
          { indexUid: people, q: 'john' },
        ],
      },
    });
    expect(fed.status).toBe(200);
    expect(fed.text).toContain('"weightedRankingScore":1.0');
    expect(fed.body.hits).toEqual([
      { ...HYDRATED[1], _federation: { indexUid: movies, queriesPosition: 0, weightedRankingScore: 1 } },
      { ...JOHN, _federation: { indexUid: people, queriesPosition: 1, weightedRankingScore: 1 } },
    ]);
  });

  it('documents routes show the ids as stored', async () => {
    const stored = { id: 1, title: 'Alien', actors: [1, 2], director: 3 };
    expect((await s.api('GET', `/indexes/${movies}/documents?limit=1`)).body.results).toEqual([stored]);
    expect((await s.api('GET', `/indexes/${movies}/documents/1`)).body).toEqual(stored);
    const fetched = await s.api('POST', `/indexes/${movies}/documents/fetch`, { body: { ids: ['1'] } });
    expect(fetched.body.results).toEqual([stored]);
  });
});

describe('hydration, edge cases', () => {
  let m: string;
  let p: string;
  beforeAll(async () => {
    m = uniqueIndex('m');
    p = uniqueIndex('p');
    await done(
      await s.api('POST', `/indexes/${m}/documents`, {
        raw:
          '[{"id":1,"title":"Alien","actors":[1,2],"director":3,"meta":{"writer":2,"n":1.0}},' +
          '{"id":2,"title":"Heat","actors":[[1],2.5,"a b",-1,"2"],"director":null}]',
        contentType: 'application/json',
      }),
    );
    await done(
      await s.api('POST', `/indexes/${p}/documents`, {
        raw: '[{"id":1,"name":"Sigourney","n":1.0},{"id":2,"name":"John"},{"id":3,"name":"Ridley"}]',
        contentType: 'application/json',
      }),
    );
    await done(await s.api('PATCH', `/indexes/${p}/settings`, { body: { displayedAttributes: ['name', 'n'] } }));
  });

  it('nested fields, nested arrays, ids as strings; a hidden primary key is left out; numbers keep their text', async () => {
    await done(
      await s.api('PATCH', `/indexes/${m}/settings`, {
        body: {
          foreignKeys: [
            { foreignIndexUid: p, fieldName: 'actors' },
            { foreignIndexUid: p, fieldName: 'meta.writer' },
          ],
        },
      }),
    );
    const r = await search(m);
    expect(r.status).toBe(200);
    expect(r.text).toContain(
      '"hits":[{"id":1,"title":"Alien","actors":[{"name":"Sigourney","n":1.0},{"name":"John"}],"director":3,"meta":{"writer":{"name":"John"},"n":1.0}},' +
        '{"id":2,"title":"Heat","actors":[[{"name":"Sigourney","n":1.0}],2.5,"a b",-1,{"name":"John"}],"director":null}]',
    );
  });

  it('a foreign index that does not exist fails a search with hits (404), not one without', async () => {
    await done(
      await s.api('PATCH', `/indexes/${m}/settings`, {
        body: { foreignKeys: [{ foreignIndexUid: 'nowhere', fieldName: 'director' }] },
      }),
    );
    const r = await search(m);
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ code: 'index_not_found', message: 'Index `nowhere` not found.' });
    const none = await search(m, { q: 'zzzz' });
    expect(none.status).toBe(200);
    expect(none.body.hits).toEqual([]);
    const fed = await s.api('POST', '/multi-search', { body: { federation: {}, queries: [{ indexUid: m }] } });
    expect(fed.status).toBe(404);
    expect(fed.body).toMatchObject({ code: 'index_not_found', message: 'Index `nowhere` not found.' });
    const fedNone = await s.api('POST', '/multi-search', {
      body: { federation: {}, queries: [{ indexUid: m, q: 'zzzz' }] },
    });
    expect(fedNone.status).toBe(200);
  });

  it('with the feature off, the ids show and the setting is hidden', async () => {
    await done(
      await s.api('PATCH', `/indexes/${m}/settings`, {
        body: { foreignKeys: [{ foreignIndexUid: p, fieldName: 'actors' }] },
      }),
    );
    expect((await search(m, { limit: 1 })).body.hits[0].actors).toEqual([
      { name: 'Sigourney', n: 1 },
      { name: 'John' },
    ]);
    await features(false);
    try {
      expect((await search(m, { limit: 1 })).body.hits[0].actors).toEqual([1, 2]);
      const multi = await s.api('POST', '/multi-search', { body: { queries: [{ indexUid: m, limit: 1 }] } });
      expect(multi.body.results[0].hits[0].actors).toEqual([1, 2]);
      expect((await s.api('GET', `/indexes/${m}/settings`)).body).not.toHaveProperty('foreignKeys');
    } finally {
      await features(true);
    }
  });
});

describe('the foreign index by its uid', () => {
  it('a swap of the foreign index shows the documents now under its uid; its deletion fails searches', async () => {
    const m = uniqueIndex('sm');
    const p = uniqueIndex('sp');
    const p2 = uniqueIndex('sp2');
    await done(await s.api('POST', `/indexes/${m}/documents`, { body: [{ id: 1, actors: [1, 2] }] }));
    await done(await s.api('POST', `/indexes/${p}/documents`, { body: [{ id: 1, name: 'one' }] }));
    await done(await s.api('POST', `/indexes/${p2}/documents`, { body: [{ id: 2, name: 'P2-two' }] }));
    await done(
      await s.api('PUT', `/indexes/${m}/settings/foreign-keys`, {
        body: [{ foreignIndexUid: p, fieldName: 'actors' }],
      }),
    );
    expect((await search(m)).body.hits).toEqual([{ id: 1, actors: [{ id: 1, name: 'one' }, {}] }]);
    await done(await s.api('POST', '/swap-indexes', { body: [{ indexes: [p, p2] }] }));
    expect((await search(m)).body.hits).toEqual([{ id: 1, actors: [{}, { id: 2, name: 'P2-two' }] }]);
    expect((await s.api('GET', `/indexes/${m}/settings/foreign-keys`)).body).toEqual([
      { foreignIndexUid: p, fieldName: 'actors' },
    ]);
    await done(await s.api('DELETE', `/indexes/${p}`));
    const r = await search(m);
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ code: 'index_not_found', message: `Index \`${p}\` not found.` });
  });
});

describe('`_foreign` filters', () => {
  let fm: string;
  let fp: string;
  const ids = (r: { body: any }) => r.body.hits.map((h: any) => h.id);
  const filtered = (filter: unknown, uid = fm) => search(uid, { filter, attributesToRetrieve: ['id'] });
  beforeAll(async () => {
    fm = uniqueIndex('fm');
    fp = uniqueIndex('fp');
    await done(
      await s.api('POST', `/indexes/${fm}/documents`, {
        body: [
          { id: 1, title: 'Alien', actors: [1, 2], director: 3 },
          { id: 2, title: 'Heat', actors: [2, 99], director: 99 },
          { id: 3, title: 'Solo', actors: 4, director: 'x y' },
        ],
      }),
    );
    await done(
      await s.api('POST', `/indexes/${fp}/documents`, {
        body: [
          { ...SIGOURNEY, secret: 's1' },
          { ...JOHN, secret: 's2' },
          { ...RIDLEY, secret: 's3' },
          { ...ALDEN, secret: 's4' },
        ],
      }),
    );
    await done(
      await s.api('PATCH', `/indexes/${fm}/settings`, {
        body: {
          foreignKeys: [
            { foreignIndexUid: fp, fieldName: 'actors' },
            { foreignIndexUid: fp, fieldName: 'director' },
          ],
        },
      }),
    );
    await done(
      await s.api('PATCH', `/indexes/${fp}/settings`, {
        body: { displayedAttributes: ['id', 'name', 'age'], filterableAttributes: ['age', 'name'] },
      }),
    );
  });

  it('without the field filterable, the error quotes the condition as the ids it became', async () => {
    const r = await filtered('_foreign(actors, age > 60)');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      code: 'invalid_search_filter',
      message: `Index \`${fm}\`: Attribute \`actors\` is not filterable. This index does not have configured filterable attributes.\n2:8 "actors" IN ["1", "3"]`,
    });
    const not = await filtered('NOT _foreign(actors, age > 60)');
    expect(not.body.message).toContain('\n7:13 NOT ("actors" IN ["1", "3"])');
  });

  describe('with the fields filterable', () => {
    beforeAll(async () => {
      await done(
        await s.api('PATCH', `/indexes/${fm}/settings`, {
          body: { filterableAttributes: ['actors', 'director', 'title'] },
        }),
      );
    });

    it('selects the documents by attributes of the documents they reference', async () => {
      expect(ids(await filtered('_foreign(actors, age > 60)'))).toEqual([1]);
      expect(ids(await filtered('_foreign(director, age > 60)'))).toEqual([1]);
      expect(ids(await filtered('NOT _foreign(actors, age > 60)'))).toEqual([2, 3]);
      expect(
        ids(await filtered(['_foreign(actors, age > 40)', ['title = Solo', '_foreign(director, name = Ridley)']])),
      ).toEqual([1]);
      expect(ids(await filtered('_foreign(actors, age > 100)'))).toEqual([]);
      expect(ids(await filtered('_foreign(actors, age > 100) OR title = Heat'))).toEqual([2]);
    });

    it('documents fetches, facet search, multi-search and federated search take them', async () => {
      const fetched = await s.api('POST', `/indexes/${fm}/documents/fetch`, {
        body: { filter: '_foreign(actors, age > 60)', fields: ['id'] },
      });
      expect(fetched.body).toEqual({ results: [{ id: 1 }], offset: 0, limit: 20, total: 1 });
      const listed = await s.api(
        'GET',
        `/indexes/${fm}/documents?filter=${encodeURIComponent('_foreign(actors, age > 60)')}&fields=id`,
      );
      expect(listed.body.results).toEqual([{ id: 1 }]);
      const facets = await s.api('POST', `/indexes/${fm}/facet-search`, {
        body: { facetName: 'title', filter: '_foreign(actors, age > 60)' },
      });
      expect(facets.body.facetHits).toEqual([{ value: 'Alien', count: 1 }]);
      const multi = await s.api('POST', '/multi-search', {
        body: { queries: [{ indexUid: fm, filter: '_foreign(actors, name = John)', attributesToRetrieve: ['id'] }] },
      });
      expect(ids({ body: multi.body.results[0] })).toEqual([1, 2]);
      const fed = await s.api('POST', '/multi-search', {
        body: {
          federation: {},
          queries: [{ indexUid: fm, filter: '_foreign(director, age > 60)', attributesToRetrieve: ['id'] }],
        },
      });
      expect(fed.body.hits).toEqual([
        { id: 1, _federation: { indexUid: fm, queriesPosition: 0, weightedRankingScore: 1 } },
      ]);
    });

    it('errors: the foreign attribute, a field that is no foreign key, nesting, syntax, other attributes', async () => {
      const secret = await filtered('_foreign(actors, secret = s1)');
      expect(secret.status).toBe(400);
      expect(secret.body).toMatchObject({
        code: 'invalid_document_filter',
        message: `Index \`${fp}\`: Attribute \`secret\` is not filterable. Available filterable attribute patterns are: \`age\`, \`name\`.\n18:24 _foreign(actors, secret = s1)`,
      });
      expect((await filtered('_foreign(title, age > 60)')).body).toMatchObject({
        code: 'invalid_search_filter',
        message: `Index \`${fm}\`: Field \`title\` is not a foreign key`,
      });
      expect((await filtered('_foreign(actors, age > 60)', fp)).body).toMatchObject({
        code: 'invalid_search_filter',
        message: `Index \`${fp}\`: Field \`actors\` is not a foreign key`,
      });
      expect((await filtered('_foreign(actors, _foreign(x, age > 1))')).body).toMatchObject({
        code: 'invalid_search_filter',
        message: `Index \`${fm}\`: Nested foreign filters are not supported`,
      });
      expect((await filtered('_foreign(actors age > 1)')).body).toMatchObject({
        code: 'invalid_search_filter',
        message:
          'Was expecting a field name and an condition inside `_foreign(..)` filter but instead found `age > 1)`.\n17:25 _foreign(actors age > 1)',
      });
      expect((await filtered('_foreign(actors, age >= 0) AND idx = 1')).body).toMatchObject({
        code: 'invalid_search_filter',
        message: `Index \`${fm}\`: Attribute \`idx\` is not filterable. Available filterable attribute patterns are: \`actors\`, \`director\`, \`title\`.\n42:45 ("actors" IN ["1", "2", "3", "4"]) AND ("idx" = "1")`,
      });
      const multi = await s.api('POST', '/multi-search', {
        body: { queries: [{ indexUid: fm, filter: '_foreign(actors, secret = s1)' }] },
      });
      expect(multi.body.message).toMatch(
        /^Inside `\.queries\[0\]`: Index `[^`]+`: Attribute `secret` is not filterable/,
      );
    });

    it('more than 100 foreign documents in all is an error, invalid_search_filter on every route', async () => {
      const many = uniqueIndex('many');
      const m = uniqueIndex('mm');
      await done(
        await s.api('POST', `/indexes/${many}/documents`, {
          body: Array.from({ length: 101 }, (_, i) => ({ id: i + 1, age: i + 1 })),
        }),
      );
      await done(await s.api('PATCH', `/indexes/${many}/settings`, { body: { filterableAttributes: ['age'] } }));
      await done(await s.api('POST', `/indexes/${m}/documents`, { body: [{ id: 1, a: [1, 2] }] }));
      await done(
        await s.api('PATCH', `/indexes/${m}/settings`, {
          body: {
            filterableAttributes: ['a'],
            foreignKeys: [
              { foreignIndexUid: many, fieldName: 'a' },
              { foreignIndexUid: many, fieldName: 'b' },
            ],
          },
        }),
      );
      const tooMany = {
        code: 'invalid_search_filter',
        message: `Index \`${many}\`: Foreign filter is retrieving too many documents, foreign filters can't retrieve more than 100 documents per index`,
      };
      for (const filter of ['_foreign(a, age >= 1)', '_foreign(a, age <= 60) OR _foreign(b, age > 60)']) {
        const r = await search(m, { filter });
        expect(r.status).toBe(400);
        expect(r.body).toMatchObject(tooMany);
      }
      const fetched = await s.api('POST', `/indexes/${m}/documents/fetch`, {
        body: { filter: '_foreign(a, age >= 1)' },
      });
      expect(fetched.body).toMatchObject(tooMany);
      expect((await search(m, { filter: '_foreign(a, age <= 100)' })).body.hits).toEqual([
        {
          id: 1,
          a: [
            { id: 1, age: 1 },
            { id: 2, age: 2 },
          ],
        },
      ]);
    });

    it('deletion by filter refuses them; with the feature off, every route says the feature is needed', async () => {
      const del = await s.api('POST', `/indexes/${fm}/documents/delete`, {
        body: { filter: '_foreign(actors, age > 60)' },
      });
      expect(del.status).toBe(400);
      expect(del.body).toMatchObject({
        code: 'invalid_document_filter',
        message: 'Filter condition `_foreign` is not supported for this endpoint.\n10:16 _foreign(actors, age > 60)',
      });
      await features(false);
      try {
        const gate =
          'using a foreign filter requires enabling the `foreign_keys` experimental feature. See https://github.com/orgs/meilisearch/discussions/873\n10:16 _foreign(actors, age > 60)';
        for (const r of [
          await filtered('_foreign(actors, age > 60)'),
          await s.api('POST', `/indexes/${fm}/documents/delete`, { body: { filter: '_foreign(actors, age > 60)' } }),
          await s.api('POST', `/indexes/${fm}/documents/fetch`, { body: { filter: '_foreign(actors, age > 60)' } }),
        ]) {
          expect(r.status).toBe(400);
          expect(r.body).toMatchObject({ code: 'feature_not_enabled', message: gate });
        }
        const multi = await s.api('POST', '/multi-search', {
          body: { queries: [{ indexUid: fm, filter: '_foreign(actors, age > 60)' }] },
        });
        expect(multi.body).toMatchObject({ code: 'feature_not_enabled', message: `Inside \`.queries[0]\`: ${gate}` });
      } finally {
        await features(true);
      }
    });
  });
});
