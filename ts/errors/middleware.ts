/** The one Express error handler: `{message, code, type, link}` with the catalog's status. */
import type { NextFunction, Request, Response } from 'express';
import { type Logger, loggablePath } from '../logging';
import { ApiError } from './api-error';
import { errorBody, statusOf } from './catalog';
import { formatBytes } from '../http/body';

export function errorMiddleware(logger: Logger, payloadLimit: number) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    let e: ApiError;
    const parserErr = err as { type?: string; status?: number };
    if (err instanceof ApiError) {
      e = err;
    } else if (parserErr && parserErr.type === 'entity.too.large') {
      e = new ApiError('payload_too_large', `The provided payload reached the size limit. The maximum accepted payload size is ${formatBytes(payloadLimit)}.`);
    } else if (parserErr && (parserErr.type === 'encoding.unsupported' || parserErr.type === 'charset.unsupported')) {
      e = new ApiError('unsupported_media_type', String((err as Error).message));
    } else if (parserErr && parserErr.type === 'request.aborted') {
      return;
    } else if (parserErr && parserErr.status === 400) {
      // The body parser's own failures (a Content-Encoding whose body does not decode...).
      e = new ApiError('bad_request', `Error that occur during reading payload: ${String((err as Error).message)}`);
    } else {
      logger.error('unhandled error', { method: req.method, path: loggablePath(req.path), error: err instanceof Error ? err.stack : String(err) });
      e = new ApiError('internal', 'An internal error has occurred.');
    }
    const status = statusOf(e.code);
    if (status === 503) res.setHeader('Retry-After', '10');
    res.status(status).json(errorBody(e.code, e.message));
  };
}
