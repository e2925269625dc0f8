/**
 * Compacting the task database (`POST /tasks/compact`): the task store's LMDB file is
 * rewritten without its free pages (tasks and batches deleted over time leave many), the way
 * Meilisearch compacts its own.
 *
 * Meilisearch answers with the sizes and then wants a restart: `/health` says `mustRestart`
 * and its writes wait forever. Here the store reopens on the compacted file and goes on (see
 * `KvStore::compact` in `crates/kv`); the answer and `/health` still say what Meilisearch's
 * do, so a client or an orchestrator that follows them restarts an instance that would also
 * have worked without it.
 */
import type { KvStore } from '../native';
import { byteSize } from './run/indexes';

export interface CompactionReport {
  preSize: string;
  postSize: string;
  status: 'succeeded';
  actionRequired: string;
}

export class TaskDbCompaction {
  /** Set once a compaction has succeeded: `/health` then answers `mustRestart`. */
  mustRestart = false;
  private running: Promise<CompactionReport> | null = null;

  constructor(private readonly kv: KvStore) {}

  /** Compacts the task database; concurrent calls share one compaction. */
  compact(): Promise<CompactionReport> {
    this.running ??= this.kv
      .compact()
      .then(({ before, after }) => {
        this.mustRestart = true;
        return {
          preSize: byteSize(before),
          postSize: byteSize(after),
          status: 'succeeded' as const,
          actionRequired: 'you must restart your instance',
        };
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }
}
