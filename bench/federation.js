#!/usr/bin/env node
/**
 * Federated search against one index: the first `--rows` PyPI rows go into one index and,
 * split by id parity, into two half indexes; the same seeded queries (the keyword mix of
 * `bench/run.js`, `--per-shape` of each shape) run as single-index searches and as federated
 * multi-searches over the two halves, one at a time. Prints p50/p99 of each, and how many
 * federated top-10 id lists (and score lists) equal the single index's.
 *
 *   node bench/federation.js [--rows 100000] [--per-shape 25]
 *   node bench/federation.js --url http://127.0.0.1:7701 --key masterKey
 */
'use strict';
const { mulberry32, percentile, queryMix, timed } = require('./lib');
const { client, loadIndex, loadRows, startQuarry } = require('./server');

function parseArgs(argv) {
  const o = { rows: 100000, perShape: 25, url: null, key: null };
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, '');
    if (k === 'rows') o.rows = Number(argv[i + 1]);
    else if (k === 'per-shape') o.perShape = Number(argv[i + 1]);
    else if (k === 'url' || k === 'key') o[k] = argv[i + 1];
    else throw new Error(`unknown option ${argv[i]}`);
  }
  return o;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  let server = null;
  if (!o.url) {
    server = await startQuarry();
    Object.assign(o, { url: server.url, key: server.key });
  }
  const api = client(o.url, o.key);
  process.stderr.write(`loading ${o.rows} PyPI rows...\n`);
  const { docs } = await loadRows('pypi', o.rows);
  const tag = Date.now();
  const [whole, even, odd] = [`fed_whole_${tag}`, `fed_even_${tag}`, `fed_odd_${tag}`];
  await loadIndex(api, whole, docs, 'pypi');
  await loadIndex(
    api,
    even,
    docs.filter((d) => d.id % 2 === 0),
    'pypi',
  );
  await loadIndex(
    api,
    odd,
    docs.filter((d) => d.id % 2 === 1),
    'pypi',
  );
  const mix = queryMix(docs, mulberry32(42), o.perShape);
  const queries = Object.values(mix)
    .flat()
    .map((q) => q.body.q ?? '');
  const single = [];
  const federated = [];
  let same = 0;
  let sameScores = 0;
  for (const q of queries) {
    const a = await timed(() =>
      api('POST', `/indexes/${whole}/search`, JSON.stringify({ q, limit: 10, showRankingScore: true })),
    );
    const f = await timed(() =>
      api(
        'POST',
        '/multi-search',
        JSON.stringify({
          federation: { limit: 10 },
          queries: [
            { indexUid: even, q, showRankingScore: true },
            { indexUid: odd, q, showRankingScore: true },
          ],
        }),
      ),
    );
    single.push(a.ms);
    federated.push(f.ms);
    const ids = (hits) => hits.map((h) => h.id).join(',');
    const scores = (hits) => hits.map((h) => h._rankingScore.toFixed(9)).join(',');
    if (ids(a.r.hits) === ids(f.r.hits)) same += 1;
    if (scores(a.r.hits) === scores(f.r.hits)) sameScores += 1;
  }
  const fmt = (v) => v.toFixed(2).padStart(8);
  console.log(`\nfederated search — ${docs.length} PyPI rows, ${queries.length} queries at concurrency 1, ${o.url}`);
  console.log('                                  p50 ms   p99 ms');
  console.log(`one index                       ${fmt(percentile(single, 50))} ${fmt(percentile(single, 99))}`);
  console.log(`federated over two halves       ${fmt(percentile(federated, 50))} ${fmt(percentile(federated, 99))}`);
  console.log(
    `identical top-10 id lists: ${same}/${queries.length}; identical top-10 score lists: ${sameScores}/${queries.length} (ties are broken by internal id in one index, by query position across two)`,
  );
  if (server) server.child.kill('SIGTERM');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
