/**
 * The fixed vocabularies of index settings that request validation needs: the order of the
 * fields and the enumerations of each setting (generated from the engine's types, see
 * `settings.generated.ts`), the ranking rule names and the locales (the engine's table, read
 * through the binding). Default values live in the engine (`crates/engine/src/settings/`),
 * never here.
 */
import { settingsLocales } from '../native';
import { SETTINGS_KEYS, SETTINGS_VALUES } from './settings.generated';
import type { SettingsField } from './types';

/** Every settings field, in the order Meilisearch serializes (and lists) them. */
export const SETTINGS_FIELDS: readonly SettingsField[] = SETTINGS_KEYS.settings;

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

export const PROXIMITY_PRECISIONS = SETTINGS_VALUES.proximityPrecision;
export const PREFIX_SEARCHES = SETTINGS_VALUES.prefixSearch;
export const FACET_ORDERS = SETTINGS_VALUES.facetOrder;
export const MATCHING_STRATEGIES = SETTINGS_VALUES.matchingStrategy;
export const EMBEDDER_SOURCES = SETTINGS_VALUES.embedderSource;
export const POOLINGS = SETTINGS_VALUES.pooling;

/** `[twoLetter, threeLetter]` pairs, then `[cmn]` (no two-letter form), in Meilisearch's order. */
const LOCALE_ROWS = settingsLocales();

/** Accepted locale codes in the order deserr lists them: two-letter, three-letter, `cmn`. */
export const LOCALES: readonly string[] = [
  ...LOCALE_ROWS.filter((r) => r.length === 2).map(([two]) => two),
  ...LOCALE_ROWS.map((r) => r[r.length - 1]),
];
