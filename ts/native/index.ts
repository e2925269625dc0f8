/**
 * ts/native: the only module that loads the `.node` addon.
 *
 * It owns the typed surface of the Rust core (see docs/native-contract.md) and turns
 * errors that carry a catalog `code` into `ApiError`s. It deliberately holds no logic:
 * every method is one call into Rust. Design decision: the generated napi loader lives
 * in `native/` at the repository root rather than here, so the same relative path works
 * from `ts/native` (tests run through swc) and from `dist/native` (the built server).
 */
import { ApiError } from '../errors/api-error';

export interface ErrorCodeRow {
  code: string;
  errorType: string;
  status: number;
}

export interface KvOp {
  db: string;
  key: string;
  value?: Buffer | null;
}

export interface KvEntry {
  key: string;
  value: Buffer;
}

interface RawKvStore {
  commit(ops: { db: string; key: string; len: number }[], values: Buffer): Promise<void>;
  scan(db: string): KvEntry[];
  get(db: string, key: string): Buffer | null;
  close(): void;
}

interface RawIndex {
  applyBatch(batchJson: string): Promise<string>;
  progress(): string | null;
  getDocument(id: string, fieldsJson: string | null): Promise<Buffer | null>;
  fetchDocuments(queryJson: string): Promise<Buffer>;
  search(queryJson: string): Promise<Buffer>;
  facetSearch(queryJson: string): Promise<Buffer>;
  stats(): string;
  primaryKey(): string | null;
  settings(): string;
  documentCount(): number;
  close(): void;
}

interface Binding {
  errorCatalog(): ErrorCodeRow[];
  stageDocuments(payload: Buffer, format: string, csvDelimiter: string | null, destPath: string): Promise<number>;
  engineVersion(): string;
  settingsLocales(): string[][];
  hideSecret(secret: string): string;
  checkDocumentFilter(filterJson: string, containsFilter: boolean): void;
  KvStore: { open(path: string, mapSizeBytes: number): RawKvStore };
  NativeIndex: { open(dir: string): RawIndex };
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const binding: Binding = require('../../native/index.js');

/**
 * Rethrows an addon error as an ApiError. The binding encodes user-facing errors as a JSON
 * message `{"code","message"}` (napi's own `code` property only carries napi statuses).
 */
function translate(err: unknown): never {
  const e = err as { message?: unknown };
  if (e && typeof e.message === 'string' && e.message.startsWith('{"code":')) {
    let parsed: { code?: unknown; message?: unknown } | undefined;
    try {
      parsed = JSON.parse(e.message) as { code?: unknown; message?: unknown };
    } catch {
      parsed = undefined;
    }
    if (parsed && typeof parsed.code === 'string' && catalogByCode().has(parsed.code)) {
      throw new ApiError(parsed.code, String(parsed.message ?? ''));
    }
  }
  throw err;
}

async function call<T>(p: () => Promise<T>): Promise<T> {
  try {
    return await p();
  } catch (err) {
    translate(err);
  }
}

function callSync<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    translate(err);
  }
}

let catalogCache: Map<string, ErrorCodeRow> | undefined;

/** The error table of the Rust `api-types` crate, keyed by code. */
export function catalogByCode(): Map<string, ErrorCodeRow> {
  if (!catalogCache) catalogCache = new Map(binding.errorCatalog().map((r) => [r.code, r]));
  return catalogCache;
}

export function engineVersion(): string {
  return binding.engineVersion();
}

/** The engine's locale table: `[twoLetter, threeLetter]` pairs, then `[cmn]` alone. */
export function settingsLocales(): string[][] {
  return binding.settingsLocales();
}

/** The engine's redaction of a secret (embedder API keys). */
export function hideSecret(secret: string): string {
  return binding.hideSecret(secret);
}

/**
 * Checks a document filter's syntax (string or array form) without an index, as
 * delete-by-filter does at enqueue time; throws `invalid_document_filter` (or
 * `feature_not_enabled` for `CONTAINS` when `containsFilter` is off).
 */
export function checkDocumentFilter(filter: unknown, containsFilter: boolean): void {
  callSync(() => binding.checkDocumentFilter(JSON.stringify(filter), containsFilter));
}

export type PayloadFormat = 'json' | 'ndjson' | 'csv';

/** Parses and validates a documents payload off the JS thread; writes canonical NDJSON, fsynced. */
export function stageDocuments(payload: Buffer, format: PayloadFormat, csvDelimiter: string | null, destPath: string): Promise<number> {
  return call(() => binding.stageDocuments(payload, format, csvDelimiter, destPath));
}

/** The durable key-value store (one LMDB environment) behind tasks, batches, indexes and keys. */
export class KvStore {
  private constructor(private readonly raw: RawKvStore) {}

  static open(path: string, mapSizeBytes: number): KvStore {
    return new KvStore(callSync(() => binding.KvStore.open(path, mapSizeBytes)));
  }

  commit(ops: KvOp[]): Promise<void> {
    const values = Buffer.concat(ops.flatMap((o) => (o.value ? [o.value] : [])));
    const meta = ops.map((o) => ({ db: o.db, key: o.key, len: o.value ? o.value.length : -1 }));
    return call(() => this.raw.commit(meta, values));
  }

  scan(db: string): KvEntry[] {
    return callSync(() => this.raw.scan(db));
  }

  get(db: string, key: string): Buffer | null {
    return callSync(() => this.raw.get(db, key));
  }

  close(): void {
    this.raw.close();
  }
}

export type BatchOp =
  | { type: 'addDocuments'; taskUid: number; file: string; method: 'replace' | 'update'; primaryKey: string | null; skipCreation: boolean }
  | { type: 'deleteDocuments'; taskUid: number; ids: string[] }
  | { type: 'deleteByFilter'; taskUid: number; filter: unknown }
  | { type: 'clearDocuments'; taskUid: number }
  | { type: 'setPrimaryKey'; taskUid: number; primaryKey: string }
  | { type: 'updateSettings'; taskUid: number; patch: unknown };

export type BatchOpResult =
  | { taskUid: number; ok: true; indexedDocuments?: number; deletedDocuments?: number }
  | { taskUid: number; ok: false; error: { code: string; message: string } };

export interface IndexStats {
  numberOfDocuments: number;
  rawDocumentDbSize: number;
  avgDocumentSize: number;
  fieldDistribution: Record<string, number>;
}

export interface FetchQuery {
  offset: number;
  limit: number;
  fields: string[] | null;
  ids: string[] | null;
  retrieveVectors: boolean;
  /** `attr:asc|desc` keys, checked against `sortableAttributes` by the engine. */
  sort?: string[] | null;
  /** A filter (string or array form), checked against `filterableAttributes` by the engine. */
  filter?: unknown;
  /** The `containsFilter` experimental feature (`CONTAINS` is refused without it). */
  containsFilter?: boolean;
}

/** One open index of the engine. */
export class NativeIndex {
  private constructor(private readonly raw: RawIndex) {}

  static open(dir: string): NativeIndex {
    return new NativeIndex(callSync(() => binding.NativeIndex.open(dir)));
  }

  /** `idle`: nothing else is queued for this index, so the engine may compact it afterwards. */
  async applyBatch(ops: BatchOp[], idle = false): Promise<BatchOpResult[]> {
    const out = await call(() => this.raw.applyBatch(JSON.stringify({ ops, idle })));
    return (JSON.parse(out) as { results: BatchOpResult[] }).results;
  }

  progress(): unknown {
    const p = this.raw.progress();
    return p === null ? null : JSON.parse(p);
  }

  getDocument(id: string, fields: string[] | null): Promise<Buffer | null> {
    return call(() => this.raw.getDocument(id, fields ? JSON.stringify(fields) : null));
  }

  fetchDocuments(query: FetchQuery): Promise<Buffer> {
    return call(() => this.raw.fetchDocuments(JSON.stringify(query)));
  }

  search(query: unknown): Promise<Buffer> {
    return call(() => this.raw.search(JSON.stringify(query)));
  }

  facetSearch(query: unknown): Promise<Buffer> {
    return call(() => this.raw.facetSearch(JSON.stringify(query)));
  }

  stats(): IndexStats {
    return JSON.parse(callSync(() => this.raw.stats())) as IndexStats;
  }

  primaryKey(): string | null {
    return this.raw.primaryKey();
  }

  /** The settings view (`GET /settings` with every field), defaults included. */
  settings(): Record<string, unknown> {
    return JSON.parse(this.raw.settings()) as Record<string, unknown>;
  }

  documentCount(): number {
    return this.raw.documentCount();
  }

  close(): void {
    this.raw.close();
  }
}
