/**
 * kill -9 while the local model embeds a batch: after a restart every accepted task ends
 * `succeeded`, every document has its embedding, and semantic search answers.
 */
import path from 'node:path';
import { call, startChild } from '../helpers/child';
import { tempDir } from '../helpers/server';

const MODELS = path.resolve(__dirname, '../../.cache/models');
const ARGS = [
  '--experimental-models-dir',
  MODELS,
  '--experimental-onnxruntime-path',
  path.join(MODELS, 'onnxruntime/libonnxruntime.so'),
];

async function waitFor(url: string, uid: number): Promise<any> {
  for (let i = 0; i < 2400; i++) {
    const t = (await call(url, 'GET', `/tasks/${uid}`)).body;
    if (t.status !== 'enqueued' && t.status !== 'processing') return t;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`task ${uid} never finished`);
}

it('when the server is SIGKILLed while embedding, then a restart embeds every accepted document', async () => {
  const dbPath = tempDir('quarry-vcrash-');
  let { child, url } = await startChild(dbPath, ARGS);
  const embedder = {
    source: 'huggingFace',
    model: 'sentence-transformers/all-MiniLM-L6-v2',
    documentTemplate: '{{doc.title}}',
  };
  const settings = await call(url, 'PATCH', '/indexes/vcrash/settings', { embedders: { local: embedder } });
  expect((await waitFor(url, settings.body.taskUid)).status).toBe('succeeded');
  const accepted: number[] = [];
  const perTask = 400;
  for (let t = 0; t < 3; t++) {
    const docs = Array.from({ length: perTask }, (_, i) => ({
      id: t * perTask + i,
      title: `document ${i} about ${['cats', 'markets', 'bread'][t]}`,
    }));
    const r = await call(url, 'POST', '/indexes/vcrash/documents', docs);
    expect(r.status).toBe(202);
    accepted.push(r.body.taskUid);
  }
  for (let i = 0; i < 1000; i++) {
    const r = await call(url, 'GET', '/batches?limit=1');
    if (
      r.body.results[0]?.progress?.steps?.length ||
      (await call(url, 'GET', '/tasks?statuses=processing')).body.total > 0
    )
      break;
    await new Promise((res) => setTimeout(res, 5));
  }
  child.kill('SIGKILL');
  await new Promise((res) => child.once('exit', res));

  ({ child, url } = await startChild(dbPath, ARGS));
  try {
    for (const uid of accepted) {
      const task = await waitFor(url, uid);
      expect(task.status).toBe('succeeded');
      expect(task.details.indexedDocuments).toBe(perTask);
    }
    const stats = (await call(url, 'GET', '/indexes/vcrash/stats')).body;
    expect(stats).toMatchObject({
      numberOfDocuments: 3 * perTask,
      numberOfEmbeddings: 3 * perTask,
      numberOfEmbeddedDocuments: 3 * perTask,
    });
    const r = await call(url, 'POST', '/indexes/vcrash/search', {
      q: 'kitten',
      hybrid: { embedder: 'local', semanticRatio: 1 },
      limit: 5,
    });
    expect(r.body.hits.every((h: { title: string }) => h.title.endsWith('cats'))).toBe(true);
  } finally {
    child.kill('SIGTERM');
    await new Promise((res) => child.once('exit', res));
  }
}, 300000);
