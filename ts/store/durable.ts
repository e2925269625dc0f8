/**
 * Group commit over the KvStore: callers hand in operations and await the one LMDB
 * transaction that contains them. One commit is in flight at a time; everything that
 * arrives meanwhile goes into the next one, so N concurrent enqueues cost about two
 * fsyncs instead of N, and commits land in call order.
 */
import type { KvOp, KvStore } from '../native';

interface Pending {
  ops: KvOp[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Address space reserved for the task store (LMDB grows its file only as it fills). */
export const META_MAP_SIZE = 20 * 1024 ** 3;

export class Durable {
  private queue: Pending[] = [];
  private running = false;

  constructor(readonly kv: KvStore) {}

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
      try {
        await this.kv.commit(group.flatMap((p) => p.ops));
        for (const p of group) p.resolve();
      } catch (err) {
        for (const p of group) p.reject(err);
      }
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
