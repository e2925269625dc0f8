/**
 * Document payloads, and filters read without an index: before a task exists, and the filter
 * conditions of dynamic search rules (↔ `crates/node/src/documents.rs`).
 */
import { binding, call, callSync } from './binding';

/**
 * Checks a document filter's syntax (string or array form) without an index, as
 * delete-by-filter does at enqueue time; throws `invalid_document_filter` (or
 * `feature_not_enabled` for `CONTAINS` when `containsFilter` is off).
 */
export function checkDocumentFilter(filter: unknown, containsFilter: boolean): void {
  callSync(() => binding.checkDocumentFilter(JSON.stringify(filter), containsFilter));
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
 * Whether a search whose filter is `filter` (`null` for none) meets a dynamic search rule's
 * filter condition (`values`: attribute to value), as Meilisearch reads it.
 */
export function ruleFilterMatches(filter: unknown, values: Record<string, unknown>): boolean {
  return callSync(() => binding.ruleFilterMatches(JSON.stringify(filter ?? null), JSON.stringify(values)));
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
