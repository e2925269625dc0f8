/**
 * Compacting the task database (`POST /tasks/compact`, the `taskQueueCompactionRoute`
 * experimental feature): not a task, it runs at once (see `tasks/compaction.ts`). An index's
 * own compaction is a task: `compactIndex` in `commands/indexes.ts`.
 */
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import type { CompactionReport } from '../tasks/compaction';

/** Compacts the task database and answers its sizes before and after; refused while the feature is off. */
export function compactTaskDatabase(deps: Deps): Promise<CompactionReport> {
  if (!deps.features.get().taskQueueCompactionRoute) {
    throw new ApiError(
      'feature_not_enabled',
      'Using the /tasks/compact route requires enabling the `task queue compaction route` experimental feature. See https://github.com/orgs/meilisearch/discussions/883',
    );
  }
  return deps.compaction.compact();
}
