/**
 * Task cancelation and deletion (themselves tasks, run by the worker), and which tasks and
 * batches a caller sees, for the routes and the embedded library alike (the library's caller
 * is the whole instance, `FULL_ACCESS`).
 */
import type { AuthContext } from '../auth/guard';
import type { Deps } from '../deps';
import type { TaskFilter } from '../tasks/filter';
import type { TaskQueue, Visible } from '../tasks/queue';
import type { BatchRecord, TaskRecord } from '../tasks/types';

/**
 * Which tasks the caller sees: tasks of indexes its key reaches; tasks tied to no single index
 * (swaps, dumps, cancelations, deletions) only with a key that reaches every index; a rename
 * only when both the old and the new uid are reachable.
 */
export function visibleTasks(auth: AuthContext): Visible {
  if (auth.allIndexes) return () => true;
  return (t) => {
    if (t.indexUid === null || !auth.canSeeIndex(t.indexUid)) return false;
    const renamedTo = t.payload.kind === 'indexUpdate' ? t.payload.newUid : null;
    return renamedTo === null || auth.canSeeIndex(renamedTo);
  };
}

/**
 * Which batches the caller sees: with an index-restricted key, only batches whose every task
 * and every index it can see (a batch's stats would otherwise name hidden indexes). `task` is
 * a task predicate, as the queue's batch listing expects one.
 */
export function visibleBatches(
  queue: TaskQueue,
  auth: AuthContext,
): { task: (t: TaskRecord) => boolean; batch: (b: BatchRecord) => boolean } {
  const visible = visibleTasks(auth);
  if (auth.allIndexes) return { task: visible, batch: () => true };
  const hidden = new Set<number>();
  for (const b of queue.allBatches()) {
    const members = b.taskUids.map((u) => queue.get(u)).filter((t): t is TaskRecord => t !== undefined);
    if (Object.keys(b.stats.indexUids).some((u) => !auth.canSeeIndex(u)) || members.some((t) => !visible(t)))
      hidden.add(b.uid);
  }
  return {
    task: (t) => visible(t) && (t.batchUid === null || !hidden.has(t.batchUid)),
    batch: (b) => !hidden.has(b.uid) && b.taskUids.some((u) => queue.get(u) !== undefined),
  };
}

/**
 * Enqueues the cancelation of the enqueued or processing tasks `filter` matches among those
 * `auth` sees; `originalFilter` is the query string the task records.
 */
export function cancelTasks(
  deps: Deps,
  auth: AuthContext,
  filter: TaskFilter,
  originalFilter: string,
): Promise<TaskRecord> {
  return deps.queue.cancel(filter, visibleTasks(auth), originalFilter);
}

/** Enqueues the deletion of the finished tasks `filter` matches among those `auth` sees. */
export function deleteTasks(
  deps: Deps,
  auth: AuthContext,
  filter: TaskFilter,
  originalFilter: string,
): Promise<TaskRecord> {
  return deps.queue.delete(filter, visibleTasks(auth), originalFilter);
}
