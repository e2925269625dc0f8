/**
 * LMDB stores read whole by a process of their own before the server opens them.
 *
 * LMDB keeps no checksums and trusts its pages: one overwritten with other bytes can make the
 * process that reads it die of a segmentation fault. So before the server opens its task store
 * and its indexes, a child process (the same Node, the same addon) reads every entry and value
 * page of each (`walkStore`); a store it finds damaged, or that kills it, is reported here
 * instead of killing the server later, in the middle of a request.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { damagedFileMessage } from '../native';

// The same loader `binding.ts` requires, from `ts/` under tests and from `dist/` when built.
const LOADER = require.resolve('../../native/index.js');

const CHILD = `
const b = require(process.argv[1]);
for (const dir of process.argv.slice(2)) {
  process.stdout.write(JSON.stringify({ dir }) + '\\n');
  let error = null;
  try { b.walkStore(dir); } catch (e) { error = String(e && e.message); }
  process.stdout.write(JSON.stringify({ dir, error }) + '\\n');
}`;

/** The message of each damaged store of `dirs` (LMDB environment directories; it names the file), by directory. */
export function walkStores(dirs: string[]): Map<string, string> {
  const damaged = new Map<string, string>();
  let rest = dirs;
  while (rest.length > 0) {
    // Embedded in Electron, `process.execPath` is Electron's binary: this makes it a plain Node.
    const env = { ...process.env, ELECTRON_RUN_AS_NODE: '1' };
    const run = spawnSync(process.execPath, ['-e', CHILD, LOADER, ...rest], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
      env,
    });
    if (run.error) throw run.error;
    const done = new Set<string>();
    let current: string | null = null;
    for (const line of run.stdout.split('\n')) {
      if (!line) continue;
      const r = JSON.parse(line) as { dir: string; error?: string | null };
      if (r.error === undefined) {
        current = r.dir;
        continue;
      }
      current = null;
      done.add(r.dir);
      if (r.error !== null) damaged.set(r.dir, describe(r.error));
    }
    if (current === null) break;
    // The walk of `current` killed the process: it is damaged, and the others are walked again.
    damaged.set(
      current,
      damagedFileMessage(
        path.join(current, 'data.mdb'),
        `reading it makes LMDB fail (${run.signal ?? `exit ${run.status}`}).`,
      ),
    );
    done.add(current);
    rest = rest.filter((d) => !done.has(d));
  }
  return damaged;
}

/** The message of an addon error (`{"code","message"}`: it names the file), else the error's text. */
function describe(error: string): string {
  try {
    const parsed = JSON.parse(error) as { message?: unknown };
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not an addon error
  }
  return error;
}
