/**
 * Request metrics: `meilisearch_http_requests_total` (counter by method, path and status) and
 * `meilisearch_http_response_time_seconds` (histogram by method and path). Paths are the
 * route's template with Meilisearch's parameter names (`/indexes/{index_uid}/search`), so a
 * million index uids make one series. A request no route matched is counted under its own
 * path, as Meilisearch does, but only the first {@link MAX_UNMATCHED_PATHS} such paths are
 * kept, so scanners cannot grow the table without bound; unmatched requests get no histogram.
 *
 * Cost per request while the `metrics` feature is on: one counter and one histogram update
 * when the response closes (the clock is `http/observe.ts`'s). While it is off: one boolean read.
 */
import type { RequestObserver } from '../http/observe';
import type { Exposition } from './exposition';

/** Prometheus' default buckets, which Meilisearch uses. */
export const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

export const MAX_UNMATCHED_PATHS = 1000;

/** Our route parameters under the names Meilisearch's routes give them. */
const PARAM_NAMES: Record<string, string> = {
  indexUid: 'index_uid',
  documentId: 'document_id',
  taskUid: 'task_id',
  batchUid: 'batch_id',
  key: 'key',
  workspace: 'workspace_uid',
};

const snakeCase = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

interface Count {
  method: string;
  path: string;
  status: string;
  n: number;
}

interface Timing {
  method: string;
  path: string;
  /** Per-bucket (not cumulative) counts; the last slot is above the largest bound. */
  buckets: number[];
  sum: number;
  count: number;
}

export class HttpMetrics {
  private readonly counts = new Map<string, Count>();
  private readonly timings = new Map<string, Timing>();
  private readonly templates = new Map<string, string>();
  private readonly unmatched = new Set<string>();

  /** The request observer (`http/observe.ts`); `enabled` is read once per request. */
  observer(enabled: () => boolean): RequestObserver {
    return {
      wants: () => enabled(),
      done: (req, res, ms) => {
        const routePath = req.route?.path;
        this.record(
          req.method,
          typeof routePath === 'string' ? this.template(routePath) : null,
          req.path,
          res.statusCode,
          ms / 1000,
        );
      },
    };
  }

  /** `template` is null when no route matched (then `rawPath` is the label). */
  record(method: string, template: string | null, rawPath: string, status: number, seconds: number): void {
    let path = template;
    if (path === null) {
      if (!this.unmatched.has(rawPath)) {
        if (this.unmatched.size >= MAX_UNMATCHED_PATHS) return;
        this.unmatched.add(rawPath);
      }
      path = rawPath;
    }
    const countKey = `${method} ${status} ${path}`;
    const c = this.counts.get(countKey);
    if (c) c.n += 1;
    else this.counts.set(countKey, { method, path, status: String(status), n: 1 });
    if (template === null) return;

    const timeKey = `${method} ${path}`;
    let t = this.timings.get(timeKey);
    if (!t) {
      t = { method, path, buckets: new Array<number>(BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
      this.timings.set(timeKey, t);
    }
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]) i++;
    t.buckets[i] += 1;
    t.sum += seconds;
    t.count += 1;
  }

  private template(routePath: string): string {
    let t = this.templates.get(routePath);
    if (t === undefined) {
      t = routePath.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => `{${PARAM_NAMES[name] ?? snakeCase(name)}}`);
      this.templates.set(routePath, t);
    }
    return t;
  }

  render(out: Exposition): void {
    out.family('meilisearch_http_requests_total', 'counter', 'HTTP requests answered, by method, route and status');
    const byLabels = <T extends { method: string; path: string }>(a: T, b: T) =>
      a.method === b.method ? cmp(a.path, b.path) : cmp(a.method, b.method);
    const counts = [...this.counts.values()].sort((a, b) => byLabels(a, b) || cmp(a.status, b.status));
    for (const c of counts)
      out.sample(
        'meilisearch_http_requests_total',
        [
          ['method', c.method],
          ['path', c.path],
          ['status', c.status],
        ],
        c.n,
      );

    const name = 'meilisearch_http_response_time_seconds';
    out.family(name, 'histogram', 'Time taken to answer HTTP requests, in seconds, by method and route');
    for (const t of [...this.timings.values()].sort(byLabels)) {
      let cumulative = 0;
      for (let i = 0; i <= BUCKETS.length; i++) {
        cumulative += t.buckets[i];
        const le = i < BUCKETS.length ? String(BUCKETS[i]) : '+Inf';
        out.sample(
          name,
          [
            ['method', t.method],
            ['path', t.path],
            ['le', le],
          ],
          cumulative,
          '_bucket',
        );
      }
      out.sample(
        name,
        [
          ['method', t.method],
          ['path', t.path],
        ],
        t.sum,
        '_sum',
      );
      out.sample(
        name,
        [
          ['method', t.method],
          ['path', t.path],
        ],
        t.count,
        '_count',
      );
    }
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
