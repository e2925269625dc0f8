/**
 * The MCP tools: each one a read that a REST route also serves, run through the same function
 * the route calls (the search service, the documents fetch, the settings view, the index
 * list), checked against the caller's key as the route's guard checks it. A tool's arguments
 * are the route's body with `indexUid` beside it; anything its input schema does not list is
 * refused, and the rest is validated by the route's own schema, so a bad argument answers the
 * code and message the route would.
 */
import { z } from 'zod';
import { type AuthContext, authorize } from '../auth/guard';
import { fetchDocuments } from '../commands/documents';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { parseWith } from '../errors/from-zod';
import { indexPage } from '../indexes/registry';
import { FETCH_CODES, FetchSchema } from '../schemas/documents';
import { checkIndexUid } from '../schemas/indexes';
import type { SearchService } from '../search/service';
import { settingsView } from '../settings/view';

export interface ToolContext {
  deps: Deps;
  search: SearchService;
  auth: AuthContext;
}

type JsonSchema = Record<string, unknown>;

export interface Tool {
  name: string;
  title: string;
  description: string;
  /** The API key action the tool needs, on the index it names (`list_indexes`: on any). */
  action: string;
  inputSchema: JsonSchema & { properties: Record<string, JsonSchema> };
  /** The answer: JSON bytes as the route sends them, or a value to serialize. */
  run(ctx: ToolContext, args: Record<string, unknown>): Promise<Buffer | object>;
}

const str: JsonSchema = { type: 'string' };
const strings = (description: string): JsonSchema => ({ type: 'array', items: str, description });
const count = (description: string): JsonSchema => ({ type: 'integer', minimum: 0, description });
const indexUid: JsonSchema = { type: 'string', description: 'The uid of the index (see `list_indexes`).' };
const filter: JsonSchema = {
  description:
    'A filter on filterable attributes, in Meilisearch filter syntax: `genre = horror AND year > 2000`, `id IN [1, 2]`, `_geoRadius(lat, lng, meters)`. Or the array form: outer items are ANDed, an inner array ORs its strings.',
  anyOf: [str, { type: 'array', items: { anyOf: [str, { type: 'array', items: str }] } }],
};

/** Refuses arguments the tool does not list, as the routes refuse unknown body fields. */
function checkFields(tool: Tool, args: Record<string, unknown>): void {
  const known = Object.keys(tool.inputSchema.properties);
  for (const k of Object.keys(args)) {
    if (!known.includes(k))
      throw new ApiError(
        'bad_request',
        `Unknown field \`${k}\`: expected one of ${known.map((f) => `\`${f}\``).join(', ')}`,
      );
  }
}

/** The index a tool names, checked, then the caller's right to `action` on it; the rest of the arguments. */
function scoped(ctx: ToolContext, action: string, args: Record<string, unknown>): [string, Record<string, unknown>] {
  const { indexUid: raw, ...rest } = args;
  if (raw === undefined) throw new ApiError('missing_index_uid', 'Missing field `indexUid`');
  const uid = checkIndexUid(raw);
  authorize(ctx.auth, action, uid);
  return [uid, rest];
}

const ListSchema = z.strictObject({
  offset: z.number().int().nonnegative().optional(),
  limit: z.number().int().nonnegative().optional(),
});

export const TOOLS: readonly Tool[] = [
  {
    name: 'list_indexes',
    title: 'List indexes',
    description:
      'Lists the indexes this key may read: uid, primary key, creation and update dates. 20 at a time unless `limit` says otherwise; `total` counts them all.',
    action: 'indexes.get',
    inputSchema: {
      type: 'object',
      properties: {
        offset: count('Indexes to skip (0 by default).'),
        limit: count('Most indexes to return (20 by default).'),
      },
      additionalProperties: false,
    },
    async run(ctx, args) {
      authorize(ctx.auth, 'indexes.get', null);
      const { offset = 0, limit = 20 } = parseWith(ListSchema, args, {
        offset: 'invalid_index_offset',
        limit: 'invalid_index_limit',
      });
      return indexPage(ctx.deps.registry, ctx.auth.canSeeIndex, offset, limit);
    },
  },
  {
    name: 'search',
    title: 'Search an index',
    description:
      'Searches one index, as `POST /indexes/{indexUid}/search` does: keyword search on `q`, narrowed by `filter`, ordered by the ranking rules or `sort`, with facet counts for `facets`; with `hybrid`, keyword and semantic results are merged (`semanticRatio` 0 is keyword only, 1 semantic only). Answers `hits`, `estimatedTotalHits` and `facetDistribution` as the REST API does.',
    action: 'search',
    inputSchema: {
      type: 'object',
      properties: {
        indexUid,
        q: {
          type: 'string',
          description: 'The words to look for; absent or empty: every document (filtered and sorted as asked).',
        },
        filter,
        facets: strings(
          'Filterable attributes whose values to count among the matches (`facetDistribution`); `["*"]` for all.',
        ),
        sort: strings('Sortable attributes with a direction, first one first: `["price:asc", "rating:desc"]`.'),
        limit: count('Most hits to return (20 by default).'),
        offset: count('Hits to skip (0 by default).'),
        attributesToRetrieve: strings('The attributes each hit shows (all displayed attributes by default).'),
        matchingStrategy: {
          type: 'string',
          enum: ['last', 'all', 'frequency'],
          description:
            '`last` (default) drops query words from the end until documents match; `all` requires every word.',
        },
        hybrid: {
          type: 'object',
          description: "Hybrid (keyword and semantic) search with one of the index's embedders.",
          properties: {
            embedder: { type: 'string', description: "The name of an embedder in the index's `embedders` setting." },
            semanticRatio: {
              type: 'number',
              minimum: 0,
              maximum: 1,
              description: 'Weight of the semantic results, 0.0 to 1.0 (0.5 by default).',
            },
          },
          required: ['embedder'],
          additionalProperties: false,
        },
        showRankingScore: { type: 'boolean', description: 'Give each hit its `_rankingScore`, 0.0 to 1.0.' },
      },
      required: ['indexUid'],
      additionalProperties: false,
    },
    async run(ctx, args) {
      const [uid, body] = scoped(ctx, 'search', args);
      // The route's code path: its validation, the tenant token's filter, the search limiter.
      return ctx.search.search(ctx.auth, uid, body);
    },
  },
  {
    name: 'get_documents',
    title: 'Fetch documents',
    description:
      'Fetches documents of one index, as `POST /indexes/{indexUid}/documents/fetch` does: by primary key (`ids`), or those a `filter` selects, or all of them, a page at a time. Answers `results`, `offset`, `limit` and `total`.',
    action: 'documents.get',
    inputSchema: {
      type: 'object',
      properties: {
        indexUid,
        ids: {
          type: 'array',
          items: { anyOf: [str, { type: 'integer' }] },
          description: 'Primary keys of the documents to fetch.',
        },
        filter,
        limit: count('Most documents to return (20 by default).'),
        offset: count('Documents to skip (0 by default).'),
        fields: strings('The attributes each document shows (all by default).'),
        sort: strings('Sortable attributes with a direction: `["year:desc"]`.'),
      },
      required: ['indexUid'],
      additionalProperties: false,
    },
    async run(ctx, args) {
      const [uid, rest] = scoped(ctx, 'documents.get', args);
      return fetchDocuments(ctx.deps, uid, parseWith(FetchSchema, rest, FETCH_CODES));
    },
  },
  {
    name: 'get_settings',
    title: 'Read index settings',
    description:
      'The settings of one index, as `GET /indexes/{indexUid}/settings` answers them: which attributes are searchable, filterable and sortable (what `filter`, `facets` and `sort` of `search` may use), ranking rules, synonyms, embedders (what `hybrid` may name), and the rest.',
    action: 'settings.get',
    inputSchema: { type: 'object', properties: { indexUid }, required: ['indexUid'], additionalProperties: false },
    async run(ctx, args) {
      const [uid] = scoped(ctx, 'settings.get', args);
      return settingsView(ctx.deps, uid);
    },
  },
];

/** Runs `tool` on `args`: the unknown fields refused first, then the tool's own checks. */
export function runTool(tool: Tool, ctx: ToolContext, args: Record<string, unknown>): Promise<Buffer | object> {
  checkFields(tool, args);
  return tool.run(ctx, args);
}
