#!/usr/bin/env node
/**
 * Time to search (issue 72, "Live updates"): how soon a change is found, and what writes cost
 * the searches meanwhile. For each server, started fresh on a temporary data directory at log
 * level WARN (Quarry, then the reference Meilisearch when --meili-bin names it):
 *
 * 1. the first --rows rows of the catalogue are loaded (the base);
 * 2. idle: --clients clients search back to back for --idle-seconds (after as many seconds
 *    untimed, so the figures are a running server's), each query body sent once;
 * 3. writes: a batch of --batch-size documents, half new (the rows after the base) and half
 *    changed (base rows no other batch changes, with their summary changed), is sent every second, --batches times,
 *    while the same clients keep searching. Every document of a batch carries a token found in
 *    no other batch (twelve random letters); a poller searches for the oldest batch not yet
 *    found (`"token"`, a one-word phrase: no typo and no prefix match) every --poll-ms, until
 *    the answer counts the whole batch. Time to search is from the start of that batch's POST
 *    to the answer that found it; batches are found in the order they were sent (a server
 *    applies them in that order), so a found batch's successor is asked for at once.
 *
 * Reported per server: time to search p50/p90/p99/max (and batches not found within
 * --timeout-s of their POST), the POST's own answer time, and search p50/p99 idle and during
 * writes (from the first POST until the last batch was found) with their ratio; side by side
 * with ratios Quarry / Meilisearch when both ran.
 *
 *   node bench/live.js [--dataset npm|pypi] [--rows 100000] [--batches 60] [--batch-size 1000]
 *                      [--clients 4] [--idle-seconds 10] [--poll-ms 10] [--timeout-s 120]
 *                      [--meili-bin BIN] [--only quarry|meilisearch] [--out file.json]
 *
 * Both, inside ../shared/tools/with-meilisearch.sh:
 *   node bench/live.js --dataset npm --meili-bin $MEILI_BIN
 *
 * The searching clients draw fresh bodies (bench/lib.js `freshQueries`, the keyword and
 * search-box shapes); when a long run uses them all up they are sent again, and the figures
 * say how many were distinct. No timing assertions: it reports, it does not judge.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { drawers, freshQueries, mulberry32, percentile, quietClient } = require('./lib');
const { client, discardQuarry, loadIndex, loadRows, startMeilisearch, startQuarry } = require('./server');

function parseArgs(argv) {
  const o = {
    dataset: 'npm',
    rows: 100000,
    batches: 60,
    batchSize: 1000,
    clients: 4,
    idleSeconds: 10,
    pollMs: 10,
    timeoutS: 120,
    only: null,
  };
  const numeric = {
    '--rows': 'rows',
    '--batches': 'batches',
    '--batch-size': 'batchSize',
    '--clients': 'clients',
    '--idle-seconds': 'idleSeconds',
    '--poll-ms': 'pollMs',
    '--timeout-s': 'timeoutS',
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (numeric[a]) o[numeric[a]] = Number(v());
    else if (a === '--dataset') o.dataset = v();
    else if (a === '--meili-bin') o.meiliBin = v();
    else if (a === '--only') o.only = v();
    else if (a === '--out') o.out = v();
    else if (a === '--help') {
      console.log(fs.readFileSync(__filename, 'utf8').split('\n').slice(2, 32).join('\n'));
      process.exit(0);
    } else throw new Error(`unknown option ${a}`);
  }
  if (!['npm', 'pypi'].includes(o.dataset)) throw new Error('--dataset must be npm or pypi');
  if (o.only && !['quarry', 'meilisearch'].includes(o.only)) throw new Error('--only must be quarry or meilisearch');
  if (o.only === 'meilisearch' && !o.meiliBin) throw new Error('--only meilisearch needs --meili-bin');
  // The poll counts a batch's hits with `totalHits`, which stops at the default maxTotalHits (1000).
  if (o.batchSize % 2 !== 0 || o.batchSize > 1000) throw new Error('--batch-size must be even and at most 1000');
  if ((o.batches * o.batchSize) / 2 > o.rows / 2)
    throw new Error(
      '--rows must be at least --batches × --batch-size (each batch changes rows no other batch changes)',
    );
  return o;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (n, d = 2) => (n === null || n === undefined ? null : Number(n.toFixed(d)));
const figures = (xs) => ({ n: xs.length, p50: round(percentile(xs, 50)), p99: round(percentile(xs, 99)) });

/** A token of twelve random letters: no two batches' tokens are within two typos or a prefix of each other. */
function tokenOf(rand) {
  let t = 'q';
  for (let i = 0; i < 11; i++) t += String.fromCharCode(97 + Math.floor(rand() * 26));
  return t;
}

/**
 * The write batches, drawn once so both servers get the same: batch b holds `size / 2` new
 * documents (the rows after the base; copies of base rows under new ids past the catalogue's
 * end) and `size / 2` base documents with a changed summary (each changed by one batch
 * only), every one carrying b's token.
 */
function writeBatches(docs, base, o) {
  const rand = mulberry32(72);
  const half = o.batchSize / 2;
  const out = [];
  let nextNew = base;
  const changed = new Set();
  for (let b = 0; b < o.batches; b++) {
    const token = tokenOf(rand);
    const batch = [];
    for (let i = 0; i < half; i++, nextNew++) {
      const d = nextNew < docs.length ? docs[nextNew] : { ...docs[nextNew % base], id: nextNew };
      batch.push({ ...d, summary: `${d.summary} ${token}` });
    }
    // Base rows no other batch changes: a row twice in one batch would be one document, and a
    // row a later batch changes again would lose this batch's token, which would then never
    // count the whole batch.
    for (let i = 0; i < half; ) {
      const r = Math.floor(rand() * base);
      if (changed.has(r)) continue;
      changed.add(r);
      batch.push({ ...docs[r], summary: `${docs[r].summary} changed ${token}` });
      i++;
    }
    out.push({ token, ndjson: batch.map((d) => JSON.stringify(d)).join('\n') });
  }
  return out;
}

/**
 * `n` clients searching back to back over `bodies` (JSON texts, taken in turn across the
 * clients); each answer's time goes to whichever list `sink()` returns then (null: untimed).
 */
function searchers(api, index, bodies, n, sink) {
  let running = true;
  let next = 0;
  let errors = 0;
  const loops = Array.from({ length: n }, async () => {
    while (running) {
      const body = bodies[next++ % bodies.length];
      const t0 = performance.now();
      try {
        await api('POST', `/indexes/${index}/search`, body);
        sink()?.push(performance.now() - t0);
      } catch {
        errors++;
      }
    }
  });
  return {
    sent: () => next,
    errors: () => errors,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** One server: base load, idle searches, then the write batches with searches and the poller. */
async function runOn(name, start, o, docs, batches, bodies) {
  process.stderr.write(`${name}: starting, loading ${o.rows} rows...\n`);
  const server = await start();
  try {
    const api = client(server.url, server.key);
    const index = 'live';
    const loadSeconds = await loadIndex(api, index, docs.slice(0, o.rows), o.dataset);
    let sink = null;
    const idle = [];
    const writing = [];
    const clients = searchers(api, index, bodies, o.clients, () => sink);
    // Untimed first seconds, then idle.
    await sleep(o.idleSeconds * 1000);
    process.stderr.write(`${name}: idle searches for ${o.idleSeconds} s...\n`);
    sink = idle;
    await sleep(o.idleSeconds * 1000);
    sink = writing;
    process.stderr.write(`${name}: ${o.batches} batches of ${o.batchSize}, one a second...\n`);
    const sent = []; // per batch: { t0, ack, found }
    let pollsSent = 0;
    let sending = true;
    // The poller: the oldest batch sent and not yet found; one not found --timeout-s after its
    // POST is given up (counted as not found) and the next is asked for.
    const poller = (async () => {
      let k = 0;
      while (k < batches.length) {
        if (k >= sent.length) {
          if (!sending) break;
          await sleep(o.pollMs);
          continue;
        }
        if (performance.now() - sent[k].t0 > o.timeoutS * 1000) {
          k++;
          continue;
        }
        const body = JSON.stringify({
          q: `"${batches[k].token}"`,
          hitsPerPage: 1,
          page: 1,
          attributesToRetrieve: ['id'],
        });
        pollsSent++;
        const r = await api('POST', `/indexes/${index}/search`, body);
        if (r.totalHits >= o.batchSize) {
          sent[k].found = performance.now();
          k++;
        } else await sleep(o.pollMs);
      }
    })();
    for (let b = 0; b < batches.length; b++) {
      const due = performance.now() + 1000;
      const t0 = performance.now();
      const entry = { t0, ack: null, found: null };
      sent.push(entry);
      await api('POST', `/indexes/${index}/documents`, batches[b].ndjson, 'application/x-ndjson');
      entry.ack = performance.now();
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
    }
    sending = false;
    await poller;
    sink = null;
    await clients.stop();
    const found = sent.filter((s) => s.found !== null);
    const tts = found.map((s) => s.found - s.t0);
    const idleF = figures(idle);
    const writeF = figures(writing);
    return {
      server: name,
      baseRows: o.rows,
      baseLoadSeconds: round(loadSeconds, 1),
      batches: sent.length,
      batchSize: o.batchSize,
      timeToSearchMs: {
        p50: round(percentile(tts, 50), 0),
        p90: round(percentile(tts, 90), 0),
        p99: round(percentile(tts, 99), 0),
        max: round(tts.length ? Math.max(...tts) : null, 0),
        found: found.length,
        notFound: sent.length - found.length,
      },
      postAnswerMs: {
        p50: round(
          percentile(
            sent.map((s) => s.ack - s.t0),
            50,
          ),
        ),
        p99: round(
          percentile(
            sent.map((s) => s.ack - s.t0),
            99,
          ),
        ),
      },
      searchIdleMs: idleF,
      searchDuringWritesMs: writeF,
      writesOverIdleP99: idleF.p99 ? round(writeF.p99 / idleF.p99) : null,
      searches: {
        sent: clients.sent(),
        distinctBodies: Math.min(clients.sent(), bodies.length),
        errors: clients.errors(),
        polls: pollsSent,
      },
    };
  } finally {
    await discardQuarry(server);
  }
}

function print(results) {
  const [q, m] = [results.find((r) => r.server === 'quarry'), results.find((r) => r.server === 'meilisearch')];
  const rows = [
    ['time to search p50 ms', 'timeToSearchMs.p50'],
    ['time to search p90 ms', 'timeToSearchMs.p90'],
    ['time to search p99 ms', 'timeToSearchMs.p99'],
    ['time to search max ms', 'timeToSearchMs.max'],
    ['batches not found', 'timeToSearchMs.notFound'],
    ['POST answer p50 ms', 'postAnswerMs.p50'],
    ['search idle p50 ms', 'searchIdleMs.p50'],
    ['search idle p99 ms', 'searchIdleMs.p99'],
    ['search during writes p50 ms', 'searchDuringWritesMs.p50'],
    ['search during writes p99 ms', 'searchDuringWritesMs.p99'],
    ['p99 during writes / idle', 'writesOverIdleP99'],
    ['searches sent', 'searches.sent'],
    ['distinct search bodies', 'searches.distinctBodies'],
  ];
  const at = (r, p) => (r ? p.split('.').reduce((x, k) => x?.[k], r) : null);
  const f = (n) => (n === null || n === undefined ? '-' : String(n));
  const r0 = results[0];
  console.log(
    `\ntime to search — ${r0.baseRows} base rows, ${r0.batches} batches of ${r0.batchSize} (half new, half changed), one a second, ${results[0].clients} clients searching`,
  );
  console.log(`${'figure'.padEnd(30)} ${'quarry'.padStart(10)} ${'meilisearch'.padStart(12)} ${'ratio'.padStart(7)}`);
  for (const [label, p] of rows) {
    const a = at(q, p);
    const b = at(m, p);
    const ratio = typeof a === 'number' && typeof b === 'number' && b !== 0 ? (a / b).toFixed(2) : '-';
    console.log(`${label.padEnd(30)} ${f(a).padStart(10)} ${f(b).padStart(12)} ${ratio.padStart(7)}`);
  }
}

async function main() {
  quietClient();
  const o = parseArgs(process.argv.slice(2));
  const { docs } = await loadRows(o.dataset, o.rows + (o.batches * o.batchSize) / 2);
  if (docs.length < o.rows) throw new Error(`the catalogue has ${docs.length} rows, fewer than --rows ${o.rows}`);
  const batches = writeBatches(docs, o.rows, o);
  // Search bodies drawn from the base, each distinct, enough for about 3,000 searches a second.
  const base = docs.slice(0, o.rows);
  const d = drawers(base, mulberry32(5), {});
  const budget = Math.min(300000, 3000 * (2 * o.idleSeconds + o.batches + 30));
  const bodies = freshQueries({ ...d.search, ...d.box }, budget, new Set()).map((b) => JSON.stringify(b));
  const targets = [];
  if (o.only !== 'meilisearch') targets.push(['quarry', () => startQuarry()]);
  if (o.meiliBin && o.only !== 'quarry') targets.push(['meilisearch', () => startMeilisearch(o.meiliBin)]);
  const results = [];
  for (const [name, start] of targets) {
    const r = await runOn(name, start, o, docs, batches, bodies);
    results.push({ ...r, clients: o.clients });
    process.stderr.write(`${name}: ${JSON.stringify(r)}\n`);
  }
  print(results);
  const out = o.out ?? path.join(__dirname, 'results', `live-${o.dataset}-${Date.now()}.json`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify({ dataset: o.dataset, options: o, results }, null, 2));
  console.log(`figures written to ${out}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
