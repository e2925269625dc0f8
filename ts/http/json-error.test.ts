/**
 * serde_json's messages for malformed bodies, as Meilisearch 1.50 answered each of these
 * bodies (its `malformed_payload` message, between the backquotes).
 */
import { serdeJsonError } from './json-error';

const CASES: [string | Buffer, string][] = [
  ['{', 'EOF while parsing an object at line 1 column 1'],
  ['[', 'EOF while parsing a list at line 1 column 1'],
  ['"abc', 'EOF while parsing a string at line 1 column 4'],
  ['{"a"', 'EOF while parsing an object at line 1 column 4'],
  ['{"a":', 'EOF while parsing a value at line 1 column 5'],
  ['{"a":}', 'expected value at line 1 column 6'],
  ['{"a":1,}', 'trailing comma at line 1 column 8'],
  ['[1,]', 'trailing comma at line 1 column 4'],
  ['[1 2]', 'expected `,` or `]` at line 1 column 4'],
  ['{"a":1 "b":2}', 'expected `,` or `}` at line 1 column 8'],
  ['{1:2}', 'key must be a string at line 1 column 2'],
  ['nul', 'EOF while parsing a value at line 1 column 3'],
  ['nulx', 'expected ident at line 1 column 4'],
  ['tru', 'EOF while parsing a value at line 1 column 3'],
  ['falsy', 'expected ident at line 1 column 5'],
  ['-', 'EOF while parsing a value at line 1 column 1'],
  ['-a', 'invalid number at line 1 column 2'],
  ['01', 'invalid number at line 1 column 2'],
  ['1.', 'EOF while parsing a value at line 1 column 2'],
  ['1.x', 'invalid number at line 1 column 3'],
  ['1e', 'EOF while parsing a value at line 1 column 2'],
  ['1ex', 'invalid number at line 1 column 3'],
  ['1e+', 'EOF while parsing a value at line 1 column 3'],
  ['{"q":"a"}x', 'trailing characters at line 1 column 10'],
  ['{"q":"a"} }', 'trailing characters at line 1 column 11'],
  ['  ', 'EOF while parsing a value at line 1 column 2'],
  ['{"q":"a\\x"}', 'invalid escape at line 1 column 9'],
  ['{"q":"\\u12"}', 'invalid escape at line 1 column 12'],
  ['{"q":"\\u12g4"}', 'invalid escape at line 1 column 12'],
  ['{"q":"a\u0001"}', 'control character (\\u0000-\\u001F) found while parsing a string at line 1 column 8'],
  ['{\n  "q": "x",\n  "limit": ,\n}', 'expected value at line 3 column 12'],
  ['[,1]', 'expected value at line 1 column 2'],
  ['{,}', 'key must be a string at line 1 column 2'],
  ['{"a" 1}', 'expected `:` at line 1 column 6'],
  ['\ufeff{}', 'expected value at line 1 column 1'],
  ['{"q":"\\ud800"}', 'unexpected end of hex escape at line 1 column 13'],
  ['{"q":"\\ud800\\u0041"}', 'lone leading surrogate in hex escape at line 1 column 18'],
  ['{"q":"\\udc00"}', 'lone leading surrogate in hex escape at line 1 column 12'],
  ['{"q": tru }', 'expected ident at line 1 column 10'],
  ['{"q":"\u00e9", "x": ]}', 'expected value at line 1 column 17'],
  ['{"a":[1,2}', 'expected `,` or `]` at line 1 column 10'],
  ['{"a":{"b":1]}', 'expected `,` or `}` at line 1 column 12'],
  ['{"q":"a\\', 'EOF while parsing a string at line 1 column 8'],
  ['[1,2,', 'EOF while parsing a value at line 1 column 5'],
  ['{"limit":2.}', 'invalid number at line 1 column 12'],
  ['{"limit":-}', 'invalid number at line 1 column 11'],
  ['{"limit":1e400}', 'number out of range at line 1 column 14'],
  ['{"a":1}}', 'trailing characters at line 1 column 8'],
  ['[[[]]]]', 'trailing characters at line 1 column 7'],
  [Buffer.from('{"q":"a\u00ff"}', 'latin1'), 'invalid unicode code point at line 1 column 9'],
  [Buffer.from('{"q":"a\u00c3"}', 'latin1'), 'invalid unicode code point at line 1 column 9'],
  [Buffer.from('{"q":1}\u00ff', 'latin1'), 'trailing characters at line 1 column 8'],
];

describe('serdeJsonError', () => {
  it.each(CASES)("when the body is %j, then the reason is Meilisearch's", (body, reason) => {
    expect(serdeJsonError(Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'))).toBe(reason);
  });

  it('when the body is JSON serde_json reads, then there is no reason', () => {
    for (const body of [
      '{}',
      '[]',
      ' {"q": "caf\u00e9", "limit": -1.5e3, "x": [true, false, null]} ',
      '"\ud83d\ude00"',
      '0',
    ]) {
      expect(serdeJsonError(Buffer.from(body))).toBeNull();
    }
    // Nesting up to serde_json's limit, not beyond.
    expect(serdeJsonError(Buffer.from('['.repeat(127) + ']'.repeat(127)))).toBeNull();
    expect(serdeJsonError(Buffer.from('['.repeat(128) + ']'.repeat(128)))).toBe(
      'recursion limit exceeded at line 1 column 128',
    );
  });
});
