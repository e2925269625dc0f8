/**
 * Dumps and snapshots over HTTP and at start-up, on real data directories: a dump made by
 * Meilisearch 1.50 (fixture, made by `__tests__/fixtures/make-meili-dump.sh`) imported and
 * searched; a Quarry dump imported by Quarry (and, when a reference Meilisearch binary is at
 * hand in $MEILI_BIN, by Meilisearch); damaged and hostile archives refused with nothing
 * left behind; a snapshot taken while documents are indexed, restored.
 */
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { loadConfig } from '../../ts/config';
import { startTestServer, tempDir, type TestServer } from '../helpers/server';

jest.setTimeout(120_000);

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'meili-1.50.dump');
const MEILI_KEY = 'masterKey';

async function waitIdle(s: TestServer): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    const r = await s.api('GET', '/tasks?statuses=enqueued,processing&limit=1');
    if (r.body.total === 0) return;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error('tasks did not finish');
}

async function allTasks(s: TestServer): Promise<any[]> {
  return (await s.api('GET', '/tasks?limit=1000')).body.results;
}

/** A gzipped tar of the given entries (`type` defaults to a file). */
async function makeArchive(
  file: string,
  entries: Array<{ name: string; content?: string; type?: 'file' | 'symlink' | 'directory'; linkname?: string }>,
): Promise<void> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const gz = pack.pipe(zlib.createGzip());
  gz.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise((res) => gz.on('end', res));
  for (const e of entries) {
    if (e.type === 'symlink' || e.type === 'directory')
      pack.entry({ name: e.name, type: e.type, linkname: e.linkname });
    else pack.entry({ name: e.name }, e.content ?? '');
  }
  pack.finalize();
  await done;
  fs.writeFileSync(file, Buffer.concat(chunks));
}

const V6 = JSON.stringify({ dumpVersion: 'V6', dbVersion: '1.50.0', dumpDate: '2026-11-25T00:00:00Z' });

describe('a dump made by Meilisearch 1.50', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ masterKey: MEILI_KEY, args: ['--import-dump', FIXTURE] });
    await waitIdle(s);
  });
  afterAll(() => s.close());

  test('brings its indexes, documents and settings', async () => {
    const indexes = (await s.api('GET', '/indexes')).body.results;
    expect(indexes.map((i: any) => [i.uid, i.primaryKey])).toEqual([
      ['filler', null],
      ['movies', 'id'],
      ['products', 'product_id'],
    ]);
    const wonder = await s.api('POST', '/indexes/movies/search', { body: { q: 'wonder' } });
    expect(wonder.body.hits).toEqual([
      { id: 2, title: 'Wonder Woman', genres: ['Action', 'Adventure'], year: 2017, subtitle: '1984' },
    ]);
    const drama = await s.api('POST', '/indexes/movies/search', {
      body: { filter: 'genres = Drama', sort: ['year:desc'] },
    });
    // Task 20 was still enqueued in the dump: it ran here and added "Late Arrival".
    expect(drama.body.hits.map((h: any) => h.id)).toEqual([8, 1, 3]);
    const unicode = await s.api('POST', '/indexes/movies/search', { body: { q: 'foret' } });
    expect(unicode.body.hits[0]).toEqual({
      id: 'x-7',
      title: 'Élodie et la forêt',
      nested: { a: { b: null, c: [1, 2] } },
      year: 2020,
    });
    const settings = (await s.api('GET', '/indexes/movies/settings')).body;
    expect(settings.rankingRules).toEqual([
      'words',
      'typo',
      'sort',
      'proximity',
      'attribute',
      'exactness',
      'year:desc',
    ]);
    expect(settings.synonyms).toEqual({ film: ['movie'] });
    expect(settings.stopWords).toEqual(['of', 'the']);
    expect(settings.typoTolerance.minWordSizeForTypos).toEqual({ oneTypo: 4, twoTypos: 8 });
    expect(settings.pagination).toEqual({ maxTotalHits: 500 });
    expect((await s.api('GET', '/indexes/products/documents')).body.results.map((d: any) => d.name)).toEqual([
      'Lamp',
      'Chair',
    ]);
    // Task 21 (enqueued in the dump) ran too.
    expect((await s.api('GET', '/indexes/products/settings/searchable-attributes')).body).toEqual(['name']);
    expect((await s.api('GET', '/experimental-features')).body).toMatchObject({
      containsFilter: true,
      dynamicSearchRules: true,
    });
  });

  test('brings its dynamic search rules, which pin as they did', async () => {
    const rules = (await s.api('POST', '/dynamic-search-rules', { body: {} })).body;
    expect(rules.results.map((r: any) => r.uid)).toEqual(['pin-carol']);
    expect(rules.results[0]).toMatchObject({
      description: 'Carol first for drama',
      precedence: 1,
      conditions: { query: { words: 'drama' } },
    });
    const hits = (await s.api('POST', '/indexes/movies/search', { body: { q: 'drama' } })).body.hits;
    expect(hits[0].id).toBe(1);
  });

  test('brings its keys, which keep their values under the same master key', async () => {
    const uid = '11111111-2222-4333-8444-555555555555';
    const key = (await s.api('GET', `/keys/${uid}`)).body;
    expect(key).toMatchObject({
      name: 'movies search',
      actions: ['search', 'documents.get'],
      indexes: ['movies'],
      expiresAt: '2099-01-01T00:00:00.123456Z',
    });
    const value = createHmac('sha256', MEILI_KEY).update(uid).digest('hex');
    expect(key.key).toBe(value);
    expect((await s.api('POST', '/indexes/movies/search', { body: { q: 'carol' }, key: value })).status).toBe(200);
    expect((await s.api('POST', '/indexes/products/search', { body: { q: 'lamp' }, key: value })).status).toBe(403);
    const names = (await s.api('GET', '/keys?limit=100')).body.results.map((k: any) => k.name);
    expect(names).toEqual(expect.arrayContaining(['Default Search API Key', 'Default Admin API Key', 'movies search']));
  });

  test('brings its task history, and new tasks follow it', async () => {
    const tasks = await allTasks(s);
    const byUid = new Map(tasks.map((t) => [t.uid, t]));
    expect(byUid.has(4)).toBe(false); // deleted before the dump
    expect(byUid.get(1)).toMatchObject({
      type: 'documentAdditionOrUpdate',
      status: 'succeeded',
      customMetadata: 'first-load',
      details: { receivedDocuments: 7, indexedDocuments: 7 },
    });
    expect(byUid.get(5)).toMatchObject({ status: 'failed', error: { code: 'missing_document_id' } });
    expect(byUid.get(9)).toMatchObject({
      type: 'documentDeletion',
      details: { deletedDocuments: 1, originalFilter: '"name = Desk"' },
    });
    expect(byUid.get(10)).toMatchObject({
      type: 'indexUpdate',
      details: { oldIndexUid: 'staging', newIndexUid: 'products' },
    });
    expect(byUid.get(17)).toMatchObject({
      type: 'taskCancelation',
      details: { matchedTasks: 3, canceledTasks: 0, originalFilter: '?uids=0,1,2' },
    });
    expect(byUid.get(18)).toMatchObject({
      type: 'taskDeletion',
      details: { matchedTasks: 1, deletedTasks: 1, originalFilter: '?uids=4' },
    });
    expect(byUid.get(20)).toMatchObject({
      type: 'documentAdditionOrUpdate',
      status: 'succeeded',
      customMetadata: 'late',
      details: { indexedDocuments: 1 },
    });
    expect(byUid.get(22)).toMatchObject({ type: 'dumpCreation', status: 'succeeded' });
    expect(byUid.get(14)).toMatchObject({
      type: 'dsrUpdate',
      indexUid: '.meili_dsr',
      details: { rule: { description: 'Carol first for drama' }, updatedRules: 1 },
    });
    expect(byUid.get(16)).toMatchObject({ type: 'dsrUpdate', details: { updatedRules: 1 } });
    const next = await s.api('POST', '/indexes', { body: { uid: 'after' } });
    expect(next.body.taskUid).toBe(23);
  });
});

describe('a Quarry dump', () => {
  test('imports into a new server that answers as the first did', async () => {
    const dumpDir = tempDir();
    const a = await startTestServer({ args: ['--dump-dir', dumpDir] });
    const b = { server: null as TestServer | null };
    try {
      const docs = Array.from({ length: 2500 }, (_, i) => ({
        id: i,
        title: `book ${i} ${['red', 'blue', 'green'][i % 3]} river`,
        year: 1900 + (i % 120),
        tags: [`t${i % 7}`],
      }));
      await a.api('POST', '/indexes/books/documents', { body: docs });
      await a.api('PATCH', '/indexes/books/settings', {
        body: { filterableAttributes: ['year', 'tags'], sortableAttributes: ['year'], synonyms: { stream: ['river'] } },
      });
      await a.api('POST', '/indexes/empty', {});
      await a.api('POST', '/indexes', { body: { uid: 'empty', primaryKey: 'sku' } });
      const key = (await a.api('POST', '/keys', { body: { actions: ['search'], indexes: ['books'], expiresAt: null } }))
        .body;
      await a.api('DELETE', '/indexes/books/documents/7');
      await a.api('PATCH', '/experimental-features', { body: { dynamicSearchRules: true } });
      await a.api('PATCH', '/dynamic-search-rules/promo', {
        body: {
          precedence: 3,
          conditions: { query: { words: 'river' } },
          actions: [{ selector: { indexUid: 'books', id: '42' }, action: { type: 'pin', position: 0 } }],
        },
      });
      await a.api('DELETE', '/dynamic-search-rules/old');
      const hook = (
        await a.api('POST', '/webhooks', {
          body: { url: 'http://127.0.0.1:9/nowhere', headers: { Authorization: 'Bearer 0123456789abcdef' } },
        })
      ).body;
      await waitIdle(a);
      const dump = await a.api('POST', '/dumps');
      expect(dump.status).toBe(202);
      const done = await a.waitTask(dump.body.taskUid);
      expect(done).toMatchObject({ status: 'succeeded', type: 'dumpCreation', indexUid: null });
      expect(done.details.dumpUid).toMatch(/^\d{8}-\d{9}$/);
      const file = path.join(dumpDir, `${done.details.dumpUid}.dump`);
      expect(fs.existsSync(file)).toBe(true);

      b.server = await startTestServer({ args: ['--import-dump', file] });
      const s = b.server;
      expect((await s.api('GET', '/webhooks')).body.results).toEqual([hook]);
      // The instance keeps its uid across the move.
      expect(fs.readFileSync(path.join(s.dbPath, 'instance-uid'), 'utf8')).toBe(
        fs.readFileSync(path.join(a.dbPath, 'instance-uid'), 'utf8').trim(),
      );
      expect((await s.api('GET', '/dynamic-search-rules/promo')).body).toEqual(
        (await a.api('GET', '/dynamic-search-rules/promo')).body,
      );
      const queries = [
        { q: 'blue river' },
        { q: 'stream', limit: 5 },
        { q: 'book 12', filter: 'year > 1950', sort: ['year:asc'] },
        { filter: 'tags = t3', limit: 3 },
        { q: 'grean', offset: 10 },
      ];
      for (const q of queries) {
        const [x, y] = [
          await a.api('POST', '/indexes/books/search', { body: q }),
          await s.api('POST', '/indexes/books/search', { body: q }),
        ];
        expect(y.body.hits).toEqual(x.body.hits);
        expect(y.body.estimatedTotalHits).toBe(x.body.estimatedTotalHits);
      }
      expect((await s.api('GET', '/indexes/books/settings')).body).toEqual(
        (await a.api('GET', '/indexes/books/settings')).body,
      );
      expect((await s.api('GET', '/indexes/books/stats')).body.numberOfDocuments).toBe(2499);
      expect((await s.api('GET', '/indexes/empty')).body.primaryKey).toBe('sku');
      expect((await s.api('GET', `/keys/${key.uid}`)).body.key).toBe(key.key);
      const strip = (t: any) => ({
        uid: t.uid,
        type: t.type,
        status: t.status,
        indexUid: t.indexUid,
        details: t.details,
        error: t.error,
      });
      const before = (await allTasks(a)).filter((t) => t.uid !== done.uid).map(strip);
      const after = (await allTasks(s)).filter((t) => t.uid !== done.uid).map(strip);
      expect(after).toEqual(before);
      const next = await s.api('POST', '/indexes/books/documents', { body: [{ id: 99999, title: 'after the move' }] });
      expect(next.body.taskUid).toBe(done.uid + 1);
      expect((await s.waitTask(next.body.taskUid)).status).toBe('succeeded');
    } finally {
      await a.close();
      await b.server?.close();
    }
  });

  const meili = process.env.MEILI_BIN;
  (meili ? test : test.skip)('imports into Meilisearch 1.50 (run under with-meilisearch.sh)', async () => {
    const dumpDir = tempDir();
    const a = await startTestServer({ masterKey: MEILI_KEY, args: ['--dump-dir', dumpDir] });
    let dumpFile: string;
    try {
      await a.api('POST', '/indexes/books/documents', {
        body: [
          { id: 1, title: 'Le Petit Prince' },
          { id: 2, title: 'Dune' },
        ],
      });
      await a.api('PUT', '/indexes/books/settings/filterable-attributes', { body: ['title'] });
      await a.api('PATCH', '/experimental-features', { body: { dynamicSearchRules: true } });
      await a.api('PATCH', '/dynamic-search-rules/prince', {
        body: {
          conditions: { query: { words: 'dune' } },
          actions: [{ selector: { id: '1' }, action: { type: 'pin', position: 0 } }],
        },
      });
      await waitIdle(a);
      const done = await a.waitTask((await a.api('POST', '/dumps')).body.taskUid);
      dumpFile = path.join(dumpDir, `${done.details.dumpUid}.dump`);
    } finally {
      await a.close();
    }
    const db = tempDir();
    const port = 7790 + (process.pid % 100);
    const child = spawn(
      meili!,
      [
        '--db-path',
        path.join(db, 'data.ms'),
        '--http-addr',
        `127.0.0.1:${port}`,
        '--master-key',
        MEILI_KEY,
        '--no-analytics',
        '--import-dump',
        dumpFile,
      ],
      { stdio: 'ignore' },
    );
    try {
      const url = `http://127.0.0.1:${port}`;
      let hits: any = null;
      for (let i = 0; i < 200 && hits === null; i++) {
        await new Promise((r) => setTimeout(r, 100));
        try {
          const r = await fetch(`${url}/indexes/books/search`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${MEILI_KEY}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ q: 'dune' }),
          });
          if (r.status === 200) hits = ((await r.json()) as { hits: unknown }).hits;
        } catch {
          // not listening yet
        }
      }
      expect(hits).toEqual([
        { id: 1, title: 'Le Petit Prince' },
        { id: 2, title: 'Dune' },
      ]);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('importing is refused, leaving nothing behind,', () => {
  const parentOf = (db: string) => fs.readdirSync(path.dirname(db));

  test('when the dump is missing, unless told to ignore it', async () => {
    const db = path.join(tempDir(), 'data.ms');
    await expect(startTestServer({ dbPath: db, args: ['--import-dump', '/nonexistent/x.dump'] })).rejects.toThrow(
      'dump doesn\'t exist at "/nonexistent/x.dump"',
    );
    expect(fs.existsSync(db)).toBe(false);
    const s = await startTestServer({
      dbPath: db,
      args: ['--import-dump', '/nonexistent/x.dump', '--ignore-missing-dump'],
    });
    expect((await s.api('GET', '/indexes')).body.total).toBe(0);
    await s.close();
  });

  test('when a database exists, unless told to keep it', async () => {
    const first = await startTestServer();
    await first.waitTask((await first.api('POST', '/indexes', { body: { uid: 'kept' } })).body.taskUid);
    await first.close();
    await expect(startTestServer({ dbPath: first.dbPath, args: ['--import-dump', FIXTURE] })).rejects.toThrow(
      `database already exists at "${first.dbPath}", try to delete it or rename it`,
    );
    const s = await startTestServer({
      dbPath: first.dbPath,
      args: ['--import-dump', FIXTURE, '--ignore-dump-if-db-exists'],
    });
    expect((await s.api('GET', '/indexes')).body.results.map((i: any) => i.uid)).toEqual(['kept']);
    await s.close();
  });

  test('when the dump is truncated or not an archive', async () => {
    const dir = tempDir();
    const truncated = path.join(dir, 'truncated.dump');
    fs.writeFileSync(truncated, fs.readFileSync(FIXTURE).subarray(0, 3000));
    const db = path.join(dir, 'data.ms');
    await expect(startTestServer({ dbPath: db, args: ['--import-dump', truncated] })).rejects.toThrow(
      /could not be (read|imported)/,
    );
    expect(fs.existsSync(db)).toBe(false);
    const garbage = path.join(dir, 'garbage.dump');
    fs.writeFileSync(garbage, 'not a dump at all');
    await expect(startTestServer({ dbPath: db, args: ['--import-dump', garbage] })).rejects.toThrow(
      /could not be (read|imported)/,
    );
    expect(fs.existsSync(db)).toBe(false);
    expect(parentOf(db).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  test('when an entry would be written outside the database directory', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'nested', 'data.ms');
    const evil = path.join(dir, 'evil.dump');
    await makeArchive(evil, [
      { name: 'metadata.json', content: V6 },
      { name: '../../../escaped.txt', content: 'pwned' },
    ]);
    await expect(startTestServer({ dbPath: db, args: ['--import-dump', evil] })).rejects.toThrow(
      'points outside the directory',
    );
    expect(fs.existsSync(path.join(dir, 'escaped.txt'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'nested', 'escaped.txt'))).toBe(false);
    expect(fs.existsSync(db)).toBe(false);
    const link = path.join(dir, 'link.dump');
    await makeArchive(link, [
      { name: 'metadata.json', content: V6 },
      { name: 'keys.jsonl', type: 'symlink', linkname: '/etc/passwd' },
    ]);
    await expect(startTestServer({ dbPath: db, args: ['--import-dump', link] })).rejects.toThrow(
      'is a symlink, not a file or a directory',
    );
    expect(fs.existsSync(db)).toBe(false);
  });

  test('when the dump is of another version or its records are damaged', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'data.ms');
    const v5 = path.join(dir, 'v5.dump');
    await makeArchive(v5, [{ name: 'metadata.json', content: JSON.stringify({ dumpVersion: 'V5' }) }]);
    await expect(startTestServer({ dbPath: db, args: ['--import-dump', v5] })).rejects.toThrow(
      'dump version `V5` is not supported',
    );
    const bad = path.join(dir, 'bad.dump');
    await makeArchive(bad, [
      { name: 'metadata.json', content: V6 },
      { name: 'tasks/queue.jsonl', content: '{"uid":0,"status":"succeeded"\n' },
    ]);
    await expect(startTestServer({ dbPath: db, args: ['--import-dump', bad] })).rejects.toThrow(
      'line 1 of `queue.jsonl` is not valid JSON',
    );
    expect(fs.existsSync(db)).toBe(false);
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  test('when options contradict each other', () => {
    expect(() => loadConfig(['--ignore-missing-dump'], {})).toThrow('--ignore-missing-dump requires --import-dump');
    expect(() => loadConfig(['--ignore-snapshot-if-db-exists'], {})).toThrow(
      '--ignore-snapshot-if-db-exists requires --import-snapshot',
    );
    expect(() => loadConfig(['--import-dump', 'a.dump', '--import-snapshot', 'b.snapshot'], {})).toThrow(
      '--import-dump cannot be used with --import-snapshot',
    );
    expect(loadConfig(['--schedule-snapshot'], {}).scheduleSnapshotSeconds).toBe(86_400);
    expect(loadConfig(['--schedule-snapshot', '3600'], {}).scheduleSnapshotSeconds).toBe(3600);
    expect(loadConfig([], { MEILI_SCHEDULE_SNAPSHOT: '60', MEILI_DUMP_DIR: '/d' })).toMatchObject({
      scheduleSnapshotSeconds: 60,
      dumpDir: '/d',
    });
  });
});

describe('snapshots', () => {
  test('taken while documents are indexed, restore a server that goes on from that task', async () => {
    const snapDir = tempDir();
    const a = await startTestServer({ args: ['--snapshot-dir', snapDir] });
    let b: TestServer | null = null;
    try {
      const big = Array.from({ length: 20000 }, (_, i) => ({
        id: i,
        text: `alpha ${i % 97} beta ${i % 13}`,
        n: i % 50,
      }));
      const first = await a.api('POST', '/indexes/logs/documents', { body: big });
      const snap = await a.api('POST', '/snapshots');
      expect(snap.status).toBe(202);
      expect(snap.body).toMatchObject({ type: 'snapshotCreation', indexUid: null, status: 'enqueued' });
      const later = await a.api('POST', '/indexes/logs/documents', { body: [{ id: 'late', text: 'gamma' }] });
      const settled = await a.waitTask(snap.body.taskUid);
      expect(settled.status).toBe('succeeded');
      expect(settled.details).toBeUndefined();
      await waitIdle(a);
      const file = path.join(snapDir, `${path.basename(a.dbPath)}.snapshot`);
      expect(fs.existsSync(file)).toBe(true);

      const db = path.join(tempDir(), 'restored.ms');
      b = await startTestServer({ dbPath: db, args: ['--import-snapshot', file] });
      await waitIdle(b);
      // Every task the original had when the snapshot was taken: done there, or run here.
      const strip = (t: any) => ({ uid: t.uid, type: t.type, status: t.status, details: t.details });
      expect((await allTasks(b)).map(strip)).toEqual((await allTasks(a)).map(strip));
      expect((await b.api('GET', `/tasks/${first.body.taskUid}`)).body.status).toBe('succeeded');
      expect((await b.api('GET', `/tasks/${later.body.taskUid}`)).body.status).toBe('succeeded');
      for (const q of [{ q: 'alpha 42' }, { q: 'gamma' }, { q: 'beta', filter: 'n = 3', limit: 5 }]) {
        if (q.filter) {
          await a.waitTask(
            (await a.api('PUT', '/indexes/logs/settings/filterable-attributes', { body: ['n'] })).body.taskUid,
          );
          await b.waitTask(
            (await b.api('PUT', '/indexes/logs/settings/filterable-attributes', { body: ['n'] })).body.taskUid,
          );
        }
        const [x, y] = [
          await a.api('POST', '/indexes/logs/search', { body: q }),
          await b.api('POST', '/indexes/logs/search', { body: q }),
        ];
        expect(y.body.hits).toEqual(x.body.hits);
        expect(y.body.estimatedTotalHits).toBe(x.body.estimatedTotalHits);
      }
      expect((await b.api('GET', '/indexes/logs/stats')).body.numberOfDocuments).toBe(20001);
    } finally {
      await a.close();
      await b?.close();
    }
  });

  test('are taken on a schedule', async () => {
    const snapDir = tempDir();
    const s = await startTestServer({ args: ['--snapshot-dir', snapDir, '--schedule-snapshot', '1'] });
    try {
      let tasks: any[] = [];
      for (let i = 0; i < 300 && !tasks.some((t) => t.status === 'succeeded'); i++) {
        await new Promise((r) => setTimeout(r, 50));
        tasks = (await s.api('GET', '/tasks?types=snapshotCreation')).body.results;
      }
      expect(tasks.some((t) => t.status === 'succeeded')).toBe(true);
      expect(fs.existsSync(path.join(snapDir, `${path.basename(s.dbPath)}.snapshot`))).toBe(true);
    } finally {
      await s.close();
    }
  });

  test('are refused over an existing database and when missing', async () => {
    const s = await startTestServer();
    await s.close();
    await expect(startTestServer({ dbPath: s.dbPath, args: ['--import-snapshot', FIXTURE] })).rejects.toThrow(
      'database already exists',
    );
    const db = path.join(tempDir(), 'data.ms');
    await expect(startTestServer({ dbPath: db, args: ['--import-snapshot', '/nonexistent.snapshot'] })).rejects.toThrow(
      "snapshot doesn't exist at /nonexistent.snapshot",
    );
    const fresh = await startTestServer({
      dbPath: db,
      args: ['--import-snapshot', '/nonexistent.snapshot', '--ignore-missing-snapshot'],
    });
    await fresh.close();
    // A dump is not a snapshot.
    const other = path.join(tempDir(), 'data.ms');
    await expect(startTestServer({ dbPath: other, args: ['--import-snapshot', FIXTURE] })).rejects.toThrow(
      'is not a Quarry snapshot',
    );
    expect(fs.existsSync(other)).toBe(false);
  });
});

describe('the routes', () => {
  test('need the dumps and snapshots actions', async () => {
    const s = await startTestServer({ args: ['--dump-dir', tempDir(), '--snapshot-dir', tempDir()] });
    try {
      const key = (await s.api('POST', '/keys', { body: { actions: ['search'], indexes: ['*'], expiresAt: null } }))
        .body.key;
      expect((await s.api('POST', '/dumps', { key })).status).toBe(403);
      expect((await s.api('POST', '/snapshots', { key })).status).toBe(403);
      expect((await s.api('POST', '/dumps', { key: null })).status).toBe(401);
      const dumper = (
        await s.api('POST', '/keys', { body: { actions: ['dumps.create'], indexes: ['*'], expiresAt: null } })
      ).body.key;
      expect((await s.api('POST', '/dumps', { key: dumper })).status).toBe(202);
    } finally {
      await s.close();
    }
  });
});
