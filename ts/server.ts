/**
 * The HTTP server: a listener (HTTP or TLS) in front of one open data directory
 * (`runtime.ts`). `startServer` is what `main.ts` calls, and what an app embedding the server
 * calls; the embedded library without HTTP is `library/`.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { buildApp, requestObservers } from './app';
import { errorBody } from './errors/catalog';
import type { Config } from './config';
import type { Deps } from './deps';
import type { Logger } from './logging';
import { fastSearch } from './http/fast-search';
import { arrived } from './http/observe';
import { openRuntime } from './runtime';
import { SearchService } from './search/service';
import { attachTls, httpsOptions } from './startup/tls';

export interface RunningServer {
  url: string;
  port: number;
  deps: Deps;
  close(): Promise<void>;
  /** Called when the server must be closed and started again (see `Runtime.onRestartNeeded`). */
  onRestartNeeded(listener: (reason: string) => void): void;
}

export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  // Certificate files are read before anything is opened: a bad one fails start-up cleanly.
  const tlsOptions = config.tls ? httpsOptions(config.tls) : null;
  const runtime = await openRuntime(config, logger);
  const { deps } = runtime;
  const observers = requestObservers(deps);
  const search = new SearchService(deps);
  const app = buildApp(deps, observers, search);
  // The plain search request skips Express (http/fast-search.ts); everything else is Express's.
  const fast = fastSearch(deps, search, observers);
  const handle = (req: http.IncomingMessage, res: http.ServerResponse) => {
    arrived(req);
    if (!fast(req, res)) app(req, res);
  };
  // Slow and idle clients are bounded: headers must arrive within their timeout (a trickle of
  // header bytes is answered 408), a whole request within Node's five minutes, and a
  // connection that neither sends nor receives for the idle timeout (a client that stopped
  // reading a large answer, which Node would otherwise buffer for ever) is closed. Node checks
  // the first two every `connectionsCheckingInterval`.
  const limits: http.ServerOptions = {
    headersTimeout: config.httpHeadersTimeoutSeconds * 1000,
    connectionsCheckingInterval: 1000,
  };
  const server: http.Server = tlsOptions
    ? https.createServer({ ...tlsOptions, ...limits }, handle)
    : http.createServer(limits, handle);
  server.timeout = config.httpIdleTimeoutSeconds * 1000;
  if (config.tls) attachTls(server as https.Server, config.tls);
  try {
    server.listen(config.port, config.host);
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
  } catch (err) {
    await runtime.close();
    throw err;
  }
  // An idle keep-alive connection is closed after 30 s, or the idle timeout when shorter.
  server.keepAliveTimeout =
    config.httpIdleTimeoutSeconds > 0 ? Math.min(30_000, config.httpIdleTimeoutSeconds * 1000) : 30_000;
  server.on('clientError', answerClientError);
  const port = (server.address() as AddressInfo).port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `${config.tls ? 'https' : 'http'}://${host}:${port}`;

  return {
    url,
    port,
    deps,
    onRestartNeeded: (listener) => runtime.onRestartNeeded(listener),
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await runtime.close();
    },
  };
}

/**
 * Requests Node's HTTP parser refuses before Express sees them (a request line or headers
 * past the 16 KB limit, bytes that are not allowed in a URL or a header) are answered with
 * the usual error object instead of Node's bare `400 Bad Request`: status 431 for oversized
 * headers, 408 for a request that never finished arriving, 400 otherwise, code `bad_request`. The connection is closed, as the
 * parser cannot tell where the next request would start.
 */
export function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? ['431 Request Header Fields Too Large', 'The request line and headers are larger than the server accepts.']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['408 Request Timeout', 'The request was not received in time.']
        : ['400 Bad Request', `The request could not be parsed as HTTP: \`${err.code ?? 'malformed request'}\`.`];
  const body = JSON.stringify(errorBody('bad_request', message));
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
