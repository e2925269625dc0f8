/**
 * One place that times requests for whoever watches them (the request log, `/metrics`,
 * telemetry): each observer says as a request arrives whether it wants it; if none does the
 * request pays nothing, otherwise one clock read and one `close` listener serve them all.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';

export interface RequestObserver {
  /** Read as the request arrives: a cheap check (a flag, a level). */
  wants(req: Request): boolean;
  /** Once the response is closed; `finished` is false when the client left first. */
  done(req: Request, res: Response, ms: number, finished: boolean): void;
}

export function observeRequests(observers: RequestObserver[]): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    let picked: RequestObserver[] | null = null;
    for (const o of observers) if (o.wants(req)) (picked ??= []).push(o);
    if (picked === null) {
      next();
      return;
    }
    const start = process.hrtime.bigint();
    res.once('close', () => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      for (const o of picked!) o.done(req, res, ms, res.writableFinished);
    });
    next();
  };
}
