#!/usr/bin/env node
/**
 * Side by side: the same bench (bench/run.js) against Quarry and another server in one
 * sitting, alternating Quarry and the other run by run, then the medians of each and their
 * ratios (Quarry / other: below 1 is better for times, RSS and disk; above 1 for docs/s and QPS).
 *
 *   node bench/side.js --meili-bin BIN [--runs 3] [--dataset npm|pypi] [--rows N] [--queries N]
 *                      [--warmup N] [--concurrency N] [--qps-seconds N] [--fresh-queries N] [--quick]
 *   node bench/side.js --url URL --key KEY --pid PID [--data-dir DIR] ...
 *
 * With --meili-bin both servers are run alike: each run starts a fresh server on a fresh data
 * directory at log level WARN, Quarry's and the reference's, so every query the headline
 * figures count is one that server has never answered. Inside ../shared/tools/with-meilisearch.sh:
 *   node bench/side.js --dataset npm --meili-bin $MEILI_BIN
 * With --url the other server is one already running, for all runs: from the second run on it
 * has answered the same bodies before (in an index since deleted).
 * Writes both sets of runs and the table to bench/results/side-<dataset>-<time>.json.
 * No timing assertions: it reports, it does not judge.
 */
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ONE_BODY } = require('./lib');

function parseArgs(argv) {
  const o = { runs: 3, dataset: 'npm', pass: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--url') o.url = v();
    else if (a === '--key') o.key = v();
    else if (a === '--pid') o.pid = v();
    else if (a === '--data-dir') o.dataDir = v();
    else if (a === '--meili-bin') o.meiliBin = v();
    else if (a === '--runs') o.runs = Number(v());
    else if (a === '--dataset') o.dataset = v();
    else if (
      ['--rows', '--queries', '--warmup', '--concurrency', '--batch', '--qps-seconds', '--fresh-queries'].includes(a)
    )
      o.pass.push(a, v());
    else if (a === '--quick') o.pass.push(a);
    else if (a === '--help') {
      console.log(fs.readFileSync(__filename, 'utf8').split('\n').slice(2, 18).join('\n'));
      process.exit(0);
    } else throw new Error(`unknown option ${a}`);
  }
  if (o.meiliBin && o.url) throw new Error('--meili-bin and --url both name the other server: give one');
  if (!o.meiliBin && (!o.url || !o.key))
    throw new Error('--meili-bin BIN (the reference, started per run), or --url and --key (a running server)');
  return o;
}

function runBench(args, out) {
  const r = spawnSync(process.execPath, [path.join(__dirname, 'run.js'), ...args, '--out', out], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
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
  const other = o.meiliBin
    ? [...base, '--meili-bin', o.meiliBin]
    : [
        ...base,
        '--url',
        o.url,
        '--key',
        o.key,
        ...(o.pid ? ['--pid', o.pid] : []),
        ...(o.dataDir ? ['--data-dir', o.dataDir] : []),
      ];
  const otherName = o.meiliBin ? 'meilisearch' : o.url;
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
  // `shape`: a fresh query shape's time, counted against issue 72's bars.
  const row = (label, p, better, shape = false) => {
    const q = figure('quarry', p);
    const m = figure('other', p);
    rows.push({ label, quarry: q, other: m, ratio: q !== null && m ? q / m : null, better, shape });
  };
  row('indexing docs/s', 'indexing.docsPerSecond', 'higher');
  row('peak RSS bytes', 'memory.peak', 'lower');
  row('disk bytes', 'disk.bytes', 'lower');
  const c = at(runs.quarry[0], 'qps.concurrency');
  row(`QPS at ${c}, fresh`, 'qps.value', 'higher');
  row(`QPS at ${c}, repeated (cache-friendly)`, 'qpsRepeated.value', 'higher');
  if (runs.quarry[0].firstQueries) {
    row('p50 first queries', 'firstQueries.p50', 'lower');
    row('p99 first queries', 'firstQueries.p99', 'lower');
  }
  for (const group of ['search', 'filters']) {
    for (const shape of Object.keys(runs.quarry[0][group])) {
      // A one-body shape is always a repeated query: shown, not counted against the bar.
      const fresh = !ONE_BODY.has(shape);
      const note = fresh ? '' : ' (repeated)';
      row(`p50 ${shape}${note}`, `${group}.${shape}.p50`, 'lower', fresh);
      row(`p99 ${shape}${note}`, `${group}.${shape}.p99`, 'lower', fresh);
    }
  }
  const fmt = (n) => (n === null ? '-' : Math.abs(n) >= 1e5 ? `${(n / 1024 ** 2).toFixed(1)} Mi` : n.toFixed(2));
  console.log(
    `\n${o.dataset}: Quarry vs ${otherName}, medians of ${o.runs} alternating runs each; shapes' p50/p99 are of queries sent once`,
  );
  const w = 36;
  console.log(
    `${'figure'.padEnd(w)} ${'quarry'.padStart(12)} ${otherName.slice(0, 12).padStart(12)} ${'ratio'.padStart(7)}`,
  );
  for (const r of rows)
    console.log(
      `${r.label.padEnd(w)} ${fmt(r.quarry).padStart(12)} ${fmt(r.other).padStart(12)} ${(r.ratio === null ? '-' : r.ratio.toFixed(2)).padStart(7)}`,
    );
  const times = rows.filter((r) => r.shape && r.ratio !== null);
  // Issue 72's bar, on queries never sent before: p50 at most 0.5x, p99 at most 0.7x.
  const within = (p, bar) => times.filter((r) => r.label.startsWith(p) && r.ratio <= bar).length;
  console.log(
    `\nfresh shapes with p50 at most 0.5x: ${within('p50', 0.5)} of ${times.length / 2}; p99 at most 0.7x: ${within('p99', 0.7)} of ${times.length / 2}`,
  );
  const dir = path.join(__dirname, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const out = path.join(dir, `side-${o.dataset}-${Date.now()}.json`);
  fs.writeFileSync(out, JSON.stringify({ dataset: o.dataset, other: otherName, runs, table: rows }, null, 1));
  console.log(`figures written to ${out}`);
  fs.rmSync(tmp, { recursive: true, force: true });
}

main();
