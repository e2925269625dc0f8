/**
 * Default values and fixed vocabularies of index settings: the default object Meilisearch
 * 1.50 returns for a fresh index, the order of its keys, and the enumerations the validators
 * accept (ranking rule names, locales, embedder sources...).
 */
import type { ChatSettings, Settings, SettingsField, TypoTolerance } from './types';

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

export const DEFAULT_RANKING_RULES: readonly string[] = ['words', 'typo', 'proximity', 'attributeRank', 'sort', 'wordPosition', 'exactness'];

/** The built-in ranking rule names; anything else must be `<attribute>:asc|desc`. */
export const BUILT_IN_RANKING_RULES: readonly string[] = ['words', 'typo', 'proximity', 'attribute', 'attributeRank', 'wordPosition', 'sort', 'exactness'];

export const DEFAULT_MAX_VALUES_PER_FACET = 100;
export const DEFAULT_MAX_TOTAL_HITS = 1000;
export const DEFAULT_ONE_TYPO = 5;
export const DEFAULT_TWO_TYPOS = 9;
export const DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES = 400;

/** The document template used when none is configured (embedders and chat). */
export const DEFAULT_DOCUMENT_TEMPLATE =
  '{% for field in fields %}{% if field.is_searchable and field.value != nil %}{{ field.name }}: {{ field.value }}\n{% endif %}{% endfor %}';

export const PROXIMITY_PRECISIONS = ['byWord', 'byAttribute'] as const;
export const PREFIX_SEARCHES = ['indexingTime', 'disabled'] as const;
export const FACET_ORDERS = ['alpha', 'count'] as const;
export const MATCHING_STRATEGIES = ['last', 'all', 'frequency'] as const;
export const EMBEDDER_SOURCES = ['openAi', 'huggingFace', 'ollama', 'userProvided', 'rest', 'composite'] as const;
export const POOLINGS = ['useModel', 'forceCls', 'forceMean'] as const;

/**
 * Supported locales as [two-letter, three-letter] pairs, in Meilisearch's order. A two-letter
 * code is accepted and stored as its three-letter equivalent; `cmn` stands alone.
 */
const LOCALE_PAIRS: ReadonlyArray<readonly [string, string]> = [
  ['af', 'afr'], ['ak', 'aka'], ['am', 'amh'], ['ar', 'ara'], ['az', 'aze'], ['be', 'bel'], ['bn', 'ben'],
  ['bg', 'bul'], ['ca', 'cat'], ['cs', 'ces'], ['da', 'dan'], ['de', 'deu'], ['el', 'ell'], ['en', 'eng'],
  ['eo', 'epo'], ['et', 'est'], ['fi', 'fin'], ['fr', 'fra'], ['gu', 'guj'], ['he', 'heb'], ['hi', 'hin'],
  ['hr', 'hrv'], ['hu', 'hun'], ['hy', 'hye'], ['id', 'ind'], ['it', 'ita'], ['jv', 'jav'], ['ja', 'jpn'],
  ['kn', 'kan'], ['ka', 'kat'], ['km', 'khm'], ['ko', 'kor'], ['la', 'lat'], ['lv', 'lav'], ['lt', 'lit'],
  ['ml', 'mal'], ['mr', 'mar'], ['mk', 'mkd'], ['my', 'mya'], ['ne', 'nep'], ['nl', 'nld'], ['nb', 'nob'],
  ['or', 'ori'], ['pa', 'pan'], ['fa', 'pes'], ['pl', 'pol'], ['pt', 'por'], ['ro', 'ron'], ['ru', 'rus'],
  ['si', 'sin'], ['sk', 'slk'], ['sl', 'slv'], ['sn', 'sna'], ['es', 'spa'], ['sr', 'srp'], ['sv', 'swe'],
  ['ta', 'tam'], ['te', 'tel'], ['tl', 'tgl'], ['th', 'tha'], ['tk', 'tuk'], ['tr', 'tur'], ['uk', 'ukr'],
  ['ur', 'urd'], ['uz', 'uzb'], ['vi', 'vie'], ['yi', 'yid'], ['zh', 'zho'], ['zu', 'zul'],
];

/** Accepted locale codes in the order deserr lists them: two-letter, three-letter, `cmn`. */
export const LOCALES: readonly string[] = [...LOCALE_PAIRS.map(([two]) => two), ...LOCALE_PAIRS.map(([, three]) => three), 'cmn'];

const THREE_LETTER_LOCALE = new Map<string, string>(LOCALE_PAIRS.map(([two, three]) => [two, three]));

/** The code a locale is stored (and returned) as. */
export function canonicalLocale(code: string): string {
  return THREE_LETTER_LOCALE.get(code) ?? code;
}

export function defaultTypoTolerance(): TypoTolerance {
  return {
    enabled: true,
    minWordSizeForTypos: { oneTypo: DEFAULT_ONE_TYPO, twoTypos: DEFAULT_TWO_TYPOS },
    disableOnWords: [],
    disableOnAttributes: [],
    disableOnNumbers: false,
  };
}

export function defaultChat(): ChatSettings {
  return {
    description: '',
    documentTemplate: DEFAULT_DOCUMENT_TEMPLATE,
    documentTemplateMaxBytes: DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES,
    searchParameters: {},
  };
}

/** A fresh default settings object (nothing shared between calls). */
export function defaultSettings(): Settings {
  return {
    displayedAttributes: ['*'],
    searchableAttributes: ['*'],
    filterableAttributes: [],
    sortableAttributes: [],
    foreignKeys: [],
    rankingRules: [...DEFAULT_RANKING_RULES],
    stopWords: [],
    nonSeparatorTokens: [],
    separatorTokens: [],
    dictionary: [],
    synonyms: {},
    distinctAttribute: null,
    proximityPrecision: 'byWord',
    typoTolerance: defaultTypoTolerance(),
    faceting: { maxValuesPerFacet: DEFAULT_MAX_VALUES_PER_FACET, sortFacetValuesBy: { '*': 'alpha' } },
    pagination: { maxTotalHits: DEFAULT_MAX_TOTAL_HITS },
    embedders: {},
    searchCutoffMs: null,
    localizedAttributes: null,
    facetSearch: true,
    prefixSearch: 'indexingTime',
    chat: defaultChat(),
  };
}
