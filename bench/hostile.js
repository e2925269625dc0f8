#!/usr/bin/env node
/**
 * Memory under hostile load: `--concurrency` (default 50) clients send, for `--seconds` each,
 * the costliest searches we know of, and the server's RSS is sampled every 50 ms.
 *
 *   node bench/hostile.js [--rows 100000] [--concurrency 50] [--seconds 20]
 *   node bench/hostile.js --url http://127.0.0.1:7701 --key masterKey --pid $MEILI_PID
 *
 * Every attribute of the npm catalogue is filterable and sortable. Two phases: with the
 * default `maxTotalHits` (1000), then after an administrator raised `maxTotalHits` and
 * `maxValuesPerFacet` to 1,000,000 (each response may then carry every matching document).
 * The searches: ten-word queries of short common prefixes with `frequency` matching, every
 * facet, `limit`/`hitsPerPage` at 2^53-1, a sort, highlighting and cropping of every
 * attribute, ranking-score details, and a 900 KB `IN` filter. Prints the RSS before, the peak
 * of each phase (VmHWM is not reset between phases, so the sampled VmRSS maximum is shown),
 * the count of answers by status and the RSS a few seconds after.
 */
'use strict';
const { client, loadRows, rssOf, startQuarry, waitTask } = require('./server');

function parseArgs(argv) {
  const o = { rows: 100000, concurrency: 50, seconds: 20, url: null, key: null, pid: null };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i].replace(/^--/, '');
    const v = argv[i + 1];
    if (['rows', 'concurrency', 'seconds', 'pid'].includes(k)) o[k] = Number(v);
    else if (k === 'url' || k === 'key') o[k] = v;
    else throw new Error(`unknown option ${argv[i]}`);
    i++;
  }
  return o;
}

const MAX = 9007199254740991;
const PREFIXES = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'r', 's', 't', 'w'];

function hostileSearch(i) {
  const words = Array.from(
    { length: 10 },
    (_, j) => PREFIXES[(i * 7 + j * 3) % PREFIXES.length] + (j % 3 === 0 ? 'xy' : ''),
  );
  const inList = Array.from({ length: 90000 }, (_, j) => j * 3 + (i % 3)).join(',');
  const shapes = [
    {
      q: words.join(' '),
      matchingStrategy: 'frequency',
      facets: ['*'],
      limit: MAX,
      attributesToHighlight: ['*'],
      attributesToCrop: ['*'],
      cropLength: 1000,
      showRankingScoreDetails: true,
      showMatchesPosition: true,
    },
    {
      q: '',
      facets: ['*'],
      hitsPerPage: MAX,
      page: 1,
      sort: ['downloads:desc', 'name:asc'],
      attributesToHighlight: ['*'],
    },
    {
      q: words.slice(0, 3).join(' '),
      filter: `downloads IN [${inList}]`,
      facets: ['*'],
      limit: MAX,
      sort: ['summary:asc'],
    },
    { q: `"${words.slice(0, 4).join(' ')}" ${words.join(' ')}`, matchingStrategy: 'all', offset: MAX, facets: ['*'] },
  ];
  return shapes[i % shapes.length];
}

async function phase(api, o, index, label) {
  let peak = 0;
  const sampler = setInterval(() => {
    const r = rssOf(o.pid).now;
    if (r && r > peak) peak = r;
  }, 50);
  const counts = {};
  const until = Date.now() + o.seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: o.concurrency }, async (_, c) => {
      while (Date.now() < until) {
        const body = JSON.stringify(hostileSearch(n++ + c));
        const status = await api('POST', `/indexes/${index}/search`, body).then(
          () => 200,
          (e) => Number(/: (\d{3}) /.exec(e.message)?.[1] ?? 0),
        );
        counts[status] = (counts[status] ?? 0) + 1;
      }
    }),
  );
  clearInterval(sampler);
  return { label, peakRss: peak, answers: counts };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  let server = null;
  if (!o.url) {
    server = await startQuarry();
    Object.assign(o, { url: server.url, key: server.key, pid: server.pid });
  }
  if (!o.pid) throw new Error('--pid is needed to read the server RSS');
  const api = client(o.url, o.key);
  const index = `hostile_${Date.now()}`;
  process.stderr.write(`loading ${o.rows} npm rows...\n`);
  const { docs } = await loadRows('npm', o.rows);
  const all = ['name', 'version', 'downloads', 'summary'];
  await waitTask(
    api,
    (
      await api(
        'PATCH',
        `/indexes/${index}/settings`,
        JSON.stringify({ filterableAttributes: all, sortableAttributes: all }),
      )
    ).taskUid,
  );
  for (let i = 0; i < docs.length; i += 50000) {
    const nd = docs
      .slice(i, i + 50000)
      .map((d) => JSON.stringify(d))
      .join('\n');
    await waitTask(api, (await api('POST', `/indexes/${index}/documents`, nd, 'application/x-ndjson')).taskUid);
  }
  await api('POST', `/indexes/${index}/search`, JSON.stringify({ q: 'a', facets: ['*'] }));
  const before = rssOf(o.pid).now;
  const phases = [await phase(api, o, index, 'default maxTotalHits (1000)')];
  await waitTask(
    api,
    (
      await api(
        'PATCH',
        `/indexes/${index}/settings`,
        JSON.stringify({ pagination: { maxTotalHits: 1000000 }, faceting: { maxValuesPerFacet: 1000000 } }),
      )
    ).taskUid,
  );
  phases.push(await phase(api, o, index, 'maxTotalHits and maxValuesPerFacet 1,000,000'));
  await new Promise((r) => setTimeout(r, 5000));
  const after = rssOf(o.pid).now;
  const mib = (b) => `${(b / 1048576).toFixed(0)} MiB`;
  console.log(
    `\nhostile searches — ${docs.length} npm documents, ${o.concurrency} concurrent clients, ${o.seconds} s per phase, ${o.url}`,
  );
  console.log(`RSS after indexing and a first faceted search: ${mib(before)}`);
  for (const p of phases)
    console.log(`${p.label.padEnd(46)} peak RSS ${mib(p.peakRss).padStart(9)}   answers ${JSON.stringify(p.answers)}`);
  console.log(`RSS 5 s after the load: ${mib(after)}`);
  if (server) server.child.kill('SIGTERM');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
