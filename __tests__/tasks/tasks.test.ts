import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const TASK_KEYS = [
  'batchUid',
  'canceledBy',
  'details',
  'duration',
  'enqueuedAt',
  'error',
  'finishedAt',
  'indexUid',
  'startedAt',
  'status',
  'type',
  'uid',
];

describe('GET /tasks/{uid}', () => {
  it('when a task finished, then it has the full shape with dates and duration', async () => {
    const uid = uniqueIndex();
    const r = await s.api('POST', '/indexes', { body: { uid } });
    const t = await s.waitTask(r.body.taskUid);
    expect(Object.keys(t).sort()).toEqual(TASK_KEYS);
    expect(t.enqueuedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(t.duration).toMatch(/^PT\d+(\.\d+)?S$/);
    expect(typeof t.batchUid).toBe('number');
    expect(t.startedAt >= t.enqueuedAt).toBe(true);
  });

  it('when the uid is unknown or not numeric, then it answers the documented codes', async () => {
    expect((await s.api('GET', '/tasks/999999')).body.code).toBe('task_not_found');
    const bad = await s.api('GET', '/tasks/abc');
    expect([bad.status, bad.body.code]).toEqual([400, 'invalid_task_uids']);
    expect((await s.api('GET', '/batches/999999')).body.code).toBe('batch_not_found');
    expect((await s.api('GET', '/batches/x')).body.code).toBe('invalid_batch_uids');
  });
});

describe('GET /tasks filters and pagination', () => {
  let index: string;
  let uids: number[];
  beforeAll(async () => {
    index = uniqueIndex('filters');
    uids = [];
    for (let i = 0; i < 3; i++)
      uids.push((await s.api('POST', `/indexes/${index}/documents`, { body: [{ id: i }] })).body.taskUid);
    uids.push((await s.api('PATCH', `/indexes/${index}/settings`, { body: { rankingRules: ['words'] } })).body.taskUid);
    for (const u of uids) await s.waitTask(u);
  });

  it('when filtering by indexUids, types and statuses, then only matches come back newest first', async () => {
    const r = await s.api('GET', `/tasks?indexUids=${index}&types=documentAdditionOrUpdate&statuses=succeeded`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['from', 'limit', 'next', 'results', 'total']);
    expect(r.body.results.map((t: any) => t.uid)).toEqual(uids.slice(0, 3).reverse());
    expect(r.body.total).toBe(3);
  });

  it('when paging with limit and from, then next points at the following page', async () => {
    const p1 = await s.api('GET', `/tasks?indexUids=${index}&limit=2`);
    expect(p1.body.results.map((t: any) => t.uid)).toEqual([uids[3], uids[2]]);
    expect(p1.body).toMatchObject({ limit: 2, from: uids[3], next: uids[1], total: 4 });
    const p2 = await s.api('GET', `/tasks?indexUids=${index}&limit=2&from=${p1.body.next}`);
    expect(p2.body.results.map((t: any) => t.uid)).toEqual([uids[1], uids[0]]);
    expect(p2.body.next).toBeNull();
    const rev = await s.api('GET', `/tasks?indexUids=${index}&reverse=true&limit=1`);
    expect(rev.body.results[0].uid).toBe(uids[0]);
  });

  it('when filtering by uids, batchUids and dates, then bounds are strict', async () => {
    const t0 = (await s.api('GET', `/tasks/${uids[0]}`)).body;
    const byUid = await s.api('GET', `/tasks?uids=${uids[0]},${uids[2]}`);
    expect(byUid.body.results.map((t: any) => t.uid)).toEqual([uids[2], uids[0]]);
    const byBatch = await s.api('GET', `/tasks?batchUids=${t0.batchUid}`);
    expect(byBatch.body.results.map((t: any) => t.uid)).toContain(uids[0]);
    const after = await s.api('GET', `/tasks?indexUids=${index}&afterEnqueuedAt=${t0.enqueuedAt}`);
    expect(after.body.results.map((t: any) => t.uid)).not.toContain(uids[0]);
    const before = await s.api('GET', `/tasks?indexUids=${index}&beforeEnqueuedAt=${t0.enqueuedAt}`);
    expect(before.body.total).toBe(0);
    const fin = await s.api('GET', `/tasks?indexUids=${index}&afterFinishedAt=2000-01-01&beforeStartedAt=2999-01-01`);
    expect(fin.body.total).toBe(4);
    expect((await s.api('GET', `/tasks?indexUids=${index}&statuses=*&types=*`)).body.total).toBe(4);
  });

  it.each([
    ['statuses=done', 'invalid_task_statuses'],
    ['types=fly', 'invalid_task_types'],
    ['uids=a', 'invalid_task_uids'],
    ['canceledBy=x', 'invalid_task_canceled_by'],
    ['limit=-1', 'invalid_task_limit'],
    ['from=x', 'invalid_task_from'],
    ['reverse=maybe', 'invalid_task_reverse'],
    ['afterEnqueuedAt=yesterday', 'invalid_task_after_enqueued_at'],
    ['beforeFinishedAt=2020-13-45', 'invalid_task_before_finished_at'],
    ['indexUids=bad!uid', 'invalid_index_uid'],
    ['unknown=1', 'bad_request'],
  ])('when the query is %s, then it answers 400 %s', async (q, code) => {
    const r = await s.api('GET', `/tasks?${q}`);
    expect([r.status, r.body.code]).toEqual([400, code]);
  });

  it('when listing batches, then each has the batch shape', async () => {
    const r = await s.api('GET', `/batches?indexUids=${index}`);
    expect(r.status).toBe(200);
    expect(r.body.results.length).toBeGreaterThan(0);
    const b = r.body.results[0];
    expect(Object.keys(b).sort()).toEqual([
      'batchStrategy',
      'details',
      'duration',
      'finishedAt',
      'progress',
      'startedAt',
      'stats',
      'uid',
    ]);
    expect(b.progress).toBeNull();
    expect(Object.keys(b.stats).sort()).toEqual(['indexUids', 'progressTrace', 'status', 'totalNbTasks', 'types']);
  });
});

describe('POST /tasks/cancel and DELETE /tasks', () => {
  it('when no filter is given, then both answer missing_task_filters', async () => {
    expect((await s.api('POST', '/tasks/cancel')).body.code).toBe('missing_task_filters');
    expect((await s.api('DELETE', '/tasks')).body.code).toBe('missing_task_filters');
  });

  it('when canceling enqueued tasks behind a long batch, then they end canceled with canceledBy', async () => {
    const busy = uniqueIndex('busy');
    const target = uniqueIndex('target');
    const big = Array.from({ length: 30000 }, (_, i) => ({ id: i, text: `some text ${i}` }));
    const first = await s.api('POST', `/indexes/${busy}/documents`, { body: big });
    const victim = await s.api('POST', `/indexes/${target}/documents`, { body: [{ id: 1 }] });
    const cancel = await s.api('POST', `/tasks/cancel?uids=${victim.body.taskUid}`);
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ indexUid: null, status: 'enqueued', type: 'taskCancelation' });
    const ct = await s.waitTask(cancel.body.taskUid, 60000);
    expect(ct.status).toBe('succeeded');
    expect(ct.details).toEqual({ matchedTasks: 1, canceledTasks: 1, originalFilter: `?uids=${victim.body.taskUid}` });
    const v = await s.waitTask(victim.body.taskUid);
    expect(v).toMatchObject({
      status: 'canceled',
      canceledBy: cancel.body.taskUid,
      details: { receivedDocuments: 1, indexedDocuments: 0 },
    });
    expect((await s.waitTask(first.body.taskUid, 60000)).status).toBe('succeeded');
    const byCanceler = await s.api('GET', `/tasks?canceledBy=${cancel.body.taskUid}`);
    expect(byCanceler.body.results.map((t: any) => t.uid)).toEqual([victim.body.taskUid]);
  });

  it('when deleting finished tasks, then they are gone and the deletion reports counts', async () => {
    const index = uniqueIndex('deltasks');
    const a = await s.waitTask((await s.api('POST', '/indexes', { body: { uid: index } })).body.taskUid);
    const r = await s.api('DELETE', `/tasks?uids=${a.uid}`);
    expect(r.status).toBe(200);
    expect(r.body.type).toBe('taskDeletion');
    const t = await s.waitTask(r.body.taskUid);
    expect(t.details).toEqual({ matchedTasks: 1, deletedTasks: 1, originalFilter: `?uids=${a.uid}` });
    expect((await s.api('GET', `/tasks/${a.uid}`)).body.code).toBe('task_not_found');
  });
});
