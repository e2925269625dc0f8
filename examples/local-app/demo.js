#!/usr/bin/env node
/**
 * The desktop app's search service without Electron: indexes a few commands and the files of a
 * folder as "recent files", then types a query a key at a time, printing what the window would
 * show after each keystroke and how long the answer took.
 *
 *   node examples/local-app/demo.js [--files DIR] [--type "open setings"] [--db DIR]
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { openSearch } = require('./search-service');

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

const COMMANDS = [
  ['open-settings', 'Open Settings', 'preferences options configure'],
  ['toggle-theme', 'Toggle Dark Theme', 'appearance colors night mode'],
  ['new-window', 'New Window', 'open another'],
  ['check-updates', 'Check for Updates', 'upgrade version'],
  ['export-pdf', 'Export as PDF', 'print save document'],
].map(([id, title, keywords]) => ({ id, kind: 'command', title, keywords }));

/** Up to `max` files under `dir`, as recent files. */
function files(dir, max = 5000) {
  const out = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (out.length >= max || e.name.startsWith('.') || e.name === 'node_modules' || e.name === 'target') continue;
      const full = path.join(d, e.name);
      if (e.isDirectory()) walk(full);
      else
        out.push({
          id: `f${out.length}`,
          kind: 'file',
          title: e.name,
          path: path.relative(dir, full),
          openedAt: fs.statSync(full).mtimeMs,
        });
    }
  };
  walk(dir);
  return out;
}

async function main() {
  const service = await openSearch(option('db', null));
  try {
    await service.put([...COMMANDS, ...files(path.resolve(option('files', path.join(__dirname, '../..'))))]);
    const typed = option('type', 'open setings');
    for (let n = 1; n <= typed.length; n++) {
      const t0 = process.hrtime.bigint();
      const answer = service.search(typed.slice(0, n));
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      const first = answer.items[0];
      process.stdout.write(
        `${JSON.stringify(typed.slice(0, n)).padEnd(16)} ${ms.toFixed(3)} ms  ${answer.total} hits  ${first ? `${first.kind}: ${first.title}` : '-'}\n`,
      );
    }
  } finally {
    await service.close();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
