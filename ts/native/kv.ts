/**
 * The durable key-value store (one LMDB environment) behind tasks, batches, indexes and keys
 * (↔ `crates/node/src/kv.rs`, over the `kv` crate).
 */
import type * as Native from '../../native/index';
import { binding, call, callSync } from './binding';

/** One write of a commit: a put, or a deletion when `value` is null or absent. */
export interface KvOp {
  db: string;
  key: string;
  value?: Buffer | null;
}

export type KvEntry = Native.KvEntry;

export class KvStore {
  private constructor(private readonly raw: Native.KvStore) {}

  static open(path: string, mapSizeBytes: number): KvStore {
    return new KvStore(callSync(() => binding.KvStore.open(path, mapSizeBytes)));
  }

  /** Opens an existing store read-only, beside the process that writes it. */
  static openReadOnly(path: string, mapSizeBytes: number): KvStore {
    return new KvStore(callSync(() => binding.KvStore.openReadOnly(path, mapSizeBytes)));
  }

  /** Read-only: whether the writer committed since the last call. Opened for writing: false. */
  changed(): boolean {
    return callSync(() => this.raw.changed());
  }

  /** All ops in one transaction, durable when the promise resolves. */
  commit(ops: KvOp[]): Promise<void> {
    // The values travel in one buffer, each op giving its length (negative: a deletion).
    const values = Buffer.concat(ops.flatMap((o) => (o.value ? [o.value] : [])));
    const meta = ops.map((o) => ({ db: o.db, key: o.key, len: o.value ? o.value.length : -1 }));
    return call(() => this.raw.commit(meta, values));
  }

  /** A consistent, compacted copy of the whole store in directory `dir` (as of one moment). */
  copyTo(dir: string): Promise<void> {
    return call(() => this.raw.copyTo(dir));
  }

  scan(db: string): KvEntry[] {
    return callSync(() => this.raw.scan(db));
  }

  get(db: string, key: string): Buffer | null {
    return callSync(() => this.raw.get(db, key));
  }

  /** The bytes of the store's file, and of the pages it uses. */
  sizes(): { file: number; used: number } {
    const [file, used] = callSync(() => this.raw.sizes());
    return { file, used };
  }

  /** Rewrites the store's file without its free pages and goes on with it; its size before and after, in bytes. */
  compact(): Promise<{ before: number; after: number }> {
    return call(() => this.raw.compact());
  }

  close(): void {
    this.raw.close();
  }
}

/** The message of a damaged store file (`invalid_store_file`) whose damage only the caller knows. */
export function damagedFileMessage(file: string, why: string): string {
  return binding.damagedFileMessage(file, why);
}
