import fs from 'node:fs';
import path from 'node:path';
import { byteSize } from '../../ts/tasks/run/indexes';
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

describe('POST /tasks/compact', () => {
  it('when the feature is off, then it answers feature_not_enabled', async () => {
    const r = await s.api('POST', '/tasks/compact');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      message:
        'Using the /tasks/compact route requires enabling the `task queue compaction route` experimental feature. See https://github.com/orgs/meilisearch/discussions/883',
      code: 'feature_not_enabled',
      type: 'invalid_request',
      link: 'https://docs.meilisearch.com/errors#feature_not_enabled',
    });
  });

  it('when a key lacks tasks.compact, then it is refused', async () => {
    await s.api('PATCH', '/experimental-features', { body: { taskQueueCompactionRoute: true } });
    const keys = (await s.api('GET', '/keys')).body.results;
    const search = keys.find((k: any) => k.name === 'Default Search API Key').key;
    const r = await s.api('POST', '/tasks/compact', { key: search });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('invalid_api_key');
  });

  it('when deleted tasks left free pages, then the task database shrinks on disk and the instance goes on', async () => {
    await s.api('PATCH', '/experimental-features', { body: { taskQueueCompactionRoute: true } });
    const uid = uniqueIndex('compact');
    // Settings tasks keep what they set in their details: large tasks, then deleted.
    const words = Array.from({ length: 400 }, (_, i) => `word${i}`);
    let last = 0;
    for (let i = 0; i < 60; i++) {
      const r = await s.api('PATCH', `/indexes/${uid}/settings`, {
        body: { stopWords: words.map((w) => `${w}_${i}`) },
      });
      expect(r.status).toBe(202);
      last = r.body.taskUid;
    }
    await s.waitTask(last, 60000);
    const del = await s.api('DELETE', `/tasks?indexUids=${uid}&types=settingsUpdate`);
    await s.waitTask(del.body.taskUid);
    const kept = await s.api('POST', `/indexes/${uid}/documents`, { body: [{ id: 1, title: 'kept' }] });
    await s.waitTask(kept.body.taskUid);

    const file = path.join(s.dbPath, 'tasks', 'data.mdb');
    const before = fs.statSync(file).size;
    const r = await s.api('POST', '/tasks/compact');
    expect(r.status).toBe(200);
    const after = fs.statSync(file).size;
    expect(after).toBeLessThan(before / 2);
    // Meilisearch's human sizes: `240 KiB`, `1.06 MiB`.
    expect(r.body).toEqual({
      preSize: byteSize(before),
      postSize: byteSize(after),
      status: 'succeeded',
      actionRequired: 'you must restart your instance',
    });

    // As Meilisearch, /health then asks for a restart.
    const health = await s.api('GET', '/health');
    expect(health.status).toBe(500);
    expect(health.body).toEqual({ status: 'mustRestart' });

    // Unlike Meilisearch, the task store carries on with the compacted file.
    expect((await s.api('GET', `/tasks/${kept.body.taskUid}`)).body.status).toBe('succeeded');
    const next = await s.api('POST', `/indexes/${uid}/documents`, { body: [{ id: 2, title: 'after' }] });
    expect(next.status).toBe(202);
    expect((await s.waitTask(next.body.taskUid)).status).toBe('succeeded');
    expect((await s.api('GET', `/tasks?indexUids=${uid}&types=settingsUpdate`)).body.results).toEqual([]);

    // And a restart finds everything.
    await s.close();
    s = await startTestServer({ dbPath: s.dbPath });
    expect((await s.api('GET', '/health')).body).toEqual({ status: 'available' });
    expect((await s.api('GET', `/tasks/${next.body.taskUid}`)).body.status).toBe('succeeded');
    expect((await s.api('GET', `/indexes/${uid}/documents`)).body.total).toBe(2);
  });
});
