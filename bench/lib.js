'use strict';
/** Pure helpers of the bench: seeded randomness, query mix, percentiles, step durations. */

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const UNIT_SECONDS = { ns: 1e-9, µs: 1e-6, us: 1e-6, ms: 1e-3, s: 1 };

/**
 * A step's duration as both servers print it in `performanceDetails` and `progressTrace`
 * ("512.3µs", "1.20ms", "2.1s"), in seconds; null for anything else.
 */
function stepSeconds(text) {
  const m = /^(\d+(?:\.\d+)?)\s*(ns|µs|us|ms|s)$/.exec(String(text).trim());
  return m ? Number(m[1]) * UNIT_SECONDS[m[2]] : null;
}

function percentile(values, p) {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i];
}

function words(text) {
  return String(text ?? '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length >= 3);
}

/** One edit (substitution) per typo, never on the first letter. */
function typo(word, rand, edits) {
  const chars = [...word];
  for (let e = 0; e < edits; e++) {
    const i = 1 + Math.floor(rand() * (chars.length - 1));
    chars[i] = chars[i] === 'x' ? 'z' : 'x';
  }
  return chars.join('');
}

/** A random element of `xs`. */
const anyOf = (xs, rand) => xs[Math.floor(rand() * xs.length)];

/**
 * One drawer per query shape: each call draws one query body from the documents' own words,
 * every shape from documents of its own, so no shape starts from another's words (a word's
 * typo walk cached by one shape must not make the next one look cheap). `{ eq, num }` name the
 * filterable attributes as `DATASETS[...].filterFields` does (only the filter shapes use them).
 * Groups: `search` (the keyword shapes), `box` (what search boxes send besides), `filters`.
 */
function drawers(docs, rand, { eq, num }) {
  const pick = () => docs[Math.floor(rand() * docs.length)];
  const int = (n) => Math.floor(rand() * n);
  // The words of a random document with at least `min` of them (`field`: one field only).
  const pickWords = (min, field) => {
    for (let i = 0; i < 50; i++) {
      const d = pick();
      const w = words(field ? d[field] : `${d.name} ${d.summary}`);
      if (w.length >= min) return w;
    }
    return ['python', 'library', 'client'].slice(0, Math.max(min, 1));
  };
  const long = (w, n) => {
    const l = w.filter((x) => x.length >= n);
    return l.length ? anyOf(l, rand) : null;
  };
  const value = (field) => {
    for (let i = 0; i < 50; i++) {
      const v = pick()[field];
      if (v !== null && v !== undefined && v !== '') return v;
    }
    return 0;
  };
  const lit = (v) => (typeof v === 'number' ? String(v) : JSON.stringify(String(v)));
  const word = () => anyOf(pickWords(1), rand);
  const facets = [...new Set([eq, num])];
  const run = (n) => {
    const w = pickWords(n);
    const s = int(w.length - n + 1);
    return w.slice(s, s + n);
  };
  return {
    search: {
      oneWord: () => ({ q: word() }),
      twoWords: () => ({ q: run(2).join(' ') }),
      threeWords: () => ({ q: run(3).join(' ') }),
      prefix: () => {
        const w = pickWords(1);
        const l = long(w, 5) ?? anyOf(w, rand);
        return { q: l.slice(0, Math.max(2, Math.ceil(l.length / 2))) };
      },
      typo1: () => {
        const w = pickWords(1);
        return { q: typo(long(w, 5) ?? anyOf(w, rand), rand, 1) };
      },
      typo2: () => {
        const w = pickWords(1);
        const l = long(w, 9);
        return { q: l ? typo(l, rand, 2) : typo(long(w, 5) ?? anyOf(w, rand), rand, 1) };
      },
      phrase: () => ({ q: `"${run(2).join(' ')}"` }),
      // The first pages of the whole catalogue: 100 bodies only (see `distinctMix`).
      placeholder: () => ({ q: '', limit: 20, offset: int(100) }),
    },
    box: {
      // A word and a word it must not have, both from one document, so the negation removes hits.
      negated: () => {
        const [a, b] = run(2);
        return { q: `${a} -${b}` };
      },
      // A word of the long text, highlighted in both fields and cropped in the long one.
      highlightCrop: () => ({
        q: anyOf(pickWords(1, 'summary'), rand),
        attributesToHighlight: ['name', 'summary'],
        attributesToCrop: ['summary'],
        cropLength: 12,
      }),
      // One of the first three pages of 50 hits.
      limit50: () => ({ q: word(), limit: 50, offset: 50 * int(3) }),
    },
    filters: {
      filterEq: () => ({ q: '', filter: `${eq} = ${lit(value(eq))}` }),
      filterRange: () => {
        const [a, b] = [value(num), value(num)].sort((x, y) => x - y);
        return { q: '', filter: `${num} ${a} TO ${b}` };
      },
      filterIn100: () => ({
        q: '',
        filter: `${num} IN [${Array.from({ length: 100 }, () => lit(value(num))).join(', ')}]`,
      }),
      filterAndQuery: () => ({ q: word(), filter: `${num} >= ${value(num)}` }),
      sortNumeric: () => ({ q: '', sort: [`${num}:${rand() < 0.5 ? 'asc' : 'desc'}`], offset: int(100) }),
      sortAndQuery: () => ({ q: word(), sort: [`${num}:desc`] }),
      // The facet distribution of every filterable attribute over every document: one body.
      facetsAll: () => ({ q: '', facets, limit: 0 }),
      // What a search box with a facet sidebar sends: a word, and counts on each filterable attribute.
      wordFacets: () => ({ q: word(), facets }),
    },
  };
}

/** Shapes that have one body only: always repeated, left out of the fresh QPS phase. */
const ONE_BODY = new Set(['facetsAll']);

/**
 * `perShape` bodies of every shape drawn by `draw` (a group of `drawers`), shape after shape,
 * none of which is in `seen` nor drawn twice; each body drawn is added to `seen`. A shape
 * whose bodies run out (an attribute with few values) gets fewer: 20 failed draws in a row
 * end it. Shapes of `ONE_BODY` are repeated as they are.
 */
function distinctMix(draw, perShape, seen) {
  const mix = {};
  for (const [shape, next] of Object.entries(draw)) {
    mix[shape] = [];
    let misses = 0;
    while (mix[shape].length < perShape && misses < 20) {
      const body = next();
      const text = JSON.stringify(body);
      if (ONE_BODY.has(shape)) {
        mix[shape].push({ body });
        continue;
      }
      if (seen.has(text)) {
        misses++;
        continue;
      }
      misses = 0;
      seen.add(text);
      mix[shape].push({ body });
    }
  }
  return mix;
}

/**
 * `count` bodies, none in `seen` and none twice (each added to `seen`), taking the shapes of
 * `draw` in turn (`ONE_BODY` shapes left out); a shape that runs out of new bodies leaves the
 * turn. For a phase that must never repeat a query: `run.js`'s headline QPS. `perShape`, if
 * given, receives how many bodies each shape gave.
 */
function freshQueries(draw, count, seen, perShape = {}) {
  const live = Object.entries(draw).filter(([shape]) => !ONE_BODY.has(shape));
  const misses = new Map(live.map(([shape]) => [shape, 0]));
  const out = [];
  let turn = 0;
  while (out.length < count && live.length > 0) {
    const k = turn++ % live.length;
    const [shape, next] = live[k];
    const body = next();
    const text = JSON.stringify(body);
    if (seen.has(text)) {
      misses.set(shape, misses.get(shape) + 1);
      if (misses.get(shape) >= 50) live.splice(k, 1);
      continue;
    }
    misses.set(shape, 0);
    seen.add(text);
    out.push(body);
    perShape[shape] = (perShape[shape] ?? 0) + 1;
  }
  return out;
}

/** `perShape` bodies of each shape of a group of `drawers`, drawn shape by shape in turn (repeats allowed). */
function mixOf(draw, perShape) {
  const mix = Object.fromEntries(Object.keys(draw).map((shape) => [shape, []]));
  for (let i = 0; i < perShape; i++)
    for (const [shape, next] of Object.entries(draw)) mix[shape].push({ body: next() });
  return mix;
}

/** The keyword shapes (one, two and three words, prefix, typos, phrase, placeholder), drawn from the documents. */
function queryMix(docs, rand, perShape) {
  return mixOf(drawers(docs, rand, {}).search, perShape);
}

/**
 * Filters, facets and sort (issue 4): `eq` is an attribute compared for equality, `num` a
 * numeric one for ranges, IN lists and sorting. Values are drawn from the documents.
 */
function filterMix(docs, rand, perShape, fields) {
  return mixOf(drawers(docs, rand, fields).filters, perShape);
}

/**
 * The timed mixes of `run.js`: the keyword shapes with those of search boxes (`negated`,
 * `highlightCrop`, `limit50`), then the filter shapes, drawn from one generator of seed 42,
 * every body distinct, so every tool that names the bench's queries draws the same. `seen`
 * holds the text of every body drawn, for the mixes drawn after (`distinctMix`).
 */
function seededMixes(docs, perShape, filterFields) {
  const d = drawers(docs, mulberry32(42), filterFields);
  const seen = new Set();
  const search = distinctMix({ ...d.search, ...d.box }, perShape, seen);
  const filters = distinctMix(d.filters, perShape, seen);
  return { search, filters, seen };
}

/** Runs `fn` and gives its result with the milliseconds it took. */
async function timed(fn) {
  const t0 = process.hrtime.bigint();
  const r = await fn();
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, r };
}

/**
 * Keeps the bench client's own background threads out of the way of what it measures (Linux;
 * call it first, before the libuv pool starts). The client is a Node process too: its V8
 * compiler threads compile for milliseconds at a time while it is young, and a scheduler trace
 * showed the client's JavaScript thread, handed a finished answer, waiting behind one of them
 * for up to 4 ms while the other core was idle. That time lands in whichever server's latency
 * is being timed. Their nice value goes higher, as the Quarry server's own do
 * (`lowerOtherThreads`, `ts/util/threads.ts`, read from `dist/`); the client's JavaScript
 * thread and its pool keep their priority. Both servers are timed by the same client, so this takes a shared noise away from both.
 */
function quietClient() {
  if (process.env.BENCH_LOUD_CLIENT) return;
  require('../dist/util/threads.js').lowerOtherThreads();
}

module.exports = {
  ONE_BODY,
  distinctMix,
  drawers,
  filterMix,
  freshQueries,
  mulberry32,
  percentile,
  queryMix,
  quietClient,
  seededMixes,
  stepSeconds,
  timed,
  typo,
  words,
};
