/** `POST /tasks/compact` (`taskQueueCompactionRoute`): see `ts/tasks/compaction.ts`. */
import { Router } from 'express';
import { compactTaskDatabase } from '../commands/compaction';
import type { Deps } from '../deps';

export function taskCompactionRoutes(deps: Deps): Router {
  const r = Router();
  r.post('/tasks/compact', deps.guard('tasks.compact'), async (_req, res) => {
    res.status(200).json(await compactTaskDatabase(deps));
  });
  return r;
}
