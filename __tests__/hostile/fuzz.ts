/**
 * A seeded generator of hostile HTTP requests over every route family: one generator per
 * family (weighted), built from the values in `fuzz-values.ts` and the HTTP pieces in
 * `fuzz-http.ts` (which also holds the client that sends them).
 *
 * Everything is driven by one PRNG (mulberry32): the same seed gives the same list of
 * requests, whatever the order in which their answers come back.
 *
 * Safety contract with the test that uses it: requests that change data (document writes,
 * settings updates, index deletion, renames, swaps) only ever name `ctx.writeUids` or hostile
 * uids; `ctx.protectedUid` appears only in reads (search, documents, settings GET...), and in
 * traversal attempts such as `<writeUid>/../<protectedUid>` that a correct server must refuse.
 * The test checks afterwards that the protected index did not change.
 */
import {
  ATTRIBUTES,
  attrList,
  filterValue,
  hostileNumber,
  hostileString,
  hostileValue,
  maybe,
  randomFilter,
  type Rng,
  uuid,
} from './fuzz-values';
import {
  authHeader,
  bodyHeaders,
  type FuzzContext,
  type FuzzRequest,
  hostileDocId,
  hostileUid,
  listStr,
  numStr,
  queryString,
  rawBody,
  readUid,
  writeUid,
} from './fuzz-http';

export { Rng, hostileString, hostileNumber, hostileValue, randomFilter, uuid } from './fuzz-values';
export {
  closeClient,
  describeRequest,
  type FuzzContext,
  type FuzzRequest,
  type FuzzResponse,
  hostileToken,
  hostileUid,
  isErrorObject,
  rawBody,
  send,
} from './fuzz-http';

// ---------------------------------------------------------------- routes

const SETTINGS = [
  ['filterable-attributes', 'filterableAttributes', 'put'],
  ['sortable-attributes', 'sortableAttributes', 'put'],
  ['displayed-attributes', 'displayedAttributes', 'put'],
  ['typo-tolerance', 'typoTolerance', 'patch'],
  ['searchable-attributes', 'searchableAttributes', 'put'],
  ['stop-words', 'stopWords', 'put'],
  ['non-separator-tokens', 'nonSeparatorTokens', 'put'],
  ['separator-tokens', 'separatorTokens', 'put'],
  ['dictionary', 'dictionary', 'put'],
  ['synonyms', 'synonyms', 'put'],
  ['distinct-attribute', 'distinctAttribute', 'put'],
  ['proximity-precision', 'proximityPrecision', 'put'],
  ['localized-attributes', 'localizedAttributes', 'put'],
  ['ranking-rules', 'rankingRules', 'put'],
  ['faceting', 'faceting', 'patch'],
  ['pagination', 'pagination', 'patch'],
  ['embedders', 'embedders', 'patch'],
  ['search-cutoff-ms', 'searchCutoffMs', 'put'],
  ['facet-search', 'facetSearch', 'put'],
  ['prefix-search', 'prefixSearch', 'put'],
  ['chat', 'chat', 'patch'],
  ['foreign-keys', 'foreignKeys', 'put'],
] as const;

function settingValue(rng: Rng, field: string): unknown {
  switch (field) {
    case 'filterableAttributes':
      return maybe(rng, () =>
        rng.chance(0.7)
          ? attrList(rng)
          : [
              {
                attributePatterns: attrList(rng),
                features: {
                  facetSearch: hostileValue(rng),
                  filter: { equality: hostileValue(rng), comparison: rng.chance(0.5) },
                },
              },
            ],
      );
    case 'sortableAttributes':
    case 'displayedAttributes':
    case 'searchableAttributes':
    case 'stopWords':
    case 'nonSeparatorTokens':
    case 'separatorTokens':
    case 'dictionary':
      return maybe(rng, () =>
        Array.from({ length: rng.int(0, 5) }, () => (rng.chance(0.5) ? rng.pick(ATTRIBUTES) : hostileString(rng))),
      );
    case 'rankingRules':
      return maybe(rng, () =>
        Array.from({ length: rng.int(0, 6) }, () =>
          rng.pick([
            'words',
            'typo',
            'proximity',
            'attribute',
            'sort',
            'exactness',
            'attributeRank',
            'wordPosition',
            'year:asc',
            'title:desc',
            'year:up',
            ':asc',
            'asc(year)',
            hostileString(rng),
          ]),
        ),
      );
    case 'typoTolerance':
      return maybe(rng, () => ({
        enabled: maybe(rng, () => rng.chance(0.5)),
        minWordSizeForTypos: maybe(rng, () => ({ oneTypo: hostileNumber(rng), twoTypos: hostileNumber(rng) })),
        disableOnWords: maybe(rng, () => attrList(rng)),
        disableOnAttributes: maybe(rng, () => attrList(rng)),
        disableOnNumbers: maybe(rng, () => true),
      }));
    case 'synonyms':
      return maybe(rng, () =>
        Object.fromEntries(
          Array.from({ length: rng.int(0, 4) }, () => [hostileString(rng), maybe(rng, () => attrList(rng))]),
        ),
      );
    case 'distinctAttribute':
      return maybe(rng, () => rng.pick(ATTRIBUTES));
    case 'proximityPrecision':
      return maybe(rng, () => rng.pick(['byWord', 'byAttribute', 'byLetter', '']));
    case 'localizedAttributes':
      return maybe(rng, () => [
        {
          attributePatterns: attrList(rng),
          locales: maybe(rng, () => [rng.pick(['eng', 'fra', 'jpn', 'xx', 'zh-TW', ''])]),
        },
      ]);
    case 'faceting':
      return maybe(rng, () => ({
        maxValuesPerFacet: hostileNumber(rng),
        sortFacetValuesBy: maybe(rng, () => ({ '*': rng.pick(['alpha', 'count', 'random']) })),
      }));
    case 'pagination':
      return maybe(rng, () => ({ maxTotalHits: hostileNumber(rng) }));
    case 'embedders':
      return maybe(rng, () => ({
        [rng.pick(['default', '', 'x'.repeat(300)])]: maybe(rng, () => ({
          source: 'userProvided',
          dimensions: hostileNumber(rng),
        })),
      }));
    case 'searchCutoffMs':
      return maybe(rng, () => hostileNumber(rng));
    case 'facetSearch':
    case 'prefixSearch':
      return maybe(rng, () => rng.pick([true, false, 'indexingTime', 'disabled']));
    default:
      return hostileValue(rng);
  }
}

function settingsBody(rng: Rng): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (let i = rng.int(0, 4); i > 0; i--) {
    const [, field] = rng.pick(SETTINGS);
    o[field] = settingValue(rng, field);
  }
  if (rng.chance(0.15)) o[hostileString(rng)] = hostileValue(rng);
  return o;
}

function searchBody(rng: Rng): Record<string, unknown> {
  const gens: Record<string, () => unknown> = {
    q: () =>
      maybe(rng, () => rng.pick(['carol', 'wonder drama', '"quoted phrase"', '-negated', 'a', '', hostileString(rng)])),
    offset: () => maybe(rng, () => rng.pick([0, 1, 9007199254740991, 1e9, -1, 2 ** 32])),
    limit: () => maybe(rng, () => rng.pick([0, 1, 20, 1e9, 9007199254740991, -1, 2 ** 32])),
    page: () => maybe(rng, () => rng.pick([0, 1, 2, 1e9, 9007199254740991, -1])),
    hitsPerPage: () => maybe(rng, () => rng.pick([0, 1, 20, 1e9, 9007199254740991, -1])),
    filter: () => filterValue(rng),
    sort: () =>
      maybe(rng, () =>
        Array.from({ length: rng.int(0, 3) }, () =>
          rng.pick([
            'year:asc',
            'title:desc',
            'year',
            ':asc',
            'year:up',
            '_geoPoint(45.4, 9.1):asc',
            '_geoPoint(1):asc',
            '_geoPoint(999, 999):desc',
            `${hostileString(rng)}:asc`,
          ]),
        ),
      ),
    facets: () => maybe(rng, () => attrList(rng)),
    attributesToRetrieve: () => maybe(rng, () => attrList(rng)),
    attributesToHighlight: () => maybe(rng, () => attrList(rng)),
    attributesToCrop: () =>
      maybe(rng, () =>
        attrList(rng).map((a) => (rng.chance(0.3) ? `${a}:${rng.pick(['5', '0', '-1', '1e9', 'x', ''])}` : a)),
      ),
    cropLength: () => maybe(rng, () => rng.pick([0, 1, 10, 1e9, -1, 65536])),
    cropMarker: () => maybe(rng, () => hostileString(rng)),
    highlightPreTag: () => maybe(rng, () => hostileString(rng)),
    highlightPostTag: () => maybe(rng, () => hostileString(rng)),
    showMatchesPosition: () => maybe(rng, () => true),
    showRankingScore: () => maybe(rng, () => true),
    showRankingScoreDetails: () => maybe(rng, () => true),
    matchingStrategy: () => maybe(rng, () => rng.pick(['last', 'all', 'frequency', 'first'])),
    attributesToSearchOn: () => maybe(rng, () => attrList(rng)),
    rankingScoreThreshold: () => maybe(rng, () => rng.pick([0, 0.5, 1, 1.01, -0.1])),
    distinct: () => maybe(rng, () => rng.pick(ATTRIBUTES)),
    locales: () => maybe(rng, () => [rng.pick(['eng', 'fra', 'xx', ''])]),
    vector: () => maybe(rng, () => Array.from({ length: rng.int(0, 4) }, () => hostileNumber(rng))),
    hybrid: () =>
      maybe(rng, () => ({ embedder: rng.pick(['default', '', 'none']), semanticRatio: hostileNumber(rng) })),
    retrieveVectors: () => maybe(rng, () => true),
  };
  const o: Record<string, unknown> = {};
  const names = Object.keys(gens);
  for (let i = rng.int(0, 6); i > 0; i--) {
    const k = rng.pick(names);
    o[k] = gens[k]();
  }
  if (rng.chance(0.1)) o[hostileString(rng)] = hostileValue(rng);
  return o;
}

function searchParams(rng: Rng): Record<string, () => string> {
  return {
    q: () => hostileString(rng),
    offset: () => numStr(rng),
    limit: () => numStr(rng),
    page: () => numStr(rng),
    hitsPerPage: () => numStr(rng),
    filter: () => randomFilter(rng),
    sort: () => rng.pick(['year:asc', 'title:desc,year:asc', ':asc', '_geoPoint(1,2):asc', hostileString(rng)]),
    facets: () => listStr(rng),
    attributesToRetrieve: () => listStr(rng),
    attributesToHighlight: () => listStr(rng),
    attributesToCrop: () => listStr(rng),
    cropLength: () => numStr(rng),
    showRankingScore: () => rng.pick(['true', 'false', 'yes', '1', '']),
    matchingStrategy: () => rng.pick(['last', 'all', 'x']),
    rankingScoreThreshold: () => numStr(rng),
    vector: () => rng.pick(['1,2', 'a,b', '', '1e400']),
    hybrid: () => hostileString(rng),
  };
}

function documents(rng: Rng): unknown {
  const n = rng.chance(0.05) ? rng.int(100, 600) : rng.int(0, 6);
  return Array.from({ length: n }, () => {
    const d: Record<string, unknown> = {};
    d.id = rng.chance(0.7)
      ? rng.int(0, 50)
      : rng.pick<unknown>([
          'a-b_c',
          '',
          '../x',
          'a b',
          '%2e%2e',
          'é',
          'x'.repeat(600),
          1.5,
          -1,
          2 ** 53, // past the safe integers
          1e21,
          null,
          true,
          [],
          {},
          '\u0000',
        ]);
    if (rng.chance(0.1)) delete d.id;
    for (let i = rng.int(0, 4); i > 0; i--)
      d[rng.chance(0.6) ? rng.pick(ATTRIBUTES) : hostileString(rng)] = hostileValue(rng, n > 10 ? 1 : 3);
    if (rng.chance(0.1)) d._geo = maybe(rng, () => ({ lat: hostileNumber(rng), lng: hostileNumber(rng) }));
    if (rng.chance(0.05)) d._vectors = hostileValue(rng);
    return d;
  });
}

function documentsPayload(rng: Rng): { body: Buffer; contentType?: string } {
  const x = rng.float();
  const docs = maybe(rng, () => documents(rng));
  if (x < 0.75) return { body: rawBody(rng, docs) };
  if (x < 0.87) {
    const lines = Array.isArray(docs) ? docs.map((d) => JSON.stringify(d)).join('\n') : (JSON.stringify(docs) ?? '');
    return { body: Buffer.from(rng.chance(0.8) ? lines : `${lines}\n{"id":`), contentType: 'application/x-ndjson' };
  }
  const csv = rng.pick([
    'id,title\n1,a\n2,b',
    'id:number,year:number\n1,x\n',
    'id\n"unterminated',
    '',
    'a,b,c\n1,2',
    `id,t\n${'x'.repeat(2000)},1`,
    'id;title\n1;a',
    '\uFEFFid,title\n3,c',
    'id,id\n1,2',
  ]);
  return { body: Buffer.from(csv), contentType: 'text/csv' };
}

function taskParams(rng: Rng): Record<string, () => string> {
  const date = () =>
    rng.pick([
      '2020-01-01',
      '2020-13-45',
      '2020-01-01T00:00:00Z',
      '9999-12-31T23:59:59Z',
      '0000-00-00',
      '1e400',
      '-1',
      'now',
      '2024-02-30',
      '',
      hostileString(rng),
    ]);
  const uids = () => Array.from({ length: rng.int(1, 4) }, () => numStr(rng)).join(',');
  return {
    uids,
    batchUids: uids,
    canceledBy: uids,
    types: () =>
      rng.pick([
        'documentAdditionOrUpdate',
        'settingsUpdate,indexDeletion',
        'taskCancelation',
        'dumpCreation',
        'x',
        '*',
        '',
      ]),
    statuses: () =>
      rng.pick(['enqueued', 'processing', 'succeeded', 'failed', 'canceled', 'enqueued,failed', 'x', '*', '']),
    indexUids: () => rng.pick(['*', 'a,b', '', '%zz', '..', 'x'.repeat(600)]),
    limit: () => numStr(rng),
    from: () => numStr(rng),
    reverse: () => rng.pick(['true', 'false', 'x', '']),
    afterEnqueuedAt: date,
    beforeEnqueuedAt: date,
    afterStartedAt: date,
    beforeStartedAt: date,
    afterFinishedAt: date,
    beforeFinishedAt: date,
  };
}

type Gen = (
  rng: Rng,
  ctx: FuzzContext,
) => Omit<FuzzRequest, 'headers' | 'family'> & { headers?: Record<string, string>; search?: boolean };

/** Routes that do not exist (yet): `similar` arrives with vector search. */
const UNROUTED_FAMILIES = new Set(['similar', 'unrouted']);

const jsonBody = (rng: Rng, v: unknown) => rawBody(rng, v);
const idx = (uid: string) => `/indexes/${uid}`;

/** Route families with their weights. */
export const FAMILIES: readonly (readonly [number, string, Gen])[] = [
  [
    4,
    'indexes.list',
    (rng) => ({
      method: 'GET',
      path: `/indexes${queryString(rng, { offset: () => numStr(rng), limit: () => numStr(rng) })}`,
    }),
  ],
  [
    3,
    'indexes.create',
    (rng, ctx) => ({
      method: 'POST',
      path: '/indexes',
      body: jsonBody(
        rng,
        maybe(rng, () => ({
          uid: rng.chance(0.5) ? rng.pick(ctx.writeUids) : hostileUid(rng, ctx),
          primaryKey: maybe(rng, () => rng.pick(['id', 'title', '', 'a.b'])),
        })),
      ),
    }),
  ],
  [3, 'indexes.get', (rng, ctx) => ({ method: 'GET', path: idx(readUid(rng, ctx)) })],
  [
    2,
    'indexes.update',
    (rng, ctx) => ({
      method: 'PATCH',
      path: idx(writeUid(rng, ctx)),
      body: jsonBody(
        rng,
        maybe(rng, () => ({
          primaryKey: maybe(rng, () => 'id'),
          uid: maybe(rng, () => (rng.chance(0.5) ? rng.pick(ctx.writeUids) : ctx.protectedUid)),
        })),
      ),
    }),
  ],
  [2, 'indexes.delete', (rng, ctx) => ({ method: 'DELETE', path: idx(writeUid(rng, ctx)) })],
  [2, 'indexes.stats', (rng, ctx) => ({ method: 'GET', path: `${idx(readUid(rng, ctx))}/stats` })],
  [
    2,
    'swap-indexes',
    (rng, ctx) => ({
      method: 'POST',
      path: '/swap-indexes',
      body: jsonBody(
        rng,
        maybe(rng, () =>
          Array.from({ length: rng.int(0, 3) }, () =>
            maybe(rng, () => ({
              indexes: maybe(rng, () => [writeUid(rng, ctx), writeUid(rng, ctx)]),
              rename: maybe(rng, () => rng.chance(0.5)),
            })),
          ),
        ),
      ),
    }),
  ],
  [
    8,
    'documents.add',
    (rng, ctx) => {
      const p = documentsPayload(rng);
      return {
        method: rng.pick(['POST', 'PUT']),
        path: `${idx(writeUid(rng, ctx))}/documents${queryString(rng, { primaryKey: () => rng.pick(['id', 'title', '', 'a.b', hostileString(rng)]), csvDelimiter: () => rng.pick([',', ';', '', ',,', 'é', '\u0000']), customMetadata: () => hostileString(rng) })}`,
        body: p.body,
        headers: p.contentType ? { 'Content-Type': p.contentType } : undefined,
      };
    },
  ],
  [
    6,
    'documents.get',
    (rng, ctx) => ({
      method: 'GET',
      path: `${idx(readUid(rng, ctx))}/documents${queryString(rng, { offset: () => numStr(rng), limit: () => numStr(rng), fields: () => listStr(rng), filter: () => randomFilter(rng), ids: () => rng.pick(['1,2', '', ',,', '1.5', 'a b', 'x'.repeat(600)]), retrieveVectors: () => rng.pick(['true', 'x']), sort: () => rng.pick(['year:asc', 'x']) })}`,
    }),
  ],
  [
    5,
    'documents.fetch',
    (rng, ctx) => ({
      method: 'POST',
      path: `${idx(readUid(rng, ctx))}/documents/fetch`,
      body: jsonBody(
        rng,
        maybe(rng, () => ({
          offset: maybe(rng, () => hostileNumber(rng)),
          limit: maybe(rng, () => hostileNumber(rng)),
          fields: maybe(rng, () => attrList(rng)),
          filter: filterValue(rng),
          ids: maybe(rng, () => Array.from({ length: rng.int(0, 3) }, () => maybe(rng, () => rng.int(0, 30)))),
          retrieveVectors: maybe(rng, () => false),
          sort: maybe(rng, () => ['year:asc']),
        })),
      ),
    }),
  ],
  [
    4,
    'documents.getOne',
    (rng, ctx) => ({
      method: 'GET',
      path: `${idx(readUid(rng, ctx))}/documents/${hostileDocId(rng)}${queryString(rng, { fields: () => listStr(rng), retrieveVectors: () => rng.pick(['true', 'x']) })}`,
    }),
  ],
  [
    3,
    'documents.deleteOne',
    (rng, ctx) => ({ method: 'DELETE', path: `${idx(writeUid(rng, ctx))}/documents/${hostileDocId(rng)}` }),
  ],
  [2, 'documents.deleteAll', (rng, ctx) => ({ method: 'DELETE', path: `${idx(writeUid(rng, ctx))}/documents` })],
  [
    3,
    'documents.deleteBatch',
    (rng, ctx) => ({
      method: 'POST',
      path: `${idx(writeUid(rng, ctx))}/documents/delete-batch`,
      body: jsonBody(
        rng,
        maybe(rng, () => Array.from({ length: rng.int(0, 4) }, () => maybe(rng, () => rng.int(0, 50)))),
      ),
    }),
  ],
  [
    3,
    'documents.deleteByFilter',
    (rng, ctx) => ({
      method: 'POST',
      path: `${idx(writeUid(rng, ctx))}/documents/delete`,
      body: jsonBody(
        rng,
        maybe(rng, () => ({ filter: filterValue(rng) })),
      ),
    }),
  ],
  [
    1,
    'documents.edit',
    (rng, ctx) => ({
      method: 'POST',
      path: `${idx(writeUid(rng, ctx))}/documents/edit`,
      body: jsonBody(
        rng,
        maybe(rng, () => ({ function: hostileString(rng), filter: filterValue(rng), context: hostileValue(rng) })),
      ),
    }),
  ],
  [3, 'settings.get', (rng, ctx) => ({ method: 'GET', path: `${idx(readUid(rng, ctx))}/settings` })],
  [
    4,
    'settings.update',
    (rng, ctx) => ({
      method: 'PATCH',
      path: `${idx(writeUid(rng, ctx))}/settings`,
      body: jsonBody(
        rng,
        maybe(rng, () => settingsBody(rng)),
      ),
    }),
  ],
  [1, 'settings.reset', (rng, ctx) => ({ method: 'DELETE', path: `${idx(writeUid(rng, ctx))}/settings` })],
  [
    8,
    'settings.sub',
    (rng, ctx) => {
      const [route, field, verb] = rng.pick(SETTINGS);
      const m = rng.weighted<string>([
        [2, 'GET'],
        [5, verb.toUpperCase()],
        [1, 'DELETE'],
        [1, verb === 'put' ? 'PATCH' : 'PUT'],
        [0.3, 'POST'],
      ]);
      const uid = m === 'GET' ? readUid(rng, ctx) : writeUid(rng, ctx);
      return {
        method: m,
        path: `${idx(uid)}/settings/${route}`,
        body: m === 'GET' || m === 'DELETE' ? undefined : jsonBody(rng, settingValue(rng, field)),
        unrouted: ![`GET`, verb.toUpperCase(), 'DELETE'].includes(m),
      };
    },
  ],
  [
    14,
    'search.post',
    (rng, ctx) => ({
      method: 'POST',
      path: `${idx(readUid(rng, ctx))}/search`,
      body: rng.chance(0.05)
        ? undefined
        : jsonBody(
            rng,
            maybe(rng, () => searchBody(rng)),
          ),
      search: true,
    }),
  ],
  [
    8,
    'search.get',
    (rng, ctx) => ({
      method: 'GET',
      path: `${idx(readUid(rng, ctx))}/search${queryString(rng, searchParams(rng))}`,
      search: true,
    }),
  ],
  [
    6,
    'multi-search',
    (rng, ctx) => ({
      method: 'POST',
      path: '/multi-search',
      body: jsonBody(
        rng,
        maybe(rng, () => {
          const o: Record<string, unknown> = {
            queries: maybe(rng, () =>
              Array.from({ length: rng.int(0, 4) }, () =>
                maybe(rng, () => ({
                  ...searchBody(rng),
                  indexUid: maybe(rng, () => readUid(rng, ctx)),
                  federationOptions: rng.chance(0.2) ? hostileValue(rng) : undefined,
                })),
              ),
            ),
          };
          if (rng.chance(0.3))
            o.federation = maybe(rng, () => ({
              offset: hostileNumber(rng),
              limit: hostileNumber(rng),
              facetsByIndex: hostileValue(rng),
              mergeFacets: hostileValue(rng),
            }));
          return o;
        }),
      ),
      search: true,
    }),
  ],
  [
    4,
    'facet-search',
    (rng, ctx) => ({
      method: 'POST',
      path: `${idx(readUid(rng, ctx))}/facet-search`,
      body: jsonBody(
        rng,
        maybe(rng, () => ({
          facetName: maybe(rng, () => rng.pick(ATTRIBUTES)),
          facetQuery: maybe(rng, () => hostileString(rng)),
          q: maybe(rng, () => 'carol'),
          filter: filterValue(rng),
          matchingStrategy: maybe(rng, () => 'all'),
          attributesToSearchOn: maybe(rng, () => attrList(rng)),
          exhaustiveFacetCount: maybe(rng, () => true),
        })),
      ),
      search: true,
    }),
  ],
  [
    3,
    'similar',
    (rng, ctx) => ({
      method: rng.pick(['POST', 'GET']),
      path: `${idx(readUid(rng, ctx))}/similar`,
      body: jsonBody(
        rng,
        maybe(rng, () => ({
          id: maybe(rng, () => 1),
          embedder: maybe(rng, () => 'default'),
          limit: hostileNumber(rng),
          filter: filterValue(rng),
        })),
      ),
      search: true,
    }),
  ],
  [6, 'tasks.list', (rng) => ({ method: 'GET', path: `/tasks${queryString(rng, taskParams(rng))}` })],
  [
    3,
    'tasks.get',
    (rng) => ({
      method: 'GET',
      path: `/tasks/${rng.chance(0.5) ? numStr(rng) : hostileDocId(rng)}${rng.chance(0.1) ? '/documents' : ''}`,
    }),
  ],
  [2, 'tasks.cancel', (rng) => ({ method: 'POST', path: `/tasks/cancel${queryString(rng, taskParams(rng))}` })],
  [2, 'tasks.delete', (rng) => ({ method: 'DELETE', path: `/tasks${queryString(rng, taskParams(rng))}` })],
  [
    3,
    'batches',
    (rng) => ({
      method: 'GET',
      path: rng.chance(0.5)
        ? `/batches${queryString(rng, taskParams(rng))}`
        : `/batches/${rng.chance(0.5) ? numStr(rng) : hostileDocId(rng)}`,
    }),
  ],
  [
    2,
    'keys.list',
    (rng) => ({
      method: 'GET',
      path: `/keys${queryString(rng, { offset: () => numStr(rng), limit: () => numStr(rng) })}`,
    }),
  ],
  [
    2,
    'keys.get',
    (rng, ctx) => ({
      method: 'GET',
      path: `/keys/${rng.pick([ctx.searchKey.uid, ctx.searchKey.key, uuid(rng), hostileDocId(rng), '..', '%zz'])}`,
    }),
  ],
  [
    2,
    'keys.create',
    (rng) => ({
      method: 'POST',
      path: '/keys',
      body: jsonBody(
        rng,
        maybe(rng, () => ({
          actions: maybe(rng, () => [rng.pick(['search', 'documents.*', '*', 'keys.create', 'indexes.swap', 'x'])]),
          indexes: maybe(rng, () => [rng.pick(['*', 'fuzz*', '', '..'])]),
          expiresAt: maybe(rng, () =>
            rng.pick([null, '2099-01-01', '2000-01-01', '2099-13-01', '9999-12-31T23:59:59Z']),
          ),
          uid: rng.chance(0.3) ? maybe(rng, () => uuid(rng)) : undefined,
          name: rng.chance(0.3) ? hostileValue(rng) : undefined,
        })),
      ),
    }),
  ],
  [
    1,
    'keys.update',
    (rng, ctx) => ({
      method: 'PATCH',
      path: `/keys/${rng.pick([uuid(rng), hostileDocId(rng), ctx.searchKey.uid])}`,
      body: jsonBody(
        rng,
        maybe(rng, () => ({ name: maybe(rng, () => 'n'), description: hostileValue(rng) })),
      ),
    }),
  ],
  [1, 'keys.delete', (rng) => ({ method: 'DELETE', path: `/keys/${rng.pick([uuid(rng), hostileDocId(rng), '..'])}` })],
  [2, 'stats', (rng) => ({ method: 'GET', path: `/stats${queryString(rng, { x: () => hostileString(rng) })}` })],
  [1, 'version', () => ({ method: 'GET', path: '/version' })],
  [
    1,
    'health',
    (rng) => {
      const method = rng.pick(['GET', 'GET', 'POST', 'DELETE']);
      return { method, path: '/health', unrouted: method !== 'GET' };
    },
  ],
  [
    2,
    'experimental-features',
    (rng) =>
      rng.chance(0.4)
        ? { method: 'GET', path: `/experimental-features${queryString(rng, { x: () => '1' })}` }
        : {
            method: 'PATCH',
            path: '/experimental-features',
            body: jsonBody(
              rng,
              maybe(rng, () => ({
                [rng.pick([
                  'containsFilter',
                  'getTaskDocumentsRoute',
                  'metrics',
                  'logsRoute',
                  'editDocumentsByFunction',
                  'vectorStore',
                  'compositeEmbedders',
                  hostileString(rng),
                ])]: maybe(rng, () => rng.chance(0.5)),
              })),
            ),
          },
  ],
  [
    1,
    'unrouted',
    (rng) => ({
      method: rng.pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH']),
      path: rng.pick([
        '/',
        '/%zz',
        '/indexes/',
        '//indexes',
        '/indexes//documents',
        '/dumps',
        '/snapshots',
        '/metrics',
        '/logs/stream',
        '/network',
        '/chats',
        '/export',
        '/..',
        '/%2e%2e/indexes',
      ]),
    }),
  ],
];

/** The next request of the sequence `rng` drives. */
export function generateRequest(rng: Rng, ctx: FuzzContext): FuzzRequest {
  const [, family, gen] = rng.weighted(FAMILIES.map(([w, name, g]) => [w, [w, name, g] as const] as const));
  const r = gen(rng, ctx);
  let headers: Record<string, string> = { ...authHeader(rng, ctx, r.search === true) };
  let body = r.body;
  if (body !== undefined) {
    const h = bodyHeaders(rng, body);
    body = h.body;
    // A route's own content type (NDJSON, CSV) wins unless the dice change it.
    headers = { ...headers, ...h.headers, ...(r.headers && rng.chance(0.85) ? r.headers : {}) };
  } else if (rng.chance(0.05)) {
    // A body where none is expected.
    body = rawBody(rng, hostileValue(rng));
    headers['Content-Type'] = 'application/json';
  }
  return {
    family,
    method: r.method,
    path: r.path,
    headers,
    body,
    unrouted: r.unrouted === true || UNROUTED_FAMILIES.has(family),
  };
}
