/**
 * Embedder settings: each source's field rules answer 400 before any task, with Meilisearch's
 * messages (first error only); a template that does not parse is refused too.
 */
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
let uid: string;
beforeAll(async () => {
  s = await startTestServer();
  uid = uniqueIndex('emb');
});
afterAll(async () => {
  await s.close();
});

const patch = (embedder: Record<string, unknown>) =>
  s.api('PATCH', `/indexes/${uid}/settings`, { body: { embedders: { x: embedder } } });

it.each([
  [
    { source: 'userProvided' },
    '`.embedders.x`: Missing field `dimensions` (note: this field is mandatory for source `userProvided`)',
  ],
  [
    { source: 'userProvided', dimensions: 3, documentTemplate: 'a' },
    '`.embedders.x`: Field `documentTemplate` unavailable for source `userProvided`.\n  - note: `documentTemplate` is available for sources: `openAi`, `huggingFace`, `ollama`, `rest`\n  - note: available fields for source `userProvided`: `source`, `dimensions`, `distribution`, `binaryQuantized`',
  ],
  [
    { source: 'rest', url: 'http://127.0.0.1:9/x' },
    '`.embedders.x`: Missing field `request` (note: this field is mandatory for source `rest`)',
  ],
  [
    { source: 'ollama', dimensions: 3 },
    '`.embedders.x`: Missing field `model` (note: this field is mandatory for source `ollama`)',
  ],
  [{ source: 'openAi', apiKey: 'k', dimensions: 0 }, '`.embedders.x.dimensions`: `dimensions` cannot be zero'],
  [
    { source: 'openAi', apiKey: 'k', model: 'nope' },
    '`.embedders.x.model`: Invalid model `nope` for OpenAI. Supported models: ["text-embedding-ada-002","text-embedding-3-small","text-embedding-3-large"]',
  ],
])('when an embedder is %j, then it is refused at once', async (embedder, message) => {
  const r = await patch(embedder);
  expect(r.status).toBe(400);
  expect(r.body).toMatchObject({ code: 'invalid_settings_embedders', message });
});

it('when a template does not parse, then it is refused at once', async () => {
  const r = await patch({ source: 'huggingFace', model: 'a/b', documentTemplate: '{{doc.x' });
  expect(r.status).toBe(400);
  expect(r.body.message).toMatch(
    /^`\.embedders\.x\.documentTemplate`: Invalid template: user error: cannot parse template: liquid:/,
  );
});

it('when the sources are configured as Meilisearch allows, then nothing reaches the network and the task succeeds', async () => {
  const r = await s.api('PATCH', `/indexes/${uid}/settings`, {
    body: {
      embedders: {
        hosted: { source: 'openAi', apiKey: 'k', model: 'text-embedding-3-small', documentTemplate: '{{doc.title}}' },
        local: { source: 'ollama', model: 'nomic-embed-text', url: 'http://127.0.0.1:9/api/embed' },
        rest: {
          source: 'rest',
          url: 'http://127.0.0.1:9/embed',
          request: { input: '{{text}}' },
          response: { embedding: '{{embedding}}' },
          dimensions: 3,
        },
        mine: { source: 'userProvided', dimensions: 3 },
      },
    },
  });
  expect(r.status).toBe(202);
  expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
});
