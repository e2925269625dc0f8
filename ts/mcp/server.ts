/**
 * The MCP server: the methods of the Model Context Protocol this endpoint answers, over
 * messages already sorted by `jsonrpc.ts`. It is stateless: `initialize` negotiates a version
 * and declares the tools capability, but nothing is kept between requests, so any request may
 * come first and any instance of a group may answer it (the key is checked on each request).
 *
 * Errors come in two kinds, as the protocol asks: a message the server cannot take (unknown
 * method, unknown tool, params of the wrong shape) is a JSON-RPC error; a tool that ran and
 * failed (bad argument, index not found, key refused) is a result with `isError: true` whose
 * text is the error object the REST route would answer, `{message, code, type, link}`.
 */
import { errorBody } from '../errors/catalog';
import { errorOf as apiErrorOf } from '../errors/middleware';
import { engineVersion } from '../native';
import { INVALID_PARAMS, METHOD_NOT_FOUND, RpcError } from './jsonrpc';
import { runTool, type ToolContext, TOOLS } from './tools';

/** Protocol revisions spoken, newest first: all have streamable HTTP and the same tool calls. */
export const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;

const INSTRUCTIONS =
  'Quarry is a search engine with the Meilisearch API. Call `list_indexes` to see the indexes, `get_settings` to learn which attributes an index can filter, facet and sort on and which embedders `hybrid` may use, then `search` it; `get_documents` fetches documents by id or filter.';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The result of one request (`method` with `params`); throws `RpcError` for protocol errors. */
export async function answer(ctx: ToolContext, method: string, params: Record<string, unknown>): Promise<unknown> {
  switch (method) {
    case 'initialize': {
      const asked = params.protocolVersion;
      if (typeof asked !== 'string')
        throw new RpcError(INVALID_PARAMS, 'Invalid params: `protocolVersion` must be a string');
      const version = (PROTOCOL_VERSIONS as readonly string[]).includes(asked) ? asked : PROTOCOL_VERSIONS[0];
      return {
        protocolVersion: version,
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: 'quarry', title: 'Quarry', version: engineVersion() },
        instructions: INSTRUCTIONS,
      };
    }
    case 'ping':
      return {};
    case 'tools/list':
      // The tools this key can call at all; each call still checks the index it names.
      return {
        tools: TOOLS.filter((t) => ctx.auth.can(t.action, null)).map((t) => ({
          name: t.name,
          title: t.title,
          description: t.description,
          inputSchema: t.inputSchema,
          // Every tool reads, and only this instance.
          annotations: { title: t.title, readOnlyHint: true, openWorldHint: false },
        })),
      };
    case 'tools/call':
      return callTool(ctx, params);
    default:
      throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method}`);
  }
}

async function callTool(ctx: ToolContext, params: Record<string, unknown>): Promise<unknown> {
  const { name, arguments: args } = params;
  if (typeof name !== 'string') throw new RpcError(INVALID_PARAMS, 'Invalid params: `name` must be a string');
  const tool = TOOLS.find((t) => t.name === name);
  if (!tool) throw new RpcError(INVALID_PARAMS, `Unknown tool: ${name}`);
  if (args !== undefined && !isObject(args))
    throw new RpcError(INVALID_PARAMS, 'Invalid params: `arguments` must be an object');
  try {
    const out = await runTool(tool, ctx, args ?? {});
    const text = Buffer.isBuffer(out) ? out.toString('utf8') : JSON.stringify(out);
    return {
      content: [{ type: 'text', text }],
      structuredContent: Buffer.isBuffer(out) ? JSON.parse(text) : out,
      isError: false,
    };
  } catch (err) {
    const e = apiErrorOf(err, ctx.deps.logger, ctx.deps.config.payloadSizeLimit, {
      method: 'POST',
      path: `/mcp (${name})`,
    });
    const body = e ? errorBody(e.code, e.message) : errorBody('internal', 'An internal error has occurred.');
    return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
  }
}
