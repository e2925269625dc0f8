/**
 * The server's process turns transparent huge pages off when the addon loads
 * (`crates/node/src/lib.rs`): with them, a search's first touch of fresh allocator memory zeroes
 * 2 MiB pages and costs milliseconds (`bench/paced.js`). An operator's `MIMALLOC_ALLOW_THP`
 * decides instead. Linux only: the flag is read from `/proc/PID/status` (`THP_enabled`).
 */
import type { ChildProcess } from 'node:child_process';
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

(linuxWithFlag ? describe : describe.skip)('transparent huge pages', () => {
  it('when the server starts, then its process has them off', async () => {
    const env = { ...process.env };
    delete env.MIMALLOC_ALLOW_THP;
    expect(await thpOf(env)).toBe('0');
  });

  it('when the operator sets MIMALLOC_ALLOW_THP=1, then they stay on', async () => {
    expect(await thpOf({ ...process.env, MIMALLOC_ALLOW_THP: '1' })).toBe('1');
  });
});
