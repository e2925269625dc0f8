/**
 * `POST /indexes/{uid}/compact`: a task (`indexCompaction`) that merges the index's segments;
 * the details give the size on disk before and after, as Meilisearch 1.50 writes them.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const SIZE = /^\d+(\.\d+)? (B|KiB|MiB|GiB)$/;

it('merges the segments and keeps every document', async () => {
  // A large batch then a small one: the small one's segment is too small to be merged on its own.
  for (const [from, n] of [
    [0, 1000],
    [1000, 10],
  ]) {
    const docs = Array.from({ length: n }, (_, i) => ({ id: from + i, t: `word${(from + i) % 50} item${from + i}` }));
    const add = await s.api('POST', '/indexes/comp/documents', { body: docs });
    expect((await s.waitTask(add.body.taskUid)).status).toBe('succeeded');
  }
  const r = await s.api('POST', '/indexes/comp/compact');
  expect(r.status).toBe(202);
  expect(r.body).toMatchObject({ indexUid: 'comp', status: 'enqueued', type: 'indexCompaction' });
  const task = await s.waitTask(r.body.taskUid);
  expect(task).toMatchObject({ status: 'succeeded', error: null });
  expect(task.details.preCompactionSize).toMatch(SIZE);
  expect(task.details.postCompactionSize).toMatch(SIZE);
  const bytes = (v: string) => {
    const [n, unit] = v.split(' ');
    return Number(n) * 1024 ** ['B', 'KiB', 'MiB', 'GiB'].indexOf(unit);
  };
  // Two segments became one, smaller than the two were.
  expect(bytes(task.details.postCompactionSize)).toBeLessThan(bytes(task.details.preCompactionSize));
  const search = await s.api('POST', '/indexes/comp/search', { body: { q: '"word7"', limit: 0 } });
  expect(search.body.estimatedTotalHits).toBe(21);
  expect((await s.api('GET', '/indexes/comp/stats')).body.numberOfDocuments).toBe(1010);
});

it('a bulk load sent in several tasks merges the index once, after the batch nothing waits behind', async () => {
  // One task per batch, so a load of three tasks runs as three batches.
  const one = await startTestServer({ args: ['--experimental-max-number-of-batched-tasks', '1'] });
  try {
    const docs = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({ id: from + i, t: `word${(from + i) % 50} item${from + i}` }));
    const uids: number[] = [];
    for (const [from, n] of [
      [0, 40000],
      [40000, 4000],
      [44000, 4000],
    ]) {
      uids.push((await one.api('POST', '/indexes/bulk/documents', { body: docs(from, n) })).body.taskUid);
    }
    const tasks = [];
    for (const uid of uids) tasks.push(await one.waitTask(uid));
    expect(tasks.map((t) => t.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const batches = await Promise.all(tasks.map(async (t) => (await one.api('GET', `/batches/${t.batchUid}`)).body));
    expect(new Set(batches.map((b) => b.uid)).size).toBe(3);
    // The later tasks were waiting when the first batch ended.
    expect(Date.parse(tasks[2].enqueuedAt)).toBeLessThan(Date.parse(batches[0].finishedAt));
    const step = 'processing tasks > compacting the inverted index';
    expect(batches.map((b) => step in b.stats.progressTrace)).toEqual([false, false, true]);
    expect(batches[2].stats.progressTrace[step]).toMatch(/^\d+\.\d{2}ms$/);
    const search = await one.api('POST', '/indexes/bulk/search', { body: { q: '"word7"', limit: 0 } });
    expect(search.body.estimatedTotalHits).toBe(960);
    // One segment of the inverted index is left on disk.
    const [dir] = readdirSync(join(one.dbPath, 'indexes'));
    expect(readdirSync(join(one.dbPath, 'indexes', dir, 'tantivy')).filter((f) => f.endsWith('.idx'))).toHaveLength(1);
  } finally {
    await one.close();
  }
});

it('a missing index fails the task', async () => {
  const r = await s.api('POST', '/indexes/missing_comp/compact');
  expect(r.status).toBe(202);
  const task = await s.waitTask(r.body.taskUid);
  expect(task).toMatchObject({ status: 'failed', details: {}, error: { code: 'index_not_found' } });
});

it('needs the indexes.compact action', async () => {
  const k = await s.api('POST', '/keys', { body: { actions: ['indexes.get'], indexes: ['*'], expiresAt: null } });
  expect((await s.api('POST', '/indexes/comp/compact', { key: k.body.key })).status).toBe(403);
});
