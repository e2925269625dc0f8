/**
 * Sets of task uids in the portable Roaring format, as dump records carry them (the `tasks`
 * of cancelations and deletions are the serialized bitmap's bytes, as a JSON array).
 *
 * Written without run containers: a header (cookie 12346, container count), each
 * container's key and cardinality, their byte offsets, then the containers: sorted 16-bit
 * values when 4096 or fewer, a 65536-bit bitmap otherwise. Read: the same, plus the
 * run-container variant other writers may use.
 */

const NO_RUNS = 12346;
const WITH_RUNS = 12347;
const ARRAY_MAX = 4096;

export function encodeRoaring(values: Iterable<number>): number[] {
  const groups = new Map<number, number[]>();
  for (const v of [...new Set(values)].sort((a, b) => a - b)) {
    const key = v >>> 16;
    let g = groups.get(key);
    if (!g) {
      g = [];
      groups.set(key, g);
    }
    g.push(v & 0xffff);
  }
  const keys = [...groups.keys()].sort((a, b) => a - b);
  const bodies = keys.map((k) => {
    const lows = groups.get(k)!;
    if (lows.length <= ARRAY_MAX) {
      const b = Buffer.alloc(lows.length * 2);
      for (const [i, v] of lows.entries()) b.writeUInt16LE(v, i * 2);
      return b;
    }
    const b = Buffer.alloc(8192);
    for (const v of lows) b[v >>> 3] |= 1 << (v & 7);
    return b;
  });
  const head = Buffer.alloc(8 + keys.length * 8);
  head.writeUInt32LE(NO_RUNS, 0);
  head.writeUInt32LE(keys.length, 4);
  let offset = head.length;
  keys.forEach((k, i) => {
    head.writeUInt16LE(k, 8 + i * 4);
    head.writeUInt16LE(groups.get(k)!.length - 1, 10 + i * 4);
    head.writeUInt32LE(offset, 8 + keys.length * 4 + i * 4);
    offset += bodies[i].length;
  });
  return [...Buffer.concat([head, ...bodies])];
}

export function decodeRoaring(bytes: number[] | Buffer): number[] {
  const b = Buffer.from(bytes);
  if (b.length < 4) throw new Error('truncated task set');
  const cookie = b.readUInt32LE(0);
  let pos: number;
  let count: number;
  let runs: Buffer | null = null;
  if (cookie === NO_RUNS) {
    count = b.readUInt32LE(4);
    pos = 8;
  } else if ((cookie & 0xffff) === WITH_RUNS) {
    count = (cookie >>> 16) + 1;
    const runBytes = Math.ceil(count / 8);
    runs = b.subarray(4, 4 + runBytes);
    pos = 4 + runBytes;
  } else {
    throw new Error('not a Roaring task set');
  }
  const keys: number[] = [];
  const cards: number[] = [];
  for (let i = 0; i < count; i++) {
    keys.push(b.readUInt16LE(pos + i * 4));
    cards.push(b.readUInt16LE(pos + i * 4 + 2) + 1);
  }
  pos += count * 4;
  if (cookie === NO_RUNS || count >= 4) pos += count * 4; // offsets, not needed reading in order
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const high = keys[i] * 65536;
    if (runs && runs[i >>> 3] & (1 << (i & 7))) {
      const n = b.readUInt16LE(pos);
      pos += 2;
      for (let r = 0; r < n; r++) {
        const start = b.readUInt16LE(pos + r * 4);
        const len = b.readUInt16LE(pos + r * 4 + 2);
        for (let v = start; v <= start + len; v++) out.push(high + v);
      }
      pos += n * 4;
    } else if (cards[i] <= ARRAY_MAX) {
      for (let j = 0; j < cards[i]; j++) out.push(high + b.readUInt16LE(pos + j * 2));
      pos += cards[i] * 2;
    } else {
      for (let byte = 0; byte < 8192; byte++) {
        const bits = b[pos + byte];
        if (bits) for (let bit = 0; bit < 8; bit++) if (bits & (1 << bit)) out.push(high + byte * 8 + bit);
      }
      pos += 8192;
    }
  }
  if (pos > b.length) throw new Error('truncated task set');
  return out;
}
