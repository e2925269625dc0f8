#!/usr/bin/env node
/**
 * The latency floor of this machine: a loop of sequential one-word searches on a small index
 * (one keep-alive socket), its percentiles as the client sees them, and how many of the slow
 * requests the server itself timed as slow. When a slow request reports a small
 * `processingTimeMs`, its time went outside the server's measured path (scheduling, the
 * client), and no engine change removes it: that is the floor under every shape's p99.
 *
 *   node bench/tails.js                               # starts Quarry on a temp dir
 *   node bench/tails.js --url URL --key KEY           # any server with this API
 *   node bench/tails.js [--docs 2000] [--queries 3000] [--settle-ms 3000] [--slow-ms 4]
 */
'use strict';

const { client, startQuarry, waitTask } = require('./server');
const { percentile } = require('./lib');

function parseArgs(argv) {
  const o = { docs: 2000, queries: 3000, settleMs: 3000, slowMs: 4 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--url') o.url = v();
    else if (a === '--key') o.key = v();
    else if (a === '--docs') o.docs = Number(v());
    else if (a === '--queries') o.queries = Number(v());
    else if (a === '--settle-ms') o.settleMs = Number(v());
    else if (a === '--slow-ms') o.slowMs = Number(v());
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const started = o.url ? null : await startQuarry();
  const api = client(o.url ?? started.url, o.key ?? started?.key);
  try {
    const uid = `tails-${Date.now()}`;
    const docs = Array.from({ length: o.docs }, (_, i) => ({ id: i, t: `word${i % 50} other${i % 7} thing${i}` }));
    await waitTask(api, (await api('POST', `/indexes/${uid}/documents`, JSON.stringify(docs))).taskUid);
    await new Promise((r) => setTimeout(r, o.settleMs));
    const latencies = [];
    const slow = [];
    for (let i = 0; i < o.queries; i++) {
      const t0 = process.hrtime.bigint();
      const r = await api('POST', `/indexes/${uid}/search`, JSON.stringify({ q: `word${i % 50}` }));
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      latencies.push(ms);
      if (ms > o.slowMs) slow.push(r.processingTimeMs);
    }
    latencies.sort((a, b) => a - b);
    const p = (q) => percentile(latencies, q).toFixed(2);
    console.log(`${o.queries} one-word searches on ${o.docs} documents (${o.url ?? 'self-started quarry'})`);
    console.log(`client ms: p50 ${p(50)}  p90 ${p(90)}  p99 ${p(99)}  p99.9 ${p(99.9)}  max ${p(100)}`);
    const inServer = slow.filter((ms) => ms >= o.slowMs - 1).length;
    console.log(
      `${slow.length} requests over ${o.slowMs} ms at the client; the server timed ${inServer} of them at ${o.slowMs - 1} ms or more`,
    );
  } finally {
    started?.child.kill();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
