#!/usr/bin/env node
/**
 * The slowest queries of one shape of the bench's mix: each of its seeded queries (the same
 * `run.js` times, seed 42) is sent `--sends` times, and the medians of three times are kept:
 * the client's, the server's (`showPerformanceDetails`' whole `search`, from the request's
 * arrival) and its ranking's (`keyword search and ranking`; against Meilisearch, its `keyword
 * ranking`, which leaves out its query evaluation). The `--top` slowest by server time are
 * printed with their hit counts, then the shape's percentiles. A shape's p99 over a
 * few hundred queries is its third or fourth slowest query: this says which ones, and whether
 * the ranking, the rest of the server or the path outside it is where their time goes.
 *
 *   node bench/slowest.js --dataset pypi --shape phrase          # starts Quarry, loads the rows
 *   node bench/slowest.js --url URL --key KEY --index pypi --shape twoWords   # an existing index
 *   node bench/slowest.js [--rows N] [--queries 300] [--sends 5] [--top 15]
 */
'use strict';

const { DATASETS, client, discardQuarry, loadIndex, loadRows, startQuarry } = require('./server');
const { percentile, seededMixes, stepSeconds } = require('./lib');

function parseArgs(argv) {
  const o = { dataset: 'pypi', rows: 0, shape: 'phrase', queries: 300, sends: 5, top: 15 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--dataset') o.dataset = v();
    else if (a === '--shape') o.shape = v();
    else if (a === '--url') o.url = v();
    else if (a === '--key') o.key = v();
    else if (a === '--index') o.index = v();
    else if (['--rows', '--queries', '--sends', '--top'].includes(a)) o[a.slice(2)] = Number(v());
    else throw new Error(`unknown option ${a}`);
  }
  if (!DATASETS[o.dataset]) throw new Error(`unknown dataset ${o.dataset}`);
  if (o.url && !o.index) throw new Error('--url needs --index (an index holding the dataset)');
  return o;
}

/** The ranking step of `performanceDetails`: Quarry's, or Meilisearch's keyword ranking. */
function rankingStep(details) {
  return (
    details['search > keyword search and ranking'] ??
    details['search > execute local search > keyword ranking'] ??
    '0µs'
  );
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const { docs } = await loadRows(o.dataset, o.rows);
  const { search, filters } = seededMixes(docs, o.queries, DATASETS[o.dataset].filterFields);
  const mixes = { ...search, ...filters };
  const queries = mixes[o.shape];
  if (!queries) throw new Error(`unknown shape ${o.shape}: one of ${Object.keys(mixes).join(', ')}`);

  const started = o.url ? null : await startQuarry();
  try {
    const api = client(o.url ?? started.url, o.key ?? started.key);
    const index = o.index ?? `slowest_${o.dataset}`;
    if (started) await loadIndex(api, index, docs, o.dataset, { batch: 50000, progress: true });
    const rows = [];
    for (const q of queries) {
      const server = [];
      const ranking = [];
      const total = [];
      let hits = 0;
      for (let k = 0; k < o.sends; k++) {
        const t0 = process.hrtime.bigint();
        const r = await api(
          'POST',
          `/indexes/${index}/search`,
          JSON.stringify({ ...q.body, showPerformanceDetails: true }),
        );
        total.push(Number(process.hrtime.bigint() - t0) / 1e6);
        server.push(stepSeconds(r.performanceDetails.search) * 1000);
        ranking.push(stepSeconds(rankingStep(r.performanceDetails)) * 1000);
        hits = r.estimatedTotalHits ?? r.totalHits ?? 0;
      }
      rows.push({
        body: q.body,
        server: percentile(server, 50),
        ranking: percentile(ranking, 50),
        total: percentile(total, 50),
        hits,
      });
    }
    rows.sort((a, b) => b.server - a.server);
    const f = (n) => n.toFixed(2).padStart(8);
    console.log(`${o.shape} on ${o.dataset}: ${rows.length} queries, median of ${o.sends} sends each (ms)`);
    console.log(`${'client'.padStart(8)}${'server'.padStart(8)}${'ranking'.padStart(8)}${'hits'.padStart(8)}  query`);
    for (const r of rows.slice(0, o.top))
      console.log(`${f(r.total)}${f(r.server)}${f(r.ranking)}${String(r.hits).padStart(8)}  ${JSON.stringify(r.body)}`);
    const p = (key) => {
      const xs = rows.map((r) => r[key]);
      return `p50 ${f(percentile(xs, 50))} p99 ${f(percentile(xs, 99))}`;
    };
    console.log(`client ${p('total')}   server ${p('server')}   ranking ${p('ranking')}`);
  } finally {
    if (started) {
      await discardQuarry(started);
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
