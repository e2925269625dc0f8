#!/usr/bin/env node
/**
 * Dump benchmark: how long a dump of a catalogue takes to write, how large it is, and how
 * long a server takes to start from it, on Quarry and (optionally) Meilisearch, either way.
 *
 *   node bench/dumps.js [--dataset npm|pypi] [--rows N]
 *                       [--url URL --key KEY --dump-dir DIR]   dump another server (its dump dir)
 *                       [--meili-bin BIN]                      also import into Meilisearch
 *
 * Without --url it starts Quarry, loads the catalogue and dumps it. The dump is then
 * imported by a fresh Quarry (and by BIN when given), timed from the process start until
 * the catalogue answers a search with every document counted.
 * Side by side with the reference, inside ../shared/tools/with-meilisearch.sh:
 *   node bench/dumps.js --dataset npm --meili-bin $MEILI_BIN
 *   node bench/dumps.js --dataset npm --url http://127.0.0.1:$MEILI_PORT --key masterKey \
 *     --dump-dir $MEILI_DATA/dumps --meili-bin $MEILI_BIN
 * No timing assertions: it reports, it does not judge.
 */
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { client, loadRows, startQuarry, waitTask } = require('./server');

function parseArgs(argv) {
  const o = { dataset: 'npm', rows: 0, batch: 50000 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--dataset') o.dataset = v();
    else if (a === '--rows') o.rows = Number(v());
    else if (a === '--url') o.url = v();
    else if (a === '--key') o.key = v();
    else if (a === '--dump-dir') o.dumpDir = v();
    else if (a === '--meili-bin') o.meiliBin = v();
    else if (a === '--help') {
      console.log(fs.readFileSync(__filename, 'utf8').split('\n').slice(2, 17).join('\n'));
      process.exit(0);
    } else throw new Error(`unknown option ${a}`);
  }
  if (o.url && !o.dumpDir) throw new Error('--url needs --dump-dir (where that server writes its dumps)');
  return o;
}

const ms = (a, b) => Date.parse(b) - Date.parse(a);

async function load(api, rows, batch) {
  let last = null;
  for (let i = 0; i < rows.length; i += batch) {
    const body = JSON.stringify(rows.slice(i, i + batch));
    last = (await api('POST', '/indexes/packages/documents?primaryKey=id', body)).taskUid;
  }
  await waitTask(api, last);
}

/** Starts `cmd args`, then polls until index `packages` holds `count` documents. */
async function timeImport(cmd, args, url, key, count) {
  const t0 = performance.now();
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => (log += d));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const api = client(url, key);
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${path.basename(cmd)} exited: ${log.slice(-800)}`);
      try {
        if ((await api('GET', '/indexes/packages/stats')).numberOfDocuments === count) {
          await api('POST', '/indexes/packages/search', JSON.stringify({ q: 'react' }));
          return performance.now() - t0;
        }
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const rows = (await loadRows(o.dataset, o.rows)).docs;
  let source;
  let quarry = null;
  if (o.url) {
    source = { name: 'reference', api: client(o.url, o.key), dumpDir: o.dumpDir };
  } else {
    const dumpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-dumps-'));
    quarry = await startQuarry(['--dump-dir', dumpDir]);
    source = { name: 'quarry', api: client(quarry.url, quarry.key), dumpDir };
  }
  try {
    await load(source.api, rows, o.batch);
    const task = await waitTask(source.api, (await source.api('POST', '/dumps')).taskUid);
    const file = path.join(source.dumpDir, `${task.details.dumpUid}.dump`);
    const size = fs.statSync(file).size;
    const out = {
      dataset: o.dataset,
      rows: rows.length,
      source: source.name,
      dumpMs: ms(task.startedAt, task.finishedAt),
      dumpBytes: size,
      importMs: {},
    };

    const port = 7780 + (process.pid % 10);
    const qdb = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-import-'));
    const qkey = 'bench-master-key-0123456789';
    out.importMs.quarry = await timeImport(
      process.execPath,
      [
        path.join(__dirname, '../bin/quarry.js'),
        '--db-path',
        path.join(qdb, 'data.ms'),
        '--http-addr',
        `127.0.0.1:${port}`,
        '--master-key',
        qkey,
        '--no-analytics',
        '--log-level',
        'error',
        '--import-dump',
        file,
      ],
      `http://127.0.0.1:${port}`,
      qkey,
      rows.length,
    );
    fs.rmSync(qdb, { recursive: true, force: true });
    if (o.meiliBin) {
      const mdb = fs.mkdtempSync(path.join(os.tmpdir(), 'meili-bench-import-'));
      out.importMs.reference = await timeImport(
        o.meiliBin,
        [
          '--db-path',
          path.join(mdb, 'data.ms'),
          '--http-addr',
          `127.0.0.1:${port + 10}`,
          '--master-key',
          'masterKey',
          '--no-analytics',
          '--import-dump',
          file,
        ],
        `http://127.0.0.1:${port + 10}`,
        'masterKey',
        rows.length,
      );
      fs.rmSync(mdb, { recursive: true, force: true });
    }
    const f = (n) => (n === undefined ? '-' : `${(n / 1000).toFixed(2)} s`);
    console.log(
      `${o.dataset} ${rows.length} rows, dumped by ${out.source}: ${f(out.dumpMs)}, ${(size / 1024 ** 2).toFixed(1)} MiB`,
    );
    console.log(`  imported by quarry: ${f(out.importMs.quarry)}   by the reference: ${f(out.importMs.reference)}`);
    console.log(JSON.stringify(out));
  } finally {
    if (quarry) {
      quarry.child.kill('SIGTERM');
      fs.rmSync(quarry.dbPath, { recursive: true, force: true });
      fs.rmSync(source.dumpDir, { recursive: true, force: true });
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
