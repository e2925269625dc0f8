/**
 * Many processes, one data directory: one writer and four read-only openers
 * (`Quarry.open(dir, { readOnly: true })`), each a real child process on a real directory.
 * Readers see the writer's commits (polled, within a generous bound), never block its commits,
 * refuse every write, and `kill -9` of a reader, then of the writer, loses no acknowledged
 * document.
 */
import { type ChildProcess, fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Quarry } from '../../ts/index';

const CHILD = path.join(__dirname, 'multi-process-child.js');
/** How long a change may take to reach a reader before the test fails (a bound, not a speed). */
const VISIBLE_WITHIN_MS = 60_000;

interface Reply {
  mid?: number;
  value?: unknown;
  error?: { code: string | null; message: string };
  ready?: boolean;
  ack?: { taskUid: number; first: number; count: number };
  fatal?: string;
}

class Proc {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly acks: NonNullable<Reply['ack']>[] = [];
  #next = 0;
  readonly #pending = new Map<number, (r: Reply) => void>();

  constructor(role: 'writer' | 'reader', dir: string) {
    this.child = fork(CHILD, [role, dir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.ready = new Promise((resolve, reject) => {
      this.child.once('exit', (code, signal) => reject(new Error(`${role} exited (${code ?? signal})`)));
      this.child.on('message', (m: Reply) => {
        if (m.ready) resolve();
        if (m.ack) this.acks.push(m.ack);
        if (m.fatal) reject(new Error(m.fatal));
        if (m.mid !== undefined) {
          this.#pending.get(m.mid)?.(m);
          this.#pending.delete(m.mid);
        }
      });
    });
    this.ready.catch(() => undefined);
  }

  /** Runs `op` in the child: its value, or a thrown error carrying the child's error code. */
  async call<T = unknown>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    const r = await this.reply(op, args);
    if (r.error) throw Object.assign(new Error(r.error.message), { code: r.error.code });
    return r.value as T;
  }

  reply(op: string, args: Record<string, unknown> = {}): Promise<Reply> {
    const mid = this.#next++;
    return new Promise((resolve) => {
      this.#pending.set(mid, resolve);
      this.child.send({ mid, op, ...args });
    });
  }

  kill9(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) return resolve();
      this.child.once('exit', () => resolve());
      this.child.kill('SIGKILL');
    });
  }
}

/** Polls `f` until `done` holds of its value; fails with the last value after the bound. */
async function eventually<T>(f: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + VISIBLE_WITHIN_MS;
  for (;;) {
    const v = await f();
    if (done(v)) return v;
    if (Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const docs = (from: number, n: number, word = 'book') =>
  Array.from({ length: n }, (_, i) => ({
    id: from + i,
    text: `${word} number ${from + i}`,
    year: 2000 + ((from + i) % 20),
  }));

describe('one writer and four read-only processes on one data directory', () => {
  let dir: string;
  const procs: Proc[] = [];
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.kill9()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('readers follow the writer, never block it, refuse writes, and kill -9 loses no acknowledged document', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-multi-'));
    // Read-only needs a directory a writer has created.
    await expect(Quarry.open({ dbPath: dir, readOnly: true })).rejects.toThrow(/has not been created yet/);

    let writer = new Proc('writer', dir);
    procs.push(writer);
    await writer.ready;
    // The readers start before the index exists.
    const readers = [0, 1, 2, 3].map(() => new Proc('reader', dir));
    procs.push(...readers);
    await Promise.all(readers.map((r) => r.ready));
    expect(await readers[0]!.call('readOnly')).toBe(true);
    const missing = await readers[0]!.reply('search', { uid: 'books', q: 'book' });
    expect(missing.error?.code).toBe('index_not_found');

    // The index is created and filled by the writer: every reader sees it.
    expect(await writer.call('add', { uid: 'books', docs: docs(0, 100), wait: true })).toBe('succeeded');
    for (const r of readers) {
      const seen = await eventually(
        () => r.call<{ total: number }>('search', { uid: 'books', q: 'book' }).catch(() => ({ total: -1 })),
        (v) => v.total === 100,
      );
      expect(seen.total).toBe(100);
    }

    // Settings reach the readers: a filter on an attribute made filterable.
    expect(await writer.call('settings', { uid: 'books', patch: { filterableAttributes: ['year'] } })).toBe(
      'succeeded',
    );
    const filtered = await eventually(
      () =>
        readers[1]!
          .call<{ total: number }>('search', { uid: 'books', q: 'book', params: { filter: 'year = 2001' } })
          .catch(() => ({ total: -1 })),
      (v) => v.total === 5,
    );
    expect(filtered.total).toBe(5);

    // Readers search without a pause while the writer commits batches: every commit ends.
    await Promise.all(readers.map((r) => r.call('spin', { uid: 'books' })));
    const statuses: unknown[] = [];
    for (let b = 0; b < 8; b++)
      statuses.push(await writer.call('add', { uid: 'books', docs: docs(1000 + b * 50, 50, 'forever'), wait: true }));
    expect(statuses).toEqual(Array(8).fill('succeeded'));
    // The writer's compaction (segments merged, their files deleted) under readers.
    expect(await writer.call('compact', { uid: 'books' })).toBe('succeeded');
    const spun = await Promise.all(readers.map((r) => r.call<number>('stop')));
    for (const n of spun) expect(n).toBeGreaterThan(0);
    for (const r of readers) {
      const seen = await eventually(
        () => r.call<{ total: number }>('search', { uid: 'books', q: 'forever' }),
        (v) => v.total === 400,
      );
      expect(seen.total).toBe(400);
      expect(await r.call('getDocument', { uid: 'books', id: 1399 })).toMatchObject({ id: 1399 });
      expect(await r.call('stats', { uid: 'books' })).toBe(500);
    }

    // Every write of a read-only Quarry is refused with one code.
    const codes = await readers[2]!.call<string[]>('writes', { uid: 'books' });
    expect(codes.length).toBe(16);
    expect(new Set(codes)).toEqual(new Set(['QuarryError:read_only_instance']));

    // An index created later, and deleted later.
    expect(await writer.call('add', { uid: 'later', docs: docs(0, 3), wait: true })).toBe('succeeded');
    expect(
      await eventually(
        () => readers[3]!.call<string[]>('getIndexes'),
        (v) => v.includes('later'),
      ),
    ).toContain('later');
    expect((await readers[3]!.call<{ total: number }>('search', { uid: 'later', q: 'book' })).total).toBe(3);
    expect(await writer.call('deleteIndex', { uid: 'later' })).toBe('succeeded');
    const gone = await eventually(
      () => readers[3]!.reply('search', { uid: 'later', q: 'book' }),
      (r) => r.error?.code === 'index_not_found',
    );
    expect(gone.error?.code).toBe('index_not_found');

    // kill -9 of a reader, in the middle of its searches, while the writer writes.
    await readers[0]!.call('spin', { uid: 'books' });
    await writer.call('addForever', { uid: 'books', from: 100_000, size: 200 });
    await eventually(
      async () => writer.acks.length,
      (n) => n >= 3,
    );
    await readers[0]!.kill9();
    const acked = writer.acks.length;
    await eventually(
      async () => writer.acks.length,
      (n) => n >= acked + 3,
    );
    // Then kill -9 of the writer, mid-write.
    await writer.kill9();
    const acks = [...writer.acks];
    expect(acks.length).toBeGreaterThanOrEqual(6);

    // A new writer recovers; nothing acknowledged is lost, and the readers still running see it.
    writer = new Proc('writer', dir);
    procs.push(writer);
    await writer.ready;
    for (const ack of acks)
      expect([ack.taskUid, await writer.call('waitTask', { uid: ack.taskUid })]).toEqual([ack.taskUid, 'succeeded']);
    const expected = 500 + acks.length * 200;
    const atLeast = await eventually(
      () => writer.call<number>('stats', { uid: 'books' }),
      (n) => n >= expected,
    );
    expect(atLeast).toBeGreaterThanOrEqual(expected);
    for (const ack of acks) {
      const last = ack.first + ack.count - 1;
      expect(await writer.call('getDocument', { uid: 'books', id: last })).toMatchObject({ id: last });
    }
    for (const r of readers.slice(1)) {
      const n = await eventually(
        () => r.call<number>('stats', { uid: 'books' }),
        (v) => v >= expected,
      );
      expect(n).toBeGreaterThanOrEqual(expected);
      const last = acks[acks.length - 1]!;
      expect(await r.call('getDocument', { uid: 'books', id: last.first })).toMatchObject({ id: last.first });
    }
  }, 300_000);
});
