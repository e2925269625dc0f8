#!/usr/bin/env node
/**
 * A search box over a package catalogue, served by a plain Node HTTP server with Quarry
 * embedded as a library: no Quarry server, no port but this app's own.
 *
 *   node examples/library-search/server.js [--catalogue ../shared/data/npm-packages.tsv.gz]
 *        [--rows 50000] [--port 3000] [--db ./example-data]
 *
 * Without a catalogue it indexes a few built-in rows. Open http://localhost:3000 and type.
 */
'use strict';
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const readline = require('node:readline');
const zlib = require('node:zlib');

// Installed: `require('quarry-search')`; inside the repository: its build.
let Quarry;
try {
  ({ Quarry } = require('quarry-search'));
} catch {
  ({ Quarry } = require('../../dist/index.js'));
}

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

const SAMPLE = [
  { name: 'express', downloads: 90000000, summary: 'Fast, unopinionated, minimalist web framework' },
  { name: 'react', downloads: 80000000, summary: 'React is a JavaScript library for building user interfaces.' },
  { name: 'lodash', downloads: 70000000, summary: 'Lodash modular utilities.' },
  {
    name: 'zod',
    downloads: 20000000,
    summary: 'TypeScript-first schema declaration and validation library with static type inference',
  },
];

/** Rows of the npm catalogue TSV (name, version, downloads, summary), as documents. */
async function* catalogue(file, limit) {
  const lines = readline.createInterface({ input: fs.createReadStream(file).pipe(zlib.createGunzip()) });
  let n = -1;
  for await (const line of lines) {
    if (n++ < 0 || !line) continue;
    if (n > limit) break;
    const c = line.split('\t');
    yield { id: n, name: c[0], downloads: Number(c[2]) || 0, summary: c[3] ?? '' };
  }
}

async function load(index, file, rows) {
  if (!file) return index.addDocuments(SAMPLE.map((d, i) => ({ id: i + 1, ...d }))).waitTask();
  let chunk = [];
  let last = null;
  for await (const doc of catalogue(file, rows)) {
    chunk.push(JSON.stringify(doc));
    if (chunk.length === 20000) {
      last = index.addDocuments(chunk.join('\n'), { format: 'ndjson' });
      await last;
      chunk = [];
    }
  }
  if (chunk.length) last = index.addDocuments(chunk.join('\n'), { format: 'ndjson' });
  return last?.waitTask({
    onProgress: (p) => p.progress && process.stdout.write(`indexing: ${p.progress.percentage}%\r`),
  });
}

const PAGE = `<!doctype html><meta charset="utf-8"><title>Package search</title>
<style>body{font:16px system-ui;margin:2em auto;max-width:46em}input{font-size:1.2em;width:100%;padding:.4em}
li{margin:.6em 0}em{background:#ffec99;font-style:normal}small{color:#666}</style>
<input id="q" autofocus placeholder="Search packages…"><p id="meta"></p><ol id="hits"></ol>
<script>
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const mark = (s) => esc(s).replace(/&lt;em&gt;/g, '<em>').replace(/&lt;\\/em&gt;/g, '</em>');
let seq = 0;
async function run() {
  const mine = ++seq;
  const res = await fetch('/search?q=' + encodeURIComponent(q.value));
  const body = await res.json();
  if (mine !== seq) return;
  meta.textContent = body.estimatedTotalHits + ' packages, ' + body.processingTimeMs + ' ms';
  hits.innerHTML = body.hits.map((h) => '<li><b>' + mark(h._formatted.name) + '</b> <small>' + esc(h.downloads) + ' downloads</small><br>' + mark(h._formatted.summary) + '</li>').join('');
}
q.addEventListener('input', run);
run();
</script>`;

async function main() {
  const db = path.resolve(option('db', './example-data'));
  const quarry = await Quarry.open({ dbPath: db });
  const index = quarry.index('packages');
  const settings = await index
    .updateSettings({
      searchableAttributes: ['name', 'summary'],
      rankingRules: ['words', 'typo', 'proximity', 'attribute', 'exactness', 'downloads:desc'],
    })
    .waitTask();
  if (settings.status !== 'succeeded') throw new Error(JSON.stringify(settings.error));
  if ((await index.getStats()).numberOfDocuments === 0) {
    const task = await load(index, option('catalogue', null), Number(option('rows', 50000)));
    if (task.status !== 'succeeded') throw new Error(JSON.stringify(task.error));
  }

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/search') {
      try {
        // The engine's JSON bytes, sent as they are.
        const bytes = await index.searchBytes({
          q: url.searchParams.get('q') ?? '',
          limit: 10,
          attributesToHighlight: ['name', 'summary'],
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end(bytes);
      } catch (err) {
        res
          .writeHead(err.httpStatus ?? 500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ code: err.code, message: err.message }));
      }
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
  });
  server.listen(Number(option('port', 3000)), '127.0.0.1', () => {
    process.stdout.write(`search box on http://127.0.0.1:${server.address().port}\n`);
  });
  const stop = () => server.close(() => quarry.close().then(() => process.exit(0)));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
