/**
 * A full disk, for real: the server's data directory is a size-limited tmpfs mounted in a
 * private mount namespace (`unshare -m`, as root), filled by the test from inside that
 * namespace (`nsenter`). A payload refused, a document addition, a settings change that
 * reindexes, a dump, a snapshot and a compaction each fail with `no_space_left_on_device`
 * (type `system`), leave the index exactly as it was and leave nothing half-written behind
 * (staged payloads, partial archives, a partial merged segment); searches keep answering;
 * once space is freed the next tasks succeed without a restart.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHILD_KEY, call } from '../helpers/child';
import { fillTmpfs, insideOf, onTmpfs, tmpfsUnavailable } from '../helpers/tmpfs';

const BIN = path.join(__dirname, '../../bin/quarry.js');

const why = tmpfsUnavailable();
const suite = why === null ? describe : describe.skip;
if (why !== null) console.warn(`SKIPPED durability/full-disk.test.ts: ${why}`);

/** The server on a tmpfs of `size` mounted at `mnt` in a namespace of its own. */
function startOnTmpfs(mnt: string, size: string): Promise<{ child: ChildProcess; url: string }> {
  const [cmd, args] = onTmpfs(mnt, size, [
    process.execPath,
    BIN,
    ...['--db-path', `${mnt}/db`, '--dump-dir', `${mnt}/dumps`, '--snapshot-dir', `${mnt}/snapshots`],
    ...['--http-addr', '127.0.0.1:0', '--master-key', CHILD_KEY, '--log-level', 'warn', '--no-analytics'],
  ]);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) resolve({ child, url: m[1] });
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => reject(new Error(`server exited early with ${code}: ${out}`)));
  });
}

suite('a full disk', () => {
  const mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-full-disk-'));
  let child: ChildProcess;
  let url: string;
  /** Runs a shell command inside the server's mount namespace (where the tmpfs is). */
  const inside = (command: string) => insideOf(child.pid!, mnt, command);
  const fill = () => fillTmpfs(child.pid!, mnt);
  const leave = (kib: number) => inside(`truncate -s -${kib}k "$0/filler"`);
  const staged = () => inside('ls "$0/db/update_files"').split('\n').filter(Boolean);
  const waitTask = async (uid: number) => {
    for (let i = 0; i < 600; i++) {
      const t = (await call(url, 'GET', `/tasks/${uid}`)).body;
      if (t.status === 'succeeded' || t.status === 'failed') return t;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`task ${uid} did not end`);
  };
  let next = 0;
  const docs = (n: number) =>
    Array.from({ length: n }, () => {
      const id = next++;
      return {
        id,
        title: `lorem ipsum ${id}`,
        body: `words ${(id * 7919).toString(36)} ${(id * 104729).toString(36)} dolor`,
      };
    });
  /** What a user sees of the index: its count, a search's total and its first hits. */
  const view = async () => {
    const stats = (await call(url, 'GET', '/indexes/books/stats')).body;
    const search = (await call(url, 'POST', '/indexes/books/search', { q: 'lorem dolor', limit: 5 })).body;
    const settings = (await call(url, 'GET', '/indexes/books/settings')).body;
    return {
      count: stats.numberOfDocuments,
      total: search.estimatedTotalHits,
      hits: search.hits.map((h: any) => h.id),
      searchable: settings.searchableAttributes,
    };
  };
  /** The documents a search for `id`'s own words finds. */
  const found = async (id: number) => {
    const r = await call(url, 'POST', '/indexes/books/search', {
      q: `${(id * 7919).toString(36)} ${(id * 104729).toString(36)}`,
      matchingStrategy: 'all',
    });
    return r.body.hits.map((h: any) => h.id);
  };
  const expectFull = (error: any) => {
    expect(error).toMatchObject({ code: 'no_space_left_on_device', type: 'system', message: error.message });
    expect(error.message).toMatch(/no space left on device/i);
  };

  beforeAll(async () => {
    ({ child, url } = await startOnTmpfs(mnt, '48m'));
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    fs.rmSync(mnt, { recursive: true, force: true });
  });

  test('fails each write with no_space_left_on_device, keeps the index as it was, and recovers once space is freed', async () => {
    const first = await call(url, 'POST', '/indexes/books/documents', docs(20000));
    expect(first.status).toBe(202);
    expect((await waitTask(first.body.taskUid)).status).toBe('succeeded');
    // A small batch beside the bulk load's segment: too small to be merged after it.
    const small = await call(url, 'POST', '/indexes/books/documents', docs(100));
    expect((await waitTask(small.body.taskUid)).status).toBe('succeeded');
    const before = await view();
    expect(before.count).toBe(20100);
    // What the inverted index holds on disk: failures must leave none of their files.
    const tantivyBytes = () => Number(inside('du -sk "$0"/db/indexes/*/tantivy').split(/\s/)[0]);
    // The small batch may be merged after its task succeeded (`compactLater`): wait until the
    // inverted index's files stop changing.
    let sized = tantivyBytes();
    for (let stable = 0, i = 0; stable < 3 && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 300));
      const now = tantivyBytes();
      stable = now === sized ? stable + 1 : 0;
      sized = now;
    }
    expect(await found(19999)).toEqual([19999]);

    // The disk is full: a payload cannot even be received, and nothing of it stays.
    fill();
    const refused = await call(url, 'POST', '/indexes/books/documents', docs(500));
    expect(refused.status).toBe(422);
    expectFull(refused.body);
    expect(staged()).toEqual([]);

    // Some room for a payload, not for indexing it: the task fails, the index is unchanged,
    // its staged payload is gone.
    leave(600);
    const added = await call(url, 'POST', '/indexes/books/documents', docs(3000));
    expect(added.status).toBe(202);
    const addition = await waitTask(added.body.taskUid);
    expect(addition.status).toBe('failed');
    expectFull(addition.error);
    expect(await view()).toEqual(before);
    expect(staged()).toEqual([]);
    expect(tantivyBytes()).toBe(sized);

    // A settings change that reindexes every document: fails the same way, the settings and
    // the inverted index are as they were.
    const changed = await call(url, 'PATCH', '/indexes/books/settings', { searchableAttributes: ['body', 'title'] });
    expect(changed.status).toBe(202);
    const change = await waitTask(changed.body.taskUid);
    expect(change.status).toBe('failed');
    expectFull(change.error);
    expect(await view()).toEqual(before);
    expect((await call(url, 'GET', '/health')).body).toEqual({ status: 'available' });

    // A dump and a snapshot fail the same way, leaving no partial archive.
    for (const route of ['/dumps', '/snapshots']) {
      const r = await call(url, 'POST', route);
      expect(r.status).toBe(202);
      const t = await waitTask(r.body.taskUid);
      expect(t.status).toBe('failed');
      expectFull(t.error);
    }
    expect(
      inside('ls -A "$0/dumps" "$0/snapshots"')
        .split('\n')
        .filter((l) => l && !l.endsWith(':')),
    ).toEqual([]);
    // So does merging the index's two segments into one, leaving no partial segment.
    const compacted = await call(url, 'POST', '/indexes/books/compact');
    expect(compacted.status).toBe(202);
    const compaction = await waitTask(compacted.body.taskUid);
    expect(compaction.status).toBe('failed');
    expectFull(compaction.error);
    expect(tantivyBytes()).toBe(sized);
    expect(await view()).toEqual(before);

    // Space freed: the next tasks succeed, without a restart, and see everything.
    inside('rm -f "$0/filler"');
    const again = await call(url, 'POST', '/indexes/books/documents', docs(3000));
    expect((await waitTask(again.body.taskUid)).status).toBe('succeeded');
    const resettled = await call(url, 'PATCH', '/indexes/books/settings', { searchableAttributes: ['body', 'title'] });
    expect((await waitTask(resettled.body.taskUid)).status).toBe('succeeded');
    const after = await view();
    expect(after.count).toBe(23100);
    expect(await found(26599)).toEqual([26599]);
    expect(await found(23599)).toEqual([]);
    expect(after.searchable).toEqual(['body', 'title']);
    // The documents of the refused payload and of the failed addition were never added;
    // those sent again were.
    const fetched = await call(url, 'POST', '/indexes/books/documents/fetch', {
      ids: ['20100', '20600', '23599', '23600', '26599'],
    });
    expect(fetched.body.results.map((d: any) => d.id).sort((a: number, b: number) => a - b)).toEqual([23600, 26599]);
    // And the archives and the compaction succeed.
    for (const route of ['/dumps', '/snapshots', '/indexes/books/compact']) {
      const r = await call(url, 'POST', route);
      expect((await waitTask(r.body.taskUid)).status).toBe('succeeded');
    }
  });
});
