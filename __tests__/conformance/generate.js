'use strict';
/**
 * Request generation for the conformance harness. Search, facet-search, document-fetch and
 * similar bodies are generated from Quarry's own zod schemas (`dist/schemas/*`): every field
 * the schema declares is drawn, with a value of the field's type (from a domain of meaningful
 * values where the field has one: attribute names, filter expressions, queries with typos and
 * phrases) or, sometimes, a value the schema refuses (wrong type, out of range, unknown enum
 * member, unknown field), so that error answers are compared too. Task and batch filters come
 * from the tasks schema's parameter list, settings from its list of fields.
 *
 * A case is a list of steps; each step is one request sent to both servers. Steps that enqueue a
 * task are followed by a wait on both sides before the next step, so that the two databases
 * stay in the same state.
 */
const path = require('node:path');
const crypto = require('node:crypto');
const { rng } = require('./rng');
const D = require('./dataset');

const DIST = path.join(__dirname, '../../dist');
const { SearchSchema, FacetSearchSchema } = require(path.join(DIST, 'schemas/search.js'));
const { FetchSchema } = require(path.join(DIST, 'schemas/documents.js'));
const { SimilarSchema } = require(path.join(DIST, 'schemas/similar.js'));
const { LIST_PARAMS } = require(path.join(DIST, 'schemas/tasks.js'));
const { TASK_TYPES, TASK_STATUSES } = require(path.join(DIST, 'tasks/types.js'));
const { SETTINGS_FIELDS } = require(path.join(DIST, 'settings/vocabulary.js'));

/** What a zod schema accepts, read from its definition. */
function describe(schema) {
  let d = schema.def;
  let nullable = false;
  while (d.innerType) {
    if (d.type === 'nullable') nullable = true;
    d = d.innerType.def;
  }
  const out = { type: d.type, nullable };
  if (d.type === 'number') {
    for (const c of d.checks ?? []) {
      const cd = c._zod.def;
      if (cd.check === 'number_format') out.int = true;
      if (cd.check === 'greater_than') out.min = cd.value;
      if (cd.check === 'less_than') out.max = cd.value;
    }
    if (schema.def.innerType && schema.def.innerType.def.checks === undefined) void 0;
    const inner = unwrap(schema);
    if (inner.minValue !== undefined && inner.minValue !== null && Number.isFinite(inner.minValue))
      out.min = inner.minValue;
    if (inner.maxValue !== undefined && inner.maxValue !== null && Number.isFinite(inner.maxValue))
      out.max = inner.maxValue;
    if (inner.isInt) out.int = true;
  }
  if (d.type === 'enum') out.values = Object.values(d.entries);
  if (d.type === 'array') out.element = describe(d.element);
  if (d.type === 'union') out.options = d.options.map(describe);
  return out;
}
function unwrap(schema) {
  let s = schema;
  while (s.def.innerType) s = s.def.innerType;
  return s;
}

const WORDS = D.WORDS;
function typo(r, w) {
  if (w.length < 3) return w;
  const i = 1 + r.int(w.length - 1);
  switch (r.int(4)) {
    case 0:
      return w.slice(0, i) + w.slice(i + 1); // deletion
    case 1:
      return `${w.slice(0, i)}x${w.slice(i)}`; // insertion
    case 2:
      return w.slice(0, i - 1) + w[i] + w[i - 1] + w.slice(i + 1); // transposition
    default:
      return `${w.slice(0, i)}q${w.slice(i + 1)}`; // substitution
  }
}
function query(r) {
  switch (r.int(12)) {
    case 0:
      return r.pick(WORDS);
    case 1:
      return `${r.pick(WORDS)} ${r.pick(WORDS)}`;
    case 2:
      return typo(r, r.pick(WORDS.filter((w) => w.length > 4)));
    case 3:
      return r.pick(WORDS).slice(0, 1 + r.int(3));
    case 4:
      return `"${r.pick(WORDS)} ${r.pick(WORDS)}"`;
    case 5:
      return `${r.pick(WORDS)} -${r.pick(WORDS)}`;
    case 6:
      return '';
    case 7:
      return r.pick([
        'Tasto',
        'Taisto',
        'tasto',
        'boxing mach',
        '"While racing to a boxing match"',
        'ada lovelace',
        'kurosawa',
        'zurich',
        'cafe',
        'TAISTO',
        '1999',
        'drama',
        'sci fi',
        'Sci-Fi',
      ]);
    case 8:
      return `${r.pick(WORDS)} ${r.pick(WORDS)} ${r.pick(WORDS).slice(0, 2)}`;
    case 9:
      return r.pick(D.NAMES).split(' ')[r.int(2)];
    case 10:
      return `${typo(r, r.pick(WORDS.filter((w) => w.length > 5)))} ${r.pick(WORDS)}`;
    default:
      return r.pick(D.GENRES).toLowerCase();
  }
}

const FILTER_ATOMS = [
  (r) => `year > ${1950 + r.int(75)}`,
  (r) => `year ${1950 + r.int(40)} TO ${1990 + r.int(35)}`,
  (r) => `rating >= ${r.int(100) / 10}`,
  (r) => `rating < ${r.int(10)}`,
  (r) => `genres = ${r.pick(D.GENRES)}`,
  (r) => `genres IN [${r.some(D.GENRES, 3).join(', ')}]`,
  (r) => `genres NOT IN [${r.pick(D.GENRES)}]`,
  (r) => `director.name = "${r.pick(D.NAMES)}"`,
  (r) => `cast.name = "${r.pick(D.NAMES)}"`,
  (r) => `cast.role = ${r.pick(['lead', 'cameo', 'voice'])}`,
  (r) => `available = ${r.pick(['true', 'false'])}`,
  () => 'price IS NULL',
  () => 'price IS NOT NULL',
  () => 'tags IS EMPTY',
  () => 'tags IS NOT EMPTY',
  () => 'director.name EXISTS',
  () => 'director.born NOT EXISTS',
  (r) => `id != ${1 + r.int(48)}`,
  (r) => `id = ${1 + r.int(48)}`,
  (r) => `group = g${r.int(5)}`,
  (r) => `misc.nested.n > ${r.int(10)}`,
  (r) => `_geoRadius(${40 + r.int(20)}, ${r.int(25)}, ${r.pick([1000, 100000, 500000, 2000000])})`,
  (r) => `_geoBoundingBox([${50 + r.int(10)}, ${r.int(10)}], [${40 + r.int(10)}, ${10 + r.int(15)}])`,
  (r) => `tags = ${r.pick(D.TAGS)}`,
  // refused ones: not filterable, syntax errors, bad geo
  () => 'title = x',
  () => 'year >',
  () => 'year = 1 OR',
  () => '_geoRadius(45, 10)',
  () => '_geoRadius(100, 10, 10)',
  () => 'nope = 3',
  (r) => `year ${r.pick(['<', '<=', '>', '>=', '=', '!='])} ${r.pick(['abc', '2000', '1999.5', '"2000"'])}`,
  () => 'genres CONTAINS dra',
  () => 'genres STARTS WITH Dr',
];
function filterExpr(r, depth = 0) {
  const atom = () => r.pick(FILTER_ATOMS)(r);
  if (depth > 1 || r.chance(0.5)) return r.chance(0.1) ? `NOT ${atom()}` : atom();
  const op = r.pick(['AND', 'OR']);
  const inner = `${filterExpr(r, depth + 1)} ${op} ${filterExpr(r, depth + 1)}`;
  return r.chance(0.3) ? `(${inner})` : inner;
}
function filter(r) {
  if (r.chance(0.7)) return filterExpr(r);
  // the array form: AND of entries, an entry an OR of strings
  return Array.from({ length: 1 + r.int(3) }, () =>
    r.chance(0.5) ? FILTER_ATOMS[r.int(24)](r) : [FILTER_ATOMS[r.int(24)](r), FILTER_ATOMS[r.int(24)](r)],
  );
}
const SORTS = [
  'year:asc',
  'year:desc',
  'rating:desc',
  'rating:asc',
  'title:asc',
  'price:desc',
  'price:asc',
  'director.born:asc',
  '_geoPoint(50, 10):asc',
  '_geoPoint(45.5,5):desc',
  'nope:asc',
  'year',
  'overview:asc',
  '_geoPoint(1):asc',
  'year:up',
];
const FACETS = [
  'genres',
  'year',
  'rating',
  'available',
  'director.name',
  'tags',
  'price',
  'group',
  'cast.role',
  '*',
  'title',
  'nope',
  'gen*',
];
const ATTRS = D.ATTRIBUTES;
const cropAttr = (r) =>
  r.chance(0.3) ? `${r.pick(['overview', 'title', '*', 'director.name'])}:${r.int(8)}` : r.pick(ATTRS);

/** Meaningful values of named fields; fields not named here get a generic value of their type. */
const DOMAIN = {
  q: query,
  offset: (r) => (r.chance(0.9) ? r.int(40) : r.pick([1000, 2 ** 31])),
  limit: (r) => (r.chance(0.9) ? r.int(30) : r.pick([0, 1000, 2 ** 31])),
  page: (r) => r.int(6),
  hitsPerPage: (r) => r.int(25),
  attributesToRetrieve: (r) => r.some(ATTRS, 4),
  attributesToCrop: (r) => Array.from({ length: 1 + r.int(3) }, () => cropAttr(r)),
  attributesToHighlight: (r) => r.some(ATTRS, 4),
  attributesToSearchOn: (r) =>
    r.chance(0.85) ? r.some(D.SEARCHABLE, 3) : r.some(['title', 'year', 'nope', '*', 'director.*'], 2),
  fields: (r) => r.some(ATTRS, 4),
  cropLength: (r) => r.int(15),
  cropMarker: (r) => r.pick(['…', '', '...', '[..]', '✂']),
  highlightPreTag: (r) => r.pick(['<em>', '**', '', '<b class="x">', '__']),
  highlightPostTag: (r) => r.pick(['</em>', '**', '', '</b>', '__']),
  filter,
  sort: (r) => r.some(SORTS.slice(0, r.chance(0.85) ? 10 : SORTS.length), 3),
  distinct: (r) => r.pick(['genres', 'group', 'director.name', 'year', 'available', 'nope', 'title']),
  facets: (r) => r.some(FACETS.slice(0, r.chance(0.85) ? 10 : FACETS.length), 4),
  rankingScoreThreshold: (r) => r.int(11) / 10,
  locales: (r) => r.some(['eng', 'fra', 'deu', 'jpn', 'fin', 'en', 'fr'], 2),
  hybrid: (r) =>
    r.pick([
      { embedder: 'default' },
      { embedder: 'default', semanticRatio: 0.5 },
      { semanticRatio: 2 },
      'x',
      { embedder: 3 },
    ]),
  vector: (r) => r.pick([[0.1, 0.2, 0.3], []]),
  media: () => ({ image: 'x' }),
  personalize: () => ({ userContext: 'likes drama' }),
  facetName: (r) => r.pick(FACETS),
  facetQuery: (r) => r.pick(['', 'dr', 'Dra', 'co', 'Ada', 'g1', '19', 'x', 'Taisto', 'cl']),
  ids: (r) => r.some([1, 2, 3, '4', 5, 'x', 47, 48, 60], 4),
  id: (r) => r.pick([1, '2', 3, 'nope', -1]),
  embedder: (r) => r.pick(['default', '', 'x']),
};

function genericValid(desc, r) {
  switch (desc.type) {
    case 'string':
      return r.pick(WORDS);
    case 'number': {
      const lo = desc.min ?? 0;
      const hi = desc.max ?? 50;
      return desc.int ? lo + r.int(Math.max(1, Math.min(hi, 50) - lo + 1)) : lo + r.next() * (hi - lo);
    }
    case 'boolean':
      return r.chance(0.5);
    case 'enum':
      return r.pick(desc.values);
    case 'array':
      return Array.from({ length: r.int(3) }, () => genericValid(desc.element, r));
    case 'union':
      return genericValid(r.pick(desc.options), r);
    default:
      return r.pick([{}, 'x', 1]);
  }
}
/** A value the schema refuses (wrong type, out of range, not a member). */
function invalid(desc, r) {
  const wrongType = {
    string: [1, true, ['x'], {}],
    number: ['12', true, [1], {}],
    boolean: ['true', 1, null],
    enum: [1, ['x']],
    array: ['x', 1, { a: 1 }],
    union: [1, true, {}],
  }[desc.type];
  const choices = [...(wrongType ?? [])];
  if (!desc.nullable && desc.type !== 'unknown') choices.push(null);
  if (desc.type === 'number') {
    if (desc.min !== undefined) choices.push(desc.min - 1);
    if (desc.max !== undefined) choices.push(desc.max + 0.5);
    if (desc.int) choices.push(1.5);
  }
  if (desc.type === 'enum') choices.push(`${r.pick(desc.values)}x`, r.pick(desc.values).toUpperCase());
  if (desc.type === 'array') choices.push([1, 2], [null]);
  return choices.length ? r.pick(choices) : 'x';
}

/** Parameters weighted toward the ones that change answers; the rest still appear. */
const RARE = new Set([
  'hybrid',
  'vector',
  'media',
  'personalize',
  'useNetwork',
  'retrieveVectors',
  'locales',
  'showPerformanceDetails',
]);

/** A body for `schema`: a few fields drawn from it, sometimes one refused value or unknown field. */
function bodyFrom(schema, r, { maxFields = 6, required = [], bias = {} } = {}) {
  const shape = schema.shape;
  const names = Object.keys(shape);
  const body = {};
  for (const k of required) body[k] = (DOMAIN[k] ?? ((rr) => genericValid(describe(shape[k]), rr)))(r);
  const n = r.int(maxFields + 1);
  for (let i = 0; i < n; i++) {
    let k = r.pick(names);
    if (RARE.has(k) && r.chance(0.8)) k = r.pick(names);
    if (RARE.has(k) && r.chance(0.5)) continue;
    const desc = describe(shape[k]);
    if (desc.nullable && r.chance(0.05)) body[k] = null;
    else body[k] = (DOMAIN[k] ?? ((rr) => genericValid(desc, rr)))(r);
  }
  for (const [k, f] of Object.entries(bias)) if (r.chance(f.p)) body[k] = f.v(r);
  const roll = r.next();
  if (roll < 0.07) {
    const k = r.pick(names);
    body[k] = invalid(describe(shape[k]), r);
  } else if (roll < 0.085) {
    body[r.pick(['qq', 'limits', 'Filter', 'attributesToRetrive', 'sortBy'])] = 1;
  }
  return body;
}

/** The query-string form of a body (lists as commas, as Meilisearch's GET routes read them). */
function toQuery(body) {
  const q = {};
  for (const [k, v] of Object.entries(body)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) q[k] = v.map((x) => (Array.isArray(x) ? x.join(',') : String(x))).join(',');
    else if (v !== null && typeof v === 'object') q[k] = JSON.stringify(v);
    else q[k] = String(v);
  }
  return q;
}

// ---- families -------------------------------------------------------------------------------

const SEARCH_BIAS = {
  q: { p: 0.75, v: query },
  attributesToHighlight: { p: 0.15, v: (r) => r.some(ATTRS, 3) },
  attributesToCrop: { p: 0.1, v: (r) => [cropAttr(r)] },
  showMatchesPosition: { p: 0.1, v: () => true },
  showRankingScore: { p: 0.15, v: () => true },
};

function searchCase(r) {
  const body = bodyFrom(SearchSchema, r, { bias: SEARCH_BIAS });
  if (r.chance(0.2)) {
    // GET form: only the parameters a query string can carry
    for (const k of ['hybrid', 'media', 'personalize']) delete body[k];
    return [{ method: 'GET', path: '/indexes/movies/search', query: toQuery(body) }];
  }
  const index = r.chance(0.97) ? 'movies' : r.pick(['nope', 'bad uid!']);
  return [{ method: 'POST', path: `/indexes/${index}/search`, body }];
}

function multiSearchCase(r) {
  const queries = Array.from({ length: 1 + r.int(3) }, () => ({
    indexUid: r.chance(0.95) ? 'movies' : 'nope',
    ...bodyFrom(SearchSchema, r, { maxFields: 4, bias: SEARCH_BIAS }),
  }));
  const body = { queries };
  if (r.chance(0.4)) {
    for (const q of queries) for (const k of ['offset', 'limit', 'page', 'hitsPerPage', 'facets']) delete q[k];
    body.federation = r.pick([
      {},
      { limit: r.int(10) },
      { offset: 2, limit: 5 },
      { facetsByIndex: { movies: ['genres'] } },
    ]);
  }
  return [{ method: 'POST', path: '/multi-search', body }];
}

function facetSearchCase(r) {
  const body = bodyFrom(FacetSearchSchema, r, { maxFields: 4, required: r.chance(0.95) ? ['facetName'] : [] });
  return [{ method: 'POST', path: '/indexes/movies/facet-search', body }];
}

function similarCase(r) {
  const body = bodyFrom(SimilarSchema, r, { maxFields: 3, required: ['id', 'embedder'] });
  return [{ method: 'POST', path: '/indexes/movies/similar', body }];
}

function documentsCase(r) {
  switch (r.int(4)) {
    case 0: {
      const body = bodyFrom(FetchSchema, r, { maxFields: 4 });
      delete body.useNetwork;
      return [{ method: 'POST', path: '/indexes/movies/documents/fetch', body }];
    }
    case 1: {
      const body = bodyFrom(FetchSchema, r, { maxFields: 4 });
      delete body.useNetwork;
      return [{ method: 'GET', path: '/indexes/movies/documents', query: toQuery(body) }];
    }
    case 2: {
      const id = r.pick([1, 2, 5, 6, 7, 11, 12, 48, 99, 'x', 'bad id']);
      const q = r.chance(0.6) ? { fields: r.some(ATTRS, 3).join(',') } : {};
      if (r.chance(0.1)) q.retrieveVectors = r.pick(['true', 'false', 'x']);
      return [{ method: 'GET', path: `/indexes/movies/documents/${encodeURIComponent(id)}`, query: q }];
    }
    default:
      return [
        {
          method: 'GET',
          path: r.pick([
            '/indexes/movies',
            '/indexes',
            '/indexes/nope',
            '/indexes/movies/documents/',
            '/indexes/nope/documents',
          ]),
          query: r.chance(0.3) ? { limit: String(r.int(5)), offset: String(r.int(3)) } : {},
        },
      ];
  }
}

/** Writes on the `scratch` index: document additions, updates and deletions, then reads. */
function documentWriteCase(r) {
  const docs = Array.from({ length: 1 + r.int(3) }, () => {
    const d = { id: r.int(20) };
    if (r.chance(0.8)) d.title = `${r.pick(WORDS)} ${r.pick(WORDS)}`;
    if (r.chance(0.4)) d.n = r.int(100);
    if (r.chance(0.3)) d.obj = { a: r.pick([1, 'x', null, [1, 2]]) };
    if (r.chance(0.05)) d.id = r.pick(['bad id', -1, 1.5, null]);
    return d;
  });
  const steps = [];
  switch (r.int(5)) {
    case 0:
      steps.push({ method: 'POST', path: '/indexes/scratch/documents', body: docs, task: true });
      break;
    case 1:
      steps.push({ method: 'PUT', path: '/indexes/scratch/documents', body: docs, task: true });
      break;
    case 2:
      steps.push({
        method: 'POST',
        path: '/indexes/scratch/documents/delete-batch',
        body: docs.map((d) => d.id),
        task: true,
      });
      break;
    case 3:
      steps.push({ method: 'DELETE', path: `/indexes/scratch/documents/${r.int(20)}`, task: true });
      break;
    default:
      steps.push({
        method: 'POST',
        path: '/indexes/scratch/documents/delete',
        body: { filter: r.pick(['n > 50', 'id < 5', 'title = x', 'nope']) },
        task: true,
      });
  }
  steps.push({ method: 'GET', path: '/indexes/scratch/documents', query: { limit: '50' } });
  return steps;
}

const SETTING_VALUES = {
  displayedAttributes: (r) => (r.chance(0.3) ? ['*'] : r.some(ATTRS, 4)),
  searchableAttributes: (r) =>
    r.chance(0.3)
      ? ['*']
      : r.some(
          ATTRS.filter((a) => a !== '*'),
          4,
        ),
  filterableAttributes: (r) =>
    r.chance(0.8)
      ? r.some(
          ATTRS.filter((a) => a !== '*'),
          4,
        )
      : [
          {
            attributePatterns: r.some(['year', 'genres', 'director.*', '*_id'], 2),
            features: { facetSearch: r.chance(0.5), filter: { equality: true, comparison: r.chance(0.5) } },
          },
        ],
  sortableAttributes: (r) => r.some(['year', 'rating', 'title', '_geo', 'price'], 3),
  foreignKeys: (r) => r.pick([[], [{ foreignIndexUid: 'movies', fieldName: 'movie' }]]),
  rankingRules: (r) => {
    const rules = r.some(
      [
        'words',
        'typo',
        'proximity',
        'attribute',
        'sort',
        'exactness',
        'year:desc',
        'rating:asc',
        'attributeRank',
        'wordPosition',
      ],
      8,
    );
    if (r.chance(0.05)) rules.push(r.pick(['bogus', 'year:up', 'typos']));
    return rules;
  },
  stopWords: (r) => r.some(['the', 'a', 'of', 'and', 'The'], 3),
  nonSeparatorTokens: (r) => r.some(['@', '#', '-', '_'], 2),
  separatorTokens: (r) => r.some(['|', '&', '/'], 2),
  dictionary: (r) => r.some(['J. R. R.', 'W. E. B.', 'new york'], 2),
  synonyms: (r) =>
    r.pick([{}, { sun: ['star'] }, { 'new york': ['nyc', 'big apple'], nyc: ['new york'] }, { Film: ['Movie'] }]),
  distinctAttribute: (r) => r.pick(['genres', 'title', 'director.name', null]),
  proximityPrecision: (r) => r.pick(['byWord', 'byAttribute', 'byNothing']),
  typoTolerance: (r) => {
    const t = {};
    if (r.chance(0.5)) t.enabled = r.chance(0.7);
    if (r.chance(0.5))
      t.minWordSizeForTypos = r.pick([
        { oneTypo: 4 },
        { oneTypo: 3, twoTypos: 7 },
        { twoTypos: 2 },
        { oneTypo: 8, twoTypos: 4 },
      ]);
    if (r.chance(0.3)) t.disableOnWords = r.some(WORDS, 2);
    if (r.chance(0.3)) t.disableOnAttributes = r.some(['title', 'overview'], 2);
    if (r.chance(0.2)) t.disableOnNumbers = r.chance(0.5);
    return t;
  },
  faceting: (r) =>
    r.pick([
      { maxValuesPerFacet: r.int(200) },
      { sortFacetValuesBy: { '*': 'count', genres: 'alpha' } },
      { sortFacetValuesBy: { x: 'size' } },
      {},
    ]),
  pagination: (r) => ({ maxTotalHits: r.pick([0, 1, 100, 1000, 20000]) }),
  embedders: (r) =>
    r.pick([{}, null, { default: { source: 'userProvided', dimensions: 3 } }, { default: { source: 'nope' } }]),
  searchCutoffMs: (r) => r.pick([null, 100, 0, 1500]),
  localizedAttributes: (r) =>
    r.pick([
      [],
      null,
      [{ attributePatterns: ['title'], locales: ['fra'] }],
      [{ attributePatterns: ['*'], locales: ['xx'] }],
    ]),
  facetSearch: (r) => r.chance(0.5),
  prefixSearch: (r) => r.pick(['indexingTime', 'disabled', 'never']),
  chat: () => ({ description: 'movies' }),
};
const kebab = (s) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

function settingsCase(r) {
  const steps = [];
  switch (r.int(4)) {
    case 0: {
      // a PATCH of several fields on the scratch index, then its task and the settings read back
      const body = {};
      for (const f of r.some(SETTINGS_FIELDS, 3)) {
        if (f === 'chat' && r.chance(0.9)) continue;
        body[f] = (SETTING_VALUES[f] ?? (() => null))(r);
        if (r.chance(0.04)) body[f] = r.pick([1, 'x', true, { a: 1 }]);
      }
      if (r.chance(0.03)) body.unknownSetting = 1;
      steps.push({ method: 'PATCH', path: '/indexes/scratch/settings', body, task: true });
      break;
    }
    case 1: {
      const f = r.pick(SETTINGS_FIELDS.filter((x) => x !== 'chat'));
      const method = ['synonyms', 'typoTolerance', 'faceting', 'pagination', 'embedders'].includes(f)
        ? r.pick(['PATCH', 'PUT'])
        : 'PUT';
      steps.push({
        method,
        path: `/indexes/scratch/settings/${kebab(f)}`,
        body: (SETTING_VALUES[f] ?? (() => null))(r),
        task: true,
      });
      break;
    }
    case 2: {
      const f = r.pick(SETTINGS_FIELDS.filter((x) => x !== 'chat'));
      steps.push({
        method: 'DELETE',
        path: `/indexes/scratch/settings/${r.chance(0.2) ? '' : kebab(f)}`.replace(/\/$/, ''),
        task: true,
      });
      break;
    }
    default:
      steps.push({
        method: 'GET',
        path: `/indexes/${r.pick(['movies', 'scratch'])}/settings${r.chance(0.5) ? '' : `/${kebab(r.pick(SETTINGS_FIELDS))}`}`,
      });
      return steps;
  }
  steps.push({ method: 'GET', path: '/indexes/scratch/settings' });
  return steps;
}

function statsCase(r) {
  const q = {};
  if (r.chance(0.6)) q.sizeFormat = r.pick(['human', 'raw', 'HUMAN', 'bytes', '']);
  if (r.chance(0.4)) q.showInternalDatabaseSizes = r.pick(['true', 'false', 'yes']);
  return [{ method: 'GET', path: r.pick(['/stats', '/indexes/movies/stats', '/indexes/nope/stats']), query: q }];
}

function taskFilterQuery(r, names) {
  const q = {};
  for (const p of r.some(names, 3)) {
    switch (p) {
      case 'limit':
        q.limit = String(r.pick([0, 1, 3, 10, 'x', -1]));
        break;
      case 'from':
        q.from = String(r.pick([0, 2, 5, 100, 'x']));
        break;
      case 'reverse':
        q.reverse = r.pick(['true', 'false', 'yes']);
        break;
      case 'uids':
      case 'batchUids':
      case 'canceledBy':
        q[p] = r.pick(['0', '1,2', '3', '*', 'x', '0,99']);
        break;
      case 'types':
        q.types = r.chance(0.9) ? r.some(TASK_TYPES, 2).join(',') : 'documentAdd';
        break;
      case 'statuses':
        q.statuses = r.chance(0.9) ? r.some(TASK_STATUSES, 2).join(',') : 'done';
        break;
      case 'indexUids':
        q.indexUids = r.pick(['movies', 'scratch', 'movies,scratch', '*', 'bad uid!', 'nope']);
        break;
      default:
        q[p] = r.pick(['2020-01-01', '2099-01-01T00:00:00Z', '2020-01-01T00:00:00+02:00', 'yesterday', '*']);
    }
  }
  if (r.chance(0.05)) q.bogus = '1';
  return q;
}

function tasksCase(r) {
  switch (r.int(5)) {
    case 0:
      return [{ method: 'GET', path: '/tasks', query: taskFilterQuery(r, LIST_PARAMS) }];
    case 1:
      return [{ method: 'GET', path: '/batches', query: taskFilterQuery(r, LIST_PARAMS) }];
    case 2:
      return [{ method: 'GET', path: `/tasks/${r.pick([0, 1, 2, 3, 99999, 'x', -1])}` }];
    case 3:
      return [{ method: 'GET', path: `/batches/${r.pick([0, 1, 2, 99999, 'x'])}` }];
    default:
      return [
        {
          method: r.pick(['POST', 'DELETE']),
          path: r.pick(['/tasks/cancel', '/tasks']),
          query: taskFilterQuery(
            r,
            LIST_PARAMS.filter((p) => !['limit', 'from', 'reverse'].includes(p)),
          ),
          task: 'maybe',
        },
      ];
  }
}

const ACTIONS = [
  'search',
  'documents.add',
  'documents.get',
  'documents.*',
  'indexes.*',
  'settings.get',
  'tasks.get',
  'keys.get',
  'stats.get',
  '*',
  'bogus.action',
];
function keysCase(r, ctx) {
  switch (r.int(5)) {
    case 0:
      return [
        {
          method: 'GET',
          path: '/keys',
          query: r.chance(0.5) ? { limit: String(r.int(5)), offset: String(r.int(4)) } : {},
        },
      ];
    case 1: {
      const body = {};
      if (r.chance(0.9)) body.actions = r.some(ACTIONS.slice(0, r.chance(0.9) ? 10 : 11), 3);
      if (r.chance(0.9)) body.indexes = r.some(['movies', 'scratch', '*', 'mov*'], 2);
      body.expiresAt = r.pick([null, '2099-01-01T00:00:00Z', '2099-01-01', '2000-01-01T00:00:00Z', 'soon']);
      if (r.chance(0.5)) body.name = r.pick(['k', 'search key', null]);
      if (r.chance(0.3)) body.description = r.pick(['d', null]);
      if (r.chance(0.7)) {
        body.uid = ctx.newUid();
      }
      if (r.chance(0.05)) body.actions = r.pick(['search', [1]]);
      return [{ method: 'POST', path: '/keys', body, keyCreate: true }];
    }
    case 2: {
      const uid =
        ctx.knownUids.length && r.chance(0.8)
          ? r.pick(ctx.knownUids)
          : r.pick(['nope', '00000000-0000-0000-0000-000000000000']);
      return [{ method: 'GET', path: `/keys/${uid}` }];
    }
    case 3: {
      const uid = ctx.knownUids.length ? r.pick(ctx.knownUids) : 'nope';
      const body = r.pick([
        { name: 'renamed' },
        { description: 'x' },
        { actions: ['search'] },
        { expiresAt: null },
        { name: 3 },
        {},
      ]);
      return [{ method: 'PATCH', path: `/keys/${uid}`, body }];
    }
    default: {
      if (!ctx.knownUids.length) return [{ method: 'DELETE', path: '/keys/nope' }];
      const uid = ctx.knownUids.splice(r.int(ctx.knownUids.length), 1)[0];
      return [
        { method: 'DELETE', path: `/keys/${uid}` },
        { method: 'GET', path: `/keys/${uid}` },
      ];
    }
  }
}

/** Tenant tokens: signed by each server's own search key (the harness signs per server). */
function tokenCase(r) {
  const future = Math.floor(Date.now() / 1000) + 3600 * 24 * 365;
  const claims = {};
  switch (r.int(6)) {
    case 0:
      claims.searchRules = { '*': {} };
      break;
    case 1:
      claims.searchRules = ['movies'];
      break;
    case 2:
      claims.searchRules = {
        movies: { filter: r.pick(['year > 1990', 'genres = Drama', 'bad >', ['available = true']]) },
      };
      break;
    case 3:
      claims.searchRules = { movies: null };
      break;
    case 4:
      claims.searchRules = { scratch: {} };
      break;
    default:
      claims.searchRules = r.pick(['*', 3, null]);
  }
  claims.apiKeyUid = r.chance(0.9) ? '<searchKeyUid>' : r.pick(['00000000-0000-0000-0000-000000000000', 3, 'x']);
  const exp = r.int(6);
  if (exp === 0) claims.exp = null;
  else if (exp === 1) claims.exp = 1000;
  else if (exp === 2) claims.exp = future;
  else if (exp === 3) claims.exp = String(future);
  else if (exp === 4) delete claims.exp;
  else claims.exp = future + 0.5;
  const token = {
    claims,
    alg: r.chance(0.9) ? 'HS256' : r.pick(['HS384', 'HS512', 'none', 'RS256']),
    tamper: r.chance(0.9) ? null : r.pick(['signature', 'parts', 'payload', 'garbage']),
  };
  // the token is what is tested here: bodies that do not rank (the search families cover those)
  const body = r.pick([
    {},
    { limit: 1 + r.int(5) },
    { filter: r.pick(['year > 1990', 'available = true', 'genres = Drama']) },
    { attributesToRetrieve: ['id', 'title'] },
    { facets: ['genres'] },
  ]);
  const target = r.chance(0.85) ? 'movies' : 'scratch';
  return [{ method: 'POST', path: `/indexes/${target}/search`, body, auth: { token } }];
}

/** Headers clients send, bodies they get wrong, and the authorization forms. */
function headersCase(r) {
  const body = bodyFrom(SearchSchema, r, { maxFields: 2, bias: SEARCH_BIAS });
  switch (r.int(8)) {
    case 0:
      return [
        {
          method: 'POST',
          path: '/indexes/movies/search',
          body,
          headers: { 'Meili-Include-Metadata': r.pick(['true', 'false']) },
        },
      ];
    case 1:
      return [
        {
          method: 'POST',
          path: '/multi-search',
          body: { queries: [{ indexUid: 'movies', ...body }] },
          headers: { 'Meili-Include-Metadata': 'true' },
        },
      ];
    case 2:
      return [
        {
          method: 'POST',
          path: '/indexes/movies/search',
          rawBody: JSON.stringify(body),
          headers: {
            'Content-Type': r.pick([
              'text/plain',
              'application/x-ndjson',
              'application/json; charset=utf-8',
              'application/JSON',
              '',
            ]),
          },
        },
      ];
    case 3:
      return [
        {
          method: 'POST',
          path: '/indexes/movies/search',
          rawBody: r.pick(['{', '', '[]', '"q"', '{"q": "a",}', 'null', '{"q":1e400}']),
          headers: { 'Content-Type': 'application/json' },
        },
      ];
    case 4:
      return [
        {
          method: 'POST',
          path: '/indexes/movies/search',
          body,
          auth: r.pick(['none', 'wrong', 'basic', 'bearerOnly']),
        },
      ];
    case 5:
      return [
        {
          method: 'POST',
          path: '/indexes/movies/search',
          body,
          headers: { 'X-Meilisearch-Client': 'Meilisearch Python (v0.31.0)', 'User-Agent': 'python-requests/2.31' },
        },
      ];
    case 6:
      return [
        {
          method: r.pick(['GET', 'PUT', 'DELETE']),
          path: r.pick(['/indexes/movies/search', '/multi-search', '/nope', '/indexes/movies/documents/fetch']),
        },
      ];
    default:
      return [
        {
          method: 'GET',
          path: r.pick(['/health', '/indexes/movies/settings/bogus', '/keys/', '/tasks?limit=1', '/indexes?limit=x']),
        },
      ];
  }
}

const FAMILIES = {
  search: { weight: 40, gen: searchCase },
  multiSearch: { weight: 6, gen: multiSearchCase },
  facetSearch: { weight: 6, gen: facetSearchCase },
  similar: { weight: 1, gen: similarCase },
  documents: { weight: 10, gen: documentsCase },
  documentWrites: { weight: 3, gen: documentWriteCase },
  settings: { weight: 6, gen: settingsCase },
  stats: { weight: 3, gen: statsCase },
  tasks: { weight: 5, gen: tasksCase },
  keys: { weight: 4, gen: keysCase },
  tokens: { weight: 6, gen: tokenCase },
  headers: { weight: 6, gen: headersCase },
};

/** A generator of cases for `seed`, restricted to `families` when given. */
function generator(seed, families) {
  const r = rng(seed);
  const names = Object.keys(FAMILIES).filter((f) => !families || families.includes(f));
  const total = names.reduce((s, f) => s + FAMILIES[f].weight, 0);
  let uidCounter = 0;
  const ctx = {
    knownUids: [],
    newUid: () => {
      const h = crypto.createHash('sha256').update(`${seed}:${uidCounter++}`).digest('hex');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
    },
  };
  return () => {
    let x = r.next() * total;
    let family = names[names.length - 1];
    for (const f of names) {
      x -= FAMILIES[f].weight;
      if (x < 0) {
        family = f;
        break;
      }
    }
    return { family, steps: FAMILIES[family].gen(r, ctx), ctx };
  };
}

module.exports = { generator, FAMILIES, describe, toQuery };
