/**
 * Batches decided by the log, so that every instance runs the same ones.
 *
 * Autobatching over "what is enqueued now" would give each instance its own batches: one that
 * received tasks 7 and 8 before looking batches them together, one that had only 7 does not,
 * and a batch's outcome (which tasks share a failure, the batch uids) would differ. Here the
 * batch is an entry of the `<stream>-batches` stream: an instance whose worker is idle
 * proposes `nextBatch` over its enqueued tasks, appended only if that stream's last sequence
 * is still the one this instance ran last (JetStream's compare-and-set, not a consensus of our
 * own). Exactly one proposal becomes batch N; every instance runs batch N once it ran N-1 and
 * received N's tasks, and records N in the same transaction as N's outcome
 * (`meta/replication.decided`), so a restart runs N+1 next, or N again if N did not finish
 * (the engine recognises a batch it already applied by its task uids).
 *
 * A proposal is computed from state every instance shares at that point (the tasks enqueued
 * after batches 1..N-1, the indexes those batches left), so a proposal is as good as any
 * other; the race only decides whose is appended.
 *
 * A batch that throws on this instance (a disk error, not a task's own failure, which is an
 * outcome like any other) is not recorded as failed: it is run again after a pause, and the
 * instance reports itself degraded meanwhile, since recording it would leave this instance
 * different from the others.
 */
import type { Logger } from '../logging';
import { type IndexState, nextBatch } from '../tasks/autobatch';
import type { BatchPlan, BatchPlanner } from '../tasks/planner';
import type { LocalQueue } from '../tasks/queue';
import type { TaskRecord } from '../tasks/types';
import { type BatchDecision, decodeDecision, encodeDecision } from './entries';
import { describe, LogUnavailable, type NatsLog } from './nats';
import { StreamReader } from './reader';
import { type Cursor, cursorOp } from './receiver';

export const DECIDED_KEY = 'replication.decided';

export class ReplicatedBatches implements BatchPlanner {
  #decided: number;
  readonly #known = new Map<number, BatchDecision>();
  readonly #reader: StreamReader;
  #retry: { seq: number; at: number; attempts: number } | null = null;
  #timer: NodeJS.Timeout | null = null;
  /** Why this instance cannot run its next batch, else null. */
  blocked: string | null = null;
  /** Runs before a batch is planned, while the worker is idle (the snapshots). */
  beforePlan: (() => Promise<void>) | null = null;

  constructor(
    private readonly log: NatsLog,
    private readonly queue: LocalQueue,
    private readonly node: string,
    private readonly wake: () => void,
    private readonly logger: Logger,
    start: Cursor,
  ) {
    this.#decided = start.seq;
    // Reads the batches stream, remembering the batches this instance has not run yet.
    this.#reader = new StreamReader({
      log,
      which: 'batches',
      logger,
      next: () => this.#decided + 1,
      seen: () => Math.max(this.#decided, ...this.#known.keys()),
      handle: async (m) => {
        try {
          this.#known.set(m.seq, decodeDecision(m.data));
        } catch (err) {
          this.logger.error('replication: a batch that cannot be read is run as empty', {
            seq: m.seq,
            reason: describe(err),
          });
          this.#known.set(m.seq, { tasks: [], indexUid: null, strategy: 'unreadable', node: '' });
        }
        this.wake();
        return true;
      },
    });
  }

  /** The last batch run here. */
  decided(): number {
    return this.#decided;
  }

  start(): void {
    this.#reader.start();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    await this.#reader.stop();
  }

  /** Told the batches stream's last sequence (the health probe); see `StreamReader.nudge`. */
  nudge(lastSeq: number): void {
    this.#reader.nudge(lastSeq);
  }

  #wakeIn(ms: number): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.wake();
    }, ms);
    this.#timer.unref?.();
  }

  async plan(
    enqueued: TaskRecord[],
    indexState: (uid: string) => IndexState,
    maxTasks: number,
  ): Promise<BatchPlan | null> {
    if (this.beforePlan) await this.beforePlan();
    for (;;) {
      const seq = this.#decided + 1;
      if (this.#retry && this.#retry.seq === seq && Date.now() < this.#retry.at) {
        this.#wakeIn(this.#retry.at - Date.now());
        return null;
      }
      const known = this.#known.get(seq);
      if (known) {
        const plan = await this.#planOf(seq, known);
        if (plan === 'skip') continue;
        return plan;
      }
      const next = nextBatch(enqueued, indexState, maxTasks);
      if (!next) return null;
      const decision: BatchDecision = {
        tasks: next.tasks.map((t) => t.uid),
        indexUid: next.indexUid,
        strategy: next.strategy,
        node: this.node,
      };
      let appended: number | null;
      try {
        appended = await this.log.propose(encodeDecision(decision), this.#decided);
      } catch (err) {
        if (!(err instanceof LogUnavailable)) throw err;
        this.blocked = `batches cannot be decided: ${err.message}`;
        this.#wakeIn(500);
        return null;
      }
      this.blocked = null;
      // Another instance's batch came first: it arrives through the stream and wakes the worker.
      if (appended === null) return null;
      this.#known.set(appended, decision);
    }
  }

  /** The plan of batch `seq`; null while its tasks are not all received; 'skip' when it had none left. */
  async #planOf(seq: number, d: BatchDecision): Promise<BatchPlan | null | 'skip'> {
    const tasks: TaskRecord[] = [];
    for (const uid of d.tasks) {
      const t = this.queue.get(uid);
      if (!t) return null; // not received yet: the receiver wakes the worker
      if (t.status === 'enqueued') tasks.push(t);
      else
        this.logger.warn('replication: a batch names a task that is no longer enqueued here', {
          batch: seq - 1,
          task: uid,
          status: t.status,
        });
    }
    const ops = [cursorOp(DECIDED_KEY, { seq, time: null })];
    if (tasks.length === 0) {
      await this.queue.commitOps(ops);
      this.#committed(seq);
      return 'skip';
    }
    return {
      next: { tasks, indexUid: d.indexUid, strategy: d.strategy },
      uid: seq - 1,
      ops,
      announce: d.node === this.node,
      committed: () => this.#committed(seq),
      failed: (err: unknown) => this.#failed(seq, err),
    };
  }

  #committed(seq: number): void {
    this.#decided = seq;
    this.#known.delete(seq);
    if (this.#retry?.seq === seq) this.#retry = null;
    this.blocked = null;
  }

  #failed(seq: number, err: unknown): void {
    const attempts = (this.#retry?.seq === seq ? this.#retry.attempts : 0) + 1;
    const pause = Math.min(30_000, 500 * 2 ** (attempts - 1));
    this.#retry = { seq, at: Date.now() + pause, attempts };
    this.blocked = `batch ${seq - 1} failed on this instance (attempt ${attempts}, next in ${pause} ms): ${describe(err)}`;
    this.logger.error(`replication: ${this.blocked}`);
  }
}
