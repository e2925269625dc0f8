/**
 * GET /metrics: the feature gate, who may read it, and that the families Meilisearch 1.50
 * exposes are there with real values that move (read with a Prometheus text parser).
 */
import parsePrometheusTextFormat, { type MetricFamily } from 'parse-prometheus-text-format';
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ args: ['--experimental-search-queue-size', '77'] });
});
afterAll(async () => {
  await s.close();
});

type Scrape = Map<string, MetricFamily> & { text: string };

async function scrape(): Promise<Scrape> {
  const r = await s.api('GET', '/metrics');
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toBe('text/plain; version=0.0.4');
  return Object.assign(new Map(parsePrometheusTextFormat(r.text).map((f) => [f.name, f])), { text: r.text });
}

/**
 * One series of a labelled histogram, read from the text: the parser merges the series of a
 * histogram that has labels, so `_bucket`, `_sum` and `_count` lines are read directly.
 */
function histogram(
  m: Scrape,
  family: string,
  labels: string,
): { count: number; sum: number; buckets: Map<string, number> } | undefined {
  const line = (suffix: string, extra = '') =>
    new RegExp(`^${family}${suffix}\\{${labels.replace(/[{}]/g, '\\$&')}${extra}\\} (\\S+)$`, 'm');
  const count = line('_count').exec(m.text);
  if (!count) return undefined;
  const buckets = new Map<string, number>();
  for (const b of m.text.matchAll(new RegExp(line('_bucket', ',le="([^"]+)"').source, 'gm')))
    buckets.set(b[1], Number(b[2]));
  return { count: Number(count[1]), sum: Number(line('_sum').exec(m.text)![1]), buckets };
}

/** The value of the sample of `family` whose labels include `labels` (undefined: no such sample). */
function value(m: Map<string, MetricFamily>, family: string, labels: Record<string, string> = {}): number | undefined {
  const sample = m.get(family)?.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v));
  if (!sample) return undefined;
  return Number(sample.value ?? sample.count);
}

async function setMetrics(on: boolean): Promise<void> {
  const r = await s.api('PATCH', '/experimental-features', { body: { metrics: on } });
  expect(r.status).toBe(200);
}

async function addDocuments(uid: string, docs: unknown[]): Promise<void> {
  const r = await s.api('POST', `/indexes/${uid}/documents`, { body: docs });
  expect(r.status).toBe(202);
  expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
}

describe('GET /metrics', () => {
  it('when the metrics feature is off, then 400 feature_not_enabled', async () => {
    const r = await s.api('GET', '/metrics');
    expect([r.status, r.body]).toEqual([
      400,
      {
        message:
          'Getting metrics requires enabling the `metrics` experimental feature. See https://github.com/meilisearch/product/discussions/625',
        code: 'feature_not_enabled',
        type: 'invalid_request',
        link: 'https://docs.meilisearch.com/errors#feature_not_enabled',
      },
    ]);
  });

  it('when the key lacks metrics.get, reaches only some indexes, or is missing, then it is refused', async () => {
    await setMetrics(true);
    const invalid = {
      message: 'The provided API key is invalid.',
      code: 'invalid_api_key',
      type: 'auth',
      link: 'https://docs.meilisearch.com/errors#invalid_api_key',
    };
    const restricted = await s.api('POST', '/keys', { body: { actions: ['*'], indexes: ['movies'], expiresAt: null } });
    const searchOnly = await s.api('POST', '/keys', { body: { actions: ['search'], indexes: ['*'], expiresAt: null } });
    const allowed = await s.api('POST', '/keys', {
      body: { actions: ['metrics.get'], indexes: ['*'], expiresAt: null },
    });
    expect([restricted.status, searchOnly.status, allowed.status]).toEqual([201, 201, 201]);

    const r1 = await s.api('GET', '/metrics', { key: restricted.body.key });
    expect([r1.status, r1.body]).toEqual([403, invalid]);
    const r2 = await s.api('GET', '/metrics', { key: searchOnly.body.key });
    expect([r2.status, r2.body]).toEqual([403, invalid]);
    const r3 = await s.api('GET', '/metrics', { key: null });
    expect([r3.status, r3.body.code]).toEqual([401, 'missing_authorization_header']);
    const r4 = await s.api('GET', '/metrics', { key: allowed.body.key });
    expect(r4.status).toBe(200);
  });

  it('when scraped, then every family Meilisearch exposes is there with its type', async () => {
    await setMetrics(true);
    const m = await scrape();
    const expected: Record<string, MetricFamily['type']> = {
      meilisearch_db_size_bytes: 'GAUGE',
      meilisearch_used_db_size_bytes: 'GAUGE',
      meilisearch_http_requests_total: 'COUNTER',
      meilisearch_http_response_time_seconds: 'HISTOGRAM',
      meilisearch_index_count: 'GAUGE',
      meilisearch_index_docs_count: 'GAUGE',
      meilisearch_is_indexing: 'GAUGE',
      meilisearch_last_finished_batches_progress_trace_ms: 'GAUGE',
      meilisearch_last_indexed_documents_count: 'GAUGE',
      meilisearch_last_indexed_documents_duration_ms: 'GAUGE',
      meilisearch_last_update: 'GAUGE',
      meilisearch_nb_tasks: 'GAUGE',
      meilisearch_search_queue_size: 'GAUGE',
      meilisearch_searches_running: 'GAUGE',
      meilisearch_searches_waiting_to_be_processed: 'GAUGE',
      meilisearch_task_queue_latency_seconds: 'GAUGE',
      meilisearch_task_queue_max_size: 'GAUGE',
      meilisearch_task_queue_size_until_stop_registering: 'GAUGE',
      meilisearch_task_queue_used_size: 'GAUGE',
      process_cpu_seconds_total: 'COUNTER',
      process_max_fds: 'GAUGE',
      process_open_fds: 'GAUGE',
      process_resident_memory_bytes: 'GAUGE',
      process_start_time_seconds: 'GAUGE',
      process_threads: 'GAUGE',
      process_virtual_memory_bytes: 'GAUGE',
    };
    expect(Object.fromEntries([...m.values()].map((f) => [f.name, f.type]))).toEqual(expected);
    expect(value(m, 'meilisearch_search_queue_size')).toBe(77);
    expect(value(m, 'meilisearch_searches_running')).toBe(0);
    expect(value(m, 'meilisearch_task_queue_max_size')).toBe(20 * 1024 ** 3);
    const size = value(m, 'meilisearch_db_size_bytes')!;
    const used = value(m, 'meilisearch_used_db_size_bytes')!;
    expect(size).toBeGreaterThan(0);
    expect(used).toBeGreaterThan(0);
    expect(used).toBeLessThanOrEqual(size);
    expect(value(m, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    // Every status and type is listed, at zero when no task has it.
    const kinds = m
      .get('meilisearch_nb_tasks')!
      .metrics.filter((x) => x.labels?.kind === 'statuses')
      .map((x) => x.labels?.value);
    expect(kinds).toEqual(['canceled', 'enqueued', 'failed', 'processing', 'succeeded']);
    expect(value(m, 'meilisearch_nb_tasks', { kind: 'types', value: 'dumpCreation' })).toBe(0);
  });

  it('when documents are added, then the index, document, task and batch gauges follow', async () => {
    await setMetrics(true);
    const uid = uniqueIndex('metrics');
    await addDocuments(uid, [
      { id: 1, title: 'one' },
      { id: 2, title: 'two' },
    ]);
    const before = await scrape();
    expect(value(before, 'meilisearch_index_docs_count', { index: uid })).toBe(2);
    expect(value(before, 'meilisearch_nb_tasks', { kind: 'indexes', value: uid })).toBe(1);
    expect(value(before, 'meilisearch_last_indexed_documents_count', { index: uid })).toBe(2);
    expect(value(before, 'meilisearch_last_indexed_documents_duration_ms', { index: uid })).toBeGreaterThanOrEqual(0);
    expect(
      before.get('meilisearch_last_finished_batches_progress_trace_ms')!.metrics.map((x) => x.labels?.step_name),
    ).toContain('processing tasks');
    expect(value(before, 'meilisearch_last_update')).toBeGreaterThan(Date.parse('2020-01-01') / 1000);
    expect(value(before, 'meilisearch_is_indexing')).toBe(0);

    await addDocuments(uid, [{ id: 3, title: 'three' }]);
    const after = await scrape();
    expect(value(after, 'meilisearch_index_docs_count', { index: uid })).toBe(3);
    expect(value(after, 'meilisearch_index_count')).toBe(value(before, 'meilisearch_index_count'));
    expect(value(after, 'meilisearch_nb_tasks', { kind: 'indexes', value: uid })).toBe(2);
    expect(value(after, 'meilisearch_nb_tasks', { kind: 'statuses', value: 'succeeded' })).toBe(
      value(before, 'meilisearch_nb_tasks', { kind: 'statuses', value: 'succeeded' })! + 1,
    );
    expect(value(after, 'meilisearch_last_indexed_documents_count', { index: uid })).toBe(1);

    const other = uniqueIndex('metrics');
    await addDocuments(other, [{ id: 1 }]);
    expect(value(await scrape(), 'meilisearch_index_count')).toBe(value(after, 'meilisearch_index_count')! + 1);
  });

  it('when searches run, then the request counter and the histogram count them under the route template', async () => {
    await setMetrics(true);
    const uid = uniqueIndex('metrics');
    await addDocuments(uid, [{ id: 1, title: 'hello' }]);
    const series = { method: 'POST', path: '/indexes/{index_uid}/search' };
    const before = await scrape();
    for (let i = 0; i < 3; i++)
      expect((await s.api('POST', `/indexes/${uid}/search`, { body: { q: 'hello' } })).status).toBe(200);
    expect((await s.api('POST', `/indexes/${uid}-missing/search`, { body: {} })).status).toBe(404);
    const after = await scrape();
    const ok = { ...series, status: '200' };
    expect(value(after, 'meilisearch_http_requests_total', ok)).toBe(
      (value(before, 'meilisearch_http_requests_total', ok) ?? 0) + 3,
    );
    expect(value(after, 'meilisearch_http_requests_total', { ...series, status: '404' })).toBe(
      (value(before, 'meilisearch_http_requests_total', { ...series, status: '404' }) ?? 0) + 1,
    );
    const labels = `method="POST",path="${series.path}"`;
    const hist = histogram(after, 'meilisearch_http_response_time_seconds', labels)!;
    expect(hist.count).toBe((histogram(before, 'meilisearch_http_response_time_seconds', labels)?.count ?? 0) + 4);
    expect([...hist.buckets.keys()]).toEqual([
      '0.005',
      '0.01',
      '0.025',
      '0.05',
      '0.075',
      '0.1',
      '0.25',
      '0.5',
      '0.75',
      '1',
      '2.5',
      '5',
      '7.5',
      '10',
      '+Inf',
    ]);
    expect(hist.buckets.get('+Inf')).toBe(hist.count);
    expect(hist.sum).toBeGreaterThan(0);
    // The scrape before this one was counted once it was answered.
    expect(
      value(after, 'meilisearch_http_requests_total', { method: 'GET', path: '/metrics', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    // Index uids never become labels.
    const paths = after.get('meilisearch_http_requests_total')!.metrics.map((x) => x.labels?.path ?? '');
    expect(paths.filter((p) => p.includes(uid))).toEqual([]);
  });

  it('when the feature is off, then requests are not measured', async () => {
    await setMetrics(true);
    const uid = uniqueIndex('metrics');
    await addDocuments(uid, [{ id: 1 }]);
    const ok = { method: 'GET', path: '/indexes/{index_uid}/documents/{document_id}', status: '200' };
    const before = value(await scrape(), 'meilisearch_http_requests_total', ok) ?? 0;
    await setMetrics(false);
    expect((await s.api('GET', `/indexes/${uid}/documents/1`)).status).toBe(200);
    await setMetrics(true);
    expect(value(await scrape(), 'meilisearch_http_requests_total', ok) ?? 0).toBe(before);
    expect((await s.api('GET', `/indexes/${uid}/documents/1`)).status).toBe(200);
    expect(value(await scrape(), 'meilisearch_http_requests_total', ok)).toBe(before + 1);
  });
});

describe('--experimental-enable-metrics', () => {
  it('when given at start-up, then the feature is on, and a PATCH can still turn it off', async () => {
    const t = await startTestServer({ args: ['--experimental-enable-metrics'] });
    try {
      expect((await t.api('GET', '/experimental-features')).body.metrics).toBe(true);
      expect((await t.api('GET', '/metrics')).status).toBe(200);
      expect((await t.api('PATCH', '/experimental-features', { body: { metrics: false } })).body.metrics).toBe(false);
      expect((await t.api('GET', '/metrics')).body.code).toBe('feature_not_enabled');
    } finally {
      await t.close();
    }
  });
});
