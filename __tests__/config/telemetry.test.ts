/**
 * Usage telemetry: a child server sends its batches to a loopback collector (a shortened
 * interval stands in for the hour); the batches say what was used, and never a key, an
 * index name, a query, a document value or the client's address. A `--no-analytics` server
 * sends nothing and keeps no instance UID; the outbound allowlist applies to the collector.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../ts/logging';
import { Analytics } from '../../ts/telemetry/analytics';
import { type Child, startQuarry } from './spawn';

const KEY = 'telemetry-master-key-0123456789';
const INDEX = 'secretive_marmalade_index';
const QUERY = 'quixotic zeppelin';
const VALUE = 'Zanzibarian pumpernickel';
const ATTRIBUTE_WORD = 'obfuscatedstopword';

interface Collector {
  url: string;
  batches: any[];
  raw: string[];
  close(): Promise<void>;
}

async function collector(): Promise<Collector> {
  const batches: any[] = [];
  const raw: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      raw.push(body);
      batches.push({
        contentType: req.headers['content-type'],
        method: req.method,
        path: req.url,
        body: JSON.parse(body),
      });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/batch`;
  return { url, batches, raw, close: () => new Promise((r) => server.close(() => r())) };
}

async function until<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never happened: ${what}`);
}

async function api(
  url: string,
  method: string,
  p: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: any }> {
  const res = await fetch(url + p, {
    method,
    headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': contentType },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function waitTask(url: string, uid: number): Promise<any> {
  return until(`task ${uid}`, async () => {
    const t = await api(url, 'GET', `/tasks/${uid}`);
    return t.body.status !== 'enqueued' && t.body.status !== 'processing' ? t.body : undefined;
  });
}

/** The same activity on any server: an index, documents, settings, searches, a key. */
async function activity(url: string): Promise<string[]> {
  const created = await api(url, 'POST', '/indexes', { uid: INDEX, primaryKey: 'id' });
  await waitTask(url, created.body.taskUid);
  const docs = await api(url, 'POST', `/indexes/${INDEX}/documents`, [
    { id: 1, title: VALUE },
    { id: 2, title: 'quixotic zeppelin tour' },
  ]);
  expect((await waitTask(url, docs.body.taskUid)).status).toBe('succeeded');
  const ndjson = await api(
    url,
    'POST',
    `/indexes/${INDEX}/documents`,
    `{"id":3,"title":"${VALUE} again"}\n`,
    'application/x-ndjson',
  );
  await waitTask(url, ndjson.body.taskUid);
  const settings = await api(url, 'PATCH', `/indexes/${INDEX}/settings`, {
    stopWords: [ATTRIBUTE_WORD, 'the'],
    filterableAttributes: ['title'],
    typoTolerance: { enabled: false },
    pagination: { maxTotalHits: 50 },
  });
  expect((await waitTask(url, settings.body.taskUid)).status).toBe('succeeded');
  const sub = await api(url, 'PUT', `/indexes/${INDEX}/settings/sortable-attributes`, ['title']);
  await waitTask(url, sub.body.taskUid);
  for (let i = 0; i < 3; i++)
    expect(
      (await api(url, 'POST', `/indexes/${INDEX}/search`, { q: QUERY, filter: `title = "${VALUE}"` })).status,
    ).toBe(200);
  expect((await api(url, 'GET', `/indexes/${INDEX}/search?q=${encodeURIComponent(QUERY)}`)).status).toBe(200);
  expect((await api(url, 'POST', '/indexes/no_such_index_here/search', { q: QUERY })).status).toBe(404);
  expect((await api(url, 'POST', '/multi-search', { queries: [{ indexUid: INDEX, q: QUERY }] })).status).toBe(200);
  const key = await api(url, 'POST', '/keys', {
    actions: ['search'],
    indexes: [INDEX],
    expiresAt: null,
    name: 'telemetry key name',
  });
  expect(key.status).toBe(201);
  const keys = await api(url, 'GET', '/keys');
  return keys.body.results.flatMap((k: any) => [k.key, k.uid]);
}

const dbs: string[] = [];
function db(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-telemetry-'));
  dbs.push(d);
  return d;
}

const children: Child[] = [];
afterAll(async () => {
  await Promise.all(children.map((c) => c.stop()));
  for (const d of dbs) fs.rmSync(d, { recursive: true, force: true });
});

async function start(dbPath: string, extra: string[]): Promise<Child> {
  const c = await startQuarry(['--db-path', dbPath, '--http-addr', '127.0.0.1:0', '--master-key', KEY, ...extra]);
  children.push(c);
  return c;
}

const events = (c: Collector) => c.batches.flatMap((b) => b.body.batch as { event: string; properties: any }[]);

describe('usage telemetry', () => {
  let on: Collector;
  let off: Collector;
  let server: Child;
  let dbPath: string;
  let keys: string[];

  beforeAll(async () => {
    on = await collector();
    off = await collector();
    dbPath = db();
    server = await start(dbPath, [
      '--experimental-analytics-url',
      on.url,
      '--experimental-analytics-interval-ms',
      '100',
    ]);
    keys = await activity(server.url);
    await until('the searches and settings reach the collector', () => {
      const e = events(on);
      const searched = e
        .filter((x) => x.event === 'Searches Aggregated')
        .reduce((n, x) => n + x.properties.requests.total_received, 0);
      return searched >= 6 && e.some((x) => x.event === 'Settings Updated' && x.properties.sortable_attributes);
    });
  });
  afterAll(async () => {
    await on.close();
    await off.close();
  });

  it('when the server starts, then it prints the instance UID it keeps in the data directory, and batches carry it', () => {
    const uid = fs.readFileSync(path.join(dbPath, 'instance-uid'), 'utf8').trim();
    expect(uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(server.stdout()).toContain(`Instance UID: ${uid}`);
    for (const b of on.batches) {
      expect(b).toMatchObject({ method: 'POST', path: '/batch', contentType: 'application/json' });
      expect(b.body.instanceUid).toBe(uid);
    }
  });

  it('when searches ran, then a batch counts successes, failures and latency', () => {
    const s = events(on)
      .filter((x) => x.event === 'Searches Aggregated')
      .map((x) => x.properties.requests);
    const sum = (k: string) => s.reduce((n, x) => n + x[k], 0);
    // 4 single searches and 1 multi-search succeeded, one search on a missing index failed.
    expect([sum('total_received'), sum('total_succeeded'), sum('total_failed')]).toEqual([6, 5, 1]);
    for (const x of s) {
      expect(x.avg_response_time_ms).toBeGreaterThan(0);
      expect(x['99th_response_time_ms_at_most']).toBeGreaterThanOrEqual(1);
    }
  });

  it('when settings, indexes and documents were written, then the batch says which features, not what values', () => {
    const e = events(on);
    expect(e.find((x) => x.event === 'Index Created')?.properties).toEqual({ primary_key: true });
    expect(
      e
        .filter((x) => x.event === 'Documents Added')
        .map((x) => x.properties.payload_type)
        .sort(),
    ).toEqual(['application/json', 'application/x-ndjson']);
    const full = e.find((x) => x.event === 'Settings Updated' && x.properties.stop_words)!.properties;
    expect(full).toEqual({
      stop_words: { set: true, total: 2 },
      filterable_attributes: { set: true, total: 1 },
      typo_tolerance: { set: true, total: 1, enabled: false },
      pagination: { set: true, total: 1, max_total_hits: 50 },
    });
    expect(e.find((x) => x.event === 'Settings Updated' && x.properties.sortable_attributes)!.properties).toEqual({
      sortable_attributes: { set: true, total: 1 },
    });
  });

  it('when a batch is sent, then it describes the system and the start-up options', () => {
    const id = on.batches[0].body.identify;
    expect(id.system).toMatchObject({
      cores: os.availableParallelism(),
      ram_size: Math.round(os.totalmem() / 1024),
      kernel_version: os.release(),
    });
    expect(id.infos).toMatchObject({
      env: 'development',
      master_key: true,
      db_path: true,
      ssl_cert_path: false,
      http_payload_size_limit: 100_000_000,
    });
    expect(on.batches[0].body.batch[0].event).toBe('Launched');
    const last = on.batches[on.batches.length - 1].body.identify;
    expect(last.stats.indexes_number).toBe(1);
    expect(last.stats.database_size).toBeGreaterThan(0);
  });

  it('when batches are read in full, then no key, index name, query, document value or client address is in them', () => {
    const all = on.raw.join('\n');
    expect(all.length).toBeGreaterThan(0);
    const forbidden = [
      KEY,
      ...keys,
      INDEX,
      QUERY,
      'quixotic',
      'zeppelin',
      VALUE,
      'Zanzibarian',
      ATTRIBUTE_WORD,
      'telemetry key name',
      '127.0.0.1',
      'title',
      dbPath,
    ];
    for (const s of forbidden) expect([s, all.includes(s)]).toEqual([s, false]);
  });

  it('when --no-analytics is given, then nothing is collected or sent, and no instance UID is kept', async () => {
    const quietDb = db();
    const quiet = await start(quietDb, [
      '--no-analytics',
      '--experimental-analytics-url',
      off.url,
      '--experimental-analytics-interval-ms',
      '100',
    ]);
    expect(quiet.stdout()).toContain('Anonymous telemetry: disabled');
    expect(quiet.stdout()).not.toContain('Instance UID');
    await activity(quiet.url);
    // Twice, the telemetry server (on the same interval) sends a search made after all of that:
    // the quiet server's timer, were there one, has had its turns too.
    for (let round = 0; round < 2; round++) {
      const before = on.batches.length;
      await api(server.url, 'POST', `/indexes/${INDEX}/search`, { q: 'after' });
      await until('a later batch of the telemetry server', () =>
        on.batches
          .slice(before)
          .some((b) => b.body.batch.some((x: { event: string }) => x.event === 'Searches Aggregated')),
      );
    }
    expect(off.batches).toEqual([]);
    expect(fs.existsSync(path.join(quietDb, 'instance-uid'))).toBe(false);
  });

  it('when the collector is outside --experimental-allowed-ip-networks, then nothing reaches it', async () => {
    const blocked = await collector();
    try {
      const s = await start(db(), [
        '--experimental-analytics-url',
        blocked.url,
        '--experimental-analytics-interval-ms',
        '100',
        '--experimental-allowed-ip-networks',
        '10.0.0.0/8',
      ]);
      await until('the refused delivery is logged', () =>
        s
          .stderr()
          .split('\n')
          .some((l) => l.includes('telemetry batch not delivered') && l.includes('refused')),
      );
      expect(blocked.batches).toEqual([]);
    } finally {
      await blocked.close();
    }
  });

  it('when the instance restarts on the same data, then its instance UID is the same', async () => {
    const uid = fs.readFileSync(path.join(dbPath, 'instance-uid'), 'utf8').trim();
    await server.stop();
    const again = await start(dbPath, ['--no-analytics']);
    await again.stop();
    const back = await start(dbPath, []);
    expect(back.stdout()).toContain(`Instance UID: ${uid}`);
  });
});

describe('the telemetry batcher', () => {
  const logger = createLogger('off');
  const make = (sent: Buffer[], url: string | null, maxBatchBytes?: number) =>
    new Analytics({
      instanceUid: '00000000-0000-4000-8000-000000000000',
      url,
      intervalMs: 3_600_000,
      maxBatchBytes,
      logger,
      version: 't',
      identify: () => ({}),
      send: async (_u, b) => void sent.push(b),
    });

  it('when pending events reach the size limit, then a batch leaves at once, before the interval', async () => {
    const sent: Buffer[] = [];
    const a = make(sent, 'http://127.0.0.1:9/x', 5_000);
    for (let i = 0; i < 40; i++) a.event('Settings Updated', { stop_words: { set: true, total: i } });
    expect(sent).toHaveLength(0);
    for (let i = 0; i < 20 && sent.length === 0; i++) {
      a.event('Settings Updated', { stop_words: { set: true, total: i } });
      await a.flushed();
    }
    expect(sent).toHaveLength(1);
    const body = JSON.parse(sent[0].toString());
    expect(body.batch.length).toBeGreaterThan(40);
  });

  it('when no URL is configured, then only counters are kept and nothing is sent', async () => {
    const sent: Buffer[] = [];
    const a = make(sent, null);
    a.recordSearch(true, 3);
    a.event('Settings Updated', { stop_words: { set: true } });
    await a.flush();
    expect(sent).toHaveLength(0);
    expect(a.searchesReceived).toBe(1);
  });
});
