/**
 * One instance of a replicated group runs out of disk (issue 71): its data directory and its
 * snapshot directory are a size-limited tmpfs in a mount namespace of its own. The group goes
 * on writing through the other instance; the full one keeps answering reads with what it has,
 * reports itself degraded and why, fails its snapshots without leaving a partial file behind or
 * a partial object in the group's bucket, and once space is freed catches up by itself, with
 * the same documents and tasks as the others, and publishes its snapshots again.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NatsCluster, natsServerBinary, SKIP_REASON as NATS_SKIP_REASON } from '../../scripts/nats-cluster';
import { eventually, QuarryNode } from '../helpers/replica';
import { fillTmpfs, insideOf, onTmpfs, tmpfsUnavailable } from '../helpers/tmpfs';

const nats = natsServerBinary();
const why = nats ? tmpfsUnavailable() : NATS_SKIP_REASON;
const suite = why === null ? describe : describe.skip;
if (why !== null) console.warn(`SKIPPED replication/full-disk.test.ts: ${why}`);

jest.setTimeout(240_000);

const books = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: from + i, title: `book ${from + i}`, body: 'lorem ipsum '.repeat(40) }));

async function documents(n: QuarryNode): Promise<unknown[]> {
  const r = await n.api('POST', '/indexes/books/documents/fetch', { limit: 100000 });
  expect(r.status).toBe(200);
  return [...r.body.results].sort((a: any, b: any) => a.id - b.id);
}

async function tasks(n: QuarryNode): Promise<unknown[]> {
  const r = await n.api('GET', '/tasks?limit=10000');
  return r.body.results.map((t: any) => ({ uid: t.uid, batchUid: t.batchUid, status: t.status, error: t.error }));
}

suite('a replicated instance whose disk fills', () => {
  const mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-replica-full-'));
  let cluster: NatsCluster;
  let a: QuarryNode;
  let b: QuarryNode;
  const inside = (command: string) => insideOf(b.child!.pid!, mnt, command);
  /** What b's snapshot directory holds, hidden files included. */
  const snapshotFiles = () => inside('ls -A "$0/snapshots" 2>/dev/null; true').split('\n').filter(Boolean);
  const staged = () => inside('ls -A "$0/db/update_files"').split('\n').filter(Boolean);

  beforeAll(async () => {
    cluster = await NatsCluster.start(1);
    const one = ['--replication-replicas', '1'];
    a = await QuarryNode.create('a', cluster.urls(), one);
    b = await QuarryNode.create(
      'b',
      cluster.urls(),
      [...one, '--replication-snapshot-interval', '1', '--snapshot-dir', `${mnt}/snapshots`],
      `${mnt}/db`,
    );
    b.wrap = (command) => onTmpfs(mnt, '64m', command);
    await Promise.all([a.start(), b.start()]);
  });

  afterAll(async () => {
    await Promise.all([a?.kill(), b?.kill()]);
    await cluster?.stop();
    fs.rmSync(mnt, { recursive: true, force: true });
  });

  test('keeps answering reads, says it is degraded, publishes no partial snapshot, and catches up once space is freed', async () => {
    const first = await a.api('POST', '/indexes/books/documents', books(0, 4000));
    expect(first.status).toBe(202);
    for (const n of [a, b]) expect((await n.waitTask(first.body.taskUid)).status).toBe('succeeded');
    // b publishes a snapshot of what it has (it is the one taking them, between two batches
    // at least a second apart).
    let next = 4000;
    /** A write a second after the last: b's worker wakes and its snapshot is due again. */
    const write = async () => {
      await new Promise((r) => setTimeout(r, 1100));
      const r = await a.api('POST', '/indexes/books/documents', books(next++, 1));
      await b.waitTask(r.body.taskUid, 60_000);
    };
    const published = await eventually(
      async () => {
        await write();
        const names = await cluster.objects('quarry-snapshots');
        return names.length > 0 ? names : undefined;
      },
      30_000,
      "b's first snapshot",
    );
    const before = await documents(b);

    fillTmpfs(b.child!.pid!, mnt);
    const writes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await a.api('POST', '/indexes/books/documents', books(10000 + i * 300, 300));
      expect(r.status).toBe(202);
      writes.push(r.body.taskUid);
      expect((await a.waitTask(r.body.taskUid)).status).toBe('succeeded');
    }
    const settings = await a.api('PATCH', '/indexes/books/settings', { filterableAttributes: ['title'] });
    expect((await a.waitTask(settings.body.taskUid)).status).toBe('succeeded');

    // b cannot apply them: degraded, with the disk named as the reason, and its reads answer.
    const health = await eventually(
      async () => {
        const h = await b.api('GET', '/health');
        return h.body.status === 'degraded' ? h.body : undefined;
      },
      30_000,
      'b degraded',
    );
    expect(health.reason).toMatch(/no space left on device/i);
    expect(await documents(b)).toEqual(before);
    const search = await b.api('POST', '/indexes/books/search', { q: 'book 17', matchingStrategy: 'all' });
    expect(search.status).toBe(200);
    expect(search.body.hits[0]).toMatchObject({ id: 17 });
    expect((await b.api('GET', '/indexes/books/stats')).body.numberOfDocuments).toBe(before.length);
    // Nothing of the payload it could not write stays behind.
    expect(staged()).toEqual([]);

    // Room for the log's entries and batches, not for a copy of the index: b catches up by
    // itself, without a restart, and is available again. Its snapshots (at least two attempts,
    // a second apart) fail for want of space and leave nothing behind: no partial archive
    // here, no partial object in the group's bucket.
    inside('truncate -s -1536k "$0/filler"');
    await b.waitTask(settings.body.taskUid, 60_000);
    await eventually(
      async () => ((await b.api('GET', '/health')).body.status === 'available' ? true : undefined),
      30_000,
      'b available again',
    );
    await eventually(
      async () => {
        await write();
        return b.log.join('').split('the snapshot was not published').length > 2 ? true : undefined;
      },
      30_000,
      'failed snapshot attempts',
    );
    expect(b.log.join('')).toMatch(/the snapshot was not published[^\n]*no space left on device/i);
    expect(snapshotFiles()).toEqual([]);
    expect(await cluster.objects('quarry-snapshots')).toEqual(published);

    // Space freed: b ends like a.
    inside('rm -f "$0/filler"');
    await write();
    expect((await b.api('GET', '/health')).body).toEqual({ status: 'available' });
    expect(await documents(b)).toEqual(await documents(a));
    expect(await documents(b)).toHaveLength(next + 900);
    expect(await tasks(b)).toEqual(await tasks(a));
    for (const uid of writes) expect((await b.api('GET', `/tasks/${uid}`)).body.status).toBe('succeeded');
    expect(
      (await b.api('POST', '/indexes/books/search', { q: 'book', filter: 'title = "book 10899"' })).body.hits.map(
        (h: any) => h.id,
      ),
    ).toEqual([10899]);
    // And it publishes a snapshot of the new state again, leaving its directory empty.
    await eventually(
      async () => {
        await write();
        const names = await cluster.objects('quarry-snapshots');
        return names.some((n: string) => !published.includes(n)) ? true : undefined;
      },
      30_000,
      'a new snapshot from b',
    );
    await eventually(async () => (snapshotFiles().length === 0 ? true : undefined), 10_000, 'an empty snapshot dir');
  });
});
