#!/usr/bin/env node
/**
 * Side-by-side ranking comparison: loads the same catalogue rows into two servers that speak
 * the Meilisearch API (Quarry and the reference), runs the same seeded queries of each kind
 * against both and reports, per kind, how often the top-10 ids are identical and their mean
 * overlap. `--diffs FILE` writes every differing query; `--probe KINDS|all [--probe-max N]`
 * prints, for those queries, both servers' top 10 side by side with each rule's score
 * (`bench/probe.js`).
 *
 *   node bench/compare.js --a URL --a-key KEY --b URL --b-key KEY [--dataset pypi] [--rows 20000] [--queries 40]
 */
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
const zlib = require('node:zlib');
const { filterMix, mulberry32, queryMix } = require('./lib');

function args(argv) {
  const o = { dataset: 'pypi', rows: 20000, queries: 40, seed: 7 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i].replace(/^--/, '');
    o[k.replace(/-(\w)/g, (_, c) => c.toUpperCase())] = argv[++i];
  }
  o.rows = Number(o.rows);
  o.queries = Number(o.queries);
  return o;
}

const SPECS = {
  pypi: {
    file: 'pypi-packages.tsv.gz',
    convert: (c) => ({ name: c[0], month: c[2], rank: c[3] === '' ? null : Number(c[3]), summary: c[4] ?? '' }),
    filter: { eq: 'month', num: 'rank' },
  },
  npm: {
    file: 'npm-packages.tsv.gz',
    convert: (c) => ({ name: c[0], downloads: Number(c[2]) || 0, summary: c[3] ?? '' }),
    filter: { eq: 'downloads', num: 'downloads' },
  },
};

async function rows(spec, limit) {
  const dir = process.env.QUARRY_BENCH_DATA || path.join(__dirname, '../../shared/data');
  const rl = readline.createInterface({
    input: fs.createReadStream(path.join(dir, spec.file)).pipe(zlib.createGunzip()),
  });
  const docs = [];
  let header = true;
  for await (const line of rl) {
    if (header || !line) {
      header = false;
      continue;
    }
    docs.push({ id: docs.length, ...spec.convert(line.split('\t')) });
    if (docs.length >= limit) break;
  }
  rl.close();
  return docs;
}

function client(url, key) {
  return async (method, p, body, type = 'application/json') => {
    const res = await fetch(url + p, {
      method,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': type },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return res.json();
  };
}

async function load(call, docs, spec) {
  const wait = async (t) => {
    for (;;) {
      const s = await call('GET', `/tasks/${t.taskUid}`);
      if (s.status === 'succeeded') return;
      if (s.status === 'failed' && s.error.code === 'index_not_found' && s.type === 'indexDeletion') return;
      if (s.status === 'failed') throw new Error(JSON.stringify(s.error));
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  // A fresh index each run: an earlier run against the same server leaves its `cmp` behind.
  await wait(await call('DELETE', '/indexes/cmp'));
  await wait(await call('POST', '/indexes', { uid: 'cmp', primaryKey: 'id' }));
  await wait(
    await call('PATCH', '/indexes/cmp/settings', {
      searchableAttributes: ['name', 'summary'],
      filterableAttributes: ['id', spec.filter.eq, spec.filter.num],
      sortableAttributes: [spec.filter.num],
    }),
  );
  let last;
  for (let i = 0; i < docs.length; i += 20000)
    last = await call(
      'POST',
      '/indexes/cmp/documents',
      docs
        .slice(i, i + 20000)
        .map((d) => JSON.stringify(d))
        .join('\n'),
      'application/x-ndjson',
    );
  await wait(last);
}

async function main() {
  const o = args(process.argv.slice(2));
  const spec = SPECS[o.dataset];
  const docs = await rows(spec, o.rows);
  const a = client(o.a, o.aKey);
  const b = client(o.b, o.bKey);
  await Promise.all([load(a, docs, spec), load(b, docs, spec)]);
  const rand = mulberry32(Number(o.seed));
  const kinds = { ...queryMix(docs, rand, o.queries) };
  const f = filterMix(docs, rand, o.queries, spec.filter);
  kinds.filterAndQuery = f.filterAndQuery;
  kinds.sortAndQuery = f.sortAndQuery;
  delete kinds.placeholder;
  let all = 0;
  let same = 0;
  let overlap = 0;
  const differing = [];
  const diffs = [];
  console.log('kind             n   identical top-10   mean overlap@10');
  for (const [kind, queries] of Object.entries(kinds)) {
    let s = 0;
    let ov = 0;
    for (const q of queries) {
      const body = { ...q.body, limit: 10, attributesToRetrieve: ['id'] };
      const [ra, rb] = await Promise.all([
        a('POST', '/indexes/cmp/search', body),
        b('POST', '/indexes/cmp/search', body),
      ]);
      const ia = (ra.hits ?? []).map((h) => h.id);
      const ib = (rb.hits ?? []).map((h) => h.id);
      const identical = JSON.stringify(ia) === JSON.stringify(ib);
      const denom = Math.max(ia.length, ib.length);
      const o10 = denom === 0 ? 1 : ia.filter((x) => ib.includes(x)).length / denom;
      s += identical ? 1 : 0;
      ov += o10;
      if (!identical) diffs.push({ kind, body });
      if (!identical && differing.length < 15)
        differing.push(
          `${kind} ${JSON.stringify(body.q)}${body.filter ? ` filter ${body.filter}` : ''}${body.sort ? ` sort ${body.sort}` : ''}: ${ia.join(',')} | ${ib.join(',')}`,
        );
    }
    all += queries.length;
    same += s;
    overlap += ov;
    console.log(
      `${kind.padEnd(16)}${String(queries.length).padStart(3)}   ${((100 * s) / queries.length).toFixed(0).padStart(5)}%            ${(ov / queries.length).toFixed(2)}`,
    );
  }
  console.log(
    `${'all'.padEnd(16)}${String(all).padStart(3)}   ${((100 * same) / all).toFixed(1).padStart(5)}%            ${(overlap / all).toFixed(2)}`,
  );
  console.log('\nfirst differences (a | b):');
  for (const d of differing) console.log(`  ${d}`);
  if (o.diffs) fs.writeFileSync(o.diffs, JSON.stringify(diffs, null, 1));
  if (o.probe) {
    const { probe } = require('./probe');
    for (const d of diffs
      .filter((x) => o.probe === 'all' || o.probe.split(',').includes(x.kind))
      .slice(0, Number(o.probeMax ?? 20))) {
      console.log(`\n##### ${d.kind}`);
      await probe(a, b, 'cmp', d.body);
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
