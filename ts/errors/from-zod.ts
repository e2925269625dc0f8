/**
 * zod → Meilisearch errors. Only the first issue is reported (deserr stops at the first
 * error); an unknown field is `bad_request`; any other issue takes the code mapped to the
 * offending top-level field.
 */
import type { z } from 'zod';
import { ApiError } from './api-error';
import { unknownValue } from '../settings/deserr';

export type FieldCodes = Record<string, string>;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return Number.isInteger(value) ? 'a positive integer' : 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
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

export function parseWith<T>(schema: z.ZodType<T>, body: unknown, codes: FieldCodes, fallbackCode = 'bad_request'): T {
  const res = schema.safeParse(body);
  if (res.success) return res.data;
  const issue = res.error.issues[0];
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
    message = `Invalid value type: expected an object, but found ${describe(body)}: \`${JSON.stringify(body)}\``;
  } else if (value === undefined) {
    message = `Missing field \`${String(field)}\``;
  } else if (issue.code === 'invalid_value' && typeof value === 'string') {
    // An enum: deserr's "Unknown value" message, with its suggestion.
    const accepted = (issue.values ?? []).map(String);
    message = unknownValue(value, accepted, issue.path.map((p) => (typeof p === 'number' ? p : String(p)))).message;
  } else if (issue.code === 'invalid_type') {
    message = `Invalid value type at \`${pathText(issue.path)}\`: expected ${issue.expected === 'array' ? 'an array' : issue.expected === 'object' ? 'an object' : `a ${issue.expected}`}, but found ${describe(value)}: \`${JSON.stringify(value)}\``;
  } else {
    message = `Invalid value at \`${pathText(issue.path)}\`: ${issue.message}`;
  }
  throw new ApiError(code, message);
}
