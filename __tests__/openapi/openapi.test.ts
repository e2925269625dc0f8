/**
 * GET /openapi.json: the description against the routes Express has registered (walked from
 * the app's router stack), both ways, and the shape OpenAPI 3.1 requires, checked by hand.
 */
import type { Express } from 'express';
import { buildApp } from '../../ts/app';
import { startTestServer, type TestServer } from '../helpers/server';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** `METHOD /path` of every route in the app, nested routers included (`:param` → `{param}`). */
function registeredRoutes(app: Express): Set<string> {
  const out = new Set<string>();
  const walk = (stack: any[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        const paths: string[] = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        for (const p of paths) {
          for (const m of Object.keys(layer.route.methods)) {
            if (m === '_all') throw new Error(`route ${p} is registered for every method`);
            out.add(`${m.toUpperCase()} ${(prefix + p).replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
          }
        }
      } else if (layer.handle?.stack) {
        // Every router is mounted at the root today; a mount path would have to be read here.
        if (layer.path && layer.path !== '/' && layer.path !== '')
          throw new Error(`a router is mounted at ${layer.path}`);
        walk(layer.handle.stack, prefix);
      }
    }
  };
  walk((app as any).router.stack, '');
  return out;
}

function describedRoutes(doc: any): Set<string> {
  const out = new Set<string>();
  for (const [p, item] of Object.entries<any>(doc.paths))
    for (const m of Object.keys(item)) if (METHODS.includes(m)) out.add(`${m.toUpperCase()} ${p}`);
  return out;
}

/** Resolves a local `$ref` (`#/components/...`); throws on a dangling one. */
function resolve(doc: any, ref: string): unknown {
  expect(ref.startsWith('#/')).toBe(true);
  let node: any = doc;
  for (const part of ref.slice(2).split('/')) {
    node = node?.[part];
    if (node === undefined) throw new Error(`dangling $ref ${ref}`);
  }
  return node;
}

function refsIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refsIn(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsIn(v, out);
    }
  }
  return out;
}

describe('GET /openapi.json', () => {
  let s: TestServer;
  let doc: any;
  beforeAll(async () => {
    s = await startTestServer();
    const r = await s.api('GET', '/openapi.json', { key: null });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    doc = r.body;
  });
  afterAll(() => s.close());

  it('when the routes are walked, then every registered route is described and every described route is registered', () => {
    const registered = registeredRoutes(buildApp(s.server.deps));
    const described = describedRoutes(doc);
    expect(registered.size).toBeGreaterThan(100);
    expect([...registered].filter((r) => !described.has(r)).sort()).toEqual([]);
    expect([...described].filter((r) => !registered.has(r)).sort()).toEqual([]);
  });

  it('when read as OpenAPI 3.1, then the document has the required shape', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(typeof doc.info.title).toBe('string');
    expect(typeof doc.info.version).toBe('string');
    expect(doc.components.securitySchemes.apiKey).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    const operationIds = new Set<string>();
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      expect(p.startsWith('/')).toBe(true);
      const templated = [...p.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const [method, op] of Object.entries<any>(item)) {
        expect(METHODS).toContain(method);
        expect(typeof op.operationId).toBe('string');
        expect(operationIds.has(op.operationId)).toBe(false);
        operationIds.add(op.operationId);
        // Every path template has its required path parameter, and nothing else is `in: path`.
        const pathParams = op.parameters.filter((x: any) => x.in === 'path');
        expect(pathParams.map((x: any) => x.name).sort()).toEqual([...templated].sort());
        for (const param of op.parameters) {
          expect(['path', 'query', 'header', 'cookie']).toContain(param.in);
          expect(typeof param.name).toBe('string');
          expect(typeof param.schema).toBe('object');
          if (param.in === 'path') expect(param.required).toBe(true);
        }
        const names = op.parameters.map((x: any) => `${x.in}:${x.name}`);
        expect(new Set(names).size).toBe(names.length);
        // Responses: at least one, keyed by status codes or ranges, each with a description.
        const codes = Object.keys(op.responses);
        expect(codes.some((c) => /^2\d\d$/.test(c))).toBe(true);
        for (const c of codes) {
          expect(c).toMatch(/^([1-5]\d\d|[1-5]XX|default)$/);
          expect(typeof op.responses[c].description).toBe('string');
          for (const media of Object.values<any>(op.responses[c].content ?? {}))
            expect(typeof media.schema).toBe('object');
        }
        if (op.requestBody) {
          expect(Object.keys(op.requestBody.content).length).toBeGreaterThan(0);
          for (const [type, media] of Object.entries<any>(op.requestBody.content)) {
            expect(type).toMatch(/^[a-z]+\/[a-z0-9.+-]+$/);
            expect(typeof media.schema).toBe('object');
          }
        }
        if (op.security) expect(op.security).toEqual([]);
      }
    }
    for (const ref of refsIn(doc)) expect(resolve(doc, ref)).toBeDefined();
  });

  it('when the search body is described, then it comes from the search schema with its limits', () => {
    const body = doc.paths['/indexes/{indexUid}/search'].post.requestBody.content['application/json'].schema;
    expect(body.type).toBe('object');
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.matchingStrategy.enum).toEqual(['last', 'all', 'frequency']);
    expect(body.properties.rankingScoreThreshold).toBeDefined();
    const get = doc.paths['/indexes/{indexUid}/search'].get.parameters.map((p: any) => p.name);
    expect(get).toEqual(
      expect.arrayContaining(['indexUid', 'q', 'limit', 'attributesToHighlight', 'showRankingScore']),
    );
  });

  it('when called without a key, then the public operations answer and the others ask for one', async () => {
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const concrete = p.replace(/\{[^}]+\}/g, (m) => (m === '{taskUid}' || m === '{batchUid}' ? '0' : 'x'));
        const r = await s.api(method.toUpperCase(), concrete, {
          key: null,
          body: method === 'get' || method === 'delete' ? undefined : {},
        });
        if (op.security)
          expect({ route: `${method} ${p}`, status: r.status }).toEqual({ route: `${method} ${p}`, status: 200 });
        else
          expect({ route: `${method} ${p}`, code: r.body?.code }).toEqual({
            route: `${method} ${p}`,
            code: 'missing_authorization_header',
          });
      }
    }
  });
});
