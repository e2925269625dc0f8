#!/usr/bin/env node
/**
 * The timing half of `bench/run.js`, in a process of its own: it reads a plan (the server, the
 * index, the query bodies of every shape) as JSON on stdin, sends them, and writes the figures
 * as JSON on stdout. `run.js` holds the catalogue's rows (886k objects for PyPI, about 200 MB
 * of heap); a client holding them spent 1 to 3 ms in each of its own young-generation
 * collections (`node --trace-gc bench/run.js`), about two per shape of 300 queries, and each
 * landed in whichever answer it was waiting for: a shape's p99 is its third slowest send.
 * This process holds the query bodies only, and reads of each answer only what it needs
 * (`processingTimeMs`), so it leaves little garbage behind and collects it in well under a
 * millisecond. Both servers are timed by the same client.
 *
 *   echo '{"url":...,"key":...,"index":...,"warm":[...],"shapes":{...},"filters":{...},
 *          "fresh":[...],"repeated":[...],"concurrency":8,"qpsSeconds":10,"pid":123}' | node bench/timer.js
 *
 * `fresh` are sent once each (the headline QPS), `repeated` cycled (the cache-friendly QPS).
 */
'use strict';
const http = require('node:http');
const { percentile, quietClient } = require('./lib');
const { cpuMsOf } = require('./server');

const NEEDLE = Buffer.from('"processingTimeMs":');

/**
 * A keep-alive search client: resolves with the answer's `processingTimeMs` (null when it has
 * none), read from the bytes without parsing the hits.
 */
function searcher(url, key, index) {
  const u = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const path = `/indexes/${encodeURIComponent(index)}/search`;
  return (body) =>
    new Promise((resolve, reject) => {
      const headers = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) };
      if (key) headers.Authorization = `Bearer ${key}`;
      const req = http.request({ host: u.hostname, port: u.port, path, method: 'POST', headers, agent }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
          if (res.statusCode >= 400)
            return reject(new Error(`search: ${res.statusCode} ${bytes.toString().slice(0, 300)}`));
          // The last: hits (documents) come before it.
          const at = bytes.lastIndexOf(NEEDLE);
          resolve(at < 0 ? null : parseFloat(bytes.toString('latin1', at + NEEDLE.length, at + NEEDLE.length + 24)));
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
}

/** Sends `bodies` (JSON texts) `concurrency` at a time: each one's client time and `processingTimeMs`. */
async function timeQueries(search, bodies, concurrency) {
  const lat = [];
  const proc = [];
  let next = 0;
  async function loop() {
    while (next < bodies.length) {
      const body = bodies[next++];
      const t0 = process.hrtime.bigint();
      const ms = await search(body);
      lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
      proc.push(ms ?? 0);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop));
  return { lat, proc };
}

/** Latency figures per query shape, at concurrency 1. */
async function timeShapes(search, shapes) {
  const out = {};
  for (const [shape, bodies] of Object.entries(shapes)) {
    process.stderr.write(`  querying ${shape}...          \r`);
    const { lat, proc } = await timeQueries(search, bodies, 1);
    out[shape] = {
      n: lat.length,
      p50: percentile(lat, 50),
      p95: percentile(lat, 95),
      p99: percentile(lat, 99),
      serverMsAvg: proc.reduce((a, b) => a + b, 0) / Math.max(proc.length, 1),
    };
  }
  return out;
}

/**
 * A QPS phase at `concurrency` over `bodies`, run in slices (`slice(seconds)`), with the CPU
 * each query cost. With `cycle`, `bodies` are sent over and over (the repeated mix); without,
 * each at most once across the slices, and a slice ends early when they run out (`exhausted`:
 * ask for more with `--fresh-queries`).
 */
function qpsPhase(search, bodies, concurrency, pid, cycle) {
  let done = 0;
  let i = 0;
  let elapsed = 0;
  let serverCpu = 0;
  let clientCpu = 0;
  let exhausted = false;
  return {
    async slice(seconds) {
      const serverCpu0 = pid ? cpuMsOf(pid) : null;
      const clientCpu0 = process.cpuUsage();
      const t0 = Date.now();
      const end = t0 + seconds * 1000;
      async function loop() {
        while (Date.now() < end && (cycle || i < bodies.length)) {
          await search(bodies[i++ % bodies.length]);
          done++;
        }
      }
      await Promise.all(Array.from({ length: concurrency }, loop));
      elapsed += (Date.now() - t0) / 1000;
      if (serverCpu0 !== null) serverCpu += cpuMsOf(pid) - serverCpu0;
      const c = process.cpuUsage(clientCpu0);
      clientCpu += (c.user + c.system) / 1000;
      if (!cycle && i >= bodies.length) exhausted = true;
    },
    result: () => ({
      concurrency,
      value: done / elapsed,
      queries: done,
      distinctBodies: Math.min(done, bodies.length),
      seconds: elapsed,
      exhausted,
      serverCpuMsPerQuery: pid ? serverCpu / done : null,
      clientCpuMsPerQuery: clientCpu / done,
    }),
  };
}

/**
 * The fresh and the repeated QPS, `seconds` each, in alternating slices of about 2 s (fresh
 * first), so a change of the machine's load during the phase touches both alike.
 */
async function measureQps(search, plan, texts) {
  const fresh = qpsPhase(search, texts(plan.fresh), plan.concurrency, plan.pid, false);
  const repeated = qpsPhase(search, texts(plan.repeated), plan.concurrency, plan.pid, true);
  const slices = Math.max(1, Math.round(plan.qpsSeconds / 2));
  for (let k = 0; k < slices; k++) {
    process.stderr.write(
      `  measuring QPS at concurrency ${plan.concurrency}, fresh and repeated, slice ${k + 1}/${slices}...\r`,
    );
    await fresh.slice(plan.qpsSeconds / slices);
    await repeated.slice(plan.qpsSeconds / slices);
  }
  process.stderr.write('\n');
  return { fresh: fresh.result(), repeated: repeated.result() };
}

/** Runs a plan (see the module doc) and returns its figures. */
async function run(plan) {
  const search = searcher(plan.url, plan.key, plan.index);
  const texts = (bodies) => bodies.map((b) => JSON.stringify(b));
  const shapesOf = (mix) => Object.fromEntries(Object.entries(mix).map(([k, v]) => [k, texts(v)]));
  const out = {};
  if (plan.warm.length > 0) {
    process.stderr.write(`  ${plan.warm.length} first queries...          \r`);
    const { lat } = await timeQueries(search, texts(plan.warm), 1);
    out.firstQueries = { n: lat.length, p50: percentile(lat, 50), p99: percentile(lat, 99) };
  }
  out.search = await timeShapes(search, shapesOf(plan.shapes));
  out.filters = await timeShapes(search, shapesOf(plan.filters));
  const qps = await measureQps(search, plan, texts);
  out.qps = qps.fresh;
  out.qpsRepeated = qps.repeated;
  return out;
}

async function main() {
  quietClient();
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  const figures = await run(JSON.parse(Buffer.concat(chunks).toString()));
  process.stdout.write(JSON.stringify(figures));
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

module.exports = { run };
