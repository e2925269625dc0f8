/**
 * Crash loop (issue 17): 30 SIGKILLs at seeded random moments while batches of additions
 * (POST, replace) and partial updates (PUT, merge) are enqueued and indexed. After each
 * restart on the same data directory:
 * - every task answered 202 exists, and every task once seen `succeeded` still is;
 * at the end:
 * - every acknowledged task ends `succeeded`;
 * - every document holds exactly what the model says: the writes applied in task order.
 *
 * A write whose answer was lost to the kill may or may not have been committed. Each write
 * carries `customMetadata=w<n>`, so after the restart the task list tells which of them
 * exist; those that do join the model at their task's place, the others must never appear.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { Rng } from '../hostile/fuzz';
import { CHILD_KEY, call } from '../helpers/child';
import { tempDir } from '../helpers/server';

const BIN = path.join(__dirname, '../../bin/quarry.js');
const KEY = CHILD_KEY;
const SEED = Number(process.env.QUARRY_CRASH_LOOP_SEED ?? 1717);
const KILLS = Number(process.env.QUARRY_CRASH_LOOP_KILLS ?? 30);
const IDS = 5000;
const INDEX = 'crashloop';

type Doc = Record<string, unknown>;
interface Write {
  seq: number;
  method: 'POST' | 'PUT';
  docs: Doc[];
  /** Task uid from the 202 answer, or from the task list when the answer was lost. */
  taskUid?: number;
  acked: boolean;
  /** The answer was lost to a kill and the restart has not told yet whether it was enqueued. */
  uncertain: boolean;
  /** Resolved as never enqueued. */
  dropped: boolean;
}

interface Child {
  child: ChildProcess;
  url: string;
  log: string[];
}

function startChild(dbPath: string): Promise<Child> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [BIN, '--db-path', dbPath, '--http-addr', '127.0.0.1:0', '--master-key', KEY, '--log-level', 'warn'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const log: string[] = [];
    let out = '';
    child.stderr!.on('data', (d: Buffer) => {
      log.push(d.toString());
      if (log.length > 50) log.shift();
    });
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) resolve({ child, url: m[1], log });
    });
    child.once('exit', (code) => reject(new Error(`server exited early with ${code}: ${out}\n${log.join('')}`)));
  });
}

/** Every task of the index, by uid. */
async function allTasks(url: string): Promise<Map<number, any>> {
  const out = new Map<number, any>();
  let from: number | null = null;
  for (;;) {
    const r = await call(url, 'GET', `/tasks?indexUids=${INDEX}&limit=1000${from === null ? '' : `&from=${from}`}`);
    if (r.status !== 200) throw new Error(`GET /tasks: ${r.status} ${JSON.stringify(r.body)}`);
    for (const t of r.body.results) out.set(t.uid, t);
    if (r.body.next === null || r.body.next === undefined) return out;
    from = r.body.next;
  }
}

/** A batch of distinct ids; POST sends whole documents, PUT a subset of fields to merge. */
function makeWrite(rng: Rng, seq: number): Write {
  const method = rng.chance(0.5) ? 'POST' : 'PUT';
  const n = rng.int(50, 1500);
  const ids = new Set<number>();
  while (ids.size < n) ids.add(rng.int(0, IDS - 1));
  const docs = [...ids].map((id) => {
    const d: Doc = { id };
    if (method === 'POST' || rng.chance(0.5)) d.w = seq;
    if (method === 'POST' || rng.chance(0.4)) d.title = `title ${seq} ${id} ${rng.int(0, 1e6)}`;
    if (rng.chance(0.5)) d.n = rng.int(-1000, 1000);
    if (rng.chance(0.3)) d[`f${rng.int(0, 5)}`] = rng.chance(0.5) ? `v${seq}` : [seq, id];
    if (method === 'PUT' && Object.keys(d).length === 1) d.w = seq;
    return d;
  });
  return { seq, method, docs, acked: false, uncertain: false, dropped: false };
}

describe('crash loop', () => {
  it(`when the server is SIGKILLed ${KILLS} times at seeded moments during additions and updates (seed ${SEED}), then every acknowledged write survives in task order`, async () => {
    const rng = new Rng(SEED);
    const dbPath = tempDir('quarry-crash-loop-');
    let srv = await startChild(dbPath);
    const created = await call(srv.url, 'POST', '/indexes', { uid: INDEX, primaryKey: 'id' });
    expect(created.status).toBe(202);

    const writes: Write[] = [];
    const seenSucceeded = new Set<number>();
    const restartMs: number[] = [];
    const problems: string[] = [];

    async function send(url: string, w: Write): Promise<void> {
      try {
        const r = await call(url, w.method, `/indexes/${INDEX}/documents?customMetadata=w${w.seq}`, w.docs);
        if (r.status !== 202) throw new Error(`write ${w.seq}: ${r.status} ${JSON.stringify(r.body)}`);
        w.taskUid = r.body.taskUid;
        w.acked = true;
      } catch (e) {
        if (e instanceof Error && e.message.startsWith('write ')) throw e;
        w.uncertain = true; // the kill took the answer
      }
    }

    for (let kill = 0; kill < KILLS; kill++) {
      // Writers (two in flight, so batches form) and a poller run until the seeded kill moment.
      const killAfter = rng.int(20, 500);
      const url = srv.url;
      let alive = true;
      const writer = async () => {
        while (alive) {
          const w = makeWrite(rng, writes.length);
          writes.push(w);
          await send(url, w);
        }
      };
      const poller = async () => {
        while (alive) {
          try {
            const r = await call(url, 'GET', `/tasks?indexUids=${INDEX}&statuses=succeeded&limit=1000`);
            if (alive) for (const t of r.body.results) seenSucceeded.add(t.uid);
          } catch {
            // killed meanwhile
          }
          await new Promise((res) => setTimeout(res, 40));
        }
      };
      const running = [writer(), writer(), poller()];
      await new Promise((res) => setTimeout(res, killAfter));
      srv.child.kill('SIGKILL');
      alive = false;
      await new Promise((res) => srv.child.once('exit', res));
      await Promise.all(running);

      const t0 = Date.now();
      srv = await startChild(dbPath);
      restartMs.push(Date.now() - t0);

      // What survived: acknowledged tasks all exist; once succeeded stays succeeded.
      const tasks = await allTasks(srv.url);
      const byMeta = new Map<string, any>();
      for (const t of tasks.values()) if (t.customMetadata) byMeta.set(t.customMetadata, t);
      for (const w of writes) {
        if (w.acked) {
          const t = tasks.get(w.taskUid!);
          if (!t) problems.push(`after kill ${kill + 1}: acknowledged task ${w.taskUid} (write ${w.seq}) is missing`);
          else if (t.customMetadata !== `w${w.seq}`)
            problems.push(`after kill ${kill + 1}: task ${w.taskUid} carries ${t.customMetadata}, expected w${w.seq}`);
        } else if (w.uncertain) {
          const t = byMeta.get(`w${w.seq}`);
          w.uncertain = false;
          if (t) w.taskUid = t.uid;
          else w.dropped = true;
        }
      }
      for (const uid of seenSucceeded) {
        const status = tasks.get(uid)?.status;
        if (status !== 'succeeded' && uid !== created.body.taskUid)
          problems.push(`after kill ${kill + 1}: task ${uid} was succeeded, now ${status}`);
      }
      for (const w of writes)
        if (w.dropped && byMeta.has(`w${w.seq}`))
          problems.push(`after kill ${kill + 1}: write ${w.seq} was resolved as never enqueued but its task appeared`);
    }

    // Let everything finish, then compare every document with the model.
    const deadline = Date.now() + 60000;
    let tasks = await allTasks(srv.url);
    while (
      [...tasks.values()].some((t) => t.status === 'enqueued' || t.status === 'processing') &&
      Date.now() < deadline
    ) {
      await new Promise((res) => setTimeout(res, 100));
      tasks = await allTasks(srv.url);
    }
    const applied = writes.filter((w) => w.taskUid !== undefined).sort((a, b) => a.taskUid! - b.taskUid!);
    for (const w of applied) {
      const t = tasks.get(w.taskUid!);
      if (t?.status !== 'succeeded')
        problems.push(
          `write ${w.seq} (task ${w.taskUid}, ${w.acked ? 'acknowledged' : 'answer lost'}) ended ${t?.status}: ${JSON.stringify(t?.error)}`,
        );
    }
    const model = new Map<number, Doc>();
    for (const w of applied) {
      for (const d of w.docs) {
        const id = d.id as number;
        model.set(id, w.method === 'POST' ? d : { ...(model.get(id) ?? {}), ...d });
      }
    }
    const got = await call(srv.url, 'GET', `/indexes/${INDEX}/documents?limit=${IDS + 1}`);
    expect(got.status).toBe(200);
    const stored = new Map<number, Doc>(got.body.results.map((d: Doc) => [d.id as number, d]));
    let wrongDocs = 0;
    for (const [id, want] of model) {
      const have = stored.get(id);
      if (JSON.stringify(have && sortKeys(have)) !== JSON.stringify(sortKeys(want))) {
        if (++wrongDocs <= 5)
          problems.push(`document ${id}: stored ${JSON.stringify(have)}, expected ${JSON.stringify(want)}`);
      }
    }
    for (const id of stored.keys()) if (!model.has(id)) problems.push(`document ${id} exists but no write made it`);

    srv.child.kill('SIGTERM');
    await new Promise((res) => srv.child.once('exit', res));

    const sorted = [...restartMs].sort((a, b) => a - b);
    const figures = {
      seed: SEED,
      kills: KILLS,
      writes: writes.length,
      acknowledged: writes.filter((w) => w.acked).length,
      answerLostButEnqueued: writes.filter((w) => !w.acked && w.taskUid !== undefined).length,
      answerLostNeverEnqueued: writes.filter((w) => w.dropped).length,
      documentsWritten: applied.reduce((s, w) => s + w.docs.length, 0),
      documentsChecked: model.size,
      wrongDocs,
      restartMs: { min: sorted[0], median: sorted[Math.floor(sorted.length / 2)], max: sorted[sorted.length - 1] },
    };
    if (problems.length || process.env.QUARRY_CRASH_LOOP_VERBOSE)
      console.log(`crash loop ${JSON.stringify(figures)}\n${problems.slice(0, 30).join('\n')}\n${srv.log.join('')}`);
    expect(problems).toEqual([]);
    expect(got.body.total).toBe(model.size);
    expect(figures.acknowledged).toBeGreaterThan(KILLS);
    expect(figures.documentsChecked).toBeGreaterThan(0);
  }, 240000);
});

function sortKeys(d: Doc): Doc {
  return Object.fromEntries(
    Object.keys(d)
      .sort()
      .map((k) => [k, d[k]]),
  );
}
