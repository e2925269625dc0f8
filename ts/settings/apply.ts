/**
 * Applying a validated patch to the stored settings, as the settings task does when it runs.
 *
 * null resets a field (or a nested field) to its default; nested objects are merged field by
 * field (typoTolerance, its minWordSizeForTypos, faceting, pagination, each embedder, chat and
 * its searchParameters); `sortFacetValuesBy` and lists are replaced. Normalizations follow
 * Meilisearch: `*` anywhere in displayed/searchable attributes means all (`["*"]`), those two
 * lists drop repeated names, sets (sortable attributes, stop words, tokens, dictionary, typo
 * exceptions) come back sorted and deduplicated, maps are sorted by key, locales are stored
 * as their three-letter code, `sortFacetValuesBy` always keeps a `*` entry.
 */
import { ApiError } from '../errors/api-error';
import { canonicalLocale, DEFAULT_DOCUMENT_TEMPLATE, DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES, defaultSettings, SETTINGS_FIELDS } from './defaults';
import { setEntry, sortedRecord, sortedSet } from './deserr';
import type {
  ChatPatch,
  ChatSearchParameters,
  ChatSearchParametersPatch,
  ChatSettings,
  Embedder,
  EmbedderPatch,
  Faceting,
  FacetingPatch,
  FacetOrder,
  Settings,
  SettingsField,
  SettingsPatch,
  TypoTolerance,
  TypoTolerancePatch,
} from './types';
import { minWordSizeMessage } from './validate';

/** The patch a DELETE produces: every setting reset, or just `field`. */
export function resetPatch(field?: SettingsField): SettingsPatch {
  const patch: SettingsPatch = {};
  for (const f of field ? [field] : SETTINGS_FIELDS) patch[f] = null;
  return patch;
}

/** Deep copy of plain JSON data. */
function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/**
 * A complete settings object from a stored one, which may predate some fields: missing
 * fields (and missing parts of nested objects) take their defaults.
 */
export function completeSettings(stored: Partial<Settings> | null | undefined): Settings {
  const base = defaultSettings();
  if (!stored) return base;
  const s = clone(stored);
  const typo = { ...base.typoTolerance, ...s.typoTolerance };
  typo.minWordSizeForTypos = { ...base.typoTolerance.minWordSizeForTypos, ...s.typoTolerance?.minWordSizeForTypos };
  return {
    ...base,
    ...s,
    typoTolerance: typo,
    faceting: { ...base.faceting, ...s.faceting },
    pagination: { ...base.pagination, ...s.pagination },
    chat: { ...base.chat, ...s.chat },
  };
}

/** Meilisearch stores displayed/searchable attributes without repeats; `*` means all. */
function wildcardList(names: string[]): string[] {
  return names.includes('*') ? ['*'] : [...new Set(names)];
}

/** The resetting merge of one optional value: undefined keeps, null resets, else replaces. */
function pick<T>(patch: T | null | undefined, current: T, fallback: T): T {
  if (patch === undefined) return current;
  return patch === null ? fallback : patch;
}

function applyTypoTolerance(current: TypoTolerance, patch: TypoTolerancePatch | null): TypoTolerance {
  const d = defaultSettings().typoTolerance;
  if (patch === null) return d;
  const words = patch.minWordSizeForTypos;
  const minWordSizeForTypos =
    words === undefined
      ? current.minWordSizeForTypos
      : words === null
        ? d.minWordSizeForTypos
        : {
            oneTypo: pick(words.oneTypo, current.minWordSizeForTypos.oneTypo, d.minWordSizeForTypos.oneTypo),
            twoTypos: pick(words.twoTypos, current.minWordSizeForTypos.twoTypos, d.minWordSizeForTypos.twoTypos),
          };
  // Checked when the update runs, against the current value of the field not sent.
  if (minWordSizeForTypos.oneTypo > minWordSizeForTypos.twoTypos) {
    throw new ApiError('invalid_settings_typo_tolerance', minWordSizeMessage(minWordSizeForTypos.oneTypo, minWordSizeForTypos.twoTypos));
  }
  return {
    enabled: pick(patch.enabled, current.enabled, d.enabled),
    minWordSizeForTypos,
    disableOnWords: sortedSet(pick(patch.disableOnWords, current.disableOnWords, d.disableOnWords)),
    disableOnAttributes: sortedSet(pick(patch.disableOnAttributes, current.disableOnAttributes, d.disableOnAttributes)),
    disableOnNumbers: pick(patch.disableOnNumbers, current.disableOnNumbers, d.disableOnNumbers),
  };
}

function applyFaceting(current: Faceting, patch: FacetingPatch | null): Faceting {
  const d = defaultSettings().faceting;
  if (patch === null) return d;
  let sortFacetValuesBy = pick(patch.sortFacetValuesBy, current.sortFacetValuesBy, d.sortFacetValuesBy);
  if (!('*' in sortFacetValuesBy)) sortFacetValuesBy = { ...sortFacetValuesBy, '*': 'alpha' as FacetOrder };
  return {
    maxValuesPerFacet: pick(patch.maxValuesPerFacet, current.maxValuesPerFacet, d.maxValuesPerFacet),
    sortFacetValuesBy: sortedRecord(sortFacetValuesBy),
  };
}

/** Fields that no longer apply once an embedder changes source (its new source's defaults apply). */
const SOURCE_SPECIFIC_FIELDS: (keyof Embedder)[] = [
  'model',
  'revision',
  'pooling',
  'dimensions',
  'url',
  'indexingFragments',
  'searchFragments',
  'request',
  'response',
  'headers',
  'searchEmbedder',
  'indexingEmbedder',
];

const EMBEDDER_FIELD_ORDER: (keyof Embedder)[] = [
  'source',
  'model',
  'revision',
  'pooling',
  'apiKey',
  'dimensions',
  'binaryQuantized',
  'documentTemplate',
  'documentTemplateMaxBytes',
  'url',
  'indexingFragments',
  'searchFragments',
  'request',
  'response',
  'headers',
  'searchEmbedder',
  'indexingEmbedder',
  'distribution',
];

/** Drops the fields sent as null (in nested objects too: a sub-embedder is stored as sent). */
function withoutNulls(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = v;
  return out;
}

/** One embedder: an update merges into the existing configuration field by field. */
function applyEmbedder(current: Embedder | undefined, patch: EmbedderPatch): Embedder {
  const merged: Record<string, unknown> = { ...current };
  if (current && patch.source && patch.source !== current.source) {
    for (const f of SOURCE_SPECIFIC_FIELDS) delete merged[f];
    if (patch.source === 'userProvided' || patch.source === 'composite') {
      delete merged.documentTemplate;
      delete merged.documentTemplateMaxBytes;
    }
  }
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete merged[k];
    else if (v !== undefined) merged[k] = (k === 'searchEmbedder' || k === 'indexingEmbedder') ? withoutNulls(v as Record<string, unknown>) : v;
  }
  const ordered: Record<string, unknown> = {};
  for (const f of EMBEDDER_FIELD_ORDER) if (merged[f] !== undefined) ordered[f] = merged[f];
  return ordered as Embedder;
}

function applyEmbedders(current: Record<string, Embedder>, patch: Record<string, EmbedderPatch | null> | null): Record<string, Embedder> {
  if (patch === null) return {};
  const next: Record<string, Embedder> = { ...current };
  for (const [name, config] of Object.entries(patch)) {
    if (config === null) delete next[name];
    else setEntry(next, name, applyEmbedder(Object.hasOwn(current, name) ? current[name] : undefined, config));
  }
  return sortedRecord(next);
}

function applySearchParameters(current: ChatSearchParameters, patch: ChatSearchParametersPatch | null): ChatSearchParameters {
  if (patch === null) return {};
  const next: Record<string, unknown> = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete next[k];
    else if (v !== undefined) next[k] = v;
  }
  const order: (keyof ChatSearchParameters)[] = ['hybrid', 'limit', 'sort', 'distinct', 'matchingStrategy', 'attributesToSearchOn', 'rankingScoreThreshold'];
  const ordered: Record<string, unknown> = {};
  for (const k of order) if (next[k] !== undefined) ordered[k] = next[k];
  return ordered as ChatSearchParameters;
}

function applyChat(current: ChatSettings, patch: ChatPatch | null): ChatSettings {
  const d = defaultSettings().chat;
  if (patch === null) return d;
  const documentTemplateMaxBytes = pick(patch.documentTemplateMaxBytes, current.documentTemplateMaxBytes, DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES);
  if (documentTemplateMaxBytes === 0) {
    // Meilisearch files this engine error under the embedders code.
    throw new ApiError('invalid_settings_embedders', '`.chat.documentTemplateMaxBytes`: `documentTemplateMaxBytes` cannot be zero');
  }
  return {
    description: pick(patch.description, current.description, d.description),
    documentTemplate: pick(patch.documentTemplate, current.documentTemplate, DEFAULT_DOCUMENT_TEMPLATE),
    documentTemplateMaxBytes,
    searchParameters:
      patch.searchParameters === undefined ? current.searchParameters : applySearchParameters(current.searchParameters, patch.searchParameters),
  };
}

/**
 * The settings after `patch`. Throws `ApiError` for what can only be checked against the current
 * settings (oneTypo > twoTypos once merged); the task then fails with that error.
 */
export function applySettingsPatch(current: Settings, patch: SettingsPatch): Settings {
  const s = completeSettings(current);
  const d = defaultSettings();
  const p = clone(patch);
  const next: Settings = {
    displayedAttributes: p.displayedAttributes === undefined ? s.displayedAttributes : wildcardList(p.displayedAttributes ?? d.displayedAttributes),
    searchableAttributes: p.searchableAttributes === undefined ? s.searchableAttributes : wildcardList(p.searchableAttributes ?? d.searchableAttributes),
    filterableAttributes: pick(p.filterableAttributes, s.filterableAttributes, d.filterableAttributes),
    sortableAttributes: sortedSet(pick(p.sortableAttributes, s.sortableAttributes, d.sortableAttributes)),
    foreignKeys: pick(p.foreignKeys, s.foreignKeys, d.foreignKeys),
    rankingRules: pick(p.rankingRules, s.rankingRules, d.rankingRules),
    stopWords: sortedSet(pick(p.stopWords, s.stopWords, d.stopWords)),
    nonSeparatorTokens: sortedSet(pick(p.nonSeparatorTokens, s.nonSeparatorTokens, d.nonSeparatorTokens)),
    separatorTokens: sortedSet(pick(p.separatorTokens, s.separatorTokens, d.separatorTokens)),
    dictionary: sortedSet(pick(p.dictionary, s.dictionary, d.dictionary)),
    synonyms: sortedRecord(pick(p.synonyms, s.synonyms, d.synonyms)),
    distinctAttribute: pick(p.distinctAttribute, s.distinctAttribute, d.distinctAttribute),
    proximityPrecision: pick(p.proximityPrecision, s.proximityPrecision, d.proximityPrecision),
    typoTolerance: p.typoTolerance === undefined ? s.typoTolerance : applyTypoTolerance(s.typoTolerance, p.typoTolerance),
    faceting: p.faceting === undefined ? s.faceting : applyFaceting(s.faceting, p.faceting),
    pagination:
      p.pagination === undefined
        ? s.pagination
        : p.pagination === null
          ? d.pagination
          : { maxTotalHits: pick(p.pagination.maxTotalHits, s.pagination.maxTotalHits, d.pagination.maxTotalHits) },
    embedders: p.embedders === undefined ? s.embedders : applyEmbedders(s.embedders, p.embedders),
    searchCutoffMs: pick(p.searchCutoffMs, s.searchCutoffMs, d.searchCutoffMs),
    localizedAttributes:
      p.localizedAttributes === undefined
        ? s.localizedAttributes
        : p.localizedAttributes === null
          ? null
          : p.localizedAttributes.map((r) => ({ attributePatterns: r.attributePatterns, locales: r.locales.map(canonicalLocale) })),
    facetSearch: pick(p.facetSearch, s.facetSearch, d.facetSearch),
    prefixSearch: pick(p.prefixSearch, s.prefixSearch, d.prefixSearch),
    chat: p.chat === undefined ? s.chat : applyChat(s.chat, p.chat),
  };
  return next;
}
