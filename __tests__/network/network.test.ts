/**
 * `GET/PATCH /network` and remote federation between two servers on loopback: the shapes,
 * validation and codes Meilisearch 1.50 gives (read from it on the same requests), hits of a
 * remote merged among local ones, tokens applied to remote queries, and each way a remote can
 * fail landing in `remoteErrors` while the rest is answered.
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MASTER_KEY, startTestServer, type TestServer } from '../helpers/server';

let a: TestServer;
let b: TestServer;
let silent: http.Server;
let silentUrl: string;

beforeAll(async () => {
  a = await startTestServer({ args: ['--experimental-remote-timeout-ms', '1000'] });
  b = await startTestServer();
  // A server that accepts connections and never answers.
  silent = http.createServer(() => undefined);
  await new Promise<void>((res) => silent.listen(0, '127.0.0.1', res));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  for (const [s, docs] of [
    [
      a,
      [
        { id: 1, t: 'red apple', g: 'x' },
        { id: 2, t: 'green apple pie', g: 'y' },
      ],
    ],
    [
      b,
      [
        { id: 1, t: 'apple', g: 'x' },
        { id: 3, t: 'red apple tart', g: 'z' },
        { id: 4, t: 'apple', g: 'y' },
      ],
    ],
  ] as const) {
    const set = await s.api('PATCH', '/indexes/fruit/settings', { body: { filterableAttributes: ['g'] } });
    expect((await s.waitTask(set.body.taskUid)).status).toBe('succeeded');
    const add = await s.api('POST', '/indexes/fruit/documents', { body: docs });
    expect((await s.waitTask(add.body.taskUid)).status).toBe('succeeded');
  }
});

afterAll(async () => {
  silent.closeAllConnections();
  silent.close();
  await a.close();
  await b.close();
});

const patch = (body: unknown) => a.api('PATCH', '/network', { body });

describe('/network', () => {
  it('needs the network feature', async () => {
    const r = await a.api('GET', '/network');
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('feature_not_enabled');
    expect(r.body.message).toBe(
      'Using the /network route requires enabling the `network` experimental feature. See https://github.com/orgs/meilisearch/discussions/805',
    );
    const fed = await a.api('POST', '/multi-search', {
      body: { federation: {}, queries: [{ indexUid: 'fruit', federationOptions: { remote: 'b' } }] },
    });
    expect(fed.body.code).toBe('feature_not_enabled');
    expect((await a.api('PATCH', '/experimental-features', { body: { network: true } })).status).toBe(200);
  });

  it('starts empty', async () => {
    const r = await a.api('GET', '/network');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      self: null,
      remotes: {},
      shards: {},
      leader: null,
      version: '00000000-0000-0000-0000-000000000000',
    });
  });

  it('without a leader, a patch applies at once and answers the network', async () => {
    const r = await patch({
      self: 'a',
      remotes: { a: { url: a.url, searchApiKey: MASTER_KEY }, b: { url: b.url, searchApiKey: MASTER_KEY } },
    });
    expect(r.status).toBe(200);
    expect(r.body.remotes.a).toEqual({ url: a.url, searchApiKey: MASTER_KEY, writeApiKey: null, status: 'available' });
    expect(r.body).toMatchObject({ self: 'a', shards: {}, leader: null });
    expect(r.body.version).not.toBe('00000000-0000-0000-0000-000000000000');
    expect((await a.api('GET', '/network')).body).toEqual(r.body);
    // A partial remote keeps what it does not name.
    const again = await patch({ remotes: { a: { writeApiKey: 'w' } } });
    expect(again.body.remotes.a).toMatchObject({ url: a.url, searchApiKey: MASTER_KEY, writeApiKey: 'w' });
  });

  it.each([
    [{ remotes: { c: { searchApiKey: 'x' } } }, 'missing_network_url', 'Missing field `.remotes.c.url`'],
    [
      { remotes: { c: { url: 'notaurl' } } },
      'invalid_network_url',
      'Invalid `.remotes.c.url` (`notaurl`): relative URL without a base',
    ],
    [{ remotes: { c: { url: 'http://x', searchApiKey: 3 } } }, 'invalid_network_search_api_key', null],
    [{ remotes: { c: { url: 'http://x', bogus: 1 } } }, 'bad_request', null],
    [{ self: 1 }, 'invalid_network_self', null],
    [{ shards: [] }, 'invalid_network_shards', null],
    [
      { bogus: 1 },
      'bad_request',
      'Unknown field `bogus`: expected one of `remotes`, `shards`, `previousShards`, `self`, `leader`, `previousRemotes`',
    ],
    [{ previousRemotes: {} }, 'unexpected_network_previous_remotes', null],
    [
      { leader: 'zz' },
      'not_leader',
      'This remote is not the leader of the network.\n  - Note: only the leader `zz` can receive new tasks.',
    ],
    [
      { leader: 'a', shards: { s: { remotes: ['zz'] } } },
      'invalid_network_shards',
      'unknown remote `zz` in `.s.remotes`',
    ],
  ])('refuses %j with %s', async (body, code, message) => {
    const before = (await a.api('GET', '/network')).body;
    const r = await patch(body);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe(code);
    if (message !== null) expect(r.body.message).toBe(message);
    expect((await a.api('GET', '/network')).body).toEqual(before);
  });
});

describe('remote federation', () => {
  const fed = (queries: unknown[], federation: unknown = {}, key?: string) =>
    a.api('POST', '/multi-search', { body: { federation, queries }, key });
  const ids = (r: { body: any }) => r.body.hits.map((h: any) => `${h._federation.remote ?? 'local'}:${h.id}`);

  it("merges a remote's hits among the local ones, by the same rules", async () => {
    const r = await fed([
      { indexUid: 'fruit', q: 'apple' },
      { indexUid: 'fruit', q: 'apple', federationOptions: { remote: 'b' } },
    ]);
    expect(r.status).toBe(200);
    expect(r.body.remoteErrors).toEqual({});
    // b's exact matches first, then ties by query position (the local query is first).
    expect(ids(r)).toEqual(['b:1', 'b:4', 'local:1', 'local:2', 'b:3']);
    expect(r.body.hits[0]._federation).toEqual({
      indexUid: 'fruit',
      queriesPosition: 1,
      weightedRankingScore: 1,
      remote: 'b',
    });
    expect(r.body.hits[2]._federation.remote).toBeUndefined();
    expect(r.body.estimatedTotalHits).toBe(5);
    // A weight flips the order.
    const w = await fed([
      { indexUid: 'fruit', q: 'apple' },
      { indexUid: 'fruit', q: 'apple', federationOptions: { remote: 'b', weight: 0.5 } },
    ]);
    expect(ids(w)).toEqual(['local:1', 'local:2', 'b:1', 'b:4', 'b:3']);
    expect(w.body.hits[2]._federation.weightedRankingScore).toBe(0.5);
  });

  it('pages the merged list and counts facets of the remote index', async () => {
    const r = await fed(
      [
        { indexUid: 'fruit', q: 'apple' },
        { indexUid: 'fruit', q: 'apple', federationOptions: { remote: 'b' } },
      ],
      { offset: 1, limit: 2, facetsByIndex: { fruit: ['g'] } },
    );
    expect(ids(r)).toEqual(['b:4', 'local:1']);
    expect(r.body.facetsByIndex.fruit.distribution.g).toEqual({ x: 2, y: 2, z: 1 });
    const merged = await fed([{ indexUid: 'fruit', q: 'apple', federationOptions: { remote: 'b' } }], {
      facetsByIndex: { fruit: ['g'] },
      mergeFacets: {},
    });
    expect(merged.body.facetDistribution).toEqual({ g: { x: 1, y: 1, z: 1 } });
  });

  it('a query naming this instance runs here, marked with its name', async () => {
    const r = await fed([{ indexUid: 'fruit', q: 'red', federationOptions: { remote: 'a' } }]);
    expect(ids(r)).toEqual(['a:1']);
    expect(r.body.remoteErrors).toEqual({});
  });

  it('an unknown remote is an error naming the query', async () => {
    const r = await fed([{ indexUid: 'fruit' }, { indexUid: 'fruit', federationOptions: { remote: 'zz' } }]);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_multi_search_remote');
    expect(r.body.message).toBe(
      'Inside `.queries[1]`: Invalid `.federation_options.remote`: remote `zz` is not registered',
    );
  });

  it("a tenant token's filter travels with the remote query", async () => {
    const k = await a.api('POST', '/keys', { body: { actions: ['search'], indexes: ['*'], expiresAt: null } });
    const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const head = enc({ alg: 'HS256', typ: 'JWT' });
    const body = enc({ apiKeyUid: k.body.uid, searchRules: { fruit: { filter: 'g = y' } } });
    const token = `${head}.${body}.${createHmac('sha256', k.body.key).update(`${head}.${body}`).digest('base64url')}`;
    const r = await fed([{ indexUid: 'fruit', q: 'apple', federationOptions: { remote: 'b' } }], {}, token);
    expect(r.status).toBe(200);
    expect(ids(r)).toEqual(['b:4']);
  });

  it('each failing remote lands in remoteErrors and the rest is answered', async () => {
    await patch({
      remotes: {
        dead: { url: 'http://127.0.0.1:1', searchApiKey: 'x' },
        badkey: { url: b.url, searchApiKey: 'not-a-key' },
        silent: { url: silentUrl, searchApiKey: 'x' },
        outside: { url: 'http://192.0.2.1:7700', searchApiKey: 'x' },
      },
    });
    const r = await fed([
      { indexUid: 'fruit', q: 'red' },
      { indexUid: 'fruit', q: 'red', federationOptions: { remote: 'dead' } },
      { indexUid: 'fruit', q: 'red', federationOptions: { remote: 'badkey' } },
      { indexUid: 'fruit', q: 'red', federationOptions: { remote: 'silent' } },
      { indexUid: 'fruit', q: 'red', federationOptions: { remote: 'outside' } },
      { indexUid: 'nope', q: 'red', federationOptions: { remote: 'b' } },
    ]);
    expect(r.status).toBe(200);
    expect(ids(r)).toEqual(['local:1']);
    const e = r.body.remoteErrors;
    expect(Object.keys(e).sort()).toEqual(['b', 'badkey', 'dead', 'outside', 'silent']);
    expect(e.dead).toMatchObject({
      code: 'proxy_could_not_send_request',
      type: 'system',
      link: 'https://docs.meilisearch.com/errors#proxy_could_not_send_request',
    });
    expect(e.badkey).toMatchObject({ code: 'remote_invalid_api_key', type: 'auth' });
    expect(e.silent).toMatchObject({ code: 'remote_timeout', type: 'system' });
    // Outside the allowed networks (loopback only here): refused before anything is sent.
    expect(e.outside.code).toBe('proxy_could_not_send_request');
    expect(e.outside.message).toContain('outside the networks');
    expect(e.b).toMatchObject({ code: 'remote_remote_error', type: 'system' });
    expect(e.b.message).toContain('Index `nope` not found.');
    await patch({ remotes: { dead: null, badkey: null, silent: null, outside: null } });
  });
});

describe('a network with a leader', () => {
  it('is set up by a task on the leader; searches then ask the network', async () => {
    const r = await patch({ self: 'a', leader: 'a', remotes: { b: null }, shards: { default: { remotes: ['a'] } } });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ indexUid: null, status: 'enqueued', type: 'networkTopologyChange' });
    const task = await a.waitTask(r.body.taskUid);
    expect(task).toMatchObject({
      status: 'succeeded',
      details: { movedDocuments: 0, message: 'Finished' },
      network: { remote_tasks: {} },
    });
    expect((await a.api('GET', '/network')).body).toMatchObject({
      self: 'a',
      leader: 'a',
      shards: { default: { remotes: ['a'] } },
    });

    const s = await a.api('POST', '/indexes/fruit/search', { body: { q: 'red' } });
    expect(s.body.hits).toEqual([
      {
        id: 1,
        t: 'red apple',
        g: 'x',
        _federation: { indexUid: 'fruit', queriesPosition: 0, weightedRankingScore: expect.any(Number), remote: 'a' },
      },
    ]);
    expect(s.body).toMatchObject({ query: 'red', limit: 20, offset: 0, estimatedTotalHits: 1, remoteErrors: {} });
    expect(Object.keys(s.body)).toEqual([
      'hits',
      'query',
      'processingTimeMs',
      'limit',
      'offset',
      'estimatedTotalHits',
      'requestUid',
      'remoteErrors',
    ]);
    const local = await a.api('POST', '/indexes/fruit/search', { body: { q: 'red', useNetwork: false } });
    expect(local.body.hits[0]._federation).toBeUndefined();
    const multi = await a.api('POST', '/multi-search', {
      body: { queries: [{ indexUid: 'fruit', q: 'red', facets: ['g'] }] },
    });
    expect(multi.body.results[0]).toMatchObject({
      indexUid: 'fruit',
      query: 'red',
      facetDistribution: { g: { x: 1 } },
      remoteErrors: {},
    });
    expect(multi.body.results[0].hits[0]._federation.remote).toBe('a');
  });

  it('writes carry the network; clearing the leader answers at once', async () => {
    const add = await a.api('POST', '/indexes/fruit/documents', { body: [{ id: 9, t: 'plum', g: 'x' }] });
    const task = await a.waitTask(add.body.taskUid);
    expect(task.status).toBe('succeeded');
    expect(task.network).toMatchObject({ remote_tasks: {}, network_version: expect.any(String) });
    const cleared = await patch({ self: null, leader: null, remotes: { a: null }, shards: { default: null } });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ self: null, leader: null, remotes: {}, shards: {} });
    const s = await a.api('POST', '/indexes/fruit/search', { body: { q: 'red' } });
    expect(s.body.hits[0]._federation).toBeUndefined();
  });
});

describe('what only instances send each other', () => {
  it('federation.quarryPins is refused from a client', async () => {
    const r = await a.api('POST', '/multi-search', {
      body: { federation: { quarryPins: [] }, queries: [{ indexUid: 'fruit' }] },
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('bad_request');
    expect(r.body.message).toContain('Unknown field `quarryPins` inside `.federation`');
  });
});
