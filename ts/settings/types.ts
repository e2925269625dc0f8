/**
 * The shapes of index settings: `Settings` is the full object as stored and as Meilisearch
 * returns it from `GET /indexes/{uid}/settings` (every field present, in Meilisearch's key
 * order); `SettingsPatch` is a validated update where an absent field is left alone, `null`
 * resets a field to its default, and nested objects are partial (PATCH semantics).
 *
 * These are `type` aliases rather than interfaces so that a patch can travel as a plain
 * `Record<string, unknown>` in task payloads.
 */

export type ProximityPrecision = 'byWord' | 'byAttribute';
export type PrefixSearch = 'indexingTime' | 'disabled';
export type FacetOrder = 'alpha' | 'count';
export type MatchingStrategy = 'last' | 'all' | 'frequency';
export type EmbedderSource = 'openAi' | 'huggingFace' | 'ollama' | 'userProvided' | 'rest' | 'composite';
export type Pooling = 'useModel' | 'forceCls' | 'forceMean';

/** `{ attributePatterns, features }`, the granular form of a filterable attribute. */
export type FilterableAttributePattern = {
  attributePatterns: string[];
  features: {
    facetSearch: boolean;
    filter: { equality: boolean; comparison: boolean };
  };
};

/** A plain attribute name (legacy form: every feature on) or a pattern rule. */
export type FilterableAttributeRule = string | FilterableAttributePattern;

export type TypoTolerance = {
  enabled: boolean;
  minWordSizeForTypos: { oneTypo: number; twoTypos: number };
  disableOnWords: string[];
  disableOnAttributes: string[];
  disableOnNumbers: boolean;
};

export type Faceting = {
  maxValuesPerFacet: number;
  sortFacetValuesBy: Record<string, FacetOrder>;
};

export type Pagination = { maxTotalHits: number };

export type LocalizedAttributeRule = { attributePatterns: string[]; locales: string[] };

export type ForeignKey = { foreignIndexUid: string; fieldName: string };

export type Distribution = { mean: number; sigma: number };

export type Fragment = { value: unknown };

/** A nested embedder of a `composite` one: stored as sent, minus the fields sent as null. */
export type SubEmbedder = {
  source?: EmbedderSource;
  model?: string;
  revision?: string;
  pooling?: Pooling;
  apiKey?: string;
  dimensions?: number;
  documentTemplate?: string;
  documentTemplateMaxBytes?: number;
  url?: string;
  indexingFragments?: Record<string, Fragment | null>;
  searchFragments?: Record<string, Fragment | null>;
  request?: unknown;
  response?: unknown;
  headers?: Record<string, string>;
  distribution?: Distribution;
  binaryQuantized?: boolean;
  searchEmbedder?: unknown;
  indexingEmbedder?: unknown;
};

/** One embedder configuration, stored as sent (vector search comes later). */
export type Embedder = {
  source?: EmbedderSource;
  model?: string;
  revision?: string;
  pooling?: Pooling;
  apiKey?: string;
  dimensions?: number;
  binaryQuantized?: boolean;
  documentTemplate?: string;
  documentTemplateMaxBytes?: number;
  url?: string;
  indexingFragments?: Record<string, Fragment | null>;
  searchFragments?: Record<string, Fragment | null>;
  request?: unknown;
  response?: unknown;
  headers?: Record<string, string>;
  searchEmbedder?: SubEmbedder;
  indexingEmbedder?: SubEmbedder;
  distribution?: Distribution;
};

export type ChatHybrid = { semanticRatio: number; embedder: string };

export type ChatSearchParameters = {
  hybrid?: ChatHybrid;
  limit?: number;
  sort?: string[];
  distinct?: string;
  matchingStrategy?: MatchingStrategy;
  attributesToSearchOn?: string[];
  rankingScoreThreshold?: number;
};

export type ChatSettings = {
  description: string;
  documentTemplate: string;
  documentTemplateMaxBytes: number;
  searchParameters: ChatSearchParameters;
};

/** The full settings object, keys in Meilisearch's order. */
export type Settings = {
  displayedAttributes: string[];
  searchableAttributes: string[];
  filterableAttributes: FilterableAttributeRule[];
  sortableAttributes: string[];
  foreignKeys: ForeignKey[];
  rankingRules: string[];
  stopWords: string[];
  nonSeparatorTokens: string[];
  separatorTokens: string[];
  dictionary: string[];
  synonyms: Record<string, string[]>;
  distinctAttribute: string | null;
  proximityPrecision: ProximityPrecision;
  typoTolerance: TypoTolerance;
  faceting: Faceting;
  pagination: Pagination;
  embedders: Record<string, Embedder>;
  searchCutoffMs: number | null;
  localizedAttributes: LocalizedAttributeRule[] | null;
  facetSearch: boolean;
  prefixSearch: PrefixSearch;
  chat: ChatSettings;
};

export type SettingsField = keyof Settings;

/** Every field of T may be absent (unchanged) or null (reset). */
type Resettable<T> = { [K in keyof T]?: T[K] | null };

export type MinWordSizeForTyposPatch = Resettable<TypoTolerance['minWordSizeForTypos']>;

export type TypoTolerancePatch = {
  enabled?: boolean | null;
  minWordSizeForTypos?: MinWordSizeForTyposPatch | null;
  disableOnWords?: string[] | null;
  disableOnAttributes?: string[] | null;
  disableOnNumbers?: boolean | null;
};

export type FacetingPatch = Resettable<Faceting>;
export type PaginationPatch = Resettable<Pagination>;
export type SubEmbedderPatch = Resettable<SubEmbedder>;
export type EmbedderPatch = Resettable<Omit<Embedder, 'searchEmbedder' | 'indexingEmbedder'>> & {
  searchEmbedder?: SubEmbedderPatch | null;
  indexingEmbedder?: SubEmbedderPatch | null;
};
export type ChatSearchParametersPatch = Resettable<ChatSearchParameters>;
export type ChatPatch = Resettable<Omit<ChatSettings, 'searchParameters'>> & {
  searchParameters?: ChatSearchParametersPatch | null;
};

/** A validated update: absent = unchanged, null = reset to default, objects partial. */
export type SettingsPatch = {
  displayedAttributes?: string[] | null;
  searchableAttributes?: string[] | null;
  filterableAttributes?: FilterableAttributeRule[] | null;
  sortableAttributes?: string[] | null;
  foreignKeys?: ForeignKey[] | null;
  rankingRules?: string[] | null;
  stopWords?: string[] | null;
  nonSeparatorTokens?: string[] | null;
  separatorTokens?: string[] | null;
  dictionary?: string[] | null;
  synonyms?: Record<string, string[]> | null;
  distinctAttribute?: string | null;
  proximityPrecision?: ProximityPrecision | null;
  typoTolerance?: TypoTolerancePatch | null;
  faceting?: FacetingPatch | null;
  pagination?: PaginationPatch | null;
  /** Embedder name → its partial configuration, or null to remove that embedder. */
  embedders?: Record<string, EmbedderPatch | null> | null;
  searchCutoffMs?: number | null;
  localizedAttributes?: LocalizedAttributeRule[] | null;
  facetSearch?: boolean | null;
  prefixSearch?: PrefixSearch | null;
  chat?: ChatPatch | null;
};

/** The experimental features that change what settings routes accept or show. */
export type SettingsFeatures = Partial<
  Record<'chatCompletions' | 'foreignKeys' | 'compositeEmbedders' | 'multimodal', boolean>
>;
