/**
 * The fixed vocabularies of index settings that request validation needs: the order of the
 * fields, the ranking rule names, the enumerations of each setting and the locales (the
 * engine's table, read through the binding). Default values live in the engine
 * (`crates/engine/src/settings/`), never here.
 */
import { settingsLocales } from '../native';
import type { SettingsField } from './types';

/** Every settings field, in the order Meilisearch serializes (and lists) them. */
export const SETTINGS_FIELDS: readonly SettingsField[] = [
  'displayedAttributes',
  'searchableAttributes',
  'filterableAttributes',
  'sortableAttributes',
  'foreignKeys',
  'rankingRules',
  'stopWords',
  'nonSeparatorTokens',
  'separatorTokens',
  'dictionary',
  'synonyms',
  'distinctAttribute',
  'proximityPrecision',
  'typoTolerance',
  'faceting',
  'pagination',
  'embedders',
  'searchCutoffMs',
  'localizedAttributes',
  'facetSearch',
  'prefixSearch',
  'chat',
];

/** The built-in ranking rule names; anything else must be `<attribute>:asc|desc`. */
export const BUILT_IN_RANKING_RULES: readonly string[] = [
  'words',
  'typo',
  'proximity',
  'attribute',
  'attributeRank',
  'wordPosition',
  'sort',
  'exactness',
];

export const PROXIMITY_PRECISIONS = ['byWord', 'byAttribute'] as const;
export const PREFIX_SEARCHES = ['indexingTime', 'disabled'] as const;
export const FACET_ORDERS = ['alpha', 'count'] as const;
export const MATCHING_STRATEGIES = ['last', 'all', 'frequency'] as const;
export const EMBEDDER_SOURCES = ['openAi', 'huggingFace', 'ollama', 'userProvided', 'rest', 'composite'] as const;
export const POOLINGS = ['useModel', 'forceCls', 'forceMean'] as const;

/** `[twoLetter, threeLetter]` pairs, then `[cmn]` (no two-letter form), in Meilisearch's order. */
const LOCALE_ROWS = settingsLocales();

/** Accepted locale codes in the order deserr lists them: two-letter, three-letter, `cmn`. */
export const LOCALES: readonly string[] = [
  ...LOCALE_ROWS.filter((r) => r.length === 2).map(([two]) => two),
  ...LOCALE_ROWS.map((r) => r[r.length - 1]),
];
