/**
 * Who decides the next batch. On one instance it is `nextBatch` over the enqueued tasks, at
 * once. With the replicated log (`replication/batches.ts`) the batch is the one the log holds
 * next, proposed by whichever instance was first: every instance then runs the same batches,
 * numbered alike, whatever each one had received when it looked.
 */
import type { KvOp } from '../native';
import { type IndexState, type NextBatch, nextBatch } from './autobatch';
import type { TaskRecord } from './types';

export interface BatchPlan {
  next: NextBatch;
  /** The batch's uid when the plan numbers it; else the queue's next. */
  uid?: number;
  /** Written in the transaction that records the batch's outcome (the log's cursor). */
  ops: KvOp[];
  /** Whether this instance announces the batch to webhooks (one instance of a replicated group does). */
  announce: boolean;
  /** Called once the outcome is committed. */
  committed?: () => void;
  /**
   * When set, a batch that throws is not recorded as failed: its tasks go back to `enqueued`
   * and this is told, to run the batch again later (a replicated instance must not record an
   * outcome of its own; see `replication/batches.ts`).
   */
  failed?: (err: unknown) => void;
}

export interface BatchPlanner {
  /** The next batch, or null when there is none now (the worker sleeps until woken). */
  plan(enqueued: TaskRecord[], indexState: (uid: string) => IndexState, maxTasks: number): Promise<BatchPlan | null>;
}

/** One instance's planner: autobatching over what is enqueued. */
export const localPlanner: BatchPlanner = {
  async plan(enqueued, indexState, maxTasks) {
    const next = nextBatch(enqueued, indexState, maxTasks);
    return next ? { next, ops: [], announce: true } : null;
  },
};
