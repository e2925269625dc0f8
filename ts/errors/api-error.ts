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
    super(shortMessage(message));
    this.name = 'ApiError';
    this.code = code;
  }
}

export interface ErrorBody {
  message: string;
  code: string;
  type: string;
  link: string;
}

/** Longest message kept whole; past it, echoed values are cut (a 1 MB uid is not sent back). */
const MESSAGE_MAX = 1024;
/** What is kept of one echoed value (a backquoted span) in a long message. */
const EXCERPT = 100;

/**
 * A message fit to send: short ones unchanged; in long ones every backquoted span (the values
 * messages echo) longer than the excerpt is cut to it with `…`, and what is still too long is
 * cut at the limit.
 */
export function shortMessage(message: string): string {
  if (message.length <= MESSAGE_MAX) return message;
  const cut = message.replace(/`([^`]*)`/g, (whole, inner: string) => (inner.length > 2 * EXCERPT ? `\`${inner.slice(0, EXCERPT)}…\`` : whole));
  return cut.length <= MESSAGE_MAX ? cut : `${cut.slice(0, MESSAGE_MAX)}…`;
}
