/** Task filters shared by `GET /tasks`, `GET /batches`, cancelation and deletion. */
import { isoToMicros } from '../util/time';
import type { TaskRecord } from './types';

export interface TaskFilter {
  uids?: Set<number>;
  batchUids?: Set<number>;
  statuses?: Set<string>;
  types?: Set<string>;
  indexUids?: Set<string>;
  canceledBy?: Set<number>;
  beforeEnqueuedAt?: bigint;
  afterEnqueuedAt?: bigint;
  beforeStartedAt?: bigint;
  afterStartedAt?: bigint;
  beforeFinishedAt?: bigint;
  afterFinishedAt?: bigint;
}

function inRange(iso: string | null, before?: bigint, after?: bigint): boolean {
  if (before === undefined && after === undefined) return true;
  if (iso === null) return false;
  const t = isoToMicros(iso);
  if (t === null) return false;
  if (before !== undefined && !(t < before)) return false;
  if (after !== undefined && !(t > after)) return false;
  return true;
}

export function matchesTask(f: TaskFilter, t: TaskRecord, startedAtOverride?: string | null): boolean {
  if (f.uids && !f.uids.has(t.uid)) return false;
  if (f.batchUids && (t.batchUid === null || !f.batchUids.has(t.batchUid))) return false;
  if (f.statuses && !f.statuses.has(t.status)) return false;
  if (f.types && !f.types.has(t.type)) return false;
  if (f.indexUids && (t.indexUid === null || !f.indexUids.has(t.indexUid))) return false;
  if (f.canceledBy && (t.canceledBy === null || !f.canceledBy.has(t.canceledBy))) return false;
  if (!inRange(t.enqueuedAt, f.beforeEnqueuedAt, f.afterEnqueuedAt)) return false;
  if (!inRange(startedAtOverride ?? t.startedAt, f.beforeStartedAt, f.afterStartedAt)) return false;
  if (!inRange(t.finishedAt, f.beforeFinishedAt, f.afterFinishedAt)) return false;
  return true;
}
