/** The one Express error handler: `{message, code, type, link}` with the catalog's status. */
import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { type Logger, loggablePath } from '../logging';
import { ApiError } from './api-error';
import { errorBody, statusOf } from './catalog';
import { formatBytes } from '../http/body';

/**
 * The error a failure answers with (null: the client left, nothing to answer). Unexpected
 * failures are logged and answered `internal`, their details kept out of the response.
 */
export function errorOf(
  err: unknown,
  logger: Logger,
  payloadLimit: number,
  request: { method: string; path: string },
): ApiError | null {
  const parserErr = err as { type?: string; status?: number };
  if (err instanceof ApiError) return err;
  if (parserErr && parserErr.type === 'entity.too.large') {
    return new ApiError(
      'payload_too_large',
      `The provided payload reached the size limit. The maximum accepted payload size is ${formatBytes(payloadLimit)}.`,
    );
  }
  if (parserErr && (parserErr.type === 'encoding.unsupported' || parserErr.type === 'charset.unsupported')) {
    return new ApiError('unsupported_media_type', String((err as Error).message));
  }
  if (parserErr && parserErr.type === 'request.aborted') return null;
  if (parserErr && parserErr.status === 400) {
    // The body parser's own failures (a Content-Encoding whose body does not decode...).
    return new ApiError('bad_request', `Error that occur during reading payload: ${String((err as Error).message)}`);
  }
  logger.error('unhandled error', {
    method: request.method,
    path: loggablePath(request.path),
    error: err instanceof Error ? err.stack : String(err),
  });
  return new ApiError('internal', 'An internal error has occurred.');
}

/** Writes `e` as the response: the catalog's status and the error object (503s say when to retry). */
export function sendError(res: ServerResponse, e: ApiError): void {
  const status = e.status ?? statusOf(e.code);
  const body = JSON.stringify(errorBody(e.code, e.message));
  const headers: Record<string, string | number> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  };
  if (status === 503) headers['Retry-After'] = '10';
  res.writeHead(status, headers).end(body);
}

export function errorMiddleware(logger: Logger, payloadLimit: number) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const e = errorOf(err, logger, payloadLimit, req);
    if (e !== null) sendError(res, e);
  };
}
