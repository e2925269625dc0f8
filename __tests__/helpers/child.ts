/**
 * The server as a child process (for tests that kill it): started on a loopback port with
 * its own data directory, and a small JSON client.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const BIN = path.join(__dirname, '../../bin/quarry.js');
export const CHILD_KEY = 'crash-test-master-key-000';

export function startChild(
  dbPath: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        BIN,
        '--db-path',
        dbPath,
        '--http-addr',
        '127.0.0.1:0',
        '--master-key',
        CHILD_KEY,
        '--log-level',
        'warn',
        ...args,
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
        env,
      },
    );
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) resolve({ child, url: m[1] });
    });
    child.once('exit', (code) => reject(new Error(`server exited early with ${code}: ${out}`)));
  });
}

export async function call(url: string, method: string, p: string, body?: unknown): Promise<any> {
  const res = await fetch(url + p, {
    method,
    headers: { Authorization: `Bearer ${CHILD_KEY}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Waits until task `uid` of the child at `url` has finished, and returns it (throws after `timeoutMs`). */
export async function finishedTask(url: string, uid: number, timeoutMs = 60_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const t = (await call(url, 'GET', `/tasks/${uid}`)).body;
    if (t.status !== 'enqueued' && t.status !== 'processing') return t;
    if (Date.now() > until) throw new Error(`task ${uid} still ${t.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
