/**
 * Tenant tokens on the search routes: accepted forms, and every way a token can be tampered
 * with (signature, algorithm, expiry, parent key gone or expired, widened rules).
 *
 * The `describe('search rule filters')` block needs the filter engine: until `filter` reaches
 * the engine, Quarry refuses a search whose token carries a rule filter (fail closed), so
 * those tests fail with 400 `invalid_search_filter` while the "never dropped" one passes.
 */
import { createHmac } from 'node:crypto';
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
let movies: string;
let books: string;
let parent: { uid: string; key: string };

const HASH: Record<string, string> = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' };
const b64url = (b: Buffer) => b.toString('base64url');

/** A JWT; `standard` encodes header and claims with the standard alphabet, like the JS client. */
function sign(claims: unknown, secret: string, opts: { alg?: string; standard?: boolean; header?: unknown } = {}): string {
  const alg = opts.alg ?? 'HS256';
  const enc = (v: unknown) => {
    const b = Buffer.from(JSON.stringify(v));
    return opts.standard ? b.toString('base64').replace(/=+$/, '') : b64url(b);
  };
  const head = enc(opts.header ?? { alg, typ: 'JWT' });
  const body = enc(claims);
  const sig = createHmac(HASH[alg] ?? 'sha256', secret).update(`${head}.${body}`).digest();
  return `${head}.${body}.${b64url(sig)}`;
}

async function createKey(actions: string[], indexes: string[], expiresAt: string | null = null) {
  const r = await s.api('POST', '/keys', { body: { actions, indexes, expiresAt } });
  if (r.status !== 201) throw new Error(r.text);
  return r.body as { uid: string; key: string };
}

const search = (uid: string, token: string, body: unknown = {}) => s.api('POST', `/indexes/${uid}/search`, { key: token, body });

const DOCS = [
  { id: 1, tenant: 'a', title: 'one' },
  { id: 2, tenant: 'b', title: 'two' },
  { id: 3, tenant: 'a', title: 'three' },
  { id: 4, tenant: 'c', title: 'four' },
];

beforeAll(async () => {
  s = await startTestServer();
  movies = uniqueIndex('tt_movies');
  books = uniqueIndex('tt_books');
  for (const u of [movies, books]) {
    const t = await s.api('POST', `/indexes/${u}/documents`, { body: DOCS });
    await s.waitTask(t.body.taskUid);
  }
  parent = await createKey(['search'], ['*']);
});
afterAll(async () => {
  await s.close();
});

describe('accepted tokens', () => {
  it.each([
    ['array ["*"]', ['*']],
    ['array naming the index', 'INDEX'],
    ['object with null rule', 'OBJ_NULL'],
    ['object with empty rule', 'OBJ_EMPTY'],
    ['object with {filter: null}', 'OBJ_FILTER_NULL'],
    ['object with the prefix pattern', 'PREFIX'],
  ])('when the search rules are an %s, then the search answers 200', async (_name, kind) => {
    const rules =
      kind === 'INDEX' ? [movies] : kind === 'OBJ_NULL' ? { [movies]: null } : kind === 'OBJ_EMPTY' ? { [movies]: {} } : kind === 'OBJ_FILTER_NULL' ? { [movies]: { filter: null } } : kind === 'PREFIX' ? { 'tt_movies*': null } : kind;
    const token = sign({ searchRules: rules, apiKeyUid: parent.uid }, parent.key);
    const r = await search(movies, token);
    expect(r.status).toBe(200);
    expect(r.body.hits).toHaveLength(4);
  });

  it.each(['HS256', 'HS384', 'HS512'])('when signed with %s, then accepted', async (alg) => {
    const token = sign({ searchRules: ['*'], apiKeyUid: parent.uid }, parent.key, { alg });
    expect((await search(movies, token)).status).toBe(200);
  });

  it('when header and claims use the standard base64 alphabet (JS client), then accepted', async () => {
    const token = sign({ searchRules: { [movies]: null, '*': null }, apiKeyUid: parent.uid, exp: 4102444800 }, parent.key, { standard: true });
    expect((await search(movies, token)).status).toBe(200);
  });

  it('when exp is in the future, then accepted; GET search and multi-search accept tokens too', async () => {
    const token = sign({ searchRules: ['*'], apiKeyUid: parent.uid, exp: Math.floor(Date.now() / 1000) + 3600 }, parent.key);
    expect((await search(movies, token)).status).toBe(200);
    expect((await s.api('GET', `/indexes/${movies}/search?q=one`, { key: token })).status).toBe(200);
    const ms = await s.api('POST', '/multi-search', { key: token, body: { queries: [{ indexUid: movies }, { indexUid: books }] } });
    expect(ms.status).toBe(200);
  });
});

describe('refused tokens', () => {
  const expect403 = async (token: string, uid = movies) => {
    const r = await search(uid, token);
    expect([r.status, r.body.code, r.body.type]).toEqual([403, 'invalid_api_key', 'auth']);
    return r.body.message as string;
  };

  it('when the signature is altered, then 403 "Could not decode tenant token"', async () => {
    const token = sign({ searchRules: ['*'], apiKeyUid: parent.uid }, parent.key);
    const last = token.at(-2) === 'A' ? 'B' : 'A';
    expect(await expect403(`${token.slice(0, -2)}${last}${token.at(-1)}`)).toMatch(/^Could not decode tenant token, /);
  });

  it('when the claims are altered after signing, then 403', async () => {
    const token = sign({ searchRules: [movies], apiKeyUid: parent.uid }, parent.key);
    const [h, , sig] = token.split('.');
    const widened = b64url(Buffer.from(JSON.stringify({ searchRules: ['*'], apiKeyUid: parent.uid })));
    expect(await expect403(`${h}.${widened}.${sig}`, books)).toMatch(/^Could not decode tenant token, /);
  });

  it.each([
    ['the master key', 'MASTER'],
    ['the key uid', 'UID'],
    ['another key', 'OTHER'],
  ])('when signed with %s instead of the parent key, then 403', async (_n, which) => {
    const other = await createKey(['search'], ['*']);
    const secret = which === 'MASTER' ? 'test-master-key-0123456789' : which === 'UID' ? parent.uid : other.key;
    await expect403(sign({ searchRules: ['*'], apiKeyUid: parent.uid }, secret));
  });

  it.each([
    ['none, unsigned', { alg: 'none', typ: 'JWT' }, ''],
    ['none, signed', { alg: 'none', typ: 'JWT' }, 'SIGNED'],
    ['RS256', { alg: 'RS256', typ: 'JWT' }, 'SIGNED'],
    ['missing', { typ: 'JWT' }, 'SIGNED'],
    ['lowercase hs256', { alg: 'hs256', typ: 'JWT' }, 'SIGNED'],
  ])('when the algorithm is %s, then 403', async (_n, header, sig) => {
    const token = sign({ searchRules: ['*'], apiKeyUid: parent.uid }, parent.key, { header });
    const [h, c] = token.split('.');
    await expect403(sig === '' ? `${h}.${c}.` : token);
  });

  it('when the token expired, then 403 with the expiry message', async () => {
    const token = sign({ searchRules: ['*'], apiKeyUid: parent.uid, exp: Math.floor(Date.now() / 1000) - 10 }, parent.key);
    expect(await expect403(token)).toMatch(/^Tenant token expired\. Was valid up to `\d+` and we're now `\d+`\.$/);
  });

  it('when the parent key was deleted, then 403 "The provided API key is invalid."', async () => {
    const k = await createKey(['search'], ['*']);
    const token = sign({ searchRules: ['*'], apiKeyUid: k.uid }, k.key);
    expect((await search(movies, token)).status).toBe(200);
    expect((await s.api('DELETE', `/keys/${k.uid}`)).status).toBe(204);
    expect(await expect403(token)).toBe('The provided API key is invalid.');
  });

  it('when the parent key expired, then 403', async () => {
    const k = await createKey(['search'], ['*'], new Date(Date.now() + 1200).toISOString());
    const token = sign({ searchRules: ['*'], apiKeyUid: k.uid }, k.key);
    expect((await search(movies, token)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1400));
    await expect403(token);
  });

  it('when the parent key lacks the search action, then 403', async () => {
    const k = await createKey(['documents.get', 'indexes.get'], ['*']);
    await expect403(sign({ searchRules: ['*'], apiKeyUid: k.uid }, k.key));
  });

  it('when the rules are wider than the parent key, then only the key indexes are reachable', async () => {
    const k = await createKey(['search'], [movies]);
    const token = sign({ searchRules: ['*'], apiKeyUid: k.uid }, k.key);
    expect((await search(movies, token)).status).toBe(200);
    expect(await expect403(token, books)).toBe(`The API key used to generate this tenant token cannot acces the index \`${books}\`.`);
    const ms = await s.api('POST', '/multi-search', { key: token, body: { queries: [{ indexUid: movies }, { indexUid: books }] } });
    expect([ms.status, ms.body.code]).toEqual([403, 'invalid_api_key']);
    expect(ms.body.message).toMatch(/^Inside `\.queries\[1\]`: /);
  });

  it('when the rules do not cover the index, then 403 naming the allowed patterns', async () => {
    expect(await expect403(sign({ searchRules: { misc: null }, apiKeyUid: parent.uid }, parent.key))).toBe(
      `The provided tenant token cannot acces the index \`${movies}\`, allowed indexes are ["misc"].`,
    );
    await expect403(sign({ searchRules: [], apiKeyUid: parent.uid }, parent.key));
    await expect403(sign({ searchRules: {}, apiKeyUid: parent.uid }, parent.key));
  });

  it.each([
    ['a suffix pattern', { searchRules: ['*_movies'] }],
    ['a rule that is a string', { searchRules: { '*': 'id = 1' } }],
    ['searchRules missing', {}],
    ['searchRules a string', { searchRules: '*' }],
    ['apiKeyUid not a uuid', { searchRules: ['*'], apiKeyUid: 'abc' }],
    ['exp a string', { searchRules: ['*'], exp: 'soon' }],
  ])('when the claims hold %s, then 403', async (_n, claims) => {
    await expect403(sign({ apiKeyUid: parent.uid, ...claims }, parent.key));
  });

  it('when the token names an unknown key uid, then 403 "The provided API key is invalid."', async () => {
    expect(await expect403(sign({ searchRules: ['*'], apiKeyUid: '00000000-0000-4000-8000-000000000000' }, parent.key))).toBe('The provided API key is invalid.');
  });

  it.each([
    ['GET', () => `/indexes/${movies}/documents`],
    ['GET', () => `/indexes/${movies}`],
    ['GET', () => '/indexes'],
    ['GET', () => '/tasks'],
    ['GET', () => `/indexes/${movies}/settings`],
  ])('when a valid token is used on %s %s (not a search route), then 403', async (method, path) => {
    const admin = await createKey(['*'], ['*']);
    const token = sign({ searchRules: ['*'], apiKeyUid: admin.uid }, admin.key);
    const r = await s.api(method, path(), { key: token });
    expect([r.status, r.body.code]).toEqual([403, 'invalid_api_key']);
  });
});

describe('search rule filters', () => {
  beforeAll(async () => {
    for (const u of [movies, books]) {
      const t = await s.api('PUT', `/indexes/${u}/settings/filterable-attributes`, { body: ['tenant', 'id'] });
      await s.waitTask(t.body.taskUid);
    }
  });

  const ids = (r: { body: any }) => r.body.hits.map((h: any) => h.id).sort();

  // Independent of the filter engine: a rule filter must never be ignored.
  it('when a token carries a rule filter, then no hit outside the filter is ever returned', async () => {
    const token = sign({ searchRules: { [movies]: { filter: 'tenant = a' } }, apiKeyUid: parent.uid }, parent.key);
    for (const r of [await search(movies, token), await s.api('GET', `/indexes/${movies}/search`, { key: token })]) {
      if (r.status === 200) expect(r.body.hits.every((h: any) => h.tenant === 'a')).toBe(true);
      else expect(r.status).toBeGreaterThanOrEqual(400);
    }
    const ms = await s.api('POST', '/multi-search', { key: token, body: { queries: [{ indexUid: movies }] } });
    if (ms.status === 200) expect(ms.body.results[0].hits.every((h: any) => h.tenant === 'a')).toBe(true);
  });

  // The tests below need the filter engine.
  it('[filters] when the rule filter is a string, then only matching documents are found', async () => {
    const token = sign({ searchRules: { [movies]: { filter: 'tenant = a' } }, apiKeyUid: parent.uid }, parent.key);
    const r = await search(movies, token);
    expect(r.status).toBe(200);
    expect(ids(r)).toEqual([1, 3]);
  });

  it('[filters] when the query has its own filter, then both apply (AND)', async () => {
    const token = sign({ searchRules: { [movies]: { filter: 'tenant = a' } }, apiKeyUid: parent.uid }, parent.key);
    expect(ids(await search(movies, token, { filter: 'id > 1' }))).toEqual([3]);
    expect(ids(await search(movies, token, { filter: ['id > 1'] }))).toEqual([3]);
    expect(ids(await search(movies, token, { filter: 'id = 2 OR id = 3' }))).toEqual([3]);
    expect(ids(await search(movies, token, { filter: [['id = 2', 'id = 1']] }))).toEqual([1]);
  });

  it('[filters] when the rule filter is the array form, then it is ANDed as well', async () => {
    const token = sign({ searchRules: { [movies]: { filter: [['tenant = a', 'tenant = c'], 'id > 1'] } }, apiKeyUid: parent.uid }, parent.key);
    expect(ids(await search(movies, token))).toEqual([3, 4]);
    expect(ids(await search(movies, token, { filter: 'tenant = c' }))).toEqual([4]);
  });

  it('[filters] when several patterns match, then the most specific rule applies', async () => {
    const token = sign({ searchRules: { '*': { filter: 'tenant = b' }, [movies]: { filter: 'tenant = c' } }, apiKeyUid: parent.uid }, parent.key);
    expect(ids(await search(movies, token))).toEqual([4]);
    expect(ids(await search(books, token))).toEqual([2]);
  });

  it('[filters] when multi-searching and on GET search, then each query gets its index rule', async () => {
    const token = sign({ searchRules: { [movies]: { filter: 'tenant = a' }, [books]: null }, apiKeyUid: parent.uid }, parent.key);
    const ms = await s.api('POST', '/multi-search', { key: token, body: { queries: [{ indexUid: movies }, { indexUid: books }] } });
    expect(ms.status).toBe(200);
    expect(ms.body.results[0].hits.map((h: any) => h.id).sort()).toEqual([1, 3]);
    expect(ms.body.results[1].hits).toHaveLength(4);
    const get = await s.api('GET', `/indexes/${movies}/search?filter=${encodeURIComponent('id = 3 OR id = 2')}`, { key: token });
    expect(ids(get)).toEqual([3]);
  });
});
