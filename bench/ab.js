#!/usr/bin/env node
/**
 * Two builds of Quarry, query by query: is a change slower on any query shape?
 *
 *   node bench/ab.js --old OLD.node [--new NEW.node] [--dataset npm|pypi] [--rows N]
 *                    [--queries 300] [--reps 7] [--shapes oneWord,prefix,...] [--worst 3]
 *
 * Starts two servers, one on the addon at OLD.node (a build of the other commit, e.g. a copy
 * of native/quarry.*.node made before the change) and one on NEW.node (default: this
 * checkout's), loads the same rows into both, then sends each query of `bench/run.js`'s
 * seeded mix to both, alternating which goes first, `--reps` times. Each query's time is the
 * median of its repetitions, so a slow query is slow every time while a pause of the machine
 * is not; per shape it prints the p50, p95 and p99 of those medians for both builds, their
 * ratio (new / old), and the queries that slowed most. No timing assertions: it reports.
 */
'use strict';
const fs = require('node:fs');
const { filterMix, percentile, queryMix, mulberry32 } = require('./lib');
const { DATASETS, client, duBytes, loadIndex, loadRows, startQuarry } = require('./server');

function parseArgs(argv) {
  const o = { dataset: 'npm', rows: 0, queries: 300, reps: 7, shapes: null, worst: 3 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--old') o.old = v();
    else if (a === '--new') o.new = v();
    else if (a === '--dataset') o.dataset = v();
    else if (a === '--rows') o.rows = Number(v());
    else if (a === '--queries') o.queries = Number(v());
    else if (a === '--reps') o.reps = Number(v());
    else if (a === '--shapes') o.shapes = v().split(',');
    else if (a === '--worst') o.worst = Number(v());
    else if (a === '--help') {
      console.log(fs.readFileSync(__filename, 'utf8').split('\n').slice(2, 15).join('\n'));
      process.exit(0);
    } else throw new Error(`unknown option ${a}`);
  }
  if (!o.old) throw new Error('--old names the addon of the build to compare against');
  if (!['pypi', 'npm'].includes(o.dataset)) throw new Error('--dataset must be pypi or npm');
  return o;
}

/** A server on the addon at `addon` (the checkout's own when undefined), loaded with `docs`. */
async function loaded(addon, docs, dataset) {
  const saved = process.env.NAPI_RS_NATIVE_LIBRARY_PATH;
  if (addon) process.env.NAPI_RS_NATIVE_LIBRARY_PATH = addon;
  else delete process.env.NAPI_RS_NATIVE_LIBRARY_PATH;
  const server = await startQuarry();
  if (saved === undefined) delete process.env.NAPI_RS_NATIVE_LIBRARY_PATH;
  else process.env.NAPI_RS_NATIVE_LIBRARY_PATH = saved;
  const api = client(server.url, server.key);
  const seconds = await loadIndex(api, 'ab', docs, dataset);
  // The value columns are built by the first filter or facet query: not part of any shape.
  await api(
    'POST',
    '/indexes/ab/search',
    JSON.stringify({ q: '', facets: Object.values(DATASETS[dataset].filterFields), limit: 0 }),
  );
  return { server, api, seconds, disk: duBytes(server.dbPath) };
}

const median = (values) => percentile(values, 50);

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const { docs } = await loadRows(o.dataset, o.rows || undefined);
  const builds = [];
  for (const addon of [o.old, o.new]) builds.push(await loaded(addon, docs, o.dataset));
  const rand = mulberry32(42);
  const mix = { ...queryMix(docs, rand, o.queries) };
  Object.assign(mix, filterMix(docs, rand, o.queries, DATASETS[o.dataset].filterFields));
  console.log(`${o.dataset}, ${docs.length} rows: old ${o.old}, new ${o.new ?? 'this checkout'}`);
  console.log(
    `indexing s   ${builds[0].seconds.toFixed(1)} -> ${builds[1].seconds.toFixed(1)}   disk MiB ${(builds[0].disk / 2 ** 20).toFixed(0)} -> ${(builds[1].disk / 2 ** 20).toFixed(0)}`,
  );
  console.log('shape            p50 old  new  ratio | p95 old  new  ratio | p99 old  new  ratio');
  for (const [shape, queries] of Object.entries(mix)) {
    if (o.shapes && !o.shapes.includes(shape)) continue;
    process.stderr.write(`  ${shape}...\r`);
    const times = builds.map(() => queries.map(() => []));
    for (let r = 0; r < o.reps; r++) {
      for (let i = 0; i < queries.length; i++) {
        const body = JSON.stringify(queries[i].body);
        for (const k of (r + i) % 2 ? [0, 1] : [1, 0]) {
          const t0 = process.hrtime.bigint();
          await builds[k].api('POST', '/indexes/ab/search', body);
          times[k][i].push(Number(process.hrtime.bigint() - t0) / 1e6);
        }
      }
    }
    const per = times.map((t) => t.map(median));
    const cells = [50, 95, 99].map((p) => {
      const [a, b] = per.map((m) => percentile(m, p));
      return `${a.toFixed(2).padStart(7)} ${b.toFixed(2).padStart(5)} ${(b / a).toFixed(2).padStart(5)}`;
    });
    process.stderr.write(`${' '.repeat(40)}\r`);
    console.log(`${shape.padEnd(15)} ${cells.join(' |')}`);
    const slowed = queries
      .map((q, i) => ({ q: q.body, old: per[0][i], neu: per[1][i] }))
      .sort((x, y) => y.neu - y.old - (x.neu - x.old));
    for (const s of slowed.slice(0, o.worst))
      console.log(`    ${s.old.toFixed(2)} -> ${s.neu.toFixed(2)}  ${JSON.stringify(s.q).slice(0, 100)}`);
  }
  for (const { server } of builds) server.child.kill('SIGTERM');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
