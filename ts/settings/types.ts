/**
 * The shapes of index settings, generated from the engine's types
 * (`crates/engine/src/settings/`, written to `settings.generated.ts` by
 * `crates/node/tests/shapes.rs`): `Settings` is the full object as stored and as Meilisearch
 * returns it from `GET /indexes/{uid}/settings` (every field present, in Meilisearch's key
 * order); `SettingsPatch` is a validated update where an absent field is left alone, `null`
 * resets a field to its default, and nested objects are partial (PATCH semantics).
 *
 * No settings shape is declared here: change the Rust type and regenerate
 * (`QUARRY_WRITE_SHAPES=1 cargo test -p quarry-node --test shapes`).
 */
import type { Settings } from './settings.generated';

export type {
  ChatHybrid,
  ChatPatch,
  ChatSearchParameters,
  ChatSearchParametersPatch,
  ChatSettings,
  Distribution,
  Embedder,
  EmbedderPatch,
  EmbedderSource,
  FacetOrder,
  Faceting,
  FacetingPatch,
  FilterableAttributePattern,
  FilterableAttributeRule,
  FilterableFeatures,
  FilterFeatures,
  ForeignKey,
  Fragment,
  LocalizedAttributeRule,
  MatchingStrategy,
  MinWordSizeForTypos,
  MinWordSizeForTyposPatch,
  Pagination,
  PaginationPatch,
  Pooling,
  PrefixSearch,
  ProximityPrecision,
  Settings,
  SettingsPatch,
  SubEmbedder,
  SubEmbedderPatch,
  TypoTolerance,
  TypoTolerancePatch,
} from './settings.generated';

export type SettingsField = keyof Settings;

/** The experimental features that change what settings routes accept or show. */
export type SettingsFeatures = Partial<
  Record<'chatCompletions' | 'foreignKeys' | 'compositeEmbedders' | 'multimodal', boolean>
>;
