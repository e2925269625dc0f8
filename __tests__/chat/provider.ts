/**
 * A small loopback server that speaks the OpenAI chat completions API as a provider does:
 * `POST .../chat/completions` answered as server-sent events (content chunks, tool calls split
 * across chunks, `[DONE]`), or an error. Each test scripts its answers (`next`) and reads what
 * Quarry sent (`requests`) and how far each answer's stream got (`streams`).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProviderRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** One answer: chunks streamed as events (each an object, or a raw `data:` text), or an error status and body. */
export type ProviderAnswer =
  | { chunks: Array<Record<string, unknown> | string>; done?: boolean }
  | { status: number; body: string; contentType?: string };

export const chunk = (
  delta: Record<string, unknown>,
  finish: string | null = null,
  extra: Record<string, unknown> = {},
) => ({
  id: 'chatcmpl-test',
  object: 'chat.completion.chunk',
  created: 1700000000,
  model: 'fake-model',
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
});

/** The chunks of a text answer, `words` one per chunk. */
export function textAnswer(...words: string[]): ProviderAnswer {
  return {
    chunks: [chunk({ role: 'assistant', content: '' }), ...words.map((w) => chunk({ content: w })), chunk({}, 'stop')],
  };
}

/** The chunks of one `_meiliSearchInIndex` call, its arguments split in two chunks. */
export function searchCall(args: Record<string, unknown>, id = 'call_1'): ProviderAnswer {
  const text = JSON.stringify(args);
  const half = Math.floor(text.length / 2);
  return {
    chunks: [
      chunk({
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id, type: 'function', function: { name: '_meiliSearchInIndex', arguments: '' } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: text.slice(0, half) } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: text.slice(half) } }] }),
      chunk({}, 'tool_calls'),
    ],
  };
}

/** How far the provider got in streaming one answer. */
export interface StreamProgress {
  /** Bytes and chunks written so far, of `of` chunks. */
  written: number;
  chunks: number;
  of: number;
  /** Whether a write is waiting for the reader (Quarry) to take what was written. */
  blocked: boolean;
  /** Whether the whole answer was written. */
  ended: boolean;
}

export interface FakeProvider {
  /** The base URL to configure (`.../v1`). */
  url: string;
  requests: ProviderRequest[];
  /** One per streamed answer, in the order of `requests`. */
  streams: StreamProgress[];
  /** Answers for the coming requests, in order; past them, `fallback` answers. */
  next(...answers: ProviderAnswer[]): void;
  fallback: ProviderAnswer;
  close(): Promise<void>;
}

export async function startProvider(): Promise<FakeProvider> {
  const queue: ProviderAnswer[] = [];
  const requests: ProviderRequest[] = [];
  const streams: StreamProgress[] = [];
  const state = { fallback: textAnswer('Hello') as ProviderAnswer };
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d) => parts.push(d));
    req.on('end', () => {
      const text = Buffer.concat(parts).toString();
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: text ? JSON.parse(text) : null,
      });
      const answer = queue.shift() ?? state.fallback;
      if ('status' in answer) {
        res.writeHead(answer.status, { 'Content-Type': answer.contentType ?? 'application/json' });
        res.end(answer.body);
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      const progress: StreamProgress = {
        written: 0,
        chunks: 0,
        of: answer.chunks.length,
        blocked: false,
        ended: false,
      };
      streams.push(progress);
      void (async () => {
        // Written at the pace Quarry reads: a write the socket cannot take waits for its drain.
        for (const c of answer.chunks) {
          const text = `data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`;
          progress.written += Buffer.byteLength(text);
          progress.chunks += 1;
          if (!res.write(text)) {
            progress.blocked = true;
            const drained = await new Promise<boolean>((r) => {
              const done = (ok: boolean) => {
                res.off('drain', onDrain);
                res.off('close', onClose);
                r(ok);
              };
              const onDrain = () => done(true);
              const onClose = () => done(false);
              res.once('drain', onDrain);
              res.once('close', onClose);
            });
            progress.blocked = false;
            if (!drained) return;
          }
        }
        if (answer.done !== false) res.write('data: [DONE]\n\n');
        res.end();
        progress.ended = true;
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    url,
    requests,
    streams,
    next: (...answers) => queue.push(...answers),
    get fallback() {
      return state.fallback;
    },
    set fallback(a: ProviderAnswer) {
      state.fallback = a;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The events of a server-sent events body: each `data:` payload, JSON-parsed unless `[DONE]`. */
export function events(text: string): any[] {
  return text
    .split('\n\n')
    .map((block) =>
      block
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n'),
    )
    .filter((d) => d.length > 0)
    .map((d) => (d === '[DONE]' ? d : JSON.parse(d)));
}
