/**
 * Request bodies. Every route receives the raw bytes (express.raw, with the payload
 * limit); JSON routes parse them here so that content-type, empty, malformed and
 * oversized bodies all answer Meilisearch's codes, and document routes hand the bytes
 * to Rust untouched.
 */
import type { Request } from 'express';
import { ApiError } from '../errors/api-error';

export function mediaType(req: Request): string | null {
  const ct = req.headers['content-type'];
  if (!ct) return null;
  return ct.split(';')[0].trim().toLowerCase();
}

export function rawBody(req: Request): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}

/** Parses a JSON body; `optional` bodies (empty) come back as undefined. */
export function readJson(req: Request, optional = false): unknown {
  const body = rawBody(req);
  if (body.length === 0 && optional) return undefined;
  const type = mediaType(req);
  if (type === null) {
    throw new ApiError('missing_content_type', 'A Content-Type header is missing. Accepted values for the Content-Type header are: `application/json`');
  }
  if (type !== 'application/json') {
    throw new ApiError('invalid_content_type', `The Content-Type \`${type}\` is invalid. Accepted values for the Content-Type header are: \`application/json\``);
  }
  if (body.length === 0) throw new ApiError('missing_payload', 'A json payload is missing.');
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new ApiError('malformed_payload', `The json payload provided is malformed. \`${(err as Error).message}\`.`);
  }
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
