#!/usr/bin/env node
/**
 * Side by side: the same bench (bench/run.js) against Quarry and another server in one
 * sitting, alternating Quarry and the other run by run, then the medians of each and their
 * ratios (Quarry / other: below 1 is better for times, RSS and disk; above 1 for docs/s and QPS).
 *
 *   node bench/side.js --url URL --key KEY --pid PID [--data-dir DIR] [--runs 3]
 *                      [--dataset npm|pypi] [--rows N] [--queries N] [--warmup N] [--quick]
 *
 * Against the reference, inside ../shared/tools/with-meilisearch.sh:
 *   node bench/side.js --dataset npm --url http://127.0.0.1:$MEILI_PORT --key masterKey \
 *     --pid $MEILI_PID --data-dir $MEILI_DATA/data.ms
 * Writes both sets of runs and the table to bench/results/side-<dataset>-<time>.json.
 * No timing assertions: it reports, it does not judge.
 */
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

function parseArgs(argv) {
  const o = { runs: 3, dataset: 'npm', pass: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--url') o.url = v();
    else if (a === '--key') o.key = v();
    else if (a === '--pid') o.pid = v();
    else if (a === '--data-dir') o.dataDir = v();
    else if (a === '--runs') o.runs = Number(v());
    else if (a === '--dataset') o.dataset = v();
    else if (['--rows', '--queries', '--warmup', '--concurrency', '--batch'].includes(a)) o.pass.push(a, v());
    else if (a === '--quick') o.pass.push(a);
    else if (a === '--help') {
      console.log(fs.readFileSync(__filename, 'utf8').split('\n').slice(2, 14).join('\n'));
      process.exit(0);
    } else throw new Error(`unknown option ${a}`);
  }
  if (!o.url || !o.key) throw new Error('--url and --key name the other server');
  return o;
}

function runBench(args, out) {
  const r = spawnSync(process.execPath, [path.join(__dirname, 'run.js'), ...args, '--out', out], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`bench/run.js ${args.join(' ')} failed`);
  return JSON.parse(fs.readFileSync(out, 'utf8'));
}

const median = (xs) => {
  const v = xs.filter((x) => typeof x === 'number' && !Number.isNaN(x)).sort((a, b) => a - b);
  return v.length ? v[Math.floor((v.length - 1) / 2)] : null;
};
const at = (run, p) => p.split('.').reduce((x, k) => (x == null ? x : x[k]), run);

function main() {
  const o = parseArgs(process.argv.slice(2));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-side-'));
  const base = ['--dataset', o.dataset, ...o.pass];
  const other = [...base, '--url', o.url, '--key', o.key, ...(o.pid ? ['--pid', o.pid] : []), ...(o.dataDir ? ['--data-dir', o.dataDir] : [])];
  const runs = { quarry: [], other: [] };
  for (let i = 0; i < o.runs; i++) {
    // Alternate which goes first, so a drift of the machine touches both alike.
    const order = i % 2 === 0 ? ['quarry', 'other'] : ['other', 'quarry'];
    for (const who of order) {
      process.stderr.write(`run ${i + 1}/${o.runs}: ${who}\n`);
      runs[who].push(runBench(who === 'quarry' ? base : other, path.join(tmp, `${who}-${i}.json`)));
    }
  }
  const figure = (who, p) => median(runs[who].map((r) => at(r, p)));
  const rows = [];
  // `shape`: a query shape's time, counted against the 0.7x bar.
  const row = (label, p, better, shape = false) => {
    const q = figure('quarry', p);
    const m = figure('other', p);
    rows.push({ label, quarry: q, other: m, ratio: q !== null && m ? q / m : null, better, shape });
  };
  row('indexing docs/s', 'indexing.docsPerSecond', 'higher');
  row('peak RSS bytes', 'memory.peak', 'lower');
  row('disk bytes', 'disk.bytes', 'lower');
  row(`QPS at ${at(runs.quarry[0], 'qps.concurrency')}`, 'qps.value', 'higher');
  if (runs.quarry[0].firstQueries) {
    row('p50 first queries', 'firstQueries.p50', 'lower');
    row('p99 first queries', 'firstQueries.p99', 'lower');
  }
  for (const group of ['search', 'filters']) {
    for (const shape of Object.keys(runs.quarry[0][group])) {
      row(`p50 ${shape}`, `${group}.${shape}.p50`, 'lower', true);
      row(`p99 ${shape}`, `${group}.${shape}.p99`, 'lower', true);
    }
  }
  const fmt = (n) => (n === null ? '-' : Math.abs(n) >= 1e5 ? `${(n / 1024 ** 2).toFixed(1)} Mi` : n.toFixed(2));
  console.log(`\n${o.dataset}: Quarry vs ${o.url}, medians of ${o.runs} alternating runs each`);
  console.log(`${'figure'.padEnd(24)} ${'quarry'.padStart(12)} ${'other'.padStart(12)} ${'ratio'.padStart(7)}`);
  for (const r of rows) console.log(`${r.label.padEnd(24)} ${fmt(r.quarry).padStart(12)} ${fmt(r.other).padStart(12)} ${(r.ratio === null ? '-' : r.ratio.toFixed(2)).padStart(7)}`);
  const times = rows.filter((r) => r.shape && r.ratio !== null);
  const within = (p) => times.filter((r) => r.label.startsWith(p) && r.ratio <= 0.7).length;
  console.log(`\nshapes at most 0.7x: p50 ${within('p50')} of ${times.length / 2}, p99 ${within('p99')} of ${times.length / 2}`);
  const dir = path.join(__dirname, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const out = path.join(dir, `side-${o.dataset}-${Date.now()}.json`);
  fs.writeFileSync(out, JSON.stringify({ dataset: o.dataset, other: o.url, runs, table: rows }, null, 1));
  console.log(`figures written to ${out}`);
  fs.rmSync(tmp, { recursive: true, force: true });
}

main();
