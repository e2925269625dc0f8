/**
 * Validation of settings update bodies: the whole-settings PATCH body and the body of each
 * sub-route, with Meilisearch's codes and messages.
 *
 * Order of checks, as in Meilisearch: the body is deserialized field by field in the order it
 * was sent and the first error wins (an unknown top-level field is `bad_request`, any other
 * error takes the code of the top-level setting it sits in); then the whole update is checked:
 * experimental features (only when the caller passes them) and the mixed use of `attribute`
 * with `attributeRank`/`wordPosition`.
 *
 * Checks that need the current settings (oneTypo ≤ twoTypos across two updates) happen when the
 * task runs, in the engine (`Settings::apply`).
 */
import { checkEmbedder } from '../native';
import { ApiError } from '../errors/api-error';
import {
  BUILT_IN_RANKING_RULES,
  EMBEDDER_SOURCES,
  FACET_ORDERS,
  LOCALES,
  MATCHING_STRATEGIES,
  POOLINGS,
  PREFIX_SEARCHES,
  PROXIMITY_PRECISIONS,
  SETTINGS_FIELDS,
} from './vocabulary';
import {
  arrayOf,
  boolean,
  btreeMap,
  btreeSet,
  DeserrError,
  float,
  incorrectType,
  invalidValue,
  isObject,
  json,
  type Loc,
  nonZeroU64,
  nullable,
  oneOf,
  type Parser,
  refine,
  string,
  struct,
  u64,
  u8,
  unknownField,
} from './deserr';
import { minWordSizeMessage, SETTINGS_DEFAULTS, SETTINGS_KEYS, SETTINGS_REQUIRED } from './settings.generated';
import type {
  ChatHybrid,
  ChatPatch,
  ChatSearchParametersPatch,
  Distribution,
  EmbedderPatch,
  FacetingPatch,
  FilterableAttributePattern,
  FilterableAttributeRule,
  FilterableFeatures,
  FilterFeatures,
  ForeignKey,
  Fragment,
  LocalizedAttributeRule,
  MinWordSizeForTyposPatch,
  PaginationPatch,
  SettingsFeatures,
  SettingsField,
  SettingsPatch,
  SubEmbedderPatch,
  TypoTolerancePatch,
} from './types';

// ---------------------------------------------------------------------------------------------
// Ranking rules

const RANKING_RULE_INVALID = (name: string): string =>
  `\`${name}\` ranking rule is invalid. Valid ranking rules are words, typo, sort, proximity, attribute, exactness and custom ranking rules.`;
const RESERVED_FOR_SORT =
  "`_geoPoint` is a reserved keyword and thus can't be used as a ranking rule. `_geoPoint` can only be used for sorting at search time";
const RESERVED_FOR_FILTER = (name: string): string =>
  `\`${name}\` is a reserved keyword and thus can't be used as a ranking rule. \`${name}\` can only be used for filtering at search time`;
const RESERVED_KEYWORDS = [
  '_geo',
  '_geojson',
  '_geoDistance',
  '_geoPoint',
  '_geoRadius',
  '_geoBoundingBox',
  '_geoPolygon',
];

/** Why a ranking rule is rejected, or null: built-in names and `<attribute>:asc|desc`. */
export function rankingRuleError(rule: string): string | null {
  if (BUILT_IN_RANKING_RULES.includes(rule)) return null;
  const colon = rule.lastIndexOf(':');
  const direction = colon < 0 ? null : rule.slice(colon + 1);
  if (direction !== 'asc' && direction !== 'desc') return RANKING_RULE_INVALID(rule);
  const field = rule.slice(0, colon);
  if (field.startsWith('_geoPoint(') && field.endsWith(')')) return RESERVED_FOR_SORT;
  const reserved =
    RESERVED_KEYWORDS.includes(field) ||
    ['_geoRadius(', '_geoBoundingBox(', '_geo(', '_geoDistance('].some((p) => field.startsWith(p));
  if (!reserved) return null;
  if (field.startsWith('_geoPoint')) return RESERVED_FOR_SORT;
  if (field.startsWith('_geoRadius')) return RESERVED_FOR_FILTER('_geoRadius');
  if (field.startsWith('_geoBoundingBox')) return RESERVED_FOR_FILTER('_geoBoundingBox');
  return `\`${field}\` is a reserved keyword and thus can't be used as a ranking rule`;
}

const rankingRule: Parser<string> = refine(string, rankingRuleError);

const MIXED_ATTRIBUTE_RULES =
  'Mixed usage of the attribute, attributeRank, and wordPosition ranking rules. You must either use the attribute ranking rule alone or the attributeRank and wordPosition ranking rules.';

// ---------------------------------------------------------------------------------------------
// Nested objects

/** A pattern rule's `features` when not sent (the engine's `FilterableFeatures::default`). */
const FEATURES: FilterableFeatures = SETTINGS_DEFAULTS.filterableFeatures;

const filterableAttributePattern = struct<FilterableAttributePattern>(
  {
    attributePatterns: arrayOf(string),
    features: struct<FilterableFeatures>(
      {
        facetSearch: boolean,
        filter: struct<FilterFeatures>(
          { equality: boolean, comparison: boolean },
          {
            keys: SETTINGS_KEYS.filterFeatures,
            defaults: { equality: () => FEATURES.filter.equality, comparison: () => FEATURES.filter.comparison },
          },
        ),
      },
      {
        keys: SETTINGS_KEYS.filterableFeatures,
        defaults: { facetSearch: () => FEATURES.facetSearch, filter: () => structuredClone(FEATURES.filter) },
      },
    ),
  },
  {
    keys: SETTINGS_KEYS.filterableAttributePattern,
    required: SETTINGS_REQUIRED.filterableAttributePattern,
    defaults: { features: () => structuredClone(FEATURES) },
  },
);

/** An object is a pattern rule; anything else must be an attribute name. */
const filterableAttributeRule: Parser<FilterableAttributeRule> = (value, loc) =>
  isObject(value) ? filterableAttributePattern(value, loc) : string(value, loc);

const foreignKey = struct<ForeignKey>(
  { foreignIndexUid: string, fieldName: string },
  { keys: SETTINGS_KEYS.foreignKey, required: SETTINGS_REQUIRED.foreignKey },
);

const localizedAttributeRule = struct<LocalizedAttributeRule>(
  { attributePatterns: arrayOf(string), locales: arrayOf(oneOf(LOCALES)) },
  { keys: SETTINGS_KEYS.localizedAttributeRule, required: SETTINGS_REQUIRED.localizedAttributeRule },
);

const minWordSizeForTypos = struct<MinWordSizeForTyposPatch>(
  { oneTypo: nullable(u8), twoTypos: nullable(u8) },
  {
    keys: SETTINGS_KEYS.minWordSizeForTypos,
    validate: ({ oneTypo, twoTypos }, loc) => {
      if (typeof oneTypo === 'number' && typeof twoTypos === 'number' && oneTypo > twoTypos) {
        throw invalidValue(minWordSizeMessage(oneTypo, twoTypos), loc);
      }
    },
  },
);

const typoTolerance = struct<TypoTolerancePatch>(
  {
    enabled: nullable(boolean),
    minWordSizeForTypos: nullable(minWordSizeForTypos),
    disableOnWords: nullable(btreeSet),
    disableOnAttributes: nullable(btreeSet),
    disableOnNumbers: nullable(boolean),
  },
  { keys: SETTINGS_KEYS.typoTolerance },
);

const faceting = struct<FacetingPatch>(
  {
    maxValuesPerFacet: nullable(u64),
    sortFacetValuesBy: nullable(btreeMap(oneOf(FACET_ORDERS))),
  },
  { keys: SETTINGS_KEYS.faceting },
);

const pagination = struct<PaginationPatch>({ maxTotalHits: nullable(nonZeroU64) }, { keys: SETTINGS_KEYS.pagination });

const distribution: Parser<Distribution> = (value, loc) => {
  const parsed = struct<Distribution>(
    { mean: float, sigma: float },
    { keys: SETTINGS_KEYS.distribution, required: SETTINGS_REQUIRED.distribution },
  )(value, loc);
  if (parsed.mean < 0 || parsed.mean > 1)
    throw invalidValue(`the distribution mean must be in the range [0, 1], got ${parsed.mean}`, loc);
  if (parsed.sigma <= 0 || parsed.sigma > 1)
    throw invalidValue(`the distribution sigma must be in the range ]0, 1], got ${parsed.sigma}`, loc);
  return parsed;
};

const fragments: Parser<Record<string, Fragment | null>> = btreeMap(
  nullable(
    struct<Fragment>(
      { value: json },
      { keys: SETTINGS_KEYS.fragment, required: SETTINGS_REQUIRED.fragment, allowUnknown: true },
    ),
  ),
);

const subEmbedder = struct<SubEmbedderPatch>(
  {
    source: nullable(oneOf(EMBEDDER_SOURCES)),
    model: nullable(string),
    revision: nullable(string),
    pooling: nullable(oneOf(POOLINGS)),
    apiKey: nullable(string),
    dimensions: nullable(u64),
    documentTemplate: nullable(string),
    documentTemplateMaxBytes: nullable(u64),
    url: nullable(string),
    indexingFragments: nullable(fragments),
    searchFragments: nullable(fragments),
    request: nullable(json),
    response: nullable(json),
    headers: nullable(btreeMap(string)),
    distribution: nullable(distribution),
    binaryQuantized: nullable(boolean),
    searchEmbedder: nullable(json),
    indexingEmbedder: nullable(json),
  },
  { keys: SETTINGS_KEYS.subEmbedder },
);

/**
 * One embedder: field names and value types are checked, the configuration is stored as sent.
 * The per-source rules (which fields each source allows or requires) come with vector search.
 */
const embedder = struct<EmbedderPatch>(
  {
    source: nullable(oneOf(EMBEDDER_SOURCES)),
    model: nullable(string),
    revision: nullable(string),
    pooling: nullable(oneOf(POOLINGS)),
    apiKey: nullable(string),
    dimensions: nullable(u64),
    binaryQuantized: nullable(boolean),
    documentTemplate: nullable(string),
    documentTemplateMaxBytes: nullable(u64),
    url: nullable(string),
    indexingFragments: nullable(fragments),
    searchFragments: nullable(fragments),
    request: nullable(json),
    response: nullable(json),
    headers: nullable(btreeMap(string)),
    searchEmbedder: nullable(subEmbedder),
    indexingEmbedder: nullable(subEmbedder),
    distribution: nullable(distribution),
  },
  { keys: SETTINGS_KEYS.embedder },
);

const ratio = (name: string): Parser<number> =>
  refine(float, (n) =>
    n < 0 || n > 1 ? `the value of \`${name}\` is invalid, expected a float between \`0.0\` and \`1.0\`.` : null,
  );

const chatHybrid = struct<ChatHybrid>(
  { semanticRatio: ratio('semanticRatio'), embedder: string },
  {
    keys: SETTINGS_KEYS.chatHybrid,
    required: SETTINGS_REQUIRED.chatHybrid,
    defaults: { semanticRatio: () => SETTINGS_DEFAULTS.semanticRatio },
  },
);

const chatSearchParameters = struct<ChatSearchParametersPatch>(
  {
    hybrid: nullable(chatHybrid),
    limit: nullable(u64),
    sort: nullable(arrayOf(string)),
    distinct: nullable(string),
    matchingStrategy: nullable(oneOf(MATCHING_STRATEGIES)),
    attributesToSearchOn: nullable(arrayOf(string)),
    rankingScoreThreshold: nullable(ratio('rankingScoreThreshold')),
  },
  { keys: SETTINGS_KEYS.chatSearchParameters },
);

const chat = struct<ChatPatch>(
  {
    description: nullable(string),
    documentTemplate: nullable(string),
    documentTemplateMaxBytes: nullable(u64),
    searchParameters: nullable(chatSearchParameters),
  },
  { keys: SETTINGS_KEYS.chat },
);

// ---------------------------------------------------------------------------------------------
// Top-level fields

type FieldRule<K extends SettingsField> = {
  /** The error code of anything wrong inside this setting. */
  code: string;
  /** Parses a non-null value. */
  parse: Parser<NonNullable<SettingsPatch[K]>>;
};

const FIELD_RULES: { [K in SettingsField]: FieldRule<K> } = {
  displayedAttributes: { code: 'invalid_settings_displayed_attributes', parse: arrayOf(string) },
  searchableAttributes: { code: 'invalid_settings_searchable_attributes', parse: arrayOf(string) },
  filterableAttributes: { code: 'invalid_settings_filterable_attributes', parse: arrayOf(filterableAttributeRule) },
  sortableAttributes: { code: 'invalid_settings_sortable_attributes', parse: btreeSet },
  foreignKeys: { code: 'invalid_settings_foreign_keys', parse: arrayOf(foreignKey) },
  rankingRules: { code: 'invalid_settings_ranking_rules', parse: arrayOf(rankingRule) },
  stopWords: { code: 'invalid_settings_stop_words', parse: btreeSet },
  nonSeparatorTokens: { code: 'invalid_settings_non_separator_tokens', parse: btreeSet },
  separatorTokens: { code: 'invalid_settings_separator_tokens', parse: btreeSet },
  dictionary: { code: 'invalid_settings_dictionary', parse: btreeSet },
  synonyms: { code: 'invalid_settings_synonyms', parse: btreeMap(arrayOf(string)) },
  distinctAttribute: { code: 'invalid_settings_distinct_attribute', parse: string },
  proximityPrecision: { code: 'invalid_settings_proximity_precision', parse: oneOf(PROXIMITY_PRECISIONS) },
  typoTolerance: { code: 'invalid_settings_typo_tolerance', parse: typoTolerance },
  faceting: { code: 'invalid_settings_faceting', parse: faceting },
  pagination: { code: 'invalid_settings_pagination', parse: pagination },
  embedders: { code: 'invalid_settings_embedders', parse: btreeMap(nullable(embedder)) },
  searchCutoffMs: { code: 'invalid_settings_search_cutoff_ms', parse: u64 },
  localizedAttributes: { code: 'invalid_settings_localized_attributes', parse: arrayOf(localizedAttributeRule) },
  facetSearch: { code: 'invalid_settings_facet_search', parse: boolean },
  prefixSearch: { code: 'invalid_settings_prefix_search', parse: oneOf(PREFIX_SEARCHES) },
  chat: { code: 'invalid_settings_index_chat', parse: chat },
};

/** The error code of a setting (e.g. `invalid_settings_ranking_rules`). */
export function settingErrorCode(field: SettingsField): string {
  return FIELD_RULES[field].code;
}

export function isSettingsField(name: string): name is SettingsField {
  return (SETTINGS_FIELDS as readonly string[]).includes(name);
}

/** Parses one setting's value (null = reset) at `loc`, with that setting's error code. */
function parseField<K extends SettingsField>(field: K, value: unknown, loc: Loc): SettingsPatch[K] {
  if (value === null || value === undefined) return null;
  try {
    return FIELD_RULES[field].parse(value, loc);
  } catch (err) {
    if (err instanceof DeserrError) throw new ApiError(FIELD_RULES[field].code, err.message);
    throw err;
  }
}

function assignField<K extends SettingsField>(patch: SettingsPatch, field: K, value: SettingsPatch[K]): void {
  patch[field] = value;
}

// ---------------------------------------------------------------------------------------------
// Whole-update checks

function featureError(action: string, feature: string, link: string): ApiError {
  return new ApiError(
    'feature_not_enabled',
    `${action} requires enabling the \`${feature}\` experimental feature. See ${link}`,
  );
}

const COMPOSITE_LINK = 'https://github.com/orgs/meilisearch/discussions/816';
const MULTIMODAL_LINK = 'https://github.com/orgs/meilisearch/discussions/846';

/** Meilisearch's `validate_settings`: features first, then the ranking rules mix. */
function validatePatch(patch: SettingsPatch, features: SettingsFeatures | undefined): void {
  if (features) {
    for (const config of Object.values(patch.embedders ?? {})) {
      if (!config) continue;
      if (config.source === 'composite' && !features.compositeEmbedders) {
        throw featureError('using `"composite"` as source', 'composite embedders', COMPOSITE_LINK);
      }
      if (config.searchEmbedder && !features.compositeEmbedders)
        throw featureError('setting `searchEmbedder`', 'composite embedders', COMPOSITE_LINK);
      if (config.indexingEmbedder && !features.compositeEmbedders)
        throw featureError('setting `indexingEmbedder`', 'composite embedders', COMPOSITE_LINK);
      if (config.indexingFragments && !features.multimodal)
        throw featureError('setting `indexingFragments`', 'multimodal', MULTIMODAL_LINK);
      if (config.searchFragments && !features.multimodal)
        throw featureError('setting `searchFragments`', 'multimodal', MULTIMODAL_LINK);
    }
    if (patch.chat && !features.chatCompletions) {
      throw featureError(
        'setting `chat` in the index settings',
        'chat completions',
        'https://github.com/orgs/meilisearch/discussions/835',
      );
    }
    if (patch.foreignKeys && !features.foreignKeys) {
      throw featureError(
        'setting `foreignKeys` in the index settings',
        'foreign_keys',
        'https://github.com/orgs/meilisearch/discussions/873',
      );
    }
  }
  for (const [name, config] of Object.entries(patch.embedders ?? {})) {
    if (config) checkEmbedder(name, config);
  }
  const rules = patch.rankingRules;
  if (rules?.includes('attribute') && rules.some((r) => r === 'attributeRank' || r === 'wordPosition')) {
    throw new ApiError('invalid_settings_ranking_rules', MIXED_ATTRIBUTE_RULES);
  }
}

// ---------------------------------------------------------------------------------------------
// Entry points

/**
 * The body of `PATCH /indexes/{uid}/settings`. Pass `features` to enforce the experimental
 * features (`chat`, `foreignKeys`, composite embedders, fragments) as Meilisearch does.
 */
export function parseSettingsBody(body: unknown, features?: SettingsFeatures): SettingsPatch {
  if (!isObject(body)) throw new ApiError('bad_request', incorrectType(body, ['object'], []).message);
  const given = new Map<SettingsField, SettingsPatch[SettingsField]>();
  for (const key of Object.keys(body)) {
    if (!isSettingsField(key)) throw new ApiError('bad_request', unknownField(key, SETTINGS_FIELDS, []).message);
    given.set(key, parseField(key, body[key], [key]));
  }
  const patch: SettingsPatch = {};
  for (const field of SETTINGS_FIELDS) if (given.has(field)) assignField(patch, field, given.get(field));
  validatePatch(patch, features);
  return patch;
}

/**
 * The body of a sub-route update (`PUT /settings/ranking-rules`, `PATCH /settings/faceting`...):
 * the value of that one setting, `null` resetting it. Errors are located at the root.
 */
export function parseSubrouteBody(field: SettingsField, body: unknown, features?: SettingsFeatures): SettingsPatch {
  const patch: SettingsPatch = {};
  assignField(patch, field, parseField(field, body, []));
  validatePatch(patch, features);
  return patch;
}
