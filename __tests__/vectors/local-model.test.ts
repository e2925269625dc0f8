/**
 * The `huggingFace` source on a real local model (all-MiniLM-L6-v2, fetched by
 * `scripts/fetch-model.sh`, which `npm test` runs first): documents embedded when the embedder
 * is added and when they are added, semantic and hybrid search on query text, regeneration.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

const MODELS = path.resolve(__dirname, '../../.cache/models');
const ORT = path.join(MODELS, 'onnxruntime/libonnxruntime.so');
const MODEL = 'sentence-transformers/all-MiniLM-L6-v2';

let s: TestServer;
beforeAll(async () => {
  if (!fs.existsSync(path.join(MODELS, MODEL, 'model.onnx')) || !fs.existsSync(ORT)) {
    throw new Error(`the local model is missing under ${MODELS}: run \`bash scripts/fetch-model.sh\``);
  }
  s = await startTestServer({ args: ['--experimental-models-dir', MODELS, '--experimental-onnxruntime-path', ORT] });
});
afterAll(async () => {
  await s?.close();
});

const DOCS = [
  { id: 1, title: 'A cat sleeps on the warm windowsill' },
  { id: 2, title: 'Stock markets fell sharply after the bank report' },
  { id: 3, title: 'How to bake sourdough bread at home' },
  { id: 4, title: 'The football team won the championship final' },
  { id: 5, title: 'Puppies and dogs need daily walks' },
];

async function task(r: { body: { taskUid: number } }): Promise<any> {
  return s.waitTask(r.body.taskUid, 120_000);
}

const EMBEDDER = { source: 'huggingFace', model: MODEL, documentTemplate: '{{doc.title}}' };

describe('a local model', () => {
  let uid: string;
  beforeAll(async () => {
    uid = uniqueIndex('local');
    expect((await task(await s.api('POST', `/indexes/${uid}/documents`, { body: DOCS }))).status).toBe('succeeded');
    const t = await task(
      await s.api('PATCH', `/indexes/${uid}/settings`, { body: { embedders: { local: EMBEDDER } } }),
    );
    expect(t.error).toBeNull();
    expect(t.status).toBe('succeeded');
  }, 180_000);

  it('when the embedder is added to an index with documents, then every document is embedded', async () => {
    const st = await s.api('GET', `/indexes/${uid}/stats`);
    expect(st.body).toMatchObject({ numberOfEmbeddings: 5, numberOfEmbeddedDocuments: 5 });
    const d = await s.api('GET', `/indexes/${uid}/documents/1?retrieveVectors=true`);
    expect(d.body._vectors.local.regenerate).toBe(true);
    expect(d.body._vectors.local.embeddings).toHaveLength(1);
    expect(d.body._vectors.local.embeddings[0]).toHaveLength(384);
  });

  it('when the query is text, then the model embeds it and the nearest meaning ranks first', async () => {
    const r = await s.api('POST', `/indexes/${uid}/search`, {
      body: { q: 'kitten', hybrid: { embedder: 'local', semanticRatio: 1 }, showRankingScore: true },
    });
    expect(r.status).toBe(200);
    expect(r.body.hits[0].id).toBe(1);
    expect(r.body.semanticHitCount).toBe(5);
    const finance = await s.api('POST', `/indexes/${uid}/search`, {
      body: { q: 'economy and investors', hybrid: { embedder: 'local', semanticRatio: 1 }, limit: 1 },
    });
    expect(finance.body.hits[0].id).toBe(2);
  });

  it('when hybrid search finds no keyword, then the semantic side answers', async () => {
    const r = await s.api('POST', `/indexes/${uid}/search`, {
      body: { q: 'soccer', hybrid: { embedder: 'local', semanticRatio: 0.5 }, limit: 1 },
    });
    expect(r.body.hits.map((h: { id: number }) => h.id)).toEqual([4]);
    expect(r.body.semanticHitCount).toBe(1);
  });

  it("when documents are added or changed, then they are embedded again, and given vectors stay the user's", async () => {
    const own = Array.from({ length: 384 }, (_, i) => (i === 0 ? 1 : 0));
    const t = await task(
      await s.api('POST', `/indexes/${uid}/documents`, {
        body: [
          { id: 6, title: 'A kitten chases a ball of yarn' },
          { id: 1, title: 'Interest rates and inflation worry the central bank' },
          { id: 7, title: 'mine', _vectors: { local: { embeddings: own, regenerate: false } } },
        ],
      }),
    );
    expect(t.status).toBe('succeeded');
    expect((await s.api('GET', `/indexes/${uid}/stats`)).body).toMatchObject({
      numberOfEmbeddings: 7,
      numberOfEmbeddedDocuments: 7,
    });
    const r = await s.api('POST', `/indexes/${uid}/search`, {
      body: { q: 'kitten', hybrid: { embedder: 'local', semanticRatio: 1 }, limit: 1 },
    });
    expect(r.body.hits[0].id).toBe(6);
    const money = await s.api('POST', `/indexes/${uid}/similar`, { body: { id: 2, embedder: 'local', limit: 1 } });
    expect(money.body.hits[0].id).toBe(1);
    const d7 = await s.api('GET', `/indexes/${uid}/documents/7?retrieveVectors=true`);
    expect(d7.body._vectors.local).toEqual({ embeddings: [own], regenerate: false });
  }, 120_000);

  it('when the model is not on disk, then the settings task fails with vector_embedding_error', async () => {
    const t = await task(
      await s.api('PATCH', `/indexes/${uid}/settings`, {
        body: { embedders: { other: { source: 'huggingFace', model: 'nobody/no-such-model' } } },
      }),
    );
    expect(t.status).toBe('failed');
    expect(t.error.code).toBe('vector_embedding_error');
    expect((await s.api('GET', `/indexes/${uid}/stats`)).body.numberOfEmbeddings).toBe(7);
  });
});

describe('a composite embedder', () => {
  beforeAll(async () => {
    expect((await s.api('PATCH', '/experimental-features', { body: { compositeEmbedders: true } })).status).toBe(200);
  });

  it('when both halves run the same model, then documents index with one and queries embed with the other', async () => {
    const uid = uniqueIndex('composite');
    await task(await s.api('POST', `/indexes/${uid}/documents`, { body: DOCS }));
    const composite = {
      source: 'composite',
      indexingEmbedder: EMBEDDER,
      searchEmbedder: { source: 'huggingFace', model: MODEL },
    };
    const t = await task(
      await s.api('PATCH', `/indexes/${uid}/settings`, { body: { embedders: { both: composite } } }),
    );
    expect(t.error).toBeNull();
    const r = await s.api('POST', `/indexes/${uid}/search`, {
      body: { q: 'a kitten', hybrid: { embedder: 'both', semanticRatio: 1 }, limit: 1 },
    });
    expect(r.body.hits[0].id).toBe(1);
  }, 120_000);

  it('when the halves disagree, then the settings task fails; when a half is not allowed, then 400', async () => {
    const uid = uniqueIndex('composite');
    const cls = {
      source: 'composite',
      indexingEmbedder: EMBEDDER,
      searchEmbedder: { source: 'huggingFace', model: MODEL, pooling: 'forceCls' },
    };
    const t = await task(await s.api('PATCH', `/indexes/${uid}/settings`, { body: { embedders: { both: cls } } }));
    expect(t.status).toBe('failed');
    expect(t.error.code).toBe('vector_embedding_error');
    expect(t.error.message).toContain('error while generating test embeddings');
    const nested = await s.api('PATCH', `/indexes/${uid}/settings`, {
      body: {
        embedders: {
          both: {
            source: 'composite',
            indexingEmbedder: EMBEDDER,
            searchEmbedder: { source: 'userProvided', dimensions: 384 },
          },
        },
      },
    });
    expect(nested.status).toBe(400);
    expect(nested.body.message).toBe(
      '`.embedders.both.searchEmbedder.source`: Source `userProvided` is not available in a nested embedder',
    );
    const template = await s.api('PATCH', `/indexes/${uid}/settings`, {
      body: { embedders: { both: { source: 'composite', indexingEmbedder: EMBEDDER, searchEmbedder: EMBEDDER } } },
    });
    expect(template.status).toBe(400);
    expect(template.body.message).toContain(
      'Field `documentTemplate` unavailable for source `huggingFace` for the search embedder.',
    );
  }, 120_000);
});
