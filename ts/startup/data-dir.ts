/**
 * The data directory's format, checked before anything opens it, and the lock that keeps it
 * to one process.
 *
 * `VERSION` names the format (`quarry-1`). A directory of an older Quarry format is upgraded
 * in place with `--upgrade-db` and refused without it; a newer format, a Meilisearch database
 * (its `VERSION` holds a release such as `1.50.0`) and a directory of unrelated files are
 * refused with what to do instead. Nothing is ever read under a format it was not written in.
 */
import fs from 'node:fs';
import path from 'node:path';
import { binding, callSync } from '../native/binding';
import type { Logger } from '../logging';

/** The format this Quarry writes and reads. */
export const DATA_FORMAT = 'quarry-1';
const CURRENT = 1;

/**
 * Upgrades from format N to N+1, in order. Format 0 is a directory of the Quarry releases
 * before the `VERSION` file: the same stores in the same places, so its upgrade is only the file.
 */
const UPGRADES: ReadonlyArray<(dbPath: string) => void> = [() => undefined];

export class DataDirError extends Error {}

/** The format of `dbPath`'s contents: a Quarry format number, `null` for a new directory. */
function formatOf(dbPath: string): number | null {
  const version = path.join(dbPath, 'VERSION');
  if (fs.existsSync(version)) {
    const text = fs.readFileSync(version, 'utf8').trim();
    const quarry = /^quarry-(\d+)$/.exec(text);
    if (quarry) return Number(quarry[1]);
    if (/^\d+\.\d+\.\d+/.test(text)) {
      throw new DataDirError(
        `The data directory \`${dbPath}\` holds a Meilisearch ${text} database, which Quarry does not open directly. Create a dump with Meilisearch (\`POST /dumps\`) and start Quarry with \`--import-dump <file>\` and another \`--db-path\`.`,
      );
    }
    throw new DataDirError(
      `The data directory \`${dbPath}\` has a VERSION file Quarry does not know (\`${text.slice(0, 40)}\`): it was not written by Quarry.`,
    );
  }
  const entries = fs.existsSync(dbPath) ? fs.readdirSync(dbPath).filter((n) => n !== 'quarry.lock') : [];
  if (entries.length === 0) return null;
  if (fs.existsSync(path.join(dbPath, 'tasks', 'data.mdb'))) return 0;
  throw new DataDirError(
    `The data directory \`${dbPath}\` holds files but no Quarry database (no VERSION file): choose an empty or new directory.`,
  );
}

/**
 * Makes `dbPath` a directory of the current format: creates it, upgrades an older format when
 * `upgrade` is set, refuses anything else. Call it with the directory locked.
 */
export function prepareDataDir(dbPath: string, upgrade: boolean, logger: Logger): void {
  const format = formatOf(dbPath);
  if (format === CURRENT) return;
  if (format !== null && format > CURRENT) {
    throw new DataDirError(
      `The data directory \`${dbPath}\` was written by a newer Quarry (format quarry-${format}); this one reads ${DATA_FORMAT}. Start the newer Quarry, or move the data with a dump (\`POST /dumps\` there, \`--import-dump\` here).`,
    );
  }
  if (format !== null) {
    if (!upgrade) {
      throw new DataDirError(
        `The data directory \`${dbPath}\` was written by an older Quarry (format quarry-${format}); this one reads ${DATA_FORMAT}. Start with \`--upgrade-db\` to upgrade it in place (back it up first), or move the data with a dump.`,
      );
    }
    for (let f = format; f < CURRENT; f++) UPGRADES[f]!(dbPath);
    logger.info('data directory upgraded', { from: `quarry-${format}`, to: DATA_FORMAT });
  }
  fs.mkdirSync(dbPath, { recursive: true });
  const tmp = path.join(dbPath, 'VERSION.tmp');
  fs.writeFileSync(tmp, `${DATA_FORMAT}\n`);
  fs.renameSync(tmp, path.join(dbPath, 'VERSION'));
}

/**
 * Checks, writing nothing, that `dbPath` is a data directory of the current format that a
 * writing process has created: what a read-only opening requires.
 */
export function checkDataDirReadOnly(dbPath: string): void {
  const format = formatOf(dbPath);
  if (format === CURRENT && fs.existsSync(path.join(dbPath, 'tasks', 'data.mdb'))) return;
  if (format === null || format === CURRENT)
    throw new DataDirError(
      `The data directory \`${dbPath}\` has not been created yet: open it once without \`readOnly\` (or start a server on it) before opening it read-only.`,
    );
  throw new DataDirError(
    `The data directory \`${dbPath}\` is in format quarry-${format}; a read-only opening reads ${DATA_FORMAT} only (the writing process upgrades it).`,
  );
}

/** The held lock of a data directory. */
export interface DataDirLock {
  release(): void;
}

/** Locks `dbPath` (created if missing) for this process: a second process gets a clear error. */
export function lockDataDir(dbPath: string): DataDirLock {
  fs.mkdirSync(dbPath, { recursive: true });
  try {
    return callSync(() => binding.DataDirLock.acquire(dbPath));
  } catch (err) {
    throw new DataDirError(err instanceof Error ? err.message : String(err));
  }
}
