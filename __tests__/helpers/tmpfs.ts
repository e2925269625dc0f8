/**
 * A size-limited tmpfs for a server's data, mounted in a private mount namespace (`unshare -m`,
 * as root) so that only that server sees it; the test reaches it through `nsenter`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Why a private tmpfs cannot be mounted here, or null when it can. */
export function tmpfsUnavailable(): string | null {
  if (process.platform !== 'linux') return 'a private tmpfs needs Linux mount namespaces';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-ns-probe-'));
  try {
    const r = spawnSync('unshare', ['-m', 'sh', '-c', 'mount -t tmpfs -o size=1m tmpfs "$0"', dir], {
      encoding: 'utf8',
    });
    if (r.error) return `unshare is not available (${r.error.message})`;
    if (r.status !== 0) return `cannot mount a tmpfs in a private mount namespace (needs root): ${r.stderr.trim()}`;
    const n = spawnSync('nsenter', ['--version'], { encoding: 'utf8' });
    if (n.error || n.status !== 0) return 'nsenter is not available';
    return null;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The command and arguments that mount a tmpfs of `size` at `mnt` in a new mount namespace,
 * then run `command` in it (in the same process: its pid is the namespace's to enter).
 */
export function onTmpfs(mnt: string, size: string, command: string[]): [string, string[]] {
  return [
    'unshare',
    [
      '-m',
      'sh',
      '-c',
      'm="$0"; s="$1"; shift; mount -t tmpfs -o size="$s" tmpfs "$m" && exec "$@"',
      mnt,
      size,
      ...command,
    ],
  ];
}

/** Runs the shell `command` in the mount namespace of process `pid`, with `$0` set to `mnt`. */
export function insideOf(pid: number, mnt: string, command: string): string {
  return execFileSync('nsenter', ['-t', String(pid), '-m', '--', 'sh', '-c', command, mnt], { encoding: 'utf8' });
}

/** Fills the tmpfs at `mnt` as seen by `pid` (a file `filler`, removed to free the space). */
export function fillTmpfs(pid: number, mnt: string): void {
  insideOf(pid, mnt, 'dd if=/dev/zero of="$0/filler" bs=1M count=4096 2>/dev/null; sync; true');
}
