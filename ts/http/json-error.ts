/**
 * Why a JSON body is malformed, in the words and at the place Meilisearch's parser (serde_json)
 * gives: `EOF while parsing an object at line 1 column 1`, `trailing comma at line 3 column 2`.
 * JSON.parse says it otherwise (`Expected property name or '}' in JSON at position 1`), and
 * accepts bytes serde_json refuses (invalid UTF-8 inside a string). Clients show this message to
 * their users, so a body JSON.parse refused, or that is not UTF-8, is read again here, byte by
 * byte as serde_json reads it: the same checks in the same order, the same positions (a line
 * and a column counted in bytes, the column of the last byte read, or of the next one where
 * serde_json only peeked at it). Only malformed bodies come here: speed is no concern.
 */
import { isUtf8 } from 'node:buffer';

const EOF_LIST = 'EOF while parsing a list';
const EOF_OBJECT = 'EOF while parsing an object';
const EOF_STRING = 'EOF while parsing a string';
const EOF_VALUE = 'EOF while parsing a value';
const EXPECTED_COLON = 'expected `:`';
const EXPECTED_LIST_COMMA_OR_END = 'expected `,` or `]`';
const EXPECTED_OBJECT_COMMA_OR_END = 'expected `,` or `}`';
const EXPECTED_IDENT = 'expected ident';
const EXPECTED_VALUE = 'expected value';
const INVALID_ESCAPE = 'invalid escape';
const INVALID_NUMBER = 'invalid number';
const NUMBER_OUT_OF_RANGE = 'number out of range';
const INVALID_CODE_POINT = 'invalid unicode code point';
const CONTROL_CHARACTER = 'control character (\\u0000-\\u001F) found while parsing a string';
const KEY_MUST_BE_A_STRING = 'key must be a string';
const LONE_SURROGATE = 'lone leading surrogate in hex escape';
const TRAILING_COMMA = 'trailing comma';
const TRAILING_CHARACTERS = 'trailing characters';
const END_OF_HEX_ESCAPE = 'unexpected end of hex escape';
const RECURSION_LIMIT = 'recursion limit exceeded';

/** serde_json's nesting limit. */
const MAX_DEPTH = 128;

const [QUOTE, BACKSLASH, COMMA, COLON, MINUS, PLUS, DOT] = [0x22, 0x5c, 0x2c, 0x3a, 0x2d, 0x2b, 0x2e];
const [OPEN_LIST, CLOSE_LIST, OPEN_OBJECT, CLOSE_OBJECT] = [0x5b, 0x5d, 0x7b, 0x7d];

/** Thrown inside the scan with the message found. */
class Malformed {
  constructor(readonly message: string) {}
}

/**
 * serde_json's message for `body`, or null when serde_json would read it (the caller then
 * keeps its own reason).
 */
export function serdeJsonError(body: Buffer): string | null {
  try {
    new Scan(body).document();
    return null;
  } catch (err) {
    if (err instanceof Malformed) return err.message;
    throw err;
  }
}

/** Whether serde_json would refuse `body`'s bytes although JSON.parse read its text. */
export function refusedBytes(body: Buffer): boolean {
  return !isUtf8(body);
}

const isDigit = (c: number | null) => c !== null && c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

class Scan {
  private i = 0;
  private depth = MAX_DEPTH;

  constructor(private readonly b: Buffer) {}

  document(): void {
    this.value();
    if (this.whitespace() !== null) this.peekError(TRAILING_CHARACTERS);
  }

  /** The error at the position after the last byte read. */
  private error(message: string): never {
    throw new Malformed(`${message} ${this.position(this.i)}`);
  }

  /** The error at the byte only peeked at (serde_json's `peek_error`). */
  private peekError(message: string): never {
    throw new Malformed(`${message} ${this.position(Math.min(this.b.length, this.i + 1))}`);
  }

  private position(end: number): string {
    const start = this.b.lastIndexOf(0x0a, end - 1) + 1;
    let line = 1;
    for (let k = this.b.indexOf(0x0a); k !== -1 && k < start; k = this.b.indexOf(0x0a, k + 1)) line++;
    return `at line ${line} column ${end - start}`;
  }

  private peek(): number | null {
    return this.i < this.b.length ? this.b[this.i] : null;
  }

  private next(): number | null {
    return this.i < this.b.length ? this.b[this.i++] : null;
  }

  /** Skips whitespace and peeks at the next byte. */
  private whitespace(): number | null {
    for (;;) {
      const c = this.peek();
      if (c !== 0x20 && c !== 0x0a && c !== 0x09 && c !== 0x0d) return c;
      this.i++;
    }
  }

  private value(): void {
    const c = this.whitespace();
    if (c === null) this.peekError(EOF_VALUE);
    switch (c) {
      case 0x6e: // n
        this.i++;
        return this.ident('ull');
      case 0x74: // t
        this.i++;
        return this.ident('rue');
      case 0x66: // f
        this.i++;
        return this.ident('alse');
      case MINUS:
        this.i++;
        return this.number(this.i - 1);
      case QUOTE:
        this.i++;
        return this.string();
      case OPEN_LIST:
      case OPEN_OBJECT:
        if (--this.depth === 0) this.peekError(RECURSION_LIMIT);
        this.i++;
        if (c === OPEN_LIST) this.list();
        else this.object();
        this.depth++;
        return;
      default:
        if (isDigit(c)) return this.number(this.i);
        this.peekError(EXPECTED_VALUE);
    }
  }

  private ident(rest: string): void {
    for (let k = 0; k < rest.length; k++) {
      const c = this.next();
      if (c === null) this.error(EOF_VALUE);
      if (c !== rest.charCodeAt(k)) this.error(EXPECTED_IDENT);
    }
  }

  /** A number from `start` (its sign, or its first digit at the current byte). */
  private number(start: number): void {
    const first = this.next();
    if (first === null) this.error(EOF_VALUE);
    if (first === 0x30) {
      if (isDigit(this.peek())) this.peekError(INVALID_NUMBER);
    } else if (isDigit(first)) {
      while (isDigit(this.peek())) this.i++;
    } else {
      this.error(INVALID_NUMBER);
    }
    if (this.peek() === DOT) {
      this.i++;
      if (!isDigit(this.peek())) this.peekError(this.peek() === null ? EOF_VALUE : INVALID_NUMBER);
      while (isDigit(this.peek())) this.i++;
    }
    const e = this.peek();
    if (e === 0x65 || e === 0x45) {
      this.i++;
      const sign = this.peek();
      if (sign === PLUS || sign === MINUS) this.i++;
      const digit = this.next();
      if (digit === null) this.error(EOF_VALUE);
      if (!isDigit(digit)) this.error(INVALID_NUMBER);
      while (isDigit(this.peek())) this.i++;
    }
    if (!Number.isFinite(Number(this.b.toString('latin1', start, this.i)))) this.error(NUMBER_OUT_OF_RANGE);
  }

  /** A string after its opening quote. */
  private string(): void {
    const start = this.i;
    let ascii = true;
    for (;;) {
      if (this.i === this.b.length) this.error(EOF_STRING);
      const c = this.b[this.i++];
      if (c === QUOTE) {
        // serde_json checks a string's UTF-8 once it has read all of it.
        if (!ascii && !isUtf8(this.b.subarray(start, this.i - 1))) this.error(INVALID_CODE_POINT);
        return;
      }
      if (c === BACKSLASH) this.escape();
      else if (c < 0x20) this.error(CONTROL_CHARACTER);
      else if (c >= 0x80) ascii = false;
    }
  }

  /** An escape after its backslash. */
  private escape(): void {
    const c = this.next();
    if (c === null) this.error(EOF_STRING);
    if ('"\\/bfnrt'.includes(String.fromCharCode(c))) return;
    if (c !== 0x75) this.error(INVALID_ESCAPE);
    const unit = this.hex();
    if (unit >= 0xdc00 && unit <= 0xdfff) this.error(LONE_SURROGATE);
    if (unit < 0xd800 || unit > 0xdbff) return;
    // A leading surrogate: `\u` and a trailing one must follow.
    for (const expected of [BACKSLASH, 0x75]) {
      const next = this.peek();
      if (next === null) this.peekError(EOF_STRING);
      this.i++;
      if (next !== expected) this.error(END_OF_HEX_ESCAPE);
    }
    const low = this.hex();
    if (low < 0xdc00 || low > 0xdfff) this.error(LONE_SURROGATE);
  }

  /** Four hex digits. */
  private hex(): number {
    if (this.b.length - this.i < 4) {
      this.i = this.b.length;
      this.error(EOF_STRING);
    }
    const digits = this.b.subarray(this.i, this.i + 4);
    this.i += 4;
    if (!digits.every(isHex)) this.error(INVALID_ESCAPE);
    return parseInt(digits.toString('latin1'), 16);
  }

  /**
   * Before an item of a list or an object (after its opening, or after an item): null when
   * `close` ends it (then read), else the byte the item starts with, past its comma; with
   * serde_json's checks in serde_json's order.
   */
  private item(first: boolean, close: number, commaOrEnd: string, eof: string): number | null {
    let c = this.whitespace();
    if (c === close) {
      this.i++;
      return null;
    }
    if (c === COMMA && !first) {
      this.i++;
      c = this.whitespace();
    } else if (c === null) {
      this.peekError(eof);
    } else if (!first) {
      this.peekError(commaOrEnd);
    }
    if (c === close) this.peekError(TRAILING_COMMA);
    if (c === null) this.peekError(EOF_VALUE);
    return c;
  }

  /** A list after its `[`. */
  private list(): void {
    for (let first = true; this.item(first, CLOSE_LIST, EXPECTED_LIST_COMMA_OR_END, EOF_LIST) !== null; first = false) this.value();
  }

  /** An object after its `{`. */
  private object(): void {
    for (let first = true; ; first = false) {
      const c = this.item(first, CLOSE_OBJECT, EXPECTED_OBJECT_COMMA_OR_END, EOF_OBJECT);
      if (c === null) return;
      if (c !== QUOTE) this.peekError(KEY_MUST_BE_A_STRING);
      this.i++;
      this.string();
      const colon = this.whitespace();
      if (colon === null) this.peekError(EOF_OBJECT);
      if (colon !== COLON) this.peekError(EXPECTED_COLON);
      this.i++;
      this.value();
    }
  }
}
