/**
 * A Quarry instance of a replicated group, as a child process on a fixed loopback port (so it
 * comes back at the same URL after a kill), with its own data directory and a name in the group.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { freePort, killAndWait } from '../../scripts/nats-cluster';
import { tempDir } from './server';

const BIN = path.join(__dirname, '../../bin/quarry.js');
export const GROUP_KEY = 'replication-test-master-key';

export interface Answer {
  status: number;
  body: any;
}

export class QuarryNode {
  child: ChildProcess | null = null;
  paused = false;
  url = '';
  readonly log: string[] = [];
  /** Wraps the server's command line (to start it in a namespace of its own); none by default. */
  wrap: ((command: string[]) => [string, string[]]) | null = null;

  private constructor(
    readonly name: string,
    readonly dbPath: string,
    private readonly port: number,
    private readonly args: string[],
  ) {
    this.url = `http://127.0.0.1:${port}`;
  }

  static async create(
    name: string,
    natsUrls: string,
    args: string[] = [],
    dbPath = tempDir(`quarry-${name}-`),
  ): Promise<QuarryNode> {
    return new QuarryNode(name, dbPath, await freePort(), [
      '--replication-nats',
      natsUrls,
      '--replication-node',
      name,
      ...args,
    ]);
  }

  /** Starts the process and resolves once it listens (rejects with its last log lines if it exits). */
  start(timeoutMs = 60_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const command = [
        process.execPath,
        BIN,
        '--db-path',
        this.dbPath,
        '--http-addr',
        `127.0.0.1:${this.port}`,
        '--master-key',
        GROUP_KEY,
        '--log-level',
        'warn',
        '--no-analytics',
        ...this.args,
      ];
      const [file, args] = this.wrap ? this.wrap(command) : [command[0], command.slice(1)];
      const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      this.child = child;
      this.paused = false;
      let out = '';
      const timer = setTimeout(
        () => reject(new Error(`${this.name} did not start within ${timeoutMs} ms: ${this.log.join('')}`)),
        timeoutMs,
      );
      child.stderr!.on('data', (d: Buffer) => {
        this.log.push(d.toString());
        if (this.log.length > 100) this.log.shift();
      });
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (/listening on/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code, signal) => {
        if (this.child === child) this.child = null;
        clearTimeout(timer);
        reject(new Error(`${this.name} exited (${code ?? signal}): ${this.log.join('')}`));
      });
    });
  }

  get up(): boolean {
    return this.child !== null && !this.paused;
  }

  async kill(): Promise<void> {
    const child = this.child;
    this.child = null;
    this.paused = false;
    if (child) await killAndWait(child);
  }

  pause(): void {
    if (this.child && !this.paused) {
      this.child.kill('SIGSTOP');
      this.paused = true;
    }
  }

  resume(): void {
    if (this.child && this.paused) {
      this.child.kill('SIGCONT');
      this.paused = false;
    }
  }

  /** A graceful stop (SIGTERM). */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.resume();
    this.child = null;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }

  async api(
    method: string,
    p: string,
    body?: unknown,
    key: string | null = GROUP_KEY,
    timeoutMs = 30_000,
  ): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (key !== null) headers.Authorization = `Bearer ${key}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(this.url + p, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // keep the text
    }
    return { status: res.status, body: parsed };
  }

  /** Waits until task `uid` has ended here; resolves with it. */
  async waitTask(uid: number, timeoutMs = 60_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.api('GET', `/tasks/${uid}`).catch(() => null);
      if (r && r.status === 200 && r.body.status !== 'enqueued' && r.body.status !== 'processing') return r.body;
      if (Date.now() > deadline) throw new Error(`${this.name}: task ${uid} not done: ${JSON.stringify(r?.body)}`);
      await new Promise((res) => setTimeout(res, 25));
    }
  }
}

/** Polls `fn` until it returns a value that is not undefined, or throws after `timeoutMs`. */
export async function eventually<T>(
  fn: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
