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

/** A fixed mix of query shapes drawn from the documents' own words. */
function queryMix(docs, rand, perShape) {
  const pick = () => docs[Math.floor(rand() * docs.length)];
  const pickWords = (min) => {
    for (let i = 0; i < 50; i++) {
      const d = pick();
      const w = words(`${d.name} ${d.summary}`);
      if (w.length >= min) return w;
    }
    return ['python', 'library', 'client'];
  };
  const mix = { oneWord: [], twoWords: [], threeWords: [], prefix: [], typo1: [], typo2: [], phrase: [], placeholder: [] };
  for (let i = 0; i < perShape; i++) {
    const w = pickWords(3);
    const start = Math.floor(rand() * (w.length - 2));
    mix.oneWord.push({ body: { q: w[start] } });
    mix.twoWords.push({ body: { q: `${w[start]} ${w[start + 1]}` } });
    mix.threeWords.push({ body: { q: `${w[start]} ${w[start + 1]} ${w[start + 2]}` } });
    const long = w.find((x) => x.length >= 5) ?? w[start];
    mix.prefix.push({ body: { q: long.slice(0, Math.max(2, Math.ceil(long.length / 2))) } });
    mix.typo1.push({ body: { q: typo(long, rand, 1) } });
    const longer = w.find((x) => x.length >= 9) ?? long;
    mix.typo2.push({ body: { q: typo(longer, rand, longer.length >= 9 ? 2 : 1) } });
    mix.phrase.push({ body: { q: `"${w[start]} ${w[start + 1]}"` } });
    mix.placeholder.push({ body: { q: '', limit: 20, offset: Math.floor(rand() * 100) } });
  }
  return mix;
}

/**
 * Filters, facets and sort (issue 4): `eq` is an attribute compared for equality, `num` a
 * numeric one for ranges, IN lists and sorting. Values are drawn from the documents.
 */
function filterMix(docs, rand, perShape, { eq, num }) {
  const pick = () => docs[Math.floor(rand() * docs.length)];
  const value = (field) => {
    for (let i = 0; i < 50; i++) {
      const v = pick()[field];
      if (v !== null && v !== undefined && v !== '') return v;
    }
    return 0;
  };
  const lit = (v) => (typeof v === 'number' ? String(v) : JSON.stringify(String(v)));
  const word = () => {
    for (let i = 0; i < 50; i++) {
      const w = words(`${pick().name} ${pick().summary}`);
      if (w.length) return w[0];
    }
    return 'python';
  };
  const mix = { filterEq: [], filterRange: [], filterIn100: [], filterAndQuery: [], sortNumeric: [], sortAndQuery: [], facetsAll: [] };
  for (let i = 0; i < perShape; i++) {
    mix.filterEq.push({ body: { q: '', filter: `${eq} = ${lit(value(eq))}` } });
    const [a, b] = [value(num), value(num)].sort((x, y) => x - y);
    mix.filterRange.push({ body: { q: '', filter: `${num} ${a} TO ${b}` } });
    const list = Array.from({ length: 100 }, () => lit(value(num)));
    mix.filterIn100.push({ body: { q: '', filter: `${num} IN [${list.join(', ')}]` } });
    mix.filterAndQuery.push({ body: { q: word(), filter: `${num} >= ${a}` } });
    mix.sortNumeric.push({ body: { q: '', sort: [`${num}:${rand() < 0.5 ? 'asc' : 'desc'}`], offset: Math.floor(rand() * 100) } });
    mix.sortAndQuery.push({ body: { q: word(), sort: [`${num}:desc`] } });
    mix.facetsAll.push({ body: { q: '', facets: [eq, num], limit: 0 } });
  }
  return mix;
}

/**
 * The timed mixes of `run.js`: the query shapes, then the filter shapes, drawn in that order
 * from one generator of seed 42, so every tool that names the bench's queries draws the same.
 */
function seededMixes(docs, perShape, filterFields) {
  const rand = mulberry32(42);
  const search = queryMix(docs, rand, perShape);
  const filters = filterMix(docs, rand, perShape, filterFields);
  return { search, filters };
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

module.exports = { filterMix, mulberry32, percentile, queryMix, quietClient, seededMixes, stepSeconds, timed, typo, words };
