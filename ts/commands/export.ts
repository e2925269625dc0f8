/** `export` tasks: indexes sent to another instance (run by `export/run.ts`). */
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { type ExportRequest, exportDetails } from '../schemas/export';
import type { TaskRecord } from '../tasks/types';

/**
 * Enqueues an export of a checked request; the task's details hide its key. Refused in a
 * replicated group: every instance applies every task, so each would send the indexes.
 */
export async function exportIndexes(deps: Pick<Deps, 'queue' | 'replica'>, req: ExportRequest): Promise<TaskRecord> {
  if (deps.replica) {
    throw new ApiError(
      'unimplemented_in_replicated_group',
      'Exporting from a replicated group is not supported yet: every instance would send the indexes. Export from a single instance started on a snapshot or a dump of the group.',
    );
  }
  return deps.queue.enqueue({
    indexUid: null,
    type: 'export',
    details: exportDetails(req),
    payload: { kind: 'export', ...req },
  });
}
