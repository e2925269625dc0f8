import { ApiError } from '../errors/api-error';
import {
  applySettingsPatch,
  defaultSettings,
  hideSecret,
  parseSettingsBody,
  parseSubrouteBody,
  resetPatch,
  SETTINGS_FIELDS,
  SETTINGS_SUBROUTES,
  type Settings,
  type SettingsPatch,
  settingsTaskDetails,
  settingsView,
  subrouteView,
} from './index';

/** The default settings object of the JS client's snapshot (Meilisearch 1.50), in wire order. */
const DEFAULT_VIEW = {
  displayedAttributes: ['*'],
  searchableAttributes: ['*'],
  filterableAttributes: [],
  sortableAttributes: [],
  rankingRules: ['words', 'typo', 'proximity', 'attributeRank', 'sort', 'wordPosition', 'exactness'],
  stopWords: [],
  nonSeparatorTokens: [],
  separatorTokens: [],
  dictionary: [],
  synonyms: {},
  distinctAttribute: null,
  proximityPrecision: 'byWord',
  typoTolerance: {
    enabled: true,
    minWordSizeForTypos: { oneTypo: 5, twoTypos: 9 },
    disableOnWords: [],
    disableOnAttributes: [],
    disableOnNumbers: false,
  },
  faceting: { maxValuesPerFacet: 100, sortFacetValuesBy: { '*': 'alpha' } },
  pagination: { maxTotalHits: 1000 },
  embedders: {},
  searchCutoffMs: null,
  localizedAttributes: null,
  facetSearch: true,
  prefixSearch: 'indexingTime',
};

const DEFAULT_CHAT = {
  description: '',
  documentTemplate:
    '{% for field in fields %}{% if field.is_searchable and field.value != nil %}{{ field.name }}: {{ field.value }}\n{% endif %}{% endfor %}',
  documentTemplateMaxBytes: 400,
  searchParameters: {},
};

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

/** Parses then applies a body on top of `base`, like PATCH /settings followed by its task. */
function update(body: unknown, base: Settings = defaultSettings()): Settings {
  return applySettingsPatch(base, parseSettingsBody(body));
}

describe('defaults', () => {
  it('when an index has no settings, then GET /settings shows exactly the Meilisearch 1.50 defaults, in order', () => {
    const view = settingsView(defaultSettings());
    expect(view).toEqual(DEFAULT_VIEW);
    expect(Object.keys(view)).toEqual(Object.keys(DEFAULT_VIEW));
    expect(Object.keys(view.typoTolerance as object)).toEqual(Object.keys(DEFAULT_VIEW.typoTolerance));
  });

  it('when the experimental features are on, then foreignKeys and chat appear in their places', () => {
    const view = settingsView(defaultSettings(), { foreignKeys: true, chatCompletions: true });
    const keys = Object.keys(view);
    expect(keys.indexOf('foreignKeys')).toBe(keys.indexOf('sortableAttributes') + 1);
    expect(keys[keys.length - 1]).toBe('chat');
    expect(view.foreignKeys).toEqual([]);
    expect(view.chat).toEqual(DEFAULT_CHAT);
  });

  it('when defaults are taken twice, then the objects are independent', () => {
    const a = defaultSettings();
    a.stopWords.push('x');
    a.typoTolerance.minWordSizeForTypos.oneTypo = 1;
    expect(defaultSettings().stopWords).toEqual([]);
    expect(defaultSettings().typoTolerance.minWordSizeForTypos.oneTypo).toBe(5);
  });

  it('when a stored object lacks newer fields, then the views fill them with defaults', () => {
    const partial = { rankingRules: ['typo'] } as unknown as Settings;
    expect(settingsView(partial)).toEqual({ ...DEFAULT_VIEW, rankingRules: ['typo'] });
    expect(subrouteView(partial, 'pagination')).toEqual({ maxTotalHits: 1000 });
  });
});

describe('applying updates', () => {
  it('when the JS client updates every setting, then GET /settings matches its snapshot', () => {
    const next = update({
      filterableAttributes: ['title'],
      sortableAttributes: ['title'],
      distinctAttribute: 'title',
      proximityPrecision: 'byAttribute',
      searchableAttributes: ['title'],
      displayedAttributes: ['title'],
      rankingRules: ['id:asc', 'typo'],
      stopWords: ['the'],
      synonyms: { harry: ['potter'] },
      typoTolerance: {
        enabled: false,
        minWordSizeForTypos: { oneTypo: 1, twoTypos: 100 },
        disableOnWords: ['prince'],
        disableOnAttributes: ['comment'],
      },
      pagination: { maxTotalHits: 1000 },
      faceting: { maxValuesPerFacet: 50, sortFacetValuesBy: { '*': 'alpha' } },
      separatorTokens: ['&sep', '/', '|'],
      nonSeparatorTokens: ['&sep', '/', '|'],
      dictionary: ['J. K.', 'J. R. R.'],
      searchCutoffMs: 1000,
      facetSearch: true,
      prefixSearch: 'indexingTime',
    });
    expect(settingsView(next)).toEqual({
      ...DEFAULT_VIEW,
      displayedAttributes: ['title'],
      searchableAttributes: ['title'],
      filterableAttributes: ['title'],
      sortableAttributes: ['title'],
      rankingRules: ['id:asc', 'typo'],
      stopWords: ['the'],
      nonSeparatorTokens: ['&sep', '/', '|'],
      separatorTokens: ['&sep', '/', '|'],
      dictionary: ['J. K.', 'J. R. R.'],
      synonyms: { harry: ['potter'] },
      distinctAttribute: 'title',
      proximityPrecision: 'byAttribute',
      typoTolerance: {
        enabled: false,
        minWordSizeForTypos: { oneTypo: 1, twoTypos: 100 },
        disableOnWords: ['prince'],
        disableOnAttributes: ['comment'],
        disableOnNumbers: false,
      },
      faceting: { maxValuesPerFacet: 50, sortFacetValuesBy: { '*': 'alpha' } },
      searchCutoffMs: 1000,
    });
  });

  it('when every field is sent as null (nested ones too), then everything is back to its default', () => {
    const changed = update({
      rankingRules: ['typo'],
      stopWords: ['a'],
      distinctAttribute: 'id',
      searchCutoffMs: 10,
      typoTolerance: { enabled: false, minWordSizeForTypos: { oneTypo: 2, twoTypos: 3 } },
      faceting: { maxValuesPerFacet: 1 },
      pagination: { maxTotalHits: 5 },
    });
    const reset = update(
      {
        filterableAttributes: null,
        sortableAttributes: null,
        distinctAttribute: null,
        searchableAttributes: null,
        displayedAttributes: null,
        rankingRules: null,
        stopWords: null,
        synonyms: null,
        typoTolerance: {
          enabled: null,
          minWordSizeForTypos: { oneTypo: null, twoTypos: null },
          disableOnWords: null,
          disableOnAttributes: null,
        },
        faceting: { maxValuesPerFacet: null, sortFacetValuesBy: null },
        pagination: { maxTotalHits: null },
        separatorTokens: null,
        nonSeparatorTokens: null,
        dictionary: null,
        searchCutoffMs: null,
      },
      changed,
    );
    expect(settingsView(reset)).toEqual(DEFAULT_VIEW);
  });

  it('when a DELETE resets everything, then the settings equal the defaults', () => {
    const changed = update({ rankingRules: ['typo'], embedders: { e: { source: 'userProvided', dimensions: 2 } }, localizedAttributes: [] });
    expect(applySettingsPatch(changed, resetPatch())).toEqual(defaultSettings());
  });

  it('when one field is reset, then only that field changes', () => {
    const changed = update({ rankingRules: ['typo'], stopWords: ['a'] });
    const next = applySettingsPatch(changed, resetPatch('stopWords'));
    expect(next.stopWords).toEqual([]);
    expect(next.rankingRules).toEqual(['typo']);
    expect(resetPatch('stopWords')).toEqual({ stopWords: null });
    expect(Object.keys(resetPatch())).toEqual([...SETTINGS_FIELDS]);
  });

  it('when typoTolerance is patched partially, then the other typo fields, nested ones included, are kept', () => {
    let s = update({ typoTolerance: { enabled: false, disableOnWords: ['x'], minWordSizeForTypos: { oneTypo: 3, twoTypos: 7 } } });
    s = update({ typoTolerance: { minWordSizeForTypos: { oneTypo: 4 } } }, s);
    expect(s.typoTolerance).toEqual({
      enabled: false,
      minWordSizeForTypos: { oneTypo: 4, twoTypos: 7 },
      disableOnWords: ['x'],
      disableOnAttributes: [],
      disableOnNumbers: false,
    });
    s = update({ typoTolerance: { minWordSizeForTypos: null } }, s);
    expect(s.typoTolerance.minWordSizeForTypos).toEqual({ oneTypo: 5, twoTypos: 9 });
    expect(s.typoTolerance.enabled).toBe(false);
    s = applySettingsPatch(s, parseSubrouteBody('typoTolerance', null));
    expect(s.typoTolerance).toEqual(DEFAULT_VIEW.typoTolerance);
  });

  it('when faceting is patched, then fields merge, sortFacetValuesBy is replaced and always keeps `*`', () => {
    let s = applySettingsPatch(defaultSettings(), parseSubrouteBody('faceting', { maxValuesPerFacet: 12, sortFacetValuesBy: { test: 'count' } }));
    expect(s.faceting).toEqual({ maxValuesPerFacet: 12, sortFacetValuesBy: { '*': 'alpha', test: 'count' } });
    expect(Object.keys(s.faceting.sortFacetValuesBy)).toEqual(['*', 'test']);
    s = applySettingsPatch(s, parseSubrouteBody('faceting', { maxValuesPerFacet: null }));
    expect(s.faceting).toEqual({ maxValuesPerFacet: 100, sortFacetValuesBy: { '*': 'alpha', test: 'count' } });
    s = applySettingsPatch(s, parseSubrouteBody('faceting', { sortFacetValuesBy: { b: 'count', '*': 'count' } }));
    expect(s.faceting.sortFacetValuesBy).toEqual({ '*': 'count', b: 'count' });
    s = applySettingsPatch(s, resetPatch('faceting'));
    expect(s.faceting).toEqual(DEFAULT_VIEW.faceting);
  });

  it('when pagination is patched with null, then maxTotalHits is back to 1000', () => {
    const s = update({ pagination: { maxTotalHits: 100 } });
    expect(s.pagination).toEqual({ maxTotalHits: 100 });
    expect(update({ pagination: { maxTotalHits: null } }, s).pagination).toEqual({ maxTotalHits: 1000 });
    expect(update({ pagination: null }, s).pagination).toEqual({ maxTotalHits: 1000 });
  });

  it('when sets are sent, then they come back sorted by bytes and deduplicated', () => {
    const s = update({
      stopWords: ['the', 'a', 'the', 'Zed'],
      sortableAttributes: ['title', 'genre', 'title'],
      separatorTokens: ['|', '&sep', '/'],
      nonSeparatorTokens: ['|', '|', '#'],
      dictionary: ['J. R. R.', 'J. K.', 'J. K.'],
      typoTolerance: { disableOnWords: ['b', 'a', 'b'], disableOnAttributes: ['y', 'x'] },
    });
    expect(s.stopWords).toEqual(['Zed', 'a', 'the']);
    expect(s.sortableAttributes).toEqual(['genre', 'title']);
    expect(s.separatorTokens).toEqual(['&sep', '/', '|']);
    expect(s.nonSeparatorTokens).toEqual(['#', '|']);
    expect(s.dictionary).toEqual(['J. K.', 'J. R. R.']);
    expect(s.typoTolerance.disableOnWords).toEqual(['a', 'b']);
    expect(s.typoTolerance.disableOnAttributes).toEqual(['x', 'y']);
  });

  it('when lists with an order are sent, then displayed/searchable keep it (without repeats) and filterable is kept as sent', () => {
    const granular = { attributePatterns: ['genre'], features: { facetSearch: true, filter: { equality: true, comparison: false } } };
    const s = update({
      displayedAttributes: ['title', 'id', 'title'],
      searchableAttributes: ['b', 'a'],
      filterableAttributes: ['author', granular, 'author'],
      synonyms: { wolverine: ['logan', 'xmen'], hp: ['harry potter'] },
      rankingRules: ['typo', 'words', 'typo'],
    });
    expect(s.displayedAttributes).toEqual(['title', 'id']);
    expect(s.searchableAttributes).toEqual(['b', 'a']);
    expect(s.filterableAttributes).toEqual(['author', granular, 'author']);
    expect(Object.keys(s.synonyms)).toEqual(['hp', 'wolverine']);
    expect(s.synonyms.wolverine).toEqual(['logan', 'xmen']);
    expect(s.rankingRules).toEqual(['typo', 'words', 'typo']);
  });

  it('when a map key is `__proto__`, then it is stored as an ordinary entry', () => {
    const s = update(JSON.parse('{"synonyms": {"__proto__": ["x"], "a": ["b"]}, "embedders": {"__proto__": {"source": "userProvided", "dimensions": 1}}}'));
    expect(Object.keys(s.synonyms)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(s.synonyms)).toBe(Object.prototype);
    expect(JSON.stringify(settingsView(s).embedders)).toBe('{"__proto__":{"source":"userProvided","dimensions":1}}');
  });

  it('when `*` is among displayed or searchable attributes, then the list is `["*"]`', () => {
    const s = update({ displayedAttributes: ['title', '*'], searchableAttributes: ['*'] });
    expect(s.displayedAttributes).toEqual(['*']);
    expect(s.searchableAttributes).toEqual(['*']);
  });

  it('when a granular filterable rule omits features, then the defaults are filled in', () => {
    const s = update({ filterableAttributes: [{ attributePatterns: ['a*'] }, { attributePatterns: ['b'], features: { filter: { comparison: true } } }] });
    expect(s.filterableAttributes).toEqual([
      { attributePatterns: ['a*'], features: { facetSearch: false, filter: { equality: true, comparison: false } } },
      { attributePatterns: ['b'], features: { facetSearch: false, filter: { equality: true, comparison: true } } },
    ]);
  });

  it('when localized attributes use two-letter codes, then they are stored as three-letter codes; [] and null differ', () => {
    const s = update({ localizedAttributes: [{ attributePatterns: ['title'], locales: ['en', 'jpn', 'cmn', 'zh'] }] });
    expect(s.localizedAttributes).toEqual([{ attributePatterns: ['title'], locales: ['eng', 'jpn', 'cmn', 'zho'] }]);
    expect(update({ localizedAttributes: [] }).localizedAttributes).toEqual([]);
    expect(update({ localizedAttributes: null }, s).localizedAttributes).toBeNull();
  });

  it('when oneTypo would exceed the stored twoTypos, then the update fails when it runs', () => {
    const s = update({ typoTolerance: { minWordSizeForTypos: { twoTypos: 6 } } });
    expect(failure(() => update({ typoTolerance: { minWordSizeForTypos: { oneTypo: 7 } } }, s))).toEqual({
      code: 'invalid_settings_typo_tolerance',
      message:
        '`minWordSizeForTypos` setting is invalid. `oneTypo` and `twoTypos` fields should be between `0` and `255`, and `twoTypos` should be greater or equals to `oneTypo` but found `oneTypo: 7` and twoTypos: 6`.',
    });
  });

  it('when embedders are updated, then each embedder merges field by field and null removes one', () => {
    let s = applySettingsPatch(
      defaultSettings(),
      parseSubrouteBody('embedders', {
        manual: { source: 'userProvided', dimensions: 3 },
        default: { source: 'openAi', apiKey: 'sk-0123456789abcdefghijklmno', model: 'text-embedding-3-small', dimensions: 1536 },
      }),
    );
    expect(Object.keys(s.embedders)).toEqual(['default', 'manual']);
    s = applySettingsPatch(s, parseSubrouteBody('embedders', { default: { documentTemplate: '{{doc.title}}', dimensions: null } }));
    expect(s.embedders.default).toEqual({
      source: 'openAi',
      model: 'text-embedding-3-small',
      apiKey: 'sk-0123456789abcdefghijklmno',
      documentTemplate: '{{doc.title}}',
    });
    s = applySettingsPatch(s, parseSubrouteBody('embedders', { manual: null }));
    expect(Object.keys(s.embedders)).toEqual(['default']);
    s = applySettingsPatch(s, parseSubrouteBody('embedders', { default: { source: 'userProvided', dimensions: 2 } }));
    expect(s.embedders.default).toEqual({ source: 'userProvided', apiKey: 'sk-0123456789abcdefghijklmno', dimensions: 2 });
    expect(applySettingsPatch(s, parseSettingsBody({ embedders: null })).embedders).toEqual({});
  });
});

describe('validation', () => {
  it('when the body is not an object, then it is a bad_request', () => {
    expect(failure(() => parseSettingsBody(['a']))).toEqual({
      code: 'bad_request',
      message: 'Invalid value type: expected an object, but found an array: `["a"]`',
    });
    expect(failure(() => parseSettingsBody(null)).message).toBe('Invalid value type: expected an object, but found null');
  });

  it('when a field is unknown, then it is a bad_request listing every field (with a suggestion when close)', () => {
    const all = SETTINGS_FIELDS.map((f) => `\`${f}\``).join(', ');
    expect(failure(() => parseSettingsBody({ foo: 1 }))).toEqual({ code: 'bad_request', message: `Unknown field \`foo\`: expected one of ${all}` });
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
    expect(failure(() => parseSettingsBody({ distinctAttribute: 'ok', foo: 1, stopWords: 1 })).code).toBe('bad_request');
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
    expect(message({ filterableAttributes: [{ features: {} }] })).toBe('Missing field `attributePatterns` inside `.filterableAttributes[0]`');
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
    expect(message({ localizedAttributes: [{ attributePatterns: ['a'] }] })).toBe('Missing field `locales` inside `.localizedAttributes[0]`');
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
    const rules = ['words', 'typo', 'proximity', 'attribute', 'attributeRank', 'wordPosition', 'sort', 'exactness', 'price:asc', 'a.b:desc'];
    for (const rule of rules.filter((r) => r !== 'attribute')) expect(parseSettingsBody({ rankingRules: [rule] }).rankingRules).toEqual([rule]);
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
    expect(failure(() => parseSettingsBody({ typoTolerance: { minWordSizeForTypos: { oneTypo: 10, twoTypos: 5 } } }))).toEqual({
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
    expect(parseSettingsBody({ chat: { description: 'x' } }, { chatCompletions: true }).chat).toEqual({ description: 'x' });
  });

  it('when a body is valid, then the patch lists fields in Meilisearch order with normalized values', () => {
    const patch = parseSettingsBody({ stopWords: ['b', 'a'], displayedAttributes: ['x'], chat: { searchParameters: { hybrid: { embedder: 'e' } } } });
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
    expect(failure(() => parseSubrouteBody('rankingRules', ['x'])).message).toMatch(/^Invalid value at `\[0\]`: `x` ranking rule is invalid/);
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

  it('when a sub-route is read, then it shows that setting', () => {
    const s = update({ prefixSearch: 'disabled', distinctAttribute: 'title' });
    expect(subrouteView(s, 'prefixSearch')).toBe('disabled');
    expect(subrouteView(s, 'distinctAttribute')).toBe('title');
    expect(subrouteView(s, 'localizedAttributes')).toBeNull();
    expect(subrouteView(s, 'chat')).toEqual(DEFAULT_CHAT);
    expect(subrouteView(s, 'foreignKeys')).toEqual([]);
  });

  it('when the sub-routes are listed, then every setting has exactly one, with Meilisearch’s verbs', () => {
    expect(SETTINGS_SUBROUTES.map((r) => r.field).sort()).toEqual([...SETTINGS_FIELDS].sort());
    const patched = SETTINGS_SUBROUTES.filter((r) => r.method === 'patch').map((r) => r.route);
    expect(patched.sort()).toEqual(['chat', 'embedders', 'faceting', 'pagination', 'typo-tolerance']);
    expect(SETTINGS_SUBROUTES.find((r) => r.field === 'searchCutoffMs')?.route).toBe('search-cutoff-ms');
  });
});

describe('secrets and task details', () => {
  it('when an embedder has an API key, then views and details mask it like Meilisearch', () => {
    expect(hideSecret('<your-OpenAI-API-key>')).toBe('<yoXXXXX...');
    expect(hideSecret('short')).toBe('XXX...');
    expect(hideSecret('0123456789abc')).toBe('01XXXX...');
    expect(hideSecret('0123456789012345678901234567890123')).toBe('01234XXXXXX...');
    const patch = parseSubrouteBody('embedders', { default: { source: 'openAi', apiKey: '<your-OpenAI-API-key>', model: 'text-embedding-3-small' } });
    const s = applySettingsPatch(defaultSettings(), patch);
    expect(subrouteView(s, 'embedders')).toEqual({
      default: {
        source: 'openAi',
        model: 'text-embedding-3-small',
        apiKey: '<yoXXXXX...',
        documentTemplate: expect.stringContaining('{% for field in fields %}'),
        documentTemplateMaxBytes: 400,
      },
    });
    expect((settingsView(s).embedders as Record<string, { apiKey: string }>).default.apiKey).toBe('<yoXXXXX...');
    expect(s.embedders.default.apiKey).toBe('<your-OpenAI-API-key>');
    expect(settingsTaskDetails(patch)).toEqual({ embedders: { default: { source: 'openAi', model: 'text-embedding-3-small', apiKey: '<yoXXXXX...' } } });
  });

  it('when an update is submitted, then its details are the parsed update in Meilisearch order', () => {
    const patch = parseSettingsBody({ stopWords: ['b', 'a', 'b'], rankingRules: ['typo'], typoTolerance: { minWordSizeForTypos: { oneTypo: null } } });
    const details = settingsTaskDetails(patch);
    expect(details).toEqual({ rankingRules: ['typo'], stopWords: ['a', 'b'], typoTolerance: { minWordSizeForTypos: { oneTypo: null } } });
    expect(Object.keys(details)).toEqual(['rankingRules', 'stopWords', 'typoTolerance']);
  });

  it('when settings are reset, then details show null, and `["*"]` for displayed/searchable attributes', () => {
    const details = settingsTaskDetails(resetPatch());
    expect(Object.keys(details)).toEqual([...SETTINGS_FIELDS]);
    expect(details.displayedAttributes).toEqual(['*']);
    expect(details.searchableAttributes).toEqual(['*']);
    expect(details.rankingRules).toBeNull();
    expect(settingsTaskDetails(resetPatch('distinctAttribute'))).toEqual({ distinctAttribute: null });
  });

  it('when a patch went through JSON (as task payloads do), then it applies the same', () => {
    const patch: SettingsPatch = parseSettingsBody({ faceting: { maxValuesPerFacet: 3 }, distinctAttribute: null });
    const roundTripped = JSON.parse(JSON.stringify(patch)) as SettingsPatch;
    expect(applySettingsPatch(defaultSettings(), roundTripped)).toEqual(applySettingsPatch(defaultSettings(), patch));
  });
});
