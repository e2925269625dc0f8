/**
 * One place that times requests for whoever watches them (the request log, `/metrics`,
 * telemetry): each observer says as a request arrives whether it wants it; if none does the
 * request pays nothing, otherwise one clock read and one `close` listener serve them all.
 * Requests reach it from Express (`observeRequests`) and from the fast search path
 * (`http/fast-search.ts`), which describes its request in the same terms.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** What observers read of a request: Express's request, or the fast path's view of one. */
export interface ObservedRequest {
  method: string;
  /** The path, without the query string. */
  path: string;
  /** The matched route's pattern, once routed (`/indexes/:indexUid/search`). */
  route?: { path?: unknown };
  headers: IncomingHttpHeaders;
  /** The raw body bytes. */
  body?: unknown;
  query: Record<string, unknown>;
}

export interface RequestObserver {
  /** Read as the request arrives: a cheap check (a flag, a level). */
  wants(req: ObservedRequest): boolean;
  /** Once the response is closed; `finished` is false when the client left first. */
  done(req: ObservedRequest, res: ServerResponse, ms: number, finished: boolean): void;
}

/** When each request arrived, by request (see [`arrived`]). */
const arrivals = new WeakMap<object, bigint>();

/**
 * Notes that `req` has just arrived (the server's first step for every request): a search's
 * `processingTimeMs` counts from here, so parsing, validation and the wait for a search slot
 * and a thread are in it, not only the engine's own work.
 */
export function arrived(req: object): void {
  arrivals.set(req, process.hrtime.bigint());
}

/** When `req` arrived, if the server noted it (the library's calls have no request). */
export function arrivalOf(req: object): bigint | undefined {
  return arrivals.get(req);
}

/** Starts timing `req` for the observers that want it. */
export function observe(observers: readonly RequestObserver[], req: ObservedRequest, res: ServerResponse): void {
  let picked: RequestObserver[] | null = null;
  for (const o of observers) {
    if (!o.wants(req)) continue;
    picked ??= [];
    picked.push(o);
  }
  if (picked === null) return;
  const start = process.hrtime.bigint();
  res.once('close', () => {
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    for (const o of picked!) o.done(req, res, ms, res.writableFinished);
  });
}

export function observeRequests(observers: readonly RequestObserver[]): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    observe(observers, req as ObservedRequest, res);
    next();
  };
}
