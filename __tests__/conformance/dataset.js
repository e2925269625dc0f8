'use strict';
/**
 * The conformance harness's fixed dataset: the same documents and settings are loaded into
 * Quarry and the reference Meilisearch. Built by a fixed-seed generator (never the run's seed),
 * so every run compares the same index. Covers nested objects, arrays of strings and objects,
 * `_geo` and `_geojson` points, integers and floats, booleans, nulls, empty arrays and missing
 * fields.
 */
const { rng } = require('./rng');

const WORDS = [
  'while',
  'racing',
  'to',
  'a',
  'boxing',
  'match',
  'the',
  'for',
  'library',
  'night',
  'dragon',
  'sun',
  'city',
  'love',
  'war',
  'space',
  'journey',
  'ocean',
  'king',
  'queen',
  'shadow',
  'light',
  'dream',
  'Taisto',
  'river',
  'mountain',
  'secret',
  'garden',
  'iron',
  'storm',
  'winter',
  'summer',
  'ghost',
  'machine',
  'empire',
  'stars',
  'forest',
  'silent',
  'golden',
  'broken',
  'hunter',
  'island',
  'fire',
  'snow',
  'echo',
  'north',
  'south',
  'café',
  'naïve',
  'Zürich',
  'über',
  'and',
  'of',
  'in',
  'on',
  'with',
  'new',
  'york',
  'play',
  'player',
  'playing',
];
const GENRES = ['Drama', 'Comedy', 'Action', 'Sci-Fi', 'Horror', 'Romance', 'Documentary', 'Animation'];
const NAMES = [
  'Taisto Kasurinen',
  'Ada Lovelace',
  'Kurt Vonnegut',
  'Agnès Varda',
  'Akira Kurosawa',
  'Greta Gerwig',
  'Bong Joon-ho',
  'Jane Campion',
];
const ROLES = ['lead', 'support', 'cameo', 'voice'];
const TAGS = ['classic', 'indie', 'award', 'cult', 'remake', 'sequel'];

function sentence(r, min, max) {
  const n = min + r.int(max - min + 1);
  const out = [];
  for (let i = 0; i < n; i++) out.push(r.pick(WORDS));
  return out.join(' ');
}

function buildDocuments() {
  const r = rng(6801);
  const docs = [];
  for (let i = 1; i <= 48; i++) {
    const d = { id: i, title: sentence(r, 1, 4) };
    d.title = d.title.charAt(0).toUpperCase() + d.title.slice(1);
    if (i % 11 !== 0) d.overview = `${sentence(r, 6, 40)}.`;
    if (i === 5)
      d.overview =
        'While racing to a boxing match, the hunter meets Taisto on the golden island. The boxing fans love the match.';
    d.genres = i % 9 === 0 ? [] : Array.from(new Set([r.pick(GENRES), r.pick(GENRES)]));
    d.year = 1950 + r.int(75);
    d.rating = Math.round(r.next() * 100) / 10;
    d.available = r.next() < 0.5;
    if (i % 7 !== 0)
      d.director = {
        name: r.pick(NAMES),
        born: 1900 + r.int(90),
        country: { code: r.pick(['FI', 'FR', 'US', 'JP', 'KR', 'NZ']) },
      };
    d.cast = Array.from({ length: r.int(4) }, () => ({ name: r.pick(NAMES), role: r.pick(ROLES) }));
    d.tags = i % 5 === 0 ? null : Array.from({ length: r.int(3) }, () => r.pick(TAGS));
    d.price = i % 4 === 0 ? null : Math.round(r.next() * 5000) / 100;
    if (i % 6 === 1)
      d.misc = { nested: { deep: sentence(r, 1, 3), n: r.int(10) }, list: [1, 'two', true, null, { k: 'v' }] };
    const lat = 40 + r.next() * 20;
    const lng = -5 + r.next() * 30;
    if (i % 3 === 0) d._geo = { lat: Math.round(lat * 1e4) / 1e4, lng: Math.round(lng * 1e4) / 1e4 };
    else if (i % 3 === 1)
      d._geojson = { type: 'Point', coordinates: [Math.round(lng * 1e4) / 1e4, Math.round(lat * 1e4) / 1e4] };
    if (i % 12 === 0) d.group = `g${i % 5}`;
    else d.group = `g${r.int(4)}`;
    docs.push(d);
  }
  return docs;
}

const DOCUMENTS = buildDocuments();

/** Settings of the main index (`movies`). */
const SETTINGS = {
  searchableAttributes: ['title', 'overview', 'director.name', 'cast.name', 'genres', 'tags', 'misc'],
  filterableAttributes: [
    'id',
    'genres',
    'year',
    'rating',
    'available',
    'director.name',
    'director.born',
    'cast.name',
    'cast.role',
    'tags',
    'price',
    'group',
    '_geo',
    '_geojson',
    'misc.nested.n',
  ],
  sortableAttributes: ['year', 'rating', 'title', 'price', '_geo', 'director.born'],
  synonyms: { sun: ['star'], film: ['movie'] },
  stopWords: [],
  faceting: { maxValuesPerFacet: 50 },
  pagination: { maxTotalHits: 30 },
};

/** Attribute names the generator draws from: real ones, nested ones, wildcards and absent ones. */
const ATTRIBUTES = [
  'id',
  'title',
  'overview',
  'genres',
  'year',
  'rating',
  'available',
  'director',
  'director.name',
  'director.country.code',
  'director.*',
  'cast',
  'cast.name',
  'tags',
  'price',
  'misc',
  'misc.nested.deep',
  'misc.list',
  '_geo',
  '_geojson',
  'group',
  '*',
  'name',
  'nope',
  'title.x',
];
const FILTERABLE = SETTINGS.filterableAttributes;
const SORTABLE = SETTINGS.sortableAttributes;
const SEARCHABLE = SETTINGS.searchableAttributes;

module.exports = { WORDS, GENRES, NAMES, TAGS, DOCUMENTS, SETTINGS, ATTRIBUTES, FILTERABLE, SORTABLE, SEARCHABLE };
