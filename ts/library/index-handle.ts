/** One index of an embedded Quarry: documents, search, settings and stats (see `quarry.ts`). */
import { FULL_ACCESS } from '../auth/guard';
import { addDocuments, deleteDocuments, type DocumentSelection, fetchDocuments } from '../commands/documents';
import { compactIndex, deleteIndex, updateIndex, updateSettings } from '../commands/indexes';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { parseWith } from '../errors/from-zod';
import { notFound } from '../indexes/registry';
import { FETCH_CODES, FetchSchema } from '../schemas/documents';
import { statsOf } from '../indexes/stats';
import { checkIndexUid } from '../schemas/indexes';
import { parseSettingsBody, resetPatch } from '../settings';
import { settingsView } from '../settings/view';
import { asQuarryError, guarded } from './errors';
import type { Quarry } from './quarry';
import type {
  AddDocumentsOptions,
  DocumentsInput,
  DocumentsPage,
  DocumentsQuery,
  FacetSearchParams,
  FacetSearchResponse,
  IndexInfo,
  IndexStats,
  SearchParams,
  SearchResponse,
  Settings,
  SettingsPatch,
  SimilarParams,
  TaskPromise,
} from './types';

export class QuarryIndex<T extends Record<string, unknown> = Record<string, unknown>> {
  /** @internal */
  constructor(
    private readonly quarry: Quarry,
    private readonly deps: Deps,
    readonly uid: string,
  ) {}

  /** Adds documents, replacing stored ones with the same id (`POST /documents`). */
  addDocuments(documents: DocumentsInput, options: AddDocumentsOptions = {}): TaskPromise {
    return this.add(documents, options, 'replace');
  }

  /** Adds documents, merging their fields into stored ones with the same id (`PUT /documents`). */
  updateDocuments(documents: DocumentsInput, options: AddDocumentsOptions = {}): TaskPromise {
    return this.add(documents, options, 'update');
  }

  private add(documents: DocumentsInput, o: AddDocumentsOptions, method: 'replace' | 'update'): TaskPromise {
    return this.quarry.write(async () => {
      const uid = checkIndexUid(this.uid);
      const format = Array.isArray(documents) ? 'json' : (o.format ?? 'json');
      if (o.csvDelimiter !== undefined && format !== 'csv')
        throw new ApiError('invalid_document_csv_delimiter', '`csvDelimiter` applies to CSV documents only.');
      return addDocuments(this.deps, uid, await payloadBytes(documents), {
        format,
        method,
        primaryKey: o.primaryKey ?? null,
        csvDelimiter: o.csvDelimiter ?? null,
        customMetadata: o.customMetadata,
        skipCreation: o.skipCreation ?? false,
        canCreateIndex: true,
      });
    });
  }

  /** One document, or `document_not_found`. */
  async getDocument(id: string | number, options: { fields?: string[]; retrieveVectors?: boolean } = {}): Promise<T> {
    return guarded(async () => {
      const bytes = await this.handle().getDocument(
        String(id),
        options.fields ?? null,
        options.retrieveVectors ?? false,
      );
      if (bytes === null) throw new ApiError('document_not_found', `Document \`${id}\` not found.`);
      return JSON.parse(bytes.toString()) as T;
    });
  }

  /** A page of documents, optionally filtered and sorted (`POST /documents/fetch`). */
  async getDocuments(query: DocumentsQuery = {}): Promise<DocumentsPage<T>> {
    return guarded(async () => {
      const body = parseWith(FetchSchema, query, FETCH_CODES);
      const bytes = await fetchDocuments(this.deps, checkIndexUid(this.uid), body);
      return JSON.parse(bytes.toString()) as DocumentsPage<T>;
    });
  }

  deleteDocument(id: string | number): TaskPromise {
    return this.remove({ ids: [String(id)] });
  }

  /** Deletes documents by id, or those a filter matches (`{ filter: 'year < 1990' }`). */
  deleteDocuments(selection: Array<string | number> | { filter: string | Array<string | string[]> }): TaskPromise {
    if (Array.isArray(selection)) return this.remove({ ids: selection.map(String) });
    return this.remove({ filter: selection.filter });
  }

  deleteAllDocuments(): TaskPromise {
    return this.remove({ all: true });
  }

  private remove(selection: DocumentSelection): TaskPromise {
    return this.quarry.write(() => deleteDocuments(this.deps, checkIndexUid(this.uid), selection));
  }

  /** Searches the index: `q` and the same parameters as `POST /search`. */
  async search(q?: string | null, params: SearchParams = {}): Promise<SearchResponse<T>> {
    return JSON.parse((await this.searchBytes({ ...params, ...(q === undefined ? {} : { q }) })).toString());
  }

  /**
   * `search`, answered on the calling thread, without a promise: the index is read where it
   * lies, so a search box's query costs a few hundredths of a millisecond more than the engine
   * itself rather than a hop to the thread pool and back. The thread is busy for as long as the
   * search runs: keep large pages and heavy facets on `search` in a server that must stay
   * responsive. Searches that wait on something else (`hybrid` without `vector`, `media`,
   * `useNetwork`, `personalize`) throw; `search` runs them.
   */
  searchSync(q?: string | null, params: SearchParams = {}): SearchResponse<T> {
    return JSON.parse(this.searchBytesSync({ ...params, ...(q === undefined ? {} : { q }) }).toString());
  }

  /** `searchSync`'s answer as the JSON bytes the server would send. */
  searchBytesSync(body: SearchParams): Buffer {
    try {
      return this.quarry.searchService.searchSync(FULL_ACCESS, this.uid, body);
    } catch (err) {
      throw asQuarryError(err);
    }
  }

  /** The search's answer as the JSON bytes the server would send (no parse: serve them as they are). */
  searchBytes(body: SearchParams): Promise<Buffer> {
    return guarded(() => this.quarry.searchService.search(FULL_ACCESS, this.uid, body));
  }

  async facetSearch(params: FacetSearchParams): Promise<FacetSearchResponse> {
    return JSON.parse(
      (await guarded(() => this.quarry.searchService.facetSearch(FULL_ACCESS, this.uid, params))).toString(),
    );
  }

  /** Documents near one document's embedding (`POST /similar`). */
  async similar(params: SimilarParams): Promise<SearchResponse<T>> {
    return JSON.parse(
      (await guarded(() => this.quarry.searchService.similar(FULL_ACCESS, this.uid, params))).toString(),
    );
  }

  async getSettings(): Promise<Settings> {
    return guarded(() => settingsView(this.deps, checkIndexUid(this.uid)) as unknown as Settings);
  }

  /** Changes the settings given (a task; the index is created if missing). */
  updateSettings(patch: SettingsPatch): TaskPromise {
    return this.quarry.write(async () => {
      const uid = checkIndexUid(this.uid);
      return updateSettings(
        this.deps,
        uid,
        parseSettingsBody(patch, this.deps.features.get() as Record<string, boolean>),
        false,
        true,
      );
    });
  }

  /** Puts every setting back to its default (a task). */
  resetSettings(): TaskPromise {
    return this.quarry.write(async () => updateSettings(this.deps, checkIndexUid(this.uid), resetPatch(), true, true));
  }

  async getStats(): Promise<IndexStats> {
    return guarded(() => {
      const uid = checkIndexUid(this.uid);
      if (!this.deps.registry.has(uid)) throw notFound(uid);
      return statsOf(this.deps, uid, { human: false, internal: false }).view as unknown as IndexStats;
    });
  }

  async getInfo(): Promise<IndexInfo> {
    return this.quarry.getIndex(this.uid);
  }

  /** Changes the primary key (of an index without documents). */
  update(options: { primaryKey: string }): TaskPromise {
    return this.quarry.write(async () => updateIndex(this.deps, checkIndexUid(this.uid), options.primaryKey, null));
  }

  /** Merges the index's inverted index into one segment (`POST /indexes/{uid}/compact`; a task). */
  compact(): TaskPromise {
    return this.quarry.write(async () => compactIndex(this.deps, checkIndexUid(this.uid)));
  }

  delete(): TaskPromise {
    return this.quarry.write(async () => deleteIndex(this.deps, checkIndexUid(this.uid)));
  }

  private handle() {
    return this.deps.registry.handle(checkIndexUid(this.uid));
  }
}

/** The bytes of a documents payload: objects as JSON; bytes, text and streams as they are. */
async function payloadBytes(documents: DocumentsInput): Promise<Buffer> {
  if (Array.isArray(documents)) return Buffer.from(JSON.stringify(documents));
  if (typeof documents === 'string') return Buffer.from(documents);
  if (documents instanceof Uint8Array) return Buffer.isBuffer(documents) ? documents : Buffer.from(documents);
  const chunks: Buffer[] = [];
  for await (const chunk of documents) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk));
  return Buffer.concat(chunks);
}
