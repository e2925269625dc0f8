/** `export` tasks: indexes sent to another instance (run by `export/run.ts`). */
import type { Deps } from '../deps';
import { type ExportRequest, exportDetails } from '../schemas/export';
import type { TaskRecord } from '../tasks/types';

/** Enqueues an export of a checked request; the task's details hide its key. */
export function exportIndexes(deps: Pick<Deps, 'queue'>, req: ExportRequest): Promise<TaskRecord> {
  return deps.queue.enqueue({ indexUid: null, type: 'export', details: exportDetails(req), payload: { kind: 'export', ...req } });
}
