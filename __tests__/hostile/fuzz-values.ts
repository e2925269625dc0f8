/**
 * Hostile values for the fuzz (`fuzz.ts`): the seeded PRNG, awkward strings and numbers,
 * JSON values nested or not, and random token soup from the filter language.
 */

/** mulberry32: a tiny, fast, seedable 32-bit PRNG. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  u32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** A float in [0, 1). */
  float(): number {
    return this.u32() / 4294967296;
  }
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.float() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.float() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.float() * items.length)];
  }
  /** Picks by weight: `[[weight, value], ...]`. */
  weighted<T>(items: readonly (readonly [number, T])[]): T {
    const total = items.reduce((s, [w]) => s + w, 0);
    let x = this.float() * total;
    for (const [w, v] of items) {
      x -= w;
      if (x < 0) return v;
    }
    return items[items.length - 1][1];
  }
}

// ---------------------------------------------------------------- values

export const ATTRIBUTES = [
  'id',
  'title',
  'genre',
  'year',
  'tags',
  'nested.a',
  'nested',
  '_geo',
  '_vectors',
  '_rankingScore',
  '*',
  '',
  'unknown',
  'a.b.c.d',
  'title.x',
];

const HOSTILE_STRINGS = [
  '',
  ' ',
  '..',
  '../',
  '../../etc/passwd',
  '%2e%2e',
  '%2e%2e%2f',
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDC00y',
  '\uFFFF',
  '\u202E',
  '😀',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '"',
  '\\',
  '\n\r\t',
  'NaN',
  'Infinity',
  '-0',
  '1e400',
  'null',
  'true',
  '*',
  '_geo',
  'title',
  'carol',
  'wonder',
  'x'.repeat(600),
  'é'.repeat(300),
  '%zz',
  '%C3%28',
];

const NUMBERS = [
  0,
  -0,
  1,
  -1,
  2,
  3,
  1.5,
  -0.5,
  0.999,
  20,
  1000,
  65535,
  65536,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32,
  2 ** 32 + 1,
  2 ** 53 - 1,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53 - 1),
  1e9,
  1e21,
  1e308,
  -1e308,
  Number.MIN_VALUE,
  9007199254740991,
];

/** Number literals JSON.stringify cannot produce. */
export const RAW_NUMBERS = [
  '1e400',
  '-1e400',
  `1${'0'.repeat(400)}`,
  `0.${'0'.repeat(400)}1`,
  '-0',
  '1E+2',
  '9007199254740993',
  '18446744073709551616',
  '-9223372036854775809',
  '1e-400',
];

/** A v4-shaped uuid drawn from `rng`, so that runs repeat. */
export function uuid(rng: Rng): string {
  const hex = Array.from({ length: 32 }, () => rng.int(0, 15).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}

export function hostileString(rng: Rng): string {
  if (rng.chance(0.1)) return rng.pick(ATTRIBUTES);
  if (rng.chance(0.01)) return 'y'.repeat(rng.int(1000, 70000));
  if (rng.chance(0.1)) {
    // Random code points, surrogates included.
    let s = '';
    for (let i = rng.int(0, 12); i > 0; i--) s += String.fromCharCode(rng.int(0, 0xffff));
    return s;
  }
  return rng.pick(HOSTILE_STRINGS);
}

export function hostileNumber(rng: Rng): number {
  if (rng.chance(0.2)) return rng.int(-5, 100);
  return rng.pick(NUMBERS);
}

/** Any JSON value, biased toward the awkward ones; `depth` bounds nesting. */
export function hostileValue(rng: Rng, depth = 3): unknown {
  const kind = rng.int(0, depth > 0 ? 9 : 5);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
    case 3:
      return hostileNumber(rng);
    case 4:
    case 5:
      return hostileString(rng);
    case 6:
    case 7: {
      // Long arrays hold scalars only, so that a value stays well under a megabyte.
      if (rng.chance(0.05)) return Array.from({ length: rng.int(100, 2000) }, () => hostileValue(rng, 0));
      return Array.from({ length: rng.int(0, 4) }, () => hostileValue(rng, depth - 1));
    }
    default: {
      const o: Record<string, unknown> = {};
      for (let i = rng.int(0, 4); i > 0; i--)
        o[rng.chance(0.5) ? rng.pick(ATTRIBUTES) : hostileString(rng)] = hostileValue(rng, depth - 1);
      return o;
    }
  }
}

/** Deep nesting, as a value (the raw text form is in `rawBody`). */
export function nested(rng: Rng): unknown {
  let v: unknown = rng.chance(0.5) ? 'deep' : 1;
  for (let i = rng.int(20, 140); i > 0; i--) v = rng.chance(0.5) ? [v] : { a: v };
  return v;
}

/** Usually a plausible value of the right shape, sometimes anything. */
export function maybe<T>(rng: Rng, good: () => T): unknown {
  const x = rng.float();
  if (x < 0.55) return good();
  if (x < 0.95) return hostileValue(rng);
  return nested(rng);
}

export function attrList(rng: Rng): string[] {
  return Array.from({ length: rng.int(0, 4) }, () => (rng.chance(0.7) ? rng.pick(ATTRIBUTES) : hostileString(rng)));
}

// ---------------------------------------------------------------- filters

const FILTER_TOKENS = [
  'AND',
  'OR',
  'NOT',
  'IN',
  'TO',
  'EXISTS',
  'IS',
  'NULL',
  'EMPTY',
  'CONTAINS',
  'STARTS',
  'WITH',
  'NOT IN',
  'IS NOT NULL',
  'IS EMPTY',
  '=',
  '!=',
  '>',
  '>=',
  '<',
  '<=',
  '(',
  ')',
  '[',
  ']',
  ',',
  '"',
  "'",
  '\\',
  '\\"',
  '""',
  "''",
  '_geoRadius(45.4, 9.1, 2000)',
  '_geoRadius(1, 2)',
  '_geoRadius(999, -999, -1)',
  '_geoBoundingBox([45.5, 9.1], [45.4, 9.2])',
  '_geoBoundingBox([1], [2,3])',
  '_geoPolygon([0,0],[0,1],[1,1])',
  '_geoPoint(1,2)',
  '_geo',
  '_geoRadius(',
  'title',
  'genre',
  'year',
  'tags',
  'nested.a',
  'id',
  '`title`',
  '0',
  '-1',
  '1.5',
  '1e400',
  '9007199254740993',
  'NaN',
  'inf',
  '"carol"',
  "'wonder'",
  '"unterminated',
  'drama',
  'comedy',
  '😀',
  '\u0000',
];

export function randomFilter(rng: Rng): string {
  if (rng.chance(0.25)) {
    // Well-formed, so the engine's evaluation runs too.
    return rng.pick([
      'genre = drama',
      'year > 2000 AND genre != comedy',
      'year 1990 TO 2010',
      'genre IN [drama, comedy] OR year < 0',
      'NOT title EXISTS',
      'tags IS EMPTY OR tags IS NULL',
      '_geoRadius(45.47, 9.18, 1000)',
      '_geoBoundingBox([46, 9], [45, 10])',
      `year = ${rng.pick(RAW_NUMBERS)}`,
      `title = "${hostileString(rng).replace(/"/g, '\\"')}"`,
      '(((((((((((((((((((((((((((((((((((((((((((((((((year = 1)))))))))))))))))))))))))))))))))))))))))))))))))',
      Array.from({ length: 200 }, (_, i) => `year = ${i}`).join(' OR '),
      'title CONTAINS car',
      'title STARTS WITH car',
    ]);
  }
  const n = rng.chance(0.05) ? rng.int(50, 400) : rng.int(0, 14);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(rng.chance(0.85) ? rng.pick(FILTER_TOKENS) : hostileString(rng));
  return parts.join(rng.chance(0.9) ? ' ' : '');
}

export function filterValue(rng: Rng): unknown {
  const x = rng.float();
  if (x < 0.6) return randomFilter(rng);
  if (x < 0.85)
    return Array.from({ length: rng.int(0, 3) }, () =>
      rng.chance(0.6) ? randomFilter(rng) : Array.from({ length: rng.int(0, 3) }, () => randomFilter(rng)),
    );
  if (x < 0.95) return hostileValue(rng);
  return nested(rng);
}
