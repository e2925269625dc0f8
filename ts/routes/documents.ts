/** Document routes: additions go to the queue as staged bytes; reads go to the engine. */
import { type NextFunction, type Request, type Response, Router } from 'express';
import { z } from 'zod';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { parseWith } from '../errors/from-zod';
import { mediaType, rawBody, readJson } from '../http/body';
import type { ResponseBudget } from '../http/response-budget';
import {
  addDocuments,
  deleteDocuments,
  editDocuments,
  fetchDocuments,
  getDocument,
  listDocuments,
  type DocumentSelection,
} from '../commands/documents';
import type { PayloadFormat } from '../native';
import { parseEditBody } from '../schemas/edit';
import { documentIds, FETCH_CODES, FetchSchema } from '../schemas/documents';
import { checkIndexUid } from '../schemas/indexes';
import { checkPrimaryKeyParam, filterValue } from '../schemas/limits';
import {
  boolParam,
  filterParam,
  listParam,
  rejectUnknownParams,
  splitSort,
  stringParam,
  uintParam,
} from '../schemas/query';
import { summaryView } from '../tasks/queue';

/** The paths under `documents/` that are routes, never document ids. */
const OWN_ROUTES = new Set(['fetch', 'delete-batch', 'delete']);

const FORMATS: Record<string, PayloadFormat> = {
  'application/json': 'json',
  'application/x-ndjson': 'ndjson',
  'text/csv': 'csv',
};
const ACCEPTED =
  'Accepted values for the Content-Type header are: `application/json`, `application/x-ndjson`, `text/csv`';

export const DeleteByFilterSchema = z.strictObject({
  filter: filterValue,
});

/** Sends documents' JSON bytes, held in the response budget until sent (`http/response-budget.ts`). */
function sendJsonBytes(res: Response, budget: ResponseBudget, bytes: Buffer): void {
  budget.holdFor(res, bytes.length);
  res.status(200).type('application/json').send(bytes);
}

export function documentRoutes(deps: Deps): Router {
  const r = Router();
  const { guard } = deps;

  async function postDocuments(req: Request, res: Response, method: 'replace' | 'update'): Promise<void> {
    const q = req.query as Record<string, unknown>;
    rejectUnknownParams(q, ['primaryKey', 'csvDelimiter', 'customMetadata', 'skipCreation']);
    const primaryKey = checkPrimaryKeyParam(stringParam(q, 'primaryKey', 'invalid_index_primary_key') ?? null);
    const delimiter = stringParam(q, 'csvDelimiter', 'invalid_document_csv_delimiter');
    const customMetadata = stringParam(q, 'customMetadata', 'invalid_index_custom_metadata');
    const skipCreation = boolParam(q, 'skipCreation', 'invalid_skip_creation', false);
    const uid = checkIndexUid(req.params.indexUid);
    const type = mediaType(req);
    if (type === null) throw new ApiError('missing_content_type', `A Content-Type header is missing. ${ACCEPTED}`);
    const format = FORMATS[type];
    if (!format || (delimiter !== undefined && format !== 'csv')) {
      throw new ApiError('invalid_content_type', `The Content-Type \`${type}\` is invalid. ${ACCEPTED}`);
    }
    const task = await addDocuments(deps, uid, rawBody(req), {
      format,
      method,
      primaryKey,
      csvDelimiter: delimiter ?? null,
      customMetadata,
      skipCreation,
      canCreateIndex: req.auth!.can('indexes.create', uid),
    });
    res.status(202).json(summaryView(task));
  }

  r.post('/indexes/:indexUid/documents', guard('documents.add', 'param'), (req, res) =>
    postDocuments(req, res, 'replace'),
  );
  r.put('/indexes/:indexUid/documents', guard('documents.add', 'param'), (req, res) =>
    postDocuments(req, res, 'update'),
  );

  r.get('/indexes/:indexUid/documents', guard('documents.get', 'param'), async (req, res) => {
    const q = req.query as Record<string, unknown>;
    rejectUnknownParams(q, ['offset', 'limit', 'fields', 'retrieveVectors', 'ids', 'filter', 'sort', 'useNetwork']);
    const offset = uintParam(q, 'offset', 'invalid_document_offset', 0);
    const limit = uintParam(q, 'limit', 'invalid_document_limit', 20);
    const fields = listParam(q, 'fields', 'invalid_document_fields') ?? null;
    const retrieveVectors = boolParam(q, 'retrieveVectors', 'invalid_document_retrieve_vectors', false);
    const listed = listParam(q, 'ids', 'invalid_document_ids');
    const ids = listed ? documentIds(listed, true) : null;
    const filterText = stringParam(q, 'filter', 'invalid_document_filter');
    const filter = filterText === undefined ? undefined : filterParam(filterText, 'invalid_document_filter');
    const sortText = stringParam(q, 'sort', 'invalid_document_sort');
    const sort = sortText === undefined ? null : splitSort(sortText);
    const useNetwork =
      q.useNetwork === undefined ? undefined : boolParam(q, 'useNetwork', 'invalid_document_use_network', false);
    const uid = checkIndexUid(req.params.indexUid);
    deps.responseBudget.refuseWhenFull();
    const query = { offset, limit, fields, ids, retrieveVectors, sort, filter: filter ?? null };
    sendJsonBytes(res, deps.responseBudget, await listDocuments(deps, uid, query, useNetwork));
  });

  // `fetch`, `delete-batch` and `delete` are routes of their own, never document ids: asked with
  // another method than POST they pass on to the 405 answer (`http/methods.ts`), as Meilisearch
  // answers, not a read or a deletion of a document so named.
  const routeNames = (req: Request, _res: Response, next: NextFunction) =>
    OWN_ROUTES.has(String(req.params.documentId)) ? next('route') : next();

  r.post('/indexes/:indexUid/documents/fetch', guard('documents.get', 'param'), async (req, res) => {
    const query = parseWith(FetchSchema, readJson(req), FETCH_CODES);
    const uid = checkIndexUid(req.params.indexUid);
    deps.responseBudget.refuseWhenFull();
    sendJsonBytes(res, deps.responseBudget, await fetchDocuments(deps, uid, query));
  });

  r.get('/indexes/:indexUid/documents/:documentId', routeNames, guard('documents.get', 'param'), async (req, res) => {
    const q = req.query as Record<string, unknown>;
    rejectUnknownParams(q, ['fields', 'retrieveVectors', 'useNetwork']);
    const fields = listParam(q, 'fields', 'invalid_document_fields') ?? null;
    const retrieveVectors = boolParam(q, 'retrieveVectors', 'invalid_document_retrieve_vectors', false);
    const useNetwork =
      q.useNetwork === undefined ? undefined : boolParam(q, 'useNetwork', 'invalid_document_use_network', false);
    const uid = checkIndexUid(req.params.indexUid);
    const id = String(req.params.documentId);
    sendJsonBytes(res, deps.responseBudget, await getDocument(deps, uid, id, fields, retrieveVectors, useNetwork));
  });

  async function enqueueDeletion(req: Request, res: Response, selection: DocumentSelection): Promise<void> {
    const q = req.query as Record<string, unknown>;
    rejectUnknownParams(q, ['customMetadata']);
    const customMetadata = stringParam(q, 'customMetadata', 'invalid_index_custom_metadata');
    const uid = checkIndexUid(req.params.indexUid);
    res.status(202).json(summaryView(await deleteDocuments(deps, uid, selection, customMetadata)));
  }

  r.delete('/indexes/:indexUid/documents', guard('documents.delete', 'param'), (req, res) =>
    enqueueDeletion(req, res, { all: true }),
  );

  r.delete('/indexes/:indexUid/documents/:documentId', routeNames, guard('documents.delete', 'param'), (req, res) =>
    enqueueDeletion(req, res, { ids: [String(req.params.documentId)] }),
  );

  r.post('/indexes/:indexUid/documents/delete-batch', guard('documents.delete', 'param'), async (req, res) => {
    const body = readJson(req);
    if (!Array.isArray(body)) {
      const what =
        body !== null && typeof body === 'object'
          ? 'map, expected a sequence at line 1 column 0'
          : 'expected a sequence of document ids';
      throw new ApiError('bad_request', `Json deserialize error: invalid type: ${what}`);
    }
    // Meilisearch takes any JSON values: each counts as a provided id, and one that is neither a
    // string nor a number (null, an object) names no document.
    await enqueueDeletion(req, res, {
      ids: body.map((v) => (typeof v === 'string' || typeof v === 'number' ? String(v) : JSON.stringify(v))),
    });
  });

  r.post('/indexes/:indexUid/documents/delete', guard('documents.delete', 'param'), async (req, res) => {
    const raw = readJson(req);
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw) && !('filter' in raw)) {
      throw new ApiError('missing_document_filter', 'Missing field `filter`');
    }
    // The body's shape is read first, the index's name next, the filter's type last (its type is
    // checked by the handler in Meilisearch, after the name).
    checkIndexUid(req.params.indexUid);
    const body = parseWith(DeleteByFilterSchema, raw, { filter: 'invalid_document_filter' });
    await enqueueDeletion(req, res, { filter: body.filter });
  });

  /** Editing documents with a Rhai function (`editDocumentsByFunction`): see `editDocuments`. */
  r.post('/indexes/:indexUid/documents/edit', guard('documents.*', 'param'), async (req, res) => {
    const q = req.query as Record<string, unknown>;
    rejectUnknownParams(q, ['customMetadata']);
    const customMetadata = stringParam(q, 'customMetadata', 'invalid_index_custom_metadata');
    const body = parseEditBody(readJson(req));
    if (!deps.features.get().editDocumentsByFunction) {
      throw new ApiError(
        'feature_not_enabled',
        'Using the documents edit route requires enabling the `edit documents by function` experimental feature. See https://github.com/orgs/meilisearch/discussions/762',
      );
    }
    const uid = checkIndexUid(req.params.indexUid);
    res.status(202).json(summaryView(await editDocuments(deps, uid, body, customMetadata)));
  });

  return r;
}
