import { nextBatch } from './autobatch';
import type { TaskPayload, TaskRecord, TaskType } from './types';

let uid = 0;
function task(type: TaskType, indexUid: string | null, payload: TaskPayload): TaskRecord {
  return {
    uid: uid++,
    batchUid: null,
    indexUid,
    status: 'enqueued',
    type,
    canceledBy: null,
    details: null,
    error: null,
    enqueuedAt: '2024-01-01T00:00:00Z',
    startedAt: null,
    finishedAt: null,
    payload,
  };
}
const add = (index: string, primaryKey: string | null = null) =>
  task('documentAdditionOrUpdate', index, {
    kind: 'documentAddition',
    file: 'f',
    method: 'replace',
    primaryKey,
    skipCreation: false,
    canCreateIndex: true,
  });
const settings = (index: string) =>
  task('settingsUpdate', index, { kind: 'settingsUpdate', patch: {}, reset: false, canCreateIndex: true });
const missing = () => ({ exists: false, primaryKey: null });
const uids = (b: ReturnType<typeof nextBatch>) => b!.tasks.map((t) => t.uid);

describe('nextBatch', () => {
  beforeEach(() => {
    uid = 0;
  });

  it('when compactions, snapshots and dumps wait behind index work, then they go first, in that order', () => {
    const snapshot = () => task('snapshotCreation', null, { kind: 'snapshotCreation' });
    const dump = () => task('dumpCreation', null, { kind: 'dumpCreation' });
    const tasks = [
      add('a'),
      dump(),
      snapshot(),
      dump(),
      snapshot(),
      task('indexCompaction', 'a', { kind: 'indexCompaction' }),
    ];
    expect(uids(nextBatch(tasks, missing, 100))).toEqual([5]);
    expect(uids(nextBatch(tasks.slice(0, 5), missing, 100))).toEqual([2, 4]);
    expect(uids(nextBatch([tasks[0], tasks[1], tasks[3]], missing, 100))).toEqual([1]);
    expect(uids(nextBatch([tasks[0]], missing, 100))).toEqual([0]);
  });

  it('when nothing is enqueued, then there is no batch', () => {
    expect(nextBatch([], missing, 100)).toBeNull();
  });

  it('when additions to one index follow each other, then they batch together and skip other indexes', () => {
    const tasks = [add('a'), add('b'), add('a'), add('a')];
    expect(uids(nextBatch(tasks, missing, 100))).toEqual([0, 2, 3]);
  });

  it('when a settings update comes between additions, then the batch stops before it', () => {
    const tasks = [add('a'), add('a'), settings('a'), add('a')];
    const b = nextBatch(tasks, missing, 100)!;
    expect(uids(b)).toEqual([0, 1]);
    expect(b.strategy).toMatch(/stopped batching before task with id 2/);
    expect(uids(nextBatch([settings('a'), settings('a'), add('a')], missing, 100))).toEqual([4, 5]);
  });

  it('when a cancelation is enqueued, then the newest one runs first and alone', () => {
    const c1 = task('taskCancelation', null, { kind: 'taskCancelation', matched: [] });
    const c2 = task('taskCancelation', null, { kind: 'taskCancelation', matched: [] });
    expect(uids(nextBatch([add('a'), c1, c2], missing, 100))).toEqual([c2.uid]);
  });

  it('when deletions of tasks are enqueued, then they all run together', () => {
    const d1 = task('taskDeletion', null, { kind: 'taskDeletion', matched: [] });
    const d2 = task('taskDeletion', null, { kind: 'taskDeletion', matched: [] });
    expect(uids(nextBatch([add('a'), d1, d2], missing, 100))).toEqual([d1.uid, d2.uid]);
  });

  it('when index operations are first, then they run alone', () => {
    const create = task('indexCreation', 'a', { kind: 'indexCreation', primaryKey: null });
    expect(uids(nextBatch([create, add('a')], missing, 100))).toEqual([create.uid]);
  });

  it('when primary keys disagree, then the batch stops or the task runs alone', () => {
    expect(uids(nextBatch([add('a', 'id'), add('a', null), add('a', 'other')], missing, 100))).toEqual([0, 1]);
    uid = 10;
    expect(uids(nextBatch([add('a', null), add('a', 'id')], missing, 100))).toEqual([10]);
    uid = 20;
    expect(uids(nextBatch([add('a', 'x'), add('a')], () => ({ exists: true, primaryKey: 'id' }), 100))).toEqual([20]);
  });

  it('when the batch limit is reached, then it stops there', () => {
    expect(uids(nextBatch([add('a'), add('a'), add('a')], missing, 2))).toEqual([0, 1]);
  });
});
