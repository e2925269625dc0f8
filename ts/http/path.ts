/**
 * Paths whose percent-encoding does not decode (`/indexes/%zz`, `%C3%28`). The router would
 * throw while decoding the parameter; Meilisearch instead hands the route the segment as it
 * can read it (`%zz` as is, invalid UTF-8 as U+FFFD), so the route's own check answers
 * (`invalid_index_uid`, `invalid_task_uids`...). This does the same by re-encoding each such
 * segment before routing.
 */
import type { NextFunction, Request, Response } from 'express';

/** `%XX` pairs become bytes, anything else stays as typed; the bytes are read as UTF-8, lossily. */
function lossyDecode(segment: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < segment.length; i++) {
    const hex = segment[i] === '%' ? segment.slice(i + 1, i + 3) : '';
    if (/^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(segment[i], 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function decodes(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

/** The request URL with every undecodable path segment re-encoded, or null when none is. */
export function repairedUrl(url: string): string | null {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (!path.includes('%')) return null;
  const segments = path.split('/');
  if (segments.every(decodes)) return null;
  const fixed = segments.map((s) => (decodes(s) ? s : encodeURIComponent(lossyDecode(s))));
  return fixed.join('/') + (q < 0 ? '' : url.slice(q));
}

export function repairPath(req: Request, _res: Response, next: NextFunction): void {
  const url = repairedUrl(req.url);
  if (url !== null) req.url = url;
  next();
}
