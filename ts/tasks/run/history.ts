/** Task-history tasks: cancelation of enqueued tasks and deletion of finished ones. */
import { nowIso } from '../../util/time';
import { one, type Effects, type Outcome, type RunContext, ZEROED } from '../outcome';
import { removePayload } from '../queue';
import type { BatchRecord, TaskRecord } from '../types';

export function cancel(ctx: RunContext, task: TaskRecord, batch: BatchRecord, fx: Effects): Map<number, Outcome> {
  const matched = task.payload.kind === 'taskCancelation' ? task.payload.matched : [];
  const now = nowIso();
  let canceled = 0;
  for (const uid of matched) {
    const t = ctx.queue.get(uid);
    if (t?.status !== 'enqueued' || uid === task.uid) continue;
    const details = t.details ? { ...t.details } : null;
    if (details) for (const k of ZEROED[t.type] ?? []) details[k] = 0;
    const c: TaskRecord = {
      ...t,
      status: 'canceled',
      canceledBy: task.uid,
      batchUid: batch.uid,
      finishedAt: now,
      details,
    };
    fx.queue.tasks.push(c);
    fx.after.push(() => {
      if (!ctx.keepPayloads()) removePayload(ctx.updateFiles, c);
    });
    canceled++;
  }
  return one(task, { details: { canceledTasks: canceled } });
}

export function deleteTasks(ctx: RunContext, tasks: TaskRecord[], fx: Effects): Map<number, Outcome> {
  const out = new Map<number, Outcome>();
  const deleted = new Map<number, TaskRecord>();
  const inBatch = new Set(tasks.map((t) => t.uid));
  for (const task of tasks) {
    const matched = task.payload.kind === 'taskDeletion' ? task.payload.matched : [];
    let n = 0;
    for (const uid of matched) {
      const t = ctx.queue.get(uid);
      if (!t || deleted.has(uid) || inBatch.has(uid)) continue;
      if (t.status !== 'succeeded' && t.status !== 'failed' && t.status !== 'canceled') continue;
      deleted.set(uid, t);
      n++;
    }
    out.set(task.uid, { details: { deletedTasks: n } });
  }
  fx.queue.deletedTasks.push(...deleted.keys());
  // Batches whose every task is gone go too.
  for (const b of ctx.queue.allBatches()) {
    if (b.finishedAt !== null && b.taskUids.every((u) => deleted.has(u) || ctx.queue.get(u) === undefined))
      fx.queue.deletedBatches.push(b.uid);
  }
  fx.after.push(() => {
    for (const t of deleted.values()) removePayload(ctx.updateFiles, t);
  });
  return out;
}
