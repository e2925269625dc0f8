/**
 * The methods a path is served with, from the one table of routes (`openapi/operations.ts`):
 * a request whose path exists but not for its method is answered `405 Method Not Allowed` with
 * an `Allow` header and no body, as Meilisearch answers it; a path that exists for no method
 * is a 404.
 */
import { type Method, OPERATIONS } from '../openapi/operations';

const ORDER: readonly Method[] = ['get', 'post', 'put', 'patch', 'delete'];

/** Each route path as a pattern (`:name` is one segment), with its methods. */
const ROUTES: ReadonlyArray<{ pattern: RegExp; methods: Set<Method> }> = (() => {
  const byPath = new Map<string, Set<Method>>();
  for (const op of OPERATIONS) {
    const methods = byPath.get(op.path) ?? new Set<Method>();
    methods.add(op.method);
    byPath.set(op.path, methods);
  }
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return [...byPath].map(([path, methods]) => ({
    pattern: new RegExp(`^${path.split('/').map((seg) => (seg.startsWith(':') ? '[^/]+' : escape(seg))).join('/')}$`),
    methods,
  }));
})();

/** The methods `path` is served with, upper-case in a fixed order; empty when it is no route. */
export function allowedMethods(path: string): string[] {
  const methods = new Set<Method>();
  for (const r of ROUTES) if (r.pattern.test(path)) for (const m of r.methods) methods.add(m);
  return ORDER.filter((m) => methods.has(m)).map((m) => m.toUpperCase());
}
