#!/usr/bin/env node
/**
 * Memory under worst-case searches (issue 71): one Quarry instance holds --rows rows of the npm
 * catalogue with `pagination.maxTotalHits` raised to 1,000,000; --clients clients each ask for
 * every document at once (`q: ""`, `limit: 1000000`), --rounds times, while a normal client
 * searches fresh one-word queries one at a time. The server's RSS is sampled every 100 ms from
 * /proc/PID/status.
 *
 *   node bench/memory.js [--rows 100000] [--clients 50] [--rounds 3] [--idle-seconds 5] [--after-seconds 10] [--budget <size>]
 *
 * `--budget` is passed as `--experimental-search-response-budget` (omit it for the default; 0:
 * unlimited). Prints: RSS idle, peak RSS during the burst (and VmHWM), RSS --after-seconds
 * after the burst, how many worst-case searches were answered and refused (503), and the normal
 * client's p50/p99 idle and during the burst. No assertions: it reports.
 */
'use strict';
const http = require('node:http');
const { client, discardQuarry, loadIndex, loadRows, rssOf, startQuarry } = require('./server');

function parseArgs(argv) {
  const o = { rows: 100000, clients: 50, rounds: 3, 'idle-seconds': 5, 'after-seconds': 10, budget: null };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in o)) throw new Error(`unknown option ${argv[i]}`);
    o[key] = key === 'budget' ? argv[i + 1] : Number(argv[i + 1]);
  }
  return o;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const MiB = (b) => Math.round(b / 2 ** 20);
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Number(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)].toFixed(2)) : null;
};

/** One worst-case search on its own connection; the answer is read and counted, not kept. */
function bigSearch(url, key) {
  const u = new URL(url);
  const body = JSON.stringify({ q: '', limit: 1_000_000 });
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: '/indexes/bench/search',
        method: 'POST',
        agent: false,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          Authorization: `Bearer ${key}`,
        },
      },
      (res) => {
        let bytes = 0;
        res.on('data', (c) => (bytes += c.length));
        res.on('end', () => resolve({ status: res.statusCode, bytes }));
        res.on('error', () => resolve({ status: 0, bytes }));
      },
    );
    req.on('error', () => resolve({ status: 0, bytes: 0 }));
    req.end(body);
  });
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const { docs } = await loadRows('npm', o.rows);
  const q = await startQuarry(o.budget === null ? [] : ['--experimental-search-response-budget', o.budget]);
  const api = client(q.url, q.key);
  await loadIndex(api, 'bench', docs, 'npm');
  const { taskUid } = await api(
    'PATCH',
    '/indexes/bench/settings',
    JSON.stringify({ pagination: { maxTotalHits: 1_000_000 } }),
  );
  for (;;) {
    const t = await api('GET', `/tasks/${taskUid}`);
    if (t.status === 'succeeded') break;
    if (t.status === 'failed') throw new Error(JSON.stringify(t.error));
    await sleep(50);
  }
  const words = [
    ...new Set(
      docs
        .flatMap((d) =>
          String(d.summary)
            .toLowerCase()
            .split(/[^a-z]+/),
        )
        .filter((w) => w.length > 3),
    ),
  ];
  let next = 0;
  /** The normal client: one-word searches one at a time until `until()` says stop (times of answered ones; refusals counted). */
  const normal = async (until) => {
    const times = [];
    let refused = 0;
    while (!until()) {
      const t0 = performance.now();
      try {
        await api('POST', '/indexes/bench/search', JSON.stringify({ q: words[next++ % words.length] }));
        times.push(performance.now() - t0);
      } catch (err) {
        if (!/: 503 /.test(err.message)) throw err;
        refused += 1;
        await sleep(10);
      }
    }
    return { searches: times.length, refused, p50: pct(times, 50), p99: pct(times, 99) };
  };

  const out = { rows: docs.length, clients: o.clients, rounds: o.rounds, budget: o.budget ?? 'default' };
  await sleep(1000);
  out.rssIdleMiB = MiB(rssOf(q.pid).now);
  const idleEnd = performance.now() + o['idle-seconds'] * 1000;
  out.normalIdle = await normal(() => performance.now() > idleEnd);

  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(q.pid).now ?? 0)), 100);
  let bursting = true;
  const during = normal(() => !bursting);
  const statuses = {};
  let answeredBytes = 0;
  const t0 = performance.now();
  for (let r = 0; r < o.rounds; r++) {
    const results = await Promise.all(Array.from({ length: o.clients }, () => bigSearch(q.url, q.key)));
    for (const x of results) {
      statuses[x.status] = (statuses[x.status] ?? 0) + 1;
      if (x.status === 200) answeredBytes = Math.max(answeredBytes, x.bytes);
    }
  }
  bursting = false;
  out.burstSeconds = Number(((performance.now() - t0) / 1000).toFixed(1));
  out.normalDuringBurst = await during;
  clearInterval(sampler);
  out.bigSearches = statuses;
  out.bigAnswerMiB = Number((answeredBytes / 2 ** 20).toFixed(1));
  out.rssPeakMiB = MiB(peak);
  out.vmHwmMiB = MiB(rssOf(q.pid).peak);
  await sleep(o['after-seconds'] * 1000);
  out.rssAfterMiB = MiB(rssOf(q.pid).now);
  // A search after the burst still answers.
  out.afterSearch =
    (await api('POST', '/indexes/bench/search', JSON.stringify({ q: words[0] }))).estimatedTotalHits !== undefined;

  await discardQuarry(q);
  console.log(JSON.stringify(out, null, 1));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
