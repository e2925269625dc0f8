/**
 * kill -9 in the middle of a large indexing batch: every task answered 202 must end
 * `succeeded` after a restart on the same data, with all its documents present.
 */
import fs from 'node:fs';
import path from 'node:path';
import { call, startChild } from '../helpers/child';
import { tempDir } from '../helpers/server';

describe('crash safety', () => {
  it('when the server is SIGKILLed mid-batch, then a restart finishes every accepted task with all documents', async () => {
    const dbPath = tempDir('quarry-crash-');
    let { child, url } = await startChild(dbPath);
    const accepted: number[] = [];
    const perTask = 25000;
    const tasks = 6;
    for (let t = 0; t < tasks; t++) {
      const docs = Array.from({ length: perTask }, (_, i) => ({
        id: t * perTask + i,
        title: `title ${i}`,
        body: `some words for document ${t}-${i}`,
      }));
      // Alternate indexes so several batches exist.
      const r = await call(url, 'POST', `/indexes/crash${t % 2}/documents`, docs);
      expect(r.status).toBe(202);
      accepted.push(r.body.taskUid);
    }
    // Wait until indexing is under way, then kill without warning.
    for (let i = 0; i < 500; i++) {
      const r = await call(url, 'GET', '/tasks?statuses=processing');
      if (r.body.total > 0) break;
      await new Promise((res) => setTimeout(res, 5));
    }
    child.kill('SIGKILL');
    await new Promise((res) => child.once('exit', res));

    ({ child, url } = await startChild(dbPath));
    try {
      for (const uid of accepted) {
        let task: any;
        for (let i = 0; i < 1200; i++) {
          task = (await call(url, 'GET', `/tasks/${uid}`)).body;
          if (task.status !== 'enqueued' && task.status !== 'processing') break;
          await new Promise((res) => setTimeout(res, 50));
        }
        expect(task.status).toBe('succeeded');
        expect(task.details.indexedDocuments).toBe(perTask);
      }
      const total0 = (await call(url, 'GET', '/indexes/crash0/documents?limit=1')).body.total;
      const total1 = (await call(url, 'GET', '/indexes/crash1/documents?limit=1')).body.total;
      expect(total0 + total1).toBe(perTask * tasks);
      const last = (await call(url, 'GET', `/indexes/crash1/documents/${tasks * perTask - 1}`)).body;
      expect(last.id).toBe(tasks * perTask - 1);
      // The first batch of each index took it past 10,000 documents, so it chose the index's
      // pair words (`document` and the task numbers among them) before writing any: a phrase
      // of two of them and a number too short for typos find the one document holding both.
      for (const [index, t, i] of [
        ['crash0', 0, 17],
        ['crash0', 2, 9999],
        ['crash1', 1, 5],
        ['crash1', 5, 1234],
      ] as const) {
        const r = await call(url, 'POST', `/indexes/${index}/search`, {
          q: `"document ${t}" ${i} `,
          matchingStrategy: 'all',
        });
        expect(r.body.hits.map((h: any) => h.id)).toEqual([t * perTask + i]);
      }
    } finally {
      child.kill('SIGTERM');
      await new Promise((res) => child.once('exit', res));
    }
  }, 180000);

  it('when the inverted index is lost, then a restart rebuilds it from the stored documents', async () => {
    const dbPath = tempDir('quarry-rebuild-');
    let { child, url } = await startChild(dbPath);
    const docs = Array.from({ length: 3000 }, (_, i) => ({
      id: i,
      title: i === 7 ? 'lighthouse keeper' : `title ${i}`,
    }));
    let r = await call(url, 'POST', '/indexes/rebuild/documents', docs);
    for (let i = 0; i < 400; i++) {
      const t = (await call(url, 'GET', `/tasks/${r.body.taskUid}`)).body;
      if (t.status === 'succeeded') break;
      await new Promise((res) => setTimeout(res, 25));
    }
    r = await call(url, 'POST', '/indexes/rebuild/search', { q: 'lighthouse' });
    expect(r.body.hits.map((h: any) => h.id)).toEqual([7]);
    child.kill('SIGTERM');
    await new Promise((res) => child.once('exit', res));

    const indexes = path.join(dbPath, 'indexes');
    const [dir] = fs.readdirSync(indexes);
    const tantivy = path.join(indexes, dir, 'tantivy');
    expect(fs.existsSync(tantivy)).toBe(true);
    fs.rmSync(tantivy, { recursive: true });

    ({ child, url } = await startChild(dbPath));
    try {
      r = await call(url, 'POST', '/indexes/rebuild/search', { q: 'lighthouse' });
      expect(r.body.hits.map((h: any) => h.id)).toEqual([7]);
      r = await call(url, 'POST', '/indexes/rebuild/search', { q: 'title', page: 1, hitsPerPage: 1 });
      expect(r.body.totalHits).toBe(1000);
      r = await call(url, 'POST', '/indexes/rebuild/search', { q: 'title 2999 ', matchingStrategy: 'all' });
      expect(r.body.hits.map((h: any) => h.id)).toEqual([2999]);
    } finally {
      child.kill('SIGTERM');
      await new Promise((res) => child.once('exit', res));
    }
  });
});
