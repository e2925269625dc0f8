/**
 * The server's process turns transparent huge pages off when the addon loads
 * (`crates/node/src/lib.rs`): with them, a search's first touch of fresh allocator memory zeroes
 * 2 MiB pages and costs milliseconds (`bench/paced.js`). With `MIMALLOC_ALLOW_THP` set, the
 * addon leaves the flag alone. Linux only: the flag is read from `/proc/PID/status` (`THP_enabled`).
 */
import { type ChildProcess, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { call, startChild } from '../helpers/child';

const thpLine = (pid: number) => /THP_enabled:\s*(\d)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
const linuxWithFlag = process.platform === 'linux' && thpLine(process.pid) !== null;

async function thpOf(env: NodeJS.ProcessEnv): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-thp-'));
  let child: ChildProcess | undefined;
  try {
    const started = await startChild(dir, [], env);
    child = started.child;
    // The server answers: the addon is loaded and has searched nothing yet.
    expect((await call(started.url, 'GET', '/health')).status).toBe(200);
    return thpLine(child.pid!)![1];
  } finally {
    if (child) {
      child.kill('SIGKILL');
      await new Promise((r) => child!.once('exit', r));
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The flag of a plain `node` (no addon) started the same way: what a child inherits from here. */
function inherited(env: NodeJS.ProcessEnv): string {
  const out = spawnSync(
    process.execPath,
    [
      '-e',
      "process.stdout.write(/THP_enabled:\\s*(\\d)/.exec(require('fs').readFileSync('/proc/self/status','utf8'))[1])",
    ],
    { env },
  );
  return out.stdout.toString();
}

(linuxWithFlag ? describe : describe.skip)('transparent huge pages', () => {
  it('when the server starts, then its process has them off', async () => {
    const env = { ...process.env };
    delete env.MIMALLOC_ALLOW_THP;
    expect(await thpOf(env)).toBe('0');
  });

  // The flag is inherited across fork and exec: a test process that loaded the addon passes
  // `0` on to its children, so "left alone" is compared with a plain child of this process.
  it('when the operator sets MIMALLOC_ALLOW_THP, then the server leaves the flag as it found it', async () => {
    const env = { ...process.env, MIMALLOC_ALLOW_THP: '1' };
    const before = inherited(env);
    expect(before).toMatch(/^[01]$/);
    expect(await thpOf(env)).toBe(before);
  });
});
