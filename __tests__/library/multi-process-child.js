// One process of an app that opens the same data directory as others (multi-process.test.ts):
// `writer` opens it for writing, `reader` read-only. Driven over the IPC channel: each message
// `{ mid, op, ... }` is answered `{ mid, value }` or `{ mid, error: { code, message } }`.
'use strict';
const { Quarry } = require('../../dist/index.js');

const [role, dir] = process.argv.slice(2);

const searchOf = (r) => ({ ids: r.hits.map((h) => h.id), total: r.estimatedTotalHits ?? r.totalHits });

async function main() {
  const quarry = await Quarry.open({ dbPath: dir, readOnly: role === 'reader', logLevel: 'error' });
  let spinning = null;
  const ops = {
    // The writer's.
    add: async ({ uid, docs, wait }) => {
      const task = quarry.index(uid).addDocuments(docs);
      if (!wait) return (await task).taskUid;
      return (await task.waitTask({ timeoutMs: 120_000 })).status;
    },
    settings: async ({ uid, patch }) =>
      (await quarry.index(uid).updateSettings(patch).waitTask({ timeoutMs: 120_000 })).status,
    compact: async ({ uid }) => (await quarry.index(uid).compact().waitTask({ timeoutMs: 120_000 })).status,
    deleteIndex: async ({ uid }) => (await quarry.deleteIndex(uid).waitTask({ timeoutMs: 120_000 })).status,
    // Adds batches of `size` documents until killed, telling each acknowledged one (on disk).
    addForever: async ({ uid, from, size }) => {
      (async () => {
        for (let first = from; ; first += size) {
          const docs = Array.from({ length: size }, (_, i) => ({ id: first + i, text: `forever ${first + i}` }));
          const task = await quarry.index(uid).addDocuments(docs);
          process.send({ ack: { taskUid: task.taskUid, first, count: size } });
        }
      })().catch((err) => process.send({ fatal: String(err) }));
      return null;
    },
    // Anyone's.
    search: ({ uid, q, params }) => searchOf(quarry.index(uid).searchSync(q ?? '', params ?? {})),
    searchAsync: async ({ uid, q, params }) => searchOf(await quarry.index(uid).search(q ?? '', params ?? {})),
    getDocument: ({ uid, id }) => quarry.index(uid).getDocument(id),
    getIndexes: async () => (await quarry.getIndexes()).results.map((i) => i.uid),
    stats: async ({ uid }) => (await quarry.index(uid).getStats()).numberOfDocuments,
    getTask: async ({ uid }) => (await quarry.getTask(uid)).status,
    waitTask: async ({ uid }) => (await quarry.waitForTask(uid, { timeoutMs: 120_000 })).status,
    readOnly: () => quarry.readOnly,
    // Each write of the library, tried: the codes it fails with.
    writes: async ({ uid }) => {
      const index = quarry.index(uid);
      const attempts = [
        () => index.addDocuments([{ id: 'x' }]),
        () => index.updateDocuments([{ id: 'x' }]),
        () => index.deleteDocument('x'),
        () => index.deleteDocuments({ filter: 'id = x' }),
        () => index.deleteAllDocuments(),
        () => index.updateSettings({ searchableAttributes: ['text'] }),
        () => index.resetSettings(),
        () => index.update({ primaryKey: 'id' }),
        () => index.compact(),
        () => index.delete(),
        () => quarry.createIndex('other'),
        () => quarry.updateIndex(uid, { primaryKey: 'id' }),
        () => quarry.deleteIndex(uid),
        () => quarry.swapIndexes([{ indexes: [uid, 'other'] }]),
        () => quarry.cancelTasks({ statuses: ['enqueued'] }),
        () => quarry.deleteTasks({ statuses: ['succeeded'] }),
      ];
      const codes = [];
      for (const attempt of attempts) {
        try {
          await attempt();
          codes.push('accepted');
        } catch (err) {
          codes.push(`${err.name}:${err.code}`);
        }
      }
      return codes;
    },
    // Searches without a pause (each holding an LMDB read transaction) until `stop`.
    spin: ({ uid }) => {
      const state = { count: 0, stop: false };
      spinning = state;
      const round = () => {
        if (state.stop) return;
        const until = Date.now() + 20;
        while (Date.now() < until) {
          try {
            quarry.index(uid).searchSync('forever', { limit: 5 });
          } catch {}
          state.count++;
        }
        setImmediate(round);
      };
      round();
      return null;
    },
    stop: () => {
      const s = spinning;
      if (s) s.stop = true;
      spinning = null;
      return s ? s.count : 0;
    },
  };
  process.on('message', async (m) => {
    try {
      process.send({ mid: m.mid, value: await ops[m.op](m) });
    } catch (err) {
      process.send({ mid: m.mid, error: { code: err.code ?? null, message: String(err.message ?? err) } });
    }
  });
  process.send({ ready: true });
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
