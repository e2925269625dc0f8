/**
 * Group commit over the KvStore: callers hand in operations and await the one LMDB
 * transaction that contains them. One commit is in flight at a time; everything that
 * arrives meanwhile goes into the next one, so N concurrent enqueues cost about two
 * fsyncs instead of N, and commits land in call order.
 *
 * Stores that keep an in-memory view of their records (keys, features, network, webhooks)
 * `watch` their database instead of updating the view themselves after a commit: the view then
 * follows every committed op in commit order, whoever committed it (this instance's route, or
 * the replicated log's receiver applying another instance's change; see `replication/`).
 */
import type { KvOp, KvStore } from '../native';

interface Pending {
  ops: KvOp[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Address space reserved for the task store (LMDB grows its file only as it fills). */
export const META_MAP_SIZE = 20 * 1024 ** 3;

/** What a store of instance-wide records writes through (a `Durable`, or a replicated one). */
export interface Records {
  readonly kv: KvStore;
  /** Resolves once `ops` are committed and every watcher of their databases has seen them. */
  commit(ops: KvOp[]): Promise<void>;
  /** Calls `listener` with each committed op on `db`, in commit order. */
  watch(db: string, listener: (op: KvOp) => void): void;
}

export class Durable implements Records {
  private queue: Pending[] = [];
  private running = false;
  private readonly watchers = new Map<string, Array<(op: KvOp) => void>>();

  constructor(readonly kv: KvStore) {}

  watch(db: string, listener: (op: KvOp) => void): void {
    const list = this.watchers.get(db) ?? [];
    list.push(listener);
    this.watchers.set(db, list);
  }

  commit(ops: KvOp[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ops, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0) {
      const group = this.queue;
      this.queue = [];
      const ops = group.flatMap((p) => p.ops);
      try {
        await this.kv.commit(ops);
      } catch (err) {
        for (const p of group) p.reject(err);
        continue;
      }
      // Committed: the views follow before anyone hears of it (watchers only parse records).
      for (const op of ops) for (const listener of this.watchers.get(op.db) ?? []) listener(op);
      for (const p of group) p.resolve();
    }
    this.running = false;
  }
}

export function jsonValue(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value));
}

/** Keys sort like numbers. */
export function uidKey(uid: number): string {
  return String(uid).padStart(10, '0');
}
