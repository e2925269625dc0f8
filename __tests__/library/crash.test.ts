/**
 * Crash safety in-process: an app embedding Quarry is killed with SIGKILL while it writes and
 * indexes; reopening the directory loses nothing the library acknowledged.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Quarry } from '../../ts/index';

const CHILD = path.join(__dirname, 'embedded-child.js');

it('given an app writing through the library, when it is killed with SIGKILL, then every acknowledged task ends succeeded with its documents', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-lib-crash-'));
  try {
    const child = spawn(process.execPath, [CHILD, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const acks: Array<{ uid: number; first: number; count: number }> = [];
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const lines = out.split('\n');
        out = lines.pop()!;
        for (const line of lines) {
          const [, uid, first, count] = line.split(' ').map(Number);
          acks.push({ uid: uid!, first: first!, count: count! });
        }
        // Several acknowledged, the worker indexing one of them: kill now.
        if (acks.length >= 6) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.once('exit', (code, signal) =>
        signal === 'SIGKILL' ? resolve() : reject(new Error(`the app exited with ${code}`)),
      );
    });
    await new Promise((r) => child.once('exit', r).exitCode !== null && r(null));

    const quarry = await Quarry.open(dir);
    try {
      for (const ack of acks) {
        const task = await quarry.waitForTask(ack.uid, { timeoutMs: 120_000 });
        expect([ack.uid, task.status]).toEqual([ack.uid, 'succeeded']);
      }
      const index = quarry.index('crash');
      for (const ack of acks) {
        const last = await index.getDocument(ack.first + ack.count - 1);
        expect(last.id).toBe(ack.first + ack.count - 1);
      }
      expect((await index.getStats()).numberOfDocuments).toBeGreaterThanOrEqual(acks.length * 2000);
    } finally {
      await quarry.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 180_000);
