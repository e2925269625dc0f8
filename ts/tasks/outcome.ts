/**
 * What running a task yields, before anything is committed: each task's outcome, and the
 * effects of the batch that commit with it (`worker.ts` commits them in one transaction).
 * The task families' runners (`run/`) return outcomes and push effects; they commit nothing.
 */
import { ApiError, type ErrorBody, systemError } from '../errors/api-error';
import { errorBody } from '../errors/catalog';
import type { IndexRegistry } from '../indexes/registry';
import type { Logger } from '../logging';
import type { KvOp } from '../native';
import type { SearchRules } from '../search/rules';
import type { QueueWrites, WorkerQueue } from './queue';
import type { BatchRecord, TaskRecord } from './types';

export interface Outcome {
  error?: ErrorBody;
  details?: Record<string, unknown>;
  canceledBy?: number;
  status?: 'canceled';
}

export interface Effects {
  /** Writes to other stores (the index registry). */
  ops: KvOp[];
  /** Writes to the queue's own records. */
  queue: QueueWrites;
  /** Cache updates and file removals once everything is committed. */
  after: Array<() => void>;
  /** Steps timed apart in the batch's `progressTrace` (name → duration). */
  trace?: Record<string, string>;
}

/** Dumps and snapshots, written by `dumps/create.ts`. */
export interface Archives {
  /** Writes the dump; resolves with the task's details (`dumpUid`). */
  dump(task: TaskRecord): Promise<Record<string, unknown>>;
  /** Writes the snapshot; `tasks` and `batch` (running) are recorded as finished in the copy. */
  snapshot(tasks: TaskRecord[], batch: BatchRecord): Promise<void>;
}

/** Runs an `export` task (`export/run.ts`): resolves with its details, or throws its error. */
export interface ExportRunner {
  run(task: TaskRecord, trace: Record<string, string>): Promise<Record<string, unknown>>;
}

/** What the runners read and change. */
export interface RunContext {
  queue: WorkerQueue;
  registry: IndexRegistry;
  /** Directory of staged document payloads. */
  updateFiles: string;
  logger: Logger;
  /** When true (the `getTaskDocumentsRoute` feature), payloads stay until their task is deleted. */
  keepPayloads: () => boolean;
  /** Writes dumps and snapshots; null where none are configured. */
  archives: Archives | null;
  /** The dynamic search rules `dsrUpdate` and `dsrClear` tasks change. */
  searchRules: SearchRules | null;
  /** Sends indexes to another instance; null where none is configured. */
  exporter: ExportRunner | null;
}

/** Details a failed (or canceled) task shows as 0, as Meilisearch does. */
export const ZEROED: Record<string, string[]> = {
  documentAdditionOrUpdate: ['indexedDocuments'],
  documentDeletion: ['deletedDocuments'],
  documentEdition: ['editedDocuments'],
  indexDeletion: ['deletedDocuments'],
  taskCancelation: ['canceledTasks'],
  taskDeletion: ['deletedTasks'],
};

export function toErrorBody(err: unknown): ErrorBody {
  if (err instanceof ApiError) return errorBody(err.code, err.message);
  const system = systemError(err);
  if (system) return errorBody(system.code, system.message);
  return errorBody('internal', err instanceof Error ? err.message : String(err));
}

/** The outcome of a batch of one task. */
export function one(task: TaskRecord, o: Outcome): Map<number, Outcome> {
  return new Map([[task.uid, o]]);
}
