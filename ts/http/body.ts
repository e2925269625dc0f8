/**
 * Request bodies. Every route receives the raw bytes (express.raw, with the payload
 * limit); JSON routes parse them here so that content-type, empty, malformed and
 * oversized bodies all answer Meilisearch's codes, and document routes hand the bytes
 * to Rust untouched.
 */
import type { Request } from 'express';
import { ApiError } from '../errors/api-error';
import { MAX_DEPTH as MAX_JSON_DEPTH } from '../auth/token-json';
import { refusedBytes, serdeJsonError } from './json-error';

export function mediaType(req: Pick<Request, 'headers'>): string | null {
  return mediaTypeOf(req.headers['content-type']);
}

/** A Content-Type header's media type, lowercased, without parameters. */
export function mediaTypeOf(ct: string | undefined): string | null {
  // An empty header is a content type (``, refused as invalid), as Meilisearch reads it.
  if (ct === undefined) return null;
  return ct.split(';')[0].trim().toLowerCase();
}

export function rawBody(req: Request): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}

/** Parses a JSON body; `optional` bodies (empty) come back as undefined. */
export function readJson(req: Request, optional = false): unknown {
  return parseJsonBody(rawBody(req), mediaType(req), optional);
}

/** `readJson` for bytes and a media type read elsewhere (the fast search path). */
export function parseJsonBody(body: Buffer, type: string | null, optional = false): unknown {
  if (body.length === 0 && optional) return undefined;
  if (type === null) {
    throw new ApiError(
      'missing_content_type',
      'A Content-Type header is missing. Accepted values for the Content-Type header are: `application/json`',
    );
  }
  if (type !== 'application/json') {
    throw new ApiError(
      'invalid_content_type',
      `The Content-Type \`${type}\` is invalid. Accepted values for the Content-Type header are: \`application/json\``,
    );
  }
  if (body.length === 0) throw new ApiError('missing_payload', 'A json payload is missing.');
  const text = body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw malformed(serdeJsonError(body) ?? (err as Error).message);
  }
  // What JSON.parse accepts and serde_json refuses: invalid UTF-8 (read as U+FFFD), and what
  // the walk of the value cannot clear. The reader finds it, at its place.
  const refused = plainlyParsed(text, value) && !refusedBytes(body) ? null : serdeJsonError(body);
  if (refused) throw malformed(refused);
  return value;
}

/**
 * True when `value`, parsed from `text`, shows none of what serde_json refuses and JSON.parse
 * accepts (nesting 128 levels deep, a lone surrogate escape, a number past f64): no
 * `\u` escape in the text, no number JSON.parse turned into an infinity, no nesting deeper
 * than the depth allowed. A walk of the parsed value costs a query vector's hundreds of
 * numbers far less than the scan of its thousands of characters; anything the walk cannot
 * clear is scanned, which finds the place to name.
 */
function plainlyParsed(text: string, value: unknown): boolean {
  return !text.includes('\\u') && plainValue(value, 0);
}

function plainValue(value: unknown, depth: number): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  if (value === null || typeof value !== 'object') return true;
  // A container at `depth` is the nesting's level `depth + 1`.
  if (depth + 1 >= MAX_JSON_DEPTH) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!plainValue(item, depth + 1)) return false;
    return true;
  }
  for (const key in value) if (!plainValue((value as Record<string, unknown>)[key], depth + 1)) return false;
  return true;
}

function malformed(reason: string): ApiError {
  return new ApiError('malformed_payload', `The json payload provided is malformed. \`${reason}\`.`);
}

export function formatBytes(n: number): string {
  if (n % 1024 === 0) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    let v = n;
    while (v >= 1024 && v % 1024 === 0 && i < units.length - 1) {
      v /= 1024;
      i++;
    }
    return `${v} ${units[i]}`;
  }
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  let v = n;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${Number(v.toFixed(2))} ${units[i]}`;
}
