/**
 * Quarry embedded in a Node process: the same engine, task queue and crash guarantees as the
 * server (both open the data directory through `runtime.ts`), called directly instead of over
 * HTTP. Writes are tasks, as on the server: they resolve once the task is on disk, and
 * `.waitTask()` waits for its end. Calls are checked by the HTTP layer's own schemas and fail
 * with `QuarryError`s that carry the server's error codes.
 *
 *   const quarry = await Quarry.open('./data.ms');
 *   await quarry.index('movies').addDocuments([{ id: 1, title: 'Carol' }]).waitTask();
 *   const { hits } = await quarry.index('movies').search('carol');
 *   await quarry.close();
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FULL_ACCESS } from '../auth/guard';
import { createIndex, deleteIndex, swapIndexes, updateIndex } from '../commands/indexes';
import { cancelTasks, deleteTasks } from '../commands/tasks';
import { type Config, loadConfig } from '../config';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { createLogger, type Logger } from '../logging';
import { indexView, notFound } from '../indexes/registry';
import { openReadOnlyRuntime, openRuntime, type ReadOnlyRuntime, type Runtime } from '../runtime';
import { checkIndexUid, checkSwaps } from '../schemas/indexes';
import { parseCancelOrDeleteQuery, parseListQuery } from '../schemas/tasks';
import { SearchService } from '../search/service';
import { summaryView, taskNotFound, taskView } from '../tasks/queue';
import type { TaskRecord } from '../tasks/types';
import { asQuarryError, guarded, QuarryError } from './errors';
import { QuarryIndex } from './index-handle';
import type {
  EnqueuedTask,
  FacetSearchResponse,
  IndexInfo,
  MultiSearchRequest,
  SearchResponse,
  Task,
  TaskProgress,
  TaskPromise,
  TasksPage,
  TasksQuery,
  WaitOptions,
} from './types';

export interface QuarryOptions {
  /**
   * The data directory, created if missing. Without one (and without `--db-path` in
   * `options`), the index lives in a new temporary directory that `close()` deletes, as it is
   * deleted if the process exits first: for tests and scripts.
   */
  dbPath?: string;
  /**
   * Any start-up option, as the server takes them on its command line (`['--experimental-models-dir', dir]`,
   * `['--max-indexing-threads', '2']`). The environment and `./config.toml` are not read.
   */
  options?: string[];
  /** Log level to stderr (default `warn`); or a winston logger of your own. */
  logLevel?: Config['logLevel'];
  logger?: Logger;
  /**
   * Opens a data directory that another process (a server, or a `Quarry` without `readOnly`)
   * has open for writing, to search and read it from more processes (cluster mode, pm2,
   * workers): any number of read-only `Quarry`s may open it beside its one writer. Nothing is
   * written and no lock is taken, so a reader never blocks the writer; each read sees the
   * writer's committed changes (the index's generation is checked on every read, one LMDB
   * read). Every write throws a `QuarryError` `read_only_instance`. The directory must have
   * been created by a writer first; `dbPath` is required. One opening per process: a process
   * that writes a directory searches it through its own `Quarry`.
   */
  readOnly?: boolean;
}

/** The library's caller is the whole instance: there is no key to check in-process. */
const OWNER = FULL_ACCESS;

const DEFAULT_TIMEOUT_MS = 5 * 60_000;

export class Quarry {
  readonly #runtime: Runtime | ReadOnlyRuntime;
  readonly #deps: Deps;
  readonly #search: SearchService;
  #closed = false;
  /** The directory `open()` made when given none, deleted by `close()`. */
  readonly #temporary: TemporaryDir | null;
  /** Who waits for the next batch to end (see `nextChange`). */
  readonly #waiters = new Set<() => void>();

  private constructor(runtime: Runtime | ReadOnlyRuntime, temporary: TemporaryDir | null) {
    this.#runtime = runtime;
    this.#temporary = temporary;
    this.#deps = runtime.deps;
    this.#search = new SearchService(runtime.deps);
    if ('worker' in runtime)
      runtime.worker.onBatchFinished(() => {
        for (const wake of this.#waiters) wake();
        this.#waiters.clear();
      });
  }

  /**
   * Opens (creating if needed) a data directory. Fails if another process (a server, or another
   * `Quarry`) has it open, or if it holds another format (see `--upgrade-db`).
   */
  static async open(where: string | QuarryOptions = {}): Promise<Quarry> {
    const o: QuarryOptions = typeof where === 'string' ? { dbPath: where } : where;
    if (o.readOnly) return Quarry.openReadOnly(o);
    const named =
      o.dbPath !== undefined || (o.options ?? []).some((a) => a === '--db-path' || a.startsWith('--db-path='));
    const temporary = named ? null : new TemporaryDir();
    try {
      const dbPath = o.dbPath ?? temporary?.dir;
      const args = ['--no-analytics', ...(dbPath ? ['--db-path', dbPath] : []), ...(o.options ?? [])];
      const config = loadConfig(args, {}, { implicitConfigFile: false });
      const logger = o.logger ?? createLogger(o.logLevel ?? 'warn', config.logsMode);
      return new Quarry(await guarded(() => openRuntime(config, logger)), temporary);
    } catch (err) {
      temporary?.remove();
      throw err;
    }
  }

  /** `open` with `readOnly`: beside a writer, never a temporary directory. */
  private static async openReadOnly(o: QuarryOptions): Promise<Quarry> {
    const args = ['--no-analytics', ...(o.dbPath !== undefined ? ['--db-path', o.dbPath] : []), ...(o.options ?? [])];
    if (!args.some((a) => a === '--db-path' || a.startsWith('--db-path=')))
      throw new TypeError('Quarry.open: `readOnly` needs the `dbPath` of a data directory a writer has created');
    const config = loadConfig(args, {}, { implicitConfigFile: false });
    const logger = o.logger ?? createLogger(o.logLevel ?? 'warn', config.logsMode);
    return new Quarry(await guarded(() => openReadOnlyRuntime(config, logger)), null);
  }

  /** Whether this `Quarry` was opened with `readOnly` (every write then throws `read_only_instance`). */
  get readOnly(): boolean {
    return !('worker' in this.#runtime);
  }

  /** The data directory, resolved. */
  get dbPath(): string {
    return this.#deps.dbPath;
  }

  /** Stops the worker (a running batch ends first), closes the stores and frees the directory. */
  async close(): Promise<void> {
    this.#closed = true;
    try {
      await this.#runtime.close();
    } finally {
      this.#temporary?.remove();
    }
  }

  /** A handle on index `uid` (which need not exist yet: adding documents creates it). */
  index<T extends Record<string, unknown> = Record<string, unknown>>(uid: string): QuarryIndex<T> {
    return new QuarryIndex<T>(this, this.#deps, uid);
  }

  createIndex(uid: string, options: { primaryKey?: string } = {}): TaskPromise {
    return this.write(() => createIndex(this.#deps, checkIndexUid(uid), options.primaryKey ?? null));
  }

  /** Changes an index's primary key and/or renames it (`uid`). */
  updateIndex(uid: string, options: { primaryKey?: string; uid?: string }): TaskPromise {
    return this.write(() => {
      const current = checkIndexUid(uid);
      return updateIndex(
        this.#deps,
        current,
        options.primaryKey ?? null,
        options.uid === undefined ? null : checkIndexUid(options.uid),
      );
    });
  }

  deleteIndex(uid: string): TaskPromise {
    return this.write(() => deleteIndex(this.#deps, checkIndexUid(uid)));
  }

  /** Swaps pairs of indexes (with `rename`, renames the first to the second). */
  swapIndexes(swaps: Array<{ indexes: [string, string]; rename?: boolean }>): TaskPromise {
    return this.write(async () =>
      swapIndexes(
        this.#deps,
        checkSwaps(swaps, () => undefined),
      ),
    );
  }

  async getIndex(uid: string): Promise<IndexInfo> {
    return guarded(() => {
      const e = this.#deps.registry.get(checkIndexUid(uid));
      if (!e) throw notFound(uid);
      return indexView(e);
    });
  }

  async getIndexes(
    options: { offset?: number; limit?: number } = {},
  ): Promise<{ results: IndexInfo[]; offset: number; limit: number; total: number }> {
    const offset = options.offset ?? 0;
    const limit = options.limit ?? 20;
    const all = this.#deps.registry.list();
    return { results: all.slice(offset, offset + limit).map((e) => indexView(e)), offset, limit, total: all.length };
  }

  /** Several searches in one call (as `POST /multi-search`): with `federation`, one merged list. */
  multiSearch<T = Record<string, unknown>>(
    request: MultiSearchRequest & { federation: Record<string, unknown> },
  ): Promise<SearchResponse<T>>;
  multiSearch<T = Record<string, unknown>>(
    request: MultiSearchRequest,
  ): Promise<{ results: Array<SearchResponse<T> & { indexUid: string }> }>;
  async multiSearch(request: MultiSearchRequest): Promise<unknown> {
    return JSON.parse((await guarded(() => this.#search.multiSearch(OWNER, request))).toString());
  }

  async getTask(uid: number): Promise<Task> {
    return guarded(() => {
      const t = this.#deps.queue.get(uid);
      if (!t) throw taskNotFound(uid);
      return taskView(t) as unknown as Task;
    });
  }

  async getTasks(query: TasksQuery = {}): Promise<TasksPage> {
    return guarded(() => {
      const q = parseListQuery(queryParams(query));
      const page = this.#deps.queue.list(q.filter, q.limit, q.from, q.reverse, () => true);
      return {
        results: page.results.map((t) => taskView(t) as unknown as Task),
        total: page.total,
        limit: page.limit,
        from: page.from,
        next: page.next,
      };
    });
  }

  /** Cancels the enqueued or processing tasks `query` matches (a `taskCancelation` task). */
  cancelTasks(query: TasksQuery): TaskPromise {
    const params = queryParams(query);
    return this.write(() =>
      cancelTasks(this.#deps, OWNER, parseCancelOrDeleteQuery(params, 'cancel'), originalFilter(params)),
    );
  }

  /** Deletes the finished tasks `query` matches from the history (a `taskDeletion` task). */
  deleteTasks(query: TasksQuery): TaskPromise {
    const params = queryParams(query);
    return this.write(() =>
      deleteTasks(this.#deps, OWNER, parseCancelOrDeleteQuery(params, 'delete'), originalFilter(params)),
    );
  }

  /**
   * Resolves with task `uid` once it has ended (succeeded, failed or canceled): a failed task
   * resolves too, with its `error`, as the clients' `waitTask` does.
   */
  async waitForTask(uid: number, options: WaitOptions = {}): Promise<Task> {
    let last: Task | null = null;
    for await (const p of this.watchTask(uid, options.timeoutMs)) {
      options.onProgress?.(p);
      last = p.task;
    }
    return last!;
  }

  /**
   * The task's progress as it happens: one item at once, then one each time its status or its
   * batch's progress changes, the last one when it has ended.
   */
  async *watchTask(uid: number, timeoutMs = DEFAULT_TIMEOUT_MS): AsyncGenerator<TaskProgress> {
    const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : Infinity;
    let seen = '';
    for (;;) {
      const t = this.#deps.queue.get(uid);
      if (!t) throw asQuarryError(taskNotFound(uid));
      const progress = (
        t.status === 'processing' && t.batchUid !== null ? this.#deps.queue.batchProgress(t.batchUid) : null
      ) as TaskProgress['progress'];
      const key = `${t.status}|${JSON.stringify(progress)}`;
      if (key !== seen) {
        seen = key;
        yield { task: taskView(t) as unknown as Task, progress };
      }
      if (isFinished(t)) return;
      if (this.#closed) throw new Error(`Quarry was closed while task ${uid} was ${t.status}`);
      if (Date.now() > deadline)
        throw new Error(`Task ${uid} did not end within ${timeoutMs} ms (it is ${t.status}; it goes on)`);
      await this.nextChange();
    }
  }

  /** Resolves when a batch ends, or after a short while (progress moves within a batch). */
  private nextChange(): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, 25);
      this.#waiters.add(wake);
    });
  }

  /** @internal A write: its task once it is on disk, with `.waitTask()`. */
  write(enqueue: () => Promise<TaskRecord>): TaskPromise {
    const enqueued = guarded(async () => {
      if (this.#closed) throw new Error('Quarry is closed');
      if (this.readOnly)
        throw new ApiError(
          'read_only_instance',
          `This Quarry opened \`${this.dbPath}\` read-only: writes go through the process that opened it without \`readOnly\`.`,
        );
      return summaryView(await enqueue()) as unknown as EnqueuedTask;
    });
    return Object.assign(enqueued, {
      waitTask: (options?: WaitOptions) => enqueued.then((t) => this.waitForTask(t.taskUid, options)),
    });
  }

  /** @internal */
  get searchService(): SearchService {
    return this.#search;
  }
}

/** A temporary data directory: removed by `remove()`, or when the process exits before that. */
class TemporaryDir {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-'));
  readonly #onExit = () => fs.rmSync(this.dir, { recursive: true, force: true });

  constructor() {
    process.once('exit', this.#onExit);
  }

  remove(): void {
    process.removeListener('exit', this.#onExit);
    this.#onExit();
  }
}

function isFinished(t: TaskRecord): boolean {
  return t.status === 'succeeded' || t.status === 'failed' || t.status === 'canceled';
}

/** The query string a task cancelation or deletion records as its `originalFilter`. */
function originalFilter(params: Record<string, string>): string {
  return `?${new URLSearchParams(params)}`;
}

/** A `TasksQuery` as `GET /tasks`'s query parameters. */
function queryParams(query: TasksQuery): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.join(',') : v instanceof Date ? v.toISOString() : String(v);
  }
  return out;
}

export { QuarryError, asQuarryError };
export type { FacetSearchResponse };
