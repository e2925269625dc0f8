/**
 * The methods a path is served with, from the one table of routes (`openapi/operations.ts`):
 * a request whose path exists but not for its method is answered `405 Method Not Allowed` with
 * an `Allow` header and no body, as Meilisearch answers it; a path that exists for no method
 * is a 404, and so is a route served behind a start-up option that is off (`servedWith`).
 */
import { type Method, type Operation, OPERATIONS, type RouteOptions, served } from '../openapi/operations';

const ORDER: readonly Method[] = ['get', 'post', 'put', 'patch', 'delete'];

/** Each route path as a pattern (`:name` is one segment), with its operations and how many segments are parameters. */
const ROUTES: ReadonlyArray<{ pattern: RegExp; methods: Operation[]; params: number }> = (() => {
  const byPath = new Map<string, Operation[]>();
  for (const op of OPERATIONS) {
    const methods = byPath.get(op.path) ?? [];
    methods.push(op);
    byPath.set(op.path, methods);
  }
  const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return [...byPath].map(([path, methods]) => ({
    pattern: new RegExp(
      `^${path
        .split('/')
        .map((seg) => (seg.startsWith(':') ? '[^/]+' : escapeRegex(seg)))
        .join('/')}$`,
    ),
    methods,
    params: path.split('/').filter((seg) => seg.startsWith(':')).length,
  }));
})();

/**
 * The methods `path` is served with, upper-case in a fixed order; empty when it is no route. A
 * path written out by a route (`documents/fetch`) is that route's, not a parameter's
 * (`documents/:documentId`): the routes with the fewest parameters that match decide.
 */
export function allowedMethods(path: string, options: RouteOptions): string[] {
  const matching = ROUTES.filter((r) => r.pattern.test(path) && r.methods.some((op) => served(op, options)));
  const fewest = Math.min(...matching.map((r) => r.params));
  const methods = new Set<Method>();
  for (const r of matching)
    if (r.params === fewest) for (const op of r.methods) if (served(op, options)) methods.add(op.method);
  return ORDER.filter((m) => methods.has(m)).map((m) => m.toUpperCase());
}
