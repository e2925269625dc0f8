/**
 * The one error type every layer throws for client-facing failures.
 *
 * It carries only the Meilisearch code and the message: the HTTP status and the
 * error type come from the catalog exported by the Rust `api-types` crate
 * (see `catalog.ts`), so the table has a single source.
 */
export class ApiError extends Error {
  readonly code: string;
  /** Set only where Meilisearch answers a code with another status than the catalog's (`insideQuery`). */
  readonly status?: number;

  constructor(code: string, message: string, status?: number) {
    super(shortMessage(message));
    this.name = 'ApiError';
    this.code = code;
    if (status !== undefined) this.status = status;
  }
}

/**
 * `err` raised by query `i` of a multi-search, as Meilisearch words it ("Inside `.queries[i]`:").
 * An index that does not exist is then a 400, not the catalog's 404 (Meilisearch 1.50, federated
 * or not); every other code keeps its status.
 */
export function insideQuery(err: ApiError, i: number): ApiError {
  return new ApiError(
    err.code,
    `Inside \`.queries[${i}]\`: ${err.message}`,
    err.code === 'index_not_found' ? 400 : err.status,
  );
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
  const cut = message.replace(/`([^`]*)`/g, (whole, inner: string) =>
    inner.length > 2 * EXCERPT ? `\`${inner.slice(0, EXCERPT)}…\`` : whole,
  );
  return cut.length <= MESSAGE_MAX ? cut : `${cut.slice(0, MESSAGE_MAX)}…`;
}

/** The codes of the system failures a Node call reports by `errno` name (the engine's own are mapped in Rust). */
const SYSTEM_CODES: Record<string, string> = {
  ENOSPC: 'no_space_left_on_device',
  EMFILE: 'too_many_open_files',
  ENFILE: 'too_many_open_files',
};

/**
 * A full disk or exhausted file descriptors met by Node itself (a dump's or a snapshot's
 * files), or by the engine: the ApiError with its own code, else null.
 */
export function systemError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return Object.values(SYSTEM_CODES).includes(err.code) ? err : null;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !(code in SYSTEM_CODES)) return null;
  return new ApiError(
    SYSTEM_CODES[code],
    `${(err as Error).message}. This error generally happens when you have no space left on device or when your database doesn't have read or write right.`,
  );
}
