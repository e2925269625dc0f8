/**
 * The records of a version-6 dump, the format Meilisearch 1.x writes and reads, and their
 * conversion to and from Quarry's: tasks (`tasks/queue.jsonl`), batches
 * (`batches/queue.jsonl`) and keys (`keys.jsonl`).
 *
 * A dumped task names its kind as the scheduler stores it (`{"documentImport": {...}}`,
 * `"documentClear"`) and its details as one variant in PascalCase with snake_case fields
 * (`{"DocumentAdditionOrUpdate": {"received_documents": 3, ...}}`); the API shapes are
 * Quarry's records. Kinds Quarry does not run (export, upgrade) and network topology
 * changes, whose dumped form is Meilisearch's own, are not converted. Dynamic search rules
 * travel as Meilisearch keeps them: the documents of the index `.meili_dsr`.
 */
import type { KeyRecord } from '../auth/keys';
import type { ErrorBody } from '../errors/api-error';
import type { BatchRecord, TaskPayload, TaskRecord, TaskStatus, TaskType } from '../tasks/types';
import { decodeRoaring, encodeRoaring } from './roaring';

export const DUMP_VERSION = 'V6';
/** The Meilisearch version whose API (and dump format) Quarry serves. */
export const DB_VERSION = '1.50.0';

type Json = Record<string, unknown>;

export interface DumpTask {
  uid: number;
  batchUid?: number | null;
  indexUid?: string | null;
  status: TaskStatus;
  type: string | Json;
  canceledBy?: number | null;
  details?: Json | null;
  error?: ErrorBody | null;
  enqueuedAt: string;
  startedAt?: string | null;
  finishedAt?: string | null;
  customMetadata?: string | null;
  network?: Json | null;
}

export class DumpFormatError extends Error {}

const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** A finished or enqueued task as a dump line; null for kinds the format cannot carry. */
export function taskToDump(t: TaskRecord): DumpTask | null {
  const d = t.details ?? {};
  const p = t.payload;
  let kind: string | Json;
  let details: Json | undefined;
  switch (t.type) {
    case 'documentAdditionOrUpdate': {
      const method = p.kind === 'documentAddition' && p.method === 'update' ? 'UpdateDocuments' : 'ReplaceDocuments';
      kind = {
        documentImport: {
          primary_key: p.kind === 'documentAddition' ? p.primaryKey : null,
          method,
          documents_count: num(d.receivedDocuments) ?? 0,
          allow_index_creation: p.kind === 'documentAddition' ? p.canCreateIndex : true,
        },
      };
      details = {
        DocumentAdditionOrUpdate: {
          received_documents: num(d.receivedDocuments) ?? 0,
          indexed_documents: num(d.indexedDocuments),
        },
      };
      break;
    }
    case 'documentDeletion':
      if (p.kind === 'documentClear') {
        kind = 'documentClear';
        details = { ClearAll: { deleted_documents: num(d.deletedDocuments) } };
      } else if (p.kind === 'documentDeletionByFilter') {
        kind = { documentDeletionByFilter: { filter: p.filter } };
        details = {
          DocumentDeletionByFilter: {
            original_filter: str(d.originalFilter) ?? JSON.stringify(p.filter),
            deleted_documents: num(d.deletedDocuments),
          },
        };
      } else {
        kind = { documentDeletion: { documents_ids: p.kind === 'documentDeletion' ? p.ids : [] } };
        details = {
          DocumentDeletion: { provided_ids: num(d.providedIds) ?? 0, deleted_documents: num(d.deletedDocuments) },
        };
      }
      break;
    case 'documentEdition':
      kind =
        p.kind === 'documentEdition'
          ? { documentEdition: { filter: p.filter ?? null, context: p.context, function: p.function } }
          : {
              documentEdition: {
                filter: parseFilterText(d.originalFilter),
                context: d.context ?? null,
                function: str(d.function) ?? '',
              },
            };
      details = {
        DocumentEdition: {
          deleted_documents: num(d.deletedDocuments),
          edited_documents: num(d.editedDocuments),
          original_filter: str(d.originalFilter),
          context: d.context ?? null,
          function: str(d.function) ?? '',
        },
      };
      break;
    case 'settingsUpdate': {
      const patch = p.kind === 'settingsUpdate' ? p.patch : ((d as Json) ?? {});
      kind = {
        settings: {
          settings: patch,
          is_deletion: p.kind === 'settingsUpdate' && p.reset,
          allow_index_creation: p.kind === 'settingsUpdate' ? p.canCreateIndex : true,
        },
      };
      details = { SettingsUpdate: { settings: d } };
      break;
    }
    case 'indexCreation':
      kind = { indexCreation: { primary_key: str(d.primaryKey) } };
      details = { IndexInfo: { primary_key: str(d.primaryKey), new_index_uid: null, old_index_uid: null } };
      break;
    case 'indexUpdate':
      kind = { indexUpdate: { primary_key: str(d.primaryKey), uid: str(d.newIndexUid) } };
      details = {
        IndexInfo: {
          primary_key: str(d.primaryKey),
          new_index_uid: str(d.newIndexUid),
          old_index_uid: str(d.oldIndexUid),
        },
      };
      break;
    case 'indexDeletion':
      kind = 'indexDeletion';
      details = { ClearAll: { deleted_documents: num(d.deletedDocuments) } };
      break;
    case 'indexSwap':
      kind = { indexSwap: { swaps: d.swaps ?? [] } };
      details = { IndexSwap: { swaps: d.swaps ?? [] } };
      break;
    case 'taskCancelation':
      kind = {
        taskCancelation: {
          query: str(d.originalFilter) ?? '',
          tasks: encodeRoaring(p.kind === 'taskCancelation' ? p.matched : []),
        },
      };
      details = {
        TaskCancelation: {
          matched_tasks: num(d.matchedTasks) ?? 0,
          canceled_tasks: num(d.canceledTasks),
          original_filter: str(d.originalFilter) ?? '',
        },
      };
      break;
    case 'taskDeletion':
      kind = {
        tasksDeletion: {
          query: str(d.originalFilter) ?? '',
          tasks: encodeRoaring(p.kind === 'taskDeletion' ? p.matched : []),
        },
      };
      details = {
        TaskDeletion: {
          matched_tasks: num(d.matchedTasks) ?? 0,
          deleted_tasks: num(d.deletedTasks),
          original_filter: str(d.originalFilter) ?? '',
        },
      };
      break;
    case 'dumpCreation':
      kind = { dumpCreation: { keys: [], instance_uid: null } };
      details = { Dump: { dump_uid: str(d.dumpUid) } };
      break;
    case 'snapshotCreation':
      kind = 'snapshotCreation';
      break;
    case 'dsrUpdate': {
      const change =
        p.kind === 'dsrUpdate' && p.patch !== null
          ? { createOrUpdate: { rule_id: p.uid, update: p.patch } }
          : { deletion: p.kind === 'dsrUpdate' ? p.uid : '' };
      kind = { dsrUpdate: change };
      details = { DsrUpdate: change };
      break;
    }
    case 'dsrClear':
      kind = 'dsrClear';
      details = { ClearAll: { deleted_documents: num(d.deletedDocuments) } };
      break;
    case 'indexCompaction':
      kind = { indexCompaction: { index_uid: t.indexUid } };
      details = {
        IndexCompaction: {
          index_uid: t.indexUid,
          pre_compaction_size: str(d.preCompactionSize),
          post_compaction_size: str(d.postCompactionSize),
        },
      };
      break;
    default:
      return null;
  }
  // Fields in the order Meilisearch writes them; absent rather than null, as it does.
  const out: Json = { uid: t.uid, batchUid: t.batchUid, indexUid: t.indexUid, status: t.status, type: kind };
  if (t.canceledBy !== null) out.canceledBy = t.canceledBy;
  if (details) out.details = details;
  if (t.error) out.error = t.error;
  out.enqueuedAt = t.enqueuedAt;
  if (t.startedAt) out.startedAt = t.startedAt;
  if (t.finishedAt) out.finishedAt = t.finishedAt;
  if (t.customMetadata !== undefined) out.customMetadata = t.customMetadata;
  return out as unknown as DumpTask;
}

/** `"\"id = 3\""` (a filter as details show it) back to the filter. */
function parseFilterText(text: unknown): unknown {
  if (typeof text !== 'string') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A dump line as a Quarry task; `payloadFile` names where an enqueued document import's
 * documents were staged. Null for kinds Quarry does not run (kept out of the history).
 */
export function taskFromDump(raw: DumpTask, payloadFile: (uid: number) => string): TaskRecord | null {
  if (typeof raw.uid !== 'number' || typeof raw.status !== 'string' || typeof raw.enqueuedAt !== 'string') {
    throw new DumpFormatError(`task record \`${JSON.stringify(raw).slice(0, 200)}\` is not a dumped task`);
  }
  const [kindName, k] =
    typeof raw.type === 'string' ? [raw.type, {} as Json] : (Object.entries(raw.type)[0] as [string, Json]);
  const [, dv] = raw.details ? (Object.entries(raw.details)[0] as [string, Json]) : ['', {} as Json];
  const dd: Json = dv ?? {};
  let type: TaskType;
  let details: Json | null;
  let payload: TaskPayload;
  switch (kindName) {
    case 'documentImport':
      type = 'documentAdditionOrUpdate';
      details = {
        receivedDocuments: num(dd.received_documents) ?? num(k.documents_count) ?? 0,
        indexedDocuments: num(dd.indexed_documents),
      };
      payload = {
        kind: 'documentAddition',
        file: payloadFile(raw.uid),
        method: k.method === 'UpdateDocuments' ? 'update' : 'replace',
        primaryKey: str(k.primary_key),
        skipCreation: false,
        canCreateIndex: k.allow_index_creation !== false,
      };
      break;
    case 'documentDeletion':
      type = 'documentDeletion';
      details = {
        providedIds: num(dd.provided_ids) ?? 0,
        deletedDocuments: num(dd.deleted_documents),
        originalFilter: null,
      };
      payload = { kind: 'documentDeletion', ids: Array.isArray(k.documents_ids) ? k.documents_ids.map(String) : [] };
      break;
    case 'documentDeletionByFilter':
      type = 'documentDeletion';
      details = {
        providedIds: 0,
        deletedDocuments: num(dd.deleted_documents),
        originalFilter: str(dd.original_filter) ?? JSON.stringify(k.filter),
      };
      payload = { kind: 'documentDeletionByFilter', filter: k.filter };
      break;
    case 'documentClear':
      type = 'documentDeletion';
      details = { deletedDocuments: num(dd.deleted_documents) };
      payload = { kind: 'documentClear' };
      break;
    case 'documentEdition':
      type = 'documentEdition';
      details = {
        context: k.context ?? dd.context ?? null,
        deletedDocuments: num(dd.deleted_documents),
        editedDocuments: num(dd.edited_documents),
        function: str(k.function) ?? str(dd.function),
        originalFilter: str(dd.original_filter) ?? (k.filter == null ? null : JSON.stringify(k.filter)),
      };
      payload = {
        kind: 'documentEdition',
        filter: k.filter ?? null,
        function: str(k.function) ?? '',
        context: (k.context as Json | null) ?? null,
      };
      break;
    case 'settings': {
      type = 'settingsUpdate';
      const settings = (k.settings as Json | undefined) ?? (dd.settings as Json | undefined) ?? {};
      details = (dd.settings as Json | undefined) ?? settings;
      payload = {
        kind: 'settingsUpdate',
        patch: settings,
        reset: k.is_deletion === true,
        canCreateIndex: k.allow_index_creation !== false,
      };
      break;
    }
    case 'indexCreation':
      type = 'indexCreation';
      details = { primaryKey: str(k.primary_key) };
      payload = { kind: 'indexCreation', primaryKey: str(k.primary_key) };
      break;
    case 'indexUpdate': {
      type = 'indexUpdate';
      const newUid = str(k.uid) ?? str(k.new_index_uid);
      details = { primaryKey: str(k.primary_key) };
      if (newUid !== null)
        Object.assign(details, { oldIndexUid: str(dd.old_index_uid) ?? raw.indexUid ?? null, newIndexUid: newUid });
      payload = { kind: 'indexUpdate', primaryKey: str(k.primary_key), newUid };
      break;
    }
    case 'indexDeletion':
      type = 'indexDeletion';
      details = { deletedDocuments: num(dd.deleted_documents) };
      payload = { kind: 'indexDeletion' };
      break;
    case 'indexSwap': {
      type = 'indexSwap';
      const swaps = (Array.isArray(k.swaps) ? k.swaps : []).map((s: Json) => ({
        indexes: s.indexes as [string, string],
        rename: s.rename === true,
      }));
      details = { swaps };
      payload = { kind: 'indexSwap', swaps };
      break;
    }
    case 'taskCancelation':
      type = 'taskCancelation';
      details = {
        matchedTasks: num(dd.matched_tasks) ?? 0,
        canceledTasks: num(dd.canceled_tasks),
        originalFilter: str(dd.original_filter) ?? str(k.query),
      };
      payload = { kind: 'taskCancelation', matched: taskSet(k.tasks) };
      break;
    case 'tasksDeletion':
      type = 'taskDeletion';
      details = {
        matchedTasks: num(dd.matched_tasks) ?? 0,
        deletedTasks: num(dd.deleted_tasks),
        originalFilter: str(dd.original_filter) ?? str(k.query),
      };
      payload = { kind: 'taskDeletion', matched: taskSet(k.tasks) };
      break;
    case 'dumpCreation':
      type = 'dumpCreation';
      details = { dumpUid: str(dd.dump_uid) };
      payload = { kind: 'dumpCreation' };
      break;
    case 'snapshotCreation':
      type = 'snapshotCreation';
      details = null;
      payload = { kind: 'snapshotCreation' };
      break;
    case 'dsrUpdate': {
      type = 'dsrUpdate';
      const c = k.createOrUpdate as Json | undefined;
      if (c) {
        details = { rule: c.update ?? {}, updatedRules: 1 };
        payload = { kind: 'dsrUpdate', uid: String(c.rule_id), patch: (c.update as Json) ?? {} };
      } else {
        details = { updatedRules: 1 };
        payload = { kind: 'dsrUpdate', uid: String(k.deletion ?? ''), patch: null };
      }
      break;
    }
    case 'dsrClear':
      type = 'dsrClear';
      details = { deletedDocuments: num(dd.deleted_documents) };
      payload = { kind: 'dsrClear' };
      break;
    case 'indexCompaction':
      type = 'indexCompaction';
      details =
        raw.status === 'succeeded'
          ? { preCompactionSize: str(dd.pre_compaction_size), postCompactionSize: str(dd.post_compaction_size) }
          : {};
      payload = { kind: 'indexCompaction' };
      break;
    default:
      return null;
  }
  const t: TaskRecord = {
    uid: raw.uid,
    batchUid: raw.batchUid ?? null,
    indexUid: raw.indexUid ?? null,
    status: raw.status,
    type,
    canceledBy: raw.canceledBy ?? null,
    details,
    error: raw.error ?? null,
    enqueuedAt: raw.enqueuedAt,
    startedAt: raw.startedAt ?? null,
    finishedAt: raw.finishedAt ?? null,
    payload,
  };
  if (typeof raw.customMetadata === 'string') t.customMetadata = raw.customMetadata;
  return t;
}

function taskSet(v: unknown): number[] {
  if (!Array.isArray(v)) return [];
  try {
    return decodeRoaring(v as number[]);
  } catch (err) {
    throw new DumpFormatError(`a task set could not be read: ${(err as Error).message}`);
  }
}

/** A batch as a dump line. */
export function batchToDump(b: BatchRecord): Json {
  return {
    uid: b.uid,
    details: b.details,
    stats: b.stats,
    startedAt: b.startedAt,
    finishedAt: b.finishedAt,
    stopReason: b.batchStrategy,
  };
}

export function batchFromDump(raw: Json, taskUids: number[]): BatchRecord {
  if (typeof raw.uid !== 'number') throw new DumpFormatError('a batch record has no uid');
  const stats = (raw.stats ?? {}) as BatchRecord['stats'];
  return {
    uid: raw.uid,
    taskUids,
    details: (raw.details as Json) ?? {},
    stats: {
      totalNbTasks: stats.totalNbTasks ?? taskUids.length,
      status: stats.status ?? {},
      types: stats.types ?? {},
      indexUids: stats.indexUids ?? {},
      progressTrace: stats.progressTrace ?? {},
    },
    startedAt: str(raw.startedAt) ?? '',
    finishedAt: str(raw.finishedAt),
    batchStrategy: str(raw.stopReason) ?? '',
  };
}

export function keyToDump(k: KeyRecord): Json {
  const out: Json = { description: k.description };
  if (k.name !== null) out.name = k.name;
  Object.assign(out, {
    uid: k.uid,
    actions: k.actions,
    indexes: k.indexes,
    expires_at: k.expiresAt,
    created_at: k.createdAt,
    updated_at: k.updatedAt,
  });
  return out;
}

export function keyFromDump(raw: Json): KeyRecord {
  if (typeof raw.uid !== 'string' || !Array.isArray(raw.actions) || !Array.isArray(raw.indexes)) {
    throw new DumpFormatError(`key record \`${JSON.stringify(raw).slice(0, 200)}\` is not a dumped key`);
  }
  return {
    uid: raw.uid,
    name: str(raw.name),
    description: str(raw.description),
    actions: raw.actions.map(String),
    indexes: raw.indexes.map(String),
    expiresAt: str(raw.expires_at),
    createdAt: str(raw.created_at) ?? new Date().toISOString(),
    updatedAt: str(raw.updated_at) ?? str(raw.created_at) ?? new Date().toISOString(),
  };
}
