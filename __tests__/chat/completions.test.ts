/**
 * `POST /chats/{workspace}/chat/completions` with the `openai` npm package as the client and a
 * loopback server speaking the OpenAI API as the provider: streamed answers, the search tool
 * and the reporting tools, key scopes and tenant tokens, provider errors, the sources' request
 * shapes, and the refusals Meilisearch 1.50 answers (settled on the reference: what it sends the
 * provider and what it streams back were compared byte for byte).
 */
import { createHmac } from 'node:crypto';
import OpenAI from 'openai';
import { DEFAULT_PROMPTS } from '../../ts/chats/settings';
import { startTestServer, type TestServer } from '../helpers/server';
import { chunk, events, type FakeProvider, searchCall, startProvider, textAnswer } from './provider';

const REPORTING = ['_meiliSearchProgress', '_meiliSearchSources', '_meiliAppendConversationMessage'].map((name) => ({
  type: 'function' as const,
  function: { name, description: name },
}));

function sign(claims: unknown, secret: string): string {
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const head = enc({ alg: 'HS256', typ: 'JWT' });
  const body = enc(claims);
  return `${head}.${body}.${createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url')}`;
}

describe('chat completions', () => {
  let s: TestServer;
  let provider: FakeProvider;
  const client = (key: string | undefined = undefined) =>
    new OpenAI({ baseURL: `${s.url}/chats/ws`, apiKey: key ?? 'test-master-key-0123456789', maxRetries: 0 });
  /** A completion read raw: status, headers and events. */
  const raw = async (body: unknown, key = 'test-master-key-0123456789', ws = 'ws') => {
    const r = await fetch(`${s.url}/chats/${ws}/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await r.text();
    return {
      status: r.status,
      headers: r.headers,
      text,
      events: r.headers.get('content-type') === 'text/event-stream' ? events(text) : JSON.parse(text),
    };
  };
  const ask = (content: string, extra: Record<string, unknown> = {}) => ({
    model: 'gpt-5',
    stream: true,
    messages: [{ role: 'user', content }],
    ...extra,
  });

  beforeAll(async () => {
    s = await startTestServer();
    provider = await startProvider();
    await s.api('PATCH', '/experimental-features', { body: { chatCompletions: true } });
    await s.api('POST', '/indexes/movies/documents', {
      body: [
        { id: 1, title: 'Star Wars', year: 1977, genre: 'scifi', secret: 's1' },
        { id: 2, title: 'Star Trek', year: 1979, genre: 'scifi', secret: 's2' },
        { id: 3, title: 'Amelie', year: 2001, genre: 'romance', secret: 's3' },
      ],
    });
    const t = await s.api('PATCH', '/indexes/movies/settings', {
      body: {
        filterableAttributes: ['year', 'genre'],
        displayedAttributes: ['id', 'title', 'year', 'genre'],
        chat: { description: 'A movie index', documentTemplate: '{{doc.title}} ({{doc.year}}) {{doc.secret}}' },
      },
    });
    await s.waitTask(t.body.taskUid);
    const b = await s.api('POST', '/indexes/books/documents', { body: [{ id: 1, title: 'Dune' }] });
    await s.waitTask(b.body.taskUid);
    await s.api('PATCH', '/chats/ws/settings', {
      body: { source: 'openAi', baseUrl: provider.url, apiKey: 'sk-provider-key', orgId: 'org-1' },
    });
  });
  afterAll(async () => {
    await s.close();
    await provider.close();
  });
  beforeEach(() => {
    provider.requests.length = 0;
  });

  it('when the model answers, then the openai client streams its text, and the provider got the prompt and the search tool', async () => {
    provider.next(textAnswer('Hello', ' there'));
    const stream = await client().chat.completions.create({
      model: 'gpt-5',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.5,
    });
    let text = '';
    let finish: string | null = null;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect([text, finish]).toEqual(['Hello there', 'stop']);
    expect(provider.requests).toHaveLength(1);
    const [req] = provider.requests;
    expect(req.url).toBe('/v1/chat/completions');
    expect([
      req.headers.authorization,
      req.headers['openai-organization'],
      req.headers['openai-beta'],
      req.headers.accept,
    ]).toEqual(['Bearer sk-provider-key', 'org-1', 'assistants=v2', 'text/event-stream']);
    expect(Object.keys(req.body)).toEqual(['messages', 'model', 'temperature', 'stream', 'stream_options', 'tools']);
    expect(req.body.messages).toEqual([
      { role: 'developer', content: DEFAULT_PROMPTS.system },
      { role: 'user', content: 'hi' },
    ]);
    expect(req.body.stream_options).toEqual({ include_usage: true });
    expect(req.body.tools).toHaveLength(1);
    const tool = req.body.tools[0].function;
    expect(tool.name).toBe('_meiliSearchInIndex');
    expect(tool.description).toBe(
      `${DEFAULT_PROMPTS.searchDescription}\n\n - books: \n\n\n\n - movies: A movie index\n\n`,
    );
    expect(tool.parameters.properties.index_uid.enum).toEqual(['books', 'movies']);
    expect(tool.parameters.properties.filter.description).toBe(
      `${DEFAULT_PROMPTS.searchFilterParam}\n## Facet distributions of the books index\n\n\n## Facet distributions of the movies index\ngenre: scifi, romance.\nyear: 2001, 1979, 1977.\n\n`,
    );
    expect(tool.parameters.required).toEqual(['index_uid', 'q', 'filter']);
  });

  it('when the model searches, then Quarry runs the search, reports progress, sources and messages, and the model answers from the rendered hits', async () => {
    provider.next(searchCall({ index_uid: 'movies', q: 'star', filter: null }), textAnswer('Found', ' them'));
    const stream = await client().chat.completions.create({
      model: 'gpt-5',
      stream: true,
      messages: [{ role: 'user', content: 'star movies?' }],
      tools: REPORTING,
    });
    let text = '';
    const calls: Array<{ name: string; args: any }> = [];
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      for (const t of c.choices[0]?.delta?.tool_calls ?? [])
        calls.push({ name: t.function!.name!, args: JSON.parse(t.function!.arguments!) });
    }
    expect(text).toBe('Found them');
    const args = JSON.stringify({ index_uid: 'movies', q: 'star', filter: null });
    expect(calls).toEqual([
      {
        name: '_meiliSearchProgress',
        args: { call_id: 'call_1', function_name: '_meiliSearchInIndex', function_arguments: args },
      },
      {
        name: '_meiliAppendConversationMessage',
        args: {
          role: 'assistant',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: '_meiliSearchInIndex', arguments: args } }],
        },
      },
      // Sources as the index displays them (no `secret`); the model's text from the stored documents.
      {
        name: '_meiliSearchSources',
        args: {
          call_id: 'call_1',
          sources: [
            { id: 1, title: 'Star Wars', year: 1977, genre: 'scifi' },
            { id: 2, title: 'Star Trek', year: 1979, genre: 'scifi' },
          ],
        },
      },
      {
        name: '_meiliAppendConversationMessage',
        args: { role: 'tool', content: 'Star Wars (1977) s1\nStar Trek (1979) s2', tool_call_id: 'call_1' },
      },
    ]);
    expect(provider.requests).toHaveLength(2);
    // The reporting tools are never sent to the model.
    expect(provider.requests[0].body.tools.map((t: any) => t.function.name)).toEqual(['_meiliSearchInIndex']);
    expect(provider.requests[1].body.messages.slice(1)).toEqual([
      { role: 'user', content: 'star movies?' },
      {
        role: 'assistant',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: '_meiliSearchInIndex', arguments: args } }],
      },
      { role: 'tool', content: 'Star Wars (1977) s1\nStar Trek (1979) s2', tool_call_id: 'call_1' },
    ]);
  });

  it('when an index has no chat template, then the default one renders its searchable fields, within the index chat search parameters and byte limit', async () => {
    const docs = [
      { id: 1, title: 'Dune', author: 'Frank Herbert' },
      { id: 2, title: 'Dune Messiah', author: 'Frank Herbert' },
    ];
    await s.waitTask((await s.api('POST', '/indexes/sagas/documents', { body: docs })).body.taskUid);
    const t = await s.api('PATCH', '/indexes/sagas/settings', {
      body: {
        searchableAttributes: ['title', 'author'],
        sortableAttributes: ['id'],
        chat: { documentTemplateMaxBytes: 20, searchParameters: { limit: 1, sort: ['id:desc'] } },
      },
    });
    expect((await s.waitTask(t.body.taskUid)).status).toBe('succeeded');
    provider.next(searchCall({ index_uid: 'sagas', q: 'dune', filter: null }), textAnswer('ok'));
    await raw(ask('dune?'));
    // `id` is not searchable; the text is cut at 20 bytes; one hit, the last by id.
    expect(provider.requests[1].body.messages[3].content).toBe('title: Dune Messiah\n');
    provider.next(searchCall({ index_uid: 'books', q: 'dune', filter: null }), textAnswer('ok'));
    await raw(ask('dune?'));
    expect(provider.requests[3].body.messages[3].content).toBe('id: 1\ntitle: Dune\n');
    await s.waitTask((await s.api('DELETE', '/indexes/sagas')).body.taskUid);
  });

  it("when the metrics feature is on, then the searches and the tokens providers report are counted in Meilisearch's families", async () => {
    await s.api('PATCH', '/experimental-features', { body: { metrics: true } });
    const usage = chunk({}, null, {
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
    const answer = textAnswer('ok');
    provider.next(searchCall({ index_uid: 'movies', q: 'star', filter: null }), {
      chunks: [...(answer as { chunks: unknown[] }).chunks, usage] as any,
    });
    await raw(ask('star?', { model: 'counted-model' }));
    const text = (await s.api('GET', '/metrics')).text;
    const lines = text
      .split('\n')
      .filter(
        (l) => l.startsWith('meilisearch_chat_') || l.includes('path="/chats/{workspace_uid}/chat/completions",status'),
      );
    expect(lines).toEqual([
      'meilisearch_chat_completion_tokens_total{model="counted-model",workspace="ws"} 5',
      'meilisearch_chat_prompt_tokens_total{model="counted-model",workspace="ws"} 10',
      expect.stringMatching(/^meilisearch_chat_searches_total\{type="internal"\} [1-9]\d*$/),
      'meilisearch_chat_tokens_total{model="counted-model",workspace="ws"} 15',
      expect.stringMatching(
        /^meilisearch_http_requests_total\{method="POST",path="\/chats\/\{workspace_uid\}\/chat\/completions",status="200"\} \d+$/,
      ),
    ]);
  });

  it('when the answer streams, then it is server-sent events with X-Accel-Buffering: no and Meilisearch chunk shape, ending with [DONE]', async () => {
    provider.next(textAnswer('Hi'));
    const r = await raw(ask('hi'));
    expect(r.status).toBe(200);
    expect([r.headers.get('content-type'), r.headers.get('x-accel-buffering'), r.headers.get('cache-control')]).toEqual(
      ['text/event-stream', 'no', 'no-cache'],
    );
    expect(r.text.startsWith('retry: 10000\n\n')).toBe(true);
    expect(r.events[1]).toEqual({
      id: 'chatcmpl-test',
      choices: [
        {
          index: 0,
          delta: { content: 'Hi', function_call: null, tool_calls: null, role: null, refusal: null },
          finish_reason: null,
          logprobs: null,
        },
      ],
      created: 1700000000,
      model: 'fake-model',
      service_tier: null,
      system_fingerprint: null,
      object: 'chat.completion.chunk',
      usage: null,
    });
    expect(r.events[r.events.length - 1]).toBe('[DONE]');
  });

  it('when the key may search one index, then the tool lists only it, and a search elsewhere fails into the conversation with an error event', async () => {
    const key = (
      await s.api('POST', '/keys', {
        body: { actions: ['chatCompletions', 'search'], indexes: ['movies'], expiresAt: null },
      })
    ).body.key;
    provider.next(searchCall({ index_uid: 'books', q: 'dune', filter: null }), textAnswer('Sorry'));
    const r = await raw(ask('dune?', { tools: REPORTING }), key);
    expect(provider.requests[0].body.tools[0].function.parameters.properties.index_uid.enum).toEqual(['movies']);
    const tool = provider.requests[1].body.messages[3];
    expect(tool).toEqual({
      role: 'tool',
      content:
        'the search tool call failed with The API key cannot acces the index `books`, authorized indexes are ["movies"].',
      tool_call_id: 'call_1',
    });
    const error = r.events.find((e: any) => e.type === 'error');
    expect(error.error).toEqual({
      type: 'response_error',
      code: '403',
      message: 'The API key cannot acces the index `books`, authorized indexes are ["movies"].',
      param: null,
      event_id: null,
    });
    // No sources for a failed search.
    expect(
      r.events.some((e: any) => e.choices?.[0]?.delta?.tool_calls?.[0]?.function?.name === '_meiliSearchSources'),
    ).toBe(false);
  });

  it('when the key may chat but not search, then the search fails as the key is invalid', async () => {
    const key = (
      await s.api('POST', '/keys', { body: { actions: ['chatCompletions'], indexes: ['*'], expiresAt: null } })
    ).body.key;
    provider.next(searchCall({ index_uid: 'movies', q: 'star', filter: null }), textAnswer('Sorry'));
    await raw(ask('star?'), key);
    expect(provider.requests[1].body.messages[3].content).toBe(
      'the search tool call failed with The provided API key is invalid.',
    );
  });

  it('when a tenant token filters an index, then the model only sees what the token may search', async () => {
    const parent = (
      await s.api('POST', '/keys', {
        body: { actions: ['chatCompletions', 'search'], indexes: ['*'], expiresAt: null },
      })
    ).body;
    const token = sign({ searchRules: { movies: { filter: 'genre = romance' } }, apiKeyUid: parent.uid }, parent.key);
    provider.next(searchCall({ index_uid: 'movies', q: '', filter: null }), textAnswer('One'));
    const r = await raw(ask('all movies', { tools: REPORTING }), token);
    expect(r.status).toBe(200);
    expect(provider.requests[0].body.tools[0].function.parameters.properties.index_uid.enum).toEqual(['movies']);
    expect(provider.requests[1].body.messages[3].content).toBe('Amelie (2001) s3');
    const sources = r.events
      .map((e: any) => e.choices?.[0]?.delta?.tool_calls?.[0]?.function)
      .find((f: any) => f?.name === '_meiliSearchSources');
    expect(JSON.parse(sources.arguments).sources.map((d: any) => d.id)).toEqual([3]);
  });

  it('when the model sends a filter the index refuses, then the refusal is the search result and the sources are empty', async () => {
    provider.next(searchCall({ index_uid: 'movies', q: 'star', filter: 'title = x' }), textAnswer('Retry'));
    const r = await raw(ask('star?', { tools: REPORTING }));
    const content = provider.requests[1].body.messages[3].content as string;
    // The engine's words, without the `Index ...:` prefix of an HTTP answer, as Meilisearch gives the model.
    expect(content).toBe(
      'Attribute `title` is not filterable. Available filterable attribute patterns are: `genre`, `year`.\n1:6 title = x',
    );
    const sources = r.events
      .map((e: any) => e.choices?.[0]?.delta?.tool_calls?.[0]?.function)
      .find((f: any) => f?.name === '_meiliSearchSources');
    expect(JSON.parse(sources.arguments)).toEqual({ call_id: 'call_1', sources: [] });
    expect(r.events.some((e: any) => e.type === 'error')).toBe(false);
  });

  it('when the provider refuses, then its error reaches the openai client as Meilisearch reports it', async () => {
    provider.next({
      status: 401,
      body: JSON.stringify({
        error: {
          message: 'Incorrect API key provided: sk-bad.',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      }),
    });
    const stream = await client().chat.completions.create({
      model: 'gpt-5',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const failure = await (async () => {
      try {
        for await (const _ of stream);
      } catch (err) {
        return err as any;
      }
      return null;
    })();
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect([failure.message, failure.code, failure.type]).toEqual([
      'Incorrect API key provided: sk-bad.',
      'invalid_api_key',
      'invalid_request_error',
    ]);

    const cases: Array<[Parameters<FakeProvider['next']>[0], Record<string, unknown>]> = [
      [
        {
          status: 500,
          body: JSON.stringify({
            error: { message: 'The server had an error', type: 'server_error', param: null, code: null },
          }),
        },
        { type: 'server_error', code: null, message: 'The server had an error' },
      ],
      [
        { status: 502, body: 'bad gateway', contentType: 'text/plain' },
        { type: 'reqwest_error', code: null, message: 'error decoding response body' },
      ],
      [
        {
          chunks: [
            chunk({ role: 'assistant', content: 'partial' }),
            JSON.stringify({
              error: { message: 'mid-stream failure', type: 'server_error', param: null, code: 'boom' },
            }),
          ],
        },
        { type: 'json_deserialize_error', code: 'internal', message: 'missing field `id` at line 1 column 91' },
      ],
      [
        { chunks: [chunk({ role: 'assistant', content: 'cut' })], done: false },
        { type: 'stream_ended', code: null, message: 'Stream ended' },
      ],
    ];
    for (const [answer, error] of cases) {
      provider.next(answer);
      const r = await raw(ask('hi'));
      const last = r.events.slice(-2);
      expect(last[1]).toBe('[DONE]');
      expect(last[0]).toMatchObject({ type: 'error', error: { ...error, param: null, event_id: null } });
    }
  });

  it('when the request cannot be served, then Meilisearch refusals answer before any event', async () => {
    const refused = async (body: unknown, ws = 'ws') => {
      const r = await raw(body, undefined, ws);
      return [r.status, r.events.code, r.events.message];
    };
    expect(await refused({ model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] })).toEqual([
      501,
      'unimplemented_non_streaming_chat_completions',
      'Non-streamed chat completions is not implemented',
    ]);
    expect(await refused(ask('hi', { n: 2 }))).toEqual([
      501,
      'unimplemented_multi_choice_chat_completions',
      'You tried to specify n = 2 but only single choices are supported (n = 1).',
    ]);
    expect(await refused(ask('hi', { tools: [{ type: 'function', function: { name: 'weather' } }] }))).toEqual([
      501,
      'unimplemented_external_function_calling',
      'weather: External functions are not supported yet.',
    ]);
    expect(
      await refused(ask('hi', { tools: [{ type: 'function', function: { name: '_meiliSearchInIndex' } }] })),
    ).toEqual([400, 'bad_request', '_meiliSearchInIndex function is already defined.']);
    expect(await refused(ask('hi'), 'nope')).toEqual([404, 'chat_not_found', 'Chat `nope` not found']);
    expect(await refused({ messages: [] })).toEqual([
      400,
      'bad_request',
      'Json deserialize error: missing field `model` at line 1 column 15',
    ]);
    expect(await refused({})).toEqual([
      400,
      'bad_request',
      'Json deserialize error: missing field `messages` at line 1 column 2',
    ]);
    expect(provider.requests).toHaveLength(0);
    // The openai client sees the 501 as an API error.
    const err = await client()
      .chat.completions.create({ model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] })
      .then(
        () => null,
        (e: unknown) => e as any,
      );
    expect([err.status, err.error?.code]).toEqual([501, 'unimplemented_non_streaming_chat_completions']);
    const search = (await s.api('GET', '/keys')).body.results.find((k: any) => k.name === 'Default Search API Key').key;
    expect((await raw(ask('hi'), search)).status).toBe(403);
  });

  it("when the source is mistral, vLlm or azureOpenAi, then the provider is called with that source's URL, headers and system role", async () => {
    const root = provider.url.replace(/\/v1$/, '');
    await s.api('PATCH', '/chats/mistral/settings', {
      body: { source: 'mistral', baseUrl: provider.url, apiKey: 'mk', prompts: { system: 'Be brief.' } },
    });
    provider.next({
      status: 429,
      body: JSON.stringify({
        object: 'error',
        message: 'Service tier capacity exceeded for this model.',
        type: 'invalid_request_error',
        param: null,
        code: null,
      }),
    });
    const m = await raw(ask('hi'), undefined, 'mistral');
    expect(m.events[0].error).toMatchObject({
      type: 'invalid_request_error',
      message: 'Service tier capacity exceeded for this model.',
    });
    expect(provider.requests[0].body.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect(provider.requests[0].body.stream_options).toBeUndefined();
    expect(provider.requests[0].headers.authorization).toBe('Bearer mk');

    await s.api('PATCH', '/chats/vllm/settings', { body: { source: 'vLlm', baseUrl: `${provider.url}/` } });
    provider.next(textAnswer('ok'));
    await raw(ask('hi'), undefined, 'vllm');
    expect([provider.requests[1].url, provider.requests[1].headers.authorization]).toEqual([
      '/v1/chat/completions',
      undefined,
    ]);

    await s.api('PATCH', '/chats/azure/settings', {
      body: { source: 'azureOpenAi', baseUrl: root, apiKey: 'az-key', deploymentId: 'dep-1', apiVersion: '2024-10-21' },
    });
    provider.next(textAnswer('ok'));
    const a = await raw({ ...ask('hi'), model: 'gpt-4o' }, undefined, 'azure');
    expect(a.events.map((e: any) => e.choices?.[0]?.delta?.content ?? '').join('')).toBe('ok');
    const req = provider.requests[2];
    expect([req.url, req.headers['api-key'], req.headers.authorization, req.body.messages[0].role]).toEqual([
      '/openai/deployments/dep-1/chat/completions?api-version=2024-10-21',
      'az-key',
      undefined,
      'system',
    ]);
  });
});

describe('chat completions outside the allowed networks', () => {
  it('when the provider is outside the allowed networks, then nothing is sent and a transport error is streamed', async () => {
    const provider = await startProvider();
    const s = await startTestServer({ args: ['--experimental-allowed-ip-networks', '10.0.0.0/8'] });
    try {
      await s.api('PATCH', '/experimental-features', { body: { chatCompletions: true } });
      await s.api('PATCH', '/chats/ws/settings', { body: { baseUrl: provider.url } });
      const r = await fetch(`${s.url}/chats/ws/chat/completions`, {
        method: 'POST',
        headers: { Authorization: 'Bearer test-master-key-0123456789', 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      const got = events(await r.text());
      expect(got[0]).toMatchObject({ type: 'error', error: { type: 'transport_error', code: null } });
      expect(got[1]).toBe('[DONE]');
      expect(provider.requests).toHaveLength(0);
    } finally {
      await s.close();
      await provider.close();
    }
  });
});
