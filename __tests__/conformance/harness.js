#!/usr/bin/env node
'use strict';
/**
 * The differential conformance harness: Quarry and the reference Meilisearch 1.50 side by side,
 * the same documents and settings loaded into both, the same generated requests sent to both,
 * the answers compared after normalizing what must differ (compare.js). Differences are grouped
 * by class (route, field path, kind), each with the smallest request that shows it; the classes
 * listed in allowlist.json (deliberate, citing SPEC.md) or pending.json (engine fixes under way)
 * are reported apart from the unexplained ones.
 *
 *   node __tests__/conformance/harness.js --requests N --seed S [--families a,b] [--report f.json]
 *
 * Both servers and the requests run inside one network namespace that has only loopback
 * (`unshare -n`), so nothing either server tries can leave the machine. Exits 0 when there is no
 * unexplained difference, 1 when there is, 3 when the harness cannot run here (no reference
 * binary, no unshare, no dist/).
 */
const { spawn, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '../..');
const REFERENCE_GZ = path.join(ROOT, '../shared/bin/meilisearch-1.50.0-linux-x64.gz');
const REFERENCE_BIN = path.join(
  process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'),
  'quarry-reference/meilisearch-1.50.0',
);
const MASTER_KEY = 'masterKey';
const SEARCH_KEY_UID = '6062abda-a5aa-4414-ac91-ecd7944c0f8d';
const SKIP = 3;
/** Families whose requests change nothing (a DELETE of a route that does not exist aside). */
const READ_ONLY = new Set([
  'search',
  'multiSearch',
  'facetSearch',
  'similar',
  'documents',
  'stats',
  'tokens',
  'headers',
]);

function parseArgs(argv) {
  const o = { requests: 300, seed: 1, families: null, report: null, inner: false, quiet: false, concurrency: 4 };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    if (flag === '--requests') o.requests = parseInt(value(), 10);
    else if (flag === '--seed') o.seed = parseInt(value(), 10);
    else if (flag === '--families') o.families = value().split(',').filter(Boolean);
    else if (flag === '--report') o.report = path.resolve(value());
    else if (flag === '--inner') o.inner = true;
    else if (flag === '--quiet') o.quiet = true;
    else if (flag === '--key-order') o.keyOrder = true;
    else if (flag === '--concurrency') o.concurrency = Math.max(1, parseInt(value(), 10));
    else
      throw new Error(
        `unknown argument ${argv[i]}; usage: --requests N --seed S [--families a,b] [--report file.json] [--key-order]`,
      );
  }
  if (!(o.requests > 0) || Number.isNaN(o.seed)) throw new Error('--requests and --seed need numbers');
  return o;
}

/** Why the harness cannot run on this machine, or null. */
function cannotRun() {
  if (!fs.existsSync(REFERENCE_BIN) && !fs.existsSync(REFERENCE_GZ))
    return `the reference Meilisearch 1.50 is not beside the clone (${path.relative(ROOT, REFERENCE_GZ)})`;
  if (!fs.existsSync(path.join(ROOT, 'dist/main.js'))) return 'dist/ is not built (npx tsc -p tsconfig.build.json)';
  const u = spawnSync('unshare', ['-n', 'true']);
  if (u.error || u.status !== 0) return 'cannot make a loopback-only network namespace (`unshare -n` needs root)';
  return null;
}

function unpackReference() {
  if (fs.existsSync(REFERENCE_BIN)) return;
  fs.mkdirSync(path.dirname(REFERENCE_BIN), { recursive: true });
  const tmp = `${REFERENCE_BIN}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, require('node:zlib').gunzipSync(fs.readFileSync(REFERENCE_GZ)));
  fs.chmodSync(tmp, 0o755);
  fs.renameSync(tmp, REFERENCE_BIN);
}

/** Runs this script again inside a fresh loopback-only network namespace. */
function outer(argv) {
  const why = cannotRun();
  if (why) {
    console.log(`conformance: skipped: ${why}`);
    return SKIP;
  }
  unpackReference();
  const r = spawnSync(
    'unshare',
    ['-n', 'bash', '-c', 'ip link set lo up && exec "$@"', 'bash', process.execPath, __filename, '--inner', ...argv],
    { stdio: 'inherit' },
  );
  return r.status ?? 1;
}

// ---- the two servers ------------------------------------------------------------------------

function waitHealthy(url, child, name, logFile) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let exited = false;
    child.once('exit', () => (exited = true));
    const tick = async () => {
      if (exited)
        return reject(new Error(`${name} exited at start; log: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`));
      try {
        const res = await fetch(`${url}/health`);
        if (res.ok) return resolve();
      } catch {
        /* not listening yet */
      }
      if (Date.now() - started > 60_000) return reject(new Error(`${name} did not answer /health in 60 s`));
      setTimeout(tick, 100);
    };
    tick();
  });
}

async function startServers(dir) {
  const meiliLog = path.join(dir, 'meilisearch.log');
  const meili = spawn(
    REFERENCE_BIN,
    [
      '--http-addr',
      '127.0.0.1:7700',
      '--db-path',
      path.join(dir, 'meili/data.ms'),
      '--dump-dir',
      path.join(dir, 'meili/dumps'),
      '--snapshot-dir',
      path.join(dir, 'meili/snapshots'),
      '--master-key',
      MASTER_KEY,
      '--no-analytics',
      '--log-level',
      'WARN',
    ],
    {
      stdio: ['ignore', fs.openSync(meiliLog, 'w'), fs.openSync(meiliLog, 'a')],
    },
  );
  const quarryLog = path.join(dir, 'quarry.log');
  const quarry = spawn(
    process.execPath,
    [
      path.join(ROOT, 'bin/quarry.js'),
      '--http-addr',
      '127.0.0.1:7800',
      '--db-path',
      path.join(dir, 'quarry/data.ms'),
      '--dump-dir',
      path.join(dir, 'quarry/dumps'),
      '--snapshot-dir',
      path.join(dir, 'quarry/snapshots'),
      '--master-key',
      MASTER_KEY,
      '--no-analytics',
      '--log-level',
      'WARN',
    ],
    {
      stdio: ['ignore', fs.openSync(quarryLog, 'w'), fs.openSync(quarryLog, 'a')],
    },
  );
  const servers = [
    { name: 'quarry', url: 'http://127.0.0.1:7800', child: quarry, log: quarryLog },
    { name: 'meilisearch', url: 'http://127.0.0.1:7700', child: meili, log: meiliLog },
  ];
  // The servers never outlive the harness, whatever ends it.
  process.once('exit', () => {
    for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  });
  try {
    await Promise.all(servers.map((s) => waitHealthy(s.url, s.child, s.name, s.log)));
  } catch (err) {
    for (const s of servers) s.child.kill('SIGKILL');
    throw err;
  }
  return servers;
}

// ---- requests -------------------------------------------------------------------------------

const b64url = (x) => Buffer.from(typeof x === 'string' ? x : JSON.stringify(x)).toString('base64url');

/** A tenant token as the step describes it, signed with this server's search key. */
function tenantToken(spec, server) {
  const claims = JSON.parse(JSON.stringify(spec.claims).replace('"<searchKeyUid>"', JSON.stringify(SEARCH_KEY_UID)));
  const header = { alg: spec.alg, typ: 'JWT' };
  const head = `${b64url(header)}.${b64url(claims)}`;
  const algo = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512', RS256: 'sha256' }[spec.alg];
  let sig = algo ? crypto.createHmac(algo, server.searchKey).update(head).digest('base64url') : '';
  let token = `${head}.${sig}`;
  if (spec.tamper === 'signature') token = `${head}.${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`;
  else if (spec.tamper === 'parts') token = head;
  else if (spec.tamper === 'payload') {
    const h = `${b64url(header)}.${b64url('not json')}`;
    sig = crypto.createHmac('sha256', server.searchKey).update(h).digest('base64url');
    token = `${h}.${sig}`;
  } else if (spec.tamper === 'garbage') token = 'abc.def';
  return token;
}

function authHeader(auth, server) {
  if (auth === undefined || auth === 'master') return `Bearer ${MASTER_KEY}`;
  if (auth === 'none') return undefined;
  if (auth === 'wrong') return 'Bearer not-a-key';
  if (auth === 'basic') return `Basic ${Buffer.from(`user:${MASTER_KEY}`).toString('base64')}`;
  if (auth === 'bearerOnly') return 'Bearer';
  if (auth.token) return `Bearer ${tenantToken(auth.token, server)}`;
  throw new Error(`unknown auth ${JSON.stringify(auth)}`);
}

async function send(server, step) {
  const headers = {};
  const a = authHeader(step.auth, server);
  if (a !== undefined) headers.Authorization = a;
  let body;
  if (step.rawBody !== undefined) body = step.rawBody;
  else if (step.body !== undefined) {
    body = JSON.stringify(step.body);
    headers['Content-Type'] = 'application/json';
  }
  Object.assign(headers, step.headers ?? {});
  const qs = step.query && Object.keys(step.query).length ? `?${new URLSearchParams(step.query)}` : '';
  const started = process.hrtime.bigint();
  let res;
  for (let attempt = 0; ; attempt++) {
    try {
      res = await fetch(server.url + step.path + qs, { method: step.method, headers, body });
      break;
    } catch (err) {
      // a connection closed under a kept-alive request is tried once more; a server that died is the end
      if (server.child.exitCode !== null || server.child.signalCode !== null)
        throw new Error(
          `${server.name} exited (${server.child.exitCode ?? server.child.signalCode}) answering ${JSON.stringify(step)}; log: ${fs.readFileSync(server.log, 'utf8').slice(-1500)}`,
        );
      if (attempt >= 1)
        return { status: 0, contentType: null, body: { '<no answer>': String(err.cause?.code ?? err.message) } };
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const text = await res.text();
  server.ms = (server.ms ?? 0) + Number(process.hrtime.bigint() - started) / 1e6;
  let json;
  try {
    json = text === '' ? '' : JSON.parse(text);
  } catch {
    json = { '<text>': text.slice(0, 300) };
  }
  return {
    status: res.status,
    contentType: (res.headers.get('content-type') ?? '').split(';')[0].trim() || null,
    body: json,
  };
}

async function waitTask(server, uid) {
  const started = Date.now();
  for (;;) {
    const r = await send(server, { method: 'GET', path: `/tasks/${uid}` });
    if (r.status === 200 && ['succeeded', 'failed', 'canceled'].includes(r.body.status)) return r.body;
    if (Date.now() - started > 60_000) throw new Error(`${server.name}: task ${uid} did not finish in 60 s`);
    await new Promise((res) => setTimeout(res, 15));
  }
}

/** Setup steps, the same for both: the main index with its settings and documents, a scratch index, a search key. */
async function setup(servers) {
  const D = require('./dataset');
  const steps = [
    { method: 'POST', path: '/indexes', body: { uid: 'movies', primaryKey: 'id' } },
    { method: 'PATCH', path: '/indexes/movies/settings', body: D.SETTINGS },
    { method: 'POST', path: '/indexes/movies/documents', body: D.DOCUMENTS },
    { method: 'POST', path: '/indexes', body: { uid: 'scratch', primaryKey: 'id' } },
    {
      method: 'POST',
      path: '/indexes/scratch/documents',
      body: [
        { id: 1, title: 'first', n: 1 },
        { id: 2, title: 'second', n: 60 },
      ],
    },
  ];
  for (const server of servers) {
    for (const step of steps) {
      const r = await send(server, step);
      if (r.status !== 202)
        throw new Error(
          `${server.name}: setup ${step.method} ${step.path} answered ${r.status} ${JSON.stringify(r.body)}`,
        );
      const t = await waitTask(server, r.body.taskUid);
      if (t.status !== 'succeeded') throw new Error(`${server.name}: setup task ${JSON.stringify(t)}`);
    }
    const k = await send(server, {
      method: 'POST',
      path: '/keys',
      body: { uid: SEARCH_KEY_UID, name: 'conformance search', actions: ['search'], indexes: ['*'], expiresAt: null },
    });
    if (k.status !== 201) throw new Error(`${server.name}: search key: ${k.status} ${JSON.stringify(k.body)}`);
    server.searchKey = k.body.key;
  }
}

// ---- classes, allowlist, report -------------------------------------------------------------

function routeOf(step) {
  let p = step.path;
  p = p.replace(/^\/indexes\/([^/]+)/, (_, uid) =>
    ['movies', 'scratch'].includes(uid)
      ? `/indexes/${uid === 'movies' ? '{movies}' : '{scratch}'}`
      : '/indexes/{other}',
  );
  p = p.replace(/\/documents\/(?!fetch$|delete-batch$|delete$)[^/]+$/, '/documents/{id}');
  p = p.replace(/^\/(tasks|batches)\/(?!cancel$)[^/]+$/, '/$1/{uid}');
  p = p.replace(/^\/keys\/[^/]+$/, '/keys/{key}');
  const auth = step.auth?.token ? ' [tenant token]' : typeof step.auth === 'string' ? ` [auth ${step.auth}]` : '';
  return `${step.method} ${p}${auth}`;
}

function loadList(file) {
  const f = path.join(__dirname, file);
  if (!fs.existsSync(f)) return [];
  const entries = JSON.parse(fs.readFileSync(f, 'utf8')).entries ?? [];
  return entries.map((e) => ({
    ...e,
    routeRe: new RegExp(e.route),
    pathRe: new RegExp(e.path),
    requestRe: e.requestMatches ? new RegExp(e.requestMatches) : null,
  }));
}

/** Named checks an entry may add (`check`): what the difference itself must look like. */
const CHECKS = {
  // the two texts differ only in where the highlight tags are (or the marks of a crop)
  tagsOnly: (d, step) => {
    if (typeof d.a !== 'string' || typeof d.b !== 'string') return false;
    const body = step.body ?? step.query ?? {};
    const tags = [body.highlightPreTag ?? '<em>', body.highlightPostTag ?? '</em>'].filter(
      (t) => typeof t === 'string' && t !== '',
    );
    const strip = (x) => tags.reduce((acc, t) => acc.split(t).join(''), x);
    return strip(d.a) === strip(d.b);
  },
};

function explains(entry, route, d, requestText, step) {
  if (entry.check && !CHECKS[entry.check](d, step)) return false;
  return (
    entry.routeRe.test(route) &&
    entry.pathRe.test(classPath(d.path)) &&
    (!entry.kind || entry.kind === d.kind) &&
    (!entry.requestRe || entry.requestRe.test(requestText))
  );
}

const { normalize, diff, classPath } = require('./compare');

async function run(o) {
  const { generator } = require('./generate');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-conformance-'));
  const servers = await startServers(dir);
  const allow = loadList('allowlist.json');
  const pending = loadList('pending.json');
  const classes = new Map();
  const familyStats = {};
  let requests = 0;
  let cases = 0;
  try {
    await setup(servers);
    const next = generator(o.seed, o.families);
    const givenKeyUids = new Set([SEARCH_KEY_UID]);
    const started = Date.now();
    /** Compares one pair of answers and files its differences by class. */
    const record = (family, step, route, answers) => {
      const nctx = { givenKeyUids };
      const [qa, ma] = answers.map((a) => ({
        status: a.status,
        contentType: a.contentType,
        body: normalize(a.body, nctx),
      }));
      // a different status is one difference, whatever the bodies hold
      // an error answer is one difference: its code, or its message under the same code
      const errA = qa.body && typeof qa.body === 'object' && typeof qa.body.code === 'string';
      const errB = ma.body && typeof ma.body === 'object' && typeof ma.body.code === 'string';
      const diffs =
        qa.status !== ma.status
          ? [{ path: '.status', kind: `${qa.status} vs ${ma.status}`, a: qa.body, b: ma.body }]
          : errA && errB && qa.body.code !== ma.body.code
            ? [{ path: '.body.code', kind: `${qa.body.code} vs ${ma.body.code}`, a: qa.body, b: ma.body }]
            : errA && errB && JSON.stringify(qa.body) !== JSON.stringify(ma.body)
              ? [{ path: '.body.message', kind: `${ma.body.code} message`, a: qa.body.message, b: ma.body.message }]
              : diff(qa, ma, '', [], { keyOrder: o.keyOrder });
      if (diffs.length === 0) return;
      familyStats[family].differing++;
      const requestText = JSON.stringify(step);
      const seen = new Set();
      for (const d of diffs) {
        const allowed = allow.find((e) => explains(e, route, d, requestText, step));
        const pend = allowed ? null : pending.find((e) => explains(e, route, d, requestText, step));
        // the occurrences an entry explains are a class apart from those none does
        const key = `${route} ${classPath(d.path)} ${d.kind}${allowed ? ' [allowlist]' : pend ? ' [pending]' : ''}`;
        if (seen.has(key)) continue;
        seen.add(key);
        let c = classes.get(key);
        if (!c) {
          c = {
            class: key,
            route,
            path: classPath(d.path),
            kind: d.kind,
            family,
            count: 0,
            explained: allowed
              ? { allowlist: allowed.spec, reason: allowed.reason }
              : pend
                ? { pendingEngineFix: pend.reason }
                : null,
            example: null,
          };
          classes.set(key, c);
        }
        c.count++;
        if (!c.example || requestText.length < c.example.size) {
          c.example = {
            size: requestText.length,
            request: step,
            difference: { path: d.path, quarry: d.a, meilisearch: d.b },
            quarry: answers[0],
            meilisearch: answers[1],
          };
        }
      }
    };
    const runCase = async ({ family, steps, ctx }) => {
      familyStats[family] ??= { requests: 0, differing: 0 };
      for (const step of steps) {
        const answers = await Promise.all(servers.map((s) => send(s, step)));
        requests++;
        familyStats[family].requests++;
        let finished = null;
        if (step.task) {
          // keep both databases in step: wait for what each enqueued
          finished = await Promise.all(
            answers.map((a, i) =>
              (a.status === 202 || (a.status === 200 && a.body && a.body.taskUid !== undefined)) &&
              a.body.taskUid !== undefined
                ? waitTask(servers[i], a.body.taskUid)
                : null,
            ),
          );
        }
        if (step.keyCreate && answers.every((a) => a.status === 201) && step.body.uid) {
          ctx.knownUids.push(step.body.uid);
          givenKeyUids.add(step.body.uid);
        }
        record(family, step, routeOf(step), answers);
        // what each enqueued, once done, is compared too (its status, details, error)
        if (finished?.[0] && finished[1])
          record(
            family,
            step,
            `${routeOf(step)} → task`,
            finished.map((t) => ({ status: 200, contentType: 'application/json', body: t })),
          );
      }
    };
    // Cases that only read run several at a time; one that writes waits for them and runs alone.
    const inFlight = new Set();
    let scheduled = 0;
    while (scheduled < o.requests) {
      const c = next();
      cases++;
      scheduled += c.steps.length;
      if (!READ_ONLY.has(c.family)) {
        await Promise.all(inFlight);
        await runCase(c);
      } else {
        const p = runCase(c).finally(() => inFlight.delete(p));
        inFlight.add(p);
        if (inFlight.size >= o.concurrency) await Promise.race(inFlight);
      }
      if (o.report && cases % 2000 === 0)
        fs.writeFileSync(
          o.report,
          JSON.stringify({ partial: true, seed: o.seed, requests, cases, classes: [...classes.values()] }, null, 1),
        );
      if (!o.quiet && cases % 500 === 0)
        process.stderr.write(
          `conformance: ${requests} requests, ${classes.size} classes, ${Math.round((Date.now() - started) / 1000)} s\n`,
        );
    }
    await Promise.all(inFlight);
  } finally {
    for (const s of servers) s.child.kill('SIGTERM');
    await new Promise((res) => setTimeout(res, 300));
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const list = [...classes.values()].sort((a, b) => (a.explained ? 1 : 0) - (b.explained ? 1 : 0) || b.count - a.count);
  for (const c of list) delete c.example.size;
  const unexplained = list.filter((c) => !c.explained);
  const report = {
    seed: o.seed,
    requests,
    cases,
    families: familyStats,
    answerMs: Object.fromEntries(servers.map((s) => [s.name, Math.round(s.ms ?? 0)])),
    unexplained: unexplained.length,
    classes: list,
  };
  if (o.report) fs.writeFileSync(o.report, JSON.stringify(report, null, 1));
  printSummary(report);
  return unexplained.length === 0 ? 0 : 1;
}

function printSummary(report) {
  const lines = [
    `conformance: seed ${report.seed}, ${report.requests} requests in ${report.cases} cases; ${report.classes.length} difference classes, ${report.unexplained} unexplained (time answering: ${Object.entries(
      report.answerMs,
    )
      .map(([n, ms]) => `${n} ${ms} ms`)
      .join(', ')})`,
  ];
  for (const [f, s] of Object.entries(report.families))
    lines.push(`  ${f.padEnd(15)} ${String(s.requests).padStart(7)} requests, ${s.differing} with differences`);
  for (const c of report.classes) {
    const tag = c.explained
      ? c.explained.allowlist
        ? `allowed (${c.explained.allowlist})`
        : 'pending engine fix'
      : 'UNEXPLAINED';
    lines.push(`- [${tag}] ${c.class} ×${c.count}`);
    if (!c.explained) {
      lines.push(`    request: ${JSON.stringify(c.example.request)}`);
      lines.push(
        `    at ${c.example.difference.path}: quarry ${JSON.stringify(c.example.difference.quarry)?.slice(0, 300)} / meilisearch ${JSON.stringify(c.example.difference.meilisearch)?.slice(0, 300)}`,
      );
    }
  }
  console.log(lines.join('\n'));
}

if (require.main === module) {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(e.message);
    process.exit(2);
  }
  if (!o.inner) process.exit(outer(process.argv.slice(2)));
  run(o).then(
    (code) => process.exit(code),
    (err) => {
      console.error(`conformance: ${err.stack || err}`);
      process.exit(2);
    },
  );
}

module.exports = { cannotRun, SKIP };
