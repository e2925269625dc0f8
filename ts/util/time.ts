/**
 * Timestamps as Meilisearch prints them: RFC 3339 in UTC with microseconds (fraction
 * omitted when zero), and ISO 8601 durations. Microseconds keep strict date filters
 * (`beforeEnqueuedAt=<now>`) meaningful for tasks enqueued within the same millisecond.
 */
const originMicros = BigInt(Date.now()) * 1000n - process.hrtime.bigint() / 1000n;
let lastMicros = 0n;

/** Microseconds since the epoch, strictly increasing within the process. */
export function nowMicros(): bigint {
  let m = originMicros + process.hrtime.bigint() / 1000n;
  if (m <= lastMicros) m = lastMicros + 1n;
  lastMicros = m;
  return m;
}

export function microsToIso(micros: bigint): string {
  const ms = Number(micros / 1000n);
  const frac = Number(micros % 1000000n);
  const base = new Date(ms).toISOString().slice(0, 19);
  if (frac === 0) return `${base}Z`;
  return `${base}.${String(frac).padStart(6, '0').replace(/0+$/, '')}Z`;
}

export function nowIso(): string {
  return microsToIso(nowMicros());
}

/** Parses an RFC 3339 date-time to microseconds since the epoch; null if invalid. */
export function isoToMicros(text: string): bigint | null {
  const m = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})$/.exec(text);
  if (!m) return null;
  const ms = Date.parse(`${m[1]}T${m[2]}${m[4].toUpperCase()}`);
  if (Number.isNaN(ms)) return null;
  const frac = (m[3] ?? '').padEnd(6, '0').slice(0, 6);
  return BigInt(ms) * 1000n + BigInt(frac);
}

/** Date filter values: RFC 3339, or YYYY-MM-DD (midnight; `after` filters use the next day). */
export function parseDateFilter(text: string, isAfter: boolean): bigint | null {
  const d = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (d) {
    const [y, m, day] = [Number(d[1]), Number(d[2]), Number(d[3])];
    const ms = Date.UTC(y, m - 1, day);
    // Date.UTC rolls 2020-13-45 over into 2021; a calendar date must round-trip.
    const back = new Date(ms);
    if (back.getUTCFullYear() !== y || back.getUTCMonth() !== m - 1 || back.getUTCDate() !== day) return null;
    return BigInt(ms + (isAfter ? 86_400_000 : 0)) * 1000n;
  }
  return isoToMicros(text);
}

/** ISO 8601 duration between two timestamps (`PT0.364788S`). */
export function durationIso(fromIso: string, toIso: string): string | null {
  const a = isoToMicros(fromIso);
  const b = isoToMicros(toIso);
  if (a === null || b === null || b < a) return null;
  const micros = b - a;
  let secs = micros / 1000000n;
  const frac = micros % 1000000n;
  const days = secs / 86400n;
  secs %= 86400n;
  const fracText = frac === 0n ? '' : `.${String(frac).padStart(6, '0')}`;
  return `P${days > 0n ? `${days}D` : ''}T${secs}${fracText}S`;
}
