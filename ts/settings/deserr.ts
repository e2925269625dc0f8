/**
 * Request-body parsing with Meilisearch's error wording (the `deserr` crate, JSON flavour).
 *
 * A `Parser<T>` returns the parsed value or throws a `DeserrError` whose message is exactly
 * what Meilisearch would answer ("Invalid value type at `.rankingRules`: expected an array,
 * but found a string: `\"foo\"`"). Parsing stops at the first error, like deserr does with
 * Meilisearch's error type; the caller turns the message into an `ApiError` with the code of
 * the top-level setting being parsed.
 *
 * Parsed values are normalized the way the Rust types would hold them: `btreeSet` sorts and
 * deduplicates, `btreeMap` sorts keys by bytes, struct outputs follow declaration order.
 */

/** Where a value sits in the body: keys and array indexes from the root. */
export type Loc = readonly (string | number)[];

export type Parser<T> = (value: unknown, loc: Loc) => T;

export class DeserrError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeserrError';
  }
}

// ---------------------------------------------------------------------------------------------
// Value kinds and their descriptions

type Kind = 'null' | 'boolean' | 'integer' | 'negativeInteger' | 'float' | 'string' | 'array' | 'object';

const KIND_ORDER: readonly Kind[] = [
  'null',
  'boolean',
  'integer',
  'negativeInteger',
  'float',
  'string',
  'array',
  'object',
];

const KIND_TEXT: Record<Kind, string> = {
  null: 'null',
  boolean: 'a boolean',
  integer: 'a positive integer',
  negativeInteger: 'a negative integer',
  float: 'a number',
  string: 'a string',
  array: 'an array',
  object: 'an object',
};

const TWO_POW_64 = 2 ** 64;
const TWO_POW_63 = 2 ** 63;

/** The JSON kind of a parsed JSON value, with serde_json's integer/float split. */
export function kindOf(value: unknown): Kind {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'boolean':
      return 'boolean';
    case 'string':
      return 'string';
    case 'number':
      if (Number.isInteger(value) && value >= 0 && value < TWO_POW_64) return 'integer';
      if (Number.isInteger(value) && value < 0 && value >= -TWO_POW_63) return 'negativeInteger';
      return 'float';
    default:
      return 'object';
  }
}

/** "a boolean or a positive integer", "null, a boolean, or a number"... */
export function describeKinds(kinds: readonly Kind[]): string {
  let rest = KIND_ORDER.filter((k) => kinds.includes(k));
  if (rest.length === 0) return 'a different value';
  const parts: string[] = [];
  while (rest.length > 0) {
    const [a, b, c] = rest;
    if ((a === 'integer' || a === 'negativeInteger') && b === 'float') {
      parts.push('a number');
      rest = rest.slice(2);
    } else if (a === 'integer' && b === 'negativeInteger' && c === 'float') {
      parts.push('a number');
      rest = rest.slice(3);
    } else if (a === 'integer' && b === 'negativeInteger') {
      parts.push('an integer');
      rest = rest.slice(2);
    } else {
      parts.push(KIND_TEXT[a]);
      rest = rest.slice(1);
    }
  }
  if (parts.length === 1) return parts[0];
  if (parts.length === 2) return `${parts[0]} or ${parts[1]}`;
  return `${parts.slice(0, -1).join(', ')}, or ${parts[parts.length - 1]}`;
}

/** "a string: `\"foo\"`", or just "null". */
export function describeValue(value: unknown): string {
  const kind = kindOf(value);
  return kind === 'null' ? 'null' : `${KIND_TEXT[kind]}: \`${JSON.stringify(value)}\``;
}

// ---------------------------------------------------------------------------------------------
// Messages

function locText(loc: Loc): string {
  return loc.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');
}

/** " at `.a.b`" (or " inside ..."); nothing at the root. */
function where(loc: Loc, preposition: 'at' | 'inside'): string {
  return loc.length === 0 ? '' : ` ${preposition} \`${locText(loc)}\``;
}

function quotedList(items: readonly string[]): string {
  return items.map((i) => `\`${i}\``).join(', ');
}

export function incorrectType(value: unknown, accepted: readonly Kind[], loc: Loc): DeserrError {
  return new DeserrError(
    `Invalid value type${where(loc, 'at')}: expected ${describeKinds(accepted)}, but found ${describeValue(value)}`,
  );
}

export function missingField(field: string, loc: Loc): DeserrError {
  return new DeserrError(`Missing field \`${field}\`${where(loc, 'inside')}`);
}

export function unknownField(key: string, accepted: readonly string[], loc: Loc): DeserrError {
  return new DeserrError(
    `Unknown field \`${key}\`${where(loc, 'inside')}: ${didYouMean(key, accepted)}expected one of ${quotedList(accepted)}`,
  );
}

export function unknownValue(value: string, accepted: readonly string[], loc: Loc): DeserrError {
  return new DeserrError(
    `Unknown value \`${value}\`${where(loc, 'at')}: ${didYouMean(value, accepted)}expected one of ${quotedList(accepted)}`,
  );
}

/** A value of the right type that a validation rejected: "Invalid value at `.x`: <msg>". */
export function invalidValue(message: string, loc: Loc): DeserrError {
  return new DeserrError(`Invalid value${where(loc, 'at')}: ${message}`);
}

/** "did you mean `x`? " when one accepted word is close enough, else "". */
export function didYouMean(received: string, accepted: readonly string[]): string {
  const bytes = Buffer.byteLength(received);
  if (bytes <= 3) return '';
  const allowed = bytes <= 7 ? 1 : bytes <= 12 ? 2 : bytes <= 17 ? 3 : bytes <= 24 ? 4 : 5;
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of accepted) {
    const d = damerauLevenshtein(received, candidate);
    if (d <= allowed && d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best === null ? '' : `did you mean \`${best}\`? `;
}

/** Unrestricted Damerau-Levenshtein distance over Unicode scalar values. */
export function damerauLevenshtein(left: string, right: string): number {
  const a = Array.from(left);
  const b = Array.from(right);
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  const width = b.length + 2;
  const d = new Array<number>((a.length + 2) * width).fill(0);
  const at = (i: number, j: number): number => i * width + j;
  const max = a.length + b.length;
  d[0] = max;
  for (let i = 0; i <= a.length; i++) {
    d[at(i + 1, 0)] = max;
    d[at(i + 1, 1)] = i;
  }
  for (let j = 0; j <= b.length; j++) {
    d[at(0, j + 1)] = max;
    d[at(1, j + 1)] = j;
  }
  const lastRow = new Map<string, number>();
  for (let i = 1; i <= a.length; i++) {
    let lastMatchCol = 0;
    for (let j = 1; j <= b.length; j++) {
      const k = lastRow.get(b[j - 1]) ?? 0;
      const insertion = d[at(i, j + 1)] + 1;
      const deletion = d[at(i + 1, j)] + 1;
      const transposition = d[at(k, lastMatchCol)] + (i - k - 1) + 1 + (j - lastMatchCol - 1);
      let substitution = d[at(i, j)] + 1;
      if (a[i - 1] === b[j - 1]) {
        lastMatchCol = j;
        substitution -= 1;
      }
      d[at(i + 1, j + 1)] = Math.min(substitution, insertion, deletion, transposition);
    }
    lastRow.set(a[i - 1], i);
  }
  return d[at(a.length + 1, b.length + 1)];
}

// ---------------------------------------------------------------------------------------------
// Ordering of sets and maps (Rust's BTreeSet / BTreeMap compare strings byte-wise)

export function compareBytes(a: string, b: string): number {
  return a === b ? 0 : Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Sorted by bytes, duplicates removed. */
export function sortedSet(items: readonly string[]): string[] {
  return [...new Set(items)].sort(compareBytes);
}

/**
 * Stores `value` under a key that came from a request body. Plain assignment would turn a
 * `"__proto__"` key into a prototype change instead of an entry.
 */
export function setEntry<T>(record: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The same entries with keys sorted by bytes (as far as JS key order allows). */
export function sortedRecord<T>(record: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const key of Object.keys(record).sort(compareBytes)) setEntry(out, key, record[key]);
  return out;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return kindOf(value) === 'object';
}

// ---------------------------------------------------------------------------------------------
// Parsers

export const string: Parser<string> = (value, loc) => {
  if (typeof value !== 'string') throw incorrectType(value, ['string'], loc);
  return value;
};

export const boolean: Parser<boolean> = (value, loc) => {
  if (typeof value !== 'boolean') throw incorrectType(value, ['boolean'], loc);
  return value;
};

/** Any JSON value (serde_json::Value). */
export const json: Parser<unknown> = (value) => value;

function integerText(n: number): string {
  return Number.isSafeInteger(n) ? String(n) : BigInt(n).toString();
}

const U64_MAX = '18446744073709551615';

/** An unsigned integer type of the given maximum (u8: 255; u64/usize: 2^64 - 1). */
export function unsigned(max: number = TWO_POW_64, maxText: string = U64_MAX): Parser<number> {
  return (value, loc) => {
    if (kindOf(value) !== 'integer') throw incorrectType(value, ['integer'], loc);
    const n = value as number;
    if (n > max)
      throw invalidValue(
        `value: \`${integerText(n)}\` is too large to be deserialized, maximum value authorized is \`${maxText}\``,
        loc,
      );
    return n;
  };
}

export const u8 = unsigned(255, '255');
export const u64 = unsigned();

/** NonZeroUsize. */
export const nonZeroU64: Parser<number> = (value, loc) => {
  if (value === 0)
    throw invalidValue(`a non-zero integer value lower than \`${U64_MAX}\` was expected, but found a zero`, loc);
  return u64(value, loc);
};

/** f32 / f64: integers are accepted too. */
export const float: Parser<number> = (value, loc) => {
  if (typeof value !== 'number') throw incorrectType(value, ['float', 'integer', 'negativeInteger'], loc);
  return value;
};

/** A unit-variant enum: one of the given strings. */
export function oneOf<T extends string>(values: readonly T[]): Parser<T> {
  return (value, loc) => {
    if (typeof value !== 'string') throw incorrectType(value, ['string'], loc);
    if (!(values as readonly string[]).includes(value)) throw unknownValue(value, values, loc);
    return value as T;
  };
}

/** `Setting<T>`: null means "reset". */
export function nullable<T>(parse: Parser<T>): Parser<T | null> {
  return (value, loc) => (value === null ? null : parse(value, loc));
}

export function arrayOf<T>(item: Parser<T>): Parser<T[]> {
  return (value, loc) => {
    if (!Array.isArray(value)) throw incorrectType(value, ['array'], loc);
    return value.map((v: unknown, i) => item(v, [...loc, i]));
  };
}

/** BTreeSet<String>: an array of strings, kept sorted and deduplicated. */
export const btreeSet: Parser<string[]> = (value, loc) => sortedSet(arrayOf(string)(value, loc));

/** BTreeMap<String, T>: an object whose values are parsed; keys sorted by bytes. */
export function btreeMap<T>(item: Parser<T>): Parser<Record<string, T>> {
  return (value, loc) => {
    if (!isObject(value)) throw incorrectType(value, ['object'], loc);
    const out: Record<string, T> = {};
    for (const key of Object.keys(value)) setEntry(out, key, item(value[key], [...loc, key]));
    return sortedRecord(out);
  };
}

/** Turns a parsed value into a further-checked one; a returned string is the error message. */
export function refine<T>(parse: Parser<T>, check: (value: T) => string | null): Parser<T> {
  return (value, loc) => {
    const parsed = parse(value, loc);
    const problem = check(parsed);
    if (problem !== null) throw invalidValue(problem, loc);
    return parsed;
  };
}

export type StructOptions<T> = {
  /**
   * The keys in declaration order, when another source holds it (the engine's types, through
   * `settings.generated.ts`); they must be those of `fields`. By default, the order of `fields`.
   */
  keys?: readonly (keyof T & string)[];
  /** Fields that must be present (checked after all given fields, in declaration order). */
  required?: readonly (keyof T & string)[];
  /** Values of absent fields. */
  defaults?: { [K in keyof T]?: () => T[K] };
  /** Unknown fields are ignored instead of rejected. */
  allowUnknown?: boolean;
  /** Runs on the parsed struct; throws a DeserrError to reject it. */
  validate?: (parsed: T, loc: Loc) => void;
};

/**
 * A struct with camelCase fields: given fields are parsed in the body's order (so the first
 * error is the body's first bad field), unknown fields are rejected, then missing required
 * fields are reported. The output lists fields in declaration order (`options.keys`, else the
 * order of `fields`), as do the "expected one of" messages.
 */
export function struct<T extends object>(
  fields: { [K in keyof T]-?: Parser<T[K]> },
  options: StructOptions<T> = {},
): Parser<T> {
  const parsers = fields as Record<string, Parser<unknown>>;
  const own = Object.keys(parsers) as (keyof T & string)[];
  const names = options.keys ?? own;
  if (own.length !== names.length || !names.every((name) => Object.hasOwn(parsers, name))) {
    throw new Error(`struct: parsers for ${own.join(', ')} but keys ${names.join(', ')}`);
  }
  return (value, loc) => {
    if (!isObject(value)) throw incorrectType(value, ['object'], loc);
    const given = new Map<string, unknown>();
    for (const key of Object.keys(value)) {
      const parse = Object.hasOwn(parsers, key) ? parsers[key] : undefined;
      if (!parse) {
        if (options.allowUnknown) continue;
        throw unknownField(key, names, loc);
      }
      given.set(key, parse(value[key], [...loc, key]));
    }
    for (const name of options.required ?? []) if (!given.has(name)) throw missingField(name, loc);
    const out: Record<string, unknown> = {};
    for (const name of names) {
      if (given.has(name)) out[name] = given.get(name);
      else if (options.defaults?.[name]) out[name] = options.defaults[name]!();
    }
    const result = out as T;
    options.validate?.(result, loc);
    return result;
  };
}
