/** Dumps and snapshots as tasks: the worker writes them (`dumps/create.ts`) between batches. */
import type { Deps } from '../deps';
import type { TaskRecord } from '../tasks/types';

export function createDump(deps: Deps): Promise<TaskRecord> {
  return deps.queue.enqueue({
    indexUid: null,
    type: 'dumpCreation',
    details: { dumpUid: null },
    payload: { kind: 'dumpCreation' },
  });
}

export function createSnapshot(deps: Deps): Promise<TaskRecord> {
  return deps.queue.enqueue({
    indexUid: null,
    type: 'snapshotCreation',
    details: null,
    payload: { kind: 'snapshotCreation' },
  });
}
