/**
 * `POST /export`'s body, read as Meilisearch 1.50 reads it (deserr's words and codes), and
 * the human byte sizes of `payloadSize` (parsed and shown as Meilisearch's `byte-unit` does).
 */
import { ApiError } from '../errors/api-error';
import { isIndexPattern } from '../auth/actions';
import { hideSecret } from '../native';
import {
  DeserrError,
  type Loc,
  type Parser,
  boolean,
  incorrectType,
  invalidValue,
  isObject,
  json,
  kindOf,
  setEntry,
  sortedRecord,
  string,
  struct,
} from '../settings/deserr';

export interface ExportIndexOptions {
  filter: unknown;
  overrideSettings: boolean;
}

export interface ExportRequest {
  url: string;
  apiKey: string | null;
  /** Bytes; null when not given (50 MiB then). */
  payloadSize: number | null;
  /** Index uid patterns (`movies`, `mov*`, `*`), sorted by bytes. */
  indexes: Record<string, ExportIndexOptions>;
}

/** The payload size when none is given. */
export const DEFAULT_PAYLOAD_SIZE = 50 * 1024 * 1024;

const U64_MAX = 2 ** 64 - 1;

/**
 * A size such as `"50 MiB"`, `"1.5 MB"`, `"10 gb"` (lowercase `b`: bits) or `"1024"`: the
 * number of bytes (rounded up), or the parse error's wording.
 */
export function parseByteSize(text: string): number | string {
  const s = text.trim();
  if (s.length === 0) return 'no value can be found';
  let i = 0;
  const digit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
  if (!digit(s[0])) return `the character '${s[0]}' is not a number`;
  while (digit(s[i])) i++;
  if (s[i] === '.') {
    i++;
    if (!digit(s[i])) return s[i] === undefined ? 'no value can be found' : `the character '${s[i]}' is not a number`;
    while (digit(s[i])) i++;
  }
  const numberText = s.slice(0, i);
  const value = Number(numberText);
  while (s[i] === ' ' || s[i] === '\t') i++;
  const unit = s.slice(i);
  const incorrect = (c: string, expected: string) =>
    `the character '${c}' is incorrect (${expected} or no character is expected)`;
  let multiplier = 1;
  let bits = false;
  if (unit.length > 0) {
    const prefix = unit[0].toUpperCase();
    const powers = 'KMGTPE';
    if (prefix === 'B') {
      bits = unit[0] === 'b';
      if (unit.length > 1) return incorrect(unit[1], "'i'");
    } else if (powers.includes(prefix)) {
      const power = powers.indexOf(prefix) + 1;
      let rest = unit.slice(1);
      let base = 1000;
      if (rest[0] === 'i' || rest[0] === 'I') {
        base = 1024;
        rest = rest.slice(1);
      }
      if (rest.length > 0) {
        if (rest[0] !== 'B' && rest[0] !== 'b') return incorrect(rest[0], "'B', 'b' or no character");
        bits = rest[0] === 'b';
        if (rest.length > 1) return incorrect(rest[1], "'i'");
      }
      multiplier = base ** power;
    } else {
      return incorrect(unit[0], "'B', 'K', 'M', 'G', 'T', 'P', 'E' or no character");
    }
  }
  const bytes = Math.ceil((value * multiplier) / (bits ? 8 : 1));
  if (!Number.isFinite(bytes) || bytes > U64_MAX) return `the value ${numberText} exceeds the valid range`;
  return bytes;
}

const UNITS: ReadonlyArray<[string, number]> = [
  ['EiB', 2 ** 60],
  ['EB', 1e18],
  ['PiB', 2 ** 50],
  ['PB', 1e15],
  ['TiB', 2 ** 40],
  ['TB', 1e12],
  ['GiB', 2 ** 30],
  ['GB', 1e9],
  ['MiB', 2 ** 20],
  ['MB', 1e6],
  ['KiB', 1024],
  ['KB', 1000],
];

/** A byte count as Meilisearch shows it: in the largest unit (decimal or binary) not above it. */
export function humanBytes(bytes: number): string {
  for (const [name, size] of UNITS) if (bytes >= size) return `${bytes / size} ${name}`;
  return `${bytes} B`;
}

const payloadSize: Parser<number | null> = (value, loc) => {
  if (value === null) return null;
  const kind = kindOf(value);
  if (kind === 'integer') return value as number;
  if (kind !== 'string') throw incorrectType(value, ['integer', 'string'], loc);
  const parsed = parseByteSize(value as string);
  if (typeof parsed === 'string') throw invalidValue(parsed, loc);
  return parsed;
};

const indexOptions: Parser<ExportIndexOptions> = struct<ExportIndexOptions>(
  { filter: json, overrideSettings: boolean },
  { defaults: { filter: () => null, overrideSettings: () => false } },
);

const patterns: Parser<Record<string, ExportIndexOptions>> = (value, loc) => {
  if (!isObject(value)) throw incorrectType(value, ['object'], loc);
  const out: Record<string, ExportIndexOptions> = {};
  for (const key of Object.keys(value)) {
    if (!isIndexPattern(key)) {
      throw invalidValue(
        `the key "${key}" could not be deserialized into the key type \`meilisearch_types::index_uid_pattern::IndexUidPattern\``,
        loc,
      );
    }
    setEntry(out, key, indexOptions(value[key], [...loc, key]));
  }
  return sortedRecord(out);
};

const nullableString: Parser<string | null> = (value, loc) => (value === null ? null : string(value, loc));

const FIELD_CODES: Record<string, string> = {
  url: 'invalid_export_url',
  apiKey: 'invalid_export_api_key',
  payloadSize: 'invalid_export_payload_size',
};

const body = struct<ExportRequest>(
  {
    url: string,
    apiKey: nullableString,
    payloadSize,
    indexes: (v, loc) => (v === null ? { '*': { filter: null, overrideSettings: false } } : patterns(v, loc)),
  },
  {
    defaults: {
      url: () => '',
      apiKey: () => null,
      payloadSize: () => null,
      indexes: () => ({ '*': { filter: null, overrideSettings: false } }),
    },
  },
);

/** The code of the field an error is about: the first key of its path, or `overrideSettings`. */
function codeOf(loc: Loc): string {
  if (loc.length === 0) return 'bad_request';
  if (loc[0] === 'indexes')
    return loc.length === 3 && loc[2] === 'overrideSettings' ? 'invalid_export_index_override_settings' : 'bad_request';
  return FIELD_CODES[String(loc[0])] ?? 'bad_request';
}

/** Reads the body, or throws Meilisearch's error (the first bad field in the body's order). */
export function parseExportRequest(raw: unknown): ExportRequest {
  try {
    return body(raw, []);
  } catch (err) {
    if (err instanceof DeserrError) throw new ApiError(codeOf(locOfMessage(err.message)), err.message);
    throw err;
  }
}

/** The location a deserr message names (`at \`.indexes.a.overrideSettings\``), as keys. */
function locOfMessage(message: string): Loc {
  const m = /(?:at|inside) `((?:\.[^.`\s]+)+)`/.exec(message);
  if (!m) return [];
  return m[1].slice(1).split('.');
}

/** The task's details when enqueued: the key hidden, the size in words, every pattern's options. */
export function exportDetails(req: ExportRequest): Record<string, unknown> {
  const out: Record<string, unknown> = { url: req.url };
  if (req.apiKey !== null) out.apiKey = hideSecret(req.apiKey);
  if (req.payloadSize !== null) out.payloadSize = humanBytes(req.payloadSize);
  out.indexes = req.indexes;
  return out;
}
