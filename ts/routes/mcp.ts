/**
 * `POST /mcp` (Quarry's own, mounted only with `--experimental-mcp`: without it `/mcp` is no
 * route, 404 for every method as in Meilisearch): the Model Context Protocol over
 * streamable HTTP, answered with `application/json` (no server-sent events: no tool streams,
 * and the server never asks the client anything). GET and DELETE answer 405, as the transport
 * allows a server without a stream of its own or sessions to end.
 *
 * HTTP failures come before the protocol: a missing or bad key (any valid key gets in, each
 * tool checks its own action) answers Quarry's error object like every route. Past it, what
 * goes wrong is JSON-RPC: a body that is not JSON or not a message answers 400 with
 * a JSON-RPC error, a request answers 200 with its result or error (`mcp/server.ts`), and a
 * notification 202 with no body.
 *
 * A result is an answer in flight like a search's: its bytes are held in the response budget
 * until it is sent (a search tool's hits can be as large as the route's answer).
 */
import { type Request, type Response, Router } from 'express';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { readJson } from '../http/body';
import { classify, errorOf, INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, resultOf, RpcError } from '../mcp/jsonrpc';
import { answer, PROTOCOL_VERSIONS } from '../mcp/server';
import type { SearchService } from '../search/service';

const send = (res: Response, status: number, body: unknown) =>
  res.status(status).type('application/json').send(JSON.stringify(body));

export function mcpRoutes(deps: Deps, search: SearchService): Router {
  const r = Router();

  r.post('/mcp', deps.guard(null), async (req: Request, res: Response) => {
    // Sent by the client after `initialize`; an unknown revision is refused, as the transport asks.
    const version = req.get('mcp-protocol-version');
    if (version !== undefined && !(PROTOCOL_VERSIONS as readonly string[]).includes(version)) {
      send(
        res,
        400,
        errorOf(
          null,
          new RpcError(
            INVALID_REQUEST,
            `Bad Request: unsupported MCP-Protocol-Version \`${version}\` (supported: ${PROTOCOL_VERSIONS.join(', ')})`,
          ),
        ),
      );
      return;
    }
    let body: unknown;
    try {
      body = readJson(req);
    } catch (err) {
      if (err instanceof ApiError && (err.code === 'malformed_payload' || err.code === 'missing_payload')) {
        send(res, 400, errorOf(null, new RpcError(PARSE_ERROR, `Parse error: ${err.message}`)));
        return;
      }
      throw err;
    }
    const message = classify(body);
    if (message.kind === 'invalid') {
      send(res, 400, errorOf(message.id, message.error));
      return;
    }
    if (message.kind !== 'request') {
      res.status(202).end();
      return;
    }
    let result: Buffer;
    try {
      result = Buffer.from(
        JSON.stringify(
          resultOf(message.id, await answer({ deps, search, auth: req.auth! }, message.method, message.params)),
        ),
      );
    } catch (err) {
      if (!(err instanceof RpcError)) {
        deps.logger.error('mcp request failed', {
          method: message.method,
          error: err instanceof Error ? err.stack : String(err),
        });
      }
      send(
        res,
        200,
        errorOf(message.id, err instanceof RpcError ? err : new RpcError(INTERNAL_ERROR, 'Internal error')),
      );
      return;
    }
    deps.responseBudget.holdFor(res, result.length);
    res.status(200).type('application/json').send(result);
  });

  return r;
}
