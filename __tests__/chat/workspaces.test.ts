/**
 * `/chats` workspaces over HTTP: the routes, shapes, defaults, validation (codes and messages),
 * the hidden `apiKey`, the feature flag and the key actions, each as Meilisearch 1.50 answers
 * them (probed on the reference with the `chatCompletions` flag on and off).
 */
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_PROMPTS } from '../../ts/chats/settings';
import { startTestServer, tempDir, type TestServer } from '../helpers/server';

const settings = (over: Record<string, unknown> = {}) => ({
  source: 'openAi',
  orgId: null,
  projectId: null,
  apiVersion: null,
  deploymentId: null,
  baseUrl: null,
  apiKey: null,
  prompts: DEFAULT_PROMPTS,
  ...over,
});

describe('the /chats routes', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  const patch = (ws: string, body: unknown) => s.api('PATCH', `/chats/${ws}/settings`, { body });
  const enable = (on: boolean) => s.api('PATCH', '/experimental-features', { body: { chatCompletions: on } });

  it('when the chatCompletions feature is off, then every route answers feature_not_enabled with its action', async () => {
    await enable(false);
    const asked: Array<[string, string, string]> = [
      ['GET', '/chats', 'listing the chats'],
      ['GET', '/chats/ws', 'displaying a chat'],
      ['DELETE', '/chats/ws', 'deleting a chat'],
      ['GET', '/chats/ws/settings', 'using the /chats/settings route'],
      ['PATCH', '/chats/ws/settings', 'using the /chats/settings route'],
      ['DELETE', '/chats/ws/settings', 'using the /chats/settings route'],
      ['POST', '/chats/ws/chat/completions', 'using the /chats chat completions route'],
    ];
    for (const [method, path, what] of asked) {
      const body = method === 'PATCH' ? {} : method === 'POST' ? { model: 'm', messages: [], stream: true } : undefined;
      const r = await s.api(method, path, { body });
      expect({ path, status: r.status, body: r.body }).toEqual({
        path,
        status: 400,
        body: {
          message: `${what} requires enabling the \`chat completions\` experimental feature. See https://github.com/orgs/meilisearch/discussions/835`,
          code: 'feature_not_enabled',
          type: 'invalid_request',
          link: 'https://docs.meilisearch.com/errors#feature_not_enabled',
        },
      });
    }
    // The request is read first: its own errors come before the feature's.
    expect((await s.api('GET', '/chats?limit=x')).body.code).toBe('invalid_index_limit');
    expect((await s.api('PATCH', '/chats/ws/settings', { body: { source: 1 } })).body.code).toBe('bad_request');
    expect((await s.api('PATCH', '/chats/ws/settings', { raw: '{}', contentType: 'text/plain' })).body.code).toBe(
      'invalid_content_type',
    );
    expect((await s.api('POST', '/chats/ws/chat/completions', { body: { messages: [] } })).body.message).toBe(
      'Json deserialize error: missing field `model` at line 1 column 15',
    );
    await enable(true);
  });

  it('when a workspace is patched, then it exists with the defaults, and is listed, shown and deleted', async () => {
    await enable(true);
    expect((await s.api('GET', '/chats/w1/settings')).body).toEqual({
      message: 'Chat `w1` not found',
      code: 'chat_not_found',
      type: 'invalid_request',
      link: 'https://docs.meilisearch.com/errors#chat_not_found',
    });
    expect((await s.api('GET', '/chats/w1')).body.message).toBe('chat w1 not found');
    const created = await patch('w1', {});
    expect(created.status).toBe(200);
    expect(created.body).toEqual(settings());
    expect(created.body.prompts.system.startsWith('You are a highly capable research assistant')).toBe(true);
    await patch('a0', {});
    expect((await s.api('GET', '/chats')).body).toEqual({
      results: [{ uid: 'a0' }, { uid: 'w1' }],
      offset: 0,
      limit: 20,
      total: 2,
    });
    expect((await s.api('GET', '/chats?offset=1&limit=1')).body).toEqual({
      results: [{ uid: 'w1' }],
      offset: 1,
      limit: 1,
      total: 2,
    });
    expect((await s.api('GET', '/chats/w1')).body).toEqual({ uid: 'w1' });
    expect((await s.api('DELETE', '/chats/a0')).status).toBe(204);
    const again = await s.api('DELETE', '/chats/a0');
    expect([again.status, again.body.code, again.body.message]).toEqual([404, 'chat_not_found', 'chat a0 not found']);
    expect((await s.api('GET', '/chats')).body.total).toBe(1);
  });

  it('when fields are patched, then they merge, null resets, and apiKey is hidden as Meilisearch hides it', async () => {
    await enable(true);
    const r = await patch('w2', {
      source: 'mistral',
      apiKey: 'sk-abcdefghijklmnopqrstuvwxyz',
      baseUrl: 'http://127.0.0.1:1/v1',
      prompts: { system: 'sys' },
    });
    expect(r.body).toEqual(
      settings({
        source: 'mistral',
        apiKey: 'sk-XXXXX...',
        baseUrl: 'http://127.0.0.1:1/v1',
        prompts: { ...DEFAULT_PROMPTS, system: 'sys' },
      }),
    );
    const hidden: Array<[string, string]> = [
      ['abcd', 'XXX...'],
      ['sk-proj-1234567890', 'skXXXX...'],
      ['sk-abcdefghijklmnopqrstuvwxyz', 'sk-XXXXX...'],
      ['sk-abcdefghijklmnopqrstuvwxyz0123', 'sk-abXXXXXX...'],
    ];
    for (const [key, shown] of hidden) expect((await patch('w2', { apiKey: key })).body.apiKey).toBe(shown);
    expect((await s.api('GET', '/chats/w2/settings')).body.apiKey).toBe('sk-abXXXXXX...');
    const merged = await patch('w2', { orgId: 'o', prompts: { searchQParam: 'q1' } });
    expect(merged.body.prompts).toEqual({ ...DEFAULT_PROMPTS, system: 'sys', searchQParam: 'q1' });
    expect(merged.body.orgId).toBe('o');
    const reset = await patch('w2', { orgId: null, source: null, prompts: { system: null } });
    expect([reset.body.orgId, reset.body.source, reset.body.prompts.system, reset.body.prompts.searchQParam]).toEqual([
      null,
      'openAi',
      DEFAULT_PROMPTS.system,
      'q1',
    ]);
    expect((await patch('w2', { prompts: null })).body.prompts).toEqual(DEFAULT_PROMPTS);
    const cleared = await s.api('DELETE', '/chats/w2/settings');
    expect([cleared.status, cleared.body]).toEqual([200, settings()]);
    expect((await s.api('GET', '/chats/w2')).status).toBe(200);
    expect((await s.api('DELETE', '/chats/none/settings')).body.code).toBe('chat_not_found');
  });

  it('when a body is invalid, then the first bad field answers its code and deserr message', async () => {
    await enable(true);
    const cases: Array<[unknown, string, string]> = [
      [
        { source: 'foo' },
        'bad_request',
        'Unknown value `foo` at `.source`: expected one of `openAi`, `mistral`, `azureOpenAi`, `vLlm`',
      ],
      [
        { source: 'OpenAi' },
        'bad_request',
        'Unknown value `OpenAi` at `.source`: did you mean `openAi`? expected one of `openAi`, `mistral`, `azureOpenAi`, `vLlm`',
      ],
      [
        { source: 1 },
        'bad_request',
        'Invalid value type at `.source`: expected a string, but found a positive integer: `1`',
      ],
      [
        { unknown: 1 },
        'bad_request',
        'Unknown field `unknown`: expected one of `source`, `orgId`, `projectId`, `apiVersion`, `deploymentId`, `baseUrl`, `apiKey`, `prompts`',
      ],
      [
        { prompts: { preQuery: 'x' } },
        'bad_request',
        'Unknown field `preQuery` inside `.prompts`: expected one of `system`, `searchDescription`, `searchQParam`, `searchFilterParam`, `searchIndexUidParam`',
      ],
      [
        { prompts: 1 },
        'bad_request',
        'Invalid value type at `.prompts`: expected an object, but found a positive integer: `1`',
      ],
      [
        { prompts: { system: 1 } },
        'invalid_chat_completion_system_prompt',
        'Invalid value type at `.prompts.system`: expected a string, but found a positive integer: `1`',
      ],
      [
        { prompts: { searchDescription: 1 } },
        'invalid_chat_completion_search_description_prompt',
        'Invalid value type at `.prompts.searchDescription`: expected a string, but found a positive integer: `1`',
      ],
      [
        { prompts: { searchQParam: 1 } },
        'invalid_chat_completion_search_query_param_prompt',
        'Invalid value type at `.prompts.searchQParam`: expected a string, but found a positive integer: `1`',
      ],
      [
        { prompts: { searchFilterParam: 1 } },
        'invalid_chat_completion_search_filter_param_prompt',
        'Invalid value type at `.prompts.searchFilterParam`: expected a string, but found a positive integer: `1`',
      ],
      [
        { prompts: { searchIndexUidParam: 1 } },
        'invalid_chat_completion_search_index_uid_param_prompt',
        'Invalid value type at `.prompts.searchIndexUidParam`: expected a string, but found a positive integer: `1`',
      ],
      [
        { orgId: 1 },
        'invalid_chat_completion_org_id',
        'Invalid value type at `.orgId`: expected a string, but found a positive integer: `1`',
      ],
      [
        { projectId: 1 },
        'invalid_chat_completion_project_id',
        'Invalid value type at `.projectId`: expected a string, but found a positive integer: `1`',
      ],
      [
        { apiVersion: 1 },
        'invalid_chat_completion_api_version',
        'Invalid value type at `.apiVersion`: expected a string, but found a positive integer: `1`',
      ],
      [
        { deploymentId: 1 },
        'invalid_chat_completion_deployment_id',
        'Invalid value type at `.deploymentId`: expected a string, but found a positive integer: `1`',
      ],
      [
        { baseUrl: 1 },
        'invalid_chat_completion_base_api',
        'Invalid value type at `.baseUrl`: expected a string, but found a positive integer: `1`',
      ],
      [
        { apiKey: 1 },
        'invalid_chat_completion_api_key',
        'Invalid value type at `.apiKey`: expected a string, but found a positive integer: `1`',
      ],
      [
        { orgId: 1, source: 'foo' },
        'invalid_chat_completion_org_id',
        'Invalid value type at `.orgId`: expected a string, but found a positive integer: `1`',
      ],
      [[], 'bad_request', 'Invalid value type: expected an object, but found an array: `[]`'],
      [null, 'bad_request', 'Invalid value type: expected an object, but found null'],
      [{ source: 'vLlm' }, 'bad_request', 'vLlm requires setting a valid `baseUrl`'],
      [
        { source: 'azureOpenAi', baseUrl: 'http://127.0.0.1:1' },
        'bad_request',
        'azureOpenAi requires setting a valid `baseUrl`, `deploymentId`, and `apiVersion`',
      ],
    ];
    for (const [body, code, message] of cases) {
      const r = await patch('w3', body);
      expect({ body, status: r.status, code: r.body.code, message: r.body.message }).toEqual({
        body,
        status: 400,
        code,
        message,
      });
    }
    // None of the refused patches created the workspace.
    expect((await s.api('GET', '/chats/w3')).status).toBe(404);
    expect((await s.api('PATCH', '/chats/w3/settings', { raw: '{}', contentType: 'text/plain' })).body.code).toBe(
      'invalid_content_type',
    );
    expect((await s.api('GET', '/chats?limit=-1')).body).toMatchObject({
      code: 'invalid_index_limit',
      message: 'Invalid value in parameter `limit`: could not parse `-1` as a positive integer',
    });
    expect((await s.api('GET', '/chats?offset=x')).body.code).toBe('invalid_index_offset');
    expect((await s.api('GET', '/chats?foo=x')).body).toMatchObject({
      code: 'bad_request',
      message: 'Unknown parameter `foo`: expected one of `offset`, `limit`',
    });
    expect((await s.api('PUT', '/chats/w3/settings', { body: {} })).status).toBe(405);
    expect((await s.api('PATCH', '/chats/w3', { body: {} })).status).toBe(405);
  });

  it('when keys call the routes, then chats.get, chats.delete and chatsSettings.get/update are needed, on keys of every index', async () => {
    await enable(true);
    await patch('w4', {});
    const key = async (actions: string[], indexes = ['*']) =>
      (await s.api('POST', '/keys', { body: { actions, indexes, expiresAt: null } })).body.key as string;
    const getter = await key(['chats.get']);
    // Workspace actions are global: an index-scoped key cannot hold them.
    const scoped = await s.api('POST', '/keys', {
      body: { actions: ['chats.get'], indexes: ['movies'], expiresAt: null },
    });
    expect(scoped.body.code).toBe('index_scoped_api_key_with_global_action');
    const settingsGetter = await key(['chatsSettings.get']);
    const updater = await key(['chatsSettings.update']);
    const deleter = await key(['chats.delete']);
    const readAll = await key(['*.get']);
    expect((await s.api('GET', '/chats', { key: getter })).status).toBe(200);
    expect((await s.api('GET', '/chats/w4', { key: getter })).status).toBe(200);
    expect((await s.api('GET', '/chats/w4/settings', { key: getter })).status).toBe(403);
    expect((await s.api('GET', '/chats/w4/settings', { key: settingsGetter })).status).toBe(200);
    expect((await s.api('GET', '/chats/w4/settings', { key: readAll })).status).toBe(200);
    expect((await s.api('PATCH', '/chats/w4/settings', { key: settingsGetter, body: {} })).status).toBe(403);
    expect((await s.api('PATCH', '/chats/w4/settings', { key: updater, body: { orgId: 'x' } })).status).toBe(200);
    // Resetting a workspace's settings is an update.
    expect((await s.api('DELETE', '/chats/w4/settings', { key: updater })).status).toBe(200);
    expect((await s.api('DELETE', '/chats/w4', { key: updater })).status).toBe(403);
    expect((await s.api('DELETE', '/chats/w4', { key: deleter })).status).toBe(204);
    expect((await s.api('GET', '/chats', { key: null })).body.code).toBe('missing_authorization_header');
    // Meilisearch 1.50 has no `chatsSettings.delete` action.
    expect(
      (await s.api('POST', '/keys', { body: { actions: ['chatsSettings.delete'], indexes: ['*'], expiresAt: null } }))
        .body.code,
    ).toBe('invalid_api_key_actions');
  });

  it('when the server restarts, then the workspaces and their keys are still there', async () => {
    await enable(true);
    await patch('kept', { source: 'mistral', apiKey: 'sk-kept-0123456789' });
    const dbPath = s.dbPath;
    await s.close();
    s = await startTestServer({ dbPath });
    const r = await s.api('GET', '/chats/kept/settings');
    expect([r.body.source, r.body.apiKey]).toEqual(['mistral', 'skXXXX...']);
  });

  it('when a dump is made and imported, then the workspaces travel whole in chat-completions-settings/, as Meilisearch writes them', async () => {
    const dumpDir = tempDir();
    const a = await startTestServer({ args: ['--dump-dir', dumpDir] });
    try {
      await a.api('PATCH', '/experimental-features', { body: { chatCompletions: true } });
      await a.api('PATCH', '/chats/travel/settings', {
        body: { source: 'mistral', apiKey: 'sk-secret-123456789', prompts: { system: 'hi' } },
      });
      await a.api('PATCH', '/chats/a%2Fb/settings', { body: {} });
      const done = await a.waitTask((await a.api('POST', '/dumps')).body.taskUid);
      expect(done.status).toBe('succeeded');
      const file = path.join(dumpDir, `${done.details.dumpUid}.dump`);
      const b = await startTestServer({ args: ['--import-dump', file] });
      try {
        expect((await b.api('GET', '/chats')).body.results).toEqual([{ uid: 'a/b' }, { uid: 'travel' }]);
        const r = await b.api('GET', '/chats/travel/settings');
        expect(r.body).toEqual(
          settings({ source: 'mistral', apiKey: 'skXXXX...', prompts: { ...DEFAULT_PROMPTS, system: 'hi' } }),
        );
      } finally {
        await b.close();
      }
      expect(fs.existsSync(file)).toBe(true);
    } finally {
      await a.close();
    }
  });
});
