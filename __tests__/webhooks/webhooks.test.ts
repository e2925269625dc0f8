/**
 * Webhooks over HTTP, with real receivers on loopback: Meilisearch 1.50's routes, shapes,
 * limits and messages (probed on the reference), the command line's webhook, and deliveries
 * of finished batches as gzip NDJSON, retried, never holding the task queue, never sent
 * outside the allowed networks.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { createLogger } from '../../ts/logging';
import type { TaskRecord } from '../../ts/tasks/types';
import { WebhookDispatcher } from '../../ts/webhooks/delivery';
import type { WebhookStore } from '../../ts/webhooks/store';
import { startTestServer, type TestServer } from '../helpers/server';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  lines: any[];
}

/** A loopback receiver; `answer` picks each request's status (null: never answer). */
async function receiver(answer: (n: number) => number | null = () => 200) {
  const got: Received[] = [];
  const waiting: http.ServerResponse[] = [];
  let n = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = zlib.gunzipSync(Buffer.concat(chunks)).toString();
      got.push({
        path: req.url ?? '',
        headers: req.headers,
        lines: text
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l)),
      });
      const status = answer(n++);
      if (status === null) waiting.push(res);
      else res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    got,
    waiting,
    async until(count: number): Promise<void> {
      for (let i = 0; i < 600 && got.length < count; i++) await new Promise((r) => setTimeout(r, 10));
      if (got.length < count) throw new Error(`received ${got.length} of ${count} deliveries`);
    },
    close: () =>
      new Promise<void>((r) => {
        for (const res of waiting) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('the /webhooks routes', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  test("create, read, patch and delete with Meilisearch's shapes", async () => {
    expect((await s.api('GET', '/webhooks')).body).toEqual({ results: [] });
    const created = await s.api('POST', '/webhooks', {
      body: {
        url: 'https://example.com/hook',
        headers: { Authorization: 'Bearer abcdefghijklmnop', 'X-Short': 'ab', authorization2: 'x', 'X-Null': null },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      uuid: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      isEditable: true,
      url: 'https://example.com/hook',
      headers: { Authorization: 'Bearer abXXXX...', 'X-Short': 'ab', authorization2: 'x', 'X-Null': '' },
    });
    const uuid = created.body.uuid;
    expect((await s.api('GET', `/webhooks/${uuid}`)).body).toEqual(created.body);
    // Without dashes, the same webhook.
    expect((await s.api('GET', `/webhooks/${uuid.replace(/-/g, '')}`)).body.uuid).toBe(uuid);
    const patched = await s.api('PATCH', `/webhooks/${uuid}`, { body: { headers: { 'X-Short': null, 'X-New': '1' } } });
    expect(patched.body.headers).toEqual({
      Authorization: 'Bearer abXXXX...',
      authorization2: 'x',
      'X-Null': '',
      'X-New': '1',
    });
    expect((await s.api('PATCH', `/webhooks/${uuid}`, { body: { url: 'https://example.com/changed' } })).body.url).toBe(
      'https://example.com/changed',
    );
    expect((await s.api('PATCH', `/webhooks/${uuid}`, { body: {} })).status).toBe(200);
    expect((await s.api('GET', '/webhooks')).body.results).toHaveLength(1);
    const del = await s.api('DELETE', `/webhooks/${uuid}`);
    expect([del.status, del.text]).toEqual([204, '']);
    expect((await s.api('GET', `/webhooks/${uuid}`)).body).toMatchObject({
      code: 'webhook_not_found',
      message: `Webhook \`${uuid}\` not found.`,
    });
  });

  test('secrets in Authorization are hidden by length, as Meilisearch hides them', async () => {
    const shown = async (value: string) =>
      (await s.api('POST', '/webhooks', { body: { url: 'https://example.com/x', headers: { authorization: value } } }))
        .body.headers.authorization;
    expect(await shown('Bearer abc')).toBe('Bearer XXX...');
    expect(await shown('abcdefghijkl')).toBe('abXXXX...');
    expect(await shown('abc')).toBe('XXX...');
    expect(await shown('Basic dXNlcjpwYXNzd29yZA==')).toBe('BasXXXXX...');
    for (const w of (await s.api('GET', '/webhooks')).body.results) await s.api('DELETE', `/webhooks/${w.uuid}`);
  });

  test("bad bodies and uuids answer Meilisearch's codes and messages", async () => {
    const post = async (body: unknown) => (await s.api('POST', '/webhooks', { body })).body;
    expect((await post({})).message).toMatch(/^The URL for the webhook `[0-9a-f-]{36}` is missing\.$/);
    expect(await post({ url: 'not a url' })).toMatchObject({
      code: 'invalid_webhook_url',
      message: 'Invalid URL `not a url`: relative URL without a base',
    });
    expect(await post({ url: 'https://x.com', headers: { a: 5 } })).toMatchObject({
      code: 'invalid_webhook_headers',
      message: 'Invalid value type at `.headers.a`: expected a string, but found a positive integer: `5`',
    });
    expect(await post({ url: 'https://x.com', headers: 'x' })).toMatchObject({
      code: 'invalid_webhook_headers',
      message: 'Invalid value type at `.headers`: expected an object, but found a string: `"x"`',
    });
    expect(await post({ url: 'https://x.com', nope: 1 })).toMatchObject({
      code: 'bad_request',
      message: 'Unknown field `nope`: expected one of `url`, `headers`',
    });
    expect(await post({ url: 'https://x.com', uuid: 'x' })).toMatchObject({
      code: 'immutable_webhook_uuid',
      message: 'Immutable field `uuid`: expected one of `url`, `headers`',
    });
    expect(await post({ url: 'https://x.com', isEditable: true })).toMatchObject({
      code: 'immutable_webhook_is_editable',
    });
    expect(await post([])).toMatchObject({
      code: 'bad_request',
      message: 'Invalid value type: expected an object, but found an array: `[]`',
    });
    const get = async (id: string) => (await s.api('GET', `/webhooks/${id}`)).body;
    expect(await get('not-a-uuid')).toMatchObject({
      code: 'invalid_webhook_uuid',
      message: 'Invalid UUID: invalid character: found `n` at 0',
    });
    expect((await get('0000')).message).toBe('Invalid UUID: invalid length: found 4');
    expect((await get('12345678-1234-1234-1234-12345678901')).message).toBe(
      'Invalid UUID: invalid group length in group 4: expected 12, found 11',
    );
    const headers = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`h${i}`, 'v']));
    expect((await post({ url: 'https://x.com', headers })).message).toMatch(
      /^Too many headers for the webhook `[0-9a-f-]{36}`\. Please limit the number of headers to 200\./,
    );
  });

  test('at most 20 webhooks', async () => {
    for (let i = 0; i < 20; i++)
      expect((await s.api('POST', '/webhooks', { body: { url: `https://example.com/${i}` } })).status).toBe(201);
    const refused = await s.api('POST', '/webhooks', { body: { url: 'https://example.com/21' } });
    expect(refused.body).toMatchObject({ code: 'invalid_webhooks' });
    expect(refused.body.message).toMatch(
      /^Defining too many webhooks would crush the server\. Please limit the number of webhooks to 20\./,
    );
    for (const w of (await s.api('GET', '/webhooks')).body.results) await s.api('DELETE', `/webhooks/${w.uuid}`);
  });

  test('a search key cannot read them', async () => {
    const key = (await s.api('POST', '/keys', { body: { actions: ['search'], indexes: ['*'], expiresAt: null } })).body
      .key;
    expect((await s.api('GET', '/webhooks', { key })).status).toBe(403);
  });
});

describe('deliveries', () => {
  test("the command line's webhook is listed, immutable, and receives every finished batch", async () => {
    const r = await receiver();
    const s = await startTestServer({
      args: ['--task-webhook-url', `${r.url}/cli`, '--task-webhook-authorization-header', 'secretvalue123'],
    });
    try {
      const list = (await s.api('GET', '/webhooks')).body.results;
      expect(list).toEqual([
        {
          uuid: '00000000-0000-0000-0000-000000000000',
          isEditable: false,
          url: `${r.url}/cli`,
          headers: { Authorization: 'seXXXX...' },
        },
      ]);
      const nil = '00000000-0000-0000-0000-000000000000';
      for (const [method, body] of [
        ['PATCH', { url: 'https://x.com' }],
        ['DELETE', undefined],
      ] as const) {
        const res = await s.api(method, `/webhooks/${nil}`, body ? { body } : {});
        expect(res.body).toMatchObject({
          code: 'immutable_webhook',
          message: `Webhook \`${nil}\` is immutable. The webhook defined from the command line cannot be modified using the API.`,
        });
      }
      // Registering makes no request by itself.
      const hook = (
        await s.api('POST', '/webhooks', { body: { url: `${r.url}/api`, headers: { 'X-Team': 'search' } } })
      ).body;
      await new Promise((res) => setTimeout(res, 100));
      expect(r.got).toEqual([]);

      const a = await s.api('POST', '/indexes/m/documents', { body: [{ id: 1 }] });
      await s.waitTask(a.body.taskUid);
      await r.until(2);
      const view = (await s.api('GET', `/tasks/${a.body.taskUid}`)).body;
      const cli = r.got.find((g) => g.path === '/cli')!;
      expect(cli.headers).toMatchObject({
        'content-type': 'application/x-ndjson',
        'content-encoding': 'gzip',
        authorization: 'secretvalue123',
      });
      expect(cli.lines).toEqual([view]);
      const api = r.got.find((g) => g.path === '/api')!;
      expect(api.headers['x-team']).toBe('search');
      expect(api.lines).toEqual([view]);
      await s.api('DELETE', `/webhooks/${hook.uuid}`);
    } finally {
      await s.close();
      await r.close();
    }
  });

  test('a failing receiver gets the batch again; one that never answers holds nothing', async () => {
    const flaky = await receiver((n) => (n === 0 ? 500 : 200));
    const silent = await receiver(() => null);
    const s = await startTestServer();
    try {
      await s.api('POST', '/webhooks', { body: { url: flaky.url } });
      await s.api('POST', '/webhooks', { body: { url: silent.url } });
      const first = await s.api('POST', '/indexes/m/documents', { body: [{ id: 1 }] });
      await s.waitTask(first.body.taskUid);
      await silent.until(1);
      // The silent receiver still holds its request; later tasks finish regardless.
      const uids: number[] = [];
      for (let i = 2; i < 6; i++)
        uids.push((await s.api('POST', '/indexes/m/documents', { body: [{ id: i }] })).body.taskUid);
      for (const u of uids) expect((await s.waitTask(u)).status).toBe('succeeded');
      expect(silent.waiting.length).toBe(1);
      expect(silent.got).toHaveLength(1);
      // The 500 was retried: the same batch came twice.
      await flaky.until(2);
      expect(flaky.got[1].lines).toEqual(flaky.got[0].lines);
      expect(flaky.got[0].lines[0].uid).toBe(first.body.taskUid);
    } finally {
      await s.close();
      await flaky.close();
      await silent.close();
    }
  });

  test('receivers that never answer hold at most four deliveries; searches and tasks go on', async () => {
    const silent = await Promise.all(Array.from({ length: 6 }, () => receiver(() => null)));
    const s = await startTestServer();
    try {
      for (const r of silent) await s.api('POST', '/webhooks', { body: { url: r.url } });
      const a = await s.api('POST', '/indexes/m/documents', { body: [{ id: 1, title: 'carol' }] });
      expect((await s.waitTask(a.body.taskUid)).status).toBe('succeeded');
      for (let i = 0; i < 300 && silent.reduce((n, r) => n + r.got.length, 0) < 4; i++)
        await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 100));
      // Four are out, two wait for a slot: the libuv threads searches use stay free.
      expect(silent.reduce((n, r) => n + r.got.length, 0)).toBe(4);
      expect((await s.api('POST', '/indexes/m/search', { body: { q: 'carol' } })).body.hits).toHaveLength(1);
      const b = await s.api('POST', '/indexes/m/documents', { body: [{ id: 2 }] });
      expect((await s.waitTask(b.body.taskUid)).status).toBe('succeeded');
    } finally {
      await s.close();
      for (const r of silent) await r.close();
    }
  });

  test('the tasks a cancelation ends are announced with it', async () => {
    const r = await receiver();
    const s = await startTestServer();
    try {
      await s.api('POST', '/webhooks', { body: { url: r.url } });
      const big = Array.from({ length: 40000 }, (_, i) => ({ id: i, text: `word${i}` }));
      await s.api('POST', '/indexes/m/documents', { body: big });
      const later = await s.api('POST', '/indexes/m/documents', { body: [{ id: 'x' }] });
      const cancel = await s.api('POST', `/tasks/cancel?uids=${later.body.taskUid}`);
      const done = await s.waitTask(cancel.body.taskUid);
      expect(done.details.canceledTasks).toBe(1);
      for (let i = 0; i < 300 && !r.got.some((g) => g.lines.some((l) => l.uid === cancel.body.taskUid)); i++)
        await new Promise((res) => setTimeout(res, 10));
      const delivery = r.got.find((g) => g.lines.some((l) => l.uid === cancel.body.taskUid))!;
      expect(delivery.lines.map((l) => [l.uid, l.status])).toEqual([
        [later.body.taskUid, 'canceled'],
        [cancel.body.taskUid, 'succeeded'],
      ]);
    } finally {
      await s.close();
      await r.close();
    }
  });

  test('a destination outside the allowed networks is never reached, and nothing waits for it', async () => {
    const warnings: string[] = [];
    const logger = createLogger('off');
    logger.warn = ((message: string) => {
      warnings.push(message);
      return logger;
    }) as typeof logger.warn;
    const store = { all: () => [{ uuid: 'u', url: 'http://192.0.2.1/hook', headers: {} }] } as unknown as WebhookStore;
    const dispatcher = new WebhookDispatcher(store, logger, { retryDelaysMs: [10, 10] });
    const task = {
      uid: 0,
      batchUid: 0,
      indexUid: 'm',
      status: 'succeeded',
      type: 'indexCreation',
      canceledBy: null,
      details: {},
      error: null,
      enqueuedAt: '',
      startedAt: '',
      finishedAt: '',
      payload: { kind: 'indexCreation', primaryKey: null },
    } as TaskRecord;
    dispatcher.batchFinished([task]);
    await dispatcher.idle();
    expect(warnings).toEqual(['webhook not delivered: its address is outside the allowed networks']);
  });
});
