/** `POST /tasks/compact` (`taskQueueCompactionRoute`): see `ts/tasks/compaction.ts`. */
import { Router } from 'express';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';

export function taskCompactionRoutes(deps: Deps): Router {
  const r = Router();
  r.post('/tasks/compact', deps.guard('tasks.compact'), async (_req, res) => {
    if (!deps.features.get().taskQueueCompactionRoute) {
      throw new ApiError(
        'feature_not_enabled',
        'Using the /tasks/compact route requires enabling the `task queue compaction route` experimental feature. See https://github.com/orgs/meilisearch/discussions/883',
      );
    }
    res.status(200).json(await deps.compaction.compact());
  });
  return r;
}
