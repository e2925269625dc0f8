#!/usr/bin/env node
/**
 * The embedded library against the server, on the same data and the same queries: Quarry
 * opened in this process (`Quarry.open`, no HTTP) and Quarry as a server over loopback HTTP
 * (a keep-alive client), each on its own copy of the catalogue rows. Reports p50/p99 at
 * concurrency 1 and QPS at --concurrency, per side, with the ratio.
 *
 *   node bench/library.js [--dataset npm|pypi] [--rows 100000] [--queries 100] [--concurrency 8] [--qps-seconds 10]
 *
 * Writes the figures to bench/results/library-<dataset>-<time>.json. No timing assertions.
 */
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { mulberry32, percentile, queryMix } = require('./lib');
const { DATASETS, client, loadRows, startQuarry, waitTask } = require('./server');
const { Quarry } = require('../dist/index.js');

function parseArgs(argv) {
  const o = { dataset: 'npm', rows: 100000, queries: 100, concurrency: 8, qpsSeconds: 10, seed: 42 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i].replace(/^--/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
    o[k] = k === 'dataset' ? argv[++i] : Number(argv[++i]);
  }
  return o;
}

/** p50/p99 (ms) of `queries` run one at a time, after one warm-up pass. */
async function latencies(search, queries) {
  for (const q of queries) await search(q);
  const ms = [];
  for (const q of queries) {
    const t0 = process.hrtime.bigint();
    await search(q);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return { p50: percentile(ms, 50), p99: percentile(ms, 99) };
}

/** Searches per second with `concurrency` loops over `queries` for `seconds`. */
async function qps(search, queries, concurrency, seconds) {
  const end = Date.now() + seconds * 1000;
  let done = 0;
  let next = 0;
  const loop = async () => {
    while (Date.now() < end) {
      await search(queries[next++ % queries.length]);
      done++;
    }
  };
  const t0 = Date.now();
  await Promise.all(Array.from({ length: concurrency }, loop));
  return (done * 1000) / (Date.now() - t0);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const ds = DATASETS[o.dataset];
  const { docs } = await loadRows(o.dataset, o.rows);
  const ndjson = docs.map((d) => JSON.stringify(d)).join('\n');
  const mix = queryMix(docs, mulberry32(o.seed), o.queries);
  const queries = Object.values(mix)
    .flat()
    .map((q) => q.body);
  process.stdout.write(
    `${docs.length} ${o.dataset} rows, ${queries.length} queries of ${Object.keys(mix).length} shapes\n`,
  );

  // The library, in this process.
  const libDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-lib-'));
  const quarry = await Quarry.open({ dbPath: libDir, logLevel: 'error' });
  const index = quarry.index('bench');
  await index.updateSettings(ds.settings).waitTask();
  const added = await index.addDocuments(ndjson, { format: 'ndjson' }).waitTask();
  if (added.status !== 'succeeded') throw new Error(JSON.stringify(added.error));
  const library = (body) => index.search(undefined, body);

  // The server, over loopback HTTP.
  const server = await startQuarry();
  const api = client(server.url, server.key);
  const settled = await api('PATCH', '/indexes/bench/settings', JSON.stringify(ds.settings));
  await waitTask(api, settled.taskUid);
  const enq = await api('POST', '/indexes/bench/documents', ndjson, 'application/x-ndjson');
  await waitTask(api, enq.taskUid);
  const http = (body) => api('POST', '/indexes/bench/search', JSON.stringify(body));

  const rows = [];
  try {
    for (const [name, search] of [
      ['library', library],
      ['server', http],
    ]) {
      const lat = await latencies(search, queries);
      const q = await qps(search, queries, o.concurrency, o.qpsSeconds);
      rows.push({ side: name, p50Ms: lat.p50, p99Ms: lat.p99, qps: q });
    }
  } finally {
    server.child.kill('SIGTERM');
    await quarry.close();
    fs.rmSync(libDir, { recursive: true, force: true });
    fs.rmSync(server.dbPath, { recursive: true, force: true });
  }
  const [lib, srv] = rows;
  const fmt = (n) => n.toFixed(2);
  process.stdout.write(`\n| | library (in-process) | server (HTTP) | library / server |\n|---|---|---|---|\n`);
  process.stdout.write(`| p50 ms (c=1) | ${fmt(lib.p50Ms)} | ${fmt(srv.p50Ms)} | ${fmt(lib.p50Ms / srv.p50Ms)} |\n`);
  process.stdout.write(`| p99 ms (c=1) | ${fmt(lib.p99Ms)} | ${fmt(srv.p99Ms)} | ${fmt(lib.p99Ms / srv.p99Ms)} |\n`);
  process.stdout.write(
    `| QPS at ${o.concurrency} | ${lib.qps.toFixed(0)} | ${srv.qps.toFixed(0)} | ${fmt(lib.qps / srv.qps)}x |\n`,
  );
  const out = path.join(
    __dirname,
    'results',
    `library-${o.dataset}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
  );
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify({ options: o, rows }, null, 2));
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
