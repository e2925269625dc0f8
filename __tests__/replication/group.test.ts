/**
 * A replicated group (issue 67): three NATS servers with JetStream and three Quarry instances
 * on loopback, over HTTP. Writes go through any instance and every instance applies them, the
 * same tasks with the same uids, outcomes and batches; keys, features, webhooks and chat workspaces made on one
 * instance hold on the others; a killed instance resumes where it stopped, applying nothing
 * twice and skipping nothing.
 */
import { NatsCluster, natsServerBinary, SKIP_REASON as NATS_SKIP_REASON } from '../../scripts/nats-cluster';
import { eventually, QuarryNode } from '../helpers/replica';

const nats = natsServerBinary();
const suite = nats ? describe : describe.skip;
if (!nats) console.warn(`SKIPPED replication/group.test.ts: ${NATS_SKIP_REASON}`);

jest.setTimeout(180_000);

/** The parts of a task every instance must agree on. */
function agreed(t: any): unknown {
  return {
    uid: t.uid,
    batchUid: t.batchUid,
    indexUid: t.indexUid,
    status: t.status,
    type: t.type,
    canceledBy: t.canceledBy,
    details: t.details,
    error: t.error,
    enqueuedAt: t.enqueuedAt,
    customMetadata: t.customMetadata,
  };
}

async function allTasks(n: QuarryNode): Promise<any[]> {
  const r = await n.api('GET', '/tasks?limit=10000');
  expect(r.status).toBe(200);
  return r.body.results;
}

async function allDocuments(n: QuarryNode, index: string): Promise<any[]> {
  const r = await n.api('POST', `/indexes/${index}/documents/fetch`, { limit: 100000 });
  expect(r.status).toBe(200);
  return [...r.body.results].sort((a: any, b: any) => String(a.id).localeCompare(String(b.id)));
}

suite('a replicated group of three instances', () => {
  let cluster: NatsCluster;
  let nodes: QuarryNode[];

  beforeAll(async () => {
    cluster = await NatsCluster.start(3);
    nodes = await Promise.all(
      ['a', 'b', 'c'].map((name) => QuarryNode.create(name, cluster.urls(), ['--replication-timeout-ms', '3000'])),
    );
    await Promise.all(nodes.map((n) => n.start()));
  });

  afterAll(async () => {
    await Promise.all((nodes ?? []).map((n) => n.kill()));
    await cluster?.stop();
  });

  test('when writes arrive through every instance, then every instance runs the same tasks, uids and batches, and answers the same searches', async () => {
    const [a, b, c] = nodes;
    const r1 = await a.api('POST', '/indexes/movies/documents?customMetadata=first', [
      { id: 1, title: 'Carol', year: 2015 },
      { id: 2, title: 'Wonder Woman', year: 2017 },
    ]);
    expect(r1.status).toBe(202);
    // Asked of another instance at once: it waits to have received what the log holds.
    expect((await c.api('GET', `/tasks/${r1.body.taskUid}`)).status).toBe(200);
    const r2 = await b.api('PATCH', '/indexes/movies/settings', {
      filterableAttributes: ['year'],
      sortableAttributes: ['year'],
    });
    expect(r2.status).toBe(202);
    const r3 = await c.api('PUT', '/indexes/movies/documents', [
      { id: 1, subtitle: 'a love story' },
      { id: 3, title: 'Caroline', year: 2009 },
    ]);
    expect(r3.status).toBe(202);
    // A bad document fails its task the same way everywhere.
    const r4 = await a.api('POST', '/indexes/movies/documents', [{ id: 'not valid!', title: 'x' }]);
    expect(r4.status).toBe(202);
    const uids = [r1, r2, r3, r4].map((r) => r.body.taskUid as number);
    expect(new Set(uids).size).toBe(4);
    expect(uids).toEqual([...uids].sort((x, y) => x - y));
    // The answering instance knows its task at once.
    expect((await c.api('GET', `/tasks/${r3.body.taskUid}`)).status).toBe(200);

    for (const n of nodes) for (const uid of uids) await n.waitTask(uid);
    const tasks = await Promise.all(nodes.map(allTasks));
    expect(tasks[1].map(agreed)).toEqual(tasks[0].map(agreed));
    expect(tasks[2].map(agreed)).toEqual(tasks[0].map(agreed));
    const byUid = new Map(tasks[0].map((t: any) => [t.uid, t]));
    expect(byUid.get(uids[0])).toMatchObject({
      status: 'succeeded',
      customMetadata: 'first',
      details: { receivedDocuments: 2, indexedDocuments: 2 },
    });
    expect(byUid.get(uids[3])).toMatchObject({ status: 'failed', error: { code: 'invalid_document_id' } });

    const docs = await Promise.all(nodes.map((n) => allDocuments(n, 'movies')));
    expect(docs[0]).toEqual([
      { id: 1, title: 'Carol', year: 2015, subtitle: 'a love story' },
      { id: 2, title: 'Wonder Woman', year: 2017 },
      { id: 3, title: 'Caroline', year: 2009 },
    ]);
    expect(docs[1]).toEqual(docs[0]);
    expect(docs[2]).toEqual(docs[0]);
    const query = { q: 'car', filter: 'year > 2000', sort: ['year:desc'] };
    const hits = await Promise.all(
      nodes.map(async (n) => (await n.api('POST', '/indexes/movies/search', query)).body.hits),
    );
    expect(hits[0].map((h: any) => h.id)).toEqual([1, 3]);
    expect(hits[1]).toEqual(hits[0]);
    expect(hits[2]).toEqual(hits[0]);
    const batches = await Promise.all(
      nodes.map(async (n) =>
        (await n.api('GET', '/batches?limit=1000')).body.results.map((x: any) => [
          x.uid,
          x.stats.totalNbTasks,
          x.stats.status,
        ]),
      ),
    );
    expect(batches[1]).toEqual(batches[0]);
    expect(batches[2]).toEqual(batches[0]);
    expect((await a.api('GET', '/health')).body).toEqual({ status: 'available' });
  });

  test('when a key, a feature, a webhook and a chat workspace are made on one instance, then the others honour them at once', async () => {
    const [a, b, c] = nodes;
    const key = await a.api('POST', '/keys', {
      actions: ['search'],
      indexes: ['movies'],
      expiresAt: null,
      name: 'front',
    });
    expect(key.status).toBe(201);
    // Used right away on another instance: it waits to have applied what the log holds.
    const s = await b.api('POST', '/indexes/movies/search', { q: 'wonder' }, key.body.key);
    expect(s.status).toBe(200);
    expect(s.body.hits.map((h: any) => h.id)).toEqual([2]);
    expect((await c.api('GET', '/indexes', undefined, key.body.key)).status).toBe(403);
    const keys = await Promise.all(nodes.map(async (n) => (await n.api('GET', '/keys')).body.results));
    expect(keys[1]).toEqual(keys[0]);
    expect(keys[2]).toEqual(keys[0]);
    // The group has one set of default keys, created once.
    expect(keys[0].filter((k: any) => k.name === 'Default Search API Key')).toHaveLength(1);

    const del = await c.api('DELETE', `/keys/${key.body.uid}`);
    expect(del.status).toBe(204);
    await eventually(
      async () =>
        (await a.api('POST', '/indexes/movies/search', { q: 'x' }, key.body.key)).status === 403 ? true : undefined,
      10_000,
      'the deleted key refused on a',
    );

    const f = await b.api('PATCH', '/experimental-features', { containsFilter: true });
    expect(f.status).toBe(200);
    expect(f.body.containsFilter).toBe(true);
    await eventually(
      async () => ((await c.api('GET', '/experimental-features')).body.containsFilter === true ? true : undefined),
      10_000,
      'the feature on c',
    );
    const hook = await c.api('POST', '/webhooks', { url: 'http://127.0.0.1:9/hook' });
    expect(hook.status).toBe(201);
    await eventually(
      async () => ((await a.api('GET', `/webhooks/${hook.body.uuid}`)).status === 200 ? true : undefined),
      10_000,
      'the webhook on a',
    );
    // Chat workspaces are records too (issue 69).
    expect((await a.api('PATCH', '/experimental-features', { chatCompletions: true })).status).toBe(200);
    await eventually(
      async () => ((await b.api('GET', '/experimental-features')).body.chatCompletions === true ? true : undefined),
      10_000,
      'the chat feature on b',
    );
    const ws = await a.api('PATCH', '/chats/group-chat/settings', { source: 'mistral', apiKey: 'sk-group-0123456789' });
    expect(ws.status).toBe(200);
    await eventually(
      async () => ((await b.api('GET', '/chats/group-chat/settings')).body.apiKey === 'skXXXX...' ? true : undefined),
      10_000,
      'the chat workspace on b',
    );
    expect((await c.api('DELETE', '/chats/group-chat')).status).toBe(204);
    await eventually(
      async () => ((await a.api('GET', '/chats/group-chat')).status === 404 ? true : undefined),
      10_000,
      'the chat workspace gone on a',
    );
    // An export would be sent by every instance: refused, not silently repeated.
    const exported = await b.api('POST', '/export', { url: 'http://127.0.0.1:9' });
    expect(exported.status).toBe(501);
    expect(exported.body.code).toBe('unimplemented_in_replicated_group');
  });

  test('when an instance is killed while writes go on, then on restart it resumes where it stopped: every task once, the same documents', async () => {
    const [a, b, c] = nodes;
    const acked: number[] = [];
    let stop = false;
    const writer = (async () => {
      let i = 0;
      while (!stop) {
        const via = i % 2 === 0 ? a : c;
        const r = await via.api(
          'POST',
          '/indexes/crash/documents',
          Array.from({ length: 20 }, (_, k) => ({ id: i * 20 + k, n: i })),
        );
        if (r.status === 202) acked.push(r.body.taskUid);
        i++;
      }
    })();
    await eventually(async () => (acked.length >= 10 ? true : undefined), 30_000, 'ten writes');
    await b.kill();
    await eventually(async () => (acked.length >= 40 ? true : undefined), 30_000, 'forty writes');
    await b.start();
    await eventually(async () => (acked.length >= 60 ? true : undefined), 30_000, 'sixty writes');
    stop = true;
    await writer;
    const last = Math.max(...acked);
    for (const n of nodes) await n.waitTask(last);
    const tasks = await Promise.all(
      nodes.map(async (n) => (await allTasks(n)).filter((t: any) => t.indexUid === 'crash')),
    );
    expect(tasks[0]).toHaveLength(acked.length);
    expect(tasks[0].every((t: any) => t.status === 'succeeded')).toBe(true);
    expect(tasks[1].map(agreed)).toEqual(tasks[0].map(agreed));
    expect(tasks[2].map(agreed)).toEqual(tasks[0].map(agreed));
    const docs = await Promise.all(nodes.map((n) => allDocuments(n, 'crash')));
    expect(docs[0]).toHaveLength(acked.length * 20);
    expect(docs[1]).toEqual(docs[0]);
    expect(docs[2]).toEqual(docs[0]);
  });
});
