/**
 * The OpenAPI 3.1 document served at `GET /openapi.json`, built once from `OPERATIONS` (those
 * the instance serves: a route behind an off start-up option is not described).
 * Every error answers the one error object (`{message, code, type, link}`); every route but
 * the public ones takes `Authorization: Bearer <key>`.
 */
import { engineVersion } from '../native';
import type { JsonSchema } from './json-schema';
import { type Operation, OPERATIONS, type RouteOptions, served } from './operations';

const str: JsonSchema = { type: 'string' };
const time: JsonSchema = { type: 'string', format: 'date-time' };

const COMPONENT_SCHEMAS: Record<string, JsonSchema> = {
  Error: {
    type: 'object',
    required: ['message', 'code', 'type', 'link'],
    properties: {
      message: str,
      code: str,
      type: { type: 'string', enum: ['invalid_request', 'internal', 'auth', 'system'] },
      link: { type: 'string', format: 'uri' },
    },
  },
  TaskSummary: {
    type: 'object',
    required: ['taskUid', 'indexUid', 'status', 'type', 'enqueuedAt'],
    properties: {
      taskUid: { type: 'integer' },
      indexUid: { type: ['string', 'null'] },
      status: str,
      type: str,
      enqueuedAt: time,
    },
  },
  Task: {
    type: 'object',
    properties: {
      uid: { type: 'integer' },
      batchUid: { type: ['integer', 'null'] },
      indexUid: { type: ['string', 'null'] },
      status: str,
      type: str,
      canceledBy: { type: ['integer', 'null'] },
      details: { type: ['object', 'null'] },
      error: { anyOf: [{ $ref: '#/components/schemas/Error' }, { type: 'null' }] },
      duration: { type: ['string', 'null'] },
      enqueuedAt: time,
      startedAt: { type: ['string', 'null'] },
      finishedAt: { type: ['string', 'null'] },
    },
  },
  Index: {
    type: 'object',
    properties: { uid: str, createdAt: time, updatedAt: time, primaryKey: { type: ['string', 'null'] } },
  },
  IndexPage: {
    type: 'object',
    properties: {
      results: { type: 'array', items: { $ref: '#/components/schemas/Index' } },
      offset: { type: 'integer' },
      limit: { type: 'integer' },
      total: { type: 'integer' },
    },
  },
  Key: {
    type: 'object',
    properties: {
      name: { type: ['string', 'null'] },
      description: { type: ['string', 'null'] },
      key: str,
      uid: { type: 'string', format: 'uuid' },
      actions: { type: 'array', items: str },
      indexes: { type: 'array', items: str },
      expiresAt: { type: ['string', 'null'] },
      createdAt: time,
      updatedAt: time,
    },
  },
  Version: { type: 'object', properties: { commitSha: str, commitDate: str, pkgVersion: str } },
  SearchResult: {
    type: 'object',
    properties: {
      hits: { type: 'array', items: { type: 'object' } },
      query: str,
      processingTimeMs: { type: 'integer' },
      limit: { type: 'integer' },
      offset: { type: 'integer' },
      estimatedTotalHits: { type: 'integer' },
      page: { type: 'integer' },
      hitsPerPage: { type: 'integer' },
      totalPages: { type: 'integer' },
      totalHits: { type: 'integer' },
      facetDistribution: { type: 'object' },
      facetStats: { type: 'object' },
    },
  },
};

const ERROR_RESPONSE = {
  description: 'The error object.',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

/** `/indexes/:indexUid` → `/indexes/{indexUid}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function operationObject(op: Operation): Record<string, unknown> {
  const pathParams = [...op.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: str,
  }));
  const queryParams = Object.entries(op.query ?? {}).map(([name, schema]) => ({
    name,
    in: 'query',
    required: false,
    schema,
  }));
  const success: Record<string, unknown> = { description: op.ok.description };
  if (op.ok.schema && op.ok.status !== 204)
    success.content = { [op.ok.contentType ?? 'application/json']: { schema: op.ok.schema } };
  const out: Record<string, unknown> = {
    operationId: `${op.method}${op.path.replace(/[:{}]/g, '').replace(/[^A-Za-z0-9]+([A-Za-z0-9])?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
    summary: op.summary,
    tags: [op.tag],
    parameters: [...pathParams, ...queryParams],
    responses: { [String(op.ok.status)]: success, '4XX': ERROR_RESPONSE, '5XX': ERROR_RESPONSE },
  };
  if (op.body)
    out.requestBody = {
      required: true,
      content: Object.fromEntries(Object.entries(op.body).map(([type, schema]) => [type, { schema }])),
    };
  // Public routes drop the document-wide key requirement.
  if (op.action === null) out.security = [];
  else out['x-quarry-action'] = op.action;
  return out;
}

/** By the start-up options routes are served behind (several instances may share a process). */
const cached = new Map<string, Record<string, unknown>>();

/** The whole description of what an instance started with `options` serves (built on first use, then shared). */
export function openApiDocument(options: RouteOptions): Record<string, unknown> {
  const ops = OPERATIONS.filter((op) => served(op, options));
  const key = OPERATIONS.map((op) => (ops.includes(op) ? '1' : '0')).join('');
  const hit = cached.get(key);
  if (hit) return hit;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of ops) {
    const at = openApiPath(op.path);
    paths[at] ??= {};
    const p = paths[at];
    if (p[op.method]) throw new Error(`openapi: ${op.method.toUpperCase()} ${op.path} is described twice`);
    p[op.method] = operationObject(op);
  }
  const doc = {
    openapi: '3.1.0',
    info: {
      title: 'Quarry',
      version: engineVersion(),
      description:
        'A search engine that answers the Meilisearch 1.50 REST API. Errors are `{message, code, type, link}`; writes answer 202 with a task summary.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    security: [{ apiKey: [] }],
    tags: [...new Set(ops.map((o) => o.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: COMPONENT_SCHEMAS,
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'The master key, an API key, or a tenant token (search routes).',
        },
      },
    },
  };
  cached.set(key, doc);
  return doc;
}
