/**
 * JSON-RPC 2.0 as the Model Context Protocol uses it: one message per HTTP body (MCP dropped
 * batches in its 2025-06-18 revision), sorted into a request (an id: it gets an answer), a
 * notification (no id: nothing comes back) or a response to a request of ours (we send none,
 * so it is taken and dropped). Nothing here knows HTTP or the tools.
 */

/** The error codes JSON-RPC reserves, the only ones this server answers. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

export type Id = string | number;

/** A protocol error: answered as a JSON-RPC `error`, never as a tool result. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

export type Message =
  | { kind: 'request'; id: Id; method: string; params: Record<string, unknown> }
  | { kind: 'notification'; method: string }
  | { kind: 'response' }
  /** Not a JSON-RPC message; `id` when one could be read, to answer it. */
  | { kind: 'invalid'; id: Id | null; error: RpcError };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isId = (v: unknown): v is Id => typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));

/** Sorts a parsed body into one of the kinds of `Message`. */
export function classify(body: unknown): Message {
  if (Array.isArray(body))
    return {
      kind: 'invalid',
      id: null,
      error: new RpcError(
        INVALID_REQUEST,
        'Invalid Request: batches are not accepted (one JSON-RPC message per request)',
      ),
    };
  if (!isObject(body))
    return {
      kind: 'invalid',
      id: null,
      error: new RpcError(INVALID_REQUEST, 'Invalid Request: expected a JSON-RPC 2.0 message object'),
    };
  const id = isId(body.id) ? body.id : null;
  const invalid = (why: string): Message => ({
    kind: 'invalid',
    id,
    error: new RpcError(INVALID_REQUEST, `Invalid Request: ${why}`),
  });
  if (body.jsonrpc !== '2.0') return invalid('`jsonrpc` must be "2.0"');
  if (body.id !== undefined && id === null) return invalid('`id` must be a string or an integer');
  if (body.method === undefined) {
    if (id !== null && ('result' in body || 'error' in body)) return { kind: 'response' };
    return invalid('missing `method`');
  }
  if (typeof body.method !== 'string') return invalid('`method` must be a string');
  if (body.params !== undefined && !isObject(body.params)) return invalid('`params` must be an object');
  if (id === null) return { kind: 'notification', method: body.method };
  return {
    kind: 'request',
    id,
    method: body.method,
    params: (body.params as Record<string, unknown> | undefined) ?? {},
  };
}

export function resultOf(id: Id, result: unknown): Record<string, unknown> {
  return { jsonrpc: '2.0', id, result };
}

export function errorOf(id: Id | null, error: RpcError): Record<string, unknown> {
  return { jsonrpc: '2.0', id, error: { code: error.code, message: error.message } };
}
