/**
 * zod → Meilisearch errors, in deserr's words. Only one issue is reported: the first bad field
 * in the order the body lists them (deserr stops there), a missing one last. An unknown field
 * is `bad_request`; any other issue takes the code mapped to its path (`mergeFacets.x`) or to
 * its top-level field.
 */
import type { z } from 'zod';
import { ApiError } from './api-error';
import { didYouMean, unknownValue } from '../settings/deserr';

export type FieldCodes = Record<string, string>;

/** deserr's name for a JSON value's kind. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      // Past 2^64 an integer is a float to serde, as any other number.
      if (!Number.isInteger(value) || Math.abs(value) >= 2 ** 64) return 'a number';
      return value < 0 ? 'a negative integer' : 'a positive integer';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

/** What deserr says it found: the kind and the value, or only `null`. */
export function found(value: unknown): string {
  if (value === null) return 'null';
  const text = typeof value === 'number' && Math.abs(value) >= 2 ** 64 ? value.toExponential() : JSON.stringify(value);
  return `${describe(value)}: \`${text}\``;
}

function valueAt(body: unknown, path: PropertyKey[]): unknown {
  let cur = body;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}

export function pathText(path: PropertyKey[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
}

type Unwrappable = {
  _zod: { def: { type: string; innerType?: z.ZodType; element?: z.ZodType } };
  shape?: Record<string, z.ZodType>;
};

/** The schema of the value at `path` inside `schema` (through optional and nullable), if known. */
function schemaAt(schema: z.ZodType, path: PropertyKey[]): Unwrappable | undefined {
  const unwrap = (s: Unwrappable | undefined) => {
    while (s && (s._zod.def.type === 'optional' || s._zod.def.type === 'nullable'))
      s = s._zod.def.innerType as unknown as Unwrappable;
    return s;
  };
  let s = unwrap(schema as unknown as Unwrappable);
  for (const p of path) {
    s = unwrap(
      (typeof p === 'number' ? s?._zod.def.element : s?.shape?.[String(p)]) as unknown as Unwrappable | undefined,
    );
    if (!s) return undefined;
  }
  return s;
}

const COUNTS = new WeakSet<object>();

/** Marks `schema` as a count (deserr's `usize`): its errors say "expected a positive integer". */
export function countSchema<T extends object>(schema: T): T {
  COUNTS.add(schema);
  return schema;
}

/** Whether the value at `path` of `schema` is a count (a non-negative integer, deserr's `usize`). */
function isCount(schema: z.ZodType, path: PropertyKey[]): boolean {
  const n = schemaAt(schema, path) as (Unwrappable & { isInt?: boolean; minValue?: number | null }) | undefined;
  return (
    (n !== undefined && COUNTS.has(n)) || (n?._zod.def.type === 'number' && n.isInt === true && (n.minValue ?? -1) >= 0)
  );
}

/**
 * Where a body sits in a larger request, for the paths of its errors: `at` (`['queries', 0]`
 * for `.queries[0]`), and the fields an unknown one is told of when not the schema's own.
 */
export interface Within {
  at: PropertyKey[];
  fields?: readonly string[];
}

export function parseWith<T>(
  schema: z.ZodType<T>,
  body: unknown,
  codes: FieldCodes,
  fallbackCode = 'bad_request',
  within: Within = { at: [] },
): T {
  const outer = pathText(within.at);
  const res = schema.safeParse(body);
  if (res.success) return res.data;
  // deserr stops at the first bad field in the order the body lists them.
  const keys = body !== null && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : [];
  const rank = (i: z.core.$ZodIssue): number => {
    const k = i.code === 'unrecognized_keys' ? i.keys[0] : i.path[0];
    const at = keys.indexOf(String(k));
    return at < 0 ? keys.length : at;
  };
  const issue = res.error.issues.reduce((best, i) => (rank(i) < rank(best) ? i : best));
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0];
    const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape;
    const fields = within.fields ?? (shape ? Object.keys(shape) : []);
    const expected = fields.map((k) => `\`${k}\``).join(', ');
    const inside = outer + pathText(issue.path);
    const where = inside ? ` inside \`${inside}\`` : '';
    throw new ApiError(
      'bad_request',
      `Unknown field \`${key}\`${where}: ${didYouMean(key, fields)}expected one of ${expected}`,
    );
  }
  const field = issue.path[0];
  // A nested field may have a code of its own (`mergeFacets.maxValuesPerFacet`).
  const own = (k: string) => (Object.hasOwn(codes, k) ? codes[k] : undefined);
  const code = own(issue.path.join('.')) ?? (typeof field === 'string' ? own(field) : undefined) ?? fallbackCode;
  const value = valueAt(body, issue.path);
  const at = outer + pathText(issue.path);
  let message: string;
  if (issue.path.length === 0 && issue.code === 'invalid_type') {
    // The body itself is of the wrong type: deserr's root error, always `bad_request`.
    const expected = issue.expected === 'array' ? 'an array' : 'an object';
    throw new ApiError(
      'bad_request',
      `Invalid value type${outer ? ` at \`${outer}\`` : ''}: expected ${expected}, but found ${found(body)}`,
    );
  }
  if (value === undefined) {
    const parent = outer + pathText(issue.path.slice(0, -1));
    message = `Missing field \`${String(issue.path[issue.path.length - 1])}\`${parent ? ` inside \`${parent}\`` : ''}`;
  } else if (isCount(schema, issue.path)) {
    message = `Invalid value type at \`${at}\`: expected a positive integer, but found ${found(value)}`;
  } else if (issue.code === 'invalid_value' && typeof value === 'string') {
    // An enum: deserr's "Unknown value" message, with its suggestion.
    const accepted = (issue.values ?? []).map(String);
    message = unknownValue(
      value,
      accepted,
      [...within.at, ...issue.path].map((p) => (typeof p === 'number' ? p : String(p))),
    ).message;
  } else if (issue.code === 'invalid_value') {
    message = `Invalid value type at \`${at}\`: expected a string, but found ${found(value)}`;
  } else if (issue.code === 'invalid_type') {
    message = `Invalid value type at \`${at}\`: expected ${issue.expected === 'array' ? 'an array' : issue.expected === 'object' || issue.expected === 'record' ? 'an object' : `a ${issue.expected}`}, but found ${found(value)}`;
  } else {
    message = `Invalid value at \`${at}\`: ${issue.message}`;
  }
  throw new ApiError(code, message);
}
