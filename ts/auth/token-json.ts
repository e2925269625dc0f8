/**
 * A JSON reader for the two JSON parts of a tenant token, worded like the reader Meilisearch
 * decodes them with (serde_json), so that a refused token says what Meilisearch says, at the
 * same line and column: "missing field `searchRules` at line 1 column 9".
 *
 * It reads bytes, not text, because positions count bytes. Two kinds of failure exist, as in
 * serde_json: a syntax error is placed where it is found; a shape error ("invalid type",
 * "missing field", a value no variant accepts) is a {@link Mismatch} with no position yet,
 * placed by the nearest enclosing reader of a typed value — right after a number or string
 * read as one, or, for a field of an object, after the object reader's closing step
 * ({@link JsonReader.closeMap}: the blanks are skipped and a `}` is taken if it is next).
 *
 * Design choice: JavaScript's `JSON.parse` is not used, even to check the syntax first,
 * because Meilisearch reports the first problem in reading order: a claim of the wrong type
 * before a syntax error further on.
 */

/** A shape error, positioned by whoever reads the enclosing value (see the module doc). */
export class Mismatch {
  constructor(readonly message: string) {}
}

/** A syntax or shape error with its position: the reason after "JSON error: ". */
export class JsonError extends Error {}

/** A JSON number as serde_json classifies it: an unsigned or negative integer, else a float. */
export type JsonNumber = { kind: 'u64' | 'i64'; int: bigint } | { kind: 'f64'; float: number };

/** A parsed value, kept whole (serde's buffered content, for values read more than one way). */
export type Json =
  | { kind: 'null' }
  | { kind: 'bool'; value: boolean }
  | { kind: 'number'; value: JsonNumber }
  | { kind: 'string'; value: string }
  | { kind: 'seq'; items: Json[] }
  | { kind: 'map'; entries: Array<[string, Json]> };

const U64_MAX = (1n << 64n) - 1n;
const I64_MIN = -(1n << 63n);
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ESCAPES: Record<number, string> = {
  34: '"',
  92: '\\',
  47: '/',
  98: '\b',
  102: '\f',
  110: '\n',
  114: '\r',
  116: '\t',
};

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/**
 * A float as serde writes it in messages: the shortest digits that read back, in plain notation
 * with at least one decimal up to 16 integer digits (`100.0`, `0.1`), in exponent notation
 * beyond (`1e+16`, `1.2345678901234568e+22`, `1e-7`).
 */
export function floatText(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, exp] = x.toExponential().split('e');
  const e = Number(exp);
  const sign = x < 0 ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  const k = e + 1;
  if (k > 16 || k <= -5) return x.toExponential();
  if (k <= 0) return `${sign}0.${'0'.repeat(-k)}${digits}`;
  if (digits.length <= k) return `${sign}${digits}${'0'.repeat(k - digits.length)}.0`;
  return `${sign}${digits.slice(0, k)}.${digits.slice(k)}`;
}

/** The words serde uses for a value of the wrong type: "integer `5`", "sequence", ... */
export function unexpected(v: Json): string {
  switch (v.kind) {
    case 'null':
      return 'null';
    case 'bool':
      return `boolean \`${v.value}\``;
    case 'number':
      return v.value.kind === 'f64' ? `floating point \`${floatText(v.value.float)}\`` : `integer \`${v.value.int}\``;
    case 'string':
      return `string ${rustDebug(v.value)}`;
    case 'seq':
      return 'sequence';
    case 'map':
      return 'map';
  }
}

/** A string quoted as Rust's `{:?}` quotes it, as serde's "invalid type: string ..." does. */
function rustDebug(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\0') out += '\\0';
    else if (c < 0x20 || c === 0x7f) out += `\\u{${c.toString(16)}}`;
    else out += ch;
  }
  return `${out}"`;
}

/** serde_json's nesting limit: a list or an object at this level is refused. */
export const MAX_DEPTH = 128;

export class JsonReader {
  private i = 0;
  private depth = 0;

  constructor(private readonly bytes: Buffer) {}

  /** Throws `message` placed at byte `at` (default: after what was read). */
  fail(message: string, at = this.i): never {
    let line = 1;
    let lineStart = 0;
    for (let j = 0; j < at; j++) {
      if (this.bytes[j] === 0x0a) {
        line++;
        lineStart = j + 1;
      }
    }
    throw new JsonError(`${message} at line ${line} column ${at - lineStart}`);
  }

  /** Throws `message` placed on the next byte (serde's position for what it only looked at). */
  failAhead(message: string): never {
    return this.fail(message, Math.min(this.i + 1, this.bytes.length));
  }

  /** Skips blanks; the next byte, or -1 at the end. */
  peek(): number {
    while (this.i < this.bytes.length) {
      const c = this.bytes[this.i]!;
      if (c !== 0x20 && c !== 0x0a && c !== 0x09 && c !== 0x0d) return c;
      this.i++;
    }
    return -1;
  }

  eat(): void {
    this.i++;
  }

  private next(): number {
    return this.i < this.bytes.length ? this.bytes[this.i++]! : -1;
  }

  /** The rest of `null`, `true` or `false`, its first letter already taken. */
  private ident(rest: string): void {
    for (let k = 0; k < rest.length; k++) {
      const c = this.next();
      if (c === -1) this.fail('EOF while parsing a value');
      if (c !== rest.charCodeAt(k)) this.fail('expected ident');
    }
  }

  /** A string's content, its opening quote already taken. */
  string(): string {
    const parts: Buffer[] = [];
    let start = this.i;
    for (;;) {
      if (this.i >= this.bytes.length) this.fail('EOF while parsing a string');
      const c = this.bytes[this.i]!;
      if (c === QUOTE) {
        parts.push(this.bytes.subarray(start, this.i));
        this.i++;
        break;
      }
      // serde places it after the character.
      if (c < 0x20) this.fail('control character (\\u0000-\\u001F) found while parsing a string', this.i + 1);
      if (c !== BACKSLASH) {
        this.i++;
        continue;
      }
      parts.push(this.bytes.subarray(start, this.i));
      this.i++;
      parts.push(Buffer.from(this.escape(), 'utf8'));
      start = this.i;
    }
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(parts));
    } catch {
      return this.fail('invalid unicode code point');
    }
  }

  /** One escape after its backslash: the text it stands for. */
  private escape(): string {
    const c = this.next();
    if (c === -1) this.fail('EOF while parsing a string');
    if (ESCAPES[c] !== undefined) return ESCAPES[c];
    if (c !== 0x75) this.fail('invalid escape');
    const unit = this.hex4();
    if (unit < 0xd800 || unit > 0xdfff) return String.fromCharCode(unit);
    if (unit >= 0xdc00) this.fail('lone leading surrogate in hex escape');
    if (this.next() !== BACKSLASH || this.next() !== 0x75) this.fail('unexpected end of hex escape');
    const low = this.hex4();
    if (low < 0xdc00 || low > 0xdfff) this.fail('lone leading surrogate in hex escape');
    return String.fromCharCode(unit, low);
  }

  /** Four hex digits, read as serde reads them: all four taken, then checked. */
  private hex4(): number {
    if (this.bytes.length - this.i < 4) {
      this.i = this.bytes.length;
      this.fail('EOF while parsing a string');
    }
    const digits = this.bytes.toString('latin1', this.i, this.i + 4);
    this.i += 4;
    if (!/^[0-9a-fA-F]{4}$/.test(digits)) this.fail('invalid escape');
    return parseInt(digits, 16);
  }

  /**
   * A number from its first byte (`-` or a digit, not yet taken). `checked`: a float out of the
   * f64 range is an error, as when serde reads the number as a value (not when it skips it).
   */
  number(checked = true): JsonNumber {
    const start = this.i;
    const negative = this.bytes[this.i] === 0x2d;
    if (negative) this.i++;
    const first = this.next();
    if (first === -1) this.fail('EOF while parsing a value');
    if (!isDigit(first)) this.fail('invalid number');
    if (first === 0x30 && isDigit(this.bytes[this.i] ?? -1)) this.failAhead('invalid number');
    while (isDigit(this.bytes[this.i] ?? -1)) this.i++;
    let float = false;
    if (this.bytes[this.i] === 0x2e) {
      float = true;
      this.i++;
      if (!isDigit(this.bytes[this.i] ?? -1))
        this.failAhead(this.i < this.bytes.length ? 'invalid number' : 'EOF while parsing a value');
      while (isDigit(this.bytes[this.i] ?? -1)) this.i++;
    }
    const e = this.bytes[this.i];
    if (e === 0x65 || e === 0x45) {
      float = true;
      this.i++;
      if (this.bytes[this.i] === 0x2b || this.bytes[this.i] === 0x2d) this.i++;
      const d = this.next();
      if (d === -1) this.fail('EOF while parsing a value');
      if (!isDigit(d)) this.fail('invalid number');
      while (isDigit(this.bytes[this.i] ?? -1)) this.i++;
    }
    const text = this.bytes.toString('latin1', start, this.i);
    if (!float) {
      const int = BigInt(text);
      // `-0` and integers out of the u64 / i64 range are read as floats.
      if (!negative && int <= U64_MAX) return { kind: 'u64', int };
      if (negative && int !== 0n && int >= I64_MIN) return { kind: 'i64', int };
    }
    const value = Number(text);
    if (checked && !Number.isFinite(value)) this.fail('number out of range');
    return { kind: 'f64', float: value };
  }

  /** Any value, kept whole; `checked` as for {@link number}. */
  value(checked = true): Json {
    const c = this.peek();
    if (c === -1) this.failAhead('EOF while parsing a value');
    if (c === 0x6e || c === 0x74 || c === 0x66) {
      this.eat();
      this.ident(c === 0x6e ? 'ull' : c === 0x74 ? 'rue' : 'alse');
      return c === 0x6e ? { kind: 'null' } : { kind: 'bool', value: c === 0x74 };
    }
    if (c === 0x2d || isDigit(c)) return { kind: 'number', value: this.number(checked) };
    if (c === QUOTE) {
      this.eat();
      return { kind: 'string', value: this.string() };
    }
    if (c === 0x5b || c === 0x7b) {
      if (++this.depth >= MAX_DEPTH) this.failAhead('recursion limit exceeded');
      this.eat();
      const value = c === 0x5b ? this.seq(checked) : this.map(checked);
      this.depth--;
      return value;
    }
    return this.failAhead('expected value');
  }

  private seq(checked: boolean): Json {
    const items: Json[] = [];
    while (this.nextItem(items.length === 0)) items.push(this.value(checked));
    this.closeSeq(true);
    return { kind: 'seq', items };
  }

  private map(checked: boolean): Json {
    const entries: Array<[string, Json]> = [];
    for (let key = this.nextKey(true); key !== null; key = this.nextKey(false)) {
      this.colon();
      entries.push([key, this.value(checked)]);
    }
    this.closeMap(true);
    return { kind: 'map', entries };
  }

  /**
   * What serde says of a value of the wrong type where `expected` was wanted: the value is read
   * (a `[` or `{` only looked at) and the error placed after it.
   */
  invalidType(expected: string): never {
    const c = this.peek();
    if (c === 0x5b || c === 0x7b) this.fail(`invalid type: ${c === 0x5b ? 'sequence' : 'map'}, expected ${expected}`);
    if (c === -1) this.failAhead('EOF while parsing a value');
    const v = this.value();
    return this.fail(`invalid type: ${unexpected(v)}, expected ${expected}`);
  }

  /** Whether a list has another item; `first`: none was read yet. The `[` is already taken. */
  nextItem(first: boolean): boolean {
    let c = this.peek();
    if (c === 0x5d) return false;
    if (c === -1) this.failAhead('EOF while parsing a list');
    if (!first) {
      if (c !== 0x2c) this.failAhead('expected `,` or `]`');
      this.eat();
      c = this.peek();
      if (c === 0x5d) this.failAhead('trailing comma');
      if (c === -1) this.failAhead('EOF while parsing a value');
    }
    return true;
  }

  /** A list's closing step. With `strict`, what is not its `]` is an error; else only skipped to. */
  closeSeq(strict: boolean): void {
    const c = this.peek();
    if (c === 0x5d) {
      this.eat();
      return;
    }
    if (!strict) {
      // After a shape error serde still takes a `,` before giving up on the list.
      if (c === 0x2c) this.eat();
      return;
    }
    if (c === -1) this.failAhead('EOF while parsing a list');
    if (c === 0x2c) {
      this.eat();
      this.failAhead(this.peek() === 0x5d ? 'trailing comma' : 'trailing characters');
    }
    this.failAhead('trailing characters');
  }

  /** The next key of an object, or null at its end; `first` as for {@link nextItem}. */
  nextKey(first: boolean): string | null {
    let c = this.peek();
    if (c === 0x7d) return null;
    if (c === -1) this.failAhead('EOF while parsing an object');
    if (!first) {
      if (c !== 0x2c) this.failAhead('expected `,` or `}`');
      this.eat();
      c = this.peek();
    }
    if (c === QUOTE) {
      this.eat();
      return this.string();
    }
    if (c === 0x7d) this.failAhead('trailing comma');
    if (c === -1) this.failAhead('EOF while parsing a value');
    return this.failAhead('key must be a string');
  }

  /** The `:` between a key and its value. */
  colon(): void {
    const c = this.peek();
    if (c === 0x3a) {
      this.eat();
      return;
    }
    this.failAhead(c === -1 ? 'EOF while parsing an object' : 'expected `:`');
  }

  /** An object's closing step; `strict` as for {@link closeSeq} (a `,` is never taken here). */
  closeMap(strict: boolean): void {
    const c = this.peek();
    if (c === 0x7d) {
      this.eat();
      return;
    }
    if (!strict) return;
    if (c === -1) this.failAhead('EOF while parsing an object');
    this.failAhead(c === 0x2c ? 'trailing comma' : 'trailing characters');
  }

  /** The end of the text: only blanks may follow the value. */
  end(): void {
    if (this.peek() !== -1) this.failAhead('trailing characters');
  }
}
