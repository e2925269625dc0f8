/**
 * Autobatching: a pure function from the enqueued tasks (uid order) to the next batch.
 * No I/O, so it is unit-tested on plain records.
 *
 * Priority: the newest cancelation alone; then every enqueued deletion together; then the
 * oldest index compaction alone; then the oldest export alone; then every enqueued snapshot
 * together; then the oldest dump alone (Meilisearch's order: a dump does not wait behind index work); then the
 * oldest task: index creation/update/deletion/swap alone, otherwise that index's
 * consecutive compatible tasks (document additions with agreeing primary keys,
 * deletions by id, clears; or settings updates), stopping at the first incompatible one.
 */
import type { TaskRecord } from './types';

export interface IndexState {
  exists: boolean;
  primaryKey: string | null;
}

export interface NextBatch {
  tasks: TaskRecord[];
  indexUid: string | null;
  strategy: string;
}

type Family = 'documents' | 'settings' | 'alone';

function family(t: TaskRecord): Family {
  switch (t.payload.kind) {
    case 'documentAddition':
    case 'documentDeletion':
    case 'documentClear':
      return 'documents';
    case 'settingsUpdate':
      return 'settings';
    default:
      return 'alone';
  }
}

export function nextBatch(
  enqueued: TaskRecord[],
  indexState: (uid: string) => IndexState,
  maxTasks: number,
): NextBatch | null {
  if (enqueued.length === 0) return null;
  const cancels = enqueued.filter((t) => t.type === 'taskCancelation');
  if (cancels.length > 0) {
    const t = cancels[cancels.length - 1];
    return {
      tasks: [t],
      indexUid: null,
      strategy: `created batch containing only task with id ${t.uid} of type \`taskCancelation\` that cannot be batched with any other task.`,
    };
  }
  const deletions = enqueued.filter((t) => t.type === 'taskDeletion');
  if (deletions.length > 0)
    return { tasks: deletions, indexUid: null, strategy: 'batched all enqueued task deletions' };
  const alone = (t: TaskRecord): NextBatch => ({
    tasks: [t],
    indexUid: t.indexUid,
    strategy: `created batch containing only task with id ${t.uid} of type \`${t.type}\` that cannot be batched with any other task.`,
  });
  const compaction = enqueued.find((t) => t.type === 'indexCompaction');
  if (compaction) return alone(compaction);
  const exported = enqueued.find((t) => t.type === 'export');
  if (exported) return alone(exported);
  const snapshots = enqueued.filter((t) => t.type === 'snapshotCreation');
  if (snapshots.length > 0)
    return { tasks: snapshots, indexUid: null, strategy: 'batched all enqueued snapshot creations' };
  const dump = enqueued.find((t) => t.type === 'dumpCreation');
  if (dump) return alone(dump);

  const first = enqueued[0];
  const fam = family(first);
  if (fam === 'alone' || first.indexUid === null) return alone(first);

  const uid = first.indexUid;
  const state = indexState(uid);
  const batch: TaskRecord[] = [first];
  let batchPk =
    first.payload.kind === 'documentAddition' ? (state.primaryKey ?? first.payload.primaryKey) : state.primaryKey;
  const guessing = fam === 'documents' && state.primaryKey === null && batchPk === null;
  // A task naming a primary key the index does not have is isolated so that it fails alone.
  if (
    first.payload.kind === 'documentAddition' &&
    state.primaryKey !== null &&
    first.payload.primaryKey !== null &&
    first.payload.primaryKey !== state.primaryKey
  ) {
    return { tasks: [first], indexUid: uid, strategy: `primary key mismatch: task ${first.uid} runs alone` };
  }
  let stopReason = `batched all enqueued tasks for index \`${uid}\``;
  for (const t of enqueued.slice(1)) {
    if (t.indexUid !== uid) continue;
    if (batch.length >= maxTasks) {
      stopReason = `batched up to configured batch limit of ${maxTasks} tasks`;
      break;
    }
    if (family(t) !== fam) {
      stopReason = `stopped batching before task with id ${t.uid} because it cannot be batched with the previous tasks`;
      break;
    }
    if (
      t.payload.kind === 'documentAddition' &&
      !state.exists &&
      first.payload.kind !== 'documentAddition' &&
      t.payload.canCreateIndex
    ) {
      stopReason = `stopped batching before task with id ${t.uid} because it can create the index`;
      break;
    }
    if (t.payload.kind === 'documentAddition') {
      const pk = t.payload.primaryKey;
      if (pk !== null) {
        if (guessing || (batchPk !== null && pk !== batchPk)) {
          stopReason = `stopped batching before task with id ${t.uid} because it names a different primary key`;
          break;
        }
        batchPk = pk;
      }
      // Documents that may create the index must not be batched after tasks that cannot.
      if (
        !state.exists &&
        t.payload.canCreateIndex !== (first.payload.kind === 'documentAddition' ? first.payload.canCreateIndex : true)
      ) {
        stopReason = `stopped batching before task with id ${t.uid} because it can create the index`;
        break;
      }
    }
    batch.push(t);
  }
  return { tasks: batch, indexUid: uid, strategy: stopReason };
}
