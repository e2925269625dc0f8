/**
 * The body of `POST /indexes/{uid}/documents/edit`: `{function, filter?, context?}`, checked
 * in Meilisearch's order and words: its deserializer reports the first problem met walking
 * the body's keys; then the function is compiled, then `context` and `filter` are checked.
 */
import { ApiError } from '../errors/api-error';

export interface EditBody {
  function: string;
  /** The filter as sent (string or array form), or null. */
  filter: unknown;
  context: Record<string, unknown> | null;
}

const FIELDS = ['filter', 'context', 'function'];

/** A value as Meilisearch's deserializer names it in its messages. */
function found(value: unknown): string {
  if (value === null) return 'null';
  const text = JSON.stringify(value);
  if (Array.isArray(value)) return `an array: \`${text}\``;
  switch (typeof value) {
    case 'boolean':
      return `a boolean: \`${text}\``;
    case 'number':
      if (!Number.isInteger(value)) return `a number: \`${text}\``;
      return value < 0 ? `a negative integer: \`${text}\`` : `a positive integer: \`${text}\``;
    case 'string':
      return `a string: \`${text}\``;
    default:
      return `an object: \`${text}\``;
  }
}

export function parseEditBody(body: unknown): EditBody {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError('bad_request', `Invalid value type: expected an object, but found ${found(body)}`);
  }
  const fields = body as Record<string, unknown>;
  for (const [key, value] of Object.entries(fields)) {
    if (!FIELDS.includes(key)) {
      throw new ApiError(
        'bad_request',
        `Unknown field \`${key}\`: expected one of ${FIELDS.map((f) => `\`${f}\``).join(', ')}`,
      );
    }
    if (key === 'function' && typeof value !== 'string') {
      // Meilisearch's code for a `function` of the wrong type.
      throw new ApiError(
        'invalid_document_edition_function_filter',
        `Invalid value type at \`.function\`: expected a string, but found ${found(value)}`,
      );
    }
  }
  if (!('function' in fields)) throw new ApiError('missing_document_edition_function', 'Missing field `function`');
  return {
    function: fields.function as string,
    filter: fields.filter ?? null,
    context: (fields.context ?? null) as Record<string, unknown> | null,
  };
}

/** The context's shape, checked after the function compiles (Meilisearch's order). */
export function checkEditContext(context: unknown): void {
  if (context !== null && (typeof context !== 'object' || Array.isArray(context))) {
    throw new ApiError('invalid_document_edition_context', 'The context must be an object');
  }
}
