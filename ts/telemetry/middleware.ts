/**
 * What the HTTP layer tells telemetry: one request observer (`http/observe.ts`), registered
 * only when telemetry is on. Searches (`/indexes/{uid}/search`, `/multi-search`) cost a few
 * increments once answered; successful writes become feature-usage events whose
 * properties are setting names, booleans, counts and a closed list of content types: never
 * an index uid, a key, a document value, a query or an address.
 */
import type { ObservedRequest, RequestObserver } from '../http/observe';
import type { Analytics } from './analytics';

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

const PAYLOAD_TYPES = ['application/json', 'application/x-ndjson', 'text/csv'];

function bodyOf(req: ObservedRequest): unknown {
  const b = req.body as unknown;
  if (!Buffer.isBuffer(b) || b.length === 0 || b.length > 1_000_000) return undefined;
  try {
    return JSON.parse(b.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** A setting's shape, without its content: counts of lists and maps, booleans and numbers of nested options. */
function describeSetting(v: unknown): Record<string, unknown> {
  if (v === null) return { reset: true };
  if (Array.isArray(v)) return { set: true, total: v.length };
  if (typeof v === 'object') {
    const out: Record<string, unknown> = { set: true, total: Object.keys(v as object).length };
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      // Only typed options (enabled, maxTotalHits, ...); strings may be attribute or embedder names.
      if (typeof x === 'boolean' || typeof x === 'number') out[snake(k)] = x;
    }
    return out;
  }
  if (typeof v === 'boolean' || typeof v === 'number') return { set: true, value: v };
  return { set: true };
}

const SETTINGS = /^\/indexes\/[^/]+\/settings(?:\/([^/]+))?\/?$/;
const DOCUMENTS = /^\/indexes\/[^/]+\/documents(\/[^/]+)?\/?$/;
const INDEX = /^\/indexes\/[^/]+\/?$/;

/** The feature-usage event of a successful write, if it has one. */
export function describeWrite(req: ObservedRequest): [string, Record<string, unknown>] | null {
  const { method, path } = req;
  const settings = SETTINGS.exec(path);
  const documents = DOCUMENTS.exec(path);
  if (method === 'POST' && (path === '/indexes' || path === '/indexes/')) {
    const b = bodyOf(req) as Record<string, unknown> | undefined;
    return ['Index Created', { primary_key: typeof b?.primaryKey === 'string' }];
  }
  if (method === 'DELETE' && INDEX.test(path)) return ['Index Deleted', {}];
  if ((method === 'PATCH' || method === 'PUT' || method === 'POST' || method === 'DELETE') && settings) {
    const m = settings;
    const props: Record<string, unknown> = {};
    if (method === 'DELETE')
      props[m[1] ? snake(m[1].replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())) : 'all'] = { reset: true };
    else if (m[1])
      props[snake(m[1].replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()))] = describeSetting(bodyOf(req));
    else {
      const b = bodyOf(req);
      if (b && typeof b === 'object' && !Array.isArray(b))
        for (const [k, v] of Object.entries(b)) props[snake(k)] = describeSetting(v);
    }
    return ['Settings Updated', props];
  }
  if ((method === 'POST' || method === 'PUT') && documents && !documents[1]) {
    const ct = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    return [
      method === 'POST' ? 'Documents Added' : 'Documents Updated',
      {
        payload_type: PAYLOAD_TYPES.includes(ct) ? ct : 'other',
        primary_key: typeof req.query.primaryKey === 'string',
      },
    ];
  }
  if (method === 'POST' && /^\/indexes\/[^/]+\/documents\/(delete|delete-batch)\/?$/.test(path)) {
    return ['Documents Deleted', path.includes('delete-batch') ? { per_batch: true } : { per_filter: true }];
  }
  if (method === 'DELETE' && documents)
    return ['Documents Deleted', documents[1] ? { per_document_id: true } : { clear_all: true }];
  if (method === 'PATCH' && path === '/experimental-features') {
    const b = bodyOf(req);
    const flags: Record<string, boolean> = {};
    if (b && typeof b === 'object')
      for (const [k, v] of Object.entries(b)) if (typeof v === 'boolean') flags[snake(k)] = v;
    return ['Experimental Features Updated', flags];
  }
  if (method === 'POST' && path === '/swap-indexes') {
    const b = bodyOf(req);
    return ['Indexes Swapped', { swap_operation_number: Array.isArray(b) ? b.length : 0 }];
  }
  return null;
}

/** The request observer (`http/observe.ts`): searches are counted, successful writes described. */
export function analyticsObserver(a: Analytics): RequestObserver {
  return {
    // Decided once answered, on the repaired path (the clock is shared with the request log).
    wants: () => true,
    done: (req, res, ms, finished) => {
      if (!finished) return;
      const p = req.path;
      if (p.endsWith('/search') || p === '/multi-search') {
        a.recordSearch(res.statusCode < 400, ms);
        return;
      }
      if (!a.collectsEvents || res.statusCode >= 300) return;
      const e = describeWrite(req);
      if (e) a.event(e[0], e[1]);
    },
  };
}
