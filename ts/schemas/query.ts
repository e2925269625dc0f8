/** Helpers for query-string validation with Meilisearch's wording and codes. */
import { ApiError } from '../errors/api-error';

export type Query = Record<string, unknown>;

/** Rejects unknown parameters with `bad_request`, as deserr does. */
export function rejectUnknownParams(query: Query, allowed: readonly string[]): void {
  for (const key of Object.keys(query)) {
    if (!allowed.includes(key)) {
      throw new ApiError('bad_request', `Unknown parameter \`${key}\`: expected one of ${allowed.map((a) => `\`${a}\``).join(', ')}`);
    }
  }
}

export function stringParam(query: Query, name: string, code: string): string | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new ApiError(code, `Invalid value in parameter \`${name}\`: expected a string`);
  return v;
}

export function uintParam(query: Query, name: string, code: string, dflt: number): number {
  const v = stringParam(query, name, code);
  if (v === undefined) return dflt;
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) {
    throw new ApiError(code, `Invalid value in parameter \`${name}\`: could not parse \`${v}\` as a positive integer`);
  }
  return Number(v);
}

export function boolParam(query: Query, name: string, code: string, dflt: boolean): boolean {
  const v = stringParam(query, name, code);
  if (v === undefined) return dflt;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new ApiError(code, `Invalid value in parameter \`${name}\`: could not parse \`${v}\` as a boolean, expected either \`true\` or \`false\``);
}

export function listParam(query: Query, name: string, code: string): string[] | undefined {
  const v = stringParam(query, name, code);
  if (v === undefined) return undefined;
  return v.split(',').map((s) => s.trim());
}
