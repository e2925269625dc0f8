#!/usr/bin/env node
/**
 * Replication bench (issue 67): what the replicated task log costs and how it behaves when a
 * machine is lost. Three NATS servers (JetStream, three copies of the log) and Quarry
 * instances on this machine's loopback.
 *
 *   node bench/replication.js [--dataset pypi|npm] [--rows N] [--batch 50000] [--runs 3] [--lag-rows 100000]
 *                             [--lag-batches 60] [--phases indexing,lag,failover] [--out file.json]
 *
 * 1. indexing: the catalogue loaded into one instance without replication, then into one
 *    instance of a replicated group (the log on three NATS servers), in the same sitting,
 *    --runs times each, alternating which goes first (medians): documents per second from the
 *    first POST to the last task succeeded on that instance.
 * 2. lag: a group of three instances holds --lag-rows rows; a batch of 1,000 documents (new
 *    and changed) is sent every second, through each instance in turn, while four clients
 *    search the three instances; for each batch, the time from its 202 to `succeeded` on
 *    every instance, and the searches' latency meanwhile. The same on one instance without
 *    replication first: what the engine alone takes (its merges of segments included).
 * 3. failover: one small write every 20 ms, sent to the instances in turn without waiting for
 *    the answers to the earlier ones; the stream leader's NATS server is killed,
 *    later one Quarry instance: the longest time between two acknowledged writes around each.
 *
 * On two cores three instances share the CPU that one has alone in (1): the group's figures
 * in (2) and (3) are those of a crowded machine. No timing assertions: it reports.
 */
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { NatsCluster, natsServerBinary, SKIP_REASON } = require('../scripts/nats-cluster');
const { client, cpuMsOf, discardQuarry, loadIndex, loadRows, startQuarry, waitTask } = require('./server');

function parseArgs(argv) {
  const o = {
    dataset: 'pypi',
    rows: 0,
    batch: 50000,
    lagRows: 100000,
    lagBatches: 60,
    runs: 3,
    phases: ['indexing', 'lag', 'failover'],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--dataset') o.dataset = v();
    else if (a === '--rows') o.rows = Number(v());
    else if (a === '--batch') o.batch = Number(v());
    else if (a === '--lag-rows') o.lagRows = Number(v());
    else if (a === '--lag-batches') o.lagBatches = Number(v());
    else if (a === '--phases') o.phases = v().split(',');
    else if (a === '--runs') o.runs = Number(v());
    else if (a === '--out') o.out = v();
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const pct = (xs, p) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Stops and removes an instance this bench started. */
async function discard(n) {
  n.stopping = true;
  await discardQuarry(n).catch(() => undefined);
}

/** Starts a replicated instance named `name` on the cluster's log (an instance that dies unasked is reported). */
async function replicated(cluster, name, extra = []) {
  const q = await startQuarry([
    '--replication-nats',
    cluster.urls(),
    '--replication-node',
    name,
    '--replication-snapshot-interval',
    '0',
    ...extra,
  ]);
  q.child.once('exit', (code, signal) => {
    if (!q.stopping) console.error(`instance ${name} exited (${code ?? signal})`);
  });
  return q;
}

/** One load of `docs` into one instance without replication; seconds and the instance's CPU. */
async function loadSingle(o, docs) {
  const single = await startQuarry();
  const seconds = await loadIndex(client(single.url, single.key), 'bench', docs, o.dataset, { batch: o.batch });
  const cpu = cpuMsOf(single.pid);
  await discard(single);
  return { seconds, quarryCpuSeconds: Number((cpu / 1000).toFixed(1)) };
}

/** One load into one instance of a replicated group (the log on three NATS servers). */
async function loadReplicated(o, docs) {
  const cluster = await NatsCluster.start(3);
  const natsCpu0 = cluster.servers.reduce((sum, s) => sum + cpuMsOf(s.child.pid), 0);
  const one = await replicated(cluster, 'r1');
  const seconds = await loadIndex(client(one.url, one.key), 'bench', docs, o.dataset, { batch: o.batch });
  const cpu = cpuMsOf(one.pid);
  const natsCpu = cluster.servers.reduce((sum, s) => sum + cpuMsOf(s.child.pid), 0) - natsCpu0;
  await discard(one);
  await cluster.stop();
  return {
    seconds,
    quarryCpuSeconds: Number((cpu / 1000).toFixed(1)),
    natsCpuSeconds: Number((natsCpu / 1000).toFixed(1)),
  };
}

/** `--runs` loads of each, alternating which goes first; medians and every run. */
async function indexing(o, docs) {
  const single = [];
  const repl = [];
  for (let r = 0; r < o.runs; r++) {
    if (r % 2 === 0) {
      single.push(await loadSingle(o, docs));
      repl.push(await loadReplicated(o, docs));
    } else {
      repl.push(await loadReplicated(o, docs));
      single.push(await loadSingle(o, docs));
    }
  }
  const median = (xs) => pct(xs, 50);
  const s = median(single.map((x) => x.seconds));
  const rep = median(repl.map((x) => x.seconds));
  return {
    rows: docs.length,
    single: { seconds: s, docsPerSecond: Math.round(docs.length / s), runs: single },
    replicated: { seconds: rep, docsPerSecond: Math.round(docs.length / rep), runs: repl },
    ratio: Number((s / rep).toFixed(2)),
  };
}

async function group(cluster) {
  const nodes = [];
  for (const name of ['g1', 'g2', 'g3']) {
    const n = await replicated(cluster, name);
    // The same object the exit listener reads `stopping` from, with its name and a client.
    nodes.push(Object.assign(n, { name, api: reconnecting(client(n.url, n.key)) }));
  }
  return nodes;
}

/**
 * A request on a keep-alive socket the server closed while it sat idle (the instance closes
 * them after 30 s) fails at once with ECONNRESET: it is sent once more, on a new socket.
 */
function reconnecting(api) {
  return (...args) =>
    api(...args).catch((err) =>
      err && (err.code === 'ECONNRESET' || err.code === 'EPIPE') ? api(...args) : Promise.reject(err),
    );
}

/** Waits until task `uid` succeeded on every instance; the time it did on the last one. */
async function succeededEverywhere(nodes, uid) {
  let last = 0;
  await Promise.all(
    nodes.map(async (n) => {
      await waitTask(n.api, uid);
      last = Math.max(last, performance.now());
    }),
  );
  return last;
}

/**
 * The lag workload on `nodes`: `--lag-rows` rows loaded, then a 1,000-document batch every
 * second through each instance in turn while four clients search them; per batch, the time
 * from its 202 to `succeeded` on every instance.
 */
async function lagOn(o, docs, nodes) {
  const base = docs.slice(0, Math.min(o.lagRows, docs.length));
  await loadIndex(nodes[0].api, 'bench', base, o.dataset, { batch: o.batch });
  for (const n of nodes) await waitTask(n.api, (await nodes[0].api('GET', '/tasks?limit=1')).results[0].uid);
  // Four searching clients on the instances, timing each answer.
  const words = base.slice(0, 2000).flatMap((d) =>
    String(d.name)
      .split(/[-_. ]/)
      .filter((w) => w.length > 2),
  );
  const searches = [];
  let searching = true;
  let searchErrors = 0;
  const searchers = Array.from({ length: 4 }, async (_, c) => {
    let k = c;
    while (searching) {
      const n = nodes[k++ % nodes.length];
      const t0 = performance.now();
      try {
        await n.api('POST', '/indexes/bench/search', JSON.stringify({ q: words[(k * 7919) % words.length] }));
        searches.push(performance.now() - t0);
      } catch {
        searchErrors++;
      }
    }
  });
  const lags = [];
  let next = docs.length + 1;
  for (let b = 0; b < o.lagBatches; b++) {
    const started = performance.now();
    // Half new documents, half changed ones.
    const batch = [];
    for (let i = 0; i < 500; i++) batch.push({ ...docs[(b * 500 + i) % base.length], id: next++ });
    for (let i = 0; i < 500; i++) batch.push({ ...base[(b * 977 + i * 13) % base.length], summary: `changed ${b}` });
    const body = batch.map((d) => JSON.stringify(d)).join('\n');
    const via = nodes[b % nodes.length];
    const t0 = performance.now();
    const { taskUid } = await via.api('POST', '/indexes/bench/documents', body, 'application/x-ndjson');
    const acked = performance.now();
    const done = await succeededEverywhere(nodes, taskUid);
    lags.push({ ack: acked - t0, lag: done - acked });
    const wait = 1000 - (performance.now() - started);
    if (wait > 0) await sleep(wait);
  }
  searching = false;
  await Promise.all(searchers);
  const l = lags.map((x) => x.lag);
  const a = lags.map((x) => x.ack);
  return {
    instances: nodes.length,
    baseRows: base.length,
    batches: lags.length,
    lagMs: {
      p50: Math.round(pct(l, 50)),
      p90: Math.round(pct(l, 90)),
      p99: Math.round(pct(l, 99)),
      max: Math.round(Math.max(...l)),
    },
    ackMs: { p50: Number(pct(a, 50).toFixed(1)), p99: Number(pct(a, 99).toFixed(1)) },
    searchMs: {
      count: searches.length,
      errors: searchErrors,
      p50: Number(pct(searches, 50).toFixed(2)),
      p99: Number(pct(searches, 99).toFixed(2)),
    },
  };
}

/** The lag workload on one instance without replication, then on a group of three. */
async function lag(o, docs) {
  const single = await startQuarry();
  let alone;
  try {
    alone = await lagOn(o, docs, [{ ...single, name: 'single', api: reconnecting(client(single.url, single.key)) }]);
  } finally {
    await discard(single);
  }
  const cluster = await NatsCluster.start(3);
  const nodes = await group(cluster);
  try {
    return { singleInstance: alone, group: await lagOn(o, docs, nodes) };
  } finally {
    for (const n of nodes) await discard(n);
    await cluster.stop();
  }
}

/**
 * Sends one small document every 20 ms through the instances in turn, without waiting for the
 * previous answers (a client that waits would measure its own timeout, not the group); records
 * the time of each acknowledgement. A write an instance does not answer within 10 s counts as
 * lost for this figure.
 */
function writer(nodes) {
  const acks = [];
  const pending = new Set();
  let running = true;
  let n = 0;
  const down = new Set();
  const loop = (async () => {
    while (running) {
      const live = nodes.filter((x) => !down.has(x.name));
      const node = live[n++ % live.length];
      const write = Promise.race([
        node.api('POST', '/indexes/failover/documents', JSON.stringify([{ id: n, at: Date.now() }])),
        sleep(10000).then(() => Promise.reject(new Error('no answer'))),
      ])
        .then(() => acks.push(performance.now()))
        .catch(() => undefined);
      pending.add(write);
      write.finally(() => pending.delete(write));
      await sleep(20);
    }
  })();
  return {
    acks,
    markDown: (name) => down.add(name),
    stop: async () => {
      running = false;
      await loop;
      await Promise.all([...pending]);
      acks.sort((a, b) => a - b);
    },
  };
}

/** The longest time without an acknowledged write in [from, from + windowMs]. */
function longestGap(acks, from, windowMs) {
  const inWindow = acks.filter((t) => t >= from - 1000 && t <= from + windowMs);
  let gap = 0;
  for (let i = 1; i < inWindow.length; i++) gap = Math.max(gap, inWindow[i] - inWindow[i - 1]);
  return Math.round(gap);
}

async function failover() {
  const cluster = await NatsCluster.start(3);
  const nodes = await group(cluster);
  try {
    await waitTask(
      nodes[0].api,
      (await nodes[0].api('POST', '/indexes/failover/documents', JSON.stringify([{ id: 0 }]))).taskUid,
    );
    const w = writer(nodes);
    await sleep(3000);
    const out = { steadyGapMs: longestGap(w.acks, performance.now() - 2500, 2500) };
    // A NATS server that does not lead the log's stream, then the one that does.
    for (const role of ['follower', 'leader']) {
      const { leader } = await cluster.stream('quarry');
      const victim =
        role === 'leader' ? cluster.indexOf(leader) : [0, 1, 2].find((i) => cluster.servers[i].name !== leader);
      const at = performance.now();
      await cluster.kill(victim);
      await sleep(12000);
      out[`nats${role === 'leader' ? 'Leader' : 'Follower'}Killed`] = {
        server: cluster.servers[victim].name,
        longestPauseMs: longestGap(w.acks, at, 12000),
      };
      cluster.restart(victim);
      await cluster.ready();
      await sleep(5000);
    }
    const victim = nodes[1];
    const at = performance.now();
    w.markDown(victim.name);
    victim.stopping = true;
    victim.child.kill('SIGKILL');
    await sleep(8000);
    out.quarryInstanceKilled = { instance: victim.name, longestPauseMs: longestGap(w.acks, at, 8000) };
    await w.stop();
    out.acknowledged = w.acks.length;
    return out;
  } finally {
    for (const n of nodes) await discard(n);
    await cluster.stop();
  }
}

/**
 * The same kill of the stream's leader with JetStream alone (a client publishing to a stream
 * of three copies, no Quarry): the pause NATS itself takes to elect a new leader, which is
 * 4 to 9 s in nats-server (its Raft election timeout, fixed in its code).
 */
async function rawFailover() {
  const { connect } = require('@nats-io/transport-node');
  const { jetstream, jetstreamManager } = require('@nats-io/jetstream');
  const cluster = await NatsCluster.start(3);
  const nc = await connect({
    servers: cluster.urls().split(','),
    ignoreClusterUpdates: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    pingInterval: 1000,
    maxPingOut: 2,
  });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'raw', subjects: ['raw.log'], num_replicas: 3 });
    const js = jetstream(nc);
    const acks = [];
    let running = true;
    let n = 0;
    const pending = new Set();
    const loop = (async () => {
      while (running) {
        // Sent every 20 ms without waiting for the earlier answers, as the group's writer is.
        const p = js
          .publish('raw.log', 'x', { msgID: `m${n++}`, timeout: 10000 })
          .then(() => acks.push(performance.now()))
          .catch(() => undefined);
        pending.add(p);
        p.finally(() => pending.delete(p));
        await sleep(20);
      }
    })();
    await sleep(2000);
    const leader = (await jsm.streams.info('raw')).cluster.leader;
    const at = performance.now();
    await cluster.kill(cluster.indexOf(leader));
    await sleep(12000);
    running = false;
    await loop;
    await Promise.all([...pending]);
    acks.sort((a, b) => a - b);
    return { server: leader, longestPauseMs: longestGap(acks, at, 12000) };
  } finally {
    await nc.close();
    await cluster.stop();
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (!natsServerBinary()) throw new Error(SKIP_REASON);
  const { docs } = await loadRows(o.dataset, o.rows);
  const out = {
    dataset: o.dataset,
    machine: `${os.cpus().length} cores, ${Math.round(os.totalmem() / 1024 ** 3)} GiB`,
    at: new Date().toISOString(),
  };
  if (o.phases.includes('indexing')) {
    out.indexing = await indexing(o, docs);
    console.log('indexing', JSON.stringify(out.indexing));
  }
  if (o.phases.includes('lag')) {
    out.lag = await lag(o, docs);
    console.log('lag', JSON.stringify(out.lag));
  }
  if (o.phases.includes('failover')) {
    out.failover = await failover();
    out.failover.jetStreamAloneLeaderKilled = await rawFailover();
    console.log('failover', JSON.stringify(out.failover));
  }
  const file = o.out ?? path.join(__dirname, 'results', `replication-${o.dataset}-${Date.now()}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(out, null, 2));
  console.log(`written to ${file}`);
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
