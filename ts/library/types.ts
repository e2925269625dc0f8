/**
 * The embedded library's public types. Request shapes are the HTTP layer's own schemas (zod
 * inputs), so the library and the server accept exactly the same parameters; answers are the
 * shapes the server sends.
 */
import type { z } from 'zod';
import type { FetchSchema } from '../schemas/documents';
import type { FacetSearchSchema, SearchSchema } from '../schemas/search';
import type { SimilarSchema } from '../schemas/similar';
import type { TaskRecord, TaskStatus, TaskType } from '../tasks/types';

export type { Settings, SettingsPatch } from '../settings';
export type { TaskStatus, TaskType } from '../tasks/types';

/** A search's parameters: `POST /indexes/{uid}/search`'s body. */
export type SearchParams = z.input<typeof SearchSchema>;
/** A facet search's parameters: `POST /indexes/{uid}/facet-search`'s body. */
export type FacetSearchParams = z.input<typeof FacetSearchSchema>;
/** A similar-documents search: `POST /indexes/{uid}/similar`'s body. */
export type SimilarParams = z.input<typeof SimilarSchema>;
/** A documents fetch: `POST /indexes/{uid}/documents/fetch`'s body. */
export type DocumentsQuery = z.input<typeof FetchSchema>;

export type Document = Record<string, unknown>;

export interface SearchResponse<T = Document> {
  hits: Array<
    T & {
      _formatted?: Record<string, unknown>;
      _rankingScore?: number;
      _rankingScoreDetails?: Record<string, unknown>;
      _matchesPosition?: Record<string, unknown>;
    }
  >;
  query: string;
  processingTimeMs: number;
  limit?: number;
  offset?: number;
  estimatedTotalHits?: number;
  page?: number;
  hitsPerPage?: number;
  totalHits?: number;
  totalPages?: number;
  facetDistribution?: Record<string, Record<string, number>>;
  facetStats?: Record<string, { min: number; max: number }>;
  semanticHitCount?: number;
  /** The search's own uid (a UUID v7), as in an HTTP answer. */
  requestUid?: string;
  [key: string]: unknown;
}

export interface FacetSearchResponse {
  facetHits: Array<{ value: string; count: number }>;
  facetQuery: string | null;
  processingTimeMs: number;
}

export interface MultiSearchRequest {
  queries: Array<SearchParams & { indexUid: string; federationOptions?: { weight?: number; remote?: string } }>;
  federation?: Record<string, unknown> | null;
}

export interface DocumentsPage<T = Document> {
  results: T[];
  offset: number;
  limit: number;
  total: number;
}

export interface IndexInfo {
  uid: string;
  createdAt: string;
  updatedAt: string;
  primaryKey: string | null;
}

export interface IndexStats {
  numberOfDocuments: number;
  rawDocumentDbSize: number;
  avgDocumentSize: number;
  isIndexing: boolean;
  numberOfEmbeddings: number;
  numberOfEmbeddedDocuments: number;
  fieldDistribution: Record<string, number>;
}

/** What a write answers at once: the task, acknowledged and on disk. */
export interface EnqueuedTask {
  taskUid: number;
  indexUid: string | null;
  status: TaskStatus;
  type: TaskType;
  enqueuedAt: string;
  customMetadata?: string;
}

/** A task, as `GET /tasks/{uid}` shows it: the stored record's public fields and its duration. */
export type Task = Pick<
  TaskRecord,
  | 'uid'
  | 'batchUid'
  | 'indexUid'
  | 'status'
  | 'type'
  | 'canceledBy'
  | 'error'
  | 'enqueuedAt'
  | 'startedAt'
  | 'finishedAt'
  | 'customMetadata'
> & {
  details?: Record<string, unknown>;
  duration: string | null;
};

export interface TasksPage {
  results: Task[];
  total: number;
  limit: number;
  from: number | null;
  next: number | null;
}

/**
 * Which tasks: `GET /tasks`'s query parameters, lists as arrays (`{ statuses: ['failed'],
 * indexUids: ['movies'] }`) and dates as `Date`s or RFC 3339 text.
 */
export type TasksQuery = Partial<
  Record<
    'uids' | 'batchUids' | 'indexUids' | 'statuses' | 'types' | 'canceledBy',
    Array<string | number> | string | number
  >
> &
  Partial<
    Record<
      | 'beforeEnqueuedAt'
      | 'afterEnqueuedAt'
      | 'beforeStartedAt'
      | 'afterStartedAt'
      | 'beforeFinishedAt'
      | 'afterFinishedAt',
      Date | string
    >
  > & {
    limit?: number;
    from?: number;
    reverse?: boolean;
  };

/** The progress of a running task, as the batch it runs in reports it. */
export interface TaskProgress {
  task: Task;
  /** `{ steps: [{ currentStep, finished, total }], percentage }` while the task runs, else null. */
  progress: { steps: Array<{ currentStep: string; finished: number; total: number }>; percentage: number } | null;
}

export interface WaitOptions {
  /** Give up with an `Error` after this many ms (default 5 minutes; 0 = never). The task goes on. */
  timeoutMs?: number;
  /** Called whenever the task's status or its batch's progress changes. */
  onProgress?: (p: TaskProgress) => void;
}

/** A write's answer: the enqueued task, and a way to wait for its end. */
export type TaskPromise = Promise<EnqueuedTask> & { waitTask(options?: WaitOptions): Promise<Task> };

/** Documents to add: objects, or bytes / text / a stream in `format`. */
export type DocumentsInput = Document[] | Buffer | Uint8Array | string | AsyncIterable<Buffer | Uint8Array | string>;

export interface AddDocumentsOptions {
  primaryKey?: string;
  /** Format of bytes, text or a stream (default `json`; objects are always JSON). */
  format?: 'json' | 'ndjson' | 'csv';
  csvDelimiter?: string;
  customMetadata?: string;
  /** Fail instead of creating the index when it does not exist. */
  skipCreation?: boolean;
}
