/**
 * Request bodies. Every route receives the raw bytes (express.raw, with the payload
 * limit); JSON routes parse them here so that content-type, empty, malformed and
 * oversized bodies all answer Meilisearch's codes, and document routes hand the bytes
 * to Rust untouched.
 */
import type { Request } from 'express';
import { ApiError } from '../errors/api-error';
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
    throw new ApiError('missing_content_type', 'A Content-Type header is missing. Accepted values for the Content-Type header are: `application/json`');
  }
  if (type !== 'application/json') {
    throw new ApiError('invalid_content_type', `The Content-Type \`${type}\` is invalid. Accepted values for the Content-Type header are: \`application/json\``);
  }
  if (body.length === 0) throw new ApiError('missing_payload', 'A json payload is missing.');
  const text = body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw malformed(serdeJsonError(body) ?? (err as Error).message);
  }
  // JSON.parse read invalid UTF-8 as U+FFFD; serde_json refuses it.
  const invalid = refusedBytes(body) ? serdeJsonError(body) : null;
  if (invalid) throw malformed(invalid);
  const refused = plainlyParsed(text, value) ? null : jsonRefusal(text);
  if (refused) throw malformed(refused);
  return value;
}

/**
 * True when `value`, parsed from `text`, shows none of what {@link jsonRefusal} looks for: no
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

/** Nesting this deep is refused (127 levels are read), as serde_json (and so Meilisearch) refuses it. */
export const MAX_JSON_DEPTH = 128;

/**
 * What JSON.parse accepts but Meilisearch's parser refuses, in text that already parsed:
 * nesting {@link MAX_JSON_DEPTH} levels deep, an unpaired surrogate escape (`"\uD800"`), a
 * number out of the f64 range (`1e400`, which JSON.parse turns into Infinity). Each would
 * otherwise travel on as a value nothing downstream can handle. One pass, no allocation but
 * for numbers.
 */
export function jsonRefusal(text: string): string | null {
  let depth = 0;
  let line = 1;
  let lineStart = 0;
  const at = (i: number) => `at line ${line} column ${i - lineStart + 1}`;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a) {
      line++;
      lineStart = i + 1;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth >= MAX_JSON_DEPTH) return `recursion limit exceeded ${at(i)}`;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    } else if (c === 0x22) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x22) break;
        if (d !== 0x5c) continue;
        i++;
        if (text.charCodeAt(i) !== 0x75) continue;
        const unit = parseInt(text.slice(i + 1, i + 5), 16);
        i += 4;
        if (unit >= 0xdc00 && unit <= 0xdfff) return `lone leading surrogate in hex escape ${at(i)}`;
        if (unit >= 0xd800 && unit <= 0xdbff) {
          const low = text.charCodeAt(i + 1) === 0x5c && text.charCodeAt(i + 2) === 0x75 ? parseInt(text.slice(i + 3, i + 7), 16) : -1;
          if (!(low >= 0xdc00 && low <= 0xdfff)) return `unexpected end of hex escape ${at(i)}`;
          i += 6;
        }
      }
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      // Only a number with an exponent or over 308 digits can leave the f64 range; others
      // are not converted again (a query vector is hundreds of numbers).
      let j = i + 1;
      let exponent = false;
      for (; j < text.length; j++) {
        const d = text.charCodeAt(j);
        if (d === 0x65 || d === 0x45) exponent = true;
        else if (!((d >= 0x30 && d <= 0x39) || d === 0x2b || d === 0x2d || d === 0x2e)) break;
      }
      if ((exponent || j - i > 308) && !Number.isFinite(Number(text.slice(i, j)))) return `number out of range ${at(j - 1)}`;
      i = j - 1;
    }
  }
  return null;
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
