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
function sign(
  claims: unknown,
  secret: string,
  opts: { alg?: string; standard?: boolean; header?: unknown } = {},
): string {
  const alg = opts.alg ?? 'HS256';
  const enc = (v: unknown) => {
    const b = Buffer.from(JSON.stringify(v));
    return opts.standard ? b.toString('base64').replace(/=+$/, '') : b64url(b);
  };
  const head = enc(opts.header ?? { alg, typ: 'JWT' });
  const body = enc(claims);
  const sig = createHmac(HASH[alg] ?? 'sha256', secret)
    .update(`${head}.${body}`)
    .digest();
  return `${head}.${body}.${b64url(sig)}`;
}

async function createKey(actions: string[], indexes: string[], expiresAt: string | null = null) {
  const r = await s.api('POST', '/keys', { body: { actions, indexes, expiresAt } });
  if (r.status !== 201) throw new Error(r.text);
  return r.body as { uid: string; key: string };
}

const search = (uid: string, token: string, body: unknown = {}) =>
  s.api('POST', `/indexes/${uid}/search`, { key: token, body });

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
      kind === 'INDEX'
        ? [movies]
        : kind === 'OBJ_NULL'
          ? { [movies]: null }
          : kind === 'OBJ_EMPTY'
            ? { [movies]: {} }
            : kind === 'OBJ_FILTER_NULL'
              ? { [movies]: { filter: null } }
              : kind === 'PREFIX'
                ? { 'tt_movies*': null }
                : kind;
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
    const token = sign(
      { searchRules: { [movies]: null, '*': null }, apiKeyUid: parent.uid, exp: 4102444800 },
      parent.key,
      { standard: true },
    );
    expect((await search(movies, token)).status).toBe(200);
  });

  it('when exp is in the future, then accepted; GET search and multi-search accept tokens too', async () => {
    const token = sign(
      { searchRules: ['*'], apiKeyUid: parent.uid, exp: Math.floor(Date.now() / 1000) + 3600 },
      parent.key,
    );
    expect((await search(movies, token)).status).toBe(200);
    expect((await s.api('GET', `/indexes/${movies}/search?q=one`, { key: token })).status).toBe(200);
    const ms = await s.api('POST', '/multi-search', {
      key: token,
      body: { queries: [{ indexUid: movies }, { indexUid: books }] },
    });
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
    const token = sign(
      { searchRules: ['*'], apiKeyUid: parent.uid, exp: Math.floor(Date.now() / 1000) - 10 },
      parent.key,
    );
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
    expect(await expect403(token, books)).toBe(
      `The API key used to generate this tenant token cannot acces the index \`${books}\`.`,
    );
    const ms = await s.api('POST', '/multi-search', {
      key: token,
      body: { queries: [{ indexUid: movies }, { indexUid: books }] },
    });
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

  // A key's value derives from its uid, so a token naming a uid no key has cannot carry its
  // signature: Meilisearch answers InvalidSignature, and "invalid API key" once the key is gone.
  it('when the token names an unknown key uid, then 403 "Could not decode tenant token, InvalidSignature."', async () => {
    expect(
      await expect403(sign({ searchRules: ['*'], apiKeyUid: '00000000-0000-4000-8000-000000000000' }, parent.key)),
    ).toBe('Could not decode tenant token, InvalidSignature.');
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

/** A token whose claims are `claims` as written (not re-serialized). */
function signText(claims: string, secret: string, header: unknown = { alg: 'HS256', typ: 'JWT' }): string {
  const head = b64url(Buffer.from(JSON.stringify(header)));
  const body = b64url(Buffer.from(claims));
  return `${head}.${body}.${b64url(createHmac('sha256', secret).update(`${head}.${body}`).digest())}`;
}

// r68: what Meilisearch 1.50 answered to the same tokens (its column numbers count the bytes of
// the claims as signed here: a key uid is always 36 characters).
describe('r68: tokens Meilisearch accepts, and the reason it gives for the others', () => {
  const refusal = (reason: string) => ({
    message: `Could not decode tenant token, ${reason}.`,
    code: 'invalid_api_key',
    type: 'auth',
    link: 'https://docs.meilisearch.com/errors#invalid_api_key',
  });
  const uid = () => parent.uid;
  const now = () => Math.floor(Date.now() / 1000);

  it.each([
    ['"exp": null (the Python client, no expiry)', () => `{"apiKeyUid":"${uid()}","searchRules":["*"],"exp":null}`],
    ['"exp": null, written with blanks', () => `{"searchRules": ["*"], "apiKeyUid": "${uid()}", "exp": null}`],
    ['no exp', () => `{"searchRules":["*"],"apiKeyUid":"${uid()}"}`],
    ['exp the i64 maximum', () => `{"searchRules":["*"],"apiKeyUid":"${uid()}","exp":9223372036854775807}`],
    [
      'nbf in the future, iat a string, aud a number',
      () => `{"searchRules":["*"],"apiKeyUid":"${uid()}","nbf":${now() + 3600},"iat":"x","aud":5}`,
    ],
    [
      'apiKeyUid in capitals, without hyphens',
      () => `{"searchRules":["*"],"apiKeyUid":"${uid().replace(/-/g, '').toUpperCase()}"}`,
    ],
    ['apiKeyUid braced', () => `{"searchRules":["*"],"apiKeyUid":"{${uid()}}"}`],
    ['a rule with other fields than filter', () => `{"searchRules":{"*":{"foo":5}},"apiKeyUid":"${uid()}"}`],
  ])('when the claims hold %s, then the search answers 200', async (_name, claims) => {
    const r = await search(movies, signText(claims(), parent.key));
    expect([r.status, r.body.hits?.length]).toEqual([200, 4]);
  });

  it('when the header names an unknown crit extension or a typ of null, then accepted', async () => {
    for (const header of [
      { alg: 'HS256', crit: ['exp'] },
      { alg: 'HS256', typ: null, kid: 'k' },
    ]) {
      expect(
        (await search(movies, signText(`{"searchRules":["*"],"apiKeyUid":"${uid()}"}`, parent.key, header))).status,
      ).toBe(200);
    }
  });

  it('when exp is past, then the expiry is the reason, with both instants', async () => {
    const r = await search(movies, signText(`{"searchRules":["*"],"apiKeyUid":"${uid()}","exp":-5}`, parent.key));
    expect([r.status, r.body.message]).toEqual([
      403,
      expect.stringMatching(/^Tenant token expired\. Was valid up to `-5` and we're now `\d+`\.$/),
    ]);
  });

  it.each([
    [
      'exp a string',
      () => `{"searchRules":["*"],"apiKeyUid":"${uid()}","exp":"soon"}`,
      'JSON error: invalid type: string "soon", expected i64 at line 1 column 84',
    ],
    [
      'exp a float',
      () => `{"searchRules":["*"],"apiKeyUid":"${uid()}","exp":1700000000.0}`,
      'JSON error: invalid type: floating point `1700000000.0`, expected i64 at line 1 column 90',
    ],
    [
      'exp a boolean',
      () => `{"searchRules":["*"],"apiKeyUid":"${uid()}","exp":true}`,
      'JSON error: invalid type: boolean `true`, expected i64 at line 1 column 82',
    ],
    [
      'exp an object',
      () => `{"searchRules":["*"],"apiKeyUid":"${uid()}","exp":{}}`,
      'JSON error: invalid type: map, expected i64 at line 1 column 78',
    ],
    [
      'exp over the i64 range',
      () => `{"searchRules":["*"],"apiKeyUid":"${uid()}","exp":10000000000000000000}`,
      'JSON error: invalid value: integer `10000000000000000000`, expected i64 at line 1 column 98',
    ],
    [
      'exp a string on the second line',
      () => `{ "searchRules" : ["*"],\n "apiKeyUid" : "${uid()}", "exp" : "x" }`,
      'JSON error: invalid type: string "x", expected i64 at line 2 column 66',
    ],
    ['no searchRules', () => `{"apiKeyUid":"${uid()}"}`, 'JSON error: missing field `searchRules` at line 1 column 52'],
    ['no claim at all', () => '{"foo":1}', 'JSON error: missing field `searchRules` at line 1 column 9'],
    ['no apiKeyUid', () => '{"searchRules":["*"]}', 'JSON error: missing field `apiKeyUid` at line 1 column 21'],
    [
      'searchRules null',
      () => `{"searchRules":null,"apiKeyUid":"${uid()}"}`,
      'JSON error: data did not match any variant of untagged enum SearchRules at line 1 column 19',
    ],
    [
      'searchRules last and a number',
      () => `{"apiKeyUid":"${uid()}","searchRules":5 }`,
      'JSON error: data did not match any variant of untagged enum SearchRules at line 1 column 69',
    ],
    [
      'a rule that is a string',
      () => `{"searchRules":{"*":"id = 1"},"apiKeyUid":"${uid()}"}`,
      'JSON error: data did not match any variant of untagged enum SearchRules at line 1 column 29',
    ],
    [
      'searchRules twice',
      () => `{"searchRules":["*"],"searchRules":["*"],"apiKeyUid":"${uid()}"}`,
      'JSON error: duplicate field `searchRules` at line 1 column 34',
    ],
    [
      'apiKeyUid too short',
      () => '{"searchRules":["*"],"apiKeyUid":"abc"}',
      'JSON error: UUID parsing failed: invalid length: found 3 at line 1 column 38',
    ],
    [
      'apiKeyUid with a bad character',
      () => `{"searchRules":["*"],"apiKeyUid":"z${uid().slice(1)}"}`,
      'JSON error: UUID parsing failed: invalid character: found `z` at 0 at line 1 column 71',
    ],
    [
      'apiKeyUid with a short last group',
      () => `{"searchRules":["*"],"apiKeyUid":"${uid().slice(0, -1)}"}`,
      'JSON error: UUID parsing failed: invalid group length in group 4: expected 12, found 11 at line 1 column 70',
    ],
    [
      'apiKeyUid a number',
      () => '{"searchRules":["*"],"apiKeyUid":5}',
      'JSON error: invalid type: integer `5`, expected a formatted UUID string at line 1 column 34',
    ],
    ['claims that are not JSON', () => 'notjson', 'JSON error: expected ident at line 1 column 2'],
    ['claims with a trailing comma', () => '{"searchRules":["*"],}', 'JSON error: trailing comma at line 1 column 22'],
    ['claims cut short', () => '{"searchRules":["*"]', 'JSON error: EOF while parsing an object at line 1 column 20'],
    ['claims null', () => 'null', 'JSON error: invalid type: null, expected struct Claims at line 1 column 4'],
    ['an audience', () => `{"searchRules":["*"],"apiKeyUid":"${uid()}","aud":"x"}`, 'InvalidAudience'],
  ])("when the claims hold %s, then 403 with Meilisearch's reason", async (_name, claims, reason) => {
    const r = await search(movies, signText(claims(), parent.key));
    expect([r.status, r.body]).toEqual([403, refusal(reason)]);
  });

  it.each([
    [
      'the signature of another key',
      () => signText(`{"searchRules":["*"],"apiKeyUid":"${uid()}","exp":null}`, 'another secret'),
      'InvalidSignature',
    ],
    [
      'an expired token with a bad signature',
      () => signText(`{"searchRules":["*"],"apiKeyUid":"${uid()}","exp":1}`, 'another secret'),
      'InvalidSignature',
    ],
    [
      'a bad exp and a bad signature',
      () => signText(`{"searchRules":["*"],"apiKeyUid":"${uid()}","exp":"soon"}`, 'x'),
      'JSON error: invalid type: string "soon", expected i64 at line 1 column 84',
    ],
    [
      'alg none',
      () => signText(`{"searchRules":["*"],"apiKeyUid":"${uid()}"}`, parent.key, { alg: 'none', typ: 'JWT' }),
      'JSON error: unknown variant `none`, expected one of `HS256`, `HS384`, `HS512`, `ES256`, `ES384`, `RS256`, `RS384`, `RS512`, `PS256`, `PS384`, `PS512`, `EdDSA` at line 1 column 13',
    ],
    [
      'alg RS256',
      () => signText(`{"searchRules":["*"],"apiKeyUid":"${uid()}"}`, parent.key, { alg: 'RS256', typ: 'JWT' }),
      'InvalidAlgorithm',
    ],
    [
      'no alg',
      () => signText(`{"searchRules":["*"],"apiKeyUid":"${uid()}"}`, parent.key, { typ: 'JWT' }),
      'JSON error: missing field `alg` at line 1 column 13',
    ],
    [
      'a header field that is not a string',
      () => signText('{}', parent.key, { x: 5, alg: 'HS256' }),
      'JSON error: invalid type: integer `5`, expected a string at line 1 column 21',
    ],
    ['three parts that are not base64 JSON', () => 'abc.def.ghi', 'JSON error: expected value at line 1 column 1'],
    [
      'a signature that is not base64',
      () => `${signText(`{"searchRules":["*"],"apiKeyUid":"${uid()}"}`, parent.key).replace(/\.[^.]*$/, '.!')}`,
      'Base64 error: Invalid symbol 33, offset 0.',
    ],
    [
      'padded base64',
      () => `${signText(`{"searchRules":["*"],"apiKeyUid":"${uid()}"}`, parent.key)}=`,
      'Base64 error: Invalid padding',
    ],
    [
      'four parts',
      () => `${signText(`{"searchRules":["*"],"apiKeyUid":"${uid()}"}`, parent.key)}.x`,
      'Base64 error: Invalid symbol 46, offset 36.',
    ],
    ['empty parts', () => '..', 'JSON error: EOF while parsing a value at line 1 column 0'],
  ])("when the token has %s, then 403 with Meilisearch's reason", async (_name, token, reason) => {
    const r = await search(movies, token());
    expect([r.status, r.body]).toEqual([403, refusal(reason)]);
  });

  it('when the parent key was deleted, then a token it signed is an invalid API key, whatever its exp', async () => {
    const k = await createKey(['search'], ['*']);
    const token = signText(`{"searchRules":["*"],"apiKeyUid":"${k.uid}","exp":null}`, k.key);
    expect((await search(movies, token)).status).toBe(200);
    expect((await s.api('DELETE', `/keys/${k.uid}`)).status).toBe(204);
    expect((await search(movies, token)).body.message).toBe('The provided API key is invalid.');
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
    const token = sign(
      { searchRules: { [movies]: { filter: [['tenant = a', 'tenant = c'], 'id > 1'] } }, apiKeyUid: parent.uid },
      parent.key,
    );
    expect(ids(await search(movies, token))).toEqual([3, 4]);
    expect(ids(await search(movies, token, { filter: 'tenant = c' }))).toEqual([4]);
  });

  it('[filters] when several patterns match, then the most specific rule applies', async () => {
    const token = sign(
      { searchRules: { '*': { filter: 'tenant = b' }, [movies]: { filter: 'tenant = c' } }, apiKeyUid: parent.uid },
      parent.key,
    );
    expect(ids(await search(movies, token))).toEqual([4]);
    expect(ids(await search(books, token))).toEqual([2]);
  });

  it('[filters] when multi-searching and on GET search, then each query gets its index rule', async () => {
    const token = sign(
      { searchRules: { [movies]: { filter: 'tenant = a' }, [books]: null }, apiKeyUid: parent.uid },
      parent.key,
    );
    const ms = await s.api('POST', '/multi-search', {
      key: token,
      body: { queries: [{ indexUid: movies }, { indexUid: books }] },
    });
    expect(ms.status).toBe(200);
    expect(ms.body.results[0].hits.map((h: any) => h.id).sort()).toEqual([1, 3]);
    expect(ms.body.results[1].hits).toHaveLength(4);
    const get = await s.api('GET', `/indexes/${movies}/search?filter=${encodeURIComponent('id = 3 OR id = 2')}`, {
      key: token,
    });
    expect(ids(get)).toEqual([3]);
  });
});
