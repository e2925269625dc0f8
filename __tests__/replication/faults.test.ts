/**
 * A replicated group when its log fails (issue 67): with JetStream's quorum gone, writes are
 * refused with `replication_unavailable` within the write timeout, reads keep answering and
 * `/health` says `degraded` and why; writes come back by themselves with the quorum. And an
 * instance that starts empty, or comes back after the log dropped what it had not read,
 * starts from the group's latest snapshot and ends with the same state as the others.
 */
import { NatsCluster, natsServerBinary, SKIP_REASON as NATS_SKIP_REASON } from '../../scripts/nats-cluster';
import { eventually, QuarryNode } from '../helpers/replica';

const nats = natsServerBinary();
const suite = nats ? describe : describe.skip;
if (!nats) console.warn(`SKIPPED replication/faults.test.ts: ${NATS_SKIP_REASON}`);

jest.setTimeout(240_000);

async function documents(n: QuarryNode, index: string): Promise<unknown[]> {
  const r = await n.api('POST', `/indexes/${index}/documents/fetch`, { limit: 100000 });
  expect(r.status).toBe(200);
  return [...r.body.results].sort((a: any, b: any) => a.id - b.id);
}

async function tasks(n: QuarryNode): Promise<unknown[]> {
  const r = await n.api('GET', '/tasks?limit=10000');
  return r.body.results.map((t: any) => ({
    uid: t.uid,
    batchUid: t.batchUid,
    status: t.status,
    type: t.type,
    details: t.details,
    enqueuedAt: t.enqueuedAt,
  }));
}

suite('when the log loses its quorum', () => {
  let cluster: NatsCluster;
  let a: QuarryNode;
  let b: QuarryNode;

  beforeAll(async () => {
    cluster = await NatsCluster.start(3);
    [a, b] = await Promise.all(
      ['a', 'b'].map((name) => QuarryNode.create(name, cluster.urls(), ['--replication-timeout-ms', '2000'])),
    );
    await Promise.all([a.start(), b.start()]);
  });

  afterAll(async () => {
    await Promise.all([a?.kill(), b?.kill()]);
    await cluster?.stop();
  });

  test('then writes answer 503 replication_unavailable in bounded time, reads answer, /health is degraded; writes resume when it is back', async () => {
    const first = await a.api('POST', '/indexes/books/documents', [{ id: 1, title: 'Dune' }]);
    expect(first.status).toBe(202);
    // Both have applied it before the quorum goes: an instance reads the log through its
    // leader, so one that had not yet read the entry waits for the quorum like a write does.
    for (const n of [a, b]) await n.waitTask(first.body.taskUid);

    await cluster.kill(1);
    await cluster.kill(2);
    const t0 = Date.now();
    const refused = await a.api('POST', '/indexes/books/documents', [{ id: 2, title: 'Emma' }]);
    const took = Date.now() - t0;
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({
      code: 'replication_unavailable',
      type: 'system',
      link: 'https://docs.meilisearch.com/errors#replication_unavailable',
    });
    expect(took).toBeLessThan(8000);
    const key = await b.api('POST', '/keys', { actions: ['search'], indexes: ['*'], expiresAt: null });
    expect(key.status).toBe(503);
    expect(key.body.code).toBe('replication_unavailable');

    const health = await eventually(
      async () => {
        const h = await b.api('GET', '/health');
        return h.body.status === 'degraded' ? h.body : undefined;
      },
      10_000,
      'b degraded',
    );
    expect(typeof health.reason).toBe('string');
    expect(health.reason.length).toBeGreaterThan(0);
    const search = await b.api('POST', '/indexes/books/search', { q: 'dune' });
    expect(search.status).toBe(200);
    expect(search.body.hits).toEqual([{ id: 1, title: 'Dune' }]);
    expect((await a.api('GET', `/tasks/${first.body.taskUid}`)).body.status).toBe('succeeded');

    cluster.restart(1);
    cluster.restart(2);
    const back = await eventually(
      async () => {
        const r = await a.api('POST', '/indexes/books/documents', [{ id: 3, title: 'Ulysses' }]);
        return r.status === 202 ? r : undefined;
      },
      60_000,
      'a write accepted again',
    );
    for (const n of [a, b]) await n.waitTask(back.body.taskUid);
    expect((await b.api('POST', '/indexes/books/search', { q: 'ulysses' })).body.hits).toEqual([
      { id: 3, title: 'Ulysses' },
    ]);
    await eventually(
      async () => ((await a.api('GET', '/health')).body.status === 'available' ? true : undefined),
      20_000,
      'a available',
    );
    // The refused write was applied nowhere, or everywhere (an acknowledgement lost on the way).
    const [da, db] = await Promise.all([documents(a, 'books'), documents(b, 'books')]);
    expect(db).toEqual(da);
  });
});

suite('when the log dropped what an instance has not read', () => {
  let cluster: NatsCluster;
  const nodes: QuarryNode[] = [];

  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.kill()));
    await cluster?.stop();
  });

  test('then a new instance, one that was down and one that was paused start from the latest snapshot and end like the others', async () => {
    cluster = await NatsCluster.start(3);
    // A lagging instance holds the log back for a second only: the log soon drops past them.
    const grace = ['--replication-lagging-grace', '1'];
    const a = await QuarryNode.create('a', cluster.urls(), ['--replication-snapshot-interval', '1', ...grace]);
    const late = await QuarryNode.create('late', cluster.urls(), grace);
    const paused = await QuarryNode.create('paused', cluster.urls(), grace);
    nodes.push(a, late, paused);
    await Promise.all([a.start(), late.start(), paused.start()]);
    const w0 = await a.api('POST', '/indexes/books/documents', [{ id: 0, title: 'first' }]);
    await late.waitTask(w0.body.taskUid);
    await paused.waitTask(w0.body.taskUid);
    await late.kill();
    paused.pause();
    // Its reader's last pull expires (5 s): entries appended from now on wait on the server.
    await new Promise((res) => setTimeout(res, 6000));

    // Writes a second apart: the snapshots they let through make the log drop its head.
    let last = 0;
    await eventually(
      async () => {
        const r = await a.api('POST', '/indexes/books/documents', [{ id: ++last, title: `book ${last}` }]);
        expect(r.status).toBe(202);
        await a.waitTask(r.body.taskUid);
        await new Promise((res) => setTimeout(res, 1100));
        const state = await cluster.stream('quarry');
        return state.first_seq > w0.body.taskUid + 2 && last >= 3 ? state : undefined;
      },
      90_000,
      'the log purged past the late instances',
    );
    const settings = await a.api('PATCH', '/indexes/books/settings', { filterableAttributes: ['title'] });
    await a.waitTask(settings.body.taskUid);
    expect((await cluster.objects('quarry-snapshots')).length).toBeGreaterThanOrEqual(1);

    // A new instance: no data, and the log alone cannot rebuild it any more.
    const fresh = await QuarryNode.create('fresh', cluster.urls(), grace);
    nodes.push(fresh);
    await fresh.start();
    await late.start();
    // The paused one finds the log gone past it and starts again, in the same process.
    paused.resume();
    for (const n of [fresh, late, paused]) await n.waitTask(settings.body.taskUid);
    const expected = await documents(a, 'books');
    expect(expected).toHaveLength(last + 1);
    for (const n of [fresh, late, paused]) {
      expect(await documents(n, 'books')).toEqual(expected);
      expect(await tasks(n)).toEqual(await tasks(a));
      expect((await n.api('GET', '/indexes/books/settings')).body.filterableAttributes).toEqual(['title']);
      expect(
        (await n.api('POST', '/indexes/books/search', { q: 'book', filter: `title = "book ${last}"` })).body.hits,
      ).toEqual([{ id: last, title: `book ${last}` }]);
    }
    expect(paused.log.join('')).toMatch(/restarting from the replicated group's latest snapshot/);
    // And they go on with the group.
    const after = await fresh.api('POST', '/indexes/books/documents', [{ id: 1000, title: 'after' }]);
    expect(after.status).toBe(202);
    for (const n of [a, late, paused]) await n.waitTask(after.body.taskUid);
    expect(await documents(late, 'books')).toEqual(await documents(a, 'books'));
    expect(await documents(paused, 'books')).toEqual(await documents(a, 'books'));
  });
});

suite('with a single NATS server', () => {
  let single: NatsCluster;
  const nodes: QuarryNode[] = [];

  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.kill()));
    await single?.stop();
  });

  test('then three copies of the log are refused at start with the way out, and one copy serves', async () => {
    single = await NatsCluster.start(1);
    const refused = await QuarryNode.create('solo', single.urls());
    nodes.push(refused);
    await expect(refused.start()).rejects.toThrow(/with a single NATS server, start with --replication-replicas 1/);
    const solo = await QuarryNode.create('solo', single.urls(), ['--replication-replicas', '1']);
    nodes.push(solo);
    await solo.start();
    const r = await solo.api('POST', '/indexes/books/documents', [{ id: 1, title: 'Dune' }]);
    expect(r.status).toBe(202);
    expect((await solo.waitTask(r.body.taskUid)).status).toBe('succeeded');
    expect((await solo.api('POST', '/indexes/books/search', { q: 'dune' })).body.hits).toEqual([
      { id: 1, title: 'Dune' },
    ]);
  });
});
