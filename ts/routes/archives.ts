/** `POST /dumps` and `POST /snapshots`: tasks the worker runs (see `dumps/create.ts`). */
import { Router } from 'express';
import { createDump, createSnapshot } from '../commands/archives';
import type { Deps } from '../deps';
import { summaryView } from '../tasks/queue';

export function archiveRoutes(deps: Deps): Router {
  const r = Router();
  const { guard } = deps;

  r.post('/dumps', guard('dumps.create'), async (_req, res) => {
    res.status(202).json(summaryView(await createDump(deps)));
  });

  r.post('/snapshots', guard('snapshots.create'), async (_req, res) => {
    res.status(202).json(summaryView(await createSnapshot(deps)));
  });

  return r;
}
