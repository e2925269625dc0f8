/**
 * The nemesis run (issue 67), in the spirit of Jepsen: three NATS servers and three Quarry
 * instances on loopback; writers add, update and delete documents and change settings through
 * all three instances while a nemesis kills (SIGKILL) and pauses (SIGSTOP, then SIGCONT)
 * random NATS servers and Quarry instances and starts them again. Then everything is healed
 * and the run checks that:
 * - every acknowledged task exists on every instance, ended, with the same status (lost: 0);
 * - every instance has the same tasks (uid, status, type, details, error, batch) and the same
 *   batches, and holds exactly the same documents, which are what the tasks give applied in
 *   uid order (writes whose answer was lost count if, and only if, their task exists);
 * - every instance answers the same seeded searches with the same hits.
 *
 * `nemesis.test.ts` runs a short form in `npm test`; `npm run nemesis -- --kills 100` a long one.
 */
import { Rng } from '../hostile/fuzz';
import { NatsCluster } from '../../scripts/nats-cluster';
import { eventually, QuarryNode } from '../helpers/replica';

export interface NemesisOptions {
  kills: number;
  seed: number;
  writers?: number;
  log?: (line: string) => void;
}

export interface NemesisReport {
  seed: number;
  kills: number;
  pauses: number;
  natsKills: number;
  quarryKills: number;
  writes: number;
  acknowledged: number;
  refused: number;
  uncertain: number;
  uncertainApplied: number;
  lost: number[];
  disagreements: string[];
  documents: number;
  tasks: number;
  seconds: number;
}

const INDEX = 'nemesis';

/** An integer in [0, n). */
const below = (r: Rng, n: number) => r.int(0, n - 1);
const IDS = 400;

type Op =
  | { kind: 'replace'; docs: Array<Record<string, unknown>> }
  | { kind: 'update'; docs: Array<Record<string, unknown>> }
  | { kind: 'delete'; ids: number[] }
  | { kind: 'settings'; body: Record<string, unknown> };

interface Write {
  n: number;
  op: Op;
  via: string;
  taskUid: number | null;
  outcome: 'acked' | 'refused' | 'uncertain';
}

const WORDS = [
  'river',
  'stone',
  'quarry',
  'lantern',
  'harbor',
  'meadow',
  'copper',
  'willow',
  'ember',
  'falcon',
  'cedar',
  'orbit',
];

function makeOp(rng: Rng, n: number): Op {
  const r = below(rng, 100);
  if (r < 5)
    return {
      kind: 'settings',
      body:
        below(rng, 2) === 0
          ? { filterableAttributes: ['n', 'tag'], sortableAttributes: ['n'] }
          : { filterableAttributes: ['tag'], searchableAttributes: ['title', 'tag'] },
    };
  if (r < 12) return { kind: 'delete', ids: Array.from({ length: 1 + below(rng, 5) }, () => below(rng, IDS)) };
  const count = 1 + below(rng, 30);
  const docs = Array.from({ length: count }, () => {
    const id = below(rng, IDS);
    return r < 60
      ? {
          id,
          title: `${WORDS[below(rng, WORDS.length)]} ${WORDS[below(rng, WORDS.length)]}`,
          tag: WORDS[below(rng, WORDS.length)],
          n,
        }
      : { id, n, tag: WORDS[below(rng, WORDS.length)] };
  });
  return r < 60 ? { kind: 'replace', docs } : { kind: 'update', docs };
}

async function send(node: QuarryNode, op: Op, n: number): Promise<{ status: number; body: any } | null> {
  const meta = `?customMetadata=w${n}`;
  try {
    switch (op.kind) {
      case 'replace':
        return await node.api('POST', `/indexes/${INDEX}/documents${meta}`, op.docs, undefined, 8000);
      case 'update':
        return await node.api('PUT', `/indexes/${INDEX}/documents${meta}`, op.docs, undefined, 8000);
      case 'delete':
        return await node.api('POST', `/indexes/${INDEX}/documents/delete-batch${meta}`, op.ids, undefined, 8000);
      case 'settings':
        return await node.api('PATCH', `/indexes/${INDEX}/settings${meta}`, op.body, undefined, 8000);
    }
  } catch {
    return null;
  }
}

/** The documents the succeeded tasks give, applied in uid order. */
function model(tasks: any[], writes: Map<string, Write>): Map<number, Record<string, unknown>> {
  const docs = new Map<number, Record<string, unknown>>();
  for (const t of [...tasks].sort((a, b) => a.uid - b.uid)) {
    if (t.indexUid !== INDEX || t.status !== 'succeeded' || !t.customMetadata) continue;
    const w = writes.get(t.customMetadata);
    if (!w) continue;
    const op = w.op;
    if (op.kind === 'replace') for (const d of op.docs) docs.set(d.id as number, { ...d });
    else if (op.kind === 'update')
      for (const d of op.docs) docs.set(d.id as number, { ...(docs.get(d.id as number) ?? {}), ...d });
    else if (op.kind === 'delete') for (const id of op.ids) docs.delete(id);
  }
  return docs;
}

export async function runNemesis(opts: NemesisOptions): Promise<NemesisReport> {
  const log = opts.log ?? (() => undefined);
  const t0 = Date.now();
  const rng = new Rng(opts.seed);
  const cluster = await NatsCluster.start(3);
  const nodes = await Promise.all(
    ['a', 'b', 'c'].map((name) =>
      QuarryNode.create(name, cluster.urls(), [
        '--replication-timeout-ms',
        '3000',
        '--replication-snapshot-interval',
        '5',
      ]),
    ),
  );
  const report: NemesisReport = {
    seed: opts.seed,
    kills: 0,
    pauses: 0,
    natsKills: 0,
    quarryKills: 0,
    writes: 0,
    acknowledged: 0,
    refused: 0,
    uncertain: 0,
    uncertainApplied: 0,
    lost: [],
    disagreements: [],
    documents: 0,
    tasks: 0,
    seconds: 0,
  };
  try {
    await Promise.all(nodes.map((n) => n.start()));
    const writes = new Map<string, Write>();
    let n = 0;
    let stop = false;

    const writer = async (w: number) => {
      const wr = new Rng(opts.seed * 31 + w);
      while (!stop) {
        const node = nodes[below(wr, nodes.length)];
        if (!node.up) {
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        const k = ++n;
        const op = makeOp(wr, k);
        const write: Write = { n: k, op, via: node.name, taskUid: null, outcome: 'uncertain' };
        writes.set(`w${k}`, write);
        const r = await send(node, op, k);
        if (r && r.status === 202) {
          write.outcome = 'acked';
          write.taskUid = r.body.taskUid;
        } else if (r && r.status >= 400 && r.status < 500) {
          throw new Error(`write w${k} refused as invalid: ${r.status} ${JSON.stringify(r.body)}`);
        } else if (r && r.body?.code === 'replication_unavailable') {
          write.outcome = 'uncertain'; // the log may have stored it after all
        }
      }
    };
    const writers = Array.from({ length: opts.writers ?? 3 }, (_, w) => writer(w));

    // The nemesis: one fault at a time, each undone before the next; kills count SIGKILLs.
    while (report.kills < opts.kills) {
      await new Promise((r) => setTimeout(r, 300 + below(rng, 700)));
      const onNats = below(rng, 2) === 0;
      const i = below(rng, 3);
      const pause = below(rng, 3) === 0;
      const downFor = 300 + below(rng, 2500);
      if (onNats) {
        if (pause) {
          cluster.pause(i);
          report.pauses++;
          log(`pause nats n${i + 1} for ${downFor} ms`);
          await new Promise((r) => setTimeout(r, downFor));
          cluster.resume(i);
        } else {
          await cluster.kill(i);
          report.kills++;
          report.natsKills++;
          log(`kill nats n${i + 1} for ${downFor} ms`);
          await new Promise((r) => setTimeout(r, downFor));
          cluster.restart(i);
        }
      } else {
        const node = nodes[i];
        if (pause) {
          node.pause();
          report.pauses++;
          log(`pause quarry ${node.name} for ${downFor} ms`);
          await new Promise((r) => setTimeout(r, downFor));
          node.resume();
        } else {
          await node.kill();
          report.kills++;
          report.quarryKills++;
          log(`kill quarry ${node.name} for ${downFor} ms`);
          await new Promise((r) => setTimeout(r, downFor));
          await node.start();
        }
      }
    }

    // Heal, let the writers see a healthy group for a moment, then stop them.
    for (let i = 0; i < 3; i++) {
      cluster.resume(i);
      cluster.restart(i);
    }
    for (const node of nodes) {
      node.resume();
      if (!node.child) await node.start();
    }
    await new Promise((r) => setTimeout(r, 1500));
    stop = true;
    await Promise.all(writers);
    for (const node of nodes) {
      let last: unknown = null;
      await eventually(
        async () => {
          last = (await node.api('GET', '/health')).body;
          return (last as { status?: string }).status === 'available' ? true : undefined;
        },
        60_000,
        `${node.name} available`,
      ).catch((err: Error) => {
        throw new Error(
          `${err.message}; its health: ${JSON.stringify(last)}; its log: ${node.log.slice(-10).join('')}`,
        );
      });
    }

    // A last write through each instance: every instance has then received everything before it.
    const finals: number[] = [];
    for (const node of nodes) {
      const r = await eventually(
        async () => {
          const x = await node.api('POST', `/indexes/${INDEX}/documents?customMetadata=final`, [
            { id: IDS + finals.length, final: true },
          ]);
          return x.status === 202 ? x : undefined;
        },
        60_000,
        `a final write through ${node.name}`,
      );
      finals.push(r.body.taskUid);
    }
    const lastUid = Math.max(...finals);
    for (const node of nodes) await node.waitTask(lastUid, 180_000);
    // Tasks of writes whose answer was lost may come after the last final one: wait for them all.
    for (const node of nodes) {
      await eventually(
        async () => {
          const r = await node.api('GET', '/tasks?statuses=enqueued,processing&limit=1');
          return r.status === 200 && r.body.total === 0 ? true : undefined;
        },
        180_000,
        `${node.name} idle`,
      );
    }

    const tasksOf = async (node: QuarryNode) => (await node.api('GET', '/tasks?limit=1000000')).body.results as any[];
    const all = await Promise.all(nodes.map(tasksOf));
    const view = (t: any) =>
      JSON.stringify([
        t.uid,
        t.batchUid,
        t.indexUid,
        t.status,
        t.type,
        t.details,
        t.error,
        t.customMetadata,
        t.enqueuedAt,
      ]);
    const reference = all[0].map(view);
    report.tasks = reference.length;
    for (let k = 1; k < nodes.length; k++) {
      const other = all[k].map(view);
      if (other.length !== reference.length)
        report.disagreements.push(`${nodes[k].name} has ${other.length} tasks, a has ${reference.length}`);
      for (let j = 0; j < Math.min(other.length, reference.length); j++) {
        if (other[j] !== reference[j]) {
          report.disagreements.push(`task ${all[0][j].uid}: a ${reference[j]} / ${nodes[k].name} ${other[j]}`);
          break;
        }
      }
    }
    const batchesOf = async (node: QuarryNode) =>
      (await node.api('GET', '/batches?limit=1000000')).body.results.map((b: any) =>
        JSON.stringify([b.uid, b.stats.totalNbTasks, b.stats.status, b.details]),
      );
    const batches = await Promise.all(nodes.map(batchesOf));
    for (let k = 1; k < nodes.length; k++)
      if (JSON.stringify(batches[k]) !== JSON.stringify(batches[0]))
        report.disagreements.push(`${nodes[k].name}'s batches differ from a's`);

    const byMeta = new Map(all[0].filter((t) => t.customMetadata).map((t) => [t.customMetadata, t]));
    for (const w of writes.values()) {
      report.writes++;
      if (w.outcome === 'acked') {
        report.acknowledged++;
        const t = all[0].find((x) => x.uid === w.taskUid);
        // Settings tasks keep no customMetadata (nor do Meilisearch's): known by uid and type.
        const mine =
          t !== undefined && (w.op.kind === 'settings' ? t.type === 'settingsUpdate' : t.customMetadata === `w${w.n}`);
        if (!mine) {
          report.lost.push(w.taskUid!);
          const found = byMeta.get(`w${w.n}`);
          if (report.lost.length <= 10)
            report.disagreements.push(
              `lost: w${w.n} via ${w.via} acknowledged as task ${w.taskUid}; that uid holds ${t ? `w=${t.customMetadata} ${t.type} ${t.status}` : 'nothing'}; w${w.n} is ${found ? `task ${found.uid}` : 'nowhere'}`,
            );
        } else if (t.status !== 'succeeded')
          report.disagreements.push(
            `acknowledged write w${w.n} (task ${t.uid}) ended ${t.status}: ${JSON.stringify(t.error)}`,
          );
      } else {
        report.uncertain++;
        if (byMeta.has(`w${w.n}`)) report.uncertainApplied++;
      }
    }

    const docsOf = async (node: QuarryNode) => {
      const r = await node.api('POST', `/indexes/${INDEX}/documents/fetch`, { limit: 100000 });
      return (r.body.results as any[]).filter((d) => !d.final).sort((x, y) => x.id - y.id);
    };
    const docs = await Promise.all(nodes.map(docsOf));
    report.documents = docs[0].length;
    for (let k = 1; k < nodes.length; k++)
      if (JSON.stringify(docs[k]) !== JSON.stringify(docs[0]))
        report.disagreements.push(`${nodes[k].name}'s documents differ from a's`);
    const expected = [...model(all[0], writes).values()].sort((x, y) => (x.id as number) - (y.id as number));
    if (JSON.stringify(expected) !== JSON.stringify(docs[0]))
      report.disagreements.push(
        `the documents are not what the tasks give: ${docs[0].length} held, ${expected.length} expected`,
      );

    const queries = Array.from({ length: 20 }, (_, q) => ({
      q: `${WORDS[q % WORDS.length]} ${q % 3 === 0 ? WORDS[(q * 7) % WORDS.length] : ''}`.trim(),
      limit: 20,
    }));
    for (const query of queries) {
      const hits = await Promise.all(
        nodes.map(async (node) =>
          JSON.stringify((await node.api('POST', `/indexes/${INDEX}/search`, query)).body.hits),
        ),
      );
      for (let k = 1; k < nodes.length; k++)
        if (hits[k] !== hits[0])
          report.disagreements.push(`search ${JSON.stringify(query)}: ${nodes[k].name} differs from a`);
    }
    return report;
  } finally {
    report.seconds = Math.round((Date.now() - t0) / 1000);
    await Promise.all(nodes.map((node) => node.kill()));
    await cluster.stop();
  }
}
