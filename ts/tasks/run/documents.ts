/** Document and settings tasks of one index, run as one engine call (`applyBatch`). */
import { errorBody } from '../../errors/catalog';
import type { IndexEntry } from '../../indexes/registry';
import type { BatchOp, NativeIndex } from '../../native';
import { nowIso } from '../../util/time';
import type { Effects, Outcome, RunContext } from '../outcome';
import { payloadFile } from '../queue';
import type { TaskRecord } from '../types';

/** The `progressTrace` step of a batch after which nothing else waited for its index. */
export const COMPACTION_STEP = 'processing tasks > compacting the inverted index';

/** Document and settings tasks of one index: one engine call, one commit (then a merge of the inverted index when nothing else waits for it). */
export async function indexBatch(
  ctx: RunContext,
  tasks: TaskRecord[],
  fx: Effects,
  idle: () => boolean,
  onHandle: (h: NativeIndex) => void,
): Promise<Map<number, Outcome>> {
  const uid = tasks[0].indexUid!;
  const out = new Map<number, Outcome>();
  let entry = ctx.registry.get(uid);
  if (!entry) {
    const p = tasks[0].payload;
    const canCreate = (p.kind === 'documentAddition' || (p.kind === 'settingsUpdate' && !p.reset)) && p.canCreateIndex;
    if (!canCreate) {
      const error = errorBody('index_not_found', `Index \`${uid}\` not found.`);
      return new Map(tasks.map((t) => [t.uid, { error }]));
    }
    entry = ctx.registry.newEntry(uid, nowIso());
  }
  const h = ctx.registry.handleOf(entry);
  onHandle(h);

  const ops: BatchOp[] = [];
  for (const t of tasks) {
    const p = t.payload;
    switch (p.kind) {
      case 'documentAddition':
        ops.push({
          type: 'addDocuments',
          taskUid: t.uid,
          file: payloadFile(ctx.updateFiles, t)!,
          method: p.method,
          primaryKey: p.primaryKey,
          skipCreation: p.skipCreation,
          shards: p.shards ?? null,
          check: p.check ?? null,
        });
        break;
      case 'documentDeletion':
        ops.push({ type: 'deleteDocuments', taskUid: t.uid, ids: p.ids });
        break;
      case 'documentClear':
        ops.push({ type: 'clearDocuments', taskUid: t.uid });
        break;
      case 'settingsUpdate':
        // The engine applies the patch to the settings the batch has reached.
        ops.push({ type: 'updateSettings', taskUid: t.uid, patch: p.patch });
        break;
      case 'documentDeletionByFilter':
        ops.push({ type: 'deleteByFilter', taskUid: t.uid, filter: p.filter });
        break;
      case 'documentEdition':
        ops.push({ type: 'editDocuments', taskUid: t.uid, function: p.function, filter: p.filter, context: p.context });
        break;
      default:
        out.set(t.uid, { error: errorBody('internal', `task type \`${t.type}\` cannot run in an index batch`) });
    }
  }
  const results = ops.length ? await h.applyBatch(ops) : [];
  if (ops.length && idle()) {
    // The batch is committed: a merge that fails leaves its tasks succeeded and the index as it was.
    const t0 = performance.now();
    const failed = (err: unknown) =>
      ctx.logger.warn('compaction after a batch failed', { indexUid: uid, error: String(err) });
    const done = await h.compactIfWorthwhile().catch(failed);
    // Only a trickle is new: merged while the tasks are reported and the next batches run.
    if (done === 'later') void h.compactLater().catch(failed);
    fx.trace = { ...fx.trace, [COMPACTION_STEP]: `${(performance.now() - t0).toFixed(2)}ms` };
  }
  for (const r of results) {
    if (r.ok) {
      const details: Record<string, unknown> = {};
      if (r.indexedDocuments !== undefined) details.indexedDocuments = r.indexedDocuments;
      if (r.editedDocuments !== undefined) details.editedDocuments = r.editedDocuments;
      if (r.deletedDocuments !== undefined) details.deletedDocuments = r.deletedDocuments;
      out.set(r.taskUid, { details });
    } else {
      // The engine says which errors Meilisearch's batches report naming the index.
      const message = r.namesIndex ? `Index \`${uid}\`: ${r.error.message}` : r.error.message;
      out.set(r.taskUid, { error: errorBody(r.error.code, message) });
    }
  }
  const updated: IndexEntry = { ...entry, primaryKey: h.primaryKey(), updatedAt: nowIso() };
  fx.ops.push(ctx.registry.putOp(updated));
  fx.after.push(() => ctx.registry.applyPut(updated));
  return out;
}
