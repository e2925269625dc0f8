#!/usr/bin/env node
/**
 * Quarry embedded against the search libraries Node apps embed today: MiniSearch, FlexSearch
 * and Orama, on the same catalogue rows, the same fields (`name`, `summary`) and the same
 * queries, each library in a process of its own. Every query is sent once (one word, two
 * words, a prefix, a one-typo word, a word with a numeric filter), so no side is timed on
 * answers it has just computed. Each library gets its closest search-box options: prefix and
 * typo tolerance on.
 *
 *   node bench/embedded.js [--dataset npm|pypi] [--rows 0 (all)] [--queries 400 (per kind)]
 *                          [--libs quarry,quarry-async,minisearch,flexsearch,orama]
 *                          [--budget-seconds 300] [--meili-bin PATH]
 *
 * Per library: load time (rows in memory to searchable), peak RSS (with the rows themselves,
 * shown apart), size on disk, p50/p99 per query kind, the share of typo queries with hits, and
 * how many of its top 10 are in Quarry's top 10 (and Meilisearch's, with --meili-bin: the
 * reference server loaded with the same rows and settings). A library that runs past its
 * query budget stops there, and the table says how many queries it answered.
 *
 * Writes the figures to bench/results/embedded-<dataset>-<time>.json. No timing assertions.
 */
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { distinctMix, drawers, mulberry32, percentile } = require('./lib');
const { DATASETS, client, duBytes, loadRows, startMeilisearch, waitTask } = require('./server');

const KINDS = ['oneWord', 'twoWords', 'prefix', 'typo1', 'filtered'];
const LIBS = ['quarry', 'quarry-async', 'minisearch', 'flexsearch', 'orama'];

function parseArgs(argv) {
  const o = {
    dataset: 'npm',
    rows: 0,
    queries: 400,
    libs: LIBS.join(','),
    budgetSeconds: 300,
    meiliBin: null,
    child: null,
    out: null,
    queryFile: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i].replace(/^--/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
    const v = argv[++i];
    o[k] = ['rows', 'queries', 'budgetSeconds'].includes(k) ? Number(v) : v;
  }
  return o;
}

/** The rows every library indexes: the searched text and the filtered number. */
async function rowsOf(o) {
  const { docs } = await loadRows(o.dataset, o.rows || undefined);
  const num = DATASETS[o.dataset].filterFields.num;
  return docs.map((d) => ({ id: d.id, name: d.name, summary: d.summary, n: d[num] ?? 0 }));
}

/**
 * The queries, drawn once by the parent: `perKind` distinct texts of each kind, shuffled
 * together. `filtered` is a word with `n > min`, `min` a value of the catalogue.
 */
function drawQueries(rows, perKind) {
  const rand = mulberry32(7);
  const d = drawers(rows, rand, { eq: 'n', num: 'n' });
  const mix = distinctMix(
    { oneWord: d.search.oneWord, twoWords: d.search.twoWords, prefix: d.search.prefix, typo1: d.search.typo1 },
    perKind,
    new Set(),
  );
  const values = rows.map((r) => r.n).filter((n) => n > 0);
  const filtered = distinctMix(
    { filtered: () => ({ q: d.search.oneWord().q, min: values[Math.floor(rand() * values.length)] }) },
    perKind,
    new Set(),
  );
  const all = [];
  for (const [kind, list] of Object.entries({ ...mix, ...filtered }))
    for (const { body } of list) all.push({ kind, q: body.q, min: body.min ?? null });
  for (let i = all.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [all[i], all[j]] = [all[j], all[i]];
  }
  return all;
}

/** Each library: `load(rows)` builds its index; `search(query)` answers the top 10 ids (or null: not supported). */
const SIDES = {
  async quarry(async = false) {
    const { Quarry } = require('../dist/index.js');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-embedded-'));
    let quarry;
    let index;
    return {
      dir,
      async load(rows) {
        quarry = await Quarry.open({ dbPath: dir, logLevel: 'error' });
        index = quarry.index('rows');
        await index
          .updateSettings({ searchableAttributes: ['name', 'summary'], filterableAttributes: ['n'] })
          .waitTask();
        const task = await index.addDocuments(rows).waitTask();
        if (task.status !== 'succeeded') throw new Error(JSON.stringify(task.error));
      },
      search: async
        ? async (x) =>
            (await index.search(x.q, x.min === null ? { limit: 10 } : { limit: 10, filter: `n > ${x.min}` })).hits.map(
              (h) => h.id,
            )
        : (x) =>
            index
              .searchSync(x.q, x.min === null ? { limit: 10 } : { limit: 10, filter: `n > ${x.min}` })
              .hits.map((h) => h.id),
      close: () => quarry.close(),
    };
  },
  'quarry-async'() {
    return SIDES.quarry(true);
  },
  minisearch() {
    const MiniSearch = require('minisearch');
    const ms = new MiniSearch({
      fields: ['name', 'summary'],
      storeFields: ['name', 'summary', 'n'],
      searchOptions: { prefix: true, fuzzy: 0.2 },
    });
    return {
      load: (rows) => ms.addAll(rows),
      search: (x) =>
        (x.min === null ? ms.search(x.q) : ms.search(x.q, { filter: (r) => r.n > x.min }))
          .slice(0, 10)
          .map((r) => r.id),
    };
  },
  flexsearch() {
    const { Document, Charset } = require('flexsearch');
    const index = new Document({
      document: { id: 'id', index: ['name', 'summary'] },
      tokenize: 'forward',
      encoder: Charset.LatinBalance,
    });
    return {
      load: (rows) => {
        for (const r of rows) index.add(r);
      },
      // No range filter: the `filtered` kind is not answered.
      search: (x) =>
        x.min === null ? index.search(x.q, { limit: 10, suggest: true, merge: true }).map((r) => r.id) : null,
    };
  },
  async orama() {
    const { create, insertMultiple, search } = await import('@orama/orama');
    const db = create({ schema: { name: 'string', summary: 'string', n: 'number' } });
    return {
      load: (rows) =>
        insertMultiple(
          db,
          rows.map((r) => ({ ...r, id: String(r.id) })),
          1000,
        ),
      search: async (x) =>
        (
          await search(db, {
            term: x.q,
            properties: ['name', 'summary'],
            tolerance: 1,
            limit: 10,
            ...(x.min === null ? {} : { where: { n: { gt: x.min } } }),
          })
        ).hits.map((h) => Number(h.id)),
    };
  },
};

function peakRssMiB() {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : null;
}

/** One library in this process: loads, answers every query (within the budget), writes its figures to `o.out`. */
async function child(o) {
  const rows = await rowsOf(o);
  const queries = JSON.parse(fs.readFileSync(o.queryFile, 'utf8'));
  global.gc?.();
  const rowsMiB = process.memoryUsage().rss / 2 ** 20;
  const side = await SIDES[o.child]();
  const t0 = process.hrtime.bigint();
  await side.load(rows);
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const diskMiB = side.dir ? duBytes(side.dir) / 2 ** 20 : null;
  const ms = Object.fromEntries(KINDS.map((k) => [k, []]));
  const top = [];
  const deadline = Date.now() + o.budgetSeconds * 1000;
  for (const x of queries) {
    if (Date.now() > deadline) break;
    const a = process.hrtime.bigint();
    const ids = await side.search(x);
    const took = Number(process.hrtime.bigint() - a) / 1e6;
    top.push(ids);
    if (ids !== null) ms[x.kind].push(took);
  }
  const peakMiB = peakRssMiB();
  await side.close?.();
  if (side.dir) fs.rmSync(side.dir, { recursive: true, force: true });
  const perKind = Object.fromEntries(
    KINDS.map((k) => [
      k,
      ms[k].length ? { n: ms[k].length, p50: percentile(ms[k], 50), p99: percentile(ms[k], 99) } : null,
    ]),
  );
  const all = KINDS.filter((k) => k !== 'filtered').flatMap((k) => ms[k]);
  fs.writeFileSync(
    o.out,
    JSON.stringify({
      lib: o.child,
      rows: rows.length,
      loadMs,
      rowsMiB,
      peakMiB,
      diskMiB,
      answered: top.length,
      perKind,
      search: all.length ? { p50: percentile(all, 50), p99: percentile(all, 99) } : null,
      top,
    }),
  );
}

/** Meilisearch's top 10 for every query (the reference server, same rows and settings). */
async function meiliTop(o, rows, queries) {
  const meili = await startMeilisearch(o.meiliBin);
  try {
    const api = client(meili.url, meili.key);
    await waitTask(
      api,
      (
        await api(
          'PATCH',
          '/indexes/rows/settings',
          JSON.stringify({ searchableAttributes: ['name', 'summary'], filterableAttributes: ['n'] }),
        )
      ).taskUid,
    );
    const enq = await api(
      'POST',
      '/indexes/rows/documents?primaryKey=id',
      rows.map((r) => JSON.stringify(r)).join('\n'),
      'application/x-ndjson',
    );
    await waitTask(api, enq.taskUid);
    const top = [];
    for (const x of queries) {
      const body = {
        q: x.q,
        limit: 10,
        attributesToRetrieve: ['id'],
        ...(x.min === null ? {} : { filter: `n > ${x.min}` }),
      };
      top.push((await api('POST', '/indexes/rows/search', JSON.stringify(body))).hits.map((h) => h.id));
    }
    return top;
  } finally {
    meili.child.kill('SIGKILL');
    fs.rmSync(meili.root, { recursive: true, force: true });
  }
}

/** The mean share of `reference`'s top 10 (queries where it has hits) found in `top`'s. */
function overlap(top, reference) {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < Math.min(top.length, reference.length); i++) {
    if (top[i] === null || !reference[i]?.length) continue;
    const mine = new Set(top[i]);
    sum += reference[i].filter((id) => mine.has(id)).length / reference[i].length;
    n++;
  }
  return n ? sum / n : null;
}

function runChild(o, lib, queryFile) {
  const out = path.join(os.tmpdir(), `quarry-embedded-${process.pid}-${lib}.json`);
  const args = [
    __filename,
    '--child',
    lib,
    '--out',
    out,
    '--query-file',
    queryFile,
    '--dataset',
    o.dataset,
    '--rows',
    String(o.rows),
    '--budget-seconds',
    String(o.budgetSeconds),
  ];
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['--expose-gc', '--max-old-space-size=8192', ...args], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    c.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`${lib} exited with ${code}`));
      const r = JSON.parse(fs.readFileSync(out, 'utf8'));
      fs.rmSync(out, { force: true });
      resolve(r);
    });
  });
}

const f = (x, d = 1) => (x === null || x === undefined ? '-' : x.toFixed(d));

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.child) return child(o);
  const rows = await rowsOf(o);
  const queries = drawQueries(rows, o.queries);
  const queryFile = path.join(os.tmpdir(), `quarry-embedded-${process.pid}-queries.json`);
  fs.writeFileSync(queryFile, JSON.stringify(queries));
  process.stdout.write(
    `${rows.length} ${o.dataset} rows; ${queries.length} queries (${o.queries} of each of ${KINDS.join(', ')}), each sent once\n`,
  );
  const results = [];
  try {
    for (const lib of o.libs.split(',')) {
      process.stdout.write(`${lib}...\n`);
      results.push(await runChild(o, lib, queryFile));
    }
  } finally {
    fs.rmSync(queryFile, { force: true });
  }
  const reference = o.meiliBin ? await meiliTop(o, rows, queries) : null;
  const quarryTop = results.find((r) => r.lib === 'quarry')?.top ?? null;
  const typoHits = (r) => {
    const typos = r.top.map((ids, i) => [ids, queries[i]]).filter(([, q]) => q.kind === 'typo1');
    return typos.length ? (100 * typos.filter(([ids]) => ids.length > 0).length) / typos.length : null;
  };
  const lines = [
    `| library | load s | peak RSS MiB (rows) | disk MiB | search p50 ms | p99 ms | filtered p50 / p99 ms | typo queries with hits | top 10 in Quarry's${reference ? " | top 10 in Meilisearch's" : ''} |`,
    `|---|---|---|---|---|---|---|---|---${reference ? '|---' : ''}|`,
  ];
  for (const r of results) {
    const fl = r.perKind.filtered;
    const done =
      r.answered < queries.length ? ` (${r.answered}/${queries.length} queries in ${o.budgetSeconds} s)` : '';
    lines.push(
      `| ${r.lib}${done} | ${f(r.loadMs / 1000, 2)} | ${f(r.peakMiB, 0)} (${f(r.rowsMiB, 0)}) | ${f(r.diskMiB, 0)} | ${f(r.search?.p50, 3)} | ${f(r.search?.p99, 3)} | ${fl ? `${f(fl.p50, 3)} / ${f(fl.p99, 3)}` : 'no range filter'} | ${f(typoHits(r), 0)}% | ${quarryTop ? `${f(100 * overlap(r.top, quarryTop), 0)}%` : '-'}${reference ? ` | ${f(100 * overlap(r.top, reference), 0)}%` : ''} |`,
    );
  }
  const perKind = results.map(
    (r) =>
      `${r.lib}: ${KINDS.map((k) => `${k} ${r.perKind[k] ? `${f(r.perKind[k].p50, 3)}/${f(r.perKind[k].p99, 3)}` : '-'}`).join(', ')}`,
  );
  process.stdout.write(`\n${lines.join('\n')}\n\np50/p99 ms per kind:\n${perKind.join('\n')}\n`);
  const dir = path.join(__dirname, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `embedded-${o.dataset}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(
    file,
    JSON.stringify(
      {
        options: o,
        machine: { cpus: os.cpus().length, memGiB: os.totalmem() / 2 ** 30 },
        results: results.map(({ top: _t, ...r }) => r),
        table: lines,
      },
      null,
      1,
    ),
  );
  process.stdout.write(`written to ${file}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
