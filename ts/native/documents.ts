/**
 * Document payloads, and filters read without an index: before a task exists, and the filter
 * conditions of dynamic search rules (↔ `crates/node/src/documents.rs`).
 */
import { binding, call, callSync } from './binding';

/**
 * Checks the filter of a deletion by filter, or of an edition of `indexUid`, without an index
 * when its task is enqueued: `null` and empty filters are refused, syntax errors throw
 * `invalid_document_filter` (naming the edition's index), `CONTAINS` when `containsFilter` is
 * off `feature_not_enabled`.
 */
export function checkDocumentFilter(filter: unknown, containsFilter: boolean, indexUid: string | null = null): void {
  callSync(() => binding.checkDocumentFilter(JSON.stringify(filter), containsFilter, indexUid));
}

/** Checks a search's filter as `checkDocumentFilter` does, with `invalid_search_filter`. */
export function checkSearchFilter(filter: unknown, containsFilter: boolean): void {
  callSync(() => binding.checkSearchFilter(JSON.stringify(filter), containsFilter));
}

/**
 * The `_foreign` conditions of a filter (string or array form), in reading order: each one's
 * field and whether it holds another `_foreign`. Throws the filter's syntax errors
 * (`invalid_document_filter` when `document`, else `invalid_search_filter`), or
 * `feature_not_enabled` for a `_foreign` when `foreignKeys` is off.
 */
export function foreignConditions(filter: unknown, document: boolean, foreignKeys: boolean): Array<[string, boolean]> {
  return JSON.parse(callSync(() => binding.foreignConditions(JSON.stringify(filter), document, foreignKeys)));
}

/**
 * For each dynamic search rule's filter condition (`values`: attribute to value), whether a
 * search whose filter is `filter` (`null` for none) meets it, as Meilisearch reads them.
 */
export function ruleFiltersMatch(filter: unknown, conditions: Record<string, unknown>[]): boolean[] {
  return callSync(() => binding.ruleFiltersMatch(JSON.stringify(filter ?? null), JSON.stringify(conditions)));
}

/** Compiles a document edition function (Rhai): `bad_request` with the compiler's message if it does not compile. */
export function checkEditFunction(fn: string): void {
  callSync(() => binding.checkEditFunction(fn));
}

export type PayloadFormat = 'json' | 'ndjson' | 'csv';

/** A staged payload file: its documents, and the length and CRC-32 its task checks before reading it. */
export interface Staged {
  documents: number;
  bytes: number;
  crc32: number;
}

/** Parses and validates a documents payload off the JS thread; writes canonical NDJSON, fsynced. */
export function stageDocuments(
  payload: Buffer,
  format: PayloadFormat,
  csvDelimiter: string | null,
  destPath: string,
): Promise<Staged> {
  return call(() => binding.stageDocuments(payload, format, csvDelimiter, destPath));
}
