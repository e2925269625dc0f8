/**
 * The items of one array of a JSON text, found in its bytes without parsing it: each item's
 * bytes as they are (a number keeps every digit), and where the array opens and closes, so
 * that the text can be rebuilt around a new order of them.
 */
export interface ArrayItems {
  items: Buffer[];
  /** The offset just after the array's `[`. */
  open: number;
  /** The offset of the array's `]`. */
  close: number;
}

/** The first array that follows `"key":` in `bytes` (compact JSON, as the engine prints it). */
export function arrayItems(bytes: Buffer, key: string): ArrayItems {
  const marker = `${JSON.stringify(key)}:[`;
  const at = bytes.indexOf(marker);
  if (at < 0) throw new Error(`no \`${key}\` array in the answer`);
  const open = at + Buffer.byteLength(marker);
  const items: Buffer[] = [];
  let depth = 0;
  let inString = false;
  let start = open;
  let i = open;
  for (; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) break;
      depth--;
    } else if (c === 0x2c && depth === 0) {
      items.push(bytes.subarray(start, i));
      start = i + 1;
    }
  }
  if (i > start) items.push(bytes.subarray(start, i));
  return { items, open, close: i };
}

/** `bytes` with the array's items replaced by `items`. */
export function withItems(bytes: Buffer, found: ArrayItems, items: Buffer[]): Buffer {
  const parts: Buffer[] = [bytes.subarray(0, found.open)];
  for (const [i, item] of items.entries()) parts.push(...(i === 0 ? [item] : [COMMA, item]));
  parts.push(bytes.subarray(found.close));
  return Buffer.concat(parts);
}

const COMMA = Buffer.from(',');
