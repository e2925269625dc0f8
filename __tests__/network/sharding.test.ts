/**
 * Three Quarry servers on loopback form a network with one shard each; 20,000 package rows
 * go in through the leader, which sends every write to the others, each keeping the rows of
 * its shard. A fourth server holds every row. 200 seeded queries must answer with the same
 * top-10 ids (and the same totals where they are exhaustive) from the leader as from the
 * single server. Then one server stops: the others still answer, naming it in `remoteErrors`.
 *
 * Rows: the first 20,000 PyPI packages of `shared/data` when it sits beside the clone (or in
 * `$QUARRY_BENCH_DATA`), else 20,000 seeded rows drawn from the same kind of vocabulary.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { CHILD_KEY, call, startChild } from '../helpers/child';
import { tempDir } from '../helpers/server';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { mulberry32, queryMix } = require('../../bench/lib.js');

jest.setTimeout(240_000);

interface Row {
  id: number;
  name: string;
  version: string;
  summary: string;
  bucket: string;
}

function rows(n: number): Row[] {
  const dir = process.env.QUARRY_BENCH_DATA ?? path.join(__dirname, '../../../shared/data');
  const file = path.join(dir, 'pypi-packages.tsv.gz');
  if (fs.existsSync(file)) {
    const lines = zlib
      .gunzipSync(fs.readFileSync(file))
      .toString('utf8')
      .split('\n')
      .slice(1, n + 1);
    return lines.map((l, id) => {
      const [name, version, , , summary] = l.split('\t');
      return { id, name, version, summary: summary ?? '', bucket: `b${id % 7}` };
    });
  }
  // Words of two or three syllables, drawn with a skew: a few are common, most are rare.
  const rand = mulberry32(20_000);
  const syllables = 'ka lo mi ne su ta ri po de fu ga hi jo ku le ma no pi ra se to vu wa xe yo zi'.split(' ');
  const word = () => {
    const n = Math.floor(syllables.length ** 3 * rand() ** 3);
    const parts = [syllables[n % 26], syllables[Math.floor(n / 26) % 26]];
    if (n >= 26 * 26) parts.push(syllables[Math.floor(n / 676) % 26]);
    return parts.join('');
  };
  return Array.from({ length: n }, (_, id) => ({
    id,
    name: `${word()}-${word()}`,
    version: `${1 + (id % 5)}.${id % 13}.0`,
    summary: Array.from({ length: 3 + Math.floor(rand() * 8) }, word).join(' '),
    bucket: `b${id % 7}`,
  }));
}

interface Server {
  child: ChildProcess;
  url: string;
}

const servers: Record<string, Server> = {};
const api = (name: string, method: string, p: string, body?: unknown) => call(servers[name].url, method, p, body);

async function waitTask(name: string, uid: number): Promise<any> {
  for (let i = 0; i < 2000; i++) {
    const r = await api(name, 'GET', `/tasks/${uid}`);
    if (r.body.status !== 'enqueued' && r.body.status !== 'processing') return r.body;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error(`task ${uid} on ${name} did not finish`);
}

/** Waits for a leader's task and for the tasks it forwarded. */
async function waitNetworkTask(uid: number): Promise<any> {
  const task = await waitTask('a', uid);
  for (const [name, t] of Object.entries(task.network?.remote_tasks ?? {})) {
    const remote = await waitTask(name, (t as { taskUid: number }).taskUid);
    expect(remote.status).toBe('succeeded');
  }
  return task;
}

const docs = rows(20_000);
const SETTINGS = {
  searchableAttributes: ['name', 'summary'],
  sortableAttributes: ['id'],
  filterableAttributes: ['bucket'],
  rankingRules: ['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness', 'id:asc'],
};

beforeAll(async () => {
  for (const name of ['a', 'b', 'c', 'one']) {
    servers[name] = await startChild(tempDir(`quarry-net-${name}-`), ['--experimental-remote-timeout-ms', '3000']);
    expect((await api(name, 'PATCH', '/experimental-features', { network: true })).status).toBe(200);
  }
});

afterAll(() => {
  for (const s of Object.values(servers)) s.child.kill('SIGKILL');
});

describe('a network of three shards', () => {
  it('is set up through the leader, which sends it to the others', async () => {
    const remotes = Object.fromEntries(
      ['a', 'b', 'c'].map((n) => [n, { url: servers[n].url, searchApiKey: CHILD_KEY, writeApiKey: CHILD_KEY }]),
    );
    const shards = { s1: { remotes: ['a'] }, s2: { remotes: ['b'] }, s3: { remotes: ['c'] } };
    const r = await api('a', 'PATCH', '/network', { self: 'a', leader: 'a', remotes, shards });
    expect(r.status).toBe(202);
    expect(r.body.type).toBe('networkTopologyChange');
    const task = await waitNetworkTask(r.body.taskUid);
    expect(task).toMatchObject({ status: 'succeeded', details: { movedDocuments: 0 } });
    expect(Object.keys(task.network.remote_tasks).sort()).toEqual(['b', 'c']);
    const onB = await api('b', 'GET', '/network');
    expect(onB.body).toMatchObject({ self: 'b', leader: 'a', shards });
    expect(onB.body.version).toBe(task.network.network_version);
    const remoteTask = await api('b', 'GET', `/tasks/${task.network.remote_tasks.b.taskUid}`);
    expect(remoteTask.body.network.origin).toMatchObject({
      remoteName: 'a',
      networkVersion: task.network.network_version,
    });
  });

  it('refuses writes anywhere but on the leader', async () => {
    const r = await api('b', 'POST', '/indexes/pkgs/documents', [{ id: 1 }]);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('not_leader');
    expect(r.body.message).toContain('only the leader `a` can receive new tasks');
  });

  it('splits the documents across the shards by their id; settings reach every instance', async () => {
    const settings = await api('a', 'PATCH', '/indexes/pkgs/settings', SETTINGS);
    expect(settings.status).toBe(202);
    expect((await waitNetworkTask(settings.body.taskUid)).status).toBe('succeeded');
    const add = await api('a', 'POST', '/indexes/pkgs/documents', docs);
    expect(add.status).toBe(202);
    const task = await waitNetworkTask(add.body.taskUid);
    expect(task.status).toBe('succeeded');
    expect(task.details.receivedDocuments).toBe(20_000);
    const counts = await Promise.all(
      ['a', 'b', 'c'].map(async (n) => (await api(n, 'GET', '/indexes/pkgs/stats')).body.numberOfDocuments as number),
    );
    expect(counts.reduce((x, y) => x + y, 0)).toBe(20_000);
    for (const c of counts) expect(c).toBeGreaterThan(5_000);
    expect(task.details.indexedDocuments).toBe(counts[0]);
    // Every instance has the settings.
    for (const n of ['b', 'c'])
      expect((await api(n, 'GET', '/indexes/pkgs/settings/ranking-rules')).body).toEqual(SETTINGS.rankingRules);

    const one = await api('one', 'PATCH', '/indexes/pkgs/settings', SETTINGS);
    await waitTask('one', one.body.taskUid);
    const all = await api('one', 'POST', '/indexes/pkgs/documents', docs);
    expect((await waitTask('one', all.body.taskUid)).status).toBe('succeeded');
  });

  it('answers 200 seeded queries like one server holding every row', async () => {
    const mix = queryMix(docs, mulberry32(7), 25) as Record<string, Array<{ body: Record<string, unknown> }>>;
    let queries = 0;
    let exhaustive = 0;
    const idsDiffer: unknown[] = [];
    const totalsDiffer: unknown[] = [];
    for (const [shape, list] of Object.entries(mix)) {
      for (const { body } of list) {
        queries++;
        const ask = (name: string) =>
          api(name, 'POST', '/indexes/pkgs/search', { ...body, attributesToRetrieve: ['id'] });
        const [net, single] = await Promise.all([ask('a'), ask('one')]);
        expect(net.status).toBe(200);
        expect(net.body.remoteErrors).toEqual({});
        const top = (r: any) => JSON.stringify(r.body.hits.slice(0, 10).map((h: any) => h.id));
        if (top(net) !== top(single)) idsDiffer.push({ shape, q: body.q, net: top(net), single: top(single) });
        if (single.body.estimatedTotalHits < 1000) {
          exhaustive++;
          if (net.body.estimatedTotalHits !== single.body.estimatedTotalHits)
            totalsDiffer.push({
              shape,
              q: body.q,
              net: net.body.estimatedTotalHits,
              single: single.body.estimatedTotalHits,
            });
        }
      }
    }
    expect(queries).toBe(200);
    expect(exhaustive).toBeGreaterThan(100);
    // Each shard derives the words (completions, typos, splits) one index holding every row
    // would: the leader pins them (see crates/engine/src/search/query/pins.rs).
    expect({ idsDiffer, totalsDiffer }).toEqual({ idsDiffer: [], totalsDiffer: [] });
  });

  it('marks where each hit comes from, and useNetwork: false stays local', async () => {
    const r = await api('a', 'POST', '/indexes/pkgs/search', { q: '', limit: 30 });
    const from = new Set(r.body.hits.map((h: any) => h._federation.remote));
    expect([...from].sort()).toEqual(['a', 'b', 'c']);
    // Bounded by maxTotalHits, as one index's total is.
    expect(r.body.estimatedTotalHits).toBe(
      (await api('one', 'POST', '/indexes/pkgs/search', { q: '' })).body.estimatedTotalHits,
    );
    const local = await api('a', 'POST', '/indexes/pkgs/search', { q: '', useNetwork: false });
    expect(local.body.hits[0]._federation).toBeUndefined();
    expect(local.body.estimatedTotalHits).toBeLessThan(20_000);
  });

  it('documents are read from every shard, one page across them', async () => {
    const page = await api('b', 'GET', '/indexes/pkgs/documents?limit=5&fields=id');
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ offset: 0, limit: 5, total: 20_000, remoteErrors: {} });
    expect(page.body.results).toHaveLength(5);
    const sorted = await api('c', 'POST', '/indexes/pkgs/documents/fetch', {
      sort: ['id:desc'],
      limit: 3,
      offset: 1,
      fields: ['name'],
    });
    expect(sorted.body.results).toEqual([19_998, 19_997, 19_996].map((id) => ({ name: docs[id].name })));
    expect(sorted.body.total).toBe(20_000);
    const filtered = await api('a', 'POST', '/indexes/pkgs/documents/fetch', {
      ids: [7, 8, 9, 10],
      fields: ['id'],
      sort: ['id:asc'],
    });
    expect(filtered.body).toMatchObject({ total: 4, results: [{ id: 7 }, { id: 8 }, { id: 9 }, { id: 10 }] });
    for (const id of [0, 1, 2, 3, 4, 5]) {
      const one = await api('c', 'GET', `/indexes/pkgs/documents/${id}?fields=id,name`);
      expect(one.body).toEqual({ id, name: docs[id].name });
    }
    const local = await api('b', 'GET', '/indexes/pkgs/documents?limit=1&useNetwork=false');
    expect(local.body.total).toBeLessThan(20_000);
    expect(local.body.remoteErrors).toBeUndefined();
  });

  it('facet search adds up the values of every shard', async () => {
    for (const q of ['python', 'data', '']) {
      const body = { facetName: 'bucket', q, facetQuery: 'b' };
      const [net, single] = await Promise.all([
        api('b', 'POST', '/indexes/pkgs/facet-search', body),
        api('one', 'POST', '/indexes/pkgs/facet-search', body),
      ]);
      expect(net.status).toBe(200);
      expect(net.body.remoteErrors).toEqual({});
      expect(net.body.facetHits).toEqual(single.body.facetHits);
    }
    const local = await api('b', 'POST', '/indexes/pkgs/facet-search', { facetName: 'bucket', useNetwork: false });
    expect(local.body.facetHits.reduce((n: number, h: any) => n + h.count, 0)).toBeLessThan(20_000);
  });

  it('deletions go through the leader to every shard', async () => {
    const del = await api('a', 'POST', '/indexes/pkgs/documents/delete-batch', [0, 1, 2, 3, 4, 5]);
    expect((await waitNetworkTask(del.body.taskUid)).status).toBe('succeeded');
    const alone = await api('one', 'POST', '/indexes/pkgs/documents/delete-batch', [0, 1, 2, 3, 4, 5]);
    await waitTask('one', alone.body.taskUid);
    for (const n of ['a', 'b', 'c']) {
      for (const id of [0, 1, 2, 3, 4, 5])
        expect((await api(n, 'GET', `/indexes/pkgs/documents/${id}`)).status).toBe(404);
    }
    const counts = await Promise.all(
      ['a', 'b', 'c'].map(async (n) => (await api(n, 'GET', '/indexes/pkgs/stats')).body.numberOfDocuments as number),
    );
    expect(counts.reduce((x, y) => x + y, 0)).toBe(19_994);
  });

  it('a new shard takes its documents from the others, and the network still answers like one index', async () => {
    servers.d = await startChild(tempDir('quarry-net-d-'), ['--experimental-remote-timeout-ms', '3000']);
    expect((await api('d', 'PATCH', '/experimental-features', { network: true })).status).toBe(200);
    const r = await api('a', 'PATCH', '/network', {
      remotes: { d: { url: servers.d.url, searchApiKey: CHILD_KEY, writeApiKey: CHILD_KEY } },
      shards: { s4: { remotes: ['d'] } },
    });
    expect(r.status).toBe(202);
    const task = await waitNetworkTask(r.body.taskUid);
    expect(task.status).toBe('succeeded');
    expect(task.details.movedDocuments).toBeGreaterThan(1000);
    // The moved documents are tasks on d: wait until every instance is idle.
    for (let idle = 0; idle < 2; ) {
      const busy = await Promise.all(
        ['a', 'b', 'c', 'd'].map(
          async (n) => (await api(n, 'GET', '/tasks?statuses=enqueued,processing&limit=1')).body.total as number,
        ),
      );
      idle = busy.every((t) => t === 0) ? idle + 1 : 0;
      await new Promise((res) => setTimeout(res, 50));
    }
    const counts = await Promise.all(
      ['a', 'b', 'c', 'd'].map(
        async (n) => (await api(n, 'GET', '/indexes/pkgs/stats')).body.numberOfDocuments as number,
      ),
    );
    expect(counts.reduce((x, y) => x + y, 0)).toBe(19_994);
    expect(counts[3]).toBeGreaterThan(3000);
    expect((await api('d', 'GET', '/indexes/pkgs/settings/ranking-rules')).body).toEqual(SETTINGS.rankingRules);
    const queries = (
      Object.values(queryMix(docs, mulberry32(11), 5)) as Array<Array<{ body: Record<string, unknown> }>>
    ).flat();
    for (const { body } of queries) {
      const ask = (name: string) =>
        api(name, 'POST', '/indexes/pkgs/search', { ...body, attributesToRetrieve: ['id'] });
      const [net, single] = await Promise.all([ask('a'), ask('one')]);
      expect(net.body.remoteErrors).toEqual({});
      const seen = { q: body.q, ids: net.body.hits.map((h: any) => h.id), total: net.body.estimatedTotalHits };
      expect(seen).toEqual({
        q: body.q,
        ids: single.body.hits.map((h: any) => h.id),
        total: single.body.estimatedTotalHits,
      });
    }
  });

  it('with one instance down, the others answer and name it in remoteErrors; writes are refused', async () => {
    servers.c.child.kill('SIGKILL');
    await new Promise((res) => servers.c.child.once('exit', res));
    const r = await api('a', 'POST', '/indexes/pkgs/search', { q: '', limit: 5 });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.remoteErrors)).toEqual(['c']);
    expect(r.body.remoteErrors.c).toMatchObject({ code: 'proxy_could_not_send_request', type: 'system' });
    expect(r.body.hits.length).toBe(5);
    expect(new Set(r.body.hits.map((h: any) => h._federation.remote)).has('c')).toBe(false);
    const fed = await api('a', 'POST', '/multi-search', {
      federation: {},
      queries: [
        { indexUid: 'pkgs', q: 'python', federationOptions: { remote: 'c' } },
        { indexUid: 'pkgs', q: 'python', federationOptions: { remote: 'b' } },
      ],
    });
    expect(fed.status).toBe(200);
    expect(Object.keys(fed.body.remoteErrors)).toEqual(['c']);
    expect(fed.body.hits.every((h: any) => h._federation.remote === 'b' && h._federation.queriesPosition === 1)).toBe(
      true,
    );
    const write = await api('a', 'POST', '/indexes/pkgs/documents', [{ id: 999_999, name: 'x' }]);
    expect(write.status).toBe(502);
    expect(write.body).toMatchObject({ code: 'remote_could_not_send_request', type: 'system' });
    expect(write.body.message).toContain('`c`');
  });
});
