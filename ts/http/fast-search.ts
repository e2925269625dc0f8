/**
 * The hot request without Express: `POST /indexes/{uid}/search` with a JSON body, the request
 * a search box sends on every keystroke. Express costs it more than the engine does on most
 * queries (routing through every router, the raw-body stream, middleware frames), so the
 * server hands it here first: the same guard (`authenticateLatest`), the same body rules
 * (`parseJsonBody`), the same search service, the same observers and the same error objects,
 * written straight to the socket.
 *
 * Only the plain form takes this path; anything else goes to Express untouched, which answers
 * it as before: a query string, a trailing slash or percent-encoding in the path, a uid with
 * other characters, a missing or non-JSON content type, a Content-Encoding, a body without
 * Content-Length or over the payload limit, or a header of the network of instances.
 * `__tests__/search/fast-path.test.ts` checks that both paths answer the same bytes and headers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { authenticateLatest } from '../auth/guard';
import type { Deps } from '../deps';
import { errorOf, sendError } from '../errors/middleware';
import { DERIVATION_CANDIDATES_HEADER, FEDERATION_RUNS_HEADER } from '../native';
import { ORIGIN_HEADER } from '../network/forward';
import { METADATA_HEADER, wantsMetadata } from '../search/metadata';
import type { SearchService } from '../search/service';
import { mediaTypeOf, parseJsonBody } from './body';
import { allowAnyOrigin } from './cors';
import { arrivalOf, observe, type ObservedRequest, type RequestObserver } from './observe';

const SEARCH = /^\/indexes\/([A-Za-z0-9_-]{1,400})\/search$/;
const ROUTE = { path: '/indexes/:indexUid/search' };
const NOT_HERE = [ORIGIN_HEADER, FEDERATION_RUNS_HEADER, DERIVATION_CANDIDATES_HEADER].map((h) => h.toLowerCase());

/** Returns a handler that answers the plain search request and says so, or leaves it (false). */
export function fastSearch(
  deps: Deps,
  service: SearchService,
  observers: readonly RequestObserver[],
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const limit = deps.config.payloadSizeLimit;
  return (req, res) => {
    if (req.method !== 'POST') return false;
    const m = SEARCH.exec(req.url ?? '');
    if (m === null) return false;
    const h = req.headers;
    const length = h['content-length'];
    if (
      length === undefined ||
      !(Number(length) <= limit) ||
      h['content-encoding'] !== undefined ||
      h['transfer-encoding'] !== undefined
    )
      return false;
    const type = mediaTypeOf(h['content-type']);
    if (type !== 'application/json') return false;
    for (const name of NOT_HERE) if (h[name] !== undefined) return false;

    const uid = m[1]!;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      const seen: ObservedRequest = { method: 'POST', path: req.url!, route: ROUTE, headers: h, body, query: {} };
      observe(observers, seen, res);
      answer(deps, service, req, res, uid, body, type).catch((err) => {
        const e = errorOf(err, deps.logger, limit, seen);
        if (e !== null && !res.headersSent) sendError(allowAnyOrigin(res), e);
      });
    });
    return true;
  };
}

async function answer(
  deps: Deps,
  service: SearchService,
  req: IncomingMessage,
  res: ServerResponse,
  uid: string,
  body: Buffer,
  type: string,
): Promise<void> {
  const auth = await authenticateLatest(
    req,
    deps.keys,
    deps.config.masterKey,
    'search',
    uid,
    deps.replica ? () => deps.replica!.catchUp() : null,
  );
  const metadata = wantsMetadata(req.headers[METADATA_HEADER.toLowerCase()] as string | undefined);
  const bytes = await service.search(auth, uid, parseJsonBody(body, type), arrivalOf(req), metadata);
  deps.responseBudget.holdFor(res, bytes.length);
  allowAnyOrigin(res)
    .writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': bytes.length })
    .end(bytes);
}
