/**
 * Request-shape validation of settings updates, the sub-routes and task details. Applying
 * updates and the settings view are the engine's: their cases are Rust unit tests in
 * `crates/engine/src/settings/tests.rs`.
 */
import { ApiError } from '../errors/api-error';
import { hideSecret } from '../native';
import {
  parseSettingsBody,
  parseSubrouteBody,
  resetPatch,
  SETTINGS_FIELDS,
  SETTINGS_SUBROUTES,
  settingsTaskDetails,
} from './index';

/** Runs `fn`, expects an ApiError, returns its code and message. */
function failure(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('validation', () => {
  it('when the body is not an object, then it is a bad_request', () => {
    expect(failure(() => parseSettingsBody(['a']))).toEqual({
      code: 'bad_request',
      message: 'Invalid value type: expected an object, but found an array: `["a"]`',
    });
    expect(failure(() => parseSettingsBody(null)).message).toBe(
      'Invalid value type: expected an object, but found null',
    );
  });

  it('when a field is unknown, then it is a bad_request listing every field (with a suggestion when close)', () => {
    const all = SETTINGS_FIELDS.map((f) => `\`${f}\``).join(', ');
    expect(failure(() => parseSettingsBody({ foo: 1 }))).toEqual({
      code: 'bad_request',
      message: `Unknown field \`foo\`: expected one of ${all}`,
    });
    expect(failure(() => parseSettingsBody({ rankingRule: [] })).message).toBe(
      `Unknown field \`rankingRule\`: did you mean \`rankingRules\`? expected one of ${all}`,
    );
  });

  it('when several fields are wrong, then only the first one in the body is reported, with its own code', () => {
    expect(failure(() => parseSettingsBody({ rankingRules: 'foo', stopWords: 1 }))).toEqual({
      code: 'invalid_settings_ranking_rules',
      message: 'Invalid value type at `.rankingRules`: expected an array, but found a string: `"foo"`',
    });
    expect(failure(() => parseSettingsBody({ stopWords: 1, rankingRules: 'foo' }))).toEqual({
      code: 'invalid_settings_stop_words',
      message: 'Invalid value type at `.stopWords`: expected an array, but found a positive integer: `1`',
    });
    expect(failure(() => parseSettingsBody({ distinctAttribute: 'ok', foo: 1, stopWords: 1 })).code).toBe(
      'bad_request',
    );
  });

  it.each([
    ['displayedAttributes', 'x', 'invalid_settings_displayed_attributes'],
    ['searchableAttributes', [1], 'invalid_settings_searchable_attributes'],
    ['filterableAttributes', [true], 'invalid_settings_filterable_attributes'],
    ['sortableAttributes', {}, 'invalid_settings_sortable_attributes'],
    ['foreignKeys', [{}], 'invalid_settings_foreign_keys'],
    ['rankingRules', ['nope'], 'invalid_settings_ranking_rules'],
    ['stopWords', 'x', 'invalid_settings_stop_words'],
    ['nonSeparatorTokens', 'x', 'invalid_settings_non_separator_tokens'],
    ['separatorTokens', 'x', 'invalid_settings_separator_tokens'],
    ['dictionary', 'x', 'invalid_settings_dictionary'],
    ['synonyms', { a: 'b' }, 'invalid_settings_synonyms'],
    ['distinctAttribute', 1, 'invalid_settings_distinct_attribute'],
    ['proximityPrecision', 'near', 'invalid_settings_proximity_precision'],
    ['typoTolerance', { enabled: 1 }, 'invalid_settings_typo_tolerance'],
    ['faceting', { maxValuesPerFacet: -1 }, 'invalid_settings_faceting'],
    ['pagination', { maxTotalHits: 0 }, 'invalid_settings_pagination'],
    ['embedders', { e: 'x' }, 'invalid_settings_embedders'],
    ['searchCutoffMs', 'hello', 'invalid_settings_search_cutoff_ms'],
    ['localizedAttributes', 'hello', 'invalid_settings_localized_attributes'],
    ['facetSearch', 'yes', 'invalid_settings_facet_search'],
    ['prefixSearch', 'sometimes', 'invalid_settings_prefix_search'],
    ['chat', { description: 1 }, 'invalid_settings_index_chat'],
  ])('when %s is invalid, then the code is its own', (field, value, code) => {
    expect(failure(() => parseSettingsBody({ [field]: value })).code).toBe(code);
  });

  it('when nested values are wrong, then the message locates them', () => {
    const message = (body: unknown): string => failure(() => parseSettingsBody(body)).message;
    expect(message({ filterableAttributes: [{ attributePatterns: 'a' }] })).toBe(
      'Invalid value type at `.filterableAttributes[0].attributePatterns`: expected an array, but found a string: `"a"`',
    );
    expect(message({ filterableAttributes: [{ features: {} }] })).toBe(
      'Missing field `attributePatterns` inside `.filterableAttributes[0]`',
    );
    expect(message({ typoTolerance: { foo: 1 } })).toBe(
      'Unknown field `foo` inside `.typoTolerance`: expected one of `enabled`, `minWordSizeForTypos`, `disableOnWords`, `disableOnAttributes`, `disableOnNumbers`',
    );
    expect(message({ typoTolerance: { minWordSizeForTypos: { oneTypo: 256 } } })).toBe(
      'Invalid value at `.typoTolerance.minWordSizeForTypos.oneTypo`: value: `256` is too large to be deserialized, maximum value authorized is `255`',
    );
    expect(message({ pagination: { maxTotalHits: 0 } })).toBe(
      'Invalid value at `.pagination.maxTotalHits`: a non-zero integer value lower than `18446744073709551615` was expected, but found a zero',
    );
    expect(message({ faceting: { maxValuesPerFacet: 1.5 } })).toBe(
      'Invalid value type at `.faceting.maxValuesPerFacet`: expected a positive integer, but found a number: `1.5`',
    );
    expect(message({ proximityPrecision: 'byWords' })).toBe(
      'Unknown value `byWords` at `.proximityPrecision`: did you mean `byWord`? expected one of `byWord`, `byAttribute`',
    );
    expect(message({ faceting: { sortFacetValuesBy: { genre: 'desc' } } })).toBe(
      'Unknown value `desc` at `.faceting.sortFacetValuesBy.genre`: expected one of `alpha`, `count`',
    );
    expect(message({ localizedAttributes: [{ attributePatterns: ['a'] }] })).toBe(
      'Missing field `locales` inside `.localizedAttributes[0]`',
    );
    expect(message({ embedders: { default: { source: 'openAi', foo: 1 } } })).toMatch(
      /^Unknown field `foo` inside `\.embedders\.default`: expected one of `source`, `model`, `revision`, `pooling`, `apiKey`, /,
    );
    expect(message({ embedders: { default: { source: 'magic' } } })).toBe(
      'Unknown value `magic` at `.embedders.default.source`: expected one of `openAi`, `huggingFace`, `ollama`, `userProvided`, `rest`, `composite`',
    );
  });

  it('when a ranking rule is not a built-in or `attr:asc|desc`, then the message is Meilisearch’s', () => {
    expect(failure(() => parseSettingsBody({ rankingRules: ['words', 'foo'] }))).toEqual({
      code: 'invalid_settings_ranking_rules',
      message:
        'Invalid value at `.rankingRules[1]`: `foo` ranking rule is invalid. Valid ranking rules are words, typo, sort, proximity, attribute, exactness and custom ranking rules.',
    });
    expect(failure(() => parseSettingsBody({ rankingRules: ['_geo:asc'] })).message).toBe(
      "Invalid value at `.rankingRules[0]`: `_geo` is a reserved keyword and thus can't be used as a ranking rule",
    );
    expect(failure(() => parseSettingsBody({ rankingRules: ['_geoPoint(1,2):asc'] })).message).toBe(
      "Invalid value at `.rankingRules[0]`: `_geoPoint` is a reserved keyword and thus can't be used as a ranking rule. `_geoPoint` can only be used for sorting at search time",
    );
    const rules = [
      'words',
      'typo',
      'proximity',
      'attribute',
      'attributeRank',
      'wordPosition',
      'sort',
      'exactness',
      'price:asc',
      'a.b:desc',
    ];
    for (const rule of rules.filter((r) => r !== 'attribute'))
      expect(parseSettingsBody({ rankingRules: [rule] }).rankingRules).toEqual([rule]);
    expect(parseSettingsBody({ rankingRules: ['attribute', 'words'] }).rankingRules).toEqual(['attribute', 'words']);
  });

  it('when attribute is mixed with attributeRank or wordPosition, then the update is rejected', () => {
    expect(failure(() => parseSettingsBody({ rankingRules: ['attribute', 'wordPosition'] }))).toEqual({
      code: 'invalid_settings_ranking_rules',
      message:
        'Mixed usage of the attribute, attributeRank, and wordPosition ranking rules. You must either use the attribute ranking rule alone or the attributeRank and wordPosition ranking rules.',
    });
  });

  it('when oneTypo > twoTypos in the same body, then the body is rejected', () => {
    expect(
      failure(() => parseSettingsBody({ typoTolerance: { minWordSizeForTypos: { oneTypo: 10, twoTypos: 5 } } })),
    ).toEqual({
      code: 'invalid_settings_typo_tolerance',
      message:
        'Invalid value at `.typoTolerance.minWordSizeForTypos`: `minWordSizeForTypos` setting is invalid. `oneTypo` and `twoTypos` fields should be between `0` and `255`, and `twoTypos` should be greater or equals to `oneTypo` but found `oneTypo: 10` and twoTypos: 5`.',
    });
  });

  it('when the experimental features are passed and off, then chat and foreignKeys updates are refused', () => {
    expect(failure(() => parseSettingsBody({ chat: { description: 'x' } }, {}))).toEqual({
      code: 'feature_not_enabled',
      message:
        'setting `chat` in the index settings requires enabling the `chat completions` experimental feature. See https://github.com/orgs/meilisearch/discussions/835',
    });
    expect(failure(() => parseSubrouteBody('foreignKeys', [], {})).code).toBe('feature_not_enabled');
    expect(parseSettingsBody({ chat: null }, {})).toEqual({ chat: null });
    expect(parseSettingsBody({ chat: { description: 'x' } }, { chatCompletions: true }).chat).toEqual({
      description: 'x',
    });
  });

  it('when a body is valid, then the patch lists fields in Meilisearch order with normalized values', () => {
    const patch = parseSettingsBody({
      stopWords: ['b', 'a'],
      displayedAttributes: ['x'],
      chat: { searchParameters: { hybrid: { embedder: 'e' } } },
    });
    expect(Object.keys(patch)).toEqual(['displayedAttributes', 'stopWords', 'chat']);
    expect(patch.stopWords).toEqual(['a', 'b']);
    expect(patch.chat).toEqual({ searchParameters: { hybrid: { semanticRatio: 0.5, embedder: 'e' } } });
    expect(parseSettingsBody({})).toEqual({});
  });
});

describe('sub-routes', () => {
  it('when a sub-route body has the wrong type, then the error is located at the root', () => {
    expect(failure(() => parseSubrouteBody('rankingRules', 'x'))).toEqual({
      code: 'invalid_settings_ranking_rules',
      message: 'Invalid value type: expected an array, but found a string: `"x"`',
    });
    expect(failure(() => parseSubrouteBody('rankingRules', ['x'])).message).toMatch(
      /^Invalid value at `\[0\]`: `x` ranking rule is invalid/,
    );
    expect(failure(() => parseSubrouteBody('typoTolerance', { foo: true })).message).toBe(
      'Unknown field `foo`: expected one of `enabled`, `minWordSizeForTypos`, `disableOnWords`, `disableOnAttributes`, `disableOnNumbers`',
    );
    expect(failure(() => parseSubrouteBody('searchCutoffMs', 'hello'))).toEqual({
      code: 'invalid_settings_search_cutoff_ms',
      message: 'Invalid value type: expected a positive integer, but found a string: `"hello"`',
    });
  });

  it('when a sub-route body is valid or null, then the patch holds just that field', () => {
    expect(parseSubrouteBody('stopWords', ['the', 'a'])).toEqual({ stopWords: ['a', 'the'] });
    expect(parseSubrouteBody('rankingRules', null)).toEqual({ rankingRules: null });
    expect(parseSubrouteBody('distinctAttribute', 'title')).toEqual({ distinctAttribute: 'title' });
    expect(parseSubrouteBody('facetSearch', false)).toEqual({ facetSearch: false });
    expect(parseSubrouteBody('typoTolerance', {})).toEqual({ typoTolerance: {} });
  });

  it('when the sub-routes are listed, then every setting has exactly one, with Meilisearch’s verbs', () => {
    expect(SETTINGS_SUBROUTES.map((r) => r.field).sort()).toEqual([...SETTINGS_FIELDS].sort());
    const patched = SETTINGS_SUBROUTES.filter((r) => r.method === 'patch').map((r) => r.route);
    expect(patched.sort()).toEqual(['chat', 'embedders', 'faceting', 'pagination', 'typo-tolerance']);
    expect(SETTINGS_SUBROUTES.find((r) => r.field === 'searchCutoffMs')?.route).toBe('search-cutoff-ms');
  });
});

describe('secrets and task details', () => {
  it('when an embedder has an API key, then details mask it like Meilisearch', () => {
    expect(hideSecret('<your-OpenAI-API-key>')).toBe('<yoXXXXX...');
    expect(hideSecret('short')).toBe('XXX...');
    expect(hideSecret('0123456789abc')).toBe('01XXXX...');
    expect(hideSecret('0123456789012345678901234567890123')).toBe('01234XXXXXX...');
    const patch = parseSubrouteBody('embedders', {
      default: { source: 'openAi', apiKey: '<your-OpenAI-API-key>', model: 'text-embedding-3-small' },
    });
    expect(settingsTaskDetails(patch)).toEqual({
      embedders: { default: { source: 'openAi', model: 'text-embedding-3-small', apiKey: '<yoXXXXX...' } },
    });
  });

  it('when an update is submitted, then its details are the parsed update in Meilisearch order', () => {
    const patch = parseSettingsBody({
      stopWords: ['b', 'a', 'b'],
      rankingRules: ['typo'],
      typoTolerance: { minWordSizeForTypos: { oneTypo: null } },
    });
    const details = settingsTaskDetails(patch);
    expect(details).toEqual({
      rankingRules: ['typo'],
      stopWords: ['a', 'b'],
      typoTolerance: { minWordSizeForTypos: { oneTypo: null } },
    });
    expect(Object.keys(details)).toEqual(['rankingRules', 'stopWords', 'typoTolerance']);
  });

  it('when settings are reset, then details show null, and `["*"]` for displayed/searchable attributes', () => {
    const details = settingsTaskDetails(resetPatch());
    expect(Object.keys(details)).toEqual([...SETTINGS_FIELDS]);
    expect(details.displayedAttributes).toEqual(['*']);
    expect(details.searchableAttributes).toEqual(['*']);
    expect(details.rankingRules).toBeNull();
    expect(settingsTaskDetails(resetPatch('distinctAttribute'))).toEqual({ distinctAttribute: null });
    expect(resetPatch('stopWords')).toEqual({ stopWords: null });
    expect(Object.keys(resetPatch())).toEqual([...SETTINGS_FIELDS]);
  });
});
