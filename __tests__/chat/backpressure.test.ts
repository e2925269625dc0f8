/**
 * A chat completion streams at the pace of its client (`ts/http/event-stream.ts`): a client
 * that stops reading holds the conversation back (no next provider round while its events wait),
 * is cut after the stall limit (`--experimental-chat-stall-timeout-ms`, shortened here), and the
 * events waiting for it are held in the response budget, which refuses a new completion while
 * it is spent. Searches of other clients keep answering meanwhile.
 */
import http from 'node:http';
import { startTestServer, MASTER_KEY, type TestServer } from '../helpers/server';
import { chunk, type FakeProvider, type ProviderAnswer, searchCall, startProvider } from './provider';

jest.setTimeout(120_000);

const BUDGET = 1_000_000;
const ROUNDS = 20;

/** Polls `cond` until it holds; throws past `ms` (a generous bound, not an assertion on time). */
async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A round of `count` content chunks of `size` characters, ending with a search (so the model asks again) or a stop. */
function round(count: number, size: number, then: 'search' | 'stop'): ProviderAnswer {
  const text = 'x'.repeat(size);
  const contents = Array.from({ length: count }, () => chunk({ content: text }));
  if (then === 'stop') return { chunks: [chunk({ role: 'assistant', content: '' }), ...contents, chunk({}, 'stop')] };
  return {
    chunks: [
      chunk({ role: 'assistant', content: '' }),
      ...contents,
      ...(searchCall({ index_uid: 'movies', q: 'star', filter: '' }) as { chunks: Array<Record<string, unknown>> })
        .chunks,
    ],
  };
}

/** A completion whose client reads nothing once the headers arrived, until `resume`. */
function stalledClient(url: string) {
  const state = { status: 0, received: 0, text: '', ended: false, aborted: false };
  let response: http.IncomingMessage | null = null;
  const req = http.request(`${url}/chats/ws/chat/completions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${MASTER_KEY}`, 'Content-Type': 'application/json' },
  });
  req.on('error', () => {
    state.aborted = true;
  });
  req.on('response', (res) => {
    state.status = res.statusCode ?? 0;
    response = res;
    res.pause();
    res.on('aborted', () => {
      state.aborted = true;
    });
    res.on('error', () => {
      state.aborted = true;
    });
    res.on('end', () => {
      state.ended = true;
    });
  });
  req.end(JSON.stringify({ model: 'gpt-5', stream: true, messages: [{ role: 'user', content: 'tell me a lot' }] }));
  return {
    state,
    /** Reads what Quarry sent, to its end. */
    resume: () => {
      const res = response!;
      res.on('data', (d: Buffer) => {
        state.received += d.length;
        if (state.text.length < 100_000) state.text += d.toString('latin1');
      });
      res.resume();
    },
    close: () => req.destroy(),
  };
}

describe('a chat stream whose client stops reading', () => {
  let s: TestServer;
  let provider: FakeProvider;
  let warn: jest.SpyInstance;
  const cuts = () => warn.mock.calls.filter((c) => String(c[0]).startsWith('chat stream cut')).length;

  beforeAll(async () => {
    s = await startTestServer({
      args: ['--experimental-chat-stall-timeout-ms', '2000', '--experimental-search-response-budget', String(BUDGET)],
    });
    provider = await startProvider();
    warn = jest.spyOn(s.server.deps.logger, 'warn');
    await s.api('PATCH', '/experimental-features', { body: { chatCompletions: true } });
    const t = await s.api('POST', '/indexes/movies/documents', {
      body: [
        { id: 1, title: 'Star Wars', year: 1977 },
        { id: 2, title: 'Star Trek', year: 1979 },
      ],
    });
    await s.waitTask(t.body.taskUid);
    await s.api('PATCH', '/chats/ws/settings', {
      body: { source: 'openAi', baseUrl: provider.url, apiKey: 'sk-test' },
    });
  });
  afterAll(async () => {
    warn.mockRestore();
    await s.close();
    await provider.close();
  });

  it('when it stops reading, then no next provider round starts, other searches answer, and past the stall limit its stream is cut', async () => {
    // Each round streams 4 MiB of content and then searches, so the model is asked again, 20 times
    // over: 80 MiB that Quarry would read and buffer if it did not wait for its client.
    provider.fallback = round(16, 256 * 1024, 'search');
    const client = stalledClient(s.url);
    const before = cuts();
    await until(() => cuts() > before, 'the stalled stream is cut');
    expect(client.state.status).toBe(200);
    const rounds = provider.requests.length;
    expect(rounds).toBeGreaterThanOrEqual(1);
    expect(rounds).toBeLessThan(ROUNDS / 2);
    // Whatever the provider sent was read whole; no round was left half-read.
    expect(provider.streams.every((p) => p.ended)).toBe(true);
    await until(() => s.server.deps.responseBudget.inFlight === 0, 'the cut stream gives its bytes back');

    // Meanwhile another client's search answers.
    const search = await s.api('POST', '/indexes/movies/search', { body: { q: 'star' } });
    expect(search.status).toBe(200);
    expect(search.body.hits).toHaveLength(2);

    // The client reads what reached it: a stream cut short, without `[DONE]`.
    client.resume();
    await until(() => client.state.aborted || client.state.ended, 'the client sees the end of its stream');
    expect(client.state.aborted).toBe(true);
    expect(client.state.received).toBeLessThan(rounds * 4 * 1024 * 1024 + 1024 * 1024);
    expect(client.state.text.startsWith('retry: 10000\n\ndata: {')).toBe(true);
    expect(client.state.text.includes('[DONE]')).toBe(false);
    // The conversation ended with the stream: no round was asked of the provider after the cut.
    expect(provider.requests.length).toBe(rounds);
  });

  it('when its waiting events fill the response budget, then a new completion is refused until the stream is cut, and one is answered after', async () => {
    // Content chunks larger than the budget: one waiting in Quarry's buffer spends it.
    provider.fallback = round(12, 2 * 1024 * 1024, 'stop');
    const client = stalledClient(s.url);
    const before = cuts();
    await until(() => s.server.deps.responseBudget.inFlight >= BUDGET || cuts() > before, 'the budget is spent');
    expect(cuts()).toBe(before);
    const asked = provider.requests.length;
    const refused = await fetch(`${s.url}/chats/ws/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${MASTER_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const body = (await refused.json()) as { code: string };
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('10');
    expect(body.code).toBe('too_many_search_requests');
    // Refused before anything was asked of the provider.
    expect(provider.requests.length).toBe(asked);

    await until(() => cuts() > before, 'the stalled stream is cut');
    await until(() => s.server.deps.responseBudget.inFlight === 0, 'the cut stream gives its bytes back');
    client.close();
    provider.fallback = round(2, 10, 'stop');
    const answered = await fetch(`${s.url}/chats/ws/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${MASTER_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(answered.status).toBe(200);
    const text = await answered.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(provider.requests.length).toBe(asked + 1);
  });
});
