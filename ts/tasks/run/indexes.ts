/** Index tasks: creation, update (primary key, rename), deletion, swap, compaction. */
import fs from 'node:fs';
import path from 'node:path';
import { errorBody } from '../../errors/catalog';
import type { IndexEntry } from '../../indexes/registry';
import type { NativeIndex } from '../../native';
import { nowIso } from '../../util/time';
import { one, type Effects, type Outcome, type RunContext } from '../outcome';
import type { TaskRecord } from '../types';

export async function createIndex(
  ctx: RunContext,
  task: TaskRecord,
  primaryKey: string | null,
  fx: Effects,
  onHandle: (h: NativeIndex) => void,
): Promise<Map<number, Outcome>> {
  const uid = task.indexUid!;
  if (ctx.registry.has(uid))
    return one(task, { error: errorBody('index_already_exists', `Index \`${uid}\` already exists.`) });
  const entry = ctx.registry.newEntry(uid, nowIso());
  const h = ctx.registry.handleOf(entry);
  onHandle(h);
  if (primaryKey !== null) {
    const [r] = await h.applyBatch([{ type: 'setPrimaryKey', taskUid: task.uid, primaryKey }]);
    if (!r.ok) return one(task, { error: errorBody(r.error.code, r.error.message) });
    entry.primaryKey = primaryKey;
  }
  fx.ops.push(ctx.registry.putOp(entry));
  fx.after.push(() => ctx.registry.applyPut(entry));
  return one(task, {});
}

export async function updateIndex(
  ctx: RunContext,
  task: TaskRecord,
  primaryKey: string | null,
  newUid: string | null,
  fx: Effects,
  onHandle: (h: NativeIndex) => void,
): Promise<Map<number, Outcome>> {
  const uid = task.indexUid!;
  const entry = ctx.registry.get(uid);
  if (!entry) return one(task, { error: errorBody('index_not_found', `Index \`${uid}\` not found.`) });
  if (newUid !== null && newUid !== uid && ctx.registry.has(newUid)) {
    return one(task, { error: errorBody('index_already_exists', `Index \`${newUid}\` already exists.`) });
  }
  const updated: IndexEntry = { ...entry, updatedAt: nowIso() };
  if (primaryKey !== null) {
    const h = ctx.registry.handleOf(entry);
    onHandle(h);
    const [r] = await h.applyBatch([{ type: 'setPrimaryKey', taskUid: task.uid, primaryKey }]);
    if (!r.ok) return one(task, { error: errorBody(r.error.code, r.error.message) });
    updated.primaryKey = primaryKey;
  }
  if (newUid !== null && newUid !== uid) {
    updated.uid = newUid;
    fx.ops.push(ctx.registry.deleteOp(uid));
    rewriteHistory(ctx, task.uid, new Map([[uid, newUid]]), fx);
    fx.after.push(() => ctx.registry.applyDelete(uid));
  }
  fx.ops.push(ctx.registry.putOp(updated));
  fx.after.push(() => ctx.registry.applyPut(updated));
  return one(task, {});
}

/** Merges the index's segments; the details give its size on disk before and after. */
export async function compactIndex(ctx: RunContext, task: TaskRecord): Promise<Map<number, Outcome>> {
  const uid = task.indexUid!;
  const entry = ctx.registry.get(uid);
  if (!entry) return one(task, { error: errorBody('index_not_found', `Index \`${uid}\` not found.`) });
  const dir = ctx.registry.pathOf(entry);
  const before = directorySize(dir);
  await ctx.registry.handleOf(entry).compact();
  return one(task, {
    details: { preCompactionSize: byteSize(before), postCompactionSize: byteSize(directorySize(dir)) },
  });
}

export function deleteIndex(ctx: RunContext, task: TaskRecord, fx: Effects): Map<number, Outcome> {
  const uid = task.indexUid!;
  const entry = ctx.registry.get(uid);
  if (!entry) return one(task, { error: errorBody('index_not_found', `Index \`${uid}\` not found.`) });
  const count = ctx.registry.handleOf(entry).documentCount();
  fx.ops.push(ctx.registry.deleteOp(uid));
  fx.after.push(() => {
    ctx.registry.applyDelete(uid);
    ctx.registry.destroyDir(entry.dir);
  });
  return one(task, { details: { deletedDocuments: count } });
}

export function swapIndexes(ctx: RunContext, task: TaskRecord, fx: Effects): Map<number, Outcome> {
  if (task.payload.kind !== 'indexSwap') return one(task, {});
  const renames = new Map<string, string>();
  const puts: IndexEntry[] = [];
  const deletes: string[] = [];
  const now = nowIso();
  for (const {
    indexes: [a, b],
    rename,
  } of task.payload.swaps) {
    const ea = ctx.registry.get(a);
    const eb = ctx.registry.get(b);
    if (rename) {
      if (!ea) return one(task, { error: errorBody('index_not_found', `Index \`${a}\` not found.`) });
      if (eb) return one(task, { error: errorBody('index_already_exists', `Index \`${b}\` already exists.`) });
      puts.push({ ...ea, uid: b, updatedAt: now });
      deletes.push(a);
      renames.set(a, b);
    } else {
      const missing = [a, b].filter((u) => !ctx.registry.has(u));
      if (missing.length) {
        const msg =
          missing.length === 1
            ? `Index \`${missing[0]}\` not found.`
            : `Indexes ${missing.map((m) => `\`${m}\``).join(', ')} not found.`;
        return one(task, { error: errorBody('index_not_found', msg) });
      }
      puts.push({ ...eb!, uid: a, updatedAt: now }, { ...ea!, uid: b, updatedAt: now });
      renames.set(a, b).set(b, a);
    }
  }
  for (const uid of deletes) fx.ops.push(ctx.registry.deleteOp(uid));
  for (const e of puts) fx.ops.push(ctx.registry.putOp(e));
  rewriteHistory(ctx, task.uid, renames, fx);
  fx.after.push(() => {
    for (const uid of deletes) ctx.registry.applyDelete(uid);
    for (const e of puts) ctx.registry.applyPut(e);
  });
  return one(task, {});
}

/** Earlier tasks follow their data through renames and swaps. */
export function rewriteHistory(ctx: RunContext, beforeUid: number, renames: Map<string, string>, fx: Effects): void {
  for (const t of ctx.queue.allTasks()) {
    if (t.uid >= beforeUid || t.indexUid === null || !renames.has(t.indexUid)) continue;
    fx.queue.tasks.push({ ...t, indexUid: renames.get(t.indexUid)! });
  }
}

/** The bytes of the files under `dir`. */
function directorySize(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    total += e.isDirectory() ? directorySize(p) : fs.statSync(p).size;
  }
  return total;
}

/** A size as Meilisearch writes it in task details: `68 KiB`, `1.5 MiB`. */
export function byteSize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : Math.round(v * 100) / 100} ${units[u]}`;
}
