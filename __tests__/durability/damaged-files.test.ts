/**
 * Damaged files in a copy of a real data directory: a tantivy segment cut short, overwritten
 * or missing, and its meta file missing, are found when the index opens and the inverted
 * index is rebuilt from the documents (and the log says so), answering as before; a damaged
 * or missing LMDB store stops the start with the file and the way out, and
 * `--drop-damaged-indexes` starts without that index; a damaged task store stops the start;
 * a staged payload cut short fails its task instead of indexing part of it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { call, CHILD_KEY, finishedTask } from '../helpers/child';
import { tempDir } from '../helpers/server';

const BIN = path.join(__dirname, '../../bin/quarry.js');

interface Run {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** Starts the server on `dbPath`, keeping what it prints; rejects with its output if it exits first. */
function start(dbPath: string, args: string[] = []): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        BIN,
        '--db-path',
        dbPath,
        '--http-addr',
        '127.0.0.1:0',
        '--master-key',
        CHILD_KEY,
        '--log-level',
        'warn',
        '--no-analytics',
        ...args,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    const collect = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) resolve({ child, url: m[1], output: () => out });
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    child.once('exit', (code) => reject(Object.assign(new Error(`exited with ${code}`), { code, output: out })));
  });
}

/** Starts the server expecting it to refuse: its exit code and what it printed. */
async function refused(dbPath: string, args: string[] = []): Promise<{ code: number; output: string }> {
  try {
    const run = await start(dbPath, args);
    await stop(run);
    throw new Error(`the server started on ${dbPath}:\n${run.output()}`);
  } catch (err) {
    const e = err as { code?: number; output?: string };
    if (e.output === undefined) throw err;
    return { code: e.code!, output: e.output };
  }
}

async function stop(run: Run): Promise<void> {
  if (run.child.exitCode !== null) return;
  const exited = new Promise((res) => run.child.once('exit', res));
  run.child.kill('SIGTERM');
  await exited;
}

const WORDS = [
  'harbor',
  'lantern',
  'granite',
  'meadow',
  'copper',
  'willow',
  'thunder',
  'saffron',
  'glacier',
  'orchard',
  'falcon',
  'velvet',
  'ember',
  'canyon',
  'juniper',
  'quartz',
];
const docs = Array.from({ length: 6000 }, (_, i) => ({
  id: i,
  title: `${WORDS[i % 16]} ${WORDS[(i * 7) % 16]} ${WORDS[(i * 11 + 3) % 16]} number ${i}`,
  body: `the ${WORDS[(i * 5) % 16]} of the ${WORDS[(i * 3 + 1) % 16]} near ${WORDS[(i * 13) % 16]}`,
  year: 1900 + (i % 120),
}));
const QUERIES = [
  { q: 'lantern granite' },
  { q: 'glaicer', limit: 50 },
  { q: 'copper', filter: 'year > 2000', sort: ['year:desc'] },
  { q: '"the ember"', facets: ['year'] },
  { q: 'number 4321' },
];

describe('damaged files', () => {
  let pristine: string;
  let indexDir: string;
  const answers: unknown[] = [];

  /** What the queries answer, without the timings. */
  async function answer(url: string): Promise<unknown[]> {
    const out = [];
    for (const body of QUERIES) {
      const r = await call(url, 'POST', '/indexes/books/search', body);
      expect(r.status).toBe(200);
      const { processingTimeMs, requestUid, ...rest } = r.body;
      out.push(rest);
    }
    return out;
  }

  /** A copy of the pristine data directory, damaged by `damage(copy)`. */
  function damagedCopy(damage: (db: string, index: string) => void): string {
    const db = tempDir('quarry-damaged-');
    fs.cpSync(pristine, db, { recursive: true });
    fs.rmSync(path.join(db, 'quarry.lock'), { force: true });
    damage(db, path.join(db, 'indexes', indexDir));
    return db;
  }

  /** The segment files of the index's tantivy directory with `ext`, largest first. */
  function segmentFiles(index: string, ext: string): string[] {
    const dir = path.join(index, 'tantivy');
    return fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(ext))
      .map((f) => path.join(dir, f))
      .sort((a, b) => fs.statSync(b).size - fs.statSync(a).size);
  }

  beforeAll(async () => {
    pristine = tempDir('quarry-pristine-');
    const run = await start(pristine);
    try {
      let r = await call(run.url, 'PATCH', '/indexes/books/settings', {
        filterableAttributes: ['year'],
        sortableAttributes: ['year'],
      });
      await finishedTask(run.url, r.body.taskUid);
      r = await call(run.url, 'POST', '/indexes/books/documents', docs);
      expect((await finishedTask(run.url, r.body.taskUid)).status).toBe('succeeded');
      r = await call(run.url, 'POST', '/indexes/other/documents', [{ id: 1, title: 'still here' }]);
      expect((await finishedTask(run.url, r.body.taskUid)).status).toBe('succeeded');
      answers.push(...(await answer(run.url)));
    } finally {
      await stop(run);
    }
    const registry = fs.readdirSync(path.join(pristine, 'indexes'));
    // The index with the most tantivy bytes is `books`.
    indexDir = registry.sort(
      (a, b) => dirBytes(path.join(pristine, 'indexes', b)) - dirBytes(path.join(pristine, 'indexes', a)),
    )[0];
  }, 120000);

  const tantivyCases: [string, (db: string, index: string) => void, RegExp][] = [
    [
      'a segment file cut short',
      (_db, index) => {
        const f = segmentFiles(index, '.idx')[0];
        fs.truncateSync(f, Math.floor(fs.statSync(f).size / 2));
      },
      /\.idx/,
    ],
    [
      'a segment file overwritten in its middle',
      (_db, index) => {
        const f = segmentFiles(index, '.pos')[0];
        const fd = fs.openSync(f, 'r+');
        fs.writeSync(fd, Buffer.alloc(64, 0xa5), 0, 64, Math.floor(fs.statSync(f).size / 2));
        fs.closeSync(fd);
      },
      /\.pos` does not match its checksum/,
    ],
    ['a segment file missing', (_db, index) => fs.rmSync(segmentFiles(index, '.term')[0]), /\.term` is missing|\.term/],
    [
      'the meta file missing',
      (_db, index) => fs.rmSync(path.join(index, 'tantivy', 'meta.json')),
      /meta\.json` is missing/,
    ],
  ];

  it.each(tantivyCases)(
    'when %s, then the inverted index is rebuilt from the documents, the log says so, and searches answer as before',
    async (_name, damage, reason) => {
      const db = damagedCopy(damage);
      const run = await start(db);
      try {
        const log = run.output();
        expect(log).toContain('the inverted index was damaged and has been rebuilt from the documents');
        expect(log).toMatch(reason);
        expect(await answer(run.url)).toEqual(answers);
        const r = await call(run.url, 'GET', '/indexes/books/stats');
        expect(r.body.numberOfDocuments).toBe(docs.length);
        // The rebuilt index takes writes.
        const t = await call(run.url, 'POST', '/indexes/books/documents', [{ id: 9999, title: 'zeppelin' }]);
        expect((await finishedTask(run.url, t.body.taskUid)).status).toBe('succeeded');
        expect(
          (await call(run.url, 'POST', '/indexes/books/search', { q: 'zeppelin' })).body.hits.map((h: any) => h.id),
        ).toEqual([9999]);
      } finally {
        await stop(run);
      }
      // Opened again, nothing is rebuilt.
      const again = await start(db);
      try {
        expect(again.output()).not.toContain('rebuilt');
      } finally {
        await stop(again);
      }
    },
    120000,
  );

  // The long form (`npm run faults -- --rounds N`) damages more files at random places.
  const rounds = Number(process.env.QUARRY_FAULTS_ROUNDS ?? 2);
  const seed = Number(process.env.QUARRY_FAULTS_SEED ?? 71);

  it(
    `when ${rounds} segment files are damaged at random places (seed ${seed}), then each is found and rebuilt, answering as before`,
    async () => {
      let state = seed;
      const random = (n: number) => {
        state = (state * 1103515245 + 12345) % 2147483648;
        return state % n;
      };
      for (let round = 0; round < rounds; round++) {
        let what = '';
        const db = damagedCopy((_db, index) => {
          const dir = path.join(index, 'tantivy');
          const files = fs
            .readdirSync(dir)
            .filter((f) => /^[0-9a-f]{32}\.\w+$/.test(f))
            .sort();
          const f = path.join(dir, files[random(files.length)]);
          const size = fs.statSync(f).size;
          switch (random(3)) {
            case 0:
              what = `${path.basename(f)} cut to ${random(size)} of ${size} bytes`;
              fs.truncateSync(f, Number(what.split(' ')[3]));
              break;
            case 1: {
              const at = random(size);
              const fd = fs.openSync(f, 'r+');
              const old = Buffer.alloc(1);
              fs.readSync(fd, old, 0, 1, at);
              fs.writeSync(fd, Buffer.from([old[0] ^ (1 + random(255))]), 0, 1, at);
              fs.closeSync(fd);
              what = `${path.basename(f)} byte ${at} of ${size} changed`;
              break;
            }
            default:
              fs.rmSync(f);
              what = `${path.basename(f)} deleted`;
          }
        });
        const run = await start(db);
        try {
          expect([what, run.output()]).toEqual([what, expect.stringContaining('has been rebuilt from the documents')]);
          expect(await answer(run.url)).toEqual(answers);
        } finally {
          await stop(run);
          fs.rmSync(db, { recursive: true, force: true });
        }
      }
    },
    60000 + rounds * 30000,
  );

  it('when a page of an index store is damaged, then the start is refused naming the file, and --drop-damaged-indexes starts without that index', async () => {
    const db = damagedCopy((_db, index) => {
      const f = path.join(index, 'store', 'data.mdb');
      const fd = fs.openSync(f, 'r+');
      // LMDB's two meta pages: with both damaged, nothing says where the trees are.
      fs.writeSync(fd, Buffer.alloc(8192, 0x5a), 0, 8192, 0);
      fs.closeSync(fd);
    });
    const store = path.join(db, 'indexes', indexDir, 'store', 'data.mdb');
    const { code, output } = await refused(db);
    expect(code).toBe(1);
    expect(output).toContain(`index \`books\`: The file \`${store}\` is damaged`);
    expect(output).not.toContain('.. ');
    expect(output).toContain('--drop-damaged-indexes');
    expect(output).toContain('--import-snapshot');
    // Nothing was changed by the refusal.
    expect(fs.existsSync(store)).toBe(true);

    const run = await start(db, ['--drop-damaged-indexes']);
    try {
      expect(run.output()).toContain('a damaged index was dropped (--drop-damaged-indexes)');
      expect((await call(run.url, 'GET', '/indexes/books')).status).toBe(404);
      const other = await call(run.url, 'POST', '/indexes/other/search', { q: 'still' });
      expect(other.body.hits).toEqual([{ id: 1, title: 'still here' }]);
      const aside = fs.readdirSync(path.join(db, 'damaged'));
      expect(aside).toEqual([`books-${indexDir}`]);
      expect(fs.existsSync(path.join(db, 'damaged', aside[0], 'store', 'data.mdb'))).toBe(true);
    } finally {
      await stop(run);
    }
  }, 120000);

  it('when pages in the middle of an index store are overwritten, then the start is refused naming the file (LMDB reading them would kill the process)', async () => {
    const db = damagedCopy((_db, index) => {
      const f = path.join(index, 'store', 'data.mdb');
      const pages = Math.floor(fs.statSync(f).size / 4096);
      const fd = fs.openSync(f, 'r+');
      let state = 4242;
      const garbage = Buffer.alloc(4096);
      for (let n = 0; n < 12; n++) {
        for (let i = 0; i < garbage.length; i++) {
          state = (state * 1103515245 + 12345) % 2147483648;
          garbage[i] = state >> 16;
        }
        fs.writeSync(fd, garbage, 0, 4096, (2 + Math.floor(((pages - 3) * n) / 12)) * 4096);
      }
      fs.closeSync(fd);
    });
    const { code, output } = await refused(db);
    expect(code).toBe(1);
    expect(output).toContain(`The file \`${path.join(db, 'indexes', indexDir, 'store', 'data.mdb')}\` is damaged`);
    expect(output).toContain('--drop-damaged-indexes');
  }, 60000);

  it.each([
    ['missing', (f: string) => fs.rmSync(f)],
    ['empty', (f: string) => fs.truncateSync(f, 0)],
  ])(
    'when an index store file is %s, then the start is refused rather than serving an empty index',
    async (what, damage) => {
      const db = damagedCopy((_db, index) => damage(path.join(index, 'store', 'data.mdb')));
      const { code, output } = await refused(db);
      expect(code).toBe(1);
      expect(output).toContain(`The file \`${path.join(db, 'indexes', indexDir, 'store', 'data.mdb')}\` is ${what}.`);
    },
    60000,
  );

  it('when a stored document is changed in place on a page LMDB still reads, then its reads fail with invalid_store_file, never another document, and the rest answers', async () => {
    let otherStore = '';
    const db = damagedCopy((d) => {
      const other = fs.readdirSync(path.join(d, 'indexes')).find((e) => e !== indexDir)!;
      otherStore = path.join(d, 'indexes', other, 'store', 'data.mdb');
      const bytes = fs.readFileSync(otherStore);
      const at = bytes.indexOf('still here');
      expect(at).toBeGreaterThan(0);
      expect(bytes.indexOf('still here', at + 1)).toBe(-1);
      const fd = fs.openSync(otherStore, 'r+');
      // `still here` becomes `still hare`: a valid document, but not the one written.
      fs.writeSync(fd, Buffer.from('a'), 0, 1, at + 7);
      fs.closeSync(fd);
    });
    const run = await start(db);
    try {
      for (const [method, route, body] of [
        ['GET', '/indexes/other/documents/1', undefined],
        ['POST', '/indexes/other/search', { q: 'still' }],
        ['POST', '/indexes/other/documents/fetch', {}],
      ] as const) {
        const r = await call(run.url, method, route, body);
        expect(r.status).toBe(500);
        expect(r.body).toMatchObject({ code: 'invalid_store_file', type: 'internal' });
        expect(JSON.stringify(r.body)).not.toContain('hare');
      }
      expect(await answer(run.url)).toEqual(answers);
      expect(fs.existsSync(otherStore)).toBe(true);
    } finally {
      await stop(run);
    }
  }, 60000);

  it('when the task store is damaged, then the start is refused naming the file and the way out', async () => {
    const db = damagedCopy((d) => {
      const f = path.join(d, 'tasks', 'data.mdb');
      const fd = fs.openSync(f, 'r+');
      fs.writeSync(fd, Buffer.alloc(8192, 0x33), 0, 8192, 0);
      fs.closeSync(fd);
    });
    const { code, output } = await refused(db);
    expect(code).toBe(1);
    expect(output).toContain(`The file \`${path.join(db, 'tasks', 'data.mdb')}\` is damaged`);
    expect(output).toContain('--import-dump');
  }, 60000);

  it('when a task is changed in place on a page LMDB still reads, then the start is refused naming the file and the way out', async () => {
    const db = damagedCopy((d) => {
      const f = path.join(d, 'tasks', 'data.mdb');
      const bytes = fs.readFileSync(f);
      // Every copy of the word: LMDB leaves older versions of a value on free pages too.
      let changed = 0;
      for (let at = bytes.indexOf('succeeded'); at >= 0; at = bytes.indexOf('succeeded', at + 1), changed++)
        bytes[at + 8] = 's'.charCodeAt(0);
      expect(changed).toBeGreaterThan(0);
      fs.writeFileSync(f, bytes);
    });
    const { code, output } = await refused(db);
    expect(code).toBe(1);
    expect(output).toContain(`The file \`${path.join(db, 'tasks', 'data.mdb')}\` is damaged: the value`);
    expect(output).toContain('does not match its checksum');
    expect(output).toContain('--import-dump');
  }, 60000);

  it('when a staged payload is cut short before its task runs, then the task fails with invalid_store_file and indexes nothing of it', async () => {
    const db = tempDir('quarry-payload-');
    let run = await start(db);
    let small: number;
    try {
      // A long batch first, so that the second addition is still waiting when the server is killed.
      const big = Array.from({ length: 150000 }, (_, i) => ({
        id: i,
        text: `${WORDS[i % 16]} ${WORDS[(i * 3) % 16]} ${i}`,
      }));
      const first = await call(run.url, 'POST', '/indexes/big/documents', big);
      expect(first.status).toBe(202);
      const second = await call(
        run.url,
        'POST',
        '/indexes/small/documents',
        Array.from({ length: 500 }, (_, i) => ({ id: i, text: `row ${i}` })),
      );
      small = second.body.taskUid;
      expect((await call(run.url, 'GET', `/tasks/${small}`)).body.status).toBe('enqueued');
      run.child.kill('SIGKILL');
      await new Promise((res) => run.child.once('exit', res));
    } catch (err) {
      await stop(run);
      throw err;
    }
    const files = fs.readdirSync(path.join(db, 'update_files')).map((f) => path.join(db, 'update_files', f));
    const smallest = files.sort((a, b) => fs.statSync(a).size - fs.statSync(b).size)[0];
    // Cut at a line end: the documents left would parse.
    const text = fs.readFileSync(smallest, 'utf8');
    fs.writeFileSync(smallest, text.slice(0, text.indexOf('\n', text.length / 2) + 1));

    run = await start(db);
    try {
      const t = await finishedTask(run.url, small);
      expect(t.status).toBe('failed');
      expect(t.error.code).toBe('invalid_store_file');
      expect(t.error.message).toContain('is damaged: it holds');
      expect((await call(run.url, 'GET', '/indexes/small/stats')).body.numberOfDocuments ?? 0).toBe(0);
    } finally {
      await stop(run);
    }
  }, 180000);
});

function dirBytes(dir: string): number {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    n += e.isDirectory() ? dirBytes(p) : fs.statSync(p).size;
  }
  return n;
}
