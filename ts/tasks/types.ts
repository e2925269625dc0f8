/** Task and batch records: what the queue stores, and their wire views. */
import type { ErrorBody } from '../errors/api-error';
import type { StagedCheck } from '../native';

export type TaskStatus = 'enqueued' | 'processing' | 'succeeded' | 'failed' | 'canceled';

export const TASK_STATUSES: TaskStatus[] = ['enqueued', 'processing', 'succeeded', 'failed', 'canceled'];

export const TASK_TYPES = [
  'documentAdditionOrUpdate',
  'documentEdition',
  'documentDeletion',
  'settingsUpdate',
  'indexCreation',
  'indexDeletion',
  'indexUpdate',
  'indexSwap',
  'taskCancelation',
  'taskDeletion',
  'dumpCreation',
  'snapshotCreation',
  'export',
  'upgradeDatabase',
  'indexCompaction',
  'networkTopologyChange',
  'dsrUpdate',
  'dsrClear',
] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export interface SwapSpec {
  indexes: [string, string];
  rename: boolean;
}

/** What the worker needs to run a task; never shown to clients. */
export type TaskPayload =
  | {
      kind: 'documentAddition';
      file: string;
      method: 'replace' | 'update';
      primaryKey: string | null;
      skipCreation: boolean;
      canCreateIndex: boolean;
      shards?: { all: string[]; own: string[] };
      check?: StagedCheck;
    }
  | { kind: 'documentDeletion'; ids: string[] }
  | { kind: 'documentDeletionByFilter'; filter: unknown }
  | { kind: 'documentClear' }
  | { kind: 'documentEdition'; function: string; filter: unknown; context: Record<string, unknown> | null }
  | { kind: 'settingsUpdate'; patch: Record<string, unknown>; reset: boolean; canCreateIndex: boolean }
  | { kind: 'indexCreation'; primaryKey: string | null }
  | { kind: 'indexUpdate'; primaryKey: string | null; newUid: string | null }
  | { kind: 'indexDeletion' }
  | { kind: 'indexSwap'; swaps: SwapSpec[] }
  | { kind: 'taskCancelation'; matched: number[] }
  | { kind: 'taskDeletion'; matched: number[] }
  | { kind: 'networkTopologyChange' }
  | { kind: 'indexCompaction' }
  | { kind: 'dumpCreation' }
  | { kind: 'snapshotCreation' }
  /** A dynamic search rule's patch; null deletes the rule. */
  | { kind: 'dsrUpdate'; uid: string; patch: Record<string, unknown> | null }
  | { kind: 'dsrClear' }
  /** Where and what to export; the key is kept whole here (the details show it hidden). */
  | {
      kind: 'export';
      url: string;
      apiKey: string | null;
      payloadSize: number | null;
      indexes: Record<string, { filter: unknown; overrideSettings: boolean }>;
    };

export interface TaskRecord {
  uid: number;
  batchUid: number | null;
  indexUid: string | null;
  status: TaskStatus;
  type: TaskType;
  canceledBy: number | null;
  details: Record<string, unknown> | null;
  error: ErrorBody | null;
  enqueuedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  customMetadata?: string;
  /** In a network: the leader's task names the other instances' tasks, theirs the leader's. */
  network?: Record<string, unknown>;
  payload: TaskPayload;
}

export interface BatchRecord {
  uid: number;
  taskUids: number[];
  details: Record<string, unknown>;
  stats: {
    totalNbTasks: number;
    status: Record<string, number>;
    types: Record<string, number>;
    indexUids: Record<string, number>;
    progressTrace?: Record<string, string>;
  };
  startedAt: string;
  finishedAt: string | null;
  batchStrategy: string;
}
