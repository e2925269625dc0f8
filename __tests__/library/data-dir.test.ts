/**
 * A data directory is opened only in the format it was written in: an older Quarry's is
 * upgraded with `--upgrade-db` and refused without it; a newer one, a Meilisearch database and
 * unrelated files are refused with what to do; a directory held by a server is refused.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Quarry } from '../../ts/index';
import { startChild } from '../helpers/child';

const BIN = path.join(__dirname, '../../bin/quarry.js');
const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-dir-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function filledDir(): Promise<string> {
  const dir = tmp();
  const q = await Quarry.open(dir);
  await q
    .index('m')
    .addDocuments([{ id: 1, title: 'kept' }])
    .waitTask();
  await q.close();
  return dir;
}

describe('given a data directory of another format', () => {
  it('when it was written by a newer Quarry, then it is refused and left as it is', async () => {
    const dir = await filledDir();
    fs.writeFileSync(path.join(dir, 'VERSION'), 'quarry-9\n');
    await expect(Quarry.open(dir)).rejects.toThrow(
      /written by a newer Quarry \(format quarry-9\); this one reads quarry-1/,
    );
    expect(fs.readFileSync(path.join(dir, 'VERSION'), 'utf8')).toBe('quarry-9\n');
  });

  it('when it is a Meilisearch database, then it is refused with the dump path to follow', async () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'VERSION'), '1.50.0');
    fs.mkdirSync(path.join(dir, 'tasks'));
    await expect(Quarry.open(dir)).rejects.toThrow(/holds a Meilisearch 1\.50\.0 database.*--import-dump/);
  });

  it('when it was written before the VERSION file (format 0), then it is refused without --upgrade-db and upgraded with it', async () => {
    const dir = await filledDir();
    fs.rmSync(path.join(dir, 'VERSION'));
    await expect(Quarry.open(dir)).rejects.toThrow(/older Quarry \(format quarry-0\).*--upgrade-db/);
    expect(fs.existsSync(path.join(dir, 'VERSION'))).toBe(false);
    const q = await Quarry.open({ dbPath: dir, options: ['--upgrade-db'] });
    expect((await q.index('m').search('kept')).hits).toEqual([{ id: 1, title: 'kept' }]);
    await q.close();
    expect(fs.readFileSync(path.join(dir, 'VERSION'), 'utf8')).toBe('quarry-1\n');
  });

  it('when it holds unrelated files, then it is refused', async () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine');
    await expect(Quarry.open(dir)).rejects.toThrow(/holds files but no Quarry database/);
  });
});

describe('given a server running on a data directory', () => {
  it('when the library opens the same directory, then it is refused naming the server pid, and a second server fails to start', async () => {
    const dir = tmp();
    const { child } = await startChild(dir);
    try {
      await expect(Quarry.open(dir)).rejects.toThrow(new RegExp(`is in use by another process \\(pid ${child.pid}\\)`));
      const second = spawnSync(
        process.execPath,
        [BIN, '--db-path', dir, '--http-addr', '127.0.0.1:0', '--no-analytics'],
        { encoding: 'utf8', timeout: 30_000 },
      );
      expect(second.status).toBe(1);
      expect(second.stderr).toContain(`is in use by another process (pid ${child.pid})`);
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
    const q = await Quarry.open(dir);
    await q.close();
  });
});
