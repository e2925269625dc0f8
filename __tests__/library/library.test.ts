/**
 * The embedded library (`import { Quarry } from 'quarry-search'`): every call against a real
 * data directory on disk, with the engine in this process and no HTTP.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Quarry, QuarryError } from '../../ts/index';

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-lib-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function refusal(p: Promise<unknown>): Promise<QuarryError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof QuarryError) return err;
    throw err;
  }
  throw new Error('expected a QuarryError');
}

const MOVIES = [
  { id: 1, title: 'Carol', genre: 'drama', year: 2015 },
  { id: 2, title: 'Wonder Woman', genre: 'action', year: 2017 },
  { id: 3, title: 'Life of Pi', genre: 'adventure', year: 2012 },
  { id: 4, title: 'Mad Max: Fury Road', genre: 'action', year: 2015 },
];

describe('given an open Quarry with a movies index', () => {
  let quarry: Quarry;
  beforeAll(async () => {
    quarry = await Quarry.open({ dbPath: tmp() });
    await quarry.createIndex('movies', { primaryKey: 'id' }).waitTask();
    await quarry
      .index('movies')
      .updateSettings({ filterableAttributes: ['genre', 'year'], sortableAttributes: ['year'] })
      .waitTask();
    const task = await quarry.index('movies').addDocuments(MOVIES).waitTask();
    expect(task.status).toBe('succeeded');
  });
  afterAll(() => quarry.close());

  it('when documents are added, then the write answers the enqueued task at once and waitTask its end', async () => {
    const write = quarry.index('movies').addDocuments([{ id: 5, title: 'Arrival', genre: 'drama', year: 2016 }]);
    const enqueued = await write;
    expect(enqueued).toMatchObject({ indexUid: 'movies', status: 'enqueued', type: 'documentAdditionOrUpdate' });
    const done = await write.waitTask();
    expect(done).toMatchObject({
      uid: enqueued.taskUid,
      status: 'succeeded',
      details: { receivedDocuments: 1, indexedDocuments: 1 },
    });
    expect((await quarry.index('movies').getDocument(5)).title).toBe('Arrival');
  });

  it('when searching, then hits, highlights, filters, facets and sort answer as the server does', async () => {
    const res = await quarry.index('movies').search('carol', { attributesToHighlight: ['title'] });
    expect(res.hits.map((h) => h.id)).toEqual([1]);
    expect(res.hits[0]!._formatted!.title).toBe('<em>Carol</em>');
    const filtered = await quarry
      .index('movies')
      .search('', { filter: 'genre = action', sort: ['year:asc'], facets: ['genre'] });
    expect(filtered.hits.map((h) => h.id)).toEqual([4, 2]);
    expect(filtered.facetDistribution).toEqual({ genre: { action: 2 } });
    const bytes = await quarry.index('movies').searchBytes({ q: 'wonder' });
    expect(JSON.parse(bytes.toString()).hits[0].id).toBe(2);
  });

  it('when searching synchronously, then the answer is the one search gives, returned without a promise', async () => {
    const idx = quarry.index('movies');
    const asked: Array<[string, Record<string, unknown>]> = [
      ['carol', { attributesToHighlight: ['title'], showRankingScore: true }],
      ['', { filter: 'genre = action', sort: ['year:asc'], facets: ['genre', 'year'] }],
      ['wondr wom', { showMatchesPosition: true }],
      ['max', { attributesToCrop: ['title'], cropLength: 2, limit: 1 }],
    ];
    for (const [q, params] of asked) {
      const sync = idx.searchSync(q, params);
      expect(sync).not.toBeInstanceOf(Promise);
      expect(withoutTimes(sync)).toEqual(withoutTimes(await idx.search(q, params)));
    }
    expect(idx.searchSync('fury').hits.map((h) => h.id)).toEqual([4]);
    expect(JSON.parse(idx.searchBytesSync({ q: 'pi' }).toString()).hits[0].id).toBe(3);
  });

  it('when a synchronous search is refused, then it throws at once: the server code, or which search it cannot run', () => {
    const idx = quarry.index('movies');
    const refusedSync = (f: () => unknown): QuarryError => {
      try {
        f();
      } catch (err) {
        if (err instanceof QuarryError) return err;
        throw err;
      }
      throw new Error('expected a QuarryError');
    };
    expect(refusedSync(() => idx.searchSync('x', { limit: -1 })).code).toBe('invalid_search_limit');
    expect(refusedSync(() => idx.searchSync('x', { filter: 'nope = 1' })).code).toBe('invalid_search_filter');
    expect(refusedSync(() => quarry.index('nope').searchSync('x')).code).toBe('index_not_found');
    expect(() => idx.searchSync('x', { hybrid: { embedder: 'e', semanticRatio: 0.5 } })).toThrow(
      /searchSync cannot run a search that waits on an embedder \(`hybrid` without `vector`\); use search\(\)/,
    );
    expect(() => idx.searchSync('x', { useNetwork: true })).toThrow(QuarryError);
  });

  it('when a facet search and a multi-search run, then they answer', async () => {
    const facets = await quarry.index('movies').facetSearch({ facetName: 'genre', facetQuery: 'adv' });
    expect(facets.facetHits).toEqual([{ value: 'adventure', count: 1 }]);
    const multi = await quarry.multiSearch({
      queries: [
        { indexUid: 'movies', q: 'pi' },
        { indexUid: 'movies', q: 'max' },
      ],
    });
    expect(multi.results.map((r) => [r.indexUid, r.hits[0]!.id])).toEqual([
      ['movies', 3],
      ['movies', 4],
    ]);
    const federated = await quarry.multiSearch({
      queries: [
        { indexUid: 'movies', q: 'pi' },
        { indexUid: 'movies', q: 'max' },
      ],
      federation: {},
    });
    expect(federated.hits.map((h) => h.id as number).sort()).toEqual([3, 4]);
  });

  it('when a call is invalid, then it throws a QuarryError with the server code, type, link and status', async () => {
    const limit = await refusal(quarry.index('movies').search('x', { limit: -1 }));
    expect([limit.code, limit.type, limit.httpStatus]).toEqual(['invalid_search_limit', 'invalid_request', 400]);
    expect(limit.link).toContain('invalid_search_limit');
    const missing = await refusal(quarry.index('nope').search('x'));
    expect([missing.code, missing.httpStatus, missing.message]).toEqual([
      'index_not_found',
      404,
      'Index `nope` not found.',
    ]);
    expect((await refusal(quarry.index('bad uid!').addDocuments([]))).code).toBe('invalid_index_uid');
    expect((await refusal(quarry.index('movies').getDocument(999))).code).toBe('document_not_found');
    expect((await refusal(quarry.index('movies').updateSettings({ rankingRules: ['nope'] } as never))).code).toBe(
      'invalid_settings_ranking_rules',
    );
    expect((await refusal(quarry.getTask(123456))).code).toBe('task_not_found');
  });

  it('when a task fails, then waitTask resolves with the failed task and its error', async () => {
    const task = await quarry
      .index('movies')
      .addDocuments([{ title: 'no id' }])
      .waitTask();
    expect(task.status).toBe('failed');
    expect(task.error).toMatchObject({ code: 'missing_document_id', type: 'invalid_request' });
  });

  it('when documents come as NDJSON, CSV and a stream, then each is indexed', async () => {
    const idx = quarry.index('formats');
    await idx.addDocuments(Buffer.from('{"id":1,"n":"a"}\n{"id":2,"n":"b"}\n'), { format: 'ndjson' }).waitTask();
    await idx.addDocuments('id;n\n3;c\n', { format: 'csv', csvDelimiter: ';' }).waitTask();
    await idx.addDocuments(Readable.from(['[{"id":4,', '"n":"d"}]']), { format: 'json' }).waitTask();
    await idx.updateDocuments([{ id: 1, extra: true }]).waitTask();
    const page = await idx.getDocuments({ limit: 10, sort: undefined });
    expect(page.total).toBe(4);
    expect(page.results.find((d) => d.id === 1)).toEqual({ id: 1, n: 'a', extra: true });
    expect(page.results.find((d) => d.n === 'c')).toBeDefined();
  });

  it('when documents are fetched and deleted, then by id, by filter and all', async () => {
    const idx = quarry.index('deletions');
    await idx.updateSettings({ filterableAttributes: ['k'] }).waitTask();
    await idx.addDocuments([1, 2, 3, 4, 5].map((id) => ({ id, k: id % 2 }))).waitTask();
    expect((await idx.getDocuments({ filter: 'k = 1' })).total).toBe(3);
    await idx.deleteDocument(1).waitTask();
    await idx.deleteDocuments([2]).waitTask();
    expect((await idx.deleteDocuments({ filter: 'k = 1' }).waitTask()).details).toMatchObject({ deletedDocuments: 2 });
    expect((await idx.getStats()).numberOfDocuments).toBe(1);
    expect((await refusal(idx.deleteDocuments({ filter: '' }))).code).toBe('invalid_document_filter');
    await idx.deleteAllDocuments().waitTask();
    expect((await idx.getStats()).numberOfDocuments).toBe(0);
  });

  it('when settings are updated and reset, then getSettings shows it', async () => {
    const idx = quarry.index('settings');
    await idx.updateSettings({ searchableAttributes: ['title'], stopWords: ['the'] }).waitTask();
    expect(await idx.getSettings()).toMatchObject({ searchableAttributes: ['title'], stopWords: ['the'] });
    await idx.resetSettings().waitTask();
    expect(await idx.getSettings()).toMatchObject({ searchableAttributes: ['*'], stopWords: [] });
  });

  it('when indexes are listed, renamed, swapped and deleted, then the registry follows', async () => {
    await quarry.createIndex('a1').waitTask();
    await quarry.createIndex('b1').waitTask();
    await quarry.updateIndex('a1', { uid: 'a2' }).waitTask();
    expect((await quarry.getIndex('a2')).uid).toBe('a2');
    expect((await quarry.swapIndexes([{ indexes: ['a2', 'b1'] }]).waitTask()).status).toBe('succeeded');
    const uids = (await quarry.getIndexes({ limit: 100 })).results.map((i) => i.uid);
    expect(uids).toEqual(expect.arrayContaining(['a2', 'b1', 'movies']));
    await quarry.deleteIndex('a2').waitTask();
    expect((await refusal(quarry.getIndex('a2'))).code).toBe('index_not_found');
  });

  it('when an embedder is configured, then similar documents are found by their vectors', async () => {
    const idx = quarry.index('vectors');
    await idx.updateSettings({ embedders: { mine: { source: 'userProvided', dimensions: 2 } } } as never).waitTask();
    const added = await idx
      .addDocuments([
        { id: 1, _vectors: { mine: [1, 0] } },
        { id: 2, _vectors: { mine: [0.9, 0.1] } },
        { id: 3, _vectors: { mine: [0, 1] } },
      ])
      .waitTask();
    expect(added.status).toBe('succeeded');
    const similar = await idx.similar({ id: 1, embedder: 'mine' });
    expect(similar.hits.map((h) => h.id)).toEqual([2, 3]);
    const semantic = await idx.search(undefined, {
      vector: [0, 1],
      hybrid: { embedder: 'mine', semanticRatio: 1 },
      limit: 1,
    });
    expect(semantic.hits.map((h) => h.id)).toEqual([3]);
  });

  it('when an index handle changes its primary key or is deleted, then the registry follows', async () => {
    const idx = quarry.index('handle');
    await quarry.createIndex('handle').waitTask();
    await idx.update({ primaryKey: 'sku' }).waitTask();
    expect((await idx.getInfo()).primaryKey).toBe('sku');
    await idx.delete().waitTask();
    expect((await refusal(idx.getInfo())).code).toBe('index_not_found');
  });

  it('when enqueued tasks are canceled, then they end canceled', async () => {
    // The cancelation is enqueued behind nothing that could start the additions first:
    // a long addition keeps the worker busy while the two small ones wait.
    const long = quarry
      .index('cancel')
      .addDocuments(Array.from({ length: 30000 }, (_, i) => ({ id: i, text: `row ${i}` })));
    await long;
    const a = await quarry.index('cancel2').addDocuments([{ id: 1 }]);
    const b = await quarry.index('cancel2').addDocuments([{ id: 2 }]);
    const cancel = await quarry.cancelTasks({ uids: [a.taskUid, b.taskUid], statuses: ['enqueued'] }).waitTask();
    expect(cancel.details).toMatchObject({ matchedTasks: 2 });
    await long.waitTask();
    const ended = await quarry.getTasks({ uids: [a.taskUid, b.taskUid] });
    expect(ended.results.map((t) => t.status)).toEqual(['canceled', 'canceled']);
    expect((await refusal(quarry.cancelTasks({}))).code).toBe('missing_task_filters');
  });

  it('when tasks are listed, then the filters are those of GET /tasks', async () => {
    const failed = await quarry.getTasks({ statuses: ['failed'], indexUids: ['movies'] });
    expect(failed.results.length).toBeGreaterThan(0);
    expect(failed.results.every((t) => t.status === 'failed' && t.indexUid === 'movies')).toBe(true);
    expect((await refusal(quarry.getTasks({ statuses: ['nope'] }))).code).toBe('invalid_task_statuses');
    const deletion = await quarry.deleteTasks({ statuses: ['failed'] }).waitTask();
    expect(deletion.status).toBe('succeeded');
    expect((await quarry.getTasks({ statuses: ['failed'] })).total).toBe(0);
  });

  it('when a long write runs, then its progress is reported until it ends', async () => {
    const docs = Array.from({ length: 20000 }, (_, i) => ({
      id: i,
      text: `word${i % 97} other${i % 13} thing number ${i}`,
    }));
    const seen: string[] = [];
    const task = await quarry
      .index('big')
      .addDocuments(docs)
      .waitTask({ onProgress: (p) => seen.push(p.task.status + (p.progress ? `:${p.progress.percentage}` : '')) });
    expect(task.status).toBe('succeeded');
    expect(seen[0]).toBe('enqueued');
    expect(seen.some((s) => s.startsWith('processing:'))).toBe(true);
    expect(seen[seen.length - 1]).toBe('succeeded');
    const events = [];
    for await (const p of quarry.watchTask(task.uid)) events.push(p.task.status);
    expect(events).toEqual(['succeeded']);
  });
});

/** A search answer without what differs between two runs of the same search. */
function withoutTimes(answer: object): object {
  const { processingTimeMs: _t, requestUid: _r, ...rest } = answer as Record<string, unknown>;
  return rest;
}

describe('given a data directory', () => {
  it('when it is closed and reopened, then everything written is there', async () => {
    const dir = tmp();
    const q = await Quarry.open(dir);
    await q.index('m').addDocuments(MOVIES).waitTask();
    await q.close();
    const again = await Quarry.open({ dbPath: dir });
    expect((await again.index('m').search('fury')).hits.map((h) => h.id)).toEqual([4]);
    expect((await again.getTasks()).total).toBe(1);
    await again.close();
  });

  it('when it is open, then a second open is refused until it is closed', async () => {
    const dir = tmp();
    const q = await Quarry.open(dir);
    await expect(Quarry.open(dir)).rejects.toThrow(/is in use by this process/);
    await q.close();
    await expect(q.index('m').addDocuments([])).rejects.toThrow(/closed/);
    const again = await Quarry.open(dir);
    await again.close();
  });

  it('when none is given, then the index lives in a temporary directory that close() deletes', async () => {
    const q = await Quarry.open({ logLevel: 'error' });
    const other = await Quarry.open();
    expect(q.dbPath.startsWith(fs.realpathSync(os.tmpdir())) || q.dbPath.startsWith(os.tmpdir())).toBe(true);
    expect(other.dbPath).not.toBe(q.dbPath);
    await q.index('m').addDocuments(MOVIES).waitTask();
    expect(
      q
        .index('m')
        .searchSync('carol')
        .hits.map((h) => h.id),
    ).toEqual([1]);
    expect(fs.existsSync(q.dbPath)).toBe(true);
    await q.close();
    expect(fs.existsSync(q.dbPath)).toBe(false);
    expect(fs.existsSync(other.dbPath)).toBe(true);
    await other.close();
    expect(fs.existsSync(other.dbPath)).toBe(false);
  });

  it('when a process exits without closing its temporary Quarry, then the directory is deleted all the same', () => {
    const { execFileSync } = require('node:child_process') as typeof import('node:child_process');
    const script = `
      const { Quarry } = require('./dist/index.js');
      Quarry.open({ logLevel: 'error' }).then(async (q) => {
        await q.index('m').addDocuments([{ id: 1, t: 'kept until exit' }]).waitTask();
        console.log(q.dbPath);
        process.exit(0);
      });`;
    const dir = execFileSync(process.execPath, ['-e', script], {
      cwd: path.join(__dirname, '../..'),
      encoding: 'utf8',
    }).trim();
    expect(dir).toMatch(/quarry-/);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('when tasks are enqueued and the library is closed before they run, then they run at the next open', async () => {
    const dir = tmp();
    const q = await Quarry.open(dir);
    const uids: number[] = [];
    for (let i = 0; i < 5; i++) uids.push((await q.index('m').addDocuments([{ id: i, n: `doc ${i}` }])).taskUid);
    await q.close();
    const again = await Quarry.open(dir);
    const last = await again.waitForTask(uids[uids.length - 1]!);
    expect(last.status).toBe('succeeded');
    for (const uid of uids) expect((await again.getTask(uid)).status).toBe('succeeded');
    expect((await again.index('m').getStats()).numberOfDocuments).toBe(5);
    await again.close();
  });
});

describe('given worker threads', () => {
  it('when two workers each open a Quarry beside the main thread, then each indexes and searches its own', async () => {
    const { Worker } = require('node:worker_threads') as typeof import('node:worker_threads');
    const entry = path.join(__dirname, '../../dist/index.js');
    const source = `
      const { parentPort, workerData } = require('node:worker_threads');
      const { Quarry } = require(${JSON.stringify(entry)});
      (async () => {
        const q = await Quarry.open({ logLevel: 'error' });
        const idx = q.index('w');
        const task = await idx.addDocuments([{ id: 1, t: workerData.word }, { id: 2, t: 'other' }]).waitTask();
        const hits = idx.searchSync(workerData.word).hits.map((h) => h.id);
        const asyncHits = (await idx.search(workerData.word.slice(0, -1))).hits.map((h) => h.id);
        const dir = q.dbPath;
        await q.close();
        parentPort.postMessage({ status: task.status, hits, asyncHits, dir });
      })().catch((e) => parentPort.postMessage({ error: String(e && e.stack || e) }));`;
    const run = (word: string) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const w = new Worker(source, { eval: true, workerData: { word } });
        w.once('message', (m) => {
          resolve(m as Record<string, unknown>);
          void w.terminate();
        });
        w.once('error', reject);
      });
    const main = await Quarry.open();
    await main.index('m').addDocuments(MOVIES).waitTask();
    const [a, b] = await Promise.all([run('albatross'), run('zeppelin')]);
    expect(a).toMatchObject({ status: 'succeeded', hits: [1], asyncHits: [1] });
    expect(b).toMatchObject({ status: 'succeeded', hits: [1], asyncHits: [1] });
    expect(fs.existsSync(a.dir as string)).toBe(false);
    expect(
      main
        .index('m')
        .searchSync('wonder')
        .hits.map((h) => h.id),
    ).toEqual([2]);
    await main.close();
  });
});

describe('given the built package', () => {
  it('when the platform has no prebuilt engine, then loading says so and how to build one', () => {
    const { spawnSync } = require('node:child_process') as typeof import('node:child_process');
    const script = "Object.defineProperty(process, 'platform', { value: 'freebsd' }); require('./dist/index.js');";
    const r = spawnSync(process.execPath, ['-e', script], { cwd: path.join(__dirname, '../..'), encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(
      `quarry-search has no prebuilt engine for freebsd-${process.arch} (prebuilt: linux-x64-gnu, linux-arm64-gnu, linux-x64-musl, darwin-arm64, darwin-x64, win32-x64-msvc)`,
    );
    expect(r.stderr).toContain('`npm ci` builds the engine for this machine');
  });

  it('when the library is loaded, then Express is not (the library has no HTTP layer)', () => {
    const { execFileSync } = require('node:child_process') as typeof import('node:child_process');
    const script =
      "require('./dist/library/quarry.js'); console.log(Object.keys(require.cache).filter((k) => k.includes('/node_modules/express/')).length)";
    const out = execFileSync(process.execPath, ['-e', script], {
      cwd: path.join(__dirname, '../..'),
      encoding: 'utf8',
    });
    expect(out.trim()).toBe('0');
    // The check can fail: the server entry does load Express.
    const server = execFileSync(process.execPath, ['-e', script.replace('library/quarry.js', 'server.js')], {
      cwd: path.join(__dirname, '../..'),
      encoding: 'utf8',
    });
    expect(Number(server.trim())).toBeGreaterThan(0);
  });
});
