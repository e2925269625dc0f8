/**
 * The server's request path comes first on its machine (`ts/startup/threads.ts`): V8's
 * platform threads run at a nice value 10 higher, the libuv pool that runs searches and
 * batches keeps the process's priority, and the JavaScript thread has a short scheduler slice
 * where the kernel offers one (Linux 6.12+). Read from `/proc` of a real server process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { call, startChild } from '../helpers/child';

const POOL = 16;
const onLinux = process.platform === 'linux' ? it : it.skip;

/** The nice value of each thread of `pid`, by thread id. */
function niceByThread(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const fields = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      out.set(Number(tid), Number(fields[16]));
    } catch {
      // The thread ended while being read.
    }
  }
  return out;
}

/** The thread's scheduler slice in ns, when the kernel shows it (`se.slice`). */
function sliceOf(pid: number, tid: number): number | null {
  const m = /^se\.slice\s*:\s*(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/task/${tid}/sched`, 'utf8'));
  return m ? Number(m[1]) : null;
}

/** Whether this kernel takes custom slices of its fair scheduler (6.12 and later). */
function customSlices(): boolean {
  const [major, minor] = os
    .release()
    .split('.')
    .map((n) => parseInt(n, 10));
  return major! > 6 || (major === 6 && minor! >= 12);
}

onLinux('the request path is favoured over V8 background threads, and the search pool is left alone', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-threads-'));
  const { child, url } = await startChild(dir, [], { ...process.env, UV_THREADPOOL_SIZE: String(POOL) });
  try {
    const pid = child.pid!;
    const added = await call(url, 'POST', '/indexes/t/documents', [{ id: 1, title: 'a thread' }]);
    for (let i = 0; i < 100; i++) {
      const task = await call(url, 'GET', `/tasks/${added.body.taskUid}`);
      if (task.body.status === 'succeeded') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const searches = await Promise.all(
      Array.from({ length: 2 * POOL }, () => call(url, 'POST', '/indexes/t/search', { q: 'thread' })),
    );
    expect(searches.every((s) => s.status === 200 && s.body.hits.length === 1)).toBe(true);

    const base = os.getPriority(process.pid);
    const background = Math.min(19, base + 10);
    const nice = niceByThread(pid);
    expect(nice.get(pid)).toBe(base);
    const lowered = [...nice.values()].filter((n) => n === background).length;
    const kept = [...nice.values()].filter((n) => n === base).length;
    expect(lowered).toBeGreaterThanOrEqual(1);
    // The JavaScript thread and every thread of the pool.
    expect(kept).toBeGreaterThanOrEqual(1 + POOL);

    const mainSlice = sliceOf(pid, pid);
    if (mainSlice !== null && customSlices()) {
      expect(mainSlice).toBe(100_000);
      const others = [...nice.keys()].filter((t) => t !== pid).map((t) => sliceOf(pid, t));
      expect(others.some((s) => s !== null && s > 100_000)).toBe(true);
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
