/**
 * Start-up imports: a dump (`--import-dump`, Meilisearch's version-6 format, from
 * Meilisearch or from Quarry) or a snapshot (`--import-snapshot`) becomes the database.
 *
 * Either is unpacked and built in a hidden directory next to the data directory, which is
 * moved into place only once everything is in: a damaged, truncated or hostile archive (a
 * path leaving the directory, a link) fails start-up with a message and leaves no database
 * behind, and a database that exists is never touched.
 */
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { KeyStore } from '../auth/keys';
import type { Config } from '../config';
import { ApiError } from '../errors/api-error';
import { FEATURE_FLAGS } from '../features';
import { IndexRegistry } from '../indexes/registry';
import type { Logger } from '../logging';
import { type BatchOp, type KvOp, KvStore, stageDocuments } from '../native';
import { checkRuleUid, parseRulePatch, RULES_INDEX, SearchRules } from '../search/rules';
import { parseSettingsBody } from '../settings';
import { Durable, jsonValue, META_MAP_SIZE } from '../store/durable';
import { batchOp, taskOp } from '../tasks/queue';
import { parseWebhookUuid, WebhookStore } from '../webhooks/store';
import { ChatStore, readRecord } from '../chats/settings';
import type { TaskRecord } from '../tasks/types';
import { unpackArchive } from './archive';
import { batchFromDump, DUMP_VERSION, DumpFormatError, type DumpTask, keyFromDump, taskFromDump } from './v6';

/** Fails start-up with a message for the operator. */
export class ImportError extends Error {}

/** The start-up options of imports. */
export type ImportOptions = Pick<
  Config,
  | 'importDump'
  | 'ignoreMissingDump'
  | 'ignoreDumpIfDbExists'
  | 'importSnapshot'
  | 'ignoreMissingSnapshot'
  | 'ignoreSnapshotIfDbExists'
>;

/** Documents are staged and indexed this many bytes of NDJSON at a time. */
const CHUNK_BYTES = 64 * 1024 ** 2;

/**
 * The engine's replay guard recognises a batch by its task uids: each batch of the import
 * gets its own, counting down from where no real task uid goes.
 */
let importTaskUid = Number.MAX_SAFE_INTEGER;

/** A data directory holds a database once its task store exists. */
export function databaseExists(dbPath: string): boolean {
  return fs.existsSync(path.join(dbPath, 'tasks', 'data.mdb'));
}

/** Runs the import the options ask for, if any, before the database is opened. */
export async function importAtStartup(opts: ImportOptions, dbPath: string, logger: Logger): Promise<void> {
  const [kind, file, ignoreMissing, ignoreIfExists] = opts.importSnapshot
    ? (['snapshot', opts.importSnapshot, opts.ignoreMissingSnapshot, opts.ignoreSnapshotIfDbExists] as const)
    : opts.importDump
      ? (['dump', opts.importDump, opts.ignoreMissingDump, opts.ignoreDumpIfDbExists] as const)
      : [null, null, false, false];
  if (!kind || !file) return;
  if (databaseExists(dbPath)) {
    if (ignoreIfExists) {
      logger.warn(`ignoring the ${kind} ${file} because a database already exists at ${dbPath}`);
      return;
    }
    throw new ImportError(`database already exists at "${dbPath}", try to delete it or rename it`);
  }
  if (!fs.existsSync(file)) {
    if (ignoreMissing) {
      logger.warn(`ignoring the missing ${kind} ${file}`);
      return;
    }
    throw new ImportError(kind === 'dump' ? `dump doesn't exist at "${file}"` : `snapshot doesn't exist at ${file}`);
  }
  if (fs.existsSync(dbPath) && fs.readdirSync(dbPath).length > 0) {
    throw new ImportError(`the ${kind} cannot be imported into "${dbPath}": the directory is not empty`);
  }
  const t0 = performance.now();
  const parent = path.dirname(dbPath);
  fs.mkdirSync(parent, { recursive: true });
  const staging = fs.mkdtempSync(path.join(parent, `.${path.basename(dbPath)}.import-`));
  try {
    const db = path.join(staging, 'db');
    if (kind === 'snapshot') {
      await unpackArchive(file, db);
      if (!databaseExists(db) || !fs.existsSync(path.join(db, 'VERSION')))
        throw new ImportError(`${file} is not a Quarry snapshot: it holds no task store`);
    } else {
      const unpacked = path.join(staging, 'dump');
      await unpackArchive(file, unpacked);
      await loadDump(unpacked, db, logger);
    }
    if (fs.existsSync(dbPath)) fs.rmdirSync(dbPath);
    fs.renameSync(db, dbPath);
  } catch (err) {
    if (err instanceof ImportError) throw err;
    const reason =
      err instanceof ApiError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
    throw new ImportError(`the ${kind} ${file} could not be imported: ${reason}`);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  logger.info(`imported the ${kind} ${file}`, { ms: Math.round(performance.now() - t0) });
}

function readJsonFile(file: string): Record<string, unknown> {
  if (!fs.existsSync(file)) throw new DumpFormatError(`\`${path.basename(file)}\` is missing`);
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new DumpFormatError(`\`${path.basename(file)}\` is not valid JSON: ${(err as Error).message}`);
  }
}

async function* jsonLines(file: string): AsyncGenerator<Record<string, unknown>> {
  if (!fs.existsSync(file)) return;
  const rl = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  let n = 0;
  for await (const line of rl) {
    n++;
    if (line.trim() === '') continue;
    try {
      yield JSON.parse(line) as Record<string, unknown>;
    } catch (err) {
      throw new DumpFormatError(`line ${n} of \`${path.basename(file)}\` is not valid JSON: ${(err as Error).message}`);
    }
  }
}

/** Builds a database at `db` from the unpacked dump at `dir`. */
async function loadDump(dir: string, db: string, logger: Logger): Promise<void> {
  const meta = readJsonFile(path.join(dir, 'metadata.json'));
  if (meta.dumpVersion !== DUMP_VERSION) {
    throw new DumpFormatError(
      `dump version \`${String(meta.dumpVersion)}\` is not supported: Quarry imports version ${DUMP_VERSION} dumps (Meilisearch 1.0 and later)`,
    );
  }
  fs.mkdirSync(db, { recursive: true });
  fs.writeFileSync(path.join(db, 'VERSION'), 'quarry-1\n');
  // The instance keeps its identity across the move (telemetry reads it).
  const uid = path.join(dir, 'instance_uid.uuid');
  if (fs.existsSync(uid)) {
    const text = fs.readFileSync(uid, 'utf8').trim();
    if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text))
      fs.writeFileSync(path.join(db, 'instance-uid'), text);
  }
  const updateFiles = path.join(db, 'update_files');
  fs.mkdirSync(updateFiles, { recursive: true });
  const kv = KvStore.open(path.join(db, 'tasks'), META_MAP_SIZE);
  const durable = new Durable(kv);
  const registry = new IndexRegistry(durable, path.join(db, 'indexes'));
  try {
    const features = fs.existsSync(path.join(dir, 'experimental-features.json'))
      ? readJsonFile(path.join(dir, 'experimental-features.json'))
      : {};
    const flags = Object.fromEntries(FEATURE_FLAGS.map((f) => [f, features[f] === true]));
    const ops: KvOp[] = [{ db: 'meta', key: 'features', value: jsonValue(flags) }];
    if (fs.existsSync(path.join(dir, 'network.json'))) {
      const n = readJsonFile(path.join(dir, 'network.json'));
      const remotes = Object.fromEntries(
        Object.entries((n.remotes ?? {}) as Record<string, Record<string, unknown>>).map(([name, r]) => [
          name,
          {
            url: String(r.url ?? ''),
            searchApiKey: (r.searchApiKey as string | null) ?? null,
            writeApiKey: (r.writeApiKey as string | null) ?? null,
          },
        ]),
      );
      ops.push({
        db: 'meta',
        key: 'network',
        value: jsonValue({
          self: n.self ?? null,
          remotes,
          shards: n.shards ?? {},
          leader: n.leader ?? null,
          version: n.version ?? '00000000-0000-0000-0000-000000000000',
        }),
      });
    }
    await durable.commit(ops);

    if (fs.existsSync(path.join(dir, 'webhooks.json'))) {
      const hooks = (readJsonFile(path.join(dir, 'webhooks.json')).webhooks ?? {}) as Record<
        string,
        { url?: unknown; headers?: unknown }
      >;
      const list = Object.entries(hooks).map(([uuid, w]) => {
        if (typeof w.url !== 'string') throw new DumpFormatError(`webhook \`${uuid}\` has no URL`);
        const headers = Object.fromEntries(
          Object.entries((w.headers ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v ?? '')]),
        );
        return { uuid: parseWebhookUuid(uuid), url: w.url, headers };
      });
      await new WebhookStore(durable, null).replaceAll(list);
    }

    const chatsDir = path.join(dir, 'chat-completions-settings');
    if (fs.existsSync(chatsDir)) {
      const workspaces = fs
        .readdirSync(chatsDir)
        .filter((f) => f.endsWith('.json'))
        .sort()
        .map((f): [string, ReturnType<typeof readRecord>] => [
          decodeFileName(f.slice(0, -'.json'.length)),
          readRecord(fs.readFileSync(path.join(chatsDir, f))),
        ]);
      await new ChatStore(durable).replaceAll(workspaces);
    }

    const keys = [];
    for await (const raw of jsonLines(path.join(dir, 'keys.jsonl'))) keys.push(keyFromDump(raw));
    if (keys.length) await new KeyStore(durable, null).put(keys);

    const indexesDir = path.join(dir, 'indexes');
    const names = fs.existsSync(indexesDir) ? fs.readdirSync(indexesDir).sort() : [];
    for (const name of names) {
      if (name === RULES_INDEX) await loadRules(path.join(indexesDir, name), durable);
      else await loadIndex(path.join(indexesDir, name), registry, flags, updateFiles, logger);
    }

    await loadTasks(dir, durable, updateFiles);
  } finally {
    registry.closeAll();
    kv.close();
  }
}

async function loadIndex(
  dir: string,
  registry: IndexRegistry,
  flags: Record<string, boolean>,
  updateFiles: string,
  logger: Logger,
): Promise<void> {
  const meta = readJsonFile(path.join(dir, 'metadata.json'));
  const uid = String(meta.uid ?? path.basename(dir));
  const entry = registry.newEntry(uid, typeof meta.createdAt === 'string' ? meta.createdAt : new Date().toISOString());
  if (typeof meta.updatedAt === 'string') entry.updatedAt = meta.updatedAt;
  const h = registry.handleOf(entry);
  const apply = async (ops: BatchOp[]) => {
    const taskUid = importTaskUid--;
    for (const r of await h.applyBatch(ops.map((op) => ({ ...op, taskUid }))))
      if (!r.ok) throw new DumpFormatError(`index \`${uid}\`: ${r.error.message}`);
  };
  const first: BatchOp[] = [];
  const primaryKey = typeof meta.primaryKey === 'string' ? meta.primaryKey : null;
  if (primaryKey !== null) first.push({ type: 'setPrimaryKey', taskUid: 0, primaryKey });
  if (fs.existsSync(path.join(dir, 'settings.json'))) {
    const settings = readJsonFile(path.join(dir, 'settings.json'));
    // Settings of experimental features the dump did not enable are left out, as the
    // settings routes leave them out.
    if (!flags.chatCompletions) delete settings.chat;
    if (!flags.foreignKeys) delete settings.foreignKeys;
    let patch: ReturnType<typeof parseSettingsBody>;
    try {
      patch = parseSettingsBody(settings, flags);
    } catch (err) {
      throw new DumpFormatError(`index \`${uid}\`: its settings are refused: ${(err as Error).message}`);
    }
    first.push({ type: 'updateSettings', taskUid: 0, patch });
  }
  if (first.length) await apply(first);

  // Documents go in by chunks, each staged (validated, canonical NDJSON) then indexed.
  const file = path.join(dir, 'documents.jsonl');
  let count = 0;
  if (fs.existsSync(file)) {
    let chunk: string[] = [];
    let bytes = 0;
    let n = 0;
    const flush = async () => {
      if (!chunk.length) return;
      const staged = path.join(updateFiles, `import-${n++}.ndjson`);
      try {
        const {
          documents,
          bytes: size,
          crc32,
        } = await stageDocuments(Buffer.from(chunk.join('\n')), 'ndjson', null, staged);
        count += documents;
        await apply([
          {
            type: 'addDocuments',
            taskUid: 0,
            file: staged,
            method: 'replace',
            primaryKey,
            skipCreation: false,
            shards: null,
            check: { bytes: size, crc32 },
          },
        ]);
      } finally {
        fs.rmSync(staged, { force: true });
      }
      chunk = [];
      bytes = 0;
    };
    const rl = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
    for await (const line of rl) {
      if (line.trim() === '') continue;
      chunk.push(line);
      bytes += line.length + 1;
      if (bytes >= CHUNK_BYTES) await flush();
    }
    await flush();
  }
  entry.primaryKey = h.primaryKey();
  await registry.commit([registry.putOp(entry)]);
  registry.applyPut(entry);
  logger.info('imported index', { indexUid: uid, documents: count });
}

/** Dynamic search rules: Meilisearch dumps them as the documents of its index `.meili_dsr`. */
async function loadRules(dir: string, durable: Durable): Promise<void> {
  const rules = new SearchRules(durable);
  const ops: KvOp[] = [];
  for await (const doc of jsonLines(path.join(dir, 'documents.jsonl'))) {
    const { uid, lastUpdatedAt, ...fields } = doc;
    let patch: ReturnType<typeof parseRulePatch>;
    try {
      patch = parseRulePatch(fields);
    } catch (err) {
      throw new DumpFormatError(`dynamic search rule \`${String(uid)}\`: ${(err as Error).message}`);
    }
    ops.push(
      rules.putOp(
        rules.patched(
          checkRuleUid(uid),
          patch,
          typeof lastUpdatedAt === 'string' ? lastUpdatedAt : new Date().toISOString(),
        ),
      ),
    );
  }
  await durable.commit(ops);
}

/** The task and batch history; enqueued document additions get their payloads back. */
async function loadTasks(dir: string, durable: Durable, updateFiles: string): Promise<void> {
  const tasks: TaskRecord[] = [];
  let nextUid = 0;
  for await (const raw of jsonLines(path.join(dir, 'tasks', 'queue.jsonl'))) {
    const line = raw as unknown as DumpTask;
    const staged = path.join(updateFiles, `dump-task-${line.uid}.ndjson`);
    const t = taskFromDump(line, () => staged);
    if (typeof line.uid === 'number') nextUid = Math.max(nextUid, line.uid + 1);
    if (!t) continue;
    if (t.status === 'processing') Object.assign(t, { status: 'enqueued', startedAt: null, batchUid: null });
    if (t.status === 'enqueued' && t.payload.kind === 'documentAddition') {
      const source = path.join(dir, 'tasks', 'update_files', `${t.uid}.jsonl`);
      if (!fs.existsSync(source)) throw new DumpFormatError(`the documents of enqueued task ${t.uid} are missing`);
      const { bytes, crc32 } = await stageDocuments(fs.readFileSync(source), 'ndjson', null, staged);
      t.payload.check = { bytes, crc32 };
    }
    tasks.push(t);
  }
  const byBatch = new Map<number, number[]>();
  for (const t of tasks) if (t.batchUid !== null) byBatch.set(t.batchUid, [...(byBatch.get(t.batchUid) ?? []), t.uid]);
  const ops: KvOp[] = tasks.map(taskOp);
  let nextBatchUid = 0;
  for await (const raw of jsonLines(path.join(dir, 'batches', 'queue.jsonl'))) {
    const b = batchFromDump(raw, byBatch.get(raw.uid as number) ?? []);
    nextBatchUid = Math.max(nextBatchUid, b.uid + 1);
    ops.push(batchOp(b));
  }
  ops.push({ db: 'meta', key: 'counters', value: jsonValue({ nextUid, nextBatchUid }) });
  for (let i = 0; i < ops.length; i += 10_000) await durable.commit(ops.slice(i, i + 10_000));
}

/** A workspace uid from its dump file name (percent-encoded when it was no plain file name). */
function decodeFileName(name: string): string {
  try {
    return name.includes('%') ? decodeURIComponent(name) : name;
  } catch {
    return name;
  }
}
