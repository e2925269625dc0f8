/**
 * Index settings on the HTTP side: the shapes of the settings object and of an update,
 * validation of update bodies (whole object and sub-routes, first error only), the details a
 * settings task shows, and the sub-routes. The engine owns the rest (defaults, applying an
 * update when its task runs, the view `GET` returns: `crates/engine/src/settings/`). The shapes,
 * key orders, enumerations and the request's defaults are generated from the engine's types
 * (`settings.generated.ts`, see `types.ts`); the validators' messages and checks are written here.
 * Behaviour follows Meilisearch 1.50 (`GET/PATCH/DELETE /indexes/{uid}/settings` and one
 * sub-route per setting).
 */
import type { SettingsField } from './types';

export type {
  ChatSettings,
  Embedder,
  Faceting,
  FilterableAttributeRule,
  LocalizedAttributeRule,
  Pagination,
  Settings,
  SettingsFeatures,
  SettingsField,
  SettingsPatch,
  TypoTolerance,
} from './types';
export { SETTINGS_FIELDS } from './vocabulary';
export { parseSettingsBody, parseSubrouteBody, rankingRuleError, settingErrorCode } from './validate';
export { resetPatch, settingsTaskDetails } from './details';

export type SettingsSubroute = { route: string; field: SettingsField; method: 'put' | 'patch' };

/** `/indexes/{uid}/settings/<route>`: GET, the update verb below, DELETE (reset). */
export const SETTINGS_SUBROUTES: readonly SettingsSubroute[] = [
  { route: 'filterable-attributes', field: 'filterableAttributes', method: 'put' },
  { route: 'sortable-attributes', field: 'sortableAttributes', method: 'put' },
  { route: 'displayed-attributes', field: 'displayedAttributes', method: 'put' },
  { route: 'typo-tolerance', field: 'typoTolerance', method: 'patch' },
  { route: 'searchable-attributes', field: 'searchableAttributes', method: 'put' },
  { route: 'stop-words', field: 'stopWords', method: 'put' },
  { route: 'non-separator-tokens', field: 'nonSeparatorTokens', method: 'put' },
  { route: 'separator-tokens', field: 'separatorTokens', method: 'put' },
  { route: 'dictionary', field: 'dictionary', method: 'put' },
  { route: 'synonyms', field: 'synonyms', method: 'put' },
  { route: 'distinct-attribute', field: 'distinctAttribute', method: 'put' },
  { route: 'proximity-precision', field: 'proximityPrecision', method: 'put' },
  { route: 'localized-attributes', field: 'localizedAttributes', method: 'put' },
  { route: 'ranking-rules', field: 'rankingRules', method: 'put' },
  { route: 'faceting', field: 'faceting', method: 'patch' },
  { route: 'pagination', field: 'pagination', method: 'patch' },
  { route: 'embedders', field: 'embedders', method: 'patch' },
  { route: 'search-cutoff-ms', field: 'searchCutoffMs', method: 'put' },
  { route: 'facet-search', field: 'facetSearch', method: 'put' },
  { route: 'prefix-search', field: 'prefixSearch', method: 'put' },
  { route: 'chat', field: 'chat', method: 'patch' },
  { route: 'foreign-keys', field: 'foreignKeys', method: 'put' },
];
