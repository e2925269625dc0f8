/**
 * One open data directory: the durable store, registry, keys, features, queue, worker and
 * the services around them, everything but HTTP. The server (`server.ts`) puts a listener in
 * front of it; the embedded library (`library/`) calls it directly. Both get the same engine,
 * the same task queue and the same crash guarantees, because both open it here.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeGuard } from './auth/guard';
import { KeyStore } from './auth/keys';
import type { Config } from './config';
import type { Deps } from './deps';
import { archives, writeSnapshot } from './dumps/create';
import { importAtStartup } from './dumps/import';
import { Exporter } from './export/run';
import { FeatureStore } from './features';
import { ApiError } from './errors/api-error';
import { type IndexEntry, IndexRegistry } from './indexes/registry';
import type { Logger } from './logging';
import { Metrics } from './metrics/metrics';
import { configureIndexing, configureModels, configureOutbound, configureRemoteEmbedders, KvStore } from './native';
import { networkedQueue } from './network/forward';
import { rebalancer } from './network/rebalance';
import { NetworkStore } from './network/state';
import { Replica } from './replication/replica';
import { enqueueOnce } from './replication/writes';
import { ResponseBudget } from './http/response-budget';
import { SearchLimiter } from './search/limiter';
import { SearchRules } from './search/rules';
import { checkDataDirReadOnly, DataDirError, lockDataDir, prepareDataDir } from './startup/data-dir';
import { walkStores } from './startup/store-walk';
import { Durable, META_MAP_SIZE } from './store/durable';
import { TaskDbCompaction } from './tasks/compaction';
import { openQueue, type TaskQueue } from './tasks/queue';
import { Worker } from './tasks/worker';
import { createAnalytics } from './telemetry';
import { collectAfterSent, releaseAfterBurst } from './util/memory';
import { WebhookDispatcher } from './webhooks/delivery';
import { WebhookStore } from './webhooks/store';
import { ChatStore } from './chats/settings';

export interface Runtime {
  deps: Deps;
  worker: Worker;
  /**
   * Called when the runtime must be closed and opened again: a replicated instance that fell
   * behind the log's retention starts again from the group's latest snapshot.
   */
  onRestartNeeded(listener: (reason: string) => void): void;
  /** Stops the clocks and the worker (the running batch finishes), closes the stores, unlocks. */
  close(): Promise<void>;
}

/**
 * Opens `config.dbPath` (importing a dump or snapshot first when asked), locks it, checks its
 * format, recovers interrupted tasks and starts the worker.
 */
export async function openRuntime(config: Config, logger: Logger): Promise<Runtime> {
  configureNative(config);
  configureIndexing(config.maxIndexingThreads, config.maxIndexingMemory);
  const dbPath = path.resolve(config.dbPath);
  await importAtStartup(config, dbPath, logger);
  const lock = lockDataDir(dbPath);
  let kv: KvStore | null = null;
  let replica: Replica | null = null;
  try {
    // A replicated instance may start from the group's snapshot, before anything is opened.
    if (config.replication)
      replica = await Replica.join(config.replication, dbPath, logger.child({ target: 'quarry::replication' }));
    prepareDataDir(dbPath, config.upgradeDb, logger);
    // Every LMDB store is read whole by another process first: a damaged page must not kill this one.
    const damaged = walkStores([path.join(dbPath, 'tasks'), ...indexStores(dbPath)]);
    const tasks = damaged.get(path.join(dbPath, 'tasks'));
    if (tasks !== undefined) throw taskStoreDamaged(tasks, replica !== null);
    kv = KvStore.open(path.join(dbPath, 'tasks'), META_MAP_SIZE);
    return await openStores(config, logger, dbPath, kv, () => lock.release(), replica, damaged);
  } catch (err) {
    const failure =
      err instanceof ApiError && err.code === 'invalid_store_file'
        ? taskStoreDamaged(err.message, replica !== null)
        : err;
    await replica?.close();
    kv?.close();
    lock.release();
    throw failure;
  }
}

/** The process-wide native settings every opening gives first: outbound allowlist, models, remote embedders. */
function configureNative(config: Config): void {
  configureOutbound(config.allowedNetworks);
  configureModels(config.modelsDir, config.onnxRuntimePath);
  configureRemoteEmbedders(config.restEmbedderTimeoutSeconds, config.restEmbedderMaxRetrySeconds);
}

/** The experimental features over `records`, with those the command line turns on. */
function openFeatures(records: ConstructorParameters<typeof FeatureStore>[0], config: Config): FeatureStore {
  const features = new FeatureStore(records);
  features.enableAtStartup({ metrics: config.enableMetrics, logsRoute: config.enableLogsRoute });
  features.enableAtStart({ containsFilter: config.containsFilterAtStart, legacySearch: config.legacySearchAtStart });
  return features;
}

/** The bound on searches at once and waiting, from the options. */
function searchLimiterOf(config: Config): SearchLimiter {
  return new SearchLimiter(
    config.searchesPerCore * os.availableParallelism(),
    config.searchQueueSize,
    config.dropSearchAfterSeconds * 1000,
  );
}

/** A data directory opened read-only beside the process that writes it: no worker, no lock. */
export interface ReadOnlyRuntime {
  deps: Deps;
  close(): Promise<void>;
}

/**
 * Opens `config.dbPath` read-only, beside the one process that has it open for writing (a
 * server or a `Quarry`), for searches and reads in more processes of the same app. Nothing is
 * written and no lock taken: the stores are opened `MDB_RDONLY` (LMDB lets any number of
 * processes read beside one writer, and a reader never blocks its commits). The records read
 * here (the registry, features, keys, network, search rules, the task list) follow the
 * writer's commits: the registry checks the task store's last transaction on every lookup and
 * has them read again when it moved; each index follows its own generation (engine,
 * `index/read_only.rs`). Writes are refused by the caller (`library/quarry.ts`).
 */
export async function openReadOnlyRuntime(config: Config, logger: Logger): Promise<ReadOnlyRuntime> {
  configureNative(config);
  const dbPath = path.resolve(config.dbPath);
  checkDataDirReadOnly(dbPath);
  const kv = KvStore.openReadOnly(path.join(dbPath, 'tasks'), META_MAP_SIZE);
  try {
    const durable = new Durable(kv);
    // Read again whole when the writer commits; each time on a `Durable` of their own, so
    // that the watchers of the stores replaced go with them.
    const records = () => {
      const own = new Durable(kv);
      const keys = new KeyStore(own, config.masterKey);
      const features = openFeatures(own, config);
      return {
        keys,
        features,
        network: new NetworkStore(own),
        searchRules: new SearchRules(own),
        webhooks: new WebhookStore(own, null),
        chats: new ChatStore(own),
        guard: makeGuard(keys, config.masterKey, null),
      };
    };
    // The task list is read again on demand only, once the writer has committed.
    let queue: ReturnType<typeof openQueue> | null = null;
    const deps = {} as Deps;
    const registry = new IndexRegistry(durable, path.join(dbPath, 'indexes'), {
      changed: () => {
        Object.assign(deps, records());
        queue = null;
      },
    });
    const searchLimiter = searchLimiterOf(config);
    const responseBudget: ResponseBudget = new ResponseBudget(
      config.searchResponseBudget,
      () => undefined,
      () => undefined,
    );
    const currentQueue = () => {
      registry.list();
      queue ??= openQueue(durable);
      return queue;
    };
    Object.assign(deps, records(), {
      config,
      logger,
      registry,
      searchLimiter,
      responseBudget,
      updateFiles: path.join(dbPath, 'update_files'),
      dbPath,
      kv,
      metrics: new Metrics({
        kv,
        registry,
        tasks: () => currentQueue().allTasks(),
        batches: () => currentQueue().allBatches(),
        searchLimiter,
        taskQueueMaxSize: META_MAP_SIZE,
      }),
      analytics: null,
      compaction: new TaskDbCompaction(kv),
      replica: null,
    });
    Object.defineProperty(deps, 'queue', { get: currentQueue, enumerable: true });
    let closed: Promise<void> | null = null;
    return {
      deps,
      close() {
        closed ??= (async () => {
          registry.closeAll();
          kv.close();
        })();
        return closed;
      },
    };
  } catch (err) {
    kv.close();
    throw err;
  }
}

/** The LMDB store directories of the index directories on disk. */
function indexStores(dbPath: string): string[] {
  const root = path.join(dbPath, 'indexes');
  if (!fs.existsSync(root)) return [];
  return fs
    .readdirSync(root)
    .map((d) => path.join(root, d, 'store'))
    .filter((d) => fs.existsSync(d));
}

async function openStores(
  config: Config,
  logger: Logger,
  dbPath: string,
  kv: KvStore,
  unlock: () => void,
  replica: Replica | null,
  damagedStores: Map<string, string> = new Map(),
): Promise<Runtime> {
  const durable = new Durable(kv);
  const updateFiles = path.join(dbPath, 'update_files');
  const queue = openQueue(durable);
  // Replicated, the instance-wide records change through the log, and the log orders batches.
  let worker: Worker | null = null;
  await replica?.adopt(durable);
  const wired = replica?.attach(queue, durable, updateFiles, () => worker?.wake());
  const records = wired?.records ?? durable;
  const registry = new IndexRegistry(durable, path.join(dbPath, 'indexes'));
  const keys = new KeyStore(records, config.masterKey);
  if (!replica) await keys.ensureDefaults();
  const features = openFeatures(records, config);
  const network = new NetworkStore(records);
  const searchRules = new SearchRules(durable);
  const webhooks = new WebhookStore(
    records,
    config.taskWebhookUrl ? { url: config.taskWebhookUrl, authorization: config.taskWebhookAuthorization } : null,
  );
  const chats = new ChatStore(records);
  const dirs = { dumpDir: path.resolve(config.dumpDir), snapshotDir: path.resolve(config.snapshotDir) };
  const sources = { kv, queue, registry, keys, features, network, searchRules, webhooks, chats, dbPath, updateFiles };
  worker = new Worker(
    queue,
    registry,
    updateFiles,
    logger.child({ target: 'quarry::tasks' }),
    config.maxBatchedTasks,
    () => features.get().getTaskDocumentsRoute,
    rebalancer(network, registry, config.remoteTimeoutMs),
    archives(sources, dirs),
    searchRules,
    wired?.planner,
    new Exporter({ registry, features, logger: logger.child({ target: 'quarry::export' }) }),
  );
  await worker.recover();
  await checkIndexes(registry, config, dbPath, replica !== null, logger, damagedStores);
  await prepareColumns(registry, logger);
  const dispatcher = new WebhookDispatcher(webhooks, logger.child({ target: 'quarry::webhooks' }));
  worker.onBatchFinished((tasks, announce) => {
    if (announce) dispatcher.batchFinished(tasks);
  });

  const searchLimiter = searchLimiterOf(config);
  const memoryLogger = logger.child({ target: 'quarry::memory' });
  const responseBudget: ResponseBudget = new ResponseBudget(
    config.searchResponseBudget,
    releaseAfterBurst(
      () => responseBudget.inFlight > 0,
      (err) => memoryLogger.warn('releasing memory after a burst failed', { error: String(err) }),
    ),
    collectAfterSent(),
  );
  // Writes are enqueued through the network: a leader forwards index writes (see network/forward.ts).
  const taskQueue = replica ? replica.queue(queue) : queue;
  const routedQueue = networkedQueue(taskQueue, network, features, config.remoteTimeoutMs);
  const analytics = createAnalytics(config, dbPath, registry, features, logger);
  const metrics = new Metrics({
    kv,
    registry,
    tasks: () => queue.allTasks(),
    batches: () => queue.allBatches(),
    searchLimiter,
    taskQueueMaxSize: META_MAP_SIZE,
  });
  const deps: Deps = {
    config,
    logger,
    queue: routedQueue,
    registry,
    keys,
    features,
    network,
    guard: makeGuard(keys, config.masterKey, replica ? () => replica.catchUp() : null),
    searchLimiter,
    responseBudget,
    updateFiles,
    dbPath,
    kv,
    searchRules,
    metrics,
    webhooks,
    chats,
    analytics,
    compaction: new TaskDbCompaction(kv),
    replica,
  };

  worker.start();
  // The group's snapshots are built in a directory of their own each, removed once published.
  const replicaSnapshot = async () => {
    fs.mkdirSync(dirs.snapshotDir, { recursive: true });
    const dir = fs.mkdtempSync(path.join(dirs.snapshotDir, '.replication-'));
    try {
      return await writeSnapshot(sources, dir, []);
    } catch (err) {
      // A full disk leaves no directory behind (the archive's own files are removed by `build`).
      fs.rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  };
  if (replica) await replica.start(keys, replicaSnapshot);
  const scheduled = config.scheduleSnapshotSeconds;
  const snapshots =
    scheduled === null ? null : setInterval(() => enqueueSnapshot(taskQueue, logger, scheduled), scheduled * 1000);
  snapshots?.unref();
  analytics?.start();
  let closed: Promise<void> | null = null;
  const restartListeners: Array<(reason: string) => void> = [];
  if (replica)
    replica.onBehind = (reason) => {
      for (const l of restartListeners) l(reason);
    };
  return {
    deps,
    worker,
    onRestartNeeded: (listener) => void restartListeners.push(listener),
    close() {
      closed ??= (async () => {
        if (snapshots) clearInterval(snapshots);
        analytics?.stop();
        await replica?.close();
        await worker!.stop();
        registry.closeAll();
        kv.close();
        unlock();
      })();
      return closed;
    },
  };
}

/**
 * A scheduled snapshot: a task like `POST /snapshots`'s, enqueued by the clock. In a
 * replicated group each instance's clock asks; one task per period is enqueued.
 */
function enqueueSnapshot(queue: TaskQueue, logger: Logger, periodSeconds: number): void {
  const period = Math.floor(Date.now() / 1000 / periodSeconds);
  enqueueOnce(
    queue,
    { indexUid: null, type: 'snapshotCreation', details: null, payload: { kind: 'snapshotCreation' } },
    `scheduled-snapshot-${period}`,
  ).catch((err) => {
    logger.error('scheduled snapshot not enqueued', { error: String(err) });
  });
}

/**
 * Builds every index's value columns (its filterable, sortable and distinct attributes) before
 * the server answers anything, so the first filter, sort or facet count costs what later ones
 * do. A failure is logged, never a stop: the first search needing a column then builds it.
 */
async function prepareColumns(registry: IndexRegistry, logger: Logger): Promise<void> {
  await Promise.all(
    registry.list().map(async (entry) => {
      try {
        await registry.handleOf(entry).prepareColumns();
      } catch (err) {
        logger.warn('building the value columns at start failed', { index: entry.uid, error: String(err) });
      }
    }),
  );
}

/**
 * Opens every index before the server answers anything. An inverted index rebuilt from its
 * documents (a tantivy file damaged or missing) is logged; an index whose store is damaged
 * stops the start, unless `--drop-damaged-indexes` consents to losing it: it then leaves the
 * registry and its files go to `<db-path>/damaged`.
 */
async function checkIndexes(
  registry: IndexRegistry,
  config: Config,
  dbPath: string,
  replicated: boolean,
  logger: Logger,
  damagedStores: Map<string, string>,
): Promise<void> {
  const walked = (entry: IndexEntry): Error | null => {
    const store = path.join(registry.pathOf(entry), 'store');
    const message = damagedStores.get(store);
    return message === undefined ? null : new ApiError('invalid_store_file', message);
  };
  const failed = registry.openAll(
    (uid, why) =>
      logger.warn('the inverted index was damaged and has been rebuilt from the documents', {
        index: uid,
        reason: why,
      }),
    walked,
  );
  if (failed.length === 0) return;
  const stop = (err: Error): never => {
    registry.closeAll();
    throw err;
  };
  // A system failure (permissions, a full disk) stops the start as it is; anything else is damage.
  const damaged = failed.filter(
    ({ error }) => error instanceof ApiError && (error.code === 'invalid_store_file' || error.code === 'internal'),
  );
  const other = failed.find((f) => !damaged.includes(f));
  if (other) stop(other.error);
  if (!config.dropDamagedIndexes || replicated) {
    const list = damaged
      .map(({ entry, error }) => `index \`${entry.uid}\`: ${error.message.replace(/\.$/, '')}`)
      .join('; ');
    const way = replicated
      ? "Move this instance's data directory away: started empty, it copies the group's latest snapshot."
      : `Restore the data directory from a snapshot (\`--import-snapshot\`) or a dump (\`--import-dump\`), or start with \`--drop-damaged-indexes\` to start without ${damaged.length === 1 ? 'this index' : 'these indexes'} (${damaged.length === 1 ? 'its documents are lost; its files are' : 'their documents are lost; their files are'} kept in \`${path.join(dbPath, 'damaged')}\`).`;
    stop(new DataDirError(`${list}. ${way}`));
  }
  for (const { entry, error } of damaged) {
    const dest = await registry.setAside(entry, path.join(dbPath, 'damaged'));
    logger.error('a damaged index was dropped (--drop-damaged-indexes): its documents are lost', {
      index: entry.uid,
      reason: error.message,
      files: dest,
    });
  }
}

/** The task store could not be read: the start stops with what is wrong (the message names the file) and the way out. */
function taskStoreDamaged(message: string, replicated: boolean): DataDirError {
  const way = replicated
    ? "Move this instance's data directory away: started empty, it copies the group's latest snapshot."
    : 'Restore the data directory from a snapshot (`--import-snapshot`) or a dump (`--import-dump`) into a new `--db-path`.';
  return new DataDirError(`${message} ${way}`);
}
