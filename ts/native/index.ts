/**
 * ts/native: the only module that loads the `.node` addon.
 *
 * It owns the typed surface of the Rust core and turns errors that carry a catalog `code`
 * into `ApiError`s. It deliberately holds no logic: every method is one call into Rust. One
 * file here per file of the binding (`crates/node/src/`): `binding.ts` ↔ `lib.rs`,
 * `documents.ts` ↔ `documents.rs`, `kv.ts` ↔ `kv.rs`, and this file ↔ `index.rs` (one open
 * index), which also re-exports the others as the module's entry. The addon's types come from
 * its generated declaration file (see `binding.ts`), and the JSON its calls take and answer is
 * typed by `shapes.generated.ts`, generated from the engine's serde types (a cargo test fails
 * when it drifts); the contract itself is documented on the Rust side.
 */
import type * as Native from '../../native/index';
import { binding, call, callSync } from './binding';
import type {
  BatchInput,
  BatchOp,
  BatchOpResult,
  FacetSearchQuery,
  FetchQuery,
  FieldsQuery,
  IndexStats,
  SearchQuery,
  Shards,
  SimilarQuery,
} from './shapes.generated';

export { DERIVATION_CANDIDATES_HEADER, FEDERATION_RUNS_HEADER, type OutboundAnswer, outboundRequest } from './outbound';
export {
  catalogByCode,
  checkEmbedder,
  configureIndexing,
  configureModels,
  configureOutbound,
  configureRemoteEmbedders,
  engineVersion,
  renderTemplate,
  type ErrorCodeRow,
  hideSecret,
  releaseFreeMemory,
  settingsLocales,
  shortenSlice,
} from './binding';
export {
  checkDocumentFilter,
  checkSearchFilter,
  checkEditFunction,
  foreignConditions,
  type PayloadFormat,
  ruleFiltersMatch,
  stageDocuments,
} from './documents';
export { damagedFileMessage, type KvEntry, type KvOp, KvStore } from './kv';

export type {
  BatchOp,
  BatchOpResult,
  FacetSearchQuery,
  FetchQuery,
  FieldsQuery,
  Hybrid,
  IndexStats,
  SearchQuery,
  Shards,
  SimilarQuery,
  StagedCheck,
} from './shapes.generated';

/** One open index of the engine. */
export class NativeIndex {
  private constructor(private readonly raw: Native.NativeIndex) {}

  /** Opens or creates the index in `dir`; `existing`: it must exist (a missing store is damage, not a new index). */
  static open(dir: string, existing = false): NativeIndex {
    return new NativeIndex(callSync(() => binding.NativeIndex.open(dir, existing)));
  }

  /** Opens an index read-only, beside the process that writes it; each read follows its commits. */
  static openReadOnly(dir: string): NativeIndex {
    return new NativeIndex(callSync(() => binding.NativeIndex.openReadOnly(dir)));
  }

  /** Why the inverted index was rebuilt from the documents when the index opened (a damaged or missing file), if it was. */
  repaired(): string | null {
    return this.raw.repaired() ?? null;
  }

  async applyBatch(ops: BatchOp[]): Promise<BatchOpResult[]> {
    const batch: BatchInput = { ops };
    const out = await call(() => this.raw.applyBatch(JSON.stringify(batch)));
    return (JSON.parse(out) as { results: BatchOpResult[] }).results;
  }

  progress(): unknown {
    const p = this.raw.progress();
    return p === null ? null : JSON.parse(p);
  }

  getDocument(id: string, fields: string[] | null, retrieveVectors = false): Promise<Buffer | null> {
    return call(() => this.raw.getDocument(id, fields ? JSON.stringify(fields) : null, retrieveVectors));
  }

  fetchDocuments(query: FetchQuery): Promise<Buffer> {
    return call(() => this.raw.fetchDocuments(JSON.stringify(query)));
  }

  /**
   * `receivedAt`: when the request arrived (`process.hrtime`), which `processingTimeMs` counts
   * from. The query's `vector` travels apart, as `f32` bytes: printing hundreds of floats as
   * JSON would cost the JavaScript thread more than the engine's walk of the graph.
   */
  search(query: SearchQuery, receivedAt?: bigint): Promise<Buffer> {
    const { vector, ...rest } = query;
    const bytes = vector ? Buffer.from(Float32Array.from(vector).buffer) : null;
    return call(() => this.raw.search(JSON.stringify(rest), bytes, sinceMs(receivedAt)));
  }

  /** `search` on the calling thread (the library's `searchSync`); `processingTimeMs` counts from the call. */
  searchSync(query: SearchQuery): Buffer {
    const { vector, ...rest } = query;
    const bytes = vector ? Buffer.from(Float32Array.from(vector).buffer) : null;
    return callSync(() => this.raw.searchSync(JSON.stringify(rest), bytes));
  }

  facetSearch(query: FacetSearchQuery): Promise<Buffer> {
    return call(() => this.raw.facetSearch(JSON.stringify(query)));
  }

  /** A facet search over a network: the instances' `facetHits` as one list (see the binding). */
  mergeFacetHits(request: unknown): Promise<Buffer> {
    return call(() => this.raw.mergeFacetHits(JSON.stringify(request)));
  }

  /**
   * For the `_foreign` conditions of another index's `filter` that link to this index: the ids
   * of the documents each condition numbered in `which` (reading order) selects here.
   */
  async foreignIds(filter: unknown, which: number[]): Promise<string[][]> {
    return JSON.parse(await call(() => this.raw.foreignIds(JSON.stringify(filter), which)));
  }

  /** `receivedAt`: as for `search`. */
  similar(query: SimilarQuery, receivedAt?: bigint): Promise<Buffer> {
    return call(() => this.raw.similar(JSON.stringify(query), sinceMs(receivedAt)));
  }

  stats(): IndexStats {
    return JSON.parse(callSync(() => this.raw.stats())) as IndexStats;
  }

  primaryKey(): string | null {
    return this.raw.primaryKey();
  }

  /** The `foreignKeys` setting alone (cheap: a search's hydration reads it). */
  foreignKeys(): Array<{ foreignIndexUid: string; fieldName: string }> {
    return JSON.parse(this.raw.foreignKeys()) as Array<{ foreignIndexUid: string; fieldName: string }>;
  }

  /** The settings view (`GET /settings` with every field), defaults included. */
  settings(): Record<string, unknown> {
    return JSON.parse(this.raw.settings()) as Record<string, unknown>;
  }

  /** Merges every segment of the inverted index into one (`POST /indexes/{uid}/compact`). */
  async compact(): Promise<void> {
    await call(() => this.raw.compact(false));
  }

  /**
   * After a batch, nothing else queued: merges the segments when enough of the index lies
   * outside those the last merge left (into two for a large index). `merged` once merged (a
   * bulk load); `later` when only a trickle is new, for `compactLater`; `nothing` otherwise.
   */
  async compactIfWorthwhile(): Promise<'nothing' | 'merged' | 'later'> {
    return (await call(() => this.raw.compact(true))) as 'nothing' | 'merged' | 'later';
  }

  /** The merge `compactIfWorthwhile` left for later: the next batches commit while it runs. */
  async compactLater(): Promise<void> {
    await call(() => this.raw.compactLater());
  }

  /** Builds the value columns searches read, so the first filter, sort or facet count finds them. */
  async prepareColumns(): Promise<void> {
    await call(() => this.raw.prepareColumns());
  }

  /** A consistent copy of the index's files in the new directory `dir` (snapshots). */
  async copyTo(dir: string): Promise<void> {
    await call(() => this.raw.copyTo(dir));
  }

  /** The index's attributes with what its settings make of each (see the binding). */
  fields(query: FieldsQuery): Promise<Buffer> {
    return call(() => this.raw.fields(JSON.stringify(query)));
  }

  /** The documents whose shard this instance no longer holds, by shard (see the binding). */
  documentsElsewhere(shards: Shards): Promise<Buffer> {
    return call(() => this.raw.documentsElsewhere(JSON.stringify(shards)));
  }

  documentCount(): number {
    return this.raw.documentCount();
  }

  close(): void {
    this.raw.close();
  }

  /** A federated multi-search: `indexes[i]` is the index of `request.queries[i]`; `receivedAt`: as for `search`. */
  static federatedSearch(indexes: NativeIndex[], request: unknown, receivedAt?: bigint): Promise<Buffer> {
    return call(() =>
      binding.federatedSearch(
        indexes.map((i) => i.raw),
        JSON.stringify(request),
        sinceMs(receivedAt),
      ),
    );
  }

  /** What the words of each query of a federated `request` derive from here (see the binding). */
  static derivationCandidates(indexes: NativeIndex[], request: unknown): Promise<Buffer> {
    return call(() =>
      binding.derivationCandidates(
        indexes.map((i) => i.raw),
        JSON.stringify(request),
      ),
    );
  }

  /** One page of a network's documents from each instance's first pages (see the binding). */
  static mergeDocumentPages(request: unknown): Promise<Buffer> {
    return call(() => binding.mergeDocumentPages(JSON.stringify(request)));
  }
}

/** How long ago (ms) a request arrived at `receivedAt` (`process.hrtime`); null: it did not come over HTTP. */
function sinceMs(receivedAt: bigint | undefined): number | null {
  return receivedAt === undefined ? null : Number(process.hrtime.bigint() - receivedAt) / 1e6;
}
