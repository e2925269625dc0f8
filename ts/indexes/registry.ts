/**
 * The index registry: uid → directory, dates and primary key, kept in the KvStore
 * `indexes` db, plus the open engine handles.
 *
 * Directories are named by random ids, not by uid, so renames and swaps are a single
 * atomic registry commit (together with the task that does them) and never a sequence
 * of directory renames a crash could interrupt. Directories no entry points to are
 * leftovers of interrupted creations and are removed at start-up.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ApiError } from '../errors/api-error';
import { type KvOp, NativeIndex } from '../native';
import { type Durable, jsonValue } from '../store/durable';

export interface IndexEntry {
  uid: string;
  dir: string;
  createdAt: string;
  updatedAt: string;
  primaryKey: string | null;
}

const DB = 'indexes';

/**
 * Opened read-only beside the writing process (`Quarry.open(dir, { readOnly: true })`): the
 * registry follows the writer's commits, read again from the task store whenever it changed,
 * and `changed` hears of it (the other records are read again there).
 */
export interface FollowWriter {
  changed(): void;
}

export class IndexRegistry {
  private readonly entries = new Map<string, IndexEntry>();
  private readonly handles = new Map<string, NativeIndex>();

  constructor(
    private readonly durable: Durable,
    readonly root: string,
    private readonly follow: FollowWriter | null = null,
  ) {
    if (!follow) fs.mkdirSync(root, { recursive: true });
    this.load();
  }

  private load(): void {
    this.entries.clear();
    for (const { value } of this.durable.kv.scan(DB)) {
      const e = JSON.parse(value.toString()) as IndexEntry;
      this.entries.set(e.uid, e);
    }
  }

  /**
   * Read-only: reads the entries again if the writer committed anything since the last call
   * (one read of LMDB's meta pages), and closes the handles of directories no entry names any
   * more (an index deleted, or swapped away). Every lookup calls it first.
   */
  private current(): void {
    if (!this.follow || !this.durable.kv.changed()) return;
    this.load();
    const live = new Set([...this.entries.values()].map((e) => e.dir));
    for (const [dir, h] of this.handles) {
      if (live.has(dir)) continue;
      this.handles.delete(dir);
      h.close();
    }
    this.follow.changed();
  }

  /** Whether this registry follows a writing process instead of being written (read-only). */
  get readOnly(): boolean {
    return this.follow !== null;
  }

  /** Removes directories of creations that never committed. */
  removeOrphans(): void {
    const known = new Set([...this.entries.values()].map((e) => e.dir));
    for (const name of fs.readdirSync(this.root)) {
      if (!known.has(name)) fs.rmSync(path.join(this.root, name), { recursive: true, force: true });
    }
  }

  get(uid: string): IndexEntry | undefined {
    this.current();
    return this.entries.get(uid);
  }

  has(uid: string): boolean {
    this.current();
    return this.entries.has(uid);
  }

  require(uid: string): IndexEntry {
    this.current();
    const e = this.entries.get(uid);
    if (!e) throw notFound(uid);
    return e;
  }

  /** All entries sorted by uid (byte order). */
  list(): IndexEntry[] {
    this.current();
    return [...this.entries.values()].sort((a, b) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
  }

  /** The open engine handle of an index (opened on first use). */
  handle(uid: string): NativeIndex {
    return this.handleOf(this.require(uid));
  }

  handleOf(entry: IndexEntry): NativeIndex {
    let h = this.handles.get(entry.dir);
    if (!h) {
      // A committed entry's directory must be there: a missing one is damage, never a new empty index.
      const committed = this.entries.get(entry.uid)?.dir === entry.dir;
      const dir = path.join(this.root, entry.dir);
      // Read-only, an index is opened as the writer left it: no recovery, nothing written.
      h = this.follow ? NativeIndex.openReadOnly(dir) : NativeIndex.open(dir, committed);
      this.handles.set(entry.dir, h);
    }
    return h;
  }

  /**
   * Opens every index, so that damaged files are found at start-up rather than by a request:
   * `repaired` hears of each inverted index rebuilt from its documents; the indexes that could
   * not be opened, or that `damaged` says are, are returned with their errors.
   */
  openAll(
    repaired: (uid: string, why: string) => void,
    damaged: (entry: IndexEntry) => Error | null = () => null,
  ): { entry: IndexEntry; error: Error }[] {
    const failed: { entry: IndexEntry; error: Error }[] = [];
    for (const entry of this.list()) {
      // Known damaged (`damaged`): never opened in this process.
      const known = damaged(entry);
      if (known) {
        failed.push({ entry, error: known });
        continue;
      }
      try {
        const why = this.handleOf(entry).repaired();
        if (why !== null) repaired(entry.uid, why);
      } catch (err) {
        failed.push({ entry, error: err instanceof Error ? err : new Error(String(err)) });
      }
    }
    return failed;
  }

  /**
   * Removes a damaged index from the registry, its files moved to `into` (for inspection,
   * never read again).
   */
  async setAside(entry: IndexEntry, into: string): Promise<string> {
    fs.mkdirSync(into, { recursive: true });
    const dest = path.join(into, `${entry.uid}-${entry.dir}`);
    await this.commit([this.deleteOp(entry.uid)]);
    this.applyDelete(entry.uid);
    if (fs.existsSync(path.join(this.root, entry.dir))) fs.renameSync(path.join(this.root, entry.dir), dest);
    return dest;
  }

  /** A new entry with a fresh directory; not visible until `put` is committed and applied. */
  newEntry(uid: string, now: string): IndexEntry {
    return { uid, dir: randomUUID(), createdAt: now, updatedAt: now, primaryKey: null };
  }

  putOp(e: IndexEntry): KvOp {
    return { db: DB, key: e.uid, value: jsonValue(e) };
  }

  deleteOp(uid: string): KvOp {
    return { db: DB, key: uid, value: null };
  }

  /** Applies committed registry operations to the in-memory view. */
  applyPut(e: IndexEntry): void {
    this.entries.set(e.uid, e);
  }

  applyDelete(uid: string): void {
    this.entries.delete(uid);
  }

  /** Where an entry's files are. */
  pathOf(entry: IndexEntry): string {
    return path.join(this.root, entry.dir);
  }

  /** Closes the handle and deletes the files of a directory no entry references any more. */
  destroyDir(dir: string): void {
    const h = this.handles.get(dir);
    this.handles.delete(dir);
    try {
      h?.close();
    } finally {
      fs.rmSync(path.join(this.root, dir), { recursive: true, force: true });
    }
  }

  closeAll(): void {
    for (const h of this.handles.values()) h.close();
    this.handles.clear();
  }

  commit(ops: KvOp[]): Promise<void> {
    return this.durable.commit(ops);
  }
}

/** An index as the API shows it. */
export function indexView(e: IndexEntry): {
  uid: string;
  createdAt: string;
  updatedAt: string;
  primaryKey: string | null;
} {
  return { uid: e.uid, createdAt: e.createdAt, updatedAt: e.updatedAt, primaryKey: e.primaryKey };
}

/** A page of the indexes `canSee` lets through, as `GET /indexes` answers it. */
export function indexPage(registry: IndexRegistry, canSee: (uid: string) => boolean, offset: number, limit: number) {
  const visible = registry.list().filter((e) => canSee(e.uid));
  return { results: visible.slice(offset, offset + limit).map(indexView), offset, limit, total: visible.length };
}

export function notFound(uid: string): ApiError {
  return new ApiError('index_not_found', `Index \`${uid}\` not found.`);
}
