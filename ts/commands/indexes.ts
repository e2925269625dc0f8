/** Index and settings writes as tasks, for the routes and the embedded library alike. */
import type { Deps } from '../deps';
import { type SettingsPatch, settingsTaskDetails } from '../settings';
import type { TaskRecord } from '../tasks/types';

export function createIndex(deps: Deps, uid: string, primaryKey: string | null): Promise<TaskRecord> {
  return deps.queue.enqueue({
    indexUid: uid,
    type: 'indexCreation',
    details: { primaryKey },
    payload: { kind: 'indexCreation', primaryKey },
  });
}

/** Changes the primary key (of an empty index) and/or renames the index to `newUid`. */
export function updateIndex(
  deps: Deps,
  uid: string,
  primaryKey: string | null,
  newUid: string | null,
): Promise<TaskRecord> {
  const details: Record<string, unknown> = { primaryKey };
  if (newUid !== null && newUid !== uid) {
    details.oldIndexUid = uid;
    details.newIndexUid = newUid;
  }
  return deps.queue.enqueue({
    indexUid: uid,
    type: 'indexUpdate',
    details,
    payload: { kind: 'indexUpdate', primaryKey, newUid },
  });
}

export function deleteIndex(deps: Deps, uid: string): Promise<TaskRecord> {
  return deps.queue.enqueue({
    indexUid: uid,
    type: 'indexDeletion',
    details: { deletedDocuments: null },
    payload: { kind: 'indexDeletion' },
  });
}

/** Compaction: the index's inverted index merged into one segment, as a task. */
export function compactIndex(deps: Deps, uid: string): Promise<TaskRecord> {
  return deps.queue.enqueue({
    indexUid: uid,
    type: 'indexCompaction',
    details: {},
    payload: { kind: 'indexCompaction' },
  });
}

/** Swaps (or, with `rename`, renames) pairs of indexes; the pairs are already checked. */
export function swapIndexes(
  deps: Deps,
  swaps: Array<{ indexes: [string, string]; rename: boolean }>,
): Promise<TaskRecord> {
  return deps.queue.enqueue({
    indexUid: null,
    type: 'indexSwap',
    details: { swaps },
    payload: { kind: 'indexSwap', swaps },
  });
}

/** Applies a checked settings patch (`reset`: the patch resets to defaults). */
export function updateSettings(
  deps: Deps,
  uid: string,
  patch: SettingsPatch,
  reset: boolean,
  canCreateIndex: boolean,
): Promise<TaskRecord> {
  return deps.queue.enqueue({
    indexUid: uid,
    type: 'settingsUpdate',
    details: settingsTaskDetails(patch),
    payload: { kind: 'settingsUpdate', patch: patch as Record<string, unknown>, reset, canCreateIndex },
  });
}
