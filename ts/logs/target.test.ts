import { TargetError, TargetFilter } from './target';

describe('TargetFilter', () => {
  it('when a bare level is given, then every target gets it', () => {
    const f = TargetFilter.parse('WARN');
    expect([f.levelFor('quarry'), f.levelFor('quarry::http'), f.max]).toEqual([2, 2, 2]);
  });

  it('when Meilisearch crate names are given, then they stand for the matching part of Quarry, the most specific winning', () => {
    const f = TargetFilter.parse('meilisearch=info, index_scheduler=trace,milli=3');
    expect([
      f.levelFor('quarry'),
      f.levelFor('quarry::http'),
      f.levelFor('quarry::tasks'),
      f.levelFor('quarry::engine'),
      f.max,
    ]).toEqual([3, 3, 5, 3, 5]);
  });

  it('when no directive covers a target, then its lines are off', () => {
    const f = TargetFilter.parse('milli=debug');
    expect([f.levelFor('quarry::http'), f.levelFor('quarry::engine')]).toEqual([0, 4]);
    expect(TargetFilter.parse('meilisearch').levelFor('quarry::tasks')).toBe(5);
    expect(TargetFilter.parse('off').max).toBe(0);
  });

  it('when a directive is malformed, then TargetError', () => {
    for (const t of ['', 'a=b=c', 'milli=6', 'milli=loud']) expect(() => TargetFilter.parse(t)).toThrow(TargetError);
    for (const t of ['info,', 'milli=', '=info', '3', 'milli[span]=info', ' info'])
      expect(() => TargetFilter.parse(t)).not.toThrow();
  });
});
