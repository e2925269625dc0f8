/**
 * zod → Meilisearch errors. Only the first issue is reported (deserr stops at the first
 * error); an unknown field is `bad_request`; any other issue takes the code mapped to the
 * offending top-level field.
 */
import type { z } from 'zod';
import { ApiError } from './api-error';
import { unknownValue } from '../settings/deserr';

export type FieldCodes = Record<string, string>;

/** deserr's name for a JSON value's kind. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      if (!Number.isInteger(value)) return 'a number';
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
  return value === null ? 'null' : `${describe(value)}: \`${JSON.stringify(value)}\``;
}

function valueAt(body: unknown, path: PropertyKey[]): unknown {
  let cur = body;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}

function pathText(path: PropertyKey[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
}

/** Whether the field `field` of `schema` is a count (a non-negative integer, deserr's `usize`). */
function isCount(schema: z.ZodType, field: PropertyKey | undefined): boolean {
  const shape = (schema as unknown as { shape?: Record<string, z.ZodType> }).shape;
  let s = typeof field === 'string' ? shape?.[field] : undefined;
  while (s && (s._zod.def.type === 'optional' || s._zod.def.type === 'nullable')) s = (s._zod.def as unknown as { innerType: z.ZodType }).innerType;
  const n = s as unknown as { _zod: { def: { type: string } }; isInt?: boolean; minValue?: number | null } | undefined;
  return n?._zod.def.type === 'number' && n.isInt === true && (n.minValue ?? -1) >= 0;
}

/**
 * Meilisearch's message for a filter that is neither a string nor an array of strings and
 * arrays; null when the fault lies elsewhere (a nested array, a list too long).
 */
export function filterShapeMessage(filter: unknown): string | null {
  if (!Array.isArray(filter)) {
    return typeof filter === 'string' ? null : `Invalid syntax for the filter parameter: \`expected String, Array, found: ${JSON.stringify(filter)}\`.`;
  }
  const bad = filter.find((f) => typeof f !== 'string' && !Array.isArray(f));
  return bad === undefined ? null : `Invalid syntax for the filter parameter: \`expected String, [String], found: ${JSON.stringify(bad)}\`.`;
}

export function parseWith<T>(schema: z.ZodType<T>, body: unknown, codes: FieldCodes, fallbackCode = 'bad_request'): T {
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
    const expected = shape ? Object.keys(shape).map((k) => `\`${k}\``).join(', ') : '';
    const where = issue.path.length ? ` inside \`${pathText(issue.path)}\`` : '';
    throw new ApiError('bad_request', `Unknown field \`${key}\`${where}: expected one of ${expected}`);
  }
  const field = issue.path[0];
  const code = typeof field === 'string' && codes[field] ? codes[field] : fallbackCode;
  const value = valueAt(body, issue.path);
  let message: string;
  if (issue.path.length === 0 && (body === null || typeof body !== 'object' || Array.isArray(body))) {
    message = `Invalid value type: expected an object, but found ${found(body)}`;
  } else if (value === undefined) {
    message = `Missing field \`${String(field)}\``;
  } else if (field === 'filter' && code.endsWith('_filter') && filterShapeMessage(valueAt(body, ['filter'])) !== null) {
    message = filterShapeMessage(valueAt(body, ['filter']))!;
  } else if (issue.path.length === 1 && isCount(schema, field)) {
    message = `Invalid value type at \`${pathText(issue.path)}\`: expected a positive integer, but found ${found(value)}`;
  } else if (issue.code === 'invalid_value' && typeof value === 'string') {
    // An enum: deserr's "Unknown value" message, with its suggestion.
    const accepted = (issue.values ?? []).map(String);
    message = unknownValue(value, accepted, issue.path.map((p) => (typeof p === 'number' ? p : String(p)))).message;
  } else if (issue.code === 'invalid_value') {
    message = `Invalid value type at \`${pathText(issue.path)}\`: expected a string, but found ${found(value)}`;
  } else if (issue.code === 'invalid_type') {
    message = `Invalid value type at \`${pathText(issue.path)}\`: expected ${issue.expected === 'array' ? 'an array' : issue.expected === 'object' ? 'an object' : `a ${issue.expected}`}, but found ${found(value)}`;
  } else {
    message = `Invalid value at \`${pathText(issue.path)}\`: ${issue.message}`;
  }
  throw new ApiError(code, message);
}
