#!/usr/bin/env node
/**
 * Search a folder of Markdown files (notes, docs, a wiki) from the command line, with Quarry
 * embedded: every section (a heading and the text under it) is a document, so a hit points at
 * the place in the file. The index is kept in `--db` (default `<folder>/.quarry`) and brought
 * up to date at each run: files added or changed since the last run are read again, files
 * removed are dropped, unchanged ones are not touched.
 *
 *   node examples/markdown-folder/search.js <folder> [query...] [--db DIR] [--limit 10]
 *
 * Without a query it only brings the index up to date. Prints each hit as `file:line  heading`
 * with the matched words of its text.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

// Installed: `require('quarry-search')`; inside the repository: its build.
let Quarry;
try {
  ({ Quarry } = require('quarry-search'));
} catch {
  ({ Quarry } = require('../../dist/index.js'));
}

function parseArgs(argv) {
  const o = { folder: null, words: [], db: null, limit: 10 };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--db') o.db = argv[++i];
    else if (argv[i] === '--limit') o.limit = Number(argv[++i]);
    else if (o.folder === null) o.folder = argv[i];
    else o.words.push(argv[i]);
  }
  if (!o.folder) throw new Error('usage: search.js <folder> [query...] [--db DIR] [--limit 10]');
  return o;
}

/** The Markdown files under `dir` (hidden folders and node_modules skipped), relative to `root`. */
function markdownFiles(root, dir = root, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.') || e.name === 'node_modules') continue;
    const full = path.join(dir, e.name);
    if (e.isDirectory()) markdownFiles(root, full, out);
    else if (/\.(md|markdown)$/i.test(e.name)) out.push(path.relative(root, full));
  }
  return out;
}

/**
 * A file's sections: the text before the first heading, then each heading with what follows
 * it up to the next one. `title` is the file's first heading (or its name).
 */
function sections(file, text, mtimeMs) {
  const lines = text.split(/\r?\n/);
  const title = lines.map((l) => /^#\s+(.*)/.exec(l)?.[1]).find(Boolean) ?? path.basename(file);
  const out = [];
  let current = { heading: title, line: 1, body: [], start: true };
  let fenced = false;
  lines.forEach((l, i) => {
    if (/^(```|~~~)/.test(l)) fenced = !fenced;
    const h = fenced ? null : /^#{1,6}\s+(.*)/.exec(l);
    if (h) {
      if (!current.start || current.body.join('').trim()) out.push(current);
      current = { heading: h[1].trim(), line: i + 1, body: [] };
    } else current.body.push(l);
  });
  out.push(current);
  // Ids may hold letters, digits, `-` and `_` only: the file's path is spelled out in hex.
  const key = Buffer.from(file).toString('hex');
  return out.map((s, n) => ({
    id: `${key}-${n}`,
    file,
    line: s.line,
    title,
    heading: s.heading,
    text: s.body.join('\n').trim(),
    mtimeMs,
  }));
}

/** Brings the index up to date with the folder: re-reads what changed, drops what is gone. */
async function sync(index, folder) {
  const known = new Map();
  for (let offset = 0; ; offset += 1000) {
    const page = await index.getDocuments({ fields: ['id', 'file', 'mtimeMs'], limit: 1000, offset }).catch((e) => {
      if (e.code === 'index_not_found') return { results: [] };
      throw e;
    });
    for (const d of page.results) {
      const entry = known.get(d.file) ?? { mtimeMs: d.mtimeMs, ids: [] };
      entry.ids.push(d.id);
      known.set(d.file, entry);
    }
    if (page.results.length < 1000) break;
  }
  const added = [];
  const removed = [];
  const files = markdownFiles(folder);
  for (const file of files) {
    const mtimeMs = fs.statSync(path.join(folder, file)).mtimeMs;
    const before = known.get(file);
    known.delete(file);
    if (before && before.mtimeMs === mtimeMs) continue;
    if (before) removed.push(...before.ids);
    added.push(...sections(file, fs.readFileSync(path.join(folder, file), 'utf8'), mtimeMs));
  }
  for (const gone of known.values()) removed.push(...gone.ids);
  for (const write of [
    removed.length && index.deleteDocuments(removed),
    added.length && index.addDocuments(added, { primaryKey: 'id' }),
  ]) {
    if (!write) continue;
    const task = await write.waitTask();
    if (task.status !== 'succeeded') throw new Error(task.error.message);
  }
  return { files: files.length, sections: added.length, removed: removed.length };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const folder = path.resolve(o.folder);
  const quarry = await Quarry.open({ dbPath: o.db ?? path.join(folder, '.quarry'), logLevel: 'error' });
  try {
    const index = quarry.index('notes');
    await index
      .updateSettings({
        searchableAttributes: ['heading', 'title', 'text', 'file'],
        displayedAttributes: ['file', 'line', 'heading', 'text'],
      })
      .waitTask();
    const synced = await sync(index, folder);
    process.stdout.write(`${synced.files} files: ${synced.sections} sections read, ${synced.removed} dropped\n`);
    if (!o.words.length) return;
    const { hits, estimatedTotalHits } = index.searchSync(o.words.join(' '), {
      limit: o.limit,
      attributesToHighlight: ['heading', 'text'],
      attributesToCrop: ['text'],
      cropLength: 16,
      highlightPreTag: '\x1b[1m',
      highlightPostTag: '\x1b[0m',
    });
    for (const h of hits)
      process.stdout.write(
        `${h.file}:${h.line}  ${h._formatted.heading}\n    ${h._formatted.text.replace(/\s+/g, ' ')}\n`,
      );
    process.stdout.write(`${estimatedTotalHits} sections match\n`);
  } finally {
    await quarry.close();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
