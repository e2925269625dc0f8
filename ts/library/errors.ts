/** The library's one error type: what the server would answer, as a thrown object. */
import { ApiError } from '../errors/api-error';
import { errorBody, statusOf } from '../errors/catalog';

/**
 * A refused call or a failed task, with the same `code`, `type`, `message` and `link` as the
 * server's error object (one table, `crates/api-types`), and the HTTP status the server would
 * have used.
 */
export class QuarryError extends Error {
  readonly code: string;
  readonly type: string;
  readonly link: string;
  readonly httpStatus: number;

  constructor(code: string, message: string) {
    super(message);
    this.name = 'QuarryError';
    const body = errorBody(code, message);
    this.code = body.code;
    this.type = body.type;
    this.link = body.link;
    this.httpStatus = statusOf(code);
  }
}

/** Runs `f`, turning the layers' `ApiError` into a `QuarryError`. */
export async function guarded<T>(f: () => T | Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    throw asQuarryError(err);
  }
}

export function asQuarryError(err: unknown): unknown {
  return err instanceof ApiError ? new QuarryError(err.code, err.message) : err;
}
