/**
 * The npm package as a user gets it: `npm pack` the main package and the linux-x64-gnu
 * platform package, install both tarballs into an empty directory where no Rust toolchain is
 * on the path, then run what a user runs there: `npx quarry` (a real server answering a
 * search), `npx quarry --help` / `--version`, and `require('quarry-search')`.
 *
 * Nothing is built here: the test packs the `dist/` and `native/quarry.linux-x64-gnu.node`
 * that `npm ci` built. The `.node` goes into a temporary copy of `npm/linux-x64-gnu/`, never
 * into the repository tree. Every temporary file lives under one directory removed at the end,
 * and the server is killed (its whole process group: `npx` → `sh` → `node`) even on failure.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.join(__dirname, '..', '..');
const PLATFORM = 'linux-x64-gnu';
const PLATFORM_PACKAGE = `quarry-search-${PLATFORM}`;
const BUILT_ADDON = path.join(ROOT, 'native', `quarry.${PLATFORM}.node`);
const KEY = 'masterKey';
const rootManifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  napi: { targets: string[] };
  optionalDependencies: Record<string, string>;
};

const haveAddon = fs.existsSync(BUILT_ADDON);
// The release workflow sets QUARRY_REQUIRE_PACKAGE_TEST=1: there a missing addon is a failure, not a skip.
if (!haveAddon && process.env.QUARRY_REQUIRE_PACKAGE_TEST === '1') {
  throw new Error(`pack-install: ${BUILT_ADDON} is absent and QUARRY_REQUIRE_PACKAGE_TEST=1`);
}
if (!haveAddon) {
  // Never after `npm ci` (which builds it) on linux-x64: say so instead of passing quietly.
  process.stderr.write(
    `pack-install: skipped, ${BUILT_ADDON} is absent (run \`npm ci\` or \`npm run build\` on linux-x64 first)\n`,
  );
}
const describeIfBuilt = haveAddon ? describe : describe.skip;

/** Every file under `dir`, as paths relative to it. */
function walk(dir: string, base = dir): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(full, base));
    else out.push(path.relative(base, full));
  }
  return out;
}

describeIfBuilt('the npm package, packed and installed without a Rust toolchain', () => {
  let tmp: string;
  let app: string;
  let env: NodeJS.ProcessEnv;
  const servers: ChildProcess[] = [];

  /** Runs a command in the installed app with the toolchain-free environment. */
  const inApp = (cmd: string, args: string[]) => run(cmd, args, { cwd: app, env, maxBuffer: 16 * 1024 * 1024 });

  /** `npm pack --ignore-scripts` of the package in `dir` into `dest`: the tarball and its file list. */
  async function pack(dir: string, dest: string): Promise<{ tarball: string; files: string[] }> {
    const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dest], {
      cwd: dir,
      env,
    });
    const [info] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    return { tarball: path.join(dest, info.filename), files: info.files.map((f) => f.path) };
  }

  let mainFiles: string[];
  let platformFiles: string[];

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-pack-'));
    const tarballs = path.join(tmp, 'tarballs');
    const platformDir = path.join(tmp, PLATFORM);
    const noToolchain = path.join(tmp, 'no-toolchain');
    app = path.join(tmp, 'app');
    for (const d of [tarballs, noToolchain, app]) fs.mkdirSync(d);
    // Only node's own directory and the system's: no ~/.cargo/bin, no rustup.
    env = {
      HOME: process.env.HOME,
      TMPDIR: os.tmpdir(),
      LANG: 'C.UTF-8',
      PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter),
      CARGO_HOME: noToolchain,
      RUSTUP_HOME: noToolchain,
    };

    fs.cpSync(path.join(ROOT, 'npm', PLATFORM), platformDir, { recursive: true });
    fs.copyFileSync(BUILT_ADDON, path.join(platformDir, `quarry.${PLATFORM}.node`));
    const main = await pack(ROOT, tarballs);
    const platform = await pack(platformDir, tarballs);
    mainFiles = main.files;
    platformFiles = platform.files;

    fs.writeFileSync(
      path.join(app, 'package.json'),
      JSON.stringify({ name: 'quarry-pack-install-app', version: '1.0.0', private: true }),
    );
    await run(
      'npm',
      ['install', main.tarball, platform.tarball, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel', 'error'],
      {
        cwd: app,
        env,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
  }, 300_000);

  afterAll(() => {
    for (const child of servers) {
      if (child.exitCode === null && child.signalCode === null && child.pid) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the toolchain-free PATH really has no cargo or rustc', async () => {
    for (const tool of ['cargo', 'rustc']) {
      // `command -v` fails (1 or 127, as the shell has it) when the tool is nowhere on PATH.
      await expect(run('sh', ['-c', `command -v ${tool}`], { env })).rejects.toMatchObject({
        code: expect.any(Number),
      });
    }
  });

  test('the platform packages and the optional dependencies are in step with the main version', async () => {
    const names = Object.keys(rootManifest.optionalDependencies).sort();
    expect(names).toHaveLength(rootManifest.napi.targets.length);
    expect(names).toContain(PLATFORM_PACKAGE);
    for (const name of names) {
      expect(rootManifest.optionalDependencies[name]).toBe(rootManifest.version);
      const manifest = JSON.parse(
        fs.readFileSync(path.join(ROOT, 'npm', name.replace('quarry-search-', ''), 'package.json'), 'utf8'),
      );
      expect(manifest).toMatchObject({
        name,
        version: rootManifest.version,
        main: `quarry.${name.replace('quarry-search-', '')}.node`,
      });
    }
    const { stdout } = await run(process.execPath, [path.join(ROOT, 'scripts', 'sync-versions.js'), '--check']);
    expect(stdout).toContain(`at ${rootManifest.version}`);
  });

  test('the tarballs ship what is needed and nothing else', () => {
    expect(mainFiles).toEqual(
      expect.arrayContaining([
        'package.json',
        'bin/quarry.js',
        'dist/main.js',
        'dist/index.js',
        'dist/index.d.ts',
        'native/index.js',
        'native/index.d.ts',
        'preview/index.html',
      ]),
    );
    const allowedTops = ['README.md', 'LICENSE', 'bin', 'dist', 'native', 'package.json', 'preview'];
    expect([...new Set(mainFiles.map((f) => f.split('/')[0]))].filter((t) => !allowedTops.includes(t))).toEqual([]);
    expect(
      mainFiles.filter(
        (f) =>
          f.endsWith('.node') ||
          f.endsWith('.map') ||
          /\.test\./.test(f) ||
          (f.endsWith('.ts') && !f.endsWith('.d.ts')),
      ),
    ).toEqual([]);
    expect(platformFiles.sort()).toEqual(['README.md', 'package.json', `quarry.${PLATFORM}.node`]);
  });

  test('the installed main package holds no addon, no sources; the addon comes from the platform package', async () => {
    const installed = path.join(app, 'node_modules', 'quarry-search');
    const files = walk(installed);
    expect(files).toContain(path.join('dist', 'main.js'));
    expect(files.filter((f) => f.endsWith('.node'))).toEqual([]);
    expect(fs.existsSync(path.join(installed, 'ts'))).toBe(false);
    expect(fs.existsSync(path.join(installed, 'crates'))).toBe(false);
    expect(fs.existsSync(path.join(installed, 'target'))).toBe(false);
    expect(fs.readdirSync(path.join(installed, 'native')).sort()).toEqual(['index.d.ts', 'index.js']);

    const { stdout } = await inApp(process.execPath, [
      '-e',
      `const resolved = require.resolve('${PLATFORM_PACKAGE}');
       require('quarry-search');
       const addons = Object.keys(require.cache).filter((k) => k.endsWith('.node'));
       console.log(JSON.stringify({ resolved, addons }));`,
    ]);
    const { resolved, addons } = JSON.parse(stdout) as { resolved: string; addons: string[] };
    const platformRoot = path.join(app, 'node_modules', PLATFORM_PACKAGE);
    expect(resolved).toBe(path.join(platformRoot, `quarry.${PLATFORM}.node`));
    // The one addon the loader loaded is the platform package's.
    expect(addons.map((a) => fs.realpathSync(a))).toEqual([fs.realpathSync(resolved)]);
  });

  test('`npx quarry --version` and `--help` answer', async () => {
    const version = await inApp('npx', ['--no-install', 'quarry', '--version']);
    expect(version.stdout.trim()).toBe(`quarry ${rootManifest.version}`);
    const help = await inApp('npx', ['--no-install', 'quarry', '--help']);
    expect(help.stdout).toMatch(/^Usage: quarry/);
    for (const flag of ['--http-addr', '--db-path', '--master-key', '--no-analytics', '--env'])
      expect(help.stdout).toContain(flag);
  });

  test('every environment variable --help lists is read, under its QUARRY_* name and its Meilisearch alias', async () => {
    const help = (await inApp('npx', ['--no-install', 'quarry', '--help'])).stdout;
    const [accepted, refused] = help.split(/^Meilisearch options Quarry refuses.*$/m);
    const listed = (text: string) =>
      [...text.matchAll(/^\s+(--[a-z0-9-]+)\s+((?:QUARRY|MEILI)_[A-Z0-9_]+)/gm)].map((m) => ({
        flag: m[1],
        env: m[2],
      }));
    const acceptedVars = listed(accepted);
    const refusedVars = listed(refused ?? '');
    expect(acceptedVars.length).toBeGreaterThan(20);
    expect(refusedVars.length).toBeGreaterThan(0);
    // Probed through the installed package's own config loader, in the installed app.
    const probe = `
      const { loadConfig } = require('quarry-search');
      const { OPTIONS } = require('quarry-search/dist/config.js');
      const accepted = ${JSON.stringify(acceptedVars)};
      const refused = ${JSON.stringify(refusedVars)};
      // A value each option takes alone (its flag's companions, when it needs one, come along).
      require('fs').writeFileSync('quarry.toml', 'log_level = "DEBUG"\\n');
      const VALUES = ['true', '2', '127.0.0.1:7701', 'debug', 'production', '2 GiB', '10.0.0.0/8', 'JSON', 'http://127.0.0.1:9/', 'Bearer x', 'x', 'quarry.toml', '1500'];
      const nats = { QUARRY_REPLICATION_NATS: 'nats://127.0.0.1:4222' };
      const ssl = { QUARRY_SSL_CERT_PATH: 'c.pem', QUARRY_SSL_KEY_PATH: 'k.pem' };
      const companions = {
        '--env': { QUARRY_MASTER_KEY: 'a-master-key-of-16-bytes' },
        '--ssl-cert-path': { QUARRY_SSL_KEY_PATH: 'k.pem' }, '--ssl-key-path': { QUARRY_SSL_CERT_PATH: 'c.pem' },
        '--ssl-auth-path': ssl, '--ssl-ocsp-path': ssl, '--ssl-require-auth': { ...ssl, QUARRY_SSL_AUTH_PATH: 'ca.pem' },
        '--ssl-resumption': ssl, '--ssl-tickets': ssl,
        '--ignore-missing-dump': { QUARRY_IMPORT_DUMP: 'd.dump' }, '--ignore-dump-if-db-exists': { QUARRY_IMPORT_DUMP: 'd.dump' },
        '--ignore-missing-snapshot': { QUARRY_IMPORT_SNAPSHOT: 's.snapshot' }, '--ignore-snapshot-if-db-exists': { QUARRY_IMPORT_SNAPSHOT: 's.snapshot' },
        '--task-webhook-authorization-header': { QUARRY_TASK_WEBHOOK_URL: 'http://127.0.0.1:9/' },
        '--replication-stream': nats, '--replication-replicas': nats, '--replication-node': nats,
        '--replication-snapshot-interval': nats, '--replication-lagging-grace': nats, '--replication-timeout-ms': nats,
      };
      const load = (vars) => { try { return JSON.stringify(loadConfig([], vars, { cwd: process.cwd() })); } catch (e) { return 'error: ' + e.message; } };
      const out = { unread: [], aliasDiffers: [], aliases: {}, notRefused: [] };
      for (const { flag, env } of accepted) {
        const o = OPTIONS.find((x) => x.flag === flag);
        if (!o || o.env !== env) { out.unread.push(flag + ' ' + env + ' (no such option)'); continue; }
        out.aliases[env] = o.meili;
        const base = companions[flag] || {};
        const baseline = load(base);
        const value = VALUES.find((v) => { const c = load({ ...base, [env]: v }); return !c.startsWith('error') && c !== baseline; });
        if (value === undefined) { out.unread.push(flag + ' ' + env); continue; }
        if (load({ ...base, [o.meili]: value }) !== load({ ...base, [env]: value })) out.aliasDiffers.push(o.meili);
      }
      for (const { flag, env } of refused) {
        const c = load({ [env]: 'x' });
        if (!c.startsWith('error') || !c.includes(env)) out.notRefused.push(env);
      }
      console.log(JSON.stringify(out));`;
    const result = JSON.parse((await inApp(process.execPath, ['-e', probe])).stdout) as {
      unread: string[];
      aliasDiffers: string[];
      aliases: Record<string, string>;
      notRefused: string[];
    };
    expect(result).toMatchObject({ unread: [], aliasDiffers: [], notRefused: [] });
    // The Meilisearch spelling of the common ones.
    expect(result.aliases).toMatchObject({
      QUARRY_HTTP_ADDR: 'MEILI_HTTP_ADDR',
      QUARRY_DB_PATH: 'MEILI_DB_PATH',
      QUARRY_MASTER_KEY: 'MEILI_MASTER_KEY',
      QUARRY_ENV: 'MEILI_ENV',
      QUARRY_NO_ANALYTICS: 'MEILI_NO_ANALYTICS',
    });
  });

  test('`npx quarry` starts a server that indexes documents and answers a search', async () => {
    const db = path.join(tmp, 'db');
    const child = spawn(
      'npx',
      [
        '--no-install',
        'quarry',
        '--db-path',
        db,
        '--http-addr',
        '127.0.0.1:0',
        '--master-key',
        KEY,
        '--no-analytics',
        '--log-level',
        'warn',
      ],
      {
        cwd: app,
        env,
        detached: true, // its own process group, so that afterAll kills npx, its shell and the server
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    servers.push(child);
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`npx quarry exited with ${code}: ${out}`)));
    });
    expect(out).toContain(`data in ${db}`);

    const call = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(url + p, {
        method,
        headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const added = await call('POST', '/indexes/books/documents?primaryKey=id', [
      { id: 1, title: 'The Left Hand of Darkness', author: 'Ursula K. Le Guin' },
      { id: 2, title: 'A Wizard of Earthsea', author: 'Ursula K. Le Guin' },
      { id: 3, title: 'Dune', author: 'Frank Herbert' },
    ]);
    expect(added.status).toBe(202);
    let task = added.body;
    for (let i = 0; i < 600 && !['succeeded', 'failed', 'canceled'].includes(task.status); i++) {
      await new Promise((r) => setTimeout(r, 50));
      task = (await call('GET', `/tasks/${added.body.taskUid}`)).body;
    }
    expect(task).toMatchObject({ status: 'succeeded', indexUid: 'books', details: { indexedDocuments: 3 } });
    const search = await call('POST', '/indexes/books/search', { q: 'earthsea' });
    expect(search.status).toBe(200);
    expect(search.body.hits).toEqual([{ id: 2, title: 'A Wizard of Earthsea', author: 'Ursula K. Le Guin' }]);

    // SIGTERM to the whole group (npx, its shell, the server): the server shuts down cleanly,
    // and every process of the group is gone.
    const exited = new Promise((r) =>
      child.exitCode !== null || child.signalCode !== null ? r(null) : child.once('exit', () => r(null)),
    );
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
    let groupAlive = true;
    for (let i = 0; i < 200 && groupAlive; i++) {
      try {
        process.kill(-child.pid!, 0);
        await new Promise((r) => setTimeout(r, 50));
      } catch {
        groupAlive = false;
      }
    }
    expect(groupAlive).toBe(false);
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });

  // ── Embedding: `require('quarry-search')` in the installed app ─────────────────────────────
  test("`require('quarry-search')` embeds the engine in the app's own process, without HTTP", async () => {
    const db = path.join(tmp, 'embedded-db');
    const script = `
      const { Quarry, QuarryError } = require('quarry-search');
      (async () => {
        const quarry = await Quarry.open(${JSON.stringify(db)});
        try {
          const task = await quarry.index('books').addDocuments([{ id: 1, title: 'A Wizard of Earthsea' }, { id: 2, title: 'The Left Hand of Darkness' }]).waitTask();
          const { hits } = await quarry.index('books').search('earthsea');
          let refused = null;
          try { await quarry.index('books').search('x', { limit: -1 }); } catch (e) { refused = e instanceof QuarryError ? e.code : String(e); }
          console.log(JSON.stringify({ status: task.status, ids: hits.map((h) => h.id), refused }));
        } finally {
          await quarry.close();
        }
      })().catch((e) => { console.error(e); process.exit(1); });`;
    const { stdout } = await inApp(process.execPath, ['-e', script]);
    expect(JSON.parse(stdout)).toEqual({ status: 'succeeded', ids: [1], refused: 'invalid_search_limit' });
  });

  test("`import { Quarry } from 'quarry-search'` works from an ES module", async () => {
    const { stdout } = await inApp(process.execPath, [
      '--input-type=module',
      '-e',
      "import { Quarry, QuarryError } from 'quarry-search'; console.log(typeof Quarry.open, typeof QuarryError);",
    ]);
    expect(stdout.trim()).toBe('function function');
  });

  test("`require('quarry-search')` also starts the HTTP server in the app's own process", async () => {
    const db = path.join(tmp, 'embedded-server-db');
    const script = `
      const quarry = require('quarry-search');
      (async () => {
        const config = quarry.loadConfig(['--db-path', ${JSON.stringify(db)}, '--http-addr', '127.0.0.1:0', '--master-key', '${KEY}', '--no-analytics'], {});
        const server = await quarry.startServer(config, quarry.createLogger('error', config.logsMode));
        try {
          const health = await fetch(server.url + '/health');
          console.log(JSON.stringify({ exports: Object.keys(quarry).sort(), health: await health.json() }));
        } finally {
          await server.close();
        }
      })().catch((e) => { console.error(e); process.exit(1); });`;
    const { stdout } = await inApp(process.execPath, ['-e', script]);
    const result = JSON.parse(stdout);
    expect(result.exports).toEqual(
      expect.arrayContaining(['Quarry', 'QuarryError', 'QuarryIndex', 'startServer', 'loadConfig', 'createLogger']),
    );
    expect(result.health).toEqual({ status: 'available' });
  });
});
