/**
 * What the benchmarks share: the catalogues (read from the TSV files), starting Quarry (or the
 * reference Meilisearch) on a temporary data directory, a keep-alive HTTP client, waiting for tasks, and reading a
 * process's memory, CPU time and a directory's size from /proc and the file system.
 */
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const readline = require('node:readline');
const { stepSeconds } = require('./lib');

const DATASETS = {
  pypi: {
    file: 'pypi-packages.tsv.gz',
    convert: (c) => ({
      name: c[0],
      version: c[1],
      month: c[2],
      rank: c[3] === '' ? null : Number(c[3]),
      summary: c[4] ?? '',
    }),
    settings: {
      searchableAttributes: ['name', 'summary'],
      filterableAttributes: ['month', 'rank'],
      sortableAttributes: ['month', 'rank'],
    },
    filterFields: { eq: 'month', num: 'rank' },
  },
  npm: {
    file: 'npm-packages.tsv.gz',
    convert: (c) => ({ name: c[0], version: c[1], downloads: Number(c[2]) || 0, summary: c[3] ?? '' }),
    settings: {
      searchableAttributes: ['name', 'summary'],
      filterableAttributes: ['downloads'],
      sortableAttributes: ['downloads'],
    },
    filterFields: { eq: 'downloads', num: 'downloads' },
  },
};

/** The catalogues: $QUARRY_BENCH_DATA, else `shared/data` beside the repository. */
function dataDir() {
  const candidates = [
    process.env.QUARRY_BENCH_DATA,
    path.join(__dirname, '../../shared/data'),
    path.join(__dirname, '../../../shared/data'),
  ];
  for (const d of candidates) if (d && fs.existsSync(d)) return d;
  throw new Error(`catalogues not found (looked in ${candidates.filter(Boolean).join(', ')}); set QUARRY_BENCH_DATA`);
}

/** Reads the TSV into documents (with a numeric `id`). */
async function loadRows(ds, limit) {
  const spec = DATASETS[ds];
  const input = fs.createReadStream(path.join(dataDir(), spec.file)).pipe(zlib.createGunzip());
  const rl = readline.createInterface({ input, crlfDelay: Infinity });
  const docs = [];
  let header = true;
  let rawBytes = 0;
  for await (const line of rl) {
    rawBytes += Buffer.byteLength(line) + 1;
    if (header) {
      header = false;
      continue;
    }
    if (!line) continue;
    docs.push({ id: docs.length, ...spec.convert(line.split('\t')) });
    if (limit && docs.length >= limit) {
      rl.close();
      break;
    }
  }
  return { docs, rawBytes };
}

/**
 * Starts Quarry (`extraArgs` appended to its command line) on `dbPath`, by default a fresh
 * temporary data dir; `stopQuarry` stops it, `discardQuarry` stops it and removes its data.
 */
async function startQuarry(extraArgs = [], dbPath = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-'))) {
  const key = 'bench-master-key-0123456789';
  const bin = path.join(__dirname, '../bin/quarry.js');
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []),
      bin,
      '--db-path',
      dbPath,
      '--http-addr',
      '127.0.0.1:0',
      '--master-key',
      key,
      '--no-analytics',
      '--log-level',
      'WARN',
      ...extraArgs,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (c) => reject(new Error(`quarry exited with ${c}`)));
  });
  return { url, key, pid: child.pid, dbPath, child };
}

/** A TCP port free on loopback now (for a server that cannot be told to take port 0). */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts the reference Meilisearch (the binary at `bin`, e.g. `$MEILI_BIN` inside
 * `../shared/tools/with-meilisearch.sh`) on a fresh temporary directory, at the log level the
 * bench gives Quarry (WARN), and waits until it answers `/health`. Same shape as
 * `startQuarry`'s answer (`dbPath` is the `data.ms` directory, for the disk figure; `root` the
 * temporary directory `discardQuarry` removes), so the benches run both servers alike.
 */
async function startMeilisearch(bin, extraArgs = []) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'meili-bench-'));
  const port = await freePort();
  const key = 'bench-master-key-0123456789';
  const dbPath = path.join(root, 'data.ms');
  const args = [
    '--http-addr',
    `127.0.0.1:${port}`,
    '--db-path',
    dbPath,
    '--dump-dir',
    path.join(root, 'dumps'),
    '--snapshot-dir',
    path.join(root, 'snapshots'),
    '--master-key',
    key,
    '--no-analytics',
    '--log-level',
    'WARN',
    ...extraArgs,
  ];
  const log = fs.openSync(path.join(root, 'meilisearch.log'), 'a');
  const child = spawn(bin, args, { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  const url = `http://127.0.0.1:${port}`;
  let exited = false;
  child.once('exit', () => (exited = true));
  for (let i = 0; i < 300 && !exited; i++) {
    const up = await new Promise((resolve) => {
      http
        .get(`${url}/health`, (res) => {
          res.resume();
          resolve(res.statusCode === 200);
        })
        .on('error', () => resolve(false));
    });
    if (up) return { url, key, pid: child.pid, dbPath, root, child };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  const tail = fs.readFileSync(path.join(root, 'meilisearch.log'), 'utf8').split('\n').slice(-20).join('\n');
  fs.rmSync(root, { recursive: true, force: true });
  throw new Error(`meilisearch (${bin}) did not answer on ${url}; its log ends:\n${tail}`);
}

/** Stops a server `startQuarry` started (SIGTERM) and waits until it has exited. */
async function stopQuarry(started) {
  if (started.child.exitCode !== null || started.child.signalCode !== null) return;
  const exited = new Promise((r) => started.child.once('exit', r));
  started.child.kill('SIGTERM');
  await exited;
}

/** Stops a server `startQuarry` or `startMeilisearch` started and removes its data dir. */
async function discardQuarry(started) {
  await stopQuarry(started);
  fs.rmSync(started.root ?? started.dbPath, { recursive: true, force: true });
}

/** A keep-alive HTTP client (node:http), so the figures measure the server, not fetch(). */
function client(url, key) {
  const u = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  return (method, p, body, contentType = 'application/json') =>
    new Promise((resolve, reject) => {
      const headers = { 'Content-Type': contentType };
      if (key) headers.Authorization = `Bearer ${key}`;
      if (body !== undefined) headers['Content-Length'] = Buffer.byteLength(body);
      const req = http.request({ host: u.hostname, port: u.port, path: p, method, headers, agent }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          if (res.statusCode >= 400) reject(new Error(`${method} ${p}: ${res.statusCode} ${text.slice(0, 300)}`));
          else resolve(text ? JSON.parse(text) : undefined);
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      if (body !== undefined) req.write(body);
      req.end();
    });
}

async function waitTask(api, uid, onProgress) {
  for (;;) {
    const t = await api('GET', `/tasks/${uid}`);
    if (t.status === 'succeeded') return t;
    if (t.status === 'failed' || t.status === 'canceled')
      throw new Error(`task ${uid} ${t.status}: ${JSON.stringify(t.error)}`);
    if (onProgress) onProgress(t);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Sets `dataset`'s settings on `index`, then sends `docs` in NDJSON batches of `batch` and
 * waits for every task. Returns the indexing seconds: first POST to last task succeeded.
 */
async function loadIndex(api, index, docs, dataset, { batch = 50000, progress = false } = {}) {
  await waitTask(
    api,
    (await api('PATCH', `/indexes/${index}/settings`, JSON.stringify(DATASETS[dataset].settings))).taskUid,
  );
  const t0 = Date.now();
  const uids = [];
  for (let i = 0; i < docs.length; i += batch) {
    const body = docs
      .slice(i, i + batch)
      .map((d) => JSON.stringify(d))
      .join('\n');
    uids.push((await api('POST', `/indexes/${index}/documents`, body, 'application/x-ndjson')).taskUid);
    if (progress) process.stderr.write(`  sent ${Math.min(i + batch, docs.length)}/${docs.length}\r`);
  }
  for (const u of uids) {
    await waitTask(
      api,
      u,
      progress ? (t) => process.stderr.write(`  indexing: task ${t.uid} ${t.status}            \r`) : undefined,
    );
  }
  if (progress) process.stderr.write('\n');
  return (Date.now() - t0) / 1000;
}

/**
 * Where the server says an index's indexing went: its batches' durations summed, and each
 * step of their `progressTrace` summed by name (both servers report them, each with its own
 * steps), in seconds.
 */
async function batchesOf(api, index) {
  const page = await api('GET', `/batches?indexUids=${encodeURIComponent(index)}&limit=1000`);
  const steps = {};
  let seconds = 0;
  for (const b of page.results) {
    if (b.finishedAt) seconds += (Date.parse(b.finishedAt) - Date.parse(b.startedAt)) / 1000;
    for (const [name, t] of Object.entries(b.stats?.progressTrace ?? {})) {
      const s = stepSeconds(t);
      if (s !== null) steps[name] = (steps[name] ?? 0) + s;
    }
  }
  return { count: page.results.length, seconds, steps };
}

function rssOf(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const hwm = /VmHWM:\s+(\d+) kB/.exec(s);
    const rss = /VmRSS:\s+(\d+) kB/.exec(s);
    const anon = /RssAnon:\s+(\d+) kB/.exec(s);
    const kib = (m) => (m ? Number(m[1]) * 1024 : null);
    return { peak: kib(hwm), now: kib(rss), anon: kib(anon) };
  } catch {
    return { peak: null, now: null, anon: null };
  }
}

/** User + system CPU time of a process so far, in ms (from /proc, Linux only). */
function cpuMsOf(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

// A server may remove a file while this walks its directory (Meilisearch deletes a task's
// update file once it is processed): such a file counts for nothing.
function duBytes(dir) {
  let total = 0;
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    if (e.code === 'ENOENT') return 0;
    throw e;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += duBytes(p);
    else total += fs.statSync(p, { throwIfNoEntry: false })?.blocks * 512 || 0;
  }
  return total;
}

module.exports = {
  DATASETS,
  batchesOf,
  client,
  cpuMsOf,
  dataDir,
  discardQuarry,
  duBytes,
  loadIndex,
  loadRows,
  rssOf,
  startMeilisearch,
  startQuarry,
  stopQuarry,
  waitTask,
};
