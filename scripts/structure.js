#!/usr/bin/env node
/**
 * The engine's structure in figures, from its sources' `use` lines:
 *
 *   node scripts/structure.js [crates/engine/src]
 *
 * Prints the files and lines per directory, the largest files, the files that add methods to
 * `Index` (`impl Index`), the `too_many_arguments` allowances, and the cycles between files
 * (strongly connected components of the graph "file A uses an item of file B"; tests left
 * out). Reads text only: a `use` of a module counts as an edge to that module's file.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(process.argv[2] ?? 'crates/engine/src');

function walk(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p));
    else if (e.name.endsWith('.rs') && e.name !== 'tests.rs' && !p.includes(`${path.sep}tests${path.sep}`)) out.push(p);
  }
  return out;
}

/** The module path of a file: `search/query/mod.rs` → ['search', 'query']. */
function modulePath(file) {
  const rel = path.relative(root, file).replace(/\.rs$/, '').split(path.sep);
  if (rel[rel.length - 1] === 'mod' || rel[rel.length - 1] === 'lib') rel.pop();
  return rel;
}

const files = walk(root);
const byModule = new Map(files.map((f) => [modulePath(f).join('::'), f]));

/** The file of the deepest module along `segments` (an item's path ends in a non-module). */
function fileOf(segments) {
  for (let n = segments.length; n >= 0; n--) {
    const f = byModule.get(segments.slice(0, n).join('::'));
    if (f) return f;
  }
  return null;
}

/** Expands `a::{b, c::{d}}` into full paths. */
function expand(text) {
  const open = text.indexOf('{');
  if (open < 0) return [text.trim()];
  const head = text.slice(0, open);
  const inner = text.slice(open + 1, text.lastIndexOf('}'));
  const parts = [];
  let depth = 0;
  let cur = '';
  for (const c of inner) {
    if (c === '{') depth++;
    if (c === '}') depth--;
    if (c === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  parts.push(cur);
  return parts.filter((p) => p.trim()).flatMap((p) => expand(head + p.trim()));
}

function withoutTests(text) {
  const at = text.search(/#\[cfg\(test\)\]\s*mod tests\s*\{/);
  return at < 0 ? text : text.slice(0, at);
}

const edges = new Map(files.map((f) => [f, new Set()]));
for (const file of files) {
  const here = modulePath(file);
  const text = withoutTests(fs.readFileSync(file, 'utf8'));
  for (const m of text.matchAll(/^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);/gms)) {
    for (const full of expand(m[1].replace(/\s+/g, ' '))) {
      let segs = full
        .split(' as ')[0]
        .split('::')
        .map((s) => s.trim());
      if (segs[0] === 'crate') segs = segs.slice(1);
      else if (segs[0] === 'super' || segs[0] === 'self') {
        let base = [...here];
        // A file `a/b.rs` is module a::b; `super` is a.
        while (segs[0] === 'super') {
          base = base.slice(0, -1);
          segs = segs.slice(1);
        }
        if (segs[0] === 'self') segs = segs.slice(1);
        segs = [...base, ...segs];
      } else continue;
      const target = fileOf(segs);
      if (target && target !== file) edges.get(file).add(target);
    }
  }
}

// Tarjan's strongly connected components.
let index = 0;
const stack = [];
const info = new Map();
const components = [];
function connect(v) {
  info.set(v, { index, low: index, on: true });
  index++;
  stack.push(v);
  for (const w of edges.get(v)) {
    if (!info.has(w)) {
      connect(w);
      info.get(v).low = Math.min(info.get(v).low, info.get(w).low);
    } else if (info.get(w).on) info.get(v).low = Math.min(info.get(v).low, info.get(w).index);
  }
  if (info.get(v).low === info.get(v).index) {
    const comp = [];
    let w;
    do {
      w = stack.pop();
      info.get(w).on = false;
      comp.push(w);
    } while (w !== v);
    if (comp.length > 1) components.push(comp);
  }
}
for (const f of files) if (!info.has(f)) connect(f);

const rel = (f) => path.relative(process.cwd(), f);
const lines = (f) => fs.readFileSync(f, 'utf8').split('\n').length - 1;
const modules = new Map();
for (const f of files) {
  const top = path.dirname(path.relative(root, f)) || '.';
  const m = modules.get(top) ?? { files: 0, lines: 0 };
  m.files++;
  m.lines += lines(f);
  modules.set(top, m);
}
console.log(`${files.length} files, ${files.reduce((n, f) => n + lines(f), 0)} lines (tests left out)`);
console.log('\nfiles and lines per directory:');
for (const [m, v] of [...modules].sort((a, b) => b[1].lines - a[1].lines))
  console.log(`  ${m.padEnd(28)} ${String(v.files).padStart(3)} ${String(v.lines).padStart(6)}`);
console.log('\nlargest files:');
for (const f of [...files].sort((a, b) => lines(b) - lines(a)).slice(0, 8))
  console.log(`  ${String(lines(f)).padStart(5)} ${rel(f)}`);
const impls = files.filter((f) => /^impl Index\b/m.test(fs.readFileSync(f, 'utf8')));
console.log(`\nfiles with \`impl Index\`: ${impls.length}`);
const allowances = files.reduce(
  (n, f) => n + (fs.readFileSync(f, 'utf8').match(/too_many_arguments/g) ?? []).length,
  0,
);
console.log(`too_many_arguments allowances: ${allowances}`);
console.log(`\ncycles between files: ${components.length}`);
for (const c of components.sort((a, b) => b.length - a.length))
  console.log(`  ${c.length} files: ${c.map((f) => path.relative(root, f)).join(', ')}`);
