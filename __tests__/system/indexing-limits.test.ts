/**
 * `--max-indexing-threads` (issue 69): the indexer of a server started with it runs no more
 * threads at once than it allows. The engine names its threads (`crates/engine/src/indexing.rs`):
 * tokenization `quarry-index-N`, graph builds `quarry-hnsw-N`; tantivy names its own indexing
 * (`thrd-tantivy-index0`, cut to 15 bytes by the kernel) and merge (`merge_thread_0`) threads.
 * Read from `/proc/<pid>/task/*\/comm` of a real server process while a batch runs. Without
 * the limit, a two-core machine shows two indexing threads and four merge threads.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { call, finishedTask, startChild } from '../helpers/child';

const onLinux = process.platform === 'linux' ? it : it.skip;

/** How many threads of `pid` of each kind are alive now. */
function indexingThreads(pid: number): { indexing: number; merging: number; hnsw: number } {
  const out = { indexing: 0, merging: 0, hnsw: 0 };
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    let name: string;
    try {
      name = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
    } catch {
      continue; // The thread ended while being read.
    }
    if (name.startsWith('thrd-tantivy-in') || name.startsWith('quarry-index-')) out.indexing++;
    else if (name.startsWith('merge_thread_')) out.merging++;
    else if (name.startsWith('quarry-hnsw-')) out.hnsw++;
  }
  return out;
}

/**
 * Starts a server with `args`, adds `count` documents (500 with 3-dimensional vectors) in one task,
 * and returns the most threads of each kind seen alive at once while it ran, and after.
 */
async function peakThreads(args: string[], count: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-indexing-limits-'));
  const { child, url } = await startChild(dir, args);
  try {
    const pid = child.pid!;
    const embedders = { default: { source: 'userProvided', dimensions: 3 } };
    const set = await call(url, 'PATCH', '/indexes/t/settings', { embedders });
    expect((await finishedTask(url, set.body.taskUid)).status).toBe('succeeded');
    const docs = Array.from({ length: count }, (_, i) => ({
      id: i,
      title: `title ${i} word${i % 97} other${i % 13}`,
      body: `the body of document ${i} has words like alpha${i % 31} beta${i % 7} gamma${i}`,
      // A few distinct vectors: the graph is built, on the pool of `quarry-hnsw-N` threads.
      _vectors: { default: i < 500 ? [Math.sin(i), Math.cos(i), i / 500] : null },
    }));
    const added = await call(url, 'POST', '/indexes/t/documents', docs);
    // A count holds when two samples in a row show it: a thread tantivy has joined may still
    // be listed for a moment while its successor starts (at each commit, tantivy ends its
    // indexing threads and starts new ones).
    const peak = { indexing: 0, merging: 0, hnsw: 0 };
    let last: typeof peak | null = null;
    const sample = () => {
      const now = indexingThreads(pid);
      if (last) {
        peak.indexing = Math.max(peak.indexing, Math.min(now.indexing, last.indexing));
        peak.merging = Math.max(peak.merging, Math.min(now.merging, last.merging));
        peak.hnsw = Math.max(peak.hnsw, Math.min(now.hnsw, last.hnsw));
      }
      last = now;
    };
    for (;;) {
      sample();
      const task = (await call(url, 'GET', `/tasks/${added.body.taskUid}`)).body;
      if (task.status !== 'enqueued' && task.status !== 'processing') {
        expect([task.status, task.error]).toEqual(['succeeded', null]);
        break;
      }
    }
    sample();
    const search = await call(url, 'POST', '/indexes/t/search', { q: 'alpha3', limit: 0 });
    expect(search.body.estimatedTotalHits).toBeGreaterThan(0);
    return peak;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

onLinux(
  'a server started with --max-indexing-threads 1 indexes on one thread of each kind',
  async () => {
    const peak = await peakThreads(['--max-indexing-threads', '1'], 60_000);
    // The batch's writer was seen (else the sampling proved nothing), with one indexing thread,
    // one merge thread (tantivy starts four by default) and one graph-building thread.
    expect(peak).toEqual({ indexing: 1, merging: 1, hnsw: 1 });
  },
  120_000,
);

onLinux(
  'MEILI_MAX_INDEXING_THREADS sets it too, and a limit of 2 gives two merge threads',
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-indexing-limits-'));
    const { child, url } = await startChild(dir, [], { ...process.env, MEILI_MAX_INDEXING_THREADS: '2' });
    try {
      const added = await call(url, 'POST', '/indexes/t/documents', [{ id: 1, title: 'one' }]);
      expect((await finishedTask(url, added.body.taskUid)).status).toBe('succeeded');
      // tantivy's merge pool lives as long as the index's writer, which a small batch leaves open.
      const now = indexingThreads(child.pid!);
      expect(now.merging).toBe(2);
      expect(now.indexing).toBeLessThanOrEqual(2);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
  60_000,
);
