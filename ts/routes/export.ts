/** `POST /export`: indexes sent to another instance, as a task (answered 200, as Meilisearch does). */
import { Router } from 'express';
import { exportIndexes } from '../commands/export';
import type { Deps } from '../deps';
import { readJson } from '../http/body';
import { parseExportRequest } from '../schemas/export';
import { summaryView } from '../tasks/queue';

export function exportRoutes(deps: Deps): Router {
  const r = Router();
  r.post('/export', deps.guard('export'), async (req, res) => {
    const task = await exportIndexes(deps, parseExportRequest(readJson(req)));
    res.status(200).json(summaryView(task));
  });
  return r;
}
