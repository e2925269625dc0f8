/**
 * A Quarry child process for start-up tests: any arguments and environment, stdout kept
 * (the start-up lines: URL, instance UID), resolved once it listens, or rejected with what
 * it printed when it exits first.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const BIN = path.join(__dirname, '../../bin/quarry.js');

export interface Child {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  stop: () => Promise<void>;
}

export function startQuarry(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<Child> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, '--log-level', 'warn', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', ...env },
      cwd,
    });
    let out = '';
    let err = '';
    let resolved = false;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    };
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (https?:\/\/\S+)/.exec(out);
      // Wait for the telemetry lines that follow the URL.
      if (m && /Anonymous telemetry: \w+.*\n(Instance UID: \S+\n)?/.test(out) && !resolved) {
        resolved = true;
        resolve({ child, url: m[1], stdout: () => out, stderr: () => err, stop });
      }
    });
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.once('exit', (code) => {
      if (!resolved) reject(new ExitError(code, out, err));
    });
  });
}

export class ExitError extends Error {
  constructor(
    readonly code: number | null,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(`server exited with ${code}: ${stderr}${stdout}`);
  }
}

/** The exit of a server expected not to start: its code and what it wrote to stderr. */
export async function failedStart(
  args: string[],
  env: Record<string, string> = {},
  cwd?: string,
): Promise<{ code: number | null; stderr: string }> {
  try {
    const c = await startQuarry(args, env, cwd);
    await c.stop();
  } catch (err) {
    if (err instanceof ExitError) return { code: err.code, stderr: err.stderr };
    throw err;
  }
  throw new Error('the server started');
}
