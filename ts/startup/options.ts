/**
 * The start-up options, one row each: the flag, the QUARRY_* and Meilisearch's MEILI_* names,
 * and the help line (`ts/config.ts` reads them; the replication rows are
 * `startup/replication-options.ts`'s). Data: a new option is a row here.
 */
import { REPLICATION_OPTIONS, type ReplicationRaw } from './replication-options';
import type { TlsRaw } from './tls';

/** Where `personalize` reranks hits unless `--experimental-personalization-url` says otherwise (Cohere's rerank API). */
export const DEFAULT_PERSONALIZATION_URL = 'https://api.cohere.ai/v1/rerank';

export interface OptionSpec {
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
export type RawOptions = TlsRaw &
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
    chatStallTimeoutMs?: string;
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
    help: "the indexer's memory budget (e.g. 2 GiB; default two thirds of the machine's memory)",
  },
  {
    name: 'maxIndexingThreads',
    flag: '--max-indexing-threads',
    env: 'QUARRY_MAX_INDEXING_THREADS',
    meili: 'MEILI_MAX_INDEXING_THREADS',
    help: 'threads the indexer may use at once (default every core)',
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
    name: 'chatStallTimeoutMs',
    flag: '--experimental-chat-stall-timeout-ms',
    env: 'QUARRY_CHAT_STALL_TIMEOUT_MS',
    meili: 'QUARRY_CHAT_STALL_TIMEOUT_MS',
    help: 'milliseconds a chat completion stream waits for its client to read its buffered events before it is cut (default 60000)',
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
