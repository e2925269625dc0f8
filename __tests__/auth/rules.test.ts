/** Pure parts of auth: action wildcards, index patterns, token search rules, filter merging. */
import { GLOBAL_ACTIONS, grants, indexAllowed, isIndexPattern } from '../../ts/auth/actions';
import { mergeFilters, SearchRules } from '../../ts/auth/tenant-token';

describe('grants (wildcard expansion)', () => {
  it.each([
    [['*'], 'search', true],
    [['*'], 'keys.get', true],
    [['*'], 'tasks.compact', true],
    [['*'], 'documents.*', true],
    [['*.get'], 'search', true],
    [['*.get'], 'documents.get', true],
    [['*.get'], 'indexes.get', true],
    [['*.get'], 'version', true],
    [['*.get'], 'keys.get', false],
    [['*.get'], 'documents.add', false],
    [['*.get'], 'tasks.cancel', false],
    [['documents.*'], 'documents.add', true],
    [['documents.*'], 'documents.get', true],
    [['documents.*'], 'documents.delete', true],
    [['documents.*'], 'search', false],
    // The edit route's action: Meilisearch expands `documents.*` when it stores a key, so only `*` reaches it.
    [['documents.*'], 'documents.*', false],
    [['documents.add', 'documents.get', 'documents.delete'], 'documents.*', false],
    [['*'], 'documents.*', true],
    [['indexes.*'], 'indexes.swap', true],
    [['indexes.*'], 'indexes.compact', true],
    [['indexes.*'], 'documents.add', false],
    [['tasks.*'], 'tasks.cancel', true],
    [['tasks.*'], 'tasks.compact', true],
    [['settings.*'], 'settings.update', true],
    [['settings.*'], 'search', false],
    [['stats.*'], 'stats.get', true],
    [['dumps.*'], 'dumps.create', true],
    [['snapshots.*'], 'snapshots.create', true],
    [['metrics.*'], 'metrics.get', true],
    [['search'], 'search', true],
    [['search'], 'documents.get', false],
    [['version'], 'version', true],
    [['experimental.get'], 'experimental.update', false],
    [['keys.get'], 'keys.create', false],
    [[], 'search', false],
  ])('when a key holds %j, then %s is %s', (actions, action, expected) => {
    expect(grants(actions, action)).toBe(expected);
  });

  it('when an action is global, then it is in GLOBAL_ACTIONS; index-checked ones are not', () => {
    for (const a of [
      'version',
      'dumps.create',
      'snapshots.*',
      'keys.get',
      'experimental.update',
      'tasks.compact',
      'metrics.get',
    ])
      expect(GLOBAL_ACTIONS.has(a)).toBe(true);
    for (const a of [
      'search',
      'documents.add',
      'indexes.create',
      'tasks.get',
      'tasks.cancel',
      'settings.update',
      'stats.get',
    ])
      expect(GLOBAL_ACTIONS.has(a)).toBe(false);
  });
});

describe('index patterns', () => {
  it.each([
    ['*', true],
    ['movies', true],
    ['movies*', true],
    ['movies_2024-b', true],
    ['*_movies', false],
    ['mo*ies', false],
    ['movies**', false],
    ['', false],
    ['mo vies', false],
    ['movies.*', false],
  ])('when the pattern is %j, then valid is %s', (p, ok) => {
    expect(isIndexPattern(p)).toBe(ok);
  });

  it.each([
    [['*'], 'anything', true],
    [['movies'], 'movies', true],
    [['movies'], 'movies2', false],
    [['movies*'], 'movies', true],
    [['movies*'], 'movies_fr', true],
    [['movies*'], 'tv_movies', false],
    [['books', 'movies*'], 'books', true],
    [[], 'movies', false],
  ])('when the key covers %j, then %s is allowed: %s', (patterns, uid, ok) => {
    expect(indexAllowed(patterns, uid)).toBe(ok);
  });
});

describe('tenant token search rules', () => {
  const rules = new SearchRules(
    new Map<string, { filter: unknown }>([
      ['*', { filter: 'tenant = 0' }],
      ['mov*', { filter: 'tenant = 1' }],
      ['movies*', { filter: 'tenant = 2' }],
      ['movies', { filter: undefined }],
    ]),
  );

  it('when several patterns match, then the most specific one gives the filter', () => {
    expect(rules.filterFor('movies')).toBeNull();
    expect(rules.filterFor('movies_fr')).toBe('tenant = 2');
    expect(rules.filterFor('movers')).toBe('tenant = 1');
    expect(rules.filterFor('books')).toBe('tenant = 0');
  });

  it('when no pattern matches, then the index is refused', () => {
    const only = new SearchRules(new Map([['movies*', { filter: undefined }]]));
    expect(only.allows('movies_x')).toBe(true);
    expect(only.allows('books')).toBe(false);
    expect(only.allIndexes()).toBe(false);
    expect(only.patterns()).toEqual(['movies*']);
  });
});

describe('mergeFilters (rule AND query)', () => {
  it.each([
    [null, 'a = 1', 'a = 1'],
    [undefined, ['a = 1'], ['a = 1']],
    ['', 'a = 1', 'a = 1'],
    ['b = 2', 'a = 1', ['b = 2', 'a = 1']],
    ['b = 2 OR c = 3', 'a = 1', ['b = 2 OR c = 3', 'a = 1']],
    [['b = 2', ['c = 3', 'd = 4']], 'a = 1', ['b = 2', ['c = 3', 'd = 4'], 'a = 1']],
    ['b = 2', ['a = 1', ['x = 1', 'y = 2']], ['b = 2', 'a = 1', ['x = 1', 'y = 2']]],
    [[], ['a = 1'], ['a = 1']],
    ['b = 2', null, 'b = 2'],
    ['b = 2', [], 'b = 2'],
    [null, null, null],
  ])('when the query filter is %j and the rule %j, then the result is %j', (query, rule, expected) => {
    expect(mergeFilters(query, rule)).toEqual(expected);
  });
});
