/**
 * /logs/stream and /logs/stderr: the feature gate, Meilisearch's body errors, lines streamed
 * as requests run (human and JSON), one reader at a time, DELETE and a client that goes away
 * freeing the stream, and the stderr filter changed at run time in a child process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../ts/config';
import { MASTER_KEY, startTestServer, tempDir, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const bad = (message: string) => ({
  message,
  code: 'bad_request',
  type: 'invalid_request',
  link: 'https://docs.meilisearch.com/errors#bad_request',
});
const IN_USE = bad('The `/logs/stream` route is currently in use by someone else.');

async function setLogsRoute(on: boolean): Promise<void> {
  expect((await s.api('PATCH', '/experimental-features', { body: { logsRoute: on } })).status).toBe(200);
}

interface Stream {
  res: Response;
  /** Reads until `done(text so far)` holds or the stream ends; returns everything read. */
  readUntil(done: (text: string) => boolean): Promise<string>;
}

async function openStream(body: unknown, signal?: AbortSignal): Promise<Stream> {
  const res = await fetch(`${s.url}/logs/stream`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${MASTER_KEY}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  return {
    res,
    async readUntil(done) {
      while (!done(text)) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += decoder.decode(chunk.value, { stream: true });
      }
      return text;
    },
  };
}

describe('/logs routes', () => {
  it('when the logsRoute feature is off, then each route answers 400 feature_not_enabled', async () => {
    await setLogsRoute(false);
    const off = {
      message:
        'Modifying logs through the `/logs/*` routes requires enabling the `logs route` experimental feature. See https://github.com/orgs/meilisearch/discussions/721',
      code: 'feature_not_enabled',
      type: 'invalid_request',
      link: 'https://docs.meilisearch.com/errors#feature_not_enabled',
    };
    for (const [method, p, body] of [
      ['POST', '/logs/stream', { mode: 'human' }],
      ['DELETE', '/logs/stream', undefined],
      ['POST', '/logs/stderr', { target: 'info' }],
    ] as const) {
      const r = await s.api(method, p, { body });
      expect([method, p, r.status, r.body]).toEqual([method, p, 400, off]);
    }
    // The body is checked before the feature, as Meilisearch does.
    const r = await s.api('POST', '/logs/stderr', { body: { target: 'a=b=c' } });
    expect(r.body.code).toBe('bad_request');
  });

  it.each([
    [
      '/logs/stream',
      { mode: 'humann', target: 'info' },
      'Unknown value `humann` at `.mode`: did you mean `human`? expected one of `human`, `json`, `profile`',
    ],
    [
      '/logs/stream',
      { mode: 'human', target: 'info', x: 1 },
      'Unknown field `x`: expected one of `target`, `mode`, `profileMemory`',
    ],
    [
      '/logs/stream',
      { target: 'info=x' },
      'Invalid value at `.target`: error parsing level filter: expected one of "off", "error", "warn", "info", "debug", "trace", or a number 0-5',
    ],
    ['/logs/stream', { target: null }, 'Invalid value type at `.target`: expected a string, but found null'],
    ['/logs/stderr', { mode: 'human', target: 'info' }, 'Unknown field `mode`: expected one of `target`'],
    [
      '/logs/stderr',
      { target: 'milli=info=debug' },
      "Invalid value at `.target`: invalid filter directive: too many '=' in filter directive, expected 0 or 1",
    ],
    [
      '/logs/stderr',
      { target: 3 },
      'Invalid value type at `.target`: expected a string, but found a positive integer: `3`',
    ],
    [
      '/logs/stderr',
      { target: '' },
      'Invalid value at `.target`: Empty string is not a valid target. If you want to get no logs use `OFF`. Usage: `info`, `meilisearch=info`, or you can write multiple filters in one target: `index_scheduler=info,milli=trace`',
    ],
  ])('when POST %s gets %j, then 400 bad_request with Meilisearch message', async (p, body, message) => {
    await setLogsRoute(true);
    const r = await s.api('POST', p, { body });
    expect([r.status, r.body]).toEqual([400, bad(message)]);
  });

  it('when a human stream is open, then request lines arrive, a second reader is refused, and DELETE ends it', async () => {
    await setLogsRoute(true);
    const missing = uniqueIndex('nowhere');
    const stream = await openStream({ mode: 'human', target: 'info' });
    expect(stream.res.status).toBe(200);
    expect(stream.res.headers.get('x-accel-buffering')).toBe('no');

    const second = await s.api('POST', '/logs/stream', { body: { mode: 'json' } });
    expect([second.status, second.body]).toEqual([400, IN_USE]);

    expect((await s.api('GET', `/indexes/${missing}`)).status).toBe(404);
    const text = await stream.readUntil((t) => t.includes(missing));
    expect(text).toMatch(
      new RegExp(`^\\S+Z  INFO quarry::http: request method=GET path=/indexes/${missing} status=404 ms=\\S+$`, 'm'),
    );
    expect(text).toMatch(/ INFO quarry::http: request method=POST path=\/logs\/stream status=400 /);

    const del = await s.api('DELETE', '/logs/stream');
    expect([del.status, del.text]).toEqual([204, '']);
    await stream.readUntil(() => false); // resolves only when the server ends the response
    const again = await openStream({});
    expect(again.res.status).toBe(200);
    expect((await s.api('DELETE', '/logs/stream')).status).toBe(204);
    await again.readUntil(() => false);
  });

  it('when a JSON stream targets index_scheduler, then task lines arrive as JSON and HTTP lines do not', async () => {
    await setLogsRoute(true);
    const uid = uniqueIndex('logs');
    const stream = await openStream({ mode: 'json', target: 'index_scheduler=info' });
    expect(stream.res.status).toBe(200);
    const add = await s.api('POST', `/indexes/${uid}/documents`, { body: [{ id: 1 }] });
    expect((await s.waitTask(add.body.taskUid)).status).toBe('succeeded');
    const text = await stream.readUntil((t) => t.includes('task succeeded') && t.includes(uid));
    expect((await s.api('DELETE', '/logs/stream')).status).toBe(204);
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.target)).toEqual(lines.map(() => 'quarry::tasks'));
    expect(lines).toContainEqual({
      timestamp: expect.stringMatching(/Z$/),
      level: 'INFO',
      fields: expect.objectContaining({ message: 'task succeeded', indexUid: uid, type: 'documentAdditionOrUpdate' }),
      target: 'quarry::tasks',
    });
  });

  it('when the reader goes away, then the stream is free for the next one', async () => {
    await setLogsRoute(true);
    const abort = new AbortController();
    const stream = await openStream({ mode: 'human' }, abort.signal);
    expect(stream.res.status).toBe(200);
    expect((await s.api('POST', '/logs/stream', { body: {} })).body).toEqual(IN_USE);
    abort.abort();
    // The server learns of the disconnection from its socket; poll until it has.
    let next: Stream | null = null;
    for (let i = 0; i < 500 && next === null; i++) {
      const attempt = await openStream({ mode: 'human' });
      if (attempt.res.status === 200) next = attempt;
      else await new Promise((r) => setTimeout(r, 10));
    }
    expect(next).not.toBeNull();
    expect((await s.api('DELETE', '/logs/stream')).status).toBe(204);
    await next!.readUntil(() => false);
  });
});

describe('POST /logs/stderr and --experimental-logs-mode, in a child process', () => {
  const BIN = path.join(__dirname, '../../bin/quarry.js');
  const KEY = 'logs-test-master-key-00000';
  let child: ChildProcess | null = null;
  afterEach(() => {
    child?.kill('SIGKILL');
    child = null;
  });

  it('when the stderr target is raised at run time, then lines it now allows are written, as JSON', async () => {
    const proc = spawn(
      process.execPath,
      [
        BIN,
        '--db-path',
        tempDir(),
        '--http-addr',
        '127.0.0.1:0',
        '--master-key',
        KEY,
        '--log-level',
        'warn',
        '--experimental-logs-mode',
        'JSON',
        '--experimental-enable-logs-route',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = proc;
    let stderr = '';
    let wake: () => void = () => undefined;
    proc.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      wake();
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      proc.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/[^\s]+)/.exec(out);
        if (m) resolve(m[1]);
      });
      proc.once('exit', (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
    });
    const call = (method: string, p: string, body?: unknown) =>
      fetch(url + p, {
        method,
        headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });

    expect((await call('GET', '/indexes/before_change')).status).toBe(404);
    expect((await call('POST', '/logs/stderr', { target: 'meilisearch=info' })).status).toBe(204);
    expect((await call('GET', '/indexes/after_change')).status).toBe(404);
    while (!stderr.includes('/indexes/after_change')) await new Promise<void>((r) => (wake = r));

    // Lines are written in order, so the request before the change was never logged.
    expect(stderr).not.toContain('before_change');
    const lines = stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toContainEqual({
      timestamp: expect.any(String),
      level: 'INFO',
      fields: { message: 'request', method: 'GET', path: '/indexes/after_change', status: 404, ms: expect.any(Number) },
      target: 'quarry::http',
    });
  });
});

describe('logs and metrics options', () => {
  it('when given on the command line or in MEILI_* variables, then they are read', () => {
    const dflt = loadConfig([], {});
    expect([dflt.enableMetrics, dflt.enableLogsRoute, dflt.logsMode]).toEqual([false, false, 'human']);
    const cli = loadConfig(
      ['--experimental-enable-metrics', '--experimental-enable-logs-route', '--experimental-logs-mode', 'Json'],
      {},
    );
    expect([cli.enableMetrics, cli.enableLogsRoute, cli.logsMode]).toEqual([true, true, 'json']);
    const env = loadConfig([], {
      MEILI_EXPERIMENTAL_ENABLE_METRICS: 'true',
      MEILI_EXPERIMENTAL_ENABLE_LOGS_ROUTE: 'true',
      MEILI_EXPERIMENTAL_LOGS_MODE: 'HUMAN',
    });
    expect([env.enableMetrics, env.enableLogsRoute, env.logsMode]).toEqual([true, true, 'human']);
    expect(() => loadConfig(['--experimental-logs-mode', 'jsonx'], {})).toThrow(ConfigError);
  });

  it('when --experimental-enable-logs-route is given, then the logsRoute feature is on', async () => {
    const t = await startTestServer({ args: ['--experimental-enable-logs-route'] });
    try {
      expect((await t.api('GET', '/experimental-features')).body.logsRoute).toBe(true);
      expect((await t.api('POST', '/logs/stderr', { body: { target: 'off' } })).status).toBe(204);
    } finally {
      await t.close();
    }
  });
});
