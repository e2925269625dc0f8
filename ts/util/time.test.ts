import { durationIso, isoToMicros, microsToIso, nowIso, parseDateFilter } from './time';

describe('time', () => {
  it('when formatting, then fractions are trimmed and omitted when zero', () => {
    expect(microsToIso(1_700_000_000_000_000n)).toBe('2023-11-14T22:13:20Z');
    expect(microsToIso(1_700_000_000_123_400n)).toBe('2023-11-14T22:13:20.1234Z');
    expect(isoToMicros('2023-11-14T22:13:20.1234Z')).toBe(1_700_000_000_123_400n);
  });

  it('when calling nowIso twice, then the second is strictly later', () => {
    const a = nowIso();
    const b = nowIso();
    expect(isoToMicros(b)! > isoToMicros(a)!).toBe(true);
  });

  it('when a date filter is a bare day, then after means the next midnight', () => {
    expect(parseDateFilter('2024-01-01', false)).toBe(isoToMicros('2024-01-01T00:00:00Z'));
    expect(parseDateFilter('2024-01-01', true)).toBe(isoToMicros('2024-01-02T00:00:00Z'));
    expect(parseDateFilter('nope', true)).toBeNull();
  });

  it('when measuring durations, then they are ISO 8601', () => {
    expect(durationIso('2024-01-01T00:00:00Z', '2024-01-01T00:00:02.5Z')).toBe('PT2.500000S');
    expect(durationIso('2024-01-01T00:00:00Z', '2024-01-02T00:00:01Z')).toBe('P1DT1S');
  });
});
