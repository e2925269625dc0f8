/**
 * The one error type every layer throws for client-facing failures.
 *
 * It carries only the Meilisearch code and the message: the HTTP status and the
 * error type come from the catalog exported by the Rust `api-types` crate
 * (see `catalog.ts`), so the table has a single source.
 */
export class ApiError extends Error {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
  }

  /** The `{message, code, type, link}` body, with type resolved by the caller. */
  toBody(type: string): ErrorBody {
    return { message: this.message, code: this.code, type, link: errorLink(this.code) };
  }
}

export interface ErrorBody {
  message: string;
  code: string;
  type: string;
  link: string;
}

export function errorLink(code: string): string {
  return `https://docs.meilisearch.com/errors#${code}`;
}
