/**
 * Start-up configuration: CLI flags, then QUARRY_* environment variables, then
 * Meilisearch's MEILI_* names (so an existing deployment switches binaries without
 * touching its environment), then defaults. Bad options fail fast with a message.
 */
import { z } from 'zod';
import { type ConfigFileKey, configFileToRead, readConfigFile, TOML_KINDS } from './startup/config-file';
import { ACCEPTED_WITHOUT_EFFECT, REFUSED, meiliEnvOf, refusalMessage, tomlKeyOf } from './startup/meili-options';
import type { ReplicationConfig } from './replication/replica';
import {
  REPLICATION_OPTIONS,
  replicationFrom,
  ReplicationOptionError,
  type ReplicationRaw,
} from './startup/replication-options';
import { type TlsConfig, tlsConfigFrom, TlsOptionError, type TlsRaw } from './startup/tls';

export interface Config {
  httpAddr: string;
  host: string;
  port: number;
  dbPath: string;
  masterKey: string | null;
  env: 'development' | 'production';
  noAnalytics: boolean;
  payloadSizeLimit: number;
  logLevel: 'off' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
  maxIndexingMemory: number | null;
  maxIndexingThreads: number | null;
  allowedNetworks: string[];
  maxBatchedTasks: number;
  searchQueueSize: number;
  searchesPerCore: number;
  dropSearchAfterSeconds: number;
  /** Where `huggingFace` embedders find their models (`<dir>/<model>/model.onnx`); none: not configured. */
  modelsDir: string | null;
  /** The ONNX Runtime library local models run on (`libonnxruntime.so`); none: not configured. */
  onnxRuntimePath: string | null;
  /** How long another instance of the network may take to answer (search, forwarded write). */
  remoteTimeoutMs: number;
  /** Seconds a connection may neither send nor receive before it is closed (0: never). */
  httpIdleTimeoutSeconds: number;
  /** Seconds a request's headers may take to arrive before it is answered 408. */
  httpHeadersTimeoutSeconds: number;
  /** Bytes the search and document answers being sent may hold together (0: no bound); see `http/response-budget.ts`. */
  searchResponseBudget: number;
  /** How long a remote embedder's request may take (null: 30 s). */
  restEmbedderTimeoutSeconds: number | null;
  /** How long after its first try a remote embedder's request may be tried again (null: no bound but three tries). */
  restEmbedderMaxRetrySeconds: number | null;
  /** Where `POST /dumps` writes `<dumpUid>.dump`. */
  dumpDir: string;
  /** Where snapshots are written (`<db directory name>.snapshot`). */
  snapshotDir: string;
  /** Seconds between scheduled snapshots; null: none scheduled. */
  scheduleSnapshotSeconds: number | null;
  importDump: string | null;
  ignoreMissingDump: boolean;
  ignoreDumpIfDbExists: boolean;
  importSnapshot: string | null;
  ignoreMissingSnapshot: boolean;
  ignoreSnapshotIfDbExists: boolean;
  /** `--experimental-enable-metrics`: turns the `metrics` feature on at start-up. */
  enableMetrics: boolean;
  /** `--experimental-enable-logs-route`: turns the `logsRoute` feature on at start-up. */
  enableLogsRoute: boolean;
  /** `--experimental-logs-mode`: the format of the lines written to stderr. */
  logsMode: 'human' | 'json';
  /** `--task-webhook-url`: a webhook set from the command line (the nil uuid, not editable). */
  taskWebhookUrl: string | null;
  taskWebhookAuthorization: string | null;
  /** The TOML file the configuration was read from, if any. */
  configFile: string | null;
  /** HTTPS when set (`--ssl-cert-path` + `--ssl-key-path`, and the other `--ssl-*`). */
  tls: TlsConfig | null;
  /** `--experimental-contains-filter`: the `containsFilter` feature is on from start-up. */
  containsFilterAtStart: boolean;
  /** `--experimental-legacy-search-default`: the `legacySearch` feature is on from start-up. */
  legacySearchAtStart: boolean;
  /** Meilisearch options that were set and that change nothing in Quarry: one line each for the start-up log. */
  acceptedWithoutEffect: string[];
  /** `--upgrade-db`: upgrade a data directory of an older Quarry format in place. */
  upgradeDb: boolean;
  /** `--drop-damaged-indexes`: start without the indexes whose stores are damaged (their files set aside). */
  dropDamagedIndexes: boolean;
  /** Where usage telemetry batches are sent; none: nothing leaves the machine. */
  analyticsUrl: string | null;
  /** How often a telemetry batch is sent (default one hour; shorter for tests). */
  analyticsIntervalMs: number;
  /** Whether `GET /` serves the search preview page: off with `--no-dashboard`, and in production (as Meilisearch's dashboard). */
  dashboard: boolean;
  /** The replicated task log (`--replication-nats`); null: this instance's own queue. */
  replication: ReplicationConfig | null;
  /** `--experimental-mcp`: `POST /mcp` is served; without it `/mcp` is no route (Quarry's own option, not a runtime feature). */
  experimentalMcp: boolean;
  /** `--experimental-personalization-api-key`: `personalize` reranks hits through the reranking API; null (or blank): refused. */
  personalizationApiKey: string | null;
  /** The reranking API's URL (Cohere's rerank by default). */
  personalizationUrl: string;
}

export class ConfigError extends Error {}

function personalizationUrl(url: string | undefined): string {
  if (url === undefined) return DEFAULT_PERSONALIZATION_URL;
  try {
    new URL(url);
  } catch {
    throw new ConfigError(`--experimental-personalization-url: \`${url}\` is not a URL`);
  }
  return url;
}

/** Where `personalize` reranks hits unless `--experimental-personalization-url` says otherwise (Cohere's rerank API). */
export const DEFAULT_PERSONALIZATION_URL = 'https://api.cohere.ai/v1/rerank';

interface OptionSpec {
  name: keyof RawOptions;
  flag: string;
  env: string;
  meili: string;
  boolean?: boolean;
  /** Given bare, the option takes the value `true`; else the value that follows. */
  optionalValue?: boolean;
  help: string;
}

/** The raw text of each option (the TLS ones are `TlsRaw`'s). */
type RawOptions = TlsRaw &
  ReplicationRaw & {
    httpAddr?: string;
    dbPath?: string;
    masterKey?: string;
    env?: string;
    noAnalytics?: string;
    payloadSizeLimit?: string;
    logLevel?: string;
    maxIndexingMemory?: string;
    maxIndexingThreads?: string;
    allowedNetworks?: string;
    maxBatchedTasks?: string;
    searchQueueSize?: string;
    searchesPerCore?: string;
    dropSearchAfter?: string;
    modelsDir?: string;
    onnxRuntimePath?: string;
    remoteTimeout?: string;
    httpIdleTimeout?: string;
    httpHeadersTimeout?: string;
    searchResponseBudget?: string;
    restEmbedderTimeout?: string;
    restEmbedderMaxRetry?: string;
    dumpDir?: string;
    importDump?: string;
    ignoreMissingDump?: string;
    ignoreDumpIfDbExists?: string;
    snapshotDir?: string;
    scheduleSnapshot?: string;
    importSnapshot?: string;
    ignoreMissingSnapshot?: string;
    ignoreSnapshotIfDbExists?: string;
    taskWebhookUrl?: string;
    taskWebhookAuthorization?: string;
    enableMetrics?: string;
    enableLogsRoute?: string;
    logsMode?: string;
    configFilePath?: string;
    containsFilter?: string;
    legacySearchDefault?: string;
    reduceIndexingMemory?: string;
    limitBatchedTasksTotalSize?: string;
    embeddingCacheEntries?: string;
    noEdition2024?: string;
    upgradeDb?: string;
    dropDamagedIndexes?: string;
    analyticsUrl?: string;
    analyticsIntervalMs?: string;
    noDashboard?: string;
    experimentalMcp?: string;
    personalizationApiKey?: string;
    personalizationUrl?: string;
  };

export const OPTIONS: OptionSpec[] = [
  {
    name: 'httpAddr',
    flag: '--http-addr',
    env: 'QUARRY_HTTP_ADDR',
    meili: 'MEILI_HTTP_ADDR',
    help: 'address to listen on (default localhost:7700)',
  },
  {
    name: 'dbPath',
    flag: '--db-path',
    env: 'QUARRY_DB_PATH',
    meili: 'MEILI_DB_PATH',
    help: 'data directory (default ./data.ms)',
  },
  {
    name: 'masterKey',
    flag: '--master-key',
    env: 'QUARRY_MASTER_KEY',
    meili: 'MEILI_MASTER_KEY',
    help: 'master key; protects every route but /health',
  },
  {
    name: 'env',
    flag: '--env',
    env: 'QUARRY_ENV',
    meili: 'MEILI_ENV',
    help: 'development | production (production requires a master key of 16+ bytes)',
  },
  {
    name: 'noAnalytics',
    flag: '--no-analytics',
    env: 'QUARRY_NO_ANALYTICS',
    meili: 'MEILI_NO_ANALYTICS',
    boolean: true,
    help: 'disable telemetry',
  },
  {
    name: 'payloadSizeLimit',
    flag: '--http-payload-size-limit',
    env: 'QUARRY_HTTP_PAYLOAD_SIZE_LIMIT',
    meili: 'MEILI_HTTP_PAYLOAD_SIZE_LIMIT',
    help: 'maximum request body (default 100 MB)',
  },
  {
    name: 'logLevel',
    flag: '--log-level',
    env: 'QUARRY_LOG_LEVEL',
    meili: 'MEILI_LOG_LEVEL',
    help: 'OFF, ERROR, WARN, INFO, DEBUG, TRACE (default INFO)',
  },
  {
    name: 'maxIndexingMemory',
    flag: '--max-indexing-memory',
    env: 'QUARRY_MAX_INDEXING_MEMORY',
    meili: 'MEILI_MAX_INDEXING_MEMORY',
    help: 'indexing memory budget (e.g. 2 GiB)',
  },
  {
    name: 'maxIndexingThreads',
    flag: '--max-indexing-threads',
    env: 'QUARRY_MAX_INDEXING_THREADS',
    meili: 'MEILI_MAX_INDEXING_THREADS',
    help: 'indexing threads',
  },
  {
    name: 'allowedNetworks',
    flag: '--experimental-allowed-ip-networks',
    env: 'QUARRY_ALLOWED_IP_NETWORKS',
    meili: 'MEILI_EXPERIMENTAL_ALLOWED_IP_NETWORKS',
    help: 'CIDRs outbound requests may reach (default loopback only; "any" allows all)',
  },
  {
    name: 'maxBatchedTasks',
    flag: '--experimental-max-number-of-batched-tasks',
    env: 'QUARRY_MAX_BATCHED_TASKS',
    meili: 'MEILI_EXPERIMENTAL_MAX_NUMBER_OF_BATCHED_TASKS',
    help: 'tasks per batch (default 1000)',
  },
  {
    name: 'searchQueueSize',
    flag: '--experimental-search-queue-size',
    env: 'QUARRY_SEARCH_QUEUE_SIZE',
    meili: 'MEILI_EXPERIMENTAL_SEARCH_QUEUE_SIZE',
    help: 'searches that may wait for a slot before 503 (default 1000)',
  },
  {
    name: 'searchesPerCore',
    flag: '--experimental-nb-searches-per-core',
    env: 'QUARRY_SEARCHES_PER_CORE',
    meili: 'MEILI_EXPERIMENTAL_NB_SEARCHES_PER_CORE',
    help: 'searches running at once per core (default 4)',
  },
  {
    name: 'modelsDir',
    flag: '--experimental-models-dir',
    env: 'QUARRY_MODELS_DIR',
    meili: 'QUARRY_MODELS_DIR',
    help: 'directory of local embedding models for huggingFace embedders: <dir>/<model>/model.onnx and tokenizer files (models are never downloaded)',
  },
  {
    name: 'onnxRuntimePath',
    flag: '--experimental-onnxruntime-path',
    env: 'QUARRY_ONNXRUNTIME_PATH',
    meili: 'ORT_DYLIB_PATH',
    help: 'path of libonnxruntime.so, which local models run on',
  },
  {
    name: 'httpIdleTimeout',
    flag: '--http-idle-timeout-secs',
    env: 'QUARRY_HTTP_IDLE_TIMEOUT_SECS',
    meili: 'QUARRY_HTTP_IDLE_TIMEOUT_SECS',
    help: 'seconds a connection may neither send nor receive (a client that stops reading its answer) before it is closed (default 90; 0: never)',
  },
  {
    name: 'httpHeadersTimeout',
    flag: '--http-headers-timeout-secs',
    env: 'QUARRY_HTTP_HEADERS_TIMEOUT_SECS',
    meili: 'QUARRY_HTTP_HEADERS_TIMEOUT_SECS',
    help: "seconds a request's headers may take to arrive before it is answered 408 (default 10)",
  },
  {
    name: 'searchResponseBudget',
    flag: '--experimental-search-response-budget',
    env: 'QUARRY_SEARCH_RESPONSE_BUDGET',
    meili: 'QUARRY_SEARCH_RESPONSE_BUDGET',
    help: 'bytes the search and document answers being sent may hold together before further ones are refused with 503 (default 256 MiB; 0: no bound; one answer alone is always sent)',
  },
  {
    name: 'remoteTimeout',
    flag: '--experimental-remote-timeout-ms',
    env: 'QUARRY_REMOTE_TIMEOUT_MS',
    meili: 'QUARRY_REMOTE_TIMEOUT_MS',
    help: 'milliseconds another instance of the network may take to answer a search or a forwarded write (default 30000)',
  },
  {
    name: 'restEmbedderTimeout',
    flag: '--experimental-rest-embedder-timeout-seconds',
    env: 'QUARRY_EXPERIMENTAL_REST_EMBEDDER_TIMEOUT_SECONDS',
    meili: 'MEILI_EXPERIMENTAL_REST_EMBEDDER_TIMEOUT_SECONDS',
    help: 'seconds one request to a remote embedder may take (default 30)',
  },
  {
    name: 'restEmbedderMaxRetry',
    flag: '--experimental-rest-embedder-max-retry-duration-seconds',
    env: 'QUARRY_EXPERIMENTAL_REST_EMBEDDER_MAX_RETRY_DURATION_SECONDS',
    meili: 'MEILI_EXPERIMENTAL_REST_EMBEDDER_MAX_RETRY_DURATION_SECONDS',
    help: 'seconds after its first try a failed remote embedder request may be tried again (default: three tries)',
  },
  {
    name: 'dropSearchAfter',
    flag: '--experimental-drop-search-after',
    env: 'QUARRY_DROP_SEARCH_AFTER',
    meili: 'MEILI_EXPERIMENTAL_DROP_SEARCH_AFTER',
    help: 'seconds a search may wait before it is dropped (default 60)',
  },
  {
    name: 'dumpDir',
    flag: '--dump-dir',
    env: 'QUARRY_DUMP_DIR',
    meili: 'MEILI_DUMP_DIR',
    help: 'directory dumps are written to (default dumps/)',
  },
  {
    name: 'importDump',
    flag: '--import-dump',
    env: 'QUARRY_IMPORT_DUMP',
    meili: 'MEILI_IMPORT_DUMP',
    help: 'dump file (Meilisearch or Quarry, version 6) to build the database from at start-up',
  },
  {
    name: 'ignoreMissingDump',
    flag: '--ignore-missing-dump',
    env: 'QUARRY_IGNORE_MISSING_DUMP',
    meili: 'MEILI_IGNORE_MISSING_DUMP',
    boolean: true,
    help: 'start without importing when the --import-dump file is missing',
  },
  {
    name: 'ignoreDumpIfDbExists',
    flag: '--ignore-dump-if-db-exists',
    env: 'QUARRY_IGNORE_DUMP_IF_DB_EXISTS',
    meili: 'MEILI_IGNORE_DUMP_IF_DB_EXISTS',
    boolean: true,
    help: 'start on the existing database instead of refusing the --import-dump',
  },
  {
    name: 'snapshotDir',
    flag: '--snapshot-dir',
    env: 'QUARRY_SNAPSHOT_DIR',
    meili: 'MEILI_SNAPSHOT_DIR',
    help: 'directory snapshots are written to (default snapshots/)',
  },
  {
    name: 'scheduleSnapshot',
    flag: '--schedule-snapshot',
    env: 'QUARRY_SCHEDULE_SNAPSHOT',
    meili: 'MEILI_SCHEDULE_SNAPSHOT',
    optionalValue: true,
    help: 'take a snapshot every N seconds (bare: every 86400)',
  },
  {
    name: 'importSnapshot',
    flag: '--import-snapshot',
    env: 'QUARRY_IMPORT_SNAPSHOT',
    meili: 'MEILI_IMPORT_SNAPSHOT',
    help: 'snapshot file to restore the database from at start-up',
  },
  {
    name: 'ignoreMissingSnapshot',
    flag: '--ignore-missing-snapshot',
    env: 'QUARRY_IGNORE_MISSING_SNAPSHOT',
    meili: 'MEILI_IGNORE_MISSING_SNAPSHOT',
    boolean: true,
    help: 'start without restoring when the --import-snapshot file is missing',
  },
  {
    name: 'personalizationApiKey',
    flag: '--experimental-personalization-api-key',
    env: 'QUARRY_EXPERIMENTAL_PERSONALIZATION_API_KEY',
    meili: 'MEILI_EXPERIMENTAL_PERSONALIZATION_API_KEY',
    help: 'API key of the reranking service `personalize` in search reranks hits through (Cohere)',
  },
  {
    name: 'personalizationUrl',
    flag: '--experimental-personalization-url',
    env: 'QUARRY_EXPERIMENTAL_PERSONALIZATION_URL',
    meili: 'QUARRY_EXPERIMENTAL_PERSONALIZATION_URL',
    help: `the reranking API (default ${DEFAULT_PERSONALIZATION_URL}; its host must be in --experimental-allowed-ip-networks)`,
  },
  {
    name: 'taskWebhookUrl',
    flag: '--task-webhook-url',
    env: 'QUARRY_TASK_WEBHOOK_URL',
    meili: 'MEILI_TASK_WEBHOOK_URL',
    help: 'URL every finished batch is POSTed to (NDJSON, gzip), besides the /webhooks ones',
  },
  {
    name: 'taskWebhookAuthorization',
    flag: '--task-webhook-authorization-header',
    env: 'QUARRY_TASK_WEBHOOK_AUTHORIZATION_HEADER',
    meili: 'MEILI_TASK_WEBHOOK_AUTHORIZATION_HEADER',
    help: 'Authorization header value sent to --task-webhook-url',
  },
  {
    name: 'ignoreSnapshotIfDbExists',
    flag: '--ignore-snapshot-if-db-exists',
    env: 'QUARRY_IGNORE_SNAPSHOT_IF_DB_EXISTS',
    meili: 'MEILI_IGNORE_SNAPSHOT_IF_DB_EXISTS',
    boolean: true,
    help: 'start on the existing database instead of refusing the --import-snapshot',
  },
  {
    name: 'enableMetrics',
    flag: '--experimental-enable-metrics',
    env: 'QUARRY_EXPERIMENTAL_ENABLE_METRICS',
    meili: 'MEILI_EXPERIMENTAL_ENABLE_METRICS',
    boolean: true,
    help: 'turn the `metrics` experimental feature (GET /metrics) on at start-up',
  },
  {
    name: 'enableLogsRoute',
    flag: '--experimental-enable-logs-route',
    env: 'QUARRY_EXPERIMENTAL_ENABLE_LOGS_ROUTE',
    meili: 'MEILI_EXPERIMENTAL_ENABLE_LOGS_ROUTE',
    boolean: true,
    help: 'turn the `logsRoute` experimental feature (/logs/*) on at start-up',
  },
  {
    name: 'logsMode',
    flag: '--experimental-logs-mode',
    env: 'QUARRY_EXPERIMENTAL_LOGS_MODE',
    meili: 'MEILI_EXPERIMENTAL_LOGS_MODE',
    help: 'HUMAN or JSON: the format of the log lines written to stderr (default HUMAN)',
  },
  {
    name: 'configFilePath',
    flag: '--config-file-path',
    env: 'QUARRY_CONFIG_FILE_PATH',
    meili: 'MEILI_CONFIG_FILE_PATH',
    help: 'TOML configuration file, keys = snake_case option names (default ./config.toml if present); CLI > environment > file > defaults',
  },
  {
    name: 'sslCertPath',
    flag: '--ssl-cert-path',
    env: 'QUARRY_SSL_CERT_PATH',
    meili: 'MEILI_SSL_CERT_PATH',
    help: 'PEM certificate chain: serve HTTPS (needs --ssl-key-path)',
  },
  {
    name: 'sslKeyPath',
    flag: '--ssl-key-path',
    env: 'QUARRY_SSL_KEY_PATH',
    meili: 'MEILI_SSL_KEY_PATH',
    help: 'PEM private key of the certificate (needs --ssl-cert-path)',
  },
  {
    name: 'sslAuthPath',
    flag: '--ssl-auth-path',
    env: 'QUARRY_SSL_AUTH_PATH',
    meili: 'MEILI_SSL_AUTH_PATH',
    help: 'PEM CA certificates client certificates are checked against (clients may present one)',
  },
  {
    name: 'sslOcspPath',
    flag: '--ssl-ocsp-path',
    env: 'QUARRY_SSL_OCSP_PATH',
    meili: 'MEILI_SSL_OCSP_PATH',
    help: 'DER-encoded OCSP response stapled to the certificate',
  },
  {
    name: 'sslRequireAuth',
    flag: '--ssl-require-auth',
    env: 'QUARRY_SSL_REQUIRE_AUTH',
    meili: 'MEILI_SSL_REQUIRE_AUTH',
    boolean: true,
    help: 'clients must present a certificate signed by --ssl-auth-path (mutual TLS)',
  },
  {
    name: 'sslResumption',
    flag: '--ssl-resumption',
    env: 'QUARRY_SSL_RESUMPTION',
    meili: 'MEILI_SSL_RESUMPTION',
    boolean: true,
    help: 'TLS session resumption by session id (in-memory cache of 256 sessions)',
  },
  {
    name: 'sslTickets',
    flag: '--ssl-tickets',
    env: 'QUARRY_SSL_TICKETS',
    meili: 'MEILI_SSL_TICKETS',
    boolean: true,
    help: 'TLS session tickets (off unless set)',
  },
  {
    name: 'containsFilter',
    flag: '--experimental-contains-filter',
    env: 'QUARRY_EXPERIMENTAL_CONTAINS_FILTER',
    meili: 'MEILI_EXPERIMENTAL_CONTAINS_FILTER',
    boolean: true,
    help: 'turn on the containsFilter experimental feature at start-up',
  },
  {
    name: 'legacySearchDefault',
    flag: '--experimental-legacy-search-default',
    env: 'QUARRY_EXPERIMENTAL_LEGACY_SEARCH',
    meili: 'MEILI_EXPERIMENTAL_LEGACY_SEARCH',
    boolean: true,
    help: 'turn on the legacySearch experimental feature at start-up (Quarry has one search pipeline)',
  },
  {
    name: 'reduceIndexingMemory',
    flag: '--experimental-reduce-indexing-memory-usage',
    env: 'QUARRY_EXPERIMENTAL_REDUCE_INDEXING_MEMORY_USAGE',
    meili: 'MEILI_EXPERIMENTAL_REDUCE_INDEXING_MEMORY_USAGE',
    boolean: true,
    help: 'accepted for compatibility; changes nothing in Quarry',
  },
  {
    name: 'limitBatchedTasksTotalSize',
    flag: '--experimental-limit-batched-tasks-total-size',
    env: 'QUARRY_EXPERIMENTAL_LIMIT_BATCHED_TASKS_TOTAL_SIZE',
    meili: 'MEILI_EXPERIMENTAL_LIMIT_BATCHED_TASKS_TOTAL_SIZE',
    help: 'accepted for compatibility (a size); Quarry bounds batches by task count',
  },
  {
    name: 'embeddingCacheEntries',
    flag: '--experimental-embedding-cache-entries',
    env: 'QUARRY_EXPERIMENTAL_EMBEDDING_CACHE_ENTRIES',
    meili: 'MEILI_EXPERIMENTAL_EMBEDDING_CACHE_ENTRIES',
    help: 'accepted for compatibility (an integer); Quarry sizes its query-embedding cache itself',
  },
  {
    name: 'noEdition2024',
    flag: '--experimental-no-edition-2024-for-settings',
    env: 'QUARRY_EXPERIMENTAL_NO_EDITION_2024_FOR_SETTINGS',
    meili: 'MEILI_EXPERIMENTAL_NO_EDITION_2024_FOR_SETTINGS',
    boolean: true,
    help: 'accepted for compatibility; changes nothing in Quarry',
  },
  {
    name: 'upgradeDb',
    flag: '--upgrade-db',
    env: 'QUARRY_UPGRADE_DB',
    meili: 'MEILI_UPGRADE_DB',
    boolean: true,
    help: 'upgrade a data directory written by an older Quarry in place (without it, such a directory is refused)',
  },
  {
    name: 'dropDamagedIndexes',
    flag: '--drop-damaged-indexes',
    env: 'QUARRY_DROP_DAMAGED_INDEXES',
    meili: 'QUARRY_DROP_DAMAGED_INDEXES',
    boolean: true,
    help: 'start without the indexes whose stores are damaged: they leave the API and their files are moved to <db-path>/damaged (without it, such a directory is refused)',
  },
  {
    name: 'analyticsUrl',
    flag: '--experimental-analytics-url',
    env: 'QUARRY_ANALYTICS_URL',
    meili: 'QUARRY_ANALYTICS_URL',
    help: 'where anonymous usage telemetry batches are POSTed (JSON); none: nothing is sent',
  },
  {
    name: 'analyticsIntervalMs',
    flag: '--experimental-analytics-interval-ms',
    env: 'QUARRY_ANALYTICS_INTERVAL_MS',
    meili: 'QUARRY_ANALYTICS_INTERVAL_MS',
    help: 'milliseconds between telemetry batches (default 3600000; shorter values are for tests)',
  },
  {
    name: 'noDashboard',
    flag: '--no-dashboard',
    env: 'QUARRY_NO_DASHBOARD',
    meili: 'QUARRY_NO_DASHBOARD',
    boolean: true,
    help: 'do not serve the search preview page at / (it is never served with --env production)',
  },
  {
    name: 'experimentalMcp',
    flag: '--experimental-mcp',
    env: 'QUARRY_EXPERIMENTAL_MCP',
    meili: 'QUARRY_EXPERIMENTAL_MCP',
    boolean: true,
    help: 'serve POST /mcp, a Model Context Protocol endpoint for agents (without it /mcp is no route, as in Meilisearch)',
  },
  ...REPLICATION_OPTIONS,
];

export const LOOPBACK_NETWORKS = ['127.0.0.0/8', '::1/128'];

/** Parses sizes like `100 MB`, `107374182400`, `2GiB`, `512Mb`. */
export function parseByteSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  if (!m) throw new ConfigError(`\`${text}\` is not a valid size`);
  const n = Number(m[1]);
  const unit = m[2].toLowerCase();
  const units: Record<string, number> = {
    '': 1,
    b: 1,
    kb: 1e3,
    mb: 1e6,
    gb: 1e9,
    tb: 1e12,
    kib: 1024,
    mib: 1024 ** 2,
    gib: 1024 ** 3,
    tib: 1024 ** 4,
    k: 1e3,
    m: 1e6,
    g: 1e9,
  };
  if (!(unit in units)) throw new ConfigError(`\`${text}\` has an unknown size unit \`${m[2]}\``);
  return Math.round(n * units[unit]);
}

/** `parseByteSize`, its refusal naming the option. */
function namedSize(name: string, text: string): number {
  try {
    return parseByteSize(text);
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError(`${name}: ${err.message}`);
    throw err;
  }
}

function parseBool(name: string, v: string): boolean {
  if (/^(true|1|yes)$/i.test(v)) return true;
  if (/^(false|0|no)$/i.test(v)) return false;
  throw new ConfigError(`${name}: expected true or false, got \`${v}\``);
}

function parseArgs(argv: string[]): RawOptions {
  const out: RawOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg, undefined];
    const spec = OPTIONS.find((o) => o.flag === flag);
    if (!spec && REFUSED.has(flag)) throw new ConfigError(refusalMessage(flag, `option \`${flag}\``));
    if (!spec) throw new ConfigError(`unknown option \`${arg}\` (see --help)`);
    if (spec.boolean) {
      out[spec.name] = inline ?? 'true';
      continue;
    }
    if (spec.optionalValue && inline === undefined && (argv[i + 1] === undefined || argv[i + 1].startsWith('--'))) {
      out[spec.name] = 'true';
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new ConfigError(`option \`${flag}\` needs a value`);
    out[spec.name] = value;
  }
  return out;
}

export function helpText(): string {
  const lines = [
    'Usage: quarry [options]',
    '',
    '  -h, --help                                   this text',
    "  -V, --version                                Quarry's version",
    '',
    "Options (each also read from the environment variables shown: Quarry's, then Meilisearch's name):",
  ];
  for (const o of OPTIONS) {
    const vars = o.meili !== o.env ? `${o.env} ${o.meili}` : o.env;
    lines.push(`  ${o.flag.padEnd(44)} ${vars.padEnd(34)} ${o.help}`);
  }
  lines.push(
    '',
    'Meilisearch options Quarry refuses (start-up fails when one is set, by flag, MEILI_* variable or config key):',
  );
  for (const [f, why] of REFUSED) lines.push(`  ${f.padEnd(44)} ${meiliEnvOf(f).padEnd(34)} ${why}`);
  lines.push(
    '',
    'Config file keys are the snake_case option names (--http-addr → http_addr); precedence: CLI > environment > config file > defaults.',
  );
  return lines.join('\n');
}

const LOG_LEVELS = ['off', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/**
 * Builds the configuration; throws ConfigError with a readable message on bad input.
 * `implicitConfigFile: false` reads no `./config.toml` unless one is named (the embedded library).
 */
export function loadConfig(
  argv: string[],
  env: NodeJS.ProcessEnv,
  opts: { cwd?: string; implicitConfigFile?: boolean } = {},
): Config {
  const cli = parseArgs(argv);
  for (const flag of REFUSED.keys()) {
    const name = meiliEnvOf(flag);
    if (env[name] !== undefined && env[name] !== '')
      throw new ConfigError(refusalMessage(flag, `environment variable \`${name}\` (${flag})`));
  }
  const fromFile = fileOptions(cli, env, opts.cwd ?? process.cwd(), opts.implicitConfigFile ?? true);
  const raw: RawOptions = {};
  for (const o of OPTIONS) {
    const v = cli[o.name] ?? env[o.env] ?? env[o.meili] ?? fromFile.values[o.name];
    if (v !== undefined && v !== '') raw[o.name] = v;
  }

  const httpAddr = raw.httpAddr ?? 'localhost:7700';
  const m = /^(.*):(\d+)$/.exec(httpAddr);
  if (!m) throw new ConfigError(`--http-addr: \`${httpAddr}\` is not of the form host:port`);
  const port = Number(m[2]);
  if (port > 65535) throw new ConfigError(`--http-addr: port ${port} is out of range`);
  const host = m[1].replace(/^\[(.*)\]$/, '$1');

  const envName = (raw.env ?? 'development').toLowerCase();
  if (envName !== 'development' && envName !== 'production') {
    throw new ConfigError(`--env: expected development or production, got \`${raw.env}\``);
  }
  const masterKey = raw.masterKey ?? null;
  if (envName === 'production' && (!masterKey || Buffer.byteLength(masterKey) < 16)) {
    throw new ConfigError(
      'In production a master key of at least 16 bytes is required. Set it with --master-key or QUARRY_MASTER_KEY (MEILI_MASTER_KEY).',
    );
  }

  const logLevel = (raw.logLevel ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`--log-level: expected one of OFF, ERROR, WARN, INFO, DEBUG, TRACE, got \`${raw.logLevel}\``);
  }

  const threads = raw.maxIndexingThreads;
  let maxIndexingThreads: number | null = null;
  if (threads !== undefined && threads !== 'unlimited') {
    const n = z.coerce.number().int().positive().safeParse(threads);
    if (!n.success) throw new ConfigError(`--max-indexing-threads: \`${threads}\` is not a positive integer`);
    maxIndexingThreads = n.data;
  }
  const batched = raw.maxBatchedTasks === undefined ? 1000 : Number(raw.maxBatchedTasks);
  if (!Number.isInteger(batched) || batched < 1)
    throw new ConfigError(
      `--experimental-max-number-of-batched-tasks: \`${raw.maxBatchedTasks}\` is not a positive integer`,
    );

  const count = (name: string, value: string | undefined, fallback: number, min: number): number => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      throw new ConfigError(`${name}: \`${value}\` is not an integer of at least ${min}`);
    return n;
  };
  const searchQueueSize = count('--experimental-search-queue-size', raw.searchQueueSize, 1000, 0);
  const searchesPerCore = count('--experimental-nb-searches-per-core', raw.searchesPerCore, 4, 1);
  const dropSearchAfterSeconds = count('--experimental-drop-search-after', raw.dropSearchAfter, 60, 1);
  const remoteTimeoutMs = count('--experimental-remote-timeout-ms', raw.remoteTimeout, 30_000, 1);
  const httpIdleTimeoutSeconds = count('--http-idle-timeout-secs', raw.httpIdleTimeout, 90, 0);
  const httpHeadersTimeoutSeconds = count('--http-headers-timeout-secs', raw.httpHeadersTimeout, 10, 1);
  const searchResponseBudget =
    raw.searchResponseBudget === undefined
      ? 256 * 1024 ** 2
      : namedSize('--experimental-search-response-budget', raw.searchResponseBudget);
  const seconds = (name: string, value: string | undefined): number | null => {
    if (value === undefined) return null;
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0)
      throw new ConfigError(`${name}: \`${value}\` is not a positive number of seconds`);
    return n;
  };
  const restEmbedderTimeoutSeconds = seconds('--experimental-rest-embedder-timeout-seconds', raw.restEmbedderTimeout);
  const restEmbedderMaxRetrySeconds = seconds(
    '--experimental-rest-embedder-max-retry-duration-seconds',
    raw.restEmbedderMaxRetry,
  );

  const allowed =
    raw.allowedNetworks === undefined
      ? LOOPBACK_NETWORKS
      : raw.allowedNetworks
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  for (const net of allowed) {
    if (net !== 'any' && !/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(net))
      throw new ConfigError(`--experimental-allowed-ip-networks: \`${net}\` is not a CIDR`);
  }

  const importDump = raw.importDump ?? null;
  const importSnapshot = raw.importSnapshot ?? null;
  if (importDump !== null && importSnapshot !== null)
    throw new ConfigError('--import-dump cannot be used with --import-snapshot');
  const requires = (name: string, given: string | undefined, needed: string, present: unknown) => {
    if (flag(name, given) && !present) throw new ConfigError(`${name} requires ${needed}`);
  };
  requires('--ignore-missing-dump', raw.ignoreMissingDump, '--import-dump', importDump);
  requires('--ignore-dump-if-db-exists', raw.ignoreDumpIfDbExists, '--import-dump', importDump);
  requires('--ignore-missing-snapshot', raw.ignoreMissingSnapshot, '--import-snapshot', importSnapshot);
  requires('--ignore-snapshot-if-db-exists', raw.ignoreSnapshotIfDbExists, '--import-snapshot', importSnapshot);
  let scheduleSnapshotSeconds: number | null = null;
  if (raw.scheduleSnapshot !== undefined && !/^false$/i.test(raw.scheduleSnapshot)) {
    scheduleSnapshotSeconds = /^true$/i.test(raw.scheduleSnapshot)
      ? 86_400
      : count('--schedule-snapshot', raw.scheduleSnapshot, 86_400, 1);
  }

  if (raw.taskWebhookUrl !== undefined) {
    try {
      new URL(raw.taskWebhookUrl);
    } catch {
      throw new ConfigError(`--task-webhook-url: \`${raw.taskWebhookUrl}\` is not a URL`);
    }
  }
  if (raw.taskWebhookAuthorization !== undefined && raw.taskWebhookUrl === undefined)
    throw new ConfigError('--task-webhook-authorization-header requires --task-webhook-url');
  let replication: ReplicationConfig | null;
  try {
    replication = replicationFrom(raw, httpAddr);
  } catch (err) {
    if (err instanceof ReplicationOptionError) throw new ConfigError(err.message);
    throw err;
  }
  if (replication && (importDump !== null || importSnapshot !== null)) {
    throw new ConfigError(
      `${importDump !== null ? '--import-dump' : '--import-snapshot'} cannot be used with --replication-nats: a replicated instance starts from the group's log and snapshots; import into a single instance and send its documents and settings to the group`,
    );
  }

  return {
    personalizationApiKey:
      raw.personalizationApiKey !== undefined && raw.personalizationApiKey.trim() !== ''
        ? raw.personalizationApiKey
        : null,
    personalizationUrl: personalizationUrl(raw.personalizationUrl),
    taskWebhookUrl: raw.taskWebhookUrl ?? null,
    taskWebhookAuthorization: raw.taskWebhookAuthorization ?? null,
    dumpDir: raw.dumpDir ?? 'dumps/',
    snapshotDir: raw.snapshotDir ?? 'snapshots/',
    scheduleSnapshotSeconds,
    importDump,
    ignoreMissingDump: flag('--ignore-missing-dump', raw.ignoreMissingDump),
    ignoreDumpIfDbExists: flag('--ignore-dump-if-db-exists', raw.ignoreDumpIfDbExists),
    importSnapshot,
    ignoreMissingSnapshot: flag('--ignore-missing-snapshot', raw.ignoreMissingSnapshot),
    ignoreSnapshotIfDbExists: flag('--ignore-snapshot-if-db-exists', raw.ignoreSnapshotIfDbExists),
    httpAddr,
    host,
    port,
    dbPath: raw.dbPath ?? './data.ms',
    masterKey,
    env: envName,
    noAnalytics: raw.noAnalytics === undefined ? false : parseBool('--no-analytics', raw.noAnalytics),
    payloadSizeLimit: raw.payloadSizeLimit === undefined ? 100_000_000 : parseByteSize(raw.payloadSizeLimit),
    logLevel: logLevel as Config['logLevel'],
    maxIndexingMemory: raw.maxIndexingMemory === undefined ? null : parseByteSize(raw.maxIndexingMemory),
    maxIndexingThreads,
    allowedNetworks: allowed,
    maxBatchedTasks: batched,
    searchQueueSize,
    searchesPerCore,
    dropSearchAfterSeconds,
    modelsDir: raw.modelsDir ?? null,
    onnxRuntimePath: raw.onnxRuntimePath ?? null,
    remoteTimeoutMs,
    httpIdleTimeoutSeconds,
    httpHeadersTimeoutSeconds,
    searchResponseBudget,
    restEmbedderTimeoutSeconds,
    restEmbedderMaxRetrySeconds,
    enableMetrics: flag('--experimental-enable-metrics', raw.enableMetrics),
    enableLogsRoute: flag('--experimental-enable-logs-route', raw.enableLogsRoute),
    logsMode: parseLogsMode(raw.logsMode),
    configFile: fromFile.file,
    tls: tlsFrom(raw),
    containsFilterAtStart: flag('--experimental-contains-filter', raw.containsFilter),
    legacySearchAtStart: flag('--experimental-legacy-search-default', raw.legacySearchDefault),
    acceptedWithoutEffect: acceptedWithoutEffect(raw),
    upgradeDb: flag('--upgrade-db', raw.upgradeDb),
    dropDamagedIndexes: flag('--drop-damaged-indexes', raw.dropDamagedIndexes),
    analyticsUrl: analyticsUrl(raw.analyticsUrl),
    analyticsIntervalMs: count('--experimental-analytics-interval-ms', raw.analyticsIntervalMs, 3_600_000, 1),
    dashboard: !flag('--no-dashboard', raw.noDashboard) && envName !== 'production',
    replication,
    experimentalMcp: flag('--experimental-mcp', raw.experimentalMcp),
  };
}

function parseLogsMode(text: string | undefined): Config['logsMode'] {
  if (text === undefined) return 'human';
  const mode = text.toLowerCase();
  if (mode !== 'human' && mode !== 'json')
    throw new ConfigError(`--experimental-logs-mode: unsupported log mode \`${text}\`, expected HUMAN or JSON`);
  return mode;
}

function tlsFrom(raw: RawOptions): TlsConfig | null {
  try {
    return tlsConfigFrom(raw, parseBool);
  } catch (err) {
    if (err instanceof TlsOptionError) throw new ConfigError(err.message);
    throw err;
  }
}

const flag = (name: string, v: string | undefined): boolean => (v === undefined ? false : parseBool(name, v));

/** The config file's values (option name → text), read when one is named or `./config.toml` exists. */
function fileOptions(
  cli: RawOptions,
  env: NodeJS.ProcessEnv,
  cwd: string,
  implicit: boolean,
): { file: string | null; values: Record<string, string> } {
  const named = [cli.configFilePath, env.QUARRY_CONFIG_FILE_PATH, env.MEILI_CONFIG_FILE_PATH].find(
    (v) => v !== undefined && v !== '',
  );
  if (named === undefined && !implicit) return { file: null, values: {} };
  const target = configFileToRead(named, cwd);
  if (!target) return { file: null, values: {} };
  const keys = new Map<string, ConfigFileKey>();
  for (const o of OPTIONS) {
    if (o.name === 'configFilePath') continue;
    const key = tomlKeyOf(o.flag);
    keys.set(key, { name: o.name, kind: o.boolean ? 'boolean' : (TOML_KINDS[key] ?? 'string') });
  }
  const refused = (key: string): string | null => {
    for (const f of REFUSED.keys())
      if (tomlKeyOf(f) === key) return refusalMessage(f, `configuration key \`${key}\` (${f})`);
    return null;
  };
  try {
    return { file: target.file, values: readConfigFile(target, keys, refused) };
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

/** The options set that Quarry accepts without acting on them, validated, one log line each. */
function acceptedWithoutEffect(raw: RawOptions): string[] {
  const set: [string, string | undefined, (v: string) => boolean][] = [
    [
      '--experimental-reduce-indexing-memory-usage',
      raw.reduceIndexingMemory,
      (v) => parseBool('--experimental-reduce-indexing-memory-usage', v),
    ],
    ['--experimental-limit-batched-tasks-total-size', raw.limitBatchedTasksTotalSize, (v) => parseByteSize(v) >= 0],
    [
      '--experimental-embedding-cache-entries',
      raw.embeddingCacheEntries,
      (v) => {
        if (!/^\d+$/.test(v))
          throw new ConfigError(`--experimental-embedding-cache-entries: \`${v}\` is not a non-negative integer`);
        return Number(v) > 0;
      },
    ],
    [
      '--experimental-no-edition-2024-for-settings',
      raw.noEdition2024,
      (v) => parseBool('--experimental-no-edition-2024-for-settings', v),
    ],
  ];
  const out: string[] = [];
  for (const [name, value, check] of set) {
    if (value !== undefined && check(value))
      out.push(`${name} is accepted but changes nothing: ${ACCEPTED_WITHOUT_EFFECT.get(name)}.`);
  }
  return out;
}

function analyticsUrl(v: string | undefined): string | null {
  if (v === undefined) return null;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError(`--experimental-analytics-url: \`${v}\` is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new ConfigError(`--experimental-analytics-url: \`${v}\` is not an http(s) URL`);
  return v;
}
