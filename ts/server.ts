/**
 * Wires the process: data directory, durable store, registry, keys, queue, worker and
 * the HTTP listener. `startServer` is what `main.ts` and the embedding API call.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { makeGuard } from './auth/guard';
import { KeyStore } from './auth/keys';
import { buildApp } from './app';
import { errorBody } from './errors/catalog';
import type { Config } from './config';
import type { Deps } from './deps';
import { FeatureStore } from './features';
import { IndexRegistry } from './indexes/registry';
import type { Logger } from './logging';
import { Metrics } from './metrics/metrics';
import { configureModels, configureOutbound, KvStore } from './native';
import { networkedQueue } from './network/forward';
import { rebalancer } from './network/rebalance';
import { NetworkStore } from './network/state';
import { SearchLimiter } from './search/limiter';
import { SearchRules } from './search/rules';
import { Durable, META_MAP_SIZE } from './store/durable';
import { openQueue } from './tasks/queue';
import { TaskDbCompaction } from './tasks/compaction';
import { Worker } from './tasks/worker';
import { WebhookDispatcher } from './webhooks/delivery';
import { WebhookStore } from './webhooks/store';
import type { TaskQueue } from './tasks/queue';
import { archives } from './dumps/create';
import { importAtStartup } from './dumps/import';
import { attachTls, httpsOptions } from './startup/tls';
import { createAnalytics } from './telemetry';

export interface RunningServer {
  url: string;
  port: number;
  deps: Deps;
  close(): Promise<void>;
}

export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  configureOutbound(config.allowedNetworks);
  configureModels(config.modelsDir, config.onnxRuntimePath);
  // Certificate files are read before anything is opened: a bad one fails start-up cleanly.
  const tlsOptions = config.tls ? httpsOptions(config.tls) : null;
  const dbPath = path.resolve(config.dbPath);
  await importAtStartup(config, dbPath, logger);
  fs.mkdirSync(dbPath, { recursive: true });
  fs.writeFileSync(path.join(dbPath, 'VERSION'), 'quarry-1\n');
  const kv = KvStore.open(path.join(dbPath, 'tasks'), META_MAP_SIZE);
  const durable = new Durable(kv);
  const registry = new IndexRegistry(durable, path.join(dbPath, 'indexes'));
  const keys = new KeyStore(durable, config.masterKey);
  await keys.ensureDefaults();
  const features = new FeatureStore(durable);
  features.enableAtStartup({ metrics: config.enableMetrics, logsRoute: config.enableLogsRoute });
  features.enableAtStart({ containsFilter: config.containsFilterAtStart, legacySearch: config.legacySearchAtStart });
  const network = new NetworkStore(durable);
  const queue = openQueue(durable);
  const searchRules = new SearchRules(durable);
  const webhooks = new WebhookStore(durable, config.taskWebhookUrl ? { url: config.taskWebhookUrl, authorization: config.taskWebhookAuthorization } : null);
  const updateFiles = path.join(dbPath, 'update_files');
  const dirs = { dumpDir: path.resolve(config.dumpDir), snapshotDir: path.resolve(config.snapshotDir) };
  const worker = new Worker(
    queue,
    registry,
    updateFiles,
    logger.child({ target: 'quarry::tasks' }),
    config.maxBatchedTasks,
    () => features.get().getTaskDocumentsRoute,
    rebalancer(network, registry, config.remoteTimeoutMs),
    archives({ kv, queue, registry, keys, features, network, searchRules, webhooks, dbPath, updateFiles }, dirs),
    searchRules,
  );
  await worker.recover();
  const dispatcher = new WebhookDispatcher(webhooks, logger.child({ target: 'quarry::webhooks' }));
  worker.onBatchFinished((tasks) => dispatcher.batchFinished(tasks));

  const searchLimiter = new SearchLimiter(config.searchesPerCore * os.availableParallelism(), config.searchQueueSize, config.dropSearchAfterSeconds * 1000);
  // Routes enqueue through the network: a leader forwards index writes (see network/forward.ts).
  const routedQueue = networkedQueue(queue, network, features, config.remoteTimeoutMs);
  const analytics = createAnalytics(config, dbPath, registry, features, logger);
  const metrics = new Metrics({ kv, registry, tasks: () => queue.allTasks(), batches: () => queue.allBatches(), searchLimiter, taskQueueMaxSize: META_MAP_SIZE });
  const deps: Deps = { config, logger, queue: routedQueue, registry, keys, features, network, guard: makeGuard(keys, config.masterKey), searchLimiter, updateFiles, dbPath, kv, searchRules, metrics, webhooks, analytics, compaction: new TaskDbCompaction(kv) };
  const app = buildApp(deps);
  const server: http.Server = tlsOptions ? https.createServer(tlsOptions, app) : http.createServer(app);
  if (config.tls) attachTls(server as https.Server, config.tls);
  server.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  server.keepAliveTimeout = 30_000;
  server.on('clientError', answerClientError);
  worker.start();
  const snapshots = config.scheduleSnapshotSeconds === null ? null : setInterval(() => enqueueSnapshot(queue, logger), config.scheduleSnapshotSeconds * 1000);
  snapshots?.unref();
  analytics?.start();
  const port = (server.address() as AddressInfo).port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `${config.tls ? 'https' : 'http'}://${host}:${port}`;

  return {
    url,
    port,
    deps,
    async close() {
      if (snapshots) clearInterval(snapshots);
      analytics?.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await worker.stop();
      registry.closeAll();
      kv.close();
    },
  };
}

/** A scheduled snapshot: a task like `POST /snapshots`'s, enqueued by the clock. */
function enqueueSnapshot(queue: TaskQueue, logger: Logger): void {
  queue.enqueue({ indexUid: null, type: 'snapshotCreation', details: null, payload: { kind: 'snapshotCreation' } }).catch((err) => {
    logger.error('scheduled snapshot not enqueued', { error: String(err) });
  });
}

/**
 * Requests Node's HTTP parser refuses before Express sees them (a request line or headers
 * past the 16 KB limit, bytes that are not allowed in a URL or a header) are answered with
 * the usual error object instead of Node's bare `400 Bad Request`: status 431 for oversized
 * headers, 408 for a request that never finished arriving, 400 otherwise, code `bad_request`. The connection is closed, as the
 * parser cannot tell where the next request would start.
 */
export function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? ['431 Request Header Fields Too Large', 'The request line and headers are larger than the server accepts.']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['408 Request Timeout', 'The request was not received in time.']
        : ['400 Bad Request', `The request could not be parsed as HTTP: \`${err.code ?? 'malformed request'}\`.`];
  const body = JSON.stringify(errorBody('bad_request', message));
  socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
