/**
 * Builds the instance's telemetry from its configuration: the instance UID (a UUID kept in
 * `<db>/instance-uid`, as Meilisearch keeps it), what a batch says about the instance, and
 * delivery through the one outbound client. `--no-analytics`: nothing is built.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../config';
import type { FeatureStore } from '../features';
import type { IndexRegistry } from '../indexes/registry';
import type { Logger } from '../logging';
import { outboundRequest } from '../native';
import { Analytics } from './analytics';

export { Analytics } from './analytics';
export { analyticsObserver } from './middleware';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The instance UID in `<dbPath>/instance-uid`, created on first use. */
export function instanceUid(dbPath: string): string {
  const file = path.join(dbPath, 'instance-uid');
  try {
    const text = fs.readFileSync(file, 'utf8').trim();
    if (UUID.test(text)) return text;
  } catch {
    // none yet
  }
  const uid = crypto.randomUUID();
  fs.writeFileSync(file, uid);
  return uid;
}

function dirSize(dir: string): number {
  let total = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += dirSize(p);
    else if (e.isFile()) {
      try {
        total += fs.statSync(p).size;
      } catch {
        // removed meanwhile
      }
    }
  }
  return total;
}

/** The start-up options as booleans or numbers: never a path, an address, a key or a URL. */
function infos(config: Config): Record<string, unknown> {
  return {
    env: config.env,
    db_path: config.dbPath !== './data.ms',
    http_addr: config.httpAddr !== 'localhost:7700',
    master_key: config.masterKey !== null,
    http_payload_size_limit: config.payloadSizeLimit,
    max_indexing_memory: config.maxIndexingMemory,
    max_indexing_threads: config.maxIndexingThreads,
    log_level: config.logLevel,
    config_file_path: config.configFile !== null,
    ssl_cert_path: config.tls !== null,
    ssl_auth_path: config.tls?.authPath != null,
    ssl_ocsp_path: config.tls?.ocspPath != null,
    ssl_require_auth: config.tls?.requireAuth ?? false,
    ssl_resumption: config.tls?.resumption ?? false,
    ssl_tickets: config.tls?.tickets ?? false,
    experimental_allowed_ip_networks: config.allowedNetworks.join(',') !== '127.0.0.0/8,::1/128',
    experimental_max_number_of_batched_tasks: config.maxBatchedTasks,
    experimental_search_queue_size: config.searchQueueSize,
    experimental_nb_searches_per_core: config.searchesPerCore,
    experimental_drop_search_after: config.dropSearchAfterSeconds,
    experimental_models_dir: config.modelsDir !== null,
    experimental_mcp: config.experimentalMcp,
  };
}

export function createAnalytics(
  config: Config,
  dbPath: string,
  registry: IndexRegistry,
  features: FeatureStore,
  logger: Logger,
): Analytics | null {
  if (config.noAnalytics) return null;
  const started = Date.now();
  const version = (require('../../package.json') as { version: string }).version;
  const configured = infos(config);
  return new Analytics({
    instanceUid: instanceUid(dbPath),
    url: config.analyticsUrl,
    intervalMs: config.analyticsIntervalMs,
    logger,
    version,
    identify: () => {
      let disk: number | null = null;
      try {
        const s = fs.statfsSync(dbPath);
        disk = s.blocks * s.bsize;
      } catch {
        // not every file system answers
      }
      const flags: Record<string, boolean> = {};
      for (const [k, v] of Object.entries(features.get())) flags[k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = v;
      return {
        system: {
          distribution: os.type(),
          kernel_version: os.release(),
          arch: os.arch(),
          cores: os.availableParallelism(),
          ram_size: Math.round(os.totalmem() / 1024),
          disk_size: disk,
        },
        infos: { ...configured, experimental_features: flags },
        stats: { database_size: dirSize(dbPath), indexes_number: registry.list().length },
        start_since_days: Math.floor((Date.now() - started) / 86_400_000),
      };
    },
    send: async (url, body) => {
      const a = await outboundRequest('POST', url, { 'Content-Type': 'application/json' }, body, 10_000);
      if (a.failure !== null) throw new Error(`${a.failure}: ${a.message ?? ''}`);
      if (a.status >= 400) throw new Error(`the collector answered ${a.status}`);
    },
  });
}
