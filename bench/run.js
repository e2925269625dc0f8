#!/usr/bin/env node
/**
 * End-to-end benchmark: measures a server that speaks the Meilisearch API over HTTP, the
 * way a user feels it. With no --url it starts Quarry itself on a temporary data dir.
 * With --meili-bin BIN it starts the reference Meilisearch the same way (fresh data dir, log
 * level WARN, as Quarry gets).
 *
 *   node bench/run.js [--dataset pypi|npm] [--rows N] [--url URL --key KEY [--pid PID] [--data-dir DIR]]
 *                     [--meili-bin BIN] [--batch 50000] [--queries 300] [--warmup 100] [--concurrency 8]
 *                     [--qps-seconds 10] [--fresh-queries N] [--runs 1] [--out file.json] [--quick]
 *                     [--max-indexing-memory SIZE] [--max-indexing-threads N] [--index-only]
 *
 * With --runs N (self-started server only) it repeats the whole run on a fresh server and
 * data dir N times and reports the median of each figure. Against another server (--url) the
 * index it made is deleted at the end, and --data-dir names that server's data for the disk figure.
 *
 * Every query body is sent to a server once in its lifetime, except in the repeated-mix QPS
 * (and the one-body shape `facetsAll`): before the timed shapes, --warmup queries per shape
 * (another seed) run once, so the figures are a running server's, not its first queries'
 * (Quarry's JavaScript is still being compiled then; their p50/p99 are reported apart as
 * `first queries`); then the timed shapes (seed 42); then the headline QPS over
 * --fresh-queries more (a third seed); then the repeated mix, the timed bodies cycled, as a
 * second, cache-friendly QPS figure.
 *
 * Prints a table and writes the same figures as JSON (bench/results/ by default).
 * No timing assertions: it reports, it does not judge.
 */
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ONE_BODY, distinctMix, drawers, freshQueries, mulberry32, quietClient, seededMixes } = require('./lib');
const {
  DATASETS,
  batchesOf,
  client,
  dataDir,
  discardQuarry,
  duBytes,
  loadIndex,
  loadRows,
  rssOf,
  startMeilisearch,
  startQuarry,
  waitTask,
} = require('./server');

function parseArgs(argv) {
  const o = {
    dataset: 'pypi',
    rows: 0,
    batch: 50000,
    queries: 300,
    warmup: 100,
    concurrency: 8,
    qpsSeconds: 10,
    quick: false,
    runs: 1,
    serverArgs: [],
    indexOnly: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--url') o.url = v();
    else if (a === '--key') o.key = v();
    else if (a === '--pid') o.pid = Number(v());
    else if (a === '--data-dir') o.dataDir = v();
    else if (a === '--meili-bin') o.meiliBin = v();
    else if (a === '--fresh-queries') o.freshQueries = Number(v());
    else if (a === '--dataset') o.dataset = v();
    else if (a === '--rows') o.rows = Number(v());
    else if (a === '--batch') o.batch = Number(v());
    else if (a === '--queries') o.queries = Number(v());
    else if (a === '--warmup') o.warmup = Number(v());
    else if (a === '--concurrency') o.concurrency = Number(v());
    else if (a === '--qps-seconds') o.qpsSeconds = Number(v());
    else if (a === '--runs') o.runs = Number(v());
    else if (a === '--out') o.out = v();
    else if (a === '--quick') o.quick = true;
    // Passed to the self-started server (Quarry or Meilisearch): the indexer's limits.
    else if (a === '--max-indexing-memory' || a === '--max-indexing-threads') o.serverArgs.push(a, v());
    // Stops after indexing: the indexing figures, peak RSS and disk only.
    else if (a === '--index-only') o.indexOnly = true;
    else if (a === '--help') {
      console.log(fs.readFileSync(__filename, 'utf8').split('\n').slice(2, 11).join('\n'));
      process.exit(0);
    } else throw new Error(`unknown option ${a}`);
  }
  if (o.quick) {
    o.queries = Math.min(o.queries, 60);
    o.warmup = Math.min(o.warmup, 10);
    o.qpsSeconds = Math.min(o.qpsSeconds, 2);
  }
  if (!['pypi', 'npm'].includes(o.dataset)) throw new Error(`--dataset must be pypi or npm`);
  if (!Number.isInteger(o.runs) || o.runs < 1) throw new Error('--runs must be a positive integer');
  if (o.url && o.runs > 1) throw new Error('--runs applies to a self-started server only');
  if (o.url && o.serverArgs.length) throw new Error('--max-indexing-* apply to a self-started server only');
  if (o.url && o.meiliBin) throw new Error('--url and --meili-bin both name the server: give one');
  // Enough never-sent queries for the whole QPS phase: well above what either server answers.
  o.freshQueries ??= 6000 * o.qpsSeconds;
  return o;
}

/** Runs the timing half of a run (`bench/timer.js`) in a process that does not hold the rows. */
function runTimer(plan) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'timer.js')], { stdio: ['pipe', 'pipe', 'inherit'] });
    const out = [];
    child.stdout.on('data', (c) => out.push(c));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(Buffer.concat(out).toString()))
        : reject(new Error(`bench/timer.js exited with ${code}`)),
    );
    child.stdin.end(JSON.stringify(plan));
  });
}

const fmt = (n, d = 2) => (n === null || n === undefined || Number.isNaN(n) ? '-' : Number(n).toFixed(d));
const mib = (n) => (n === null ? '-' : `${(n / 1024 / 1024).toFixed(1)} MiB`);

/** One full run: settings, indexing, then the query mix. Returns the figures. */
async function runOnce(o, docs, rawTsv, rawGzip) {
  const started = o.url
    ? null
    : o.meiliBin
      ? await startMeilisearch(o.meiliBin, o.serverArgs)
      : await startQuarry(o.serverArgs);
  const url = o.url ?? started.url;
  const key = o.key ?? started?.key;
  const pid = o.pid ?? started?.pid;
  const api = client(url, key);
  const index = `bench_${o.dataset}_${Date.now()}`;
  const results = {
    dataset: o.dataset,
    url: o.url ? url : o.meiliBin ? 'self-started meilisearch' : 'self-started quarry',
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, memory: os.totalmem() },
  };
  try {
    results.rows = docs.length;
    // Indexing: first POST to last task succeeded.
    // The server's anonymous memory (its heap: VmHWM counts the file pages it maps too),
    // sampled while it indexes.
    let peakAnon = null;
    const sampler = pid
      ? setInterval(() => {
          const anon = rssOf(pid).anon;
          if (anon !== null) peakAnon = Math.max(peakAnon ?? 0, anon);
        }, 100)
      : null;
    const secs = await loadIndex(api, index, docs, o.dataset, { batch: o.batch, progress: true }).finally(() =>
      clearInterval(sampler),
    );
    results.indexing = { seconds: secs, docsPerSecond: docs.length / secs, batches: await batchesOf(api, index) };
    results.memory = pid ? { ...rssOf(pid), peakAnonIndexing: peakAnon } : { peak: null, now: null };
    results.serverArgs = o.serverArgs;
    const dbDir = started ? started.dbPath : o.dataDir;
    results.disk = dbDir ? { bytes: duBytes(dbDir), rawTsvBytes: rawTsv, rawGzipTsvBytes: rawGzip } : null;
    if (o.indexOnly) return results;

    // The first query with a facet after indexing builds the value columns (one pass over
    // the documents): it is timed on its own.
    const columnsBody = { q: '', facets: [...new Set(Object.values(DATASETS[o.dataset].filterFields))], limit: 0 };
    const c0 = process.hrtime.bigint();
    await api('POST', `/indexes/${index}/search`, JSON.stringify(columnsBody));
    results.columnsColdMs = Number(process.hrtime.bigint() - c0) / 1e6;
    // Every body below is distinct from every other (`seen`), except the repeated mix: the
    // timed shapes (seed 42), the first queries (seed 7), the headline QPS's fresh queries
    // (seed 99), each group drawing its own documents. They are timed by a process that does
    // not hold the rows (`bench/timer.js` says why).
    const fields = DATASETS[o.dataset].filterFields;
    const { search: mix, filters: fmix, seen } = seededMixes(docs, o.queries, fields);
    seen.add(JSON.stringify(columnsBody));
    const all = (d) => ({ ...d.search, ...d.box, ...d.filters });
    const warm =
      o.warmup > 0 ? Object.values(distinctMix(all(drawers(docs, mulberry32(7), fields)), o.warmup, seen)).flat() : [];
    const freshShapes = {};
    const fresh = freshQueries(all(drawers(docs, mulberry32(99), fields)), o.freshQueries, seen, freshShapes);
    const body = (q) => q.body;
    const bodies = (m) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, v.map(body)]));
    // The repeated mix: the timed bodies of the same shapes as the fresh ones, cycled.
    const repeated = Object.entries({ ...mix, ...fmix })
      .filter(([shape]) => !ONE_BODY.has(shape))
      .flatMap(([, v]) => v.map(body));
    const timed = await runTimer({
      url,
      key,
      index,
      warm: warm.map(body),
      shapes: bodies(mix),
      filters: bodies(fmix),
      fresh,
      repeated,
      concurrency: o.concurrency,
      qpsSeconds: o.qpsSeconds,
      pid,
    });
    if (timed.firstQueries) results.firstQueries = { perShape: o.warmup, ...timed.firstQueries };
    results.search = timed.search;
    results.filters = timed.filters;
    // `freshShapes`: how many bodies of each shape the fresh pool holds (a shape with few
    // distinct bodies runs out and leaves the turn; sent are the first `queries` of them).
    results.qps = { ...timed.qps, fresh: true, freshShapes };
    results.qpsRepeated = timed.qpsRepeated;
    results.memory.afterSearch = pid ? rssOf(pid) : null;
    return results;
  } finally {
    if (!started) await waitTask(api, (await api('DELETE', `/indexes/${index}`)).taskUid).catch(() => undefined);
    if (started) {
      await discardQuarry(started);
    }
  }
}

/** How many timed bodies the repeated mix cycles (every timed shape but the one-body ones). */
const repeatedCount = (results) =>
  Object.entries({ ...results.search, ...results.filters })
    .filter(([shape]) => !ONE_BODY.has(shape))
    .reduce((n, [, r]) => n + r.n, 0);

const median = (xs) => {
  const v = xs.filter((x) => typeof x === 'number' && !Number.isNaN(x)).sort((a, b) => a - b);
  return v.length ? v[Math.floor((v.length - 1) / 2)] : null;
};

/** Median of every numeric figure across runs (same shape as one run). */
function medianOf(runs) {
  const walk = (vals) => {
    const first = vals[0];
    if (typeof first === 'number') return median(vals);
    if (first && typeof first === 'object') {
      const out = {};
      for (const k of Object.keys(first)) out[k] = walk(vals.map((v) => v?.[k]));
      return out;
    }
    return first;
  };
  return walk(runs);
}

async function main() {
  quietClient();
  const o = parseArgs(process.argv.slice(2));
  process.stderr.write(`loading ${o.dataset}${o.rows ? ` (${o.rows} rows)` : ''}...\n`);
  const { docs, rawBytes } = await loadRows(o.dataset, o.rows);
  const rawGzip = fs.statSync(path.join(dataDir(), DATASETS[o.dataset].file)).size;
  const runs = [];
  for (let r = 0; r < o.runs; r++) {
    if (o.runs > 1) process.stderr.write(`run ${r + 1}/${o.runs}\n`);
    runs.push(await runOnce(o, docs, rawBytes, rawGzip));
  }
  const results = o.runs > 1 ? { ...medianOf(runs), runs: runs.length, perRun: runs } : runs[0];

  console.log(
    `\nbench — ${o.dataset}, ${docs.length} documents, ${results.url}${o.runs > 1 ? `, median of ${o.runs} runs` : ''}`,
  );
  console.log(`indexing     ${fmt(results.indexing.docsPerSecond, 0)} docs/s (${fmt(results.indexing.seconds, 1)} s)`);
  const b = results.indexing.batches;
  if (b?.seconds) {
    // The three longest steps inside the batches, as the server names them.
    const longest = Object.entries(b.steps)
      .filter(([name]) => name.includes(' > '))
      .sort((x, y) => y[1] - x[1])
      .slice(0, 3)
      .map(([name, s]) => `${name.slice(name.indexOf(' > ') + 3)} ${fmt(s, 1)} s`);
    console.log(
      `             the server's ${fmt(b.count, 0)} batches: ${fmt(b.seconds, 1)} s${longest.length ? `; longest steps: ${longest.join(', ')}` : ''}`,
    );
  }
  console.log(`peak RSS     ${results.memory.peak ? mib(results.memory.peak) : '- (pass --pid)'}`);
  if (results.memory.peakAnonIndexing)
    console.log(
      `             anonymous, sampled while indexing: ${mib(results.memory.peakAnonIndexing)}${results.serverArgs?.length ? ` (${results.serverArgs.join(' ')})` : ''}`,
    );
  if (results.disk) {
    const ratio = results.disk.bytes / results.disk.rawTsvBytes;
    console.log(
      `disk         ${mib(results.disk.bytes)} = ${fmt(ratio)}x the raw TSV (${mib(results.disk.rawTsvBytes)}; gzipped ${mib(results.disk.rawGzipTsvBytes)})`,
    );
  }
  if (!o.indexOnly) printSearch(o, results);
  const out = o.out ?? path.join(__dirname, 'results', `${o.dataset}-${Date.now()}.json`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(results, null, 2));
  console.log(`figures written to ${out}`);
}

/** The search figures of a run, printed. */
function printSearch(o, results) {
  if (results.firstQueries) {
    const f = results.firstQueries;
    console.log(
      `first ${f.n} queries after indexing (${f.perShape} per shape, another seed; not in the shapes below): p50 ${fmt(f.p50)} ms, p99 ${fmt(f.p99)} ms`,
    );
  }
  console.log('\nfresh queries, each sent once, concurrency 1');
  console.log('shape            n     p50 ms   p95 ms   p99 ms   server ms');
  for (const [shape, r] of Object.entries(results.search)) {
    console.log(
      `${shape.padEnd(14)} ${String(r.n).padStart(4)} ${fmt(r.p50).padStart(9)} ${fmt(r.p95).padStart(8)} ${fmt(r.p99).padStart(8)} ${fmt(r.serverMsAvg).padStart(10)}`,
    );
  }
  console.log(
    `\nfilters, facets, sort (value columns built by the first such query: ${fmt(results.columnsColdMs)} ms)`,
  );
  for (const [shape, r] of Object.entries(results.filters)) {
    const note = ONE_BODY.has(shape) ? '  (one body: repeated)' : '';
    console.log(
      `${shape.padEnd(14)} ${String(r.n).padStart(4)} ${fmt(r.p50).padStart(9)} ${fmt(r.p95).padStart(8)} ${fmt(r.p99).padStart(8)} ${fmt(r.serverMsAvg).padStart(10)}${note}`,
    );
  }
  const q = results.qps;
  const r = results.qpsRepeated;
  console.log(
    `\nQPS at concurrency ${o.concurrency}, fresh queries (each sent once): ${fmt(q.value, 0)}  (${fmt(q.queries, 0)} queries${q.exhausted ? `; ran out after ${fmt(q.seconds, 1)} s: raise --fresh-queries` : ''})`,
  );
  console.log(
    `QPS at concurrency ${o.concurrency}, repeated (cache-friendly): ${fmt(r.value, 0)}  (the ${repeatedCount(results)} timed bodies cycled)`,
  );
  console.log(
    `CPU per query (fresh): server ${fmt(q.serverCpuMsPerQuery, 3)} ms, bench client ${fmt(q.clientCpuMsPerQuery, 3)} ms (${os.cpus().length} cores shared)`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
