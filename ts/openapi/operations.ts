/**
 * Every operation Quarry serves, one row each: method, Express path, the key action its guard
 * checks (null: public), and what it takes and answers. Bodies and search parameters come
 * from the zod schemas the routes validate with; routes that validate by hand (query strings,
 * settings, a few bodies) are described here by hand. `__tests__/openapi/` checks this table
 * against the routes Express has registered, both ways.
 */
import { PatchSchema as FeaturesPatchSchema } from '../features';
import { DeleteByFilterSchema } from '../routes/documents';
import { FetchSchema } from '../schemas/documents';
import { CreateSchema as IndexCreateSchema, UpdateSchema as IndexUpdateSchema } from '../routes/indexes';
import { SwapSchema } from '../schemas/indexes';
import { CreateSchema as KeyCreateSchema, UpdateSchema as KeyUpdateSchema } from '../routes/keys';
import { FederationSchema, OptionsSchema } from '../schemas/federation';
import { FieldsSchema } from '../schemas/fields';
import { FacetSearchSchema, SearchSchema } from '../schemas/search';
import { SimilarSchema } from '../schemas/similar';
import { LIST_PARAMS } from '../schemas/tasks';
import { SETTINGS_FIELDS, SETTINGS_SUBROUTES } from '../settings';
import type { Config } from '../config';
import { fromZod, type JsonSchema, queryParamSchema } from './json-schema';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The start-up options a route may be served behind. */
export type RouteOptions = Pick<Config, 'experimentalMcp'>;

/** Whether `op` is served by an instance started with `options`. */
export const served = (op: Operation, options: RouteOptions): boolean =>
  op.servedWith === undefined || options[op.servedWith];

export interface Operation {
  method: Method;
  /** Express form: `/indexes/:indexUid/search`. */
  path: string;
  tag: string;
  summary: string;
  /**
   * The API key action the route's guard checks; null: public (no key needed); a list: any
   * key gets in and each thing the route does checks one of these (`/mcp`'s tools).
   */
  action: string | readonly string[] | null;
  query?: Record<string, JsonSchema>;
  /** Request bodies by content type. */
  body?: Record<string, JsonSchema>;
  /** The success answer: status, description, schema and its content type. */
  ok: { status: number; description: string; schema?: JsonSchema; contentType?: string };
  /**
   * The start-up option the route is served behind (`/mcp`: `--experimental-mcp`); without it
   * the path is no route at all (404 for every method, not described), as in Meilisearch.
   */
  servedWith?: keyof RouteOptions;
}

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonSchema) => ({ 'application/json': schema });
const uint: JsonSchema = { type: 'integer', minimum: 0 };
const bool: JsonSchema = { type: 'boolean' };
const str: JsonSchema = { type: 'string' };
const list: JsonSchema = { type: 'string', description: 'comma-separated list' };
const object: JsonSchema = { type: 'object' };

const ok = (description: string, schema: JsonSchema = object, contentType = 'application/json') => ({
  status: 200,
  description,
  schema,
  contentType,
});
const enqueued = {
  status: 202,
  description: 'The task was enqueued.',
  schema: ref('TaskSummary'),
  contentType: 'application/json',
};

/** The query parameters of a search by GET: the POST body's fields, lists comma-separated. */
function searchParams(schema: JsonSchema, skip: readonly string[]): Record<string, JsonSchema> {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  return Object.fromEntries(
    Object.entries(props)
      .filter(([k]) => !skip.includes(k))
      .map(([k, v]) => [k, queryParamSchema(v)]),
  );
}

const searchBody = fromZod(SearchSchema);
const similarBody = fromZod(SimilarSchema);
const taskFilterParams = Object.fromEntries(
  LIST_PARAMS.filter((p) => !['limit', 'from', 'reverse'].includes(p)).map((p) => [
    p,
    /^(after|before)/.test(p) ? { type: 'string', format: 'date-time' } : list,
  ]),
);
const taskListParams = { limit: uint, from: uint, reverse: bool, ...taskFilterParams };
const statsParams = { showInternalDatabaseSizes: bool, sizeFormat: { type: 'string', enum: ['raw', 'human'] } };

/** The settings object, by hand: the engine validates each field (`ts/settings/validate.ts`). */
const SETTING_SCHEMAS: Record<string, JsonSchema> = {
  displayedAttributes: { type: ['array', 'null'], items: str },
  searchableAttributes: { type: ['array', 'null'], items: str },
  filterableAttributes: { type: ['array', 'null'], items: { anyOf: [str, object] } },
  sortableAttributes: { type: ['array', 'null'], items: str },
  foreignKeys: { type: ['array', 'null'], items: object },
  rankingRules: { type: ['array', 'null'], items: str },
  stopWords: { type: ['array', 'null'], items: str },
  nonSeparatorTokens: { type: ['array', 'null'], items: str },
  separatorTokens: { type: ['array', 'null'], items: str },
  dictionary: { type: ['array', 'null'], items: str },
  synonyms: { type: ['object', 'null'], additionalProperties: { type: 'array', items: str } },
  distinctAttribute: { type: ['string', 'null'] },
  proximityPrecision: { type: ['string', 'null'], enum: ['byWord', 'byAttribute', null] },
  typoTolerance: { type: ['object', 'null'] },
  faceting: { type: ['object', 'null'] },
  pagination: { type: ['object', 'null'] },
  embedders: { type: ['object', 'null'] },
  searchCutoffMs: { type: ['integer', 'null'], minimum: 0 },
  localizedAttributes: { type: ['array', 'null'], items: object },
  facetSearch: { type: ['boolean', 'null'] },
  prefixSearch: { type: ['string', 'null'], enum: ['indexingTime', 'disabled', null] },
  chat: { type: ['object', 'null'] },
};
const settingsSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(SETTINGS_FIELDS.map((f) => [f, SETTING_SCHEMAS[f] ?? {}])),
};

const multiSearchBody: JsonSchema = {
  type: 'object',
  required: ['queries'],
  additionalProperties: false,
  properties: {
    queries: {
      type: 'array',
      items: {
        ...searchBody,
        required: ['indexUid'],
        properties: { indexUid: str, federationOptions: fromZod(OptionsSchema), ...(searchBody.properties as object) },
      },
    },
    federation: { anyOf: [fromZod(FederationSchema), { type: 'null' }] },
  },
};

const documentsBody = {
  'application/json': { anyOf: [{ type: 'array', items: object }, object] },
  'application/x-ndjson': str,
  'text/csv': str,
};
const documentWriteParams = { primaryKey: str, csvDelimiter: str, customMetadata: str, skipCreation: bool };

function settingsOperations(): Operation[] {
  const out: Operation[] = [
    {
      method: 'get',
      path: '/indexes/:indexUid/settings',
      tag: 'Settings',
      action: 'settings.get',
      summary: 'Every setting of the index',
      ok: ok('The settings.', settingsSchema),
    },
    {
      method: 'patch',
      path: '/indexes/:indexUid/settings',
      tag: 'Settings',
      action: 'settings.update',
      summary: 'Update settings',
      body: json(settingsSchema),
      ok: enqueued,
    },
    {
      method: 'delete',
      path: '/indexes/:indexUid/settings',
      tag: 'Settings',
      action: 'settings.update',
      summary: 'Reset every setting',
      ok: enqueued,
    },
  ];
  for (const { route, field, method } of SETTINGS_SUBROUTES) {
    const p = `/indexes/:indexUid/settings/${route}`;
    const schema = SETTING_SCHEMAS[field] ?? {};
    out.push(
      {
        method: 'get',
        path: p,
        tag: 'Settings',
        action: 'settings.get',
        summary: `The \`${field}\` setting`,
        ok: ok(`The \`${field}\` setting.`, schema),
      },
      {
        method,
        path: p,
        tag: 'Settings',
        action: 'settings.update',
        summary: `Update \`${field}\``,
        body: json(schema),
        ok: enqueued,
      },
      {
        method: 'delete',
        path: p,
        tag: 'Settings',
        action: 'settings.update',
        summary: `Reset \`${field}\``,
        ok: enqueued,
      },
    );
  }
  return out;
}

export const OPERATIONS: readonly Operation[] = [
  // Pages and descriptions.
  {
    method: 'get',
    path: '/',
    tag: 'System',
    action: null,
    summary:
      'The search preview page (HTML), or `{"status":"Meilisearch is running"}` when it is disabled or JSON is asked for',
    ok: ok('The page.', str, 'text/html'),
  },
  {
    method: 'get',
    path: '/openapi.json',
    tag: 'System',
    action: null,
    summary: 'This OpenAPI description',
    ok: ok('An OpenAPI 3.1 document.'),
  },
  {
    method: 'get',
    path: '/health',
    tag: 'System',
    action: null,
    summary: 'Whether the server is available',
    ok: ok('Available.', { type: 'object', properties: { status: str } }),
  },
  {
    method: 'get',
    path: '/version',
    tag: 'System',
    action: 'version',
    summary: 'The version',
    ok: ok('The version.', ref('Version')),
  },
  {
    method: 'get',
    path: '/stats',
    tag: 'Stats',
    action: 'stats.get',
    summary: 'Statistics of the instance and every index the key reaches',
    query: statsParams,
    ok: ok('The statistics.'),
  },
  {
    method: 'get',
    path: '/experimental-features',
    tag: 'Experimental',
    action: 'experimental.get',
    summary: 'The experimental features',
    ok: ok('The flags.'),
  },
  {
    method: 'patch',
    path: '/experimental-features',
    tag: 'Experimental',
    action: 'experimental.update',
    summary: 'Switch experimental features',
    body: json(fromZod(FeaturesPatchSchema)),
    ok: ok('The flags.'),
  },
  // Indexes.
  {
    method: 'get',
    path: '/indexes',
    tag: 'Indexes',
    action: 'indexes.get',
    summary: 'The indexes the key reaches',
    query: { offset: uint, limit: uint },
    ok: ok('A page of indexes.', ref('IndexPage')),
  },
  {
    method: 'post',
    path: '/indexes',
    tag: 'Indexes',
    action: 'indexes.create',
    summary: 'Create an index',
    body: json(fromZod(IndexCreateSchema)),
    ok: enqueued,
  },
  {
    method: 'get',
    path: '/indexes/:indexUid',
    tag: 'Indexes',
    action: 'indexes.get',
    summary: 'One index',
    ok: ok('The index.', ref('Index')),
  },
  {
    method: 'patch',
    path: '/indexes/:indexUid',
    tag: 'Indexes',
    action: 'indexes.update',
    summary: 'Change the primary key or rename',
    body: json(fromZod(IndexUpdateSchema)),
    ok: enqueued,
  },
  {
    method: 'delete',
    path: '/indexes/:indexUid',
    tag: 'Indexes',
    action: 'indexes.delete',
    summary: 'Delete an index',
    ok: enqueued,
  },
  {
    method: 'post',
    path: '/indexes/:indexUid/compact',
    tag: 'Indexes',
    action: 'indexes.compact',
    summary: 'Compact an index',
    ok: enqueued,
  },
  {
    method: 'get',
    path: '/indexes/:indexUid/stats',
    tag: 'Stats',
    action: 'stats.get',
    summary: 'Statistics of one index',
    query: statsParams,
    ok: ok('The statistics.'),
  },
  {
    method: 'post',
    path: '/swap-indexes',
    tag: 'Indexes',
    action: 'indexes.swap',
    summary: 'Swap or rename indexes',
    body: json(fromZod(SwapSchema)),
    ok: enqueued,
  },
  // Documents.
  {
    method: 'post',
    path: '/indexes/:indexUid/documents',
    tag: 'Documents',
    action: 'documents.add',
    summary: 'Add or replace documents',
    query: documentWriteParams,
    body: documentsBody,
    ok: enqueued,
  },
  {
    method: 'put',
    path: '/indexes/:indexUid/documents',
    tag: 'Documents',
    action: 'documents.add',
    summary: 'Add or update documents',
    query: documentWriteParams,
    body: documentsBody,
    ok: enqueued,
  },
  {
    method: 'get',
    path: '/indexes/:indexUid/documents',
    tag: 'Documents',
    action: 'documents.get',
    summary: 'A page of documents',
    query: {
      offset: uint,
      limit: uint,
      fields: list,
      retrieveVectors: bool,
      ids: list,
      filter: str,
      sort: list,
      useNetwork: bool,
    },
    ok: ok('A page of documents.'),
  },
  {
    method: 'post',
    path: '/indexes/:indexUid/documents/fetch',
    tag: 'Documents',
    action: 'documents.get',
    summary: 'A page of documents, filtered',
    body: json(fromZod(FetchSchema)),
    ok: ok('A page of documents.'),
  },
  {
    method: 'get',
    path: '/indexes/:indexUid/documents/:documentId',
    tag: 'Documents',
    action: 'documents.get',
    summary: 'One document',
    query: { fields: list, retrieveVectors: bool, useNetwork: bool },
    ok: ok('The document.'),
  },
  {
    method: 'delete',
    path: '/indexes/:indexUid/documents',
    tag: 'Documents',
    action: 'documents.delete',
    summary: 'Delete every document',
    query: { customMetadata: str },
    ok: enqueued,
  },
  {
    method: 'delete',
    path: '/indexes/:indexUid/documents/:documentId',
    tag: 'Documents',
    action: 'documents.delete',
    summary: 'Delete one document',
    query: { customMetadata: str },
    ok: enqueued,
  },
  {
    method: 'post',
    path: '/indexes/:indexUid/documents/delete-batch',
    tag: 'Documents',
    action: 'documents.delete',
    summary: 'Delete documents by id',
    query: { customMetadata: str },
    body: json({ type: 'array', items: { type: ['string', 'integer'] } }),
    ok: enqueued,
  },
  {
    method: 'post',
    path: '/indexes/:indexUid/documents/delete',
    tag: 'Documents',
    action: 'documents.delete',
    summary: 'Delete the documents a filter matches',
    query: { customMetadata: str },
    body: json(fromZod(DeleteByFilterSchema)),
    ok: enqueued,
  },
  {
    method: 'post',
    path: '/indexes/:indexUid/documents/edit',
    tag: 'Documents',
    action: 'documents.*',
    summary: 'Edit documents with a Rhai function (the `editDocumentsByFunction` feature)',
    body: json(object),
    ok: enqueued,
  },
  // Search.
  {
    method: 'post',
    path: '/indexes/:indexUid/search',
    tag: 'Search',
    action: 'search',
    summary: 'Search an index',
    body: json(searchBody),
    ok: ok('Hits, totals and facets.', ref('SearchResult')),
  },
  {
    method: 'get',
    path: '/indexes/:indexUid/search',
    tag: 'Search',
    action: 'search',
    summary: 'Search an index (parameters in the query string)',
    query: searchParams(searchBody, ['vector', 'media', 'filter', 'hybrid', 'personalize']),
    ok: ok('Hits, totals and facets.', ref('SearchResult')),
  },
  {
    method: 'post',
    path: '/indexes/:indexUid/facet-search',
    tag: 'Search',
    action: 'search',
    summary: 'Search the values of a facet',
    body: json(fromZod(FacetSearchSchema)),
    ok: ok('Facet values and counts.'),
  },
  {
    method: 'post',
    path: '/indexes/:indexUid/similar',
    tag: 'Search',
    action: 'search',
    summary: 'Documents similar to one document',
    body: json(similarBody),
    ok: ok('Similar documents.'),
  },
  {
    method: 'get',
    path: '/indexes/:indexUid/similar',
    tag: 'Search',
    action: 'search',
    summary: 'Documents similar to one document (parameters in the query string)',
    query: searchParams(similarBody, ['filter']),
    ok: ok('Similar documents.'),
  },
  {
    method: 'post',
    path: '/multi-search',
    tag: 'Search',
    action: 'search',
    summary: 'Several searches, merged with `federation`',
    body: json(multiSearchBody),
    ok: ok('One result per query, or one merged result.'),
  },
  {
    method: 'post',
    path: '/indexes/:indexUid/fields',
    tag: 'Settings',
    action: 'fields.post',
    summary: 'Every attribute the index has seen, with what the settings make of it',
    body: json(fromZod(FieldsSchema)),
    ok: ok('A page of fields.'),
  },
  ...settingsOperations(),
  // Tasks and batches.
  {
    method: 'get',
    path: '/tasks',
    tag: 'Tasks',
    action: 'tasks.get',
    summary: 'The tasks, newest first',
    query: taskListParams,
    ok: ok('A page of tasks.'),
  },
  {
    method: 'get',
    path: '/tasks/:taskUid',
    tag: 'Tasks',
    action: 'tasks.get',
    summary: 'One task',
    ok: ok('The task.', ref('Task')),
  },
  {
    method: 'get',
    path: '/tasks/:taskUid/documents',
    tag: 'Tasks',
    action: 'tasks.get',
    summary: 'The documents of an enqueued addition (experimental)',
    ok: ok('NDJSON.', str, 'application/x-ndjson'),
  },
  {
    method: 'post',
    path: '/tasks/cancel',
    tag: 'Tasks',
    action: 'tasks.cancel',
    summary: 'Cancel the tasks the filters match',
    query: taskFilterParams,
    ok: { ...enqueued, status: 200 },
  },
  {
    method: 'delete',
    path: '/tasks',
    tag: 'Tasks',
    action: 'tasks.delete',
    summary: 'Delete the finished tasks the filters match',
    query: taskFilterParams,
    ok: { ...enqueued, status: 200 },
  },
  {
    method: 'get',
    path: '/batches',
    tag: 'Tasks',
    action: 'tasks.get',
    summary: 'The batches, newest first',
    query: taskListParams,
    ok: ok('A page of batches.'),
  },
  {
    method: 'get',
    path: '/batches/:batchUid',
    tag: 'Tasks',
    action: 'tasks.get',
    summary: 'One batch',
    ok: ok('The batch.'),
  },
  // Keys.
  {
    method: 'get',
    path: '/keys',
    tag: 'Keys',
    action: 'keys.get',
    summary: 'The API keys, newest first',
    query: { offset: uint, limit: uint },
    ok: ok('A page of keys.'),
  },
  {
    method: 'get',
    path: '/keys/:key',
    tag: 'Keys',
    action: 'keys.get',
    summary: 'One API key, by uid or value',
    ok: ok('The key.', ref('Key')),
  },
  {
    method: 'post',
    path: '/keys',
    tag: 'Keys',
    action: 'keys.create',
    summary: 'Create an API key',
    body: json(fromZod(KeyCreateSchema)),
    ok: { ...ok('The key.', ref('Key')), status: 201 },
  },
  {
    method: 'patch',
    path: '/keys/:key',
    tag: 'Keys',
    action: 'keys.update',
    summary: 'Rename or describe an API key',
    body: json(fromZod(KeyUpdateSchema)),
    ok: ok('The key.', ref('Key')),
  },
  {
    method: 'delete',
    path: '/keys/:key',
    tag: 'Keys',
    action: 'keys.delete',
    summary: 'Delete an API key',
    ok: { status: 204, description: 'Deleted.' },
  },
  // Experimental and instance-wide operations.
  {
    method: 'post',
    path: '/mcp',
    tag: 'Experimental',
    action: ['indexes.get', 'search', 'documents.get', 'settings.get'],
    summary: 'Model Context Protocol endpoint, streamable HTTP (served with --experimental-mcp)',
    body: json({ type: 'object', description: 'One JSON-RPC 2.0 message.' }),
    ok: ok('The JSON-RPC response (202 with no body for a notification).'),
    servedWith: 'experimentalMcp',
  },
  {
    method: 'post',
    path: '/render-template',
    tag: 'Experimental',
    action: 'settings.get',
    summary: 'Render a document template (experimental)',
    body: json({ type: 'object', required: ['template'], properties: { template: {}, input: {} } }),
    ok: ok('The template and its rendering.'),
  },
  {
    method: 'get',
    path: '/network',
    tag: 'Experimental',
    action: 'network.get',
    summary: 'The network of instances (experimental)',
    ok: ok('The network.'),
  },
  {
    method: 'patch',
    path: '/network',
    tag: 'Experimental',
    action: 'network.update',
    summary: 'Change the network (experimental)',
    body: json(object),
    ok: ok('The network, or a task when the change is forwarded.'),
  },
  { method: 'post', path: '/dumps', tag: 'Backups', action: 'dumps.create', summary: 'Create a dump', ok: enqueued },
  {
    method: 'post',
    path: '/export',
    tag: 'Backups',
    action: 'export',
    summary: 'Send indexes (documents and settings) to another instance',
    body: json({
      type: 'object',
      properties: {
        url: { type: 'string' },
        apiKey: { type: ['string', 'null'] },
        payloadSize: { type: ['string', 'integer', 'null'] },
        indexes: { type: ['object', 'null'] },
      },
    }),
    ok: { ...enqueued, status: 200 },
  },
  {
    method: 'post',
    path: '/snapshots',
    tag: 'Backups',
    action: 'snapshots.create',
    summary: 'Create a snapshot',
    ok: enqueued,
  },
  {
    method: 'post',
    path: '/dynamic-search-rules',
    tag: 'Experimental',
    action: 'dynamicSearchRules.get',
    summary: 'List dynamic search rules (experimental)',
    body: json(object),
    ok: ok('A page of rules.'),
  },
  {
    method: 'get',
    path: '/dynamic-search-rules/:ruleUid',
    tag: 'Experimental',
    action: 'dynamicSearchRules.get',
    summary: 'One dynamic search rule (experimental)',
    ok: ok('The rule.'),
  },
  {
    method: 'patch',
    path: '/dynamic-search-rules/:ruleUid',
    tag: 'Experimental',
    action: 'dynamicSearchRules.update',
    summary: 'Create or update a dynamic search rule (experimental)',
    query: { customMetadata: str },
    body: json(object),
    ok: enqueued,
  },
  {
    method: 'delete',
    path: '/dynamic-search-rules/:ruleUid',
    tag: 'Experimental',
    action: 'dynamicSearchRules.delete',
    summary: 'Delete a dynamic search rule (experimental)',
    query: { customMetadata: str },
    ok: enqueued,
  },
  {
    method: 'delete',
    path: '/dynamic-search-rules',
    tag: 'Experimental',
    action: 'dynamicSearchRules.delete',
    summary: 'Delete every dynamic search rule (experimental)',
    query: { customMetadata: str },
    ok: enqueued,
  },
  {
    method: 'post',
    path: '/tasks/compact',
    tag: 'Tasks',
    action: 'tasks.compact',
    summary: 'Compact the task database (the `taskQueueCompactionRoute` feature)',
    ok: ok('`{preSize, postSize, status, actionRequired}`.'),
  },
  {
    method: 'get',
    path: '/webhooks',
    tag: 'Webhooks',
    action: 'webhooks.get',
    summary: 'The webhooks finished batches are sent to',
    ok: ok('`{results: [webhook]}`; Authorization values hidden.'),
  },
  {
    method: 'post',
    path: '/webhooks',
    tag: 'Webhooks',
    action: 'webhooks.create',
    summary: 'Add a webhook (at most 20)',
    body: json({
      type: 'object',
      properties: { url: str, headers: { type: 'object', additionalProperties: str } },
      required: ['url'],
    }),
    ok: { status: 201, description: 'The webhook.', schema: object, contentType: 'application/json' },
  },
  {
    method: 'get',
    path: '/webhooks/:uuid',
    tag: 'Webhooks',
    action: 'webhooks.get',
    summary: 'One webhook',
    ok: ok('The webhook.'),
  },
  {
    method: 'patch',
    path: '/webhooks/:uuid',
    tag: 'Webhooks',
    action: 'webhooks.update',
    summary: 'Change a webhook (a header set to null is removed)',
    body: json({
      type: 'object',
      properties: { url: str, headers: { type: 'object', additionalProperties: { type: ['string', 'null'] } } },
    }),
    ok: ok('The webhook.'),
  },
  {
    method: 'delete',
    path: '/webhooks/:uuid',
    tag: 'Webhooks',
    action: 'webhooks.delete',
    summary: 'Remove a webhook',
    ok: { status: 204, description: 'Removed.' },
  },
  {
    method: 'get',
    path: '/chats',
    tag: 'Experimental',
    action: 'chats.get',
    summary: 'Chat workspaces (the `chatCompletions` feature)',
    query: { offset: uint, limit: uint },
    ok: ok('`{results: [{uid}], offset, limit, total}`.'),
  },
  {
    method: 'get',
    path: '/chats/:workspace',
    tag: 'Experimental',
    action: 'chats.get',
    summary: 'One chat workspace',
    ok: ok('`{uid}`.'),
  },
  {
    method: 'delete',
    path: '/chats/:workspace',
    tag: 'Experimental',
    action: 'chats.delete',
    summary: 'Delete a chat workspace',
    ok: { status: 204, description: 'Deleted.' },
  },
  {
    method: 'get',
    path: '/chats/:workspace/settings',
    tag: 'Experimental',
    action: 'chatsSettings.get',
    summary: "A chat workspace's settings (`apiKey` hidden)",
    ok: ok('The settings.'),
  },
  {
    method: 'patch',
    path: '/chats/:workspace/settings',
    tag: 'Experimental',
    action: 'chatsSettings.update',
    summary: "Change (or create) a chat workspace's settings",
    body: json({
      type: 'object',
      properties: {
        source: { type: 'string', enum: ['openAi', 'mistral', 'azureOpenAi', 'vLlm'] },
        orgId: str,
        projectId: str,
        apiVersion: str,
        deploymentId: str,
        baseUrl: str,
        apiKey: str,
        prompts: object,
      },
    }),
    ok: ok('The settings.'),
  },
  {
    method: 'delete',
    path: '/chats/:workspace/settings',
    tag: 'Experimental',
    action: 'chatsSettings.update',
    summary: "Reset a chat workspace's settings",
    ok: ok('The settings.'),
  },
  {
    method: 'post',
    path: '/chats/:workspace/chat/completions',
    tag: 'Experimental',
    action: 'chatCompletions',
    summary: 'An OpenAI chat completion over the indexes (`stream: true`)',
    body: json({
      type: 'object',
      properties: {
        model: str,
        messages: { type: 'array', items: object },
        stream: bool,
        tools: { type: 'array', items: object },
      },
      required: ['model', 'messages'],
    }),
    ok: ok(
      "Server-sent events: the model's chunks, the reporting tools' calls, then `[DONE]`.",
      str,
      'text/event-stream',
    ),
  },
  {
    method: 'get',
    path: '/metrics',
    tag: 'Experimental',
    action: 'metrics.get',
    summary: 'Prometheus metrics (the `metrics` feature)',
    ok: ok('Prometheus text format 0.0.4.', str, 'text/plain'),
  },
  {
    method: 'post',
    path: '/logs/stream',
    tag: 'Experimental',
    action: 'metrics.get',
    summary: 'Stream log lines (the `logsRoute` feature)',
    body: json({
      type: 'object',
      properties: { mode: { type: 'string', enum: ['human', 'json', 'profile'] }, target: str, profileMemory: bool },
    }),
    ok: ok('Log lines until `DELETE /logs/stream` or disconnection.', str, 'application/octet-stream'),
  },
  {
    method: 'delete',
    path: '/logs/stream',
    tag: 'Experimental',
    action: 'metrics.get',
    summary: 'End the log stream',
    ok: { status: 204, description: 'Ended.' },
  },
  {
    method: 'post',
    path: '/logs/stderr',
    tag: 'Experimental',
    action: 'metrics.get',
    summary: 'Change what stderr logs',
    body: json({ type: 'object', properties: { target: str } }),
    ok: { status: 204, description: 'Changed.' },
  },
];
