/**
 * The TOML configuration file (`--config-file-path`, default `./config.toml` when present).
 * Its keys are the snake_case option names (`db_path`, `http_addr`, `master_key`, ...), and
 * each value is turned into the text the same option would have on the command line, so one
 * parser per option serves the three sources (CLI > environment > file > default).
 *
 * As Meilisearch does: an explicitly named file that cannot be read is fatal, a missing
 * default file is not; an unknown key, a value of the wrong type and `config_file_path`
 * itself fail start-up, naming the key. Sizes are strings (`"100 MB"`) in the file, not
 * integers, again as Meilisearch wants them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse, TomlError } from 'smol-toml';

/** What a config-file value may be. `string` is the default for options that take a value. */
export type TomlKind = 'string' | 'boolean' | 'integer' | 'integer-or-string' | 'boolean-or-integer';

/** Options whose value is a number (or, for `max_indexing_threads`, `"unlimited"`) in the file. */
export const TOML_KINDS: Record<string, TomlKind> = {
  max_indexing_threads: 'integer-or-string',
  experimental_max_number_of_batched_tasks: 'integer',
  experimental_search_queue_size: 'integer',
  experimental_nb_searches_per_core: 'integer',
  experimental_drop_search_after: 'integer',
  experimental_embedding_cache_entries: 'integer',
  experimental_remote_timeout_ms: 'integer',
  experimental_search_response_budget: 'integer-or-string',
  experimental_analytics_interval_ms: 'integer',
  schedule_snapshot: 'boolean-or-integer',
};

export interface ConfigFileKey {
  /** The option row's name (`RawOptions` key). */
  name: string;
  kind: TomlKind;
}

export class ConfigFileError extends Error {}

const SELF_KEY = ['config', 'file', 'path'].join('_');

/** The file to read: the explicit path (must exist), else `./config.toml` if it exists. */
export function configFileToRead(
  explicit: string | undefined,
  cwd: string,
): { file: string; explicit: boolean } | null {
  if (explicit !== undefined && explicit !== '') return { file: path.resolve(cwd, explicit), explicit: true };
  const fallback = path.resolve(cwd, 'config.toml');
  return fs.existsSync(fallback) ? { file: fallback, explicit: false } : null;
}

function typeName(v: unknown): string {
  if (Array.isArray(v)) return 'an array';
  if (v instanceof Date || (v !== null && typeof v === 'object' && 'isDate' in (v as object))) return 'a date';
  if (typeof v === 'object' && v !== null) return 'a table';
  if (typeof v === 'number' || typeof v === 'bigint')
    return Number.isInteger(Number(v)) ? `integer \`${String(v)}\`` : `float \`${String(v)}\``;
  if (typeof v === 'boolean') return `boolean \`${v}\``;
  return `string \`${String(v)}\``;
}

function asText(key: string, kind: TomlKind, v: unknown, where: string): string {
  const isInt = (typeof v === 'number' && Number.isInteger(v)) || typeof v === 'bigint';
  const ok =
    (kind === 'string' && typeof v === 'string') ||
    (kind === 'boolean' && typeof v === 'boolean') ||
    (kind === 'integer' && isInt) ||
    (kind === 'integer-or-string' && (isInt || typeof v === 'string')) ||
    (kind === 'boolean-or-integer' && (isInt || typeof v === 'boolean'));
  if (!ok) {
    const expected = {
      string: 'a string',
      boolean: 'a boolean',
      integer: 'an integer',
      'integer-or-string': 'an integer or a string',
      'boolean-or-integer': 'a boolean or an integer',
    }[kind];
    throw new ConfigFileError(`${where}: \`${key}\` has ${typeName(v)}, expected ${expected}`);
  }
  return String(v);
}

/**
 * Reads and checks the file; returns option name → value as text. `keys` maps every
 * accepted key to its option; `refused(key)` names keys that exist in Meilisearch but that
 * Quarry refuses (its message is thrown as is).
 */
export function readConfigFile(
  target: { file: string; explicit: boolean },
  keys: ReadonlyMap<string, ConfigFileKey>,
  refused: (key: string) => string | null,
): Record<string, string> {
  let text: string;
  try {
    text = fs.readFileSync(target.file, 'utf8');
  } catch (err) {
    throw new ConfigFileError(
      `unable to open or read the configuration file \`${target.file}\`: ${(err as Error).message}`,
    );
  }
  let doc: Record<string, unknown>;
  try {
    doc = parse(text) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof TomlError)
      throw new ConfigFileError(
        `configuration file \`${target.file}\` is not valid TOML (line ${err.line}, column ${err.column}): ${err.message.split('\n')[0]}`,
      );
    throw err;
  }
  const where = `configuration file \`${target.file}\``;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(doc)) {
    // The file cannot name another file (`config_file_path`), as in Meilisearch.
    if (key === SELF_KEY) throw new ConfigFileError(`${where}: \`${key}\` is not supported in the configuration file`);
    const refusal = refused(key);
    if (refusal !== null) throw new ConfigFileError(refusal);
    const spec = keys.get(key);
    if (!spec)
      throw new ConfigFileError(
        `${where}: unknown key \`${key}\` (keys are the snake_case option names, e.g. \`db_path\`, \`http_addr\`; see --help)`,
      );
    out[spec.name] = asText(key, spec.kind, value, where);
  }
  return out;
}
