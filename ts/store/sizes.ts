/**
 * The database's size, one definition for `/stats` and `/metrics`: the task store's file and
 * every index's files (`databaseSize`), and the same less the pages LMDB holds free
 * (`usedDatabaseSize`), as the engine measures an index.
 */
import type { IndexStats, KvStore } from '../native';

export function databaseSizes(
  kv: KvStore,
  indexes: Iterable<Pick<IndexStats, 'databaseSize' | 'usedDatabaseSize'>>,
): { size: number; used: number } {
  const store = kv.sizes();
  let size = store.file;
  let used = store.used;
  for (const s of indexes) {
    size += s.databaseSize;
    used += s.usedDatabaseSize;
  }
  return { size, used };
}
