/**
 * The HTTP side of a network's writes: each request is remembered for the networked queue
 * (which forwards the write it enqueues, see `network/forward.ts`), and a leader's origin
 * header is read from the request.
 */
import type { NextFunction, Request, Response } from 'express';
import { ORIGIN_HEADER, type Origin, parseOrigin, withIncoming } from '../network/forward';

/** Middleware: remembers the request being answered, for the networked queue. */
export function networkContext(req: Request, _res: Response, next: NextFunction): void {
  const raw = req.body as unknown;
  withIncoming(
    {
      method: req.method,
      url: req.originalUrl,
      contentType: req.headers['content-type'],
      body: Buffer.isBuffer(raw) ? raw : Buffer.alloc(0),
      origin: originOf(req),
    },
    next,
  );
}

/** The origin a leader's request names, if it carries one. */
export function originOf(req: Request): Origin | null {
  return parseOrigin(req.get(ORIGIN_HEADER));
}
