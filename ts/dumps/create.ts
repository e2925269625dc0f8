/**
 * Writing dumps and snapshots; both run as tasks in the worker, so no batch changes an index
 * while they read it.
 *
 * A dump is the portable form (Meilisearch's version-6 layout, so a dump moves a deployment
 * either way): the documents, settings and dates of each index, the keys, the task and batch
 * history with the payloads of enqueued document additions, the experimental features and
 * the network. A snapshot is the data directory itself, as of the task: the task store
 * copied in one read transaction, each index copied by the engine with its writer stopped,
 * and the staged payloads.
 *
 * Both are built in a hidden directory next to their destination, packed, fsynced and
 * renamed into place, so a crash never leaves a partial `.dump` or `.snapshot`.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { KeyStore } from '../auth/keys';
import type { FeatureStore } from '../features';
import type { IndexRegistry } from '../indexes/registry';
import { type KvOp, KvStore } from '../native';
import type { Archives } from '../tasks/outcome';
import type { NetworkStore } from '../network/state';
import { RULES_INDEX, ruleView, type SearchRules } from '../search/rules';
import type { WebhookStore } from '../webhooks/store';
import type { ChatStore } from '../chats/settings';
import { batchOp, payloadFile, taskOp, type WorkerQueue } from '../tasks/queue';
import type { BatchRecord, TaskRecord } from '../tasks/types';
import { META_MAP_SIZE } from '../store/durable';
import { nowIso } from '../util/time';
import { packDirectory } from './archive';
import { batchToDump, DB_VERSION, DUMP_VERSION, keyToDump, taskToDump } from './v6';

/** What a dump or a snapshot is read from. */
export interface Sources {
  kv: KvStore;
  queue: WorkerQueue;
  registry: IndexRegistry;
  keys: KeyStore;
  features: FeatureStore;
  network: NetworkStore;
  searchRules: SearchRules;
  webhooks: WebhookStore;
  chats: ChatStore;
  dbPath: string;
  updateFiles: string;
}

/** The settings of the rules' index in a dump: what Meilisearch searches its rules by. */
const RULES_INDEX_SETTINGS = {
  searchableAttributes: ['conditions.query.words', 'description'],
  filterableAttributes: ['active', 'conditions.time.start', 'conditions.time.end', 'conditions.query.isEmpty'],
  sortableAttributes: ['lastUpdatedAt', 'precedence'],
  typoTolerance: { enabled: false },
  facetSearch: false,
  prefixSearch: 'disabled',
};

const PAGE = 1000;

/** The worker's dumps and snapshots, written into the directories the options name. */
export function archives(src: Sources, dirs: { dumpDir: string; snapshotDir: string }): Archives {
  return {
    async dump(task) {
      const uid = dumpUid();
      await writeDump(src, dirs.dumpDir, uid, task);
      return { dumpUid: uid };
    },
    async snapshot(tasks, batch) {
      const finishedAt = nowIso();
      const n = tasks.length;
      const b: BatchRecord = {
        ...batch,
        finishedAt,
        stats: {
          ...batch.stats,
          totalNbTasks: n,
          status: { succeeded: n },
          types: { snapshotCreation: n },
          indexUids: {},
        },
      };
      const done = tasks.map((t): TaskRecord => ({ ...t, status: 'succeeded', finishedAt }));
      await writeSnapshot(src, dirs.snapshotDir, [...done.map(taskOp), batchOp(b)]);
    },
  };
}

/** `20261125-071816190`: the dump's uid and file name, from the moment it starts. */
export function dumpUid(date = new Date()): string {
  const iso = date.toISOString(); // 2026-11-25T07:18:16.190Z
  return `${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}${iso.slice(20, 23)}`;
}

/** Writes `<dumpDir>/<uid>.dump`; `self` is the running dump task. */
export async function writeDump(src: Sources, dumpDir: string, uid: string, self: TaskRecord): Promise<void> {
  await build(path.join(dumpDir, `${uid}.dump`), async (dir) => {
    const write = (rel: string, content: string) => {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      fs.writeFileSync(path.join(dir, rel), content);
    };
    const lines = (items: unknown[]) => items.map((i) => `${JSON.stringify(i)}\n`).join('');
    write('metadata.json', JSON.stringify({ dumpVersion: DUMP_VERSION, dbVersion: DB_VERSION, dumpDate: nowIso() }));
    write('keys.jsonl', lines(src.keys.list().map(keyToDump)));
    const instanceUid = path.join(src.dbPath, 'instance-uid');
    if (fs.existsSync(instanceUid)) write('instance_uid.uuid', fs.readFileSync(instanceUid, 'utf8').trim());

    // The history, this task included as it will end (Meilisearch dumps it the same way).
    fs.mkdirSync(path.join(dir, 'tasks', 'update_files'), { recursive: true });
    const tasks: unknown[] = [];
    for (const t of [...src.queue.allTasks()].sort((a, b) => a.uid - b.uid)) {
      const record =
        t.uid === self.uid ? { ...t, status: 'succeeded' as const, batchUid: null, finishedAt: nowIso() } : t;
      const line = taskToDump(record);
      if (!line) continue;
      tasks.push(line);
      const file = payloadFile(src.updateFiles, t);
      if (t.status === 'enqueued' && file && fs.existsSync(file))
        fs.copyFileSync(file, path.join(dir, 'tasks', 'update_files', `${t.uid}.jsonl`));
    }
    write('tasks/queue.jsonl', lines(tasks));
    write(
      'batches/queue.jsonl',
      lines(
        [...src.queue.allBatches()]
          .filter((b) => b.finishedAt !== null)
          .sort((a, b) => a.uid - b.uid)
          .map(batchToDump),
      ),
    );

    for (const entry of src.registry.list()) {
      const h = src.registry.handleOf(entry);
      const base = path.join('indexes', entry.uid);
      write(
        `${base}/metadata.json`,
        JSON.stringify({
          uid: entry.uid,
          primaryKey: h.primaryKey(),
          createdAt: entry.createdAt,
          updatedAt: entry.updatedAt,
        }),
      );
      write(`${base}/settings.json`, JSON.stringify(h.settings()));
      const out = fs.openSync(path.join(dir, base, 'documents.jsonl'), 'w');
      try {
        for (let offset = 0; ; offset += PAGE) {
          const page = JSON.parse(
            (
              await h.fetchDocuments({ offset, limit: PAGE, fields: null, ids: null, retrieveVectors: true })
            ).toString(),
          ) as { results: Array<Record<string, unknown>> };
          if (page.results.length === 0) break;
          for (const doc of page.results) {
            const vectors = doc._vectors as Record<string, unknown> | undefined;
            if (vectors && Object.keys(vectors).length === 0) delete doc._vectors;
            fs.writeSync(out, `${JSON.stringify(doc)}\n`);
          }
          if (page.results.length < PAGE) break;
        }
      } finally {
        fs.closeSync(out);
      }
    }
    // Dynamic search rules, as Meilisearch keeps them: documents of the index `.meili_dsr`.
    const rules = src.searchRules.all();
    if (rules.length) {
      const base = path.join('indexes', RULES_INDEX);
      const dates = rules.map((r) => r.lastUpdatedAt).sort();
      write(
        `${base}/metadata.json`,
        JSON.stringify({
          uid: RULES_INDEX,
          primaryKey: 'uid',
          createdAt: dates[0],
          updatedAt: dates[dates.length - 1],
        }),
      );
      write(`${base}/settings.json`, JSON.stringify(RULES_INDEX_SETTINGS));
      write(`${base}/documents.jsonl`, lines(rules.map(ruleView)));
    }
    write('experimental-features.json', JSON.stringify(src.features.get()));
    const network = src.network.get();
    write(
      'network.json',
      JSON.stringify({
        self: network.self,
        remotes: network.remotes,
        shards: network.shards,
        leader: network.leader,
        version: network.version,
      }),
    );
    // The API's webhooks, keyed by uuid as Meilisearch writes them (the command line's is not).
    write(
      'webhooks.json',
      JSON.stringify({
        webhooks: Object.fromEntries(src.webhooks.stored().map((w) => [w.uuid, { url: w.url, headers: w.headers }])),
      }),
    );
    // Chat workspaces, one file each, their settings whole (the API key in clear), as Meilisearch writes them.
    // A uid that is no plain file name (a `/`, a `%`, `.` or `..`) is percent-encoded, and decoded on import.
    const fileName = (uid: string) =>
      /[/\\%]/.test(uid) || uid === '.' || uid === '..' ? encodeURIComponent(uid).replace(/\./g, '%2E') : uid;
    for (const [uid, settings] of src.chats.all())
      write(`chat-completions-settings/${fileName(uid)}.json`, JSON.stringify(settings));
  });
}

/**
 * Writes `<snapshotDir>/<db directory name>.snapshot`, replacing the previous one. `done`
 * are the records of the running snapshot task and its batch as they will end: the copy
 * holds them finished, so a restored server does not take the snapshot again.
 */
export async function writeSnapshot(src: Sources, snapshotDir: string, done: KvOp[]): Promise<string> {
  const file = path.join(snapshotDir, `${path.basename(src.dbPath)}.snapshot`);
  await build(file, async (dir) => {
    fs.writeFileSync(path.join(dir, 'VERSION'), fs.readFileSync(path.join(src.dbPath, 'VERSION')));
    await src.kv.copyTo(path.join(dir, 'tasks'));
    const copy = KvStore.open(path.join(dir, 'tasks'), META_MAP_SIZE);
    try {
      await copy.commit(done);
    } finally {
      copy.close();
    }
    fs.mkdirSync(path.join(dir, 'indexes'), { recursive: true });
    for (const entry of src.registry.list())
      await src.registry.handleOf(entry).copyTo(path.join(dir, 'indexes', entry.dir));
    // Payloads of tasks still to run; the worker is busy with this task, so none goes away.
    fs.mkdirSync(path.join(dir, 'update_files'), { recursive: true });
    for (const t of src.queue.allTasks()) {
      const f = payloadFile(src.updateFiles, t);
      if (f && fs.existsSync(f)) fs.copyFileSync(f, path.join(dir, 'update_files', path.basename(f)));
    }
  });
  return file;
}

async function build(file: string, fill: (dir: string) => Promise<void>): Promise<void> {
  const parent = path.dirname(file);
  fs.mkdirSync(parent, { recursive: true });
  const work = fs.mkdtempSync(path.join(parent, `.${path.basename(file)}.`));
  const tmp = `${work}.tar.gz`;
  try {
    await fill(work);
    await packDirectory(work, tmp);
    fs.renameSync(tmp, file);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
    fs.rmSync(tmp, { force: true });
  }
}
