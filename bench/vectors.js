#!/usr/bin/env node
/**
 * Vector benchmark: the first N npm-catalogue summaries embedded by the local model
 * (all-MiniLM-L6-v2, 384 dimensions, from `scripts/fetch-model.sh`), then loaded into a server
 * as `userProvided` vectors and searched.
 *
 *   node bench/vectors.js [--rows 100000] [--queries 200] [--warmup 200] [--concurrency 8]
 *                         [--url URL --key KEY [--pid PID] [--data DIR]] [--out file.json]
 *
 * The embeddings are computed once by Quarry's own `huggingFace` embedder (that run gives the
 * model's throughput) and cached in bench/data/, so later runs, and runs against another
 * server, load the same vectors. Reports: embedding texts/s, vector indexing docs/s, disk per
 * vector, semantic search p50/p99 at concurrency 1 and QPS at --concurrency, hybrid search
 * p50/p99, and recall@10 against exact (brute-force) cosine. No timing assertions. Before the
 * timed queries, --warmup documents of another seed are searched both ways, untimed in the
 * figures above and reported apart as the first queries.
 */
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { mulberry32, percentile, quietClient } = require('./lib');
const { client, duBytes, loadRows, rssOf, startQuarry, waitTask } = require('./server');

const DIMS = 384;
const MODELS = path.join(__dirname, '../.cache/models');
const MODEL = 'sentence-transformers/all-MiniLM-L6-v2';
const MODEL_ARGS = [
  '--experimental-models-dir',
  MODELS,
  '--experimental-onnxruntime-path',
  path.join(MODELS, 'onnxruntime/libonnxruntime.so'),
];

function parseArgs(argv) {
  const o = { rows: 100000, queries: 200, warmup: 200, concurrency: 8, qpsSeconds: 10 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--rows') o.rows = Number(v());
    else if (a === '--queries') o.queries = Number(v());
    else if (a === '--warmup') o.warmup = Number(v());
    else if (a === '--concurrency') o.concurrency = Number(v());
    else if (a === '--qps-seconds') o.qpsSeconds = Number(v());
    else if (a === '--url') o.url = v();
    else if (a === '--key') o.key = v();
    else if (a === '--pid') o.pid = Number(v());
    else if (a === '--data') o.data = v();
    else if (a === '--out') o.out = v();
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const text = (d) => (d.summary?.trim() ? d.summary : d.name);

/** The cached embeddings of the first `rows` documents, computed by Quarry when missing. */
async function embeddings(docs) {
  const file = path.join(__dirname, 'data', `npm-minilm-${docs.length}.f32`);
  if (fs.existsSync(file)) {
    const buf = fs.readFileSync(file);
    return { vectors: new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4), throughput: null };
  }
  console.error(`embedding ${docs.length} texts with the local model (cached in ${file} afterwards)...`);
  const q = await startQuarry(MODEL_ARGS);
  const api = client(q.url, q.key);
  try {
    const uid = 'embed';
    await waitTask(api, (await api('POST', '/indexes', JSON.stringify({ uid, primaryKey: 'id' }))).taskUid);
    const embedder = { source: 'huggingFace', model: MODEL, documentTemplate: '{{doc.text}}' };
    await waitTask(
      api,
      (await api('PATCH', `/indexes/${uid}/settings`, JSON.stringify({ embedders: { minilm: embedder } }))).taskUid,
    );
    const t0 = Date.now();
    for (let i = 0; i < docs.length; i += 5000) {
      const batch = docs.slice(i, i + 5000).map((d) => ({ id: d.id, text: text(d) }));
      await waitTask(api, (await api('POST', `/indexes/${uid}/documents`, JSON.stringify(batch))).taskUid);
      process.stderr.write(`  embedded ${Math.min(i + 5000, docs.length)} / ${docs.length}\r`);
    }
    const throughput = docs.length / ((Date.now() - t0) / 1000);
    const vectors = new Float32Array(docs.length * DIMS);
    for (let offset = 0; offset < docs.length; offset += 1000) {
      const page = await api(
        'GET',
        `/indexes/${uid}/documents?retrieveVectors=true&limit=1000&offset=${offset}&fields=id`,
      );
      for (const d of page.results) vectors.set(d._vectors.minilm.embeddings[0], d.id * DIMS);
    }
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, Buffer.from(vectors.buffer));
    return { vectors, throughput };
  } finally {
    q.child.kill('SIGKILL');
    fs.rmSync(q.dbPath, { recursive: true, force: true });
  }
}

const vec = (vectors, i) => Array.from(vectors.subarray(i * DIMS, (i + 1) * DIMS));

/** The exact top 10 by cosine (the vectors are normalized: the dot product). */
function exactTop10(vectors, n, query) {
  const best = [];
  for (let i = 0; i < n; i++) {
    let dot = 0;
    const base = i * DIMS;
    for (let k = 0; k < DIMS; k++) dot += vectors[base + k] * query[k];
    if (best.length < 10 || dot > best[best.length - 1][1]) {
      best.push([i, dot]);
      best.sort((a, b) => b[1] - a[1]);
      if (best.length > 10) best.pop();
    }
  }
  return best.map((b) => b[0]);
}

async function time(api, index, bodies, concurrency) {
  const lat = [];
  const hits = [];
  let next = 0;
  async function loop() {
    while (next < bodies.length) {
      const i = next++;
      const t0 = process.hrtime.bigint();
      const r = await api('POST', `/indexes/${index}/search`, JSON.stringify(bodies[i]));
      lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
      hits[i] = r.hits.map((h) => h.id);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop));
  return { lat, hits };
}

async function qps(api, index, bodies, concurrency, seconds) {
  const end = Date.now() + seconds * 1000;
  let done = 0;
  let i = 0;
  async function loop() {
    while (Date.now() < end) {
      await api('POST', `/indexes/${index}/search`, JSON.stringify(bodies[i++ % bodies.length]));
      done++;
    }
  }
  const t0 = Date.now();
  await Promise.all(Array.from({ length: concurrency }, loop));
  return done / ((Date.now() - t0) / 1000);
}

async function main() {
  quietClient();
  const o = parseArgs(process.argv.slice(2));
  const { docs } = await loadRows('npm', o.rows);
  const { vectors, throughput } = await embeddings(docs);
  const started = o.url ? null : await startQuarry();
  const api = client(o.url ?? started.url, o.key ?? started.key);
  const pid = o.pid ?? started?.pid;
  const index = `vectors_${Date.now()}`;
  const results = {
    rows: docs.length,
    url: o.url ?? 'self-started quarry',
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length },
    embeddingTextsPerSecond: throughput,
  };
  try {
    await waitTask(api, (await api('POST', '/indexes', JSON.stringify({ uid: index, primaryKey: 'id' }))).taskUid);
    const settings = {
      searchableAttributes: ['name', 'summary'],
      embedders: { minilm: { source: 'userProvided', dimensions: DIMS } },
    };
    await waitTask(api, (await api('PATCH', `/indexes/${index}/settings`, JSON.stringify(settings))).taskUid);
    const t0 = Date.now();
    const uids = [];
    for (let i = 0; i < docs.length; i += 10000) {
      const batch = docs
        .slice(i, i + 10000)
        .map((d) => ({ id: d.id, name: d.name, summary: d.summary, _vectors: { minilm: vec(vectors, d.id) } }));
      uids.push((await api('POST', `/indexes/${index}/documents`, JSON.stringify(batch))).taskUid);
    }
    for (const u of uids)
      await waitTask(api, u, (t) => process.stderr.write(`  indexing: task ${t.uid} ${t.status}     \r`));
    const seconds = (Date.now() - t0) / 1000;
    results.indexing = { seconds, docsPerSecond: docs.length / seconds };
    results.memory = pid ? rssOf(pid) : null;
    const dataDir = o.data ?? started?.dbPath;
    const disk = dataDir ? duBytes(dataDir) : null;
    results.disk = { bytes: disk, bytesPerVector: disk === null ? null : disk / docs.length };

    // Queries: the vectors of seeded random documents, and for hybrid one word of their name.
    const semanticOf = (i) => ({
      vector: vec(vectors, i),
      hybrid: { embedder: 'minilm', semanticRatio: 1 },
      limit: 10,
      attributesToRetrieve: ['id'],
    });
    const hybridOf = (i) => ({
      q: docs[i].name.split(/[^A-Za-z0-9]+/).filter(Boolean)[0] ?? docs[i].name,
      vector: vec(vectors, i),
      hybrid: { embedder: 'minilm', semanticRatio: 0.5 },
      limit: 10,
      attributesToRetrieve: ['id'],
    });
    // The first queries after indexing (another seed, untimed figures reported apart): both
    // servers are then measured running, not compiling their code or loading their graphs.
    if (o.warmup > 0) {
      const wrand = mulberry32(7);
      const warm = Array.from({ length: o.warmup }, () => Math.floor(wrand() * docs.length)).flatMap((i) => [
        semanticOf(i),
        hybridOf(i),
      ]);
      process.stderr.write('  first queries...               \r');
      const { lat } = await time(api, index, warm, 1);
      results.firstQueries = { n: lat.length, p50: percentile(lat, 50), p99: percentile(lat, 99) };
    }
    const rand = mulberry32(42);
    const picks = Array.from({ length: o.queries }, () => Math.floor(rand() * docs.length));
    const semantic = picks.map(semanticOf);
    const hybrid = picks.map(hybridOf);
    process.stderr.write('  semantic queries...            \r');
    const sem = await time(api, index, semantic, 1);
    let found = 0;
    picks.forEach((p, qi) => {
      const exact = new Set(exactTop10(vectors, docs.length, vectors.subarray(p * DIMS, (p + 1) * DIMS)));
      found += sem.hits[qi].filter((id) => exact.has(id)).length;
    });
    results.semantic = {
      p50: percentile(sem.lat, 50),
      p99: percentile(sem.lat, 99),
      recallAt10: found / (10 * picks.length),
    };
    process.stderr.write('  hybrid queries...              \r');
    const hyb = await time(api, index, hybrid, 1);
    results.hybrid = { p50: percentile(hyb.lat, 50), p99: percentile(hyb.lat, 99) };
    process.stderr.write('  throughput...                  \r');
    results.semantic.qps = await qps(api, index, semantic, o.concurrency, o.qpsSeconds);
    results.memory = pid ? { ...results.memory, afterSearch: rssOf(pid) } : null;
  } finally {
    if (started) {
      started.child.kill('SIGKILL');
      fs.rmSync(started.dbPath, { recursive: true, force: true });
    }
  }
  const f = (n, d = 2) => (n === null || n === undefined ? '-' : Number(n).toFixed(d));
  console.log(
    [
      `vectors: ${results.rows} npm summaries, ${DIMS} dimensions (${results.url})`,
      `embedding (local model, in Quarry): ${f(results.embeddingTextsPerSecond, 0)} texts/s${results.embeddingTextsPerSecond === null ? ' (cached vectors)' : ''}`,
      `indexing: ${f(results.indexing.docsPerSecond, 0)} docs/s (${f(results.indexing.seconds, 1)} s), peak RSS ${results.memory?.peak ? `${(results.memory.peak / 2 ** 20).toFixed(0)} MiB` : '-'}`,
      `disk: ${results.disk.bytes === null ? '-' : `${(results.disk.bytes / 2 ** 20).toFixed(1)} MiB`}, ${f(results.disk.bytesPerVector, 0)} bytes per vector`,
      `semantic: p50 ${f(results.semantic.p50)} ms, p99 ${f(results.semantic.p99)} ms, QPS at ${o.concurrency}: ${f(results.semantic.qps, 0)}, recall@10 ${f(results.semantic.recallAt10, 3)}`,
      `hybrid: p50 ${f(results.hybrid.p50)} ms, p99 ${f(results.hybrid.p99)} ms`,
      `first queries (${results.firstQueries?.n ?? 0}, untimed mix): p50 ${f(results.firstQueries?.p50)} ms, p99 ${f(results.firstQueries?.p99)} ms`,
    ].join('\n'),
  );
  const out = o.out ?? path.join(__dirname, 'results', `vectors-${Date.now()}.json`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(results, null, 2));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
