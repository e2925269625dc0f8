/**
 * Start-up configuration: CLI flags, then QUARRY_* environment variables, then
 * Meilisearch's MEILI_* names (so an existing deployment switches binaries without
 * touching its environment), then defaults. Bad options fail fast with a message.
 */
import { z } from 'zod';

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
  /** Whether `GET /` serves the search preview page: off with `--no-dashboard`, and in production (as Meilisearch's dashboard). */
  dashboard: boolean;
}

export class ConfigError extends Error {}

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

type RawOptions = {
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
  dumpDir?: string;
  importDump?: string;
  ignoreMissingDump?: string;
  ignoreDumpIfDbExists?: string;
  snapshotDir?: string;
  scheduleSnapshot?: string;
  importSnapshot?: string;
  ignoreMissingSnapshot?: string;
  ignoreSnapshotIfDbExists?: string;
  noDashboard?: string;
};

export const OPTIONS: OptionSpec[] = [
  { name: 'httpAddr', flag: '--http-addr', env: 'QUARRY_HTTP_ADDR', meili: 'MEILI_HTTP_ADDR', help: 'address to listen on (default localhost:7700)' },
  { name: 'dbPath', flag: '--db-path', env: 'QUARRY_DB_PATH', meili: 'MEILI_DB_PATH', help: 'data directory (default ./data.ms)' },
  { name: 'masterKey', flag: '--master-key', env: 'QUARRY_MASTER_KEY', meili: 'MEILI_MASTER_KEY', help: 'master key; protects every route but /health' },
  { name: 'env', flag: '--env', env: 'QUARRY_ENV', meili: 'MEILI_ENV', help: 'development | production (production requires a master key of 16+ bytes)' },
  { name: 'noAnalytics', flag: '--no-analytics', env: 'QUARRY_NO_ANALYTICS', meili: 'MEILI_NO_ANALYTICS', boolean: true, help: 'disable telemetry' },
  { name: 'payloadSizeLimit', flag: '--http-payload-size-limit', env: 'QUARRY_HTTP_PAYLOAD_SIZE_LIMIT', meili: 'MEILI_HTTP_PAYLOAD_SIZE_LIMIT', help: 'maximum request body (default 100 MB)' },
  { name: 'logLevel', flag: '--log-level', env: 'QUARRY_LOG_LEVEL', meili: 'MEILI_LOG_LEVEL', help: 'OFF, ERROR, WARN, INFO, DEBUG, TRACE (default INFO)' },
  { name: 'maxIndexingMemory', flag: '--max-indexing-memory', env: 'QUARRY_MAX_INDEXING_MEMORY', meili: 'MEILI_MAX_INDEXING_MEMORY', help: 'indexing memory budget (e.g. 2 GiB)' },
  { name: 'maxIndexingThreads', flag: '--max-indexing-threads', env: 'QUARRY_MAX_INDEXING_THREADS', meili: 'MEILI_MAX_INDEXING_THREADS', help: 'indexing threads' },
  { name: 'allowedNetworks', flag: '--experimental-allowed-ip-networks', env: 'QUARRY_ALLOWED_IP_NETWORKS', meili: 'MEILI_EXPERIMENTAL_ALLOWED_IP_NETWORKS', help: 'CIDRs outbound requests may reach (default loopback only; "any" allows all)' },
  { name: 'maxBatchedTasks', flag: '--experimental-max-number-of-batched-tasks', env: 'QUARRY_MAX_BATCHED_TASKS', meili: 'MEILI_EXPERIMENTAL_MAX_NUMBER_OF_BATCHED_TASKS', help: 'tasks per batch (default 1000)' },
  { name: 'searchQueueSize', flag: '--experimental-search-queue-size', env: 'QUARRY_SEARCH_QUEUE_SIZE', meili: 'MEILI_EXPERIMENTAL_SEARCH_QUEUE_SIZE', help: 'searches that may wait for a slot before 503 (default 1000)' },
  { name: 'searchesPerCore', flag: '--experimental-nb-searches-per-core', env: 'QUARRY_SEARCHES_PER_CORE', meili: 'MEILI_EXPERIMENTAL_NB_SEARCHES_PER_CORE', help: 'searches running at once per core (default 4)' },
  { name: 'modelsDir', flag: '--experimental-models-dir', env: 'QUARRY_MODELS_DIR', meili: 'QUARRY_MODELS_DIR', help: 'directory of local embedding models for huggingFace embedders: <dir>/<model>/model.onnx and tokenizer files (models are never downloaded)' },
  { name: 'onnxRuntimePath', flag: '--experimental-onnxruntime-path', env: 'QUARRY_ONNXRUNTIME_PATH', meili: 'ORT_DYLIB_PATH', help: 'path of libonnxruntime.so, which local models run on' },
  { name: 'remoteTimeout', flag: '--experimental-remote-timeout-ms', env: 'QUARRY_REMOTE_TIMEOUT_MS', meili: 'QUARRY_REMOTE_TIMEOUT_MS', help: 'milliseconds another instance of the network may take to answer a search or a forwarded write (default 30000)' },
  { name: 'dropSearchAfter', flag: '--experimental-drop-search-after', env: 'QUARRY_DROP_SEARCH_AFTER', meili: 'MEILI_EXPERIMENTAL_DROP_SEARCH_AFTER', help: 'seconds a search may wait before it is dropped (default 60)' },
  { name: 'dumpDir', flag: '--dump-dir', env: 'QUARRY_DUMP_DIR', meili: 'MEILI_DUMP_DIR', help: 'directory dumps are written to (default dumps/)' },
  { name: 'importDump', flag: '--import-dump', env: 'QUARRY_IMPORT_DUMP', meili: 'MEILI_IMPORT_DUMP', help: 'dump file (Meilisearch or Quarry, version 6) to build the database from at start-up' },
  { name: 'ignoreMissingDump', flag: '--ignore-missing-dump', env: 'QUARRY_IGNORE_MISSING_DUMP', meili: 'MEILI_IGNORE_MISSING_DUMP', boolean: true, help: 'start without importing when the --import-dump file is missing' },
  { name: 'ignoreDumpIfDbExists', flag: '--ignore-dump-if-db-exists', env: 'QUARRY_IGNORE_DUMP_IF_DB_EXISTS', meili: 'MEILI_IGNORE_DUMP_IF_DB_EXISTS', boolean: true, help: 'start on the existing database instead of refusing the --import-dump' },
  { name: 'snapshotDir', flag: '--snapshot-dir', env: 'QUARRY_SNAPSHOT_DIR', meili: 'MEILI_SNAPSHOT_DIR', help: 'directory snapshots are written to (default snapshots/)' },
  { name: 'scheduleSnapshot', flag: '--schedule-snapshot', env: 'QUARRY_SCHEDULE_SNAPSHOT', meili: 'MEILI_SCHEDULE_SNAPSHOT', optionalValue: true, help: 'take a snapshot every N seconds (bare: every 86400)' },
  { name: 'importSnapshot', flag: '--import-snapshot', env: 'QUARRY_IMPORT_SNAPSHOT', meili: 'MEILI_IMPORT_SNAPSHOT', help: 'snapshot file to restore the database from at start-up' },
  { name: 'ignoreMissingSnapshot', flag: '--ignore-missing-snapshot', env: 'QUARRY_IGNORE_MISSING_SNAPSHOT', meili: 'MEILI_IGNORE_MISSING_SNAPSHOT', boolean: true, help: 'start without restoring when the --import-snapshot file is missing' },
  { name: 'ignoreSnapshotIfDbExists', flag: '--ignore-snapshot-if-db-exists', env: 'QUARRY_IGNORE_SNAPSHOT_IF_DB_EXISTS', meili: 'MEILI_IGNORE_SNAPSHOT_IF_DB_EXISTS', boolean: true, help: 'start on the existing database instead of refusing the --import-snapshot' },
  { name: 'noDashboard', flag: '--no-dashboard', env: 'QUARRY_NO_DASHBOARD', meili: 'QUARRY_NO_DASHBOARD', boolean: true, help: 'do not serve the search preview page at / (it is never served with --env production)' },
];

export const LOOPBACK_NETWORKS = ['127.0.0.0/8', '::1/128'];

/** Parses sizes like `100 MB`, `107374182400`, `2GiB`, `512Mb`. */
export function parseByteSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  if (!m) throw new ConfigError(`\`${text}\` is not a valid size`);
  const n = Number(m[1]);
  const unit = m[2].toLowerCase();
  const units: Record<string, number> = {
    '': 1, b: 1,
    kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12,
    kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4,
    k: 1e3, m: 1e6, g: 1e9,
  };
  if (!(unit in units)) throw new ConfigError(`\`${text}\` has an unknown size unit \`${m[2]}\``);
  return Math.round(n * units[unit]);
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
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const spec = OPTIONS.find((o) => o.flag === flag);
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
  const lines = ['Usage: quarry [options]', '', 'Options (each also read from the environment variable shown, or its MEILI_* alias):'];
  for (const o of OPTIONS) lines.push(`  ${o.flag.padEnd(44)} ${o.env.padEnd(34)} ${o.help}`);
  return lines.join('\n');
}

const LOG_LEVELS = ['off', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/** Builds the configuration; throws ConfigError with a readable message on bad input. */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv): Config {
  const cli = parseArgs(argv);
  const raw: RawOptions = {};
  for (const o of OPTIONS) {
    const v = cli[o.name] ?? env[o.env] ?? env[o.meili];
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
  if (!Number.isInteger(batched) || batched < 1) throw new ConfigError(`--experimental-max-number-of-batched-tasks: \`${raw.maxBatchedTasks}\` is not a positive integer`);

  const count = (name: string, value: string | undefined, fallback: number, min: number): number => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new ConfigError(`${name}: \`${value}\` is not an integer of at least ${min}`);
    return n;
  };
  const searchQueueSize = count('--experimental-search-queue-size', raw.searchQueueSize, 1000, 0);
  const searchesPerCore = count('--experimental-nb-searches-per-core', raw.searchesPerCore, 4, 1);
  const dropSearchAfterSeconds = count('--experimental-drop-search-after', raw.dropSearchAfter, 60, 1);
  const remoteTimeoutMs = count('--experimental-remote-timeout-ms', raw.remoteTimeout, 30_000, 1);

  const allowed = raw.allowedNetworks === undefined ? LOOPBACK_NETWORKS : raw.allowedNetworks.split(',').map((s) => s.trim()).filter(Boolean);
  for (const net of allowed) {
    if (net !== 'any' && !/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(net)) throw new ConfigError(`--experimental-allowed-ip-networks: \`${net}\` is not a CIDR`);
  }

  const flag = (name: string, v: string | undefined) => (v === undefined ? false : parseBool(name, v));
  const importDump = raw.importDump ?? null;
  const importSnapshot = raw.importSnapshot ?? null;
  if (importDump !== null && importSnapshot !== null) throw new ConfigError('--import-dump cannot be used with --import-snapshot');
  const requires = (name: string, given: string | undefined, needed: string, present: unknown) => {
    if (flag(name, given) && !present) throw new ConfigError(`${name} requires ${needed}`);
  };
  requires('--ignore-missing-dump', raw.ignoreMissingDump, '--import-dump', importDump);
  requires('--ignore-dump-if-db-exists', raw.ignoreDumpIfDbExists, '--import-dump', importDump);
  requires('--ignore-missing-snapshot', raw.ignoreMissingSnapshot, '--import-snapshot', importSnapshot);
  requires('--ignore-snapshot-if-db-exists', raw.ignoreSnapshotIfDbExists, '--import-snapshot', importSnapshot);
  let scheduleSnapshotSeconds: number | null = null;
  if (raw.scheduleSnapshot !== undefined && !/^false$/i.test(raw.scheduleSnapshot)) {
    scheduleSnapshotSeconds = /^true$/i.test(raw.scheduleSnapshot) ? 86_400 : count('--schedule-snapshot', raw.scheduleSnapshot, 86_400, 1);
  }

  return {
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
    dashboard: !flag('--no-dashboard', raw.noDashboard) && envName !== 'production',
  };
}
