/**
 * Start-up configuration: CLI flags, then QUARRY_* environment variables, then
 * Meilisearch's MEILI_* names (so an existing deployment switches binaries without
 * touching its environment), then defaults. Bad options fail fast with a message.
 */
import { z } from 'zod';
import { type ConfigFileKey, configFileToRead, readConfigFile, TOML_KINDS } from './startup/config-file';
import { ACCEPTED_WITHOUT_EFFECT, REFUSED, meiliEnvOf, refusalMessage, tomlKeyOf } from './startup/meili-options';
import type { ReplicationConfig } from './replication/replica';
import { DEFAULT_PERSONALIZATION_URL, OPTIONS, type RawOptions } from './startup/options';
import { replicationFrom, ReplicationOptionError } from './startup/replication-options';
import { type TlsConfig, tlsConfigFrom, TlsOptionError } from './startup/tls';

export { DEFAULT_PERSONALIZATION_URL, OPTIONS };

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
  /** Bytes the indexer's buffers may hold (`engine::indexing`); none: two thirds of the memory. */
  maxIndexingMemory: number | null;
  /** Threads the indexer may use at once (`engine::indexing`); none: every core. */
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
  /** How long a chat stream waits for its client to read before it is cut (`http/event-stream.ts`). */
  chatStallTimeoutMs: number;
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
    maxIndexingMemory:
      raw.maxIndexingMemory === undefined ? null : namedSize('--max-indexing-memory', raw.maxIndexingMemory),
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
    chatStallTimeoutMs: count('--experimental-chat-stall-timeout-ms', raw.chatStallTimeoutMs, 60_000, 1),
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
