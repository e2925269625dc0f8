/** `POST /dumps` and `POST /snapshots`: tasks the worker runs (see `dumps/create.ts`). */
import { Router } from 'express';
import type { Deps } from '../deps';
import { summaryView } from '../tasks/queue';

export function archiveRoutes(deps: Deps): Router {
  const r = Router();
  const { guard, queue } = deps;

  r.post('/dumps', guard('dumps.create'), async (_req, res) => {
    const task = await queue.enqueue({
      indexUid: null,
      type: 'dumpCreation',
      details: { dumpUid: null },
      payload: { kind: 'dumpCreation' },
    });
    res.status(202).json(summaryView(task));
  });

  r.post('/snapshots', guard('snapshots.create'), async (_req, res) => {
    const task = await queue.enqueue({
      indexUid: null,
      type: 'snapshotCreation',
      details: null,
      payload: { kind: 'snapshotCreation' },
    });
    res.status(202).json(summaryView(task));
  });

  return r;
}
