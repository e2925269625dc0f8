/**
 * Document writes as tasks, for the routes and the embedded library alike: the payload is
 * parsed and staged on disk (fsynced) before the task is enqueued, so a task acknowledged is a
 * task whose documents are on disk. The documents reads are here too (local, or over the
 * network's shards), shared by the routes, the library and the MCP endpoint.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { checkDocumentFilter, checkEditFunction, type PayloadFormat, stageDocuments } from '../native';
import { gateForeign, resolveForeign } from '../search/foreign';
import { documentOverNetwork, type DocumentsQuery, fetchOverNetwork } from '../network/documents';
import { usesNetwork } from '../network/search';
import { documentIds, type FetchBody } from '../schemas/documents';
import { checkEditContext, type EditBody } from '../schemas/edit';
import type { TaskRecord } from '../tasks/types';

export interface AddDocumentsOptions {
  format: PayloadFormat;
  /** `replace` (POST: whole documents) or `update` (PUT: fields merged into stored ones). */
  method: 'replace' | 'update';
  primaryKey: string | null;
  csvDelimiter: string | null;
  customMetadata?: string;
  skipCreation: boolean;
  /** Whether the caller may create the index if it does not exist. */
  canCreateIndex: boolean;
}

/** Stages `payload` (JSON, NDJSON or CSV bytes) and enqueues its addition to `uid`. */
export async function addDocuments(
  deps: Deps,
  uid: string,
  payload: Buffer,
  o: AddDocumentsOptions,
): Promise<TaskRecord> {
  if (o.csvDelimiter !== null && !(o.csvDelimiter.length === 1 && o.csvDelimiter.charCodeAt(0) < 0x80)) {
    throw new ApiError(
      'invalid_document_csv_delimiter',
      `Invalid value in parameter \`csvDelimiter\`: \`${o.csvDelimiter}\` is not a valid csv delimiter. It must be a single ASCII character.`,
    );
  }
  fs.mkdirSync(deps.updateFiles, { recursive: true });
  const file = path.join(deps.updateFiles, `${randomUUID()}.ndjson`);
  try {
    const { documents, bytes, crc32 } = await stageDocuments(payload, o.format, o.csvDelimiter, file);
    return await deps.queue.enqueue({
      indexUid: uid,
      type: 'documentAdditionOrUpdate',
      details: { receivedDocuments: documents, indexedDocuments: null },
      payload: {
        kind: 'documentAddition',
        file,
        method: o.method,
        primaryKey: o.primaryKey,
        skipCreation: o.skipCreation,
        canCreateIndex: o.canCreateIndex,
        check: { bytes, crc32 },
      },
      customMetadata: o.customMetadata,
    });
  } catch (err) {
    fs.rmSync(file, { force: true });
    throw err;
  }
}

/** Which documents a deletion removes. */
export type DocumentSelection = { all: true } | { ids: string[] } | { filter: unknown };

/**
 * Enqueues a deletion. A filter is refused when empty, its syntax is checked now and its
 * filterability when the task runs (as Meilisearch does); callers check its shape first.
 */
export function deleteDocuments(
  deps: Deps,
  uid: string,
  selection: DocumentSelection,
  customMetadata?: string,
): Promise<TaskRecord> {
  const { queue } = deps;
  if ('all' in selection) {
    return queue.enqueue({
      indexUid: uid,
      type: 'documentDeletion',
      details: { deletedDocuments: null },
      payload: { kind: 'documentClear' },
      customMetadata,
    });
  }
  if ('ids' in selection) {
    const { ids } = selection;
    return queue.enqueue({
      indexUid: uid,
      type: 'documentDeletion',
      details: { providedIds: ids.length, deletedDocuments: null, originalFilter: null },
      payload: { kind: 'documentDeletion', ids },
      customMetadata,
    });
  }
  gateForeign(deps, selection.filter);
  checkDocumentFilter(selection.filter, deps.features.get().containsFilter);
  return queue.enqueue({
    indexUid: uid,
    type: 'documentDeletion',
    details: { providedIds: 0, deletedDocuments: null, originalFilter: JSON.stringify(selection.filter) },
    payload: { kind: 'documentDeletionByFilter', filter: selection.filter },
    customMetadata,
  });
}

/**
 * Enqueues an edition of documents by a Rhai function (`editDocumentsByFunction`; the body's
 * shape already checked). The function's compilation, then `context`, then the filter's syntax
 * are checked now; filterability, and what the function does to each document, when the task
 * runs (see `crates/engine/src/edit.rs`).
 */
export function editDocuments(deps: Deps, uid: string, edit: EditBody, customMetadata?: string): Promise<TaskRecord> {
  checkEditFunction(edit.function);
  checkEditContext(edit.context);
  if (edit.filter !== null) {
    gateForeign(deps, edit.filter);
    checkDocumentFilter(edit.filter, deps.features.get().containsFilter, uid);
  }
  return deps.queue.enqueue({
    indexUid: uid,
    type: 'documentEdition',
    details: {
      editedDocuments: null,
      deletedDocuments: null,
      originalFilter: edit.filter === null ? null : JSON.stringify(edit.filter),
      context: edit.context,
      function: edit.function,
    },
    payload: { kind: 'documentEdition', function: edit.function, filter: edit.filter, context: edit.context },
    customMetadata,
  });
}

/**
 * A page of documents of `uid` for a checked query, as JSON bytes: from every shard once the
 * network has some (unless `useNetwork` is false), else local.
 */
export async function listDocuments(
  deps: Deps,
  uid: string,
  query: DocumentsQuery,
  useNetwork: boolean | null | undefined,
): Promise<Buffer> {
  if (usesNetwork(deps, useNetwork)) return fetchOverNetwork(deps, uid, query);
  const handle = deps.registry.handle(uid);
  const foreignIds = await resolveForeign(deps, uid, query.filter, true);
  return handle.fetchDocuments({ ...query, foreignIds, containsFilter: deps.features.enabled('containsFilter') });
}

/** `POST /documents/fetch`'s page (its body already checked): `listDocuments` of the body's query. */
export function fetchDocuments(deps: Deps, uid: string, body: FetchBody): Promise<Buffer> {
  const query = {
    offset: body.offset ?? 0,
    limit: body.limit ?? 20,
    fields: body.fields ?? null,
    ids: body.ids ? documentIds(body.ids) : null,
    retrieveVectors: body.retrieveVectors ?? false,
    sort: body.sort ?? null,
    filter: body.filter ?? null,
  };
  return listDocuments(deps, uid, query, body.useNetwork);
}

/** One document of `uid` as JSON bytes, from whichever instance holds it once the network is used; else `document_not_found`. */
export async function getDocument(
  deps: Deps,
  uid: string,
  id: string,
  fields: string[] | null,
  retrieveVectors: boolean,
  useNetwork: boolean | undefined,
): Promise<Buffer> {
  const doc = usesNetwork(deps, useNetwork)
    ? await documentOverNetwork(deps, uid, id, fields, retrieveVectors)
    : await deps.registry.handle(uid).getDocument(id, fields, retrieveVectors);
  if (doc === null) throw new ApiError('document_not_found', `Document \`${id}\` not found.`);
  return doc;
}
