/**
 * Dynamic search rules over HTTP: the routes with Meilisearch 1.50's shapes, codes and
 * messages, and the pins they put in search results. The expected orders are what the
 * reference server answered to the same documents, rules and queries.
 */
import { startTestServer, type TestServer } from '../helpers/server';

let s: TestServer;

async function idle(): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if ((await s.api('GET', '/tasks?statuses=enqueued,processing&limit=1')).body.total === 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('tasks did not finish');
}

const ids = async (body: Record<string, unknown>, index = 'movies') => {
  const r = await s.api('POST', `/indexes/${index}/search`, { body });
  expect(r.status).toBe(200);
  return { ids: r.body.hits.map((h: any) => h.id), body: r.body };
};

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

describe('without the feature', () => {
  test("every route refuses with Meilisearch's messages", async () => {
    const list = await s.api('POST', '/dynamic-search-rules', { body: {} });
    expect([list.status, list.body.code]).toEqual([400, 'feature_not_enabled']);
    expect(list.body.message).toBe(
      'Calling the `POST /dynamic-search-rules` route requires enabling the `dynamic search rules` experimental feature. See https://github.com/orgs/meilisearch/discussions/884',
    );
    expect((await s.api('GET', '/dynamic-search-rules/x')).body.message).toMatch(
      /^Calling the `GET \/dynamic-search-rules\/\{:ruleUid\}` route requires/,
    );
    for (const [method, p] of [
      ['PATCH', '/dynamic-search-rules/x'],
      ['DELETE', '/dynamic-search-rules/x'],
      ['DELETE', '/dynamic-search-rules'],
    ] as const) {
      const r = await s.api(method, p, method === 'PATCH' ? { body: {} } : {});
      expect(r.body.message).toMatch(/^Using the `\/dynamic-search-rules` routes requires enabling/);
    }
  });
});

describe('with the feature', () => {
  beforeAll(async () => {
    await s.api('PATCH', '/experimental-features', { body: { dynamicSearchRules: true } });
    await s.api('POST', '/indexes/movies/documents', {
      body: [
        { id: 1, title: 'Carol', g: 'a' },
        { id: 2, title: 'invoice Wonder Woman', g: 'b' },
        { id: 3, title: 'invoice three', g: 'a' },
        { id: 4, title: 'invoices four', g: 'b' },
        { id: 5, title: 'five' },
      ],
    });
    await s.api('PATCH', '/indexes/movies/settings', { body: { filterableAttributes: ['g'] } });
    await s.api('POST', '/indexes/other/documents', { body: [{ id: 1, title: 'other invoice' }] });
    const rules: Array<[string, unknown]> = [
      [
        'r1',
        {
          description: 'Black Friday deals',
          conditions: { query: { words: 'Invoice' } },
          actions: [
            { selector: { indexUid: 'movies', id: '1' }, action: { type: 'pin', position: 1 } },
            { selector: { id: '5' }, action: { type: 'pin', position: 0 } },
          ],
        },
      ],
      [
        'r2',
        {
          precedence: 0,
          conditions: { query: { words: 'three' } },
          actions: [{ selector: { id: '4' }, action: { type: 'pin', position: 0 } }],
        },
      ],
      [
        'r3',
        {
          active: false,
          conditions: { query: { words: 'four' } },
          actions: [{ selector: { id: '1' }, action: { type: 'pin', position: 0 } }],
        },
      ],
      [
        'r4',
        {
          conditions: { query: { isEmpty: true } },
          actions: [{ selector: { id: '4' }, action: { type: 'pin', position: 2 } }],
        },
      ],
      [
        'r5',
        {
          conditions: { query: { words: 'wonder woman' } },
          actions: [
            { selector: { id: '999' }, action: { type: 'pin', position: 0 } },
            { selector: { id: '3' }, action: { type: 'pin', position: 10 } },
          ],
        },
      ],
      [
        'future',
        {
          conditions: { time: { start: '2999-01-01T00:00:00Z' } },
          actions: [{ selector: { id: '2' }, action: { type: 'pin', position: 0 } }],
        },
      ],
    ];
    for (const [uid, rule] of rules) {
      const r = await s.api('PATCH', `/dynamic-search-rules/${uid}`, { body: rule });
      expect([r.status, r.body.type, r.body.indexUid]).toEqual([202, 'dsrUpdate', '.meili_dsr']);
    }
    await idle();
  });

  test('a rule is read back as stored, and patches merge', async () => {
    const r1 = (await s.api('GET', '/dynamic-search-rules/r1')).body;
    expect(Object.keys(r1)).toEqual(['uid', 'description', 'lastUpdatedAt', 'active', 'conditions', 'actions']);
    expect(r1).toMatchObject({
      uid: 'r1',
      description: 'Black Friday deals',
      active: true,
      conditions: { query: { words: 'Invoice' } },
    });
    const task = await s.api('PATCH', '/dynamic-search-rules/r1', { body: { description: null } });
    const done = await s.waitTask(task.body.taskUid);
    expect(done).toMatchObject({
      status: 'succeeded',
      type: 'dsrUpdate',
      details: { rule: { description: null }, updatedRules: 1 },
    });
    const after = (await s.api('GET', '/dynamic-search-rules/r1')).body;
    expect(after.description).toBeUndefined();
    expect(after.actions).toEqual(r1.actions);
    expect(after.lastUpdatedAt).toBe(done.enqueuedAt);
    await s.waitTask(
      (await s.api('PATCH', '/dynamic-search-rules/r1', { body: { description: 'Black Friday deals' } })).body.taskUid,
    );
    expect((await s.api('GET', '/dynamic-search-rules/nope')).body).toMatchObject({
      code: 'dynamic_search_rule_not_found',
      message: 'Dynamic search rule `nope` not found.',
    });
  });

  test('the list filters by words and by activity, newest first', async () => {
    const list = async (body: unknown) => (await s.api('POST', '/dynamic-search-rules', { body })).body;
    const all = await list({});
    expect(all.total).toBe(6);
    expect(all.results[0].uid).toBe('r1'); // patched last
    expect((await list({ filter: { query: 'friday BLACK' } })).results.map((r: any) => r.uid)).toEqual(['r1']);
    expect((await list({ filter: { query: 'voi' } })).results).toEqual([]);
    expect((await list({ filter: { active: false } })).results.map((r: any) => r.uid)).toEqual(['r3']);
    expect(await list({ limit: 2, offset: 1 })).toMatchObject({ offset: 1, limit: 2, total: 6 });
  });

  test('matching rules pin documents where they ask, as Meilisearch places them', async () => {
    expect((await ids({ q: 'invoice' })).ids).toEqual([5, 1, 2, 3, 4]);
    expect((await ids({ q: 'invoic' })).ids).toEqual([2, 3, 4]);
    const only = await ids({ q: 'my invoice here', showRankingScore: true });
    expect(only.ids).toEqual([5, 1]);
    expect(only.body.hits.map((h: any) => h._rankingScore)).toEqual([1, 1]);
    expect(only.body.estimatedTotalHits).toBe(2);
    expect((await ids({ q: 'invoice', filter: 'g = b' })).ids).toEqual([2, 4]);
    const page = await ids({ q: 'invoice', offset: 1, limit: 2 });
    expect([page.ids, page.body.estimatedTotalHits]).toEqual([[1, 2], 5]);
    const pages = await ids({ q: 'invoice', hitsPerPage: 2, page: 1 });
    expect([pages.ids, pages.body.totalHits, pages.body.totalPages]).toEqual([[5, 1], 5, 3]);
    expect((await ids({ q: 'invoice three' })).ids).toEqual([4, 5, 1, 3, 2]);
    expect((await ids({ q: 'four' })).ids).toEqual([4]);
    expect((await ids({ q: '' })).ids).toEqual([1, 2, 4, 3, 5]);
    expect((await ids({ q: 'wonder woman' })).ids).toEqual([2, 3]);
    expect((await ids({ q: 'woman wonder' })).ids).toEqual([2, 3]);
    const faceted = await ids({ q: 'invoice', facets: ['g'] });
    expect(faceted.body.facetDistribution).toEqual({ g: { a: 2, b: 2 } });
    // r1 pins document 1 in movies only; document 5 does not exist in `other`.
    expect((await ids({ q: 'invoice' }, 'other')).ids).toEqual([1]);
  });

  test('pins reach multi-search and federated search', async () => {
    const multi = await s.api('POST', '/multi-search', { body: { queries: [{ indexUid: 'movies', q: 'invoice' }] } });
    expect(multi.body.results[0].hits.map((h: any) => h.id)).toEqual([5, 1, 2, 3, 4]);
    const fed = await s.api('POST', '/multi-search', {
      body: { federation: {}, queries: [{ indexUid: 'movies', q: 'my invoice here' }] },
    });
    expect(fed.body.hits.map((h: any) => [h.id, h._federation.weightedRankingScore])).toEqual([
      [5, 1],
      [1, 1],
    ]);
  });

  test('a filter condition pins when the search filter asks for its values, as Meilisearch reads it', async () => {
    await s.api('POST', '/indexes/pins/documents', {
      body: [
        { id: 1, g: 'a', x: 1, t: 'hello' },
        { id: 2, g: 'b', x: 1, t: 'hello' },
        { id: 3, g: 'b', x: 2, t: 'world' },
        { id: 4, g: 'a', x: 2, t: 'hello' },
      ],
    });
    await s.api('PATCH', '/indexes/pins/settings', { body: { filterableAttributes: ['g', 'x'] } });
    const rule = {
      conditions: { filter: { values: { g: 'a' } } },
      actions: [{ selector: { indexUid: 'pins', id: '4' }, action: { type: 'pin', position: 0 } }],
    };
    expect((await s.api('PATCH', '/dynamic-search-rules/by-filter', { body: rule })).status).toBe(202);
    await idle();
    expect((await s.api('GET', '/dynamic-search-rules/by-filter')).body.conditions).toEqual({
      filter: { values: { g: 'a' } },
    });
    const hello = async (filter?: unknown) => (await ids({ q: 'hello', ...(filter ? { filter } : {}) }, 'pins')).ids;
    // The orders the reference answered for the same documents, rule and searches.
    expect(await hello()).toEqual([1, 2, 4]);
    expect(await hello('x > 0')).toEqual([1, 2, 4]);
    expect(await hello('g = a AND x > 0')).toEqual([4, 1]);
    expect(await hello('g EXISTS')).toEqual([4, 1, 2]);
    expect(await hello('g != b OR x = 5')).toEqual([4, 1]);
    expect(await hello(['g = A'])).toEqual([4, 1]);
    const multi = await s.api('POST', '/multi-search', {
      body: { queries: [{ indexUid: 'pins', q: 'hello', filter: 'g EXISTS' }] },
    });
    expect(multi.body.results[0].hits.map((h: any) => h.id)).toEqual([4, 1, 2]);
    expect((await s.api('DELETE', '/dynamic-search-rules/by-filter')).status).toBe(202);
    await idle();
    expect(await hello('g EXISTS')).toEqual([1, 2, 4]);
  });

  test("validation answers Meilisearch's codes and messages", async () => {
    const patch = async (body: unknown) => (await s.api('PATCH', '/dynamic-search-rules/e', { body })).body;
    expect(await patch({ precedence: 'x' })).toMatchObject({
      code: 'invalid_dynamic_search_rule_priority',
      message: 'Invalid value type at `.precedence`: expected a positive integer, but found a string: `"x"`',
    });
    expect(await patch({ actions: [{ selector: { id: '1' }, action: { type: 'pin', position: -1 } }] })).toMatchObject({
      code: 'invalid_dynamic_search_rule_actions',
      message:
        'Invalid value type at `.actions[0].action.position`: expected a positive integer, but found a negative integer: `-1`',
    });
    expect(await patch({ actions: [{ selector: { id: '1' }, action: { type: 'boost', position: 0 } }] })).toMatchObject(
      { message: 'Invalid value at `.actions[0].action`: Incorrect tag value' },
    );
    expect(await patch({ nope: 1 })).toMatchObject({
      code: 'bad_request',
      message: 'Unknown field `nope`: expected one of `description`, `precedence`, `active`, `conditions`, `actions`',
    });
    expect(await patch({ conditions: { nope: 1 } })).toMatchObject({
      code: 'invalid_dynamic_search_rule_conditions',
      message: 'Unknown field `nope` inside `.conditions`: expected one of `time`, `query`, `filter`',
    });
    expect((await patch({ conditions: { time: { start: 'nope' } } })).message).toMatch(
      /^Invalid value at `.conditions.time.start`: `nope` is not a valid date/,
    );
    expect(await patch({ description: 5 })).toMatchObject({ code: 'invalid_dynamic_search_rule_description' });
    expect(await patch({ active: 'yes' })).toMatchObject({
      code: 'invalid_dynamic_search_rule_active',
      message: 'Invalid value type at `.active`: expected a boolean, but found a string: `"yes"`',
    });
    expect(await patch({ conditions: { filter: 'g = a' } })).toMatchObject({
      code: 'invalid_dynamic_search_rule_conditions',
      message: 'Invalid value type at `.conditions.filter`: expected an object, but found a string: `"g = a"`',
    });
    expect(await patch({ conditions: { filter: { attributes: ['g'] } } })).toMatchObject({
      code: 'invalid_dynamic_search_rule_conditions',
      message: 'Unknown field `attributes` inside `.conditions.filter`: expected one of `values`',
    });
    expect(await patch({ conditions: { filter: { values: ['g = a'] } } })).toMatchObject({
      code: 'invalid_dynamic_search_rule_conditions',
      message: 'Invalid value type at `.conditions.filter.values`: expected an object, but found an array: `["g = a"]`',
    });
    const list = async (body: unknown) => (await s.api('POST', '/dynamic-search-rules', { body })).body;
    expect(await list({ limit: -1 })).toMatchObject({ code: 'invalid_dynamic_search_rule_limit' });
    expect(await list({ offset: 'x' })).toMatchObject({ code: 'invalid_dynamic_search_rule_offset' });
    expect(await list({ filter: { query: 5 } })).toMatchObject({ code: 'invalid_dynamic_search_rule_filter_query' });
    expect(await list({ filter: { active: 'x' } })).toMatchObject({
      code: 'invalid_dynamic_search_rule_filter_active',
    });
    expect(await list({ nope: 1 })).toMatchObject({
      code: 'bad_request',
      message: 'Unknown field `nope`: expected one of `offset`, `limit`, `filter`',
    });
  });

  // r68: Meilisearch keeps a write's `customMetadata` on its task, here as on every write route.
  test('when a write carries customMetadata, then its task keeps it; other parameters are refused', async () => {
    const writes: Array<[string, string, unknown]> = [
      [
        'PATCH',
        '/dynamic-search-rules/meta?customMetadata=patched',
        { actions: [{ selector: { id: '1' }, action: { type: 'pin', position: 0 } }] },
      ],
      ['DELETE', '/dynamic-search-rules/meta?customMetadata=deleted', undefined],
      ['DELETE', '/dynamic-search-rules/meta?customMetadata=', undefined],
    ];
    for (const [method, p, body] of writes) {
      const r = await s.api(method, p, { body });
      const expected = new URL(p, 'http://x').searchParams.get('customMetadata');
      expect([r.status, r.body.customMetadata]).toEqual([202, expected]);
      const task = await s.waitTask(r.body.taskUid);
      expect([task.status, task.customMetadata]).toEqual(['succeeded', expected]);
    }
    for (const [method, p] of [
      ['PATCH', '/dynamic-search-rules/meta?foo=1'],
      ['DELETE', '/dynamic-search-rules/meta?foo=1'],
      ['DELETE', '/dynamic-search-rules?foo=1'],
    ] as const) {
      const r = await s.api(method, p, method === 'PATCH' ? { body: {} } : {});
      expect([r.status, r.body]).toEqual([
        400,
        {
          message: 'Unknown parameter `foo`: expected one of `customMetadata`',
          code: 'bad_request',
          type: 'invalid_request',
          link: 'https://docs.meilisearch.com/errors#bad_request',
        },
      ]);
    }
  });

  test('deleting a rule, even a missing one, and clearing them all are tasks', async () => {
    const one = await s.waitTask((await s.api('DELETE', '/dynamic-search-rules/r2')).body.taskUid);
    expect(one).toMatchObject({ type: 'dsrUpdate', status: 'succeeded', details: { updatedRules: 1 } });
    expect((await ids({ q: 'invoice three' })).ids).toEqual([5, 1, 3, 2, 4]);
    expect((await s.waitTask((await s.api('DELETE', '/dynamic-search-rules/missing')).body.taskUid)).status).toBe(
      'succeeded',
    );
    const cleared = await s.api('DELETE', '/dynamic-search-rules?customMetadata=cleared');
    expect(cleared.body.customMetadata).toBe('cleared');
    const clear = await s.waitTask(cleared.body.taskUid);
    expect(clear).toMatchObject({
      type: 'dsrClear',
      status: 'succeeded',
      details: { deletedDocuments: 5 },
      customMetadata: 'cleared',
    });
    expect((await s.api('POST', '/dynamic-search-rules', { body: {} })).body.results).toEqual([]);
    expect((await ids({ q: 'invoice' })).ids).toEqual([2, 3, 4]);
  });
});
