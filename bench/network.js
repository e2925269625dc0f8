#!/usr/bin/env node
/**
 * A sharded network against one server: three Quarry servers on loopback form a network with
 * one shard each (the first is the leader) and a fourth holds every row. The first `--rows`
 * PyPI rows go in through the leader (which forwards them; each instance keeps its shard's),
 * and in full to the single server. The seeded keyword mix of `bench/run.js` (`--per-shape`
 * of each shape) runs against both, one query at a time. Prints the indexing time of each,
 * p50/p99 of the searches, and how many top-10 id lists and exhaustive totals agree.
 *
 *   node bench/network.js [--rows 100000] [--per-shape 25]
 */
'use strict';
const { mulberry32, percentile, queryMix, timed } = require('./lib');
const { DATASETS, client, loadRows, startQuarry, waitTask } = require('./server');

function parseArgs(argv) {
  const o = { rows: 100000, perShape: 25 };
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, '');
    if (k === 'rows') o.rows = Number(argv[i + 1]);
    else if (k === 'per-shape') o.perShape = Number(argv[i + 1]);
    else throw new Error(`unknown option ${argv[i]}`);
  }
  return o;
}

/** Waits for a leader's task and for each task it forwarded. */
async function waitNetwork(apis, leaderApi, uid) {
  const task = await waitTask(leaderApi, uid);
  for (const [name, t] of Object.entries(task.network?.remote_tasks ?? {})) await waitTask(apis[name], t.taskUid);
  return task;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const names = ['a', 'b', 'c', 'one'];
  const servers = {};
  const apis = {};
  for (const n of names) {
    servers[n] = await startQuarry();
    apis[n] = client(servers[n].url, servers[n].key);
    await apis[n]('PATCH', '/experimental-features', JSON.stringify({ network: true }));
  }
  try {
    const remotes = Object.fromEntries(
      ['a', 'b', 'c'].map((n) => [
        n,
        { url: servers[n].url, searchApiKey: servers[n].key, writeApiKey: servers[n].key },
      ]),
    );
    const init = await apis.a(
      'PATCH',
      '/network',
      JSON.stringify({
        self: 'a',
        leader: 'a',
        remotes,
        shards: { s1: { remotes: ['a'] }, s2: { remotes: ['b'] }, s3: { remotes: ['c'] } },
      }),
    );
    await waitNetwork(apis, apis.a, init.taskUid);

    process.stderr.write(`loading ${o.rows} PyPI rows...\n`);
    const { docs } = await loadRows('pypi', o.rows);
    // A final `id:asc` rule makes the order total: without it, equal scores come in insertion
    // order, which means nothing across instances.
    const settings = {
      ...DATASETS.pypi.settings,
      rankingRules: ['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness', 'id:asc'],
    };
    const nd = docs.map((d) => JSON.stringify(d)).join('\n');
    const indexing = {};
    for (const [label, api, wait] of [
      ['network of three', apis.a, (uid) => waitNetwork(apis, apis.a, uid)],
      ['one server', apis.one, (uid) => waitTask(apis.one, uid)],
    ]) {
      await wait((await api('PATCH', '/indexes/pkgs/settings', JSON.stringify(settings))).taskUid);
      const t = await timed(async () =>
        wait((await api('POST', '/indexes/pkgs/documents', nd, 'application/x-ndjson')).taskUid),
      );
      indexing[label] = t.ms;
    }

    const mix = queryMix(docs, mulberry32(42), o.perShape);
    const queries = Object.values(mix)
      .flat()
      .map((q) => q.body);
    const single = [];
    const sharded = [];
    let sameIds = 0;
    let exhaustive = 0;
    let sameTotals = 0;
    for (const body of queries) {
      const q = JSON.stringify({ ...body, limit: 10, attributesToRetrieve: ['id'] });
      const s = await timed(() => apis.one('POST', '/indexes/pkgs/search', q));
      const n = await timed(() => apis.a('POST', '/indexes/pkgs/search', q));
      single.push(s.ms);
      sharded.push(n.ms);
      const ids = (r) => r.hits.map((h) => h.id).join(',');
      if (ids(s.r) === ids(n.r)) sameIds += 1;
      if (s.r.estimatedTotalHits < 1000) {
        exhaustive += 1;
        if (s.r.estimatedTotalHits === n.r.estimatedTotalHits) sameTotals += 1;
      }
    }
    const fmt = (v) => v.toFixed(2).padStart(8);
    console.log(`\nsharded network — ${docs.length} PyPI rows, ${queries.length} queries at concurrency 1`);
    console.log(
      `indexing through the leader: ${(indexing['network of three'] / 1000).toFixed(2)} s; into one server: ${(indexing['one server'] / 1000).toFixed(2)} s`,
    );
    console.log('                                  p50 ms   p99 ms');
    console.log(`one server                      ${fmt(percentile(single, 50))} ${fmt(percentile(single, 99))}`);
    console.log(`network of three shards         ${fmt(percentile(sharded, 50))} ${fmt(percentile(sharded, 99))}`);
    console.log(
      `identical top-10 id lists: ${sameIds}/${queries.length}; identical exhaustive totals: ${sameTotals}/${exhaustive}`,
    );
  } finally {
    for (const s of Object.values(servers)) s.child.kill('SIGTERM');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
