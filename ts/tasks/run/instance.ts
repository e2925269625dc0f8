/** Instance-wide tasks outside any index: dumps, snapshots, exports and dynamic search rules. */
import { systemError } from '../../errors/api-error';
import { errorBody } from '../../errors/catalog';
import type { RulePatch } from '../../search/rules';
import { one, type Effects, type Outcome, type RunContext, toErrorBody } from '../outcome';
import type { BatchRecord, TaskRecord } from '../types';

/**
 * A dump, or one snapshot for every snapshot task of the batch: its file is written while
 * no other batch runs.
 */
export async function archive(ctx: RunContext, tasks: TaskRecord[], batch: BatchRecord): Promise<Map<number, Outcome>> {
  const task = tasks[0];
  const all = (o: Outcome) => new Map(tasks.map((t) => [t.uid, o]));
  if (!ctx.archives) return all({ error: errorBody('internal', `${task.type} is not configured on this server`) });
  try {
    if (task.type === 'dumpCreation') return one(task, { details: await ctx.archives.dump(task) });
    await ctx.archives.snapshot(tasks, batch);
    return all({});
  } catch (err) {
    const dump = task.type === 'dumpCreation';
    ctx.logger.error(`${task.type} failed`, {
      taskUid: task.uid,
      error: err instanceof Error ? err.stack : String(err),
    });
    const reason = err instanceof Error ? err.message : String(err);
    // A full disk keeps its own code (type `system`), as Meilisearch reports it.
    const code = systemError(err)?.code ?? (dump ? 'dump_process_failed' : 'internal');
    return all({ error: errorBody(code, `${dump ? 'Dump' : 'Snapshot'} creation failed: ${reason}.`) });
  }
}

/** A dynamic search rule patched or deleted, or every rule deleted. */
export function updateRules(ctx: RunContext, task: TaskRecord, fx: Effects): Map<number, Outcome> {
  const rules = ctx.searchRules;
  if (!rules)
    return one(task, { error: errorBody('internal', 'dynamic search rules are not configured on this server') });
  const p = task.payload;
  if (p.kind === 'dsrClear') {
    const all = rules.all();
    for (const r of all) fx.ops.push(rules.deleteOp(r.uid));
    fx.after.push(() => {
      for (const r of all) rules.applyDelete(r.uid);
    });
    return one(task, { details: { deletedDocuments: all.length } });
  }
  if (p.kind !== 'dsrUpdate') return one(task, {});
  if (p.patch === null) {
    fx.ops.push(rules.deleteOp(p.uid));
    fx.after.push(() => rules.applyDelete(p.uid));
    return one(task, {});
  }
  // The rule's date is its task's, as Meilisearch stamps it.
  const rule = rules.patched(p.uid, p.patch as RulePatch, task.enqueuedAt);
  fx.ops.push(rules.putOp(rule));
  fx.after.push(() => rules.applyPut(rule));
  return one(task, {});
}

/** Indexes sent to another instance (`export/run.ts`); the details name each one sent. */
export async function exportIndexes(ctx: RunContext, task: TaskRecord, fx: Effects): Promise<Map<number, Outcome>> {
  if (!ctx.exporter) return one(task, { error: errorBody('internal', 'export is not configured on this server') });
  const trace: Record<string, string> = {};
  try {
    return one(task, { details: await ctx.exporter.run(task, trace) });
  } catch (err) {
    ctx.logger.warn('export failed', { taskUid: task.uid, error: err instanceof Error ? err.message : String(err) });
    return one(task, { error: toErrorBody(err) });
  } finally {
    fx.trace = trace;
  }
}
