/** Helpers for query-string validation with Meilisearch's wording and codes. */
import { z } from 'zod';
import { ApiError } from '../errors/api-error';
import { didYouMean } from '../settings/deserr';

export type Query = Record<string, unknown>;

/** Meilisearch's words for a `rankingScoreThreshold` outside [0, 1], in a body or a parameter. */
export const THRESHOLD_RANGE =
  'the value of `rankingScoreThreshold` is invalid, expected a float between `0.0` and `1.0`.';

/** deserr's error for an unknown query parameter, with its suggestion. */
export function unknownParam(key: string, allowed: readonly string[]): ApiError {
  return new ApiError(
    'bad_request',
    `Unknown parameter \`${key}\`: ${didYouMean(key, allowed)}expected one of ${allowed.map((a) => `\`${a}\``).join(', ')}`,
  );
}

/**
 * Checks a query string's parameters one at a time, in the order the request lists them, as
 * deserr reads them: `check` runs on each alone, and an unknown one is refused in its turn.
 * The first fault the request shows is the one answered.
 */
export function inRequestOrder(query: Query, allowed: readonly string[], check: (one: Query) => unknown): void {
  for (const [k, v] of Object.entries(query)) {
    if (!allowed.includes(k)) throw unknownParam(k, allowed);
    check({ [k]: v });
  }
}

/** Rejects unknown parameters with `bad_request`, as deserr does. */
export function rejectUnknownParams(query: Query, allowed: readonly string[]): void {
  for (const key of Object.keys(query)) {
    if (!allowed.includes(key)) {
      throw unknownParam(key, allowed);
    }
  }
}

export function stringParam(query: Query, name: string, code: string): string | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new ApiError(code, `Invalid value in parameter \`${name}\`: expected a string`);
  return v;
}

/**
 * The largest count a double holds below 2^64: counts Meilisearch reads as `usize` are read up
 * to it (past 2^53 JavaScript holds them only approximately; the engine's paging saturates).
 */
export const COUNT_MAX = 2 ** 64 - 2 ** 11;

/**
 * A count written in a query string, as Rust parses a `usize` (`+5` is 5, 2^64 is too much);
 * null when it is none.
 */
function countText(v: string): number | null {
  if (!/^\+?\d+$/.test(v) || BigInt(v.replace('+', '')) >= 2n ** 64n) return null;
  return Math.min(Number(v), COUNT_MAX);
}

export function uintParam(query: Query, name: string, code: string, dflt: number): number {
  const v = stringParam(query, name, code);
  if (v === undefined) return dflt;
  const n = countText(v);
  if (n === null) {
    throw new ApiError(code, `Invalid value in parameter \`${name}\`: could not parse \`${v}\` as a positive integer`);
  }
  return n;
}

export function boolParam(query: Query, name: string, code: string, dflt: boolean): boolean {
  const v = stringParam(query, name, code);
  if (v === undefined) return dflt;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new ApiError(
    code,
    `Invalid value in parameter \`${name}\`: could not parse \`${v}\` as a boolean, expected either \`true\` or \`false\``,
  );
}

export function listParam(query: Query, name: string, code: string): string[] | undefined {
  const v = stringParam(query, name, code);
  if (v === undefined) return undefined;
  return v.split(',').map((s) => s.trim());
}

/**
 * A `filter` parameter of a GET route, as Meilisearch reads it: JSON when it parses as JSON (an
 * array of conditions, or a quoted string; a number or an object is then refused as a body's
 * would be, and `null`, which a body may send for no filter, is refused too), the text itself
 * otherwise.
 */
export function filterParam(v: string, code: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch {
    return v;
  }
  if (parsed === null)
    throw new ApiError(code, 'Invalid syntax for the filter parameter: `expected String, Array, found: null`.');
  return parsed;
}

/** deserr's error for a query parameter outside its values, with its suggestion. */
export function unknownParamValue(name: string, v: string, accepted: readonly string[], code: string): ApiError {
  return new ApiError(
    code,
    `Unknown value \`${v}\` for parameter \`${name}\`: ${didYouMean(v, accepted)}expected one of ${accepted.map((a) => `\`${a}\``).join(', ')}`,
  );
}

/** The fields of an object schema that take one of a few words, with those words. */
export function enumsOf(shape: Record<string, z.ZodType>): Record<string, readonly string[]> {
  const out: Record<string, readonly string[]> = {};
  for (const [k, field] of Object.entries(shape)) {
    let t: z.ZodType = field;
    while (t instanceof z.ZodOptional || t instanceof z.ZodNullable) t = t.unwrap() as z.ZodType;
    if (t instanceof z.ZodEnum) out[k] = t.options as string[];
  }
  return out;
}

export interface ParamKinds {
  numbers: Set<string>;
  bools: Set<string>;
  lists: Set<string>;
  /** The parameters that take one of a few words, with those words. */
  enums?: Record<string, readonly string[]>;
  /** The error code of each parameter. */
  codes: Record<string, string>;
  /** The parameters the route reads, in Meilisearch's order; any other is refused, in turn. */
  known?: readonly string[];
  /** Handles a parameter of its own (returns false to leave it to the defaults). */
  special?: (key: string, value: string, out: Record<string, unknown>) => boolean;
}

/** The GET form of a POST body: `query` converted to the body's types (numbers, booleans,
 * comma-separated lists), with the per-parameter codes of `kinds`. */
export function bodyFromParams(query: Record<string, unknown>, kinds: ParamKinds): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(query)) {
    if (kinds.known && !kinds.known.includes(k)) throw unknownParam(k, kinds.known);
    if (typeof v !== 'string') {
      out[k] = v;
    } else if (k === 'rankingScoreThreshold' && kinds.numbers.has(k)) {
      const n = v.trim() === '' ? Number.NaN : Number(v);
      if (!(n >= 0 && n <= 1)) {
        throw new ApiError(kinds.codes[k], `Invalid value in parameter \`${k}\`: ${THRESHOLD_RANGE}`);
      }
      out[k] = n;
    } else if (kinds.numbers.has(k)) {
      // Every other number parameter is a count.
      out[k] = uintParam(query, k, kinds.codes[k], 0);
    } else if (kinds.bools.has(k)) {
      out[k] = boolParam(query, k, kinds.codes[k], false);
    } else if (kinds.enums?.[k]) {
      if (!kinds.enums[k].includes(v)) throw unknownParamValue(k, v, kinds.enums[k], kinds.codes[k]);
      out[k] = v;
    } else if (k === 'filter') {
      out[k] = filterParam(v, kinds.codes[k]);
    } else if (kinds.lists.has(k)) {
      out[k] = k === 'sort' ? splitSort(v) : v.split(',').map((s) => s.trim());
    } else if (!kinds.special?.(k, v, out)) {
      out[k] = v;
    }
  }
  return out;
}

/** A `sort` list: commas inside a `_geoPoint(lat, lng)` do not separate, as Meilisearch reads it. */
export function splitSort(v: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < v.length; i++) {
    if (v[i] === '(') depth++;
    else if (v[i] === ')') depth = Math.max(0, depth - 1);
    else if (v[i] === ',' && depth === 0) {
      out.push(v.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(v.slice(start).trim());
  return out;
}
