#!/usr/bin/env node
/**
 * Searches at a user's pace: the seeded query mix of `run.js`, one query every `--gap-ms`
 * (default 200) instead of back to back, each query sent once. A tight loop keeps the
 * allocator's and the kernel's state warm between queries; spaced queries meet what a real
 * server sees between users (memory handed back, pages not yet mapped, threads asleep).
 *
 *   node bench/paced.js                                # starts Quarry on a temp dir, npm rows
 *   node bench/paced.js --url URL --key KEY            # any server with this API
 *   node bench/paced.js [--dataset npm|pypi] [--rows 100000] [--per-shape 10] [--gap-ms 200]
 *                       [--warmup 100]
 *
 * A self-started Quarry is stopped after the load and started again on the same data, as a
 * server is after a restart or a deploy: its searches then run in a fresh process.
 *
 * Started by this script, Quarry inherits the environment: `MIMALLOC_ALLOW_THP=1 node
 * bench/paced.js` runs it with transparent huge pages left on (see `crates/node/src/lib.rs`).
 */
'use strict';

const { client, discardQuarry, loadIndex, loadRows, startQuarry, stopQuarry } = require('./server');
const { mulberry32, percentile, queryMix } = require('./lib');

function parseArgs(argv) {
  const o = { dataset: 'npm', rows: 100000, perShape: 10, gapMs: 200, settleMs: 3000, warmup: 100 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--url') o.url = v();
    else if (a === '--key') o.key = v();
    else if (a === '--dataset') o.dataset = v();
    else if (a === '--rows') o.rows = Number(v());
    else if (a === '--per-shape') o.perShape = Number(v());
    else if (a === '--gap-ms') o.gapMs = Number(v());
    else if (a === '--settle-ms') o.settleMs = Number(v());
    else if (a === '--warmup') o.warmup = Number(v());
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const o = parseArgs(process.argv.slice(2));
  let started = o.url ? null : await startQuarry();
  let api = client(o.url ?? started.url, o.key ?? started?.key);
  const uid = `paced-${Date.now()}`;
  try {
    const { docs } = await loadRows(o.dataset, o.rows);
    await loadIndex(api, uid, docs, o.dataset);
    if (started) {
      await stopQuarry(started);
      started = await startQuarry([], started.dbPath);
      api = client(started.url, started.key);
    }
    // First queries of another seed, back to back, as `run.js` does: the timed ones then meet
    // a running server whose JavaScript is compiled, not one in its first seconds.
    const warm = queryMix(docs, mulberry32(12), Math.ceil(o.warmup / 8));
    for (const s of Object.keys(warm))
      for (const q of warm[s]) await api('POST', `/indexes/${uid}/search`, JSON.stringify(q.body));
    await sleep(o.settleMs);
    const mix = queryMix(docs, mulberry32(11), o.perShape);
    const shapes = Object.keys(mix);
    const times = Object.fromEntries(shapes.map((s) => [s, { client: [], server: [] }]));
    // Shapes interleaved, so no shape meets the server only at its start or its end.
    for (let i = 0; i < o.perShape; i++) {
      for (const s of shapes) {
        const t0 = process.hrtime.bigint();
        const r = await api('POST', `/indexes/${uid}/search`, JSON.stringify(mix[s][i].body));
        times[s].client.push(Number(process.hrtime.bigint() - t0) / 1e6);
        times[s].server.push(r.processingTimeMs);
        await sleep(o.gapMs);
      }
    }
    const f = (x) => x.toFixed(2).padStart(7);
    console.log(`${o.dataset}, ${docs.length} rows, one query every ${o.gapMs} ms (${o.url ?? 'self-started quarry'})`);
    console.log(`${'shape'.padEnd(12)}  p50 ms  p99 ms  server mean ms`);
    const all = [];
    for (const s of shapes) {
      const { client: c, server } = times[s];
      all.push(...c);
      console.log(
        `${s.padEnd(12)} ${f(percentile(c, 50))} ${f(percentile(c, 99))} ${f(server.reduce((a, b) => a + b, 0) / server.length)}`,
      );
    }
    console.log(`${'all'.padEnd(12)} ${f(percentile(all, 50))} ${f(percentile(all, 99))}`);
  } finally {
    if (o.url) await api('DELETE', `/indexes/${uid}`).catch(() => {});
    if (started) {
      await discardQuarry(started);
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
