//! Index settings, owned by the engine: the typed [`Settings`] object with its defaults
//! (defined here and nowhere else), the typed update [`SettingsPatch`] and how it applies
//! ([`Settings::apply`], in `patch.rs`), the JSON `GET /indexes/{uid}/settings` shows
//! ([`Settings::view`], in `view.rs`), and the tokenizer they configure
//! (`Settings::analyzer`, in `text.rs`). Behaviour follows Meilisearch 1.50.
//!
//! The HTTP layer only checks the shape of a request (types, known fields, the first error)
//! and forwards the patch; everything that depends on the current settings (merging nested
//! objects, resets, normalizations, checks across fields) happens when the settings task
//! runs, so several settings tasks of one batch compose.
//!
//! The stored form is the serialized [`Settings`]: every field, in Meilisearch's key order.
//! Objects stored by earlier versions may lack newer fields; the defaults fill them in.
//!
//! The engine reads settings only through this struct: every reader takes `&Settings` and
//! reads its fields or the methods below (defaults applied, `*` lists as `None`). The index
//! keeps the struct of its current generation in memory (`index/cache.rs`), so a search
//! parses no JSON; a batch reads the settings it has reached.
//!
//! Design decision: embedder configurations stay JSON objects (stored as sent, minus the
//! fields reset with null) inside the struct; `vectors::registry::configs` types them when
//! read. Everything else is typed.

mod locales;
mod patch;
mod shapes;
mod text;
mod view;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use locales::{canonical_locale, locales, LOCALE_PAIRS};
pub use patch::{
    min_word_size_message, ChatPatch, FacetingPatch, MinWordSizeForTyposPatch, PaginationPatch,
    Setting, SettingsPatch, TypoTolerancePatch,
};
#[cfg(feature = "ts")]
pub use shapes::Record;
pub use shapes::{
    serde_names, ChatHybrid, ChatSearchParameters, ChatSearchParametersPatch, Distribution,
    EmbedderPatch, EmbedderSettings, EmbedderSource, Fragment, MatchingStrategy, Pooling,
    SubEmbedderPatch, SubEmbedderSettings,
};
pub use view::hide_secret;

use crate::facets::FacetOrder;

/// The ranking rules of an index that never set them, in order.
pub const DEFAULT_RANKING_RULES: [&str; 7] = [
    "words",
    "typo",
    "proximity",
    "attributeRank",
    "sort",
    "wordPosition",
    "exactness",
];
/// `faceting.maxValuesPerFacet`.
pub const DEFAULT_MAX_VALUES_PER_FACET: u64 = 100;
/// `pagination.maxTotalHits`.
pub const DEFAULT_MAX_TOTAL_HITS: u64 = 1000;
/// `typoTolerance.minWordSizeForTypos.oneTypo`.
pub const DEFAULT_ONE_TYPO: u8 = 5;
/// `typoTolerance.minWordSizeForTypos.twoTypos`.
pub const DEFAULT_TWO_TYPOS: u8 = 9;
/// How long ranking may take when `searchCutoffMs` is null.
pub const DEFAULT_SEARCH_CUTOFF_MS: u64 = 1500;
/// `documentTemplateMaxBytes` of chat and of the embedders that render documents.
pub const DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES: u64 = 400;
/// The document template used when none is configured (embedders and chat).
pub const DEFAULT_DOCUMENT_TEMPLATE: &str = "{% for field in fields %}{% if field.is_searchable and field.value != nil %}{{ field.name }}: {{ field.value }}\n{% endif %}{% endfor %}";

/// Defaults of the search request's formatting parameters.
///
/// Note for the search request struct (`SearchQuery`, owned by the search pipeline): its
/// serde defaults should read these constants; the HTTP layer no longer fills them.
pub mod search_defaults {
    /// `cropLength`, in words.
    pub const CROP_LENGTH: usize = 10;
    /// `cropMarker`.
    pub const CROP_MARKER: &str = "…";
    /// `highlightPreTag`.
    pub const HIGHLIGHT_PRE_TAG: &str = "<em>";
    /// `highlightPostTag`.
    pub const HIGHLIGHT_POST_TAG: &str = "</em>";
}

/// Every settings field, in the order Meilisearch serializes (and lists) them.
pub const SETTINGS_FIELDS: [&str; 22] = [
    "displayedAttributes",
    "searchableAttributes",
    "filterableAttributes",
    "sortableAttributes",
    "foreignKeys",
    "rankingRules",
    "stopWords",
    "nonSeparatorTokens",
    "separatorTokens",
    "dictionary",
    "synonyms",
    "distinctAttribute",
    "proximityPrecision",
    "typoTolerance",
    "faceting",
    "pagination",
    "embedders",
    "searchCutoffMs",
    "localizedAttributes",
    "facetSearch",
    "prefixSearch",
    "chat",
];

/// The full settings of an index, fields in Meilisearch's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default)]
pub struct Settings {
    pub displayed_attributes: Vec<String>,
    pub searchable_attributes: Vec<String>,
    pub filterable_attributes: Vec<FilterableAttributeRule>,
    pub sortable_attributes: Vec<String>,
    pub foreign_keys: Vec<ForeignKey>,
    pub ranking_rules: Vec<String>,
    pub stop_words: Vec<String>,
    pub non_separator_tokens: Vec<String>,
    pub separator_tokens: Vec<String>,
    pub dictionary: Vec<String>,
    #[cfg_attr(feature = "ts", ts(as = "Record<Vec<String>>"))]
    pub synonyms: BTreeMap<String, Vec<String>>,
    pub distinct_attribute: Option<String>,
    pub proximity_precision: ProximityPrecision,
    pub typo_tolerance: TypoTolerance,
    pub faceting: Faceting,
    pub pagination: Pagination,
    /// Embedder name → its configuration as sent (see [`Embedder`]).
    #[cfg_attr(feature = "ts", ts(as = "Record<EmbedderSettings>"))]
    pub embedders: BTreeMap<String, Embedder>,
    #[serde(deserialize_with = "stored_opt_u64")]
    #[cfg_attr(feature = "ts", ts(as = "Option<usize>"))]
    pub search_cutoff_ms: Option<u64>,
    /// `None` (null) and an empty list differ on the wire.
    pub localized_attributes: Option<Vec<LocalizedAttributeRule>>,
    pub facet_search: bool,
    pub prefix_search: PrefixSearch,
    pub chat: ChatSettings,
}

impl Default for Settings {
    fn default() -> Self {
        let all = || vec!["*".to_string()];
        Settings {
            displayed_attributes: all(),
            searchable_attributes: all(),
            filterable_attributes: Vec::new(),
            sortable_attributes: Vec::new(),
            foreign_keys: Vec::new(),
            ranking_rules: DEFAULT_RANKING_RULES
                .iter()
                .map(|r| r.to_string())
                .collect(),
            stop_words: Vec::new(),
            non_separator_tokens: Vec::new(),
            separator_tokens: Vec::new(),
            dictionary: Vec::new(),
            synonyms: BTreeMap::new(),
            distinct_attribute: None,
            proximity_precision: ProximityPrecision::default(),
            typo_tolerance: TypoTolerance::default(),
            faceting: Faceting::default(),
            pagination: Pagination::default(),
            embedders: BTreeMap::new(),
            search_cutoff_ms: None,
            localized_attributes: None,
            facet_search: true,
            prefix_search: PrefixSearch::default(),
            chat: ChatSettings::default(),
        }
    }
}

/// A plain attribute name (every feature on) or a pattern rule.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FilterableAttributeRule {
    Name(String),
    Pattern(FilterableAttributePattern),
}

/// `{ attributePatterns, features }`, the granular form of a filterable attribute.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FilterableAttributePattern {
    pub attribute_patterns: Vec<String>,
    #[serde(default)]
    pub features: FilterableFeatures,
}

/// What a pattern rule enables; by default equality filters only.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct FilterableFeatures {
    pub facet_search: bool,
    /// Also read as `filters`, a spelling stored objects may hold.
    #[serde(alias = "filters")]
    pub filter: FilterFeatures,
}

/// The filter operators a pattern rule allows.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FilterFeatures {
    pub equality: bool,
    pub comparison: bool,
}

impl Default for FilterFeatures {
    fn default() -> Self {
        FilterFeatures {
            equality: true,
            comparison: false,
        }
    }
}

/// A join to another index (the `foreignKeys` experimental feature).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ForeignKey {
    pub foreign_index_uid: String,
    pub field_name: String,
}

/// `proximityPrecision`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum ProximityPrecision {
    #[default]
    ByWord,
    ByAttribute,
}

/// `prefixSearch`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum PrefixSearch {
    #[default]
    IndexingTime,
    Disabled,
}

/// `typoTolerance`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TypoTolerance {
    pub enabled: bool,
    pub min_word_size_for_typos: MinWordSizeForTypos,
    pub disable_on_words: Vec<String>,
    pub disable_on_attributes: Vec<String>,
    pub disable_on_numbers: bool,
}

impl Default for TypoTolerance {
    fn default() -> Self {
        TypoTolerance {
            enabled: true,
            min_word_size_for_typos: MinWordSizeForTypos::default(),
            disable_on_words: Vec::new(),
            disable_on_attributes: Vec::new(),
            disable_on_numbers: false,
        }
    }
}

/// The word lengths from which one and two typos are allowed.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MinWordSizeForTypos {
    pub one_typo: u8,
    pub two_typos: u8,
}

impl Default for MinWordSizeForTypos {
    fn default() -> Self {
        MinWordSizeForTypos {
            one_typo: DEFAULT_ONE_TYPO,
            two_typos: DEFAULT_TWO_TYPOS,
        }
    }
}

/// `faceting`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Faceting {
    #[serde(deserialize_with = "stored_u64")]
    #[cfg_attr(feature = "ts", ts(as = "usize"))]
    pub max_values_per_facet: u64,
    /// Facet name (or `*`) → order; always holds `*`.
    #[cfg_attr(feature = "ts", ts(as = "Record<FacetValuesOrder>"))]
    pub sort_facet_values_by: BTreeMap<String, FacetValuesOrder>,
}

impl Default for Faceting {
    fn default() -> Self {
        Faceting {
            max_values_per_facet: DEFAULT_MAX_VALUES_PER_FACET,
            sort_facet_values_by: BTreeMap::from([("*".to_string(), FacetValuesOrder::Alpha)]),
        }
    }
}

/// How a facet's values are ordered, as the settings spell it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "FacetOrder"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FacetValuesOrder {
    Alpha,
    Count,
}

/// `pagination`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Pagination {
    #[serde(deserialize_with = "stored_u64")]
    #[cfg_attr(feature = "ts", ts(as = "usize"))]
    pub max_total_hits: u64,
}

impl Default for Pagination {
    fn default() -> Self {
        Pagination {
            max_total_hits: DEFAULT_MAX_TOTAL_HITS,
        }
    }
}

/// One embedder configuration, stored as sent (its keys in Meilisearch's order) until vector
/// search reads it.
pub type Embedder = Map<String, Value>;

/// One `localizedAttributes` rule; locales are stored as three-letter codes.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalizedAttributeRule {
    pub attribute_patterns: Vec<String>,
    pub locales: Vec<String>,
}

/// `chat` (the `chatCompletions` experimental feature).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ChatSettings {
    pub description: String,
    pub document_template: String,
    #[serde(deserialize_with = "stored_u64")]
    #[cfg_attr(feature = "ts", ts(as = "usize"))]
    pub document_template_max_bytes: u64,
    /// The search parameters chat uses, as sent (keys in Meilisearch's order).
    #[cfg_attr(feature = "ts", ts(as = "ChatSearchParameters"))]
    pub search_parameters: Map<String, Value>,
}

impl Default for ChatSettings {
    fn default() -> Self {
        ChatSettings {
            description: String::new(),
            document_template: DEFAULT_DOCUMENT_TEMPLATE.to_string(),
            document_template_max_bytes: DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES,
            search_parameters: Map::new(),
        }
    }
}

/// A stored u64 that an earlier version may have written past `u64::MAX` (see
/// [`patch::setting_u64`]).
fn stored_u64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    serde_json::Number::deserialize(d).map(|n| patch::saturating(&n))
}

/// [`stored_u64`] for a nullable field.
fn stored_opt_u64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Option::<serde_json::Number>::deserialize(d).map(|n| n.as_ref().map(patch::saturating))
}

impl Settings {
    /// The settings from their stored JSON; `None` (never written) or an unreadable object
    /// gives the defaults, as the engine's readers treat them.
    pub fn from_stored(stored: Option<&Value>) -> Settings {
        stored
            .and_then(|v| Settings::deserialize(v).ok())
            .unwrap_or_default()
    }

    /// [`Settings::from_stored`] over stored bytes.
    pub fn from_stored_bytes(stored: Option<&[u8]>) -> Settings {
        stored
            .and_then(|b| serde_json::from_slice(b).ok())
            .unwrap_or_default()
    }

    /// The stored form: every field, in Meilisearch's order.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("settings serialize to JSON")
    }

    /// The searchable attributes in their ranking order, or `None` when all are (`*`).
    pub fn searchable(&self) -> Option<&[String]> {
        let attrs = &self.searchable_attributes;
        (!attrs.iter().any(|a| a == "*")).then_some(attrs.as_slice())
    }

    /// The displayed attributes, or `None` when all are (`*`).
    pub fn displayed(&self) -> Option<&[String]> {
        let attrs = &self.displayed_attributes;
        (!attrs.iter().any(|a| a == "*")).then_some(attrs.as_slice())
    }

    /// The ranking rules in order.
    pub fn ranking_rules(&self) -> &[String] {
        &self.ranking_rules
    }

    /// `pagination.maxTotalHits`.
    pub fn max_total_hits(&self) -> usize {
        self.pagination.max_total_hits as usize
    }

    /// `faceting.maxValuesPerFacet`.
    pub fn max_values_per_facet(&self) -> usize {
        self.faceting.max_values_per_facet as usize
    }

    /// The order of `facet`'s values: its own entry, else `*`, else alpha.
    pub fn facet_order(&self, facet: &str) -> FacetOrder {
        let by = &self.faceting.sort_facet_values_by;
        match by.get(facet).or_else(|| by.get("*")) {
            Some(FacetValuesOrder::Count) => FacetOrder::Count,
            _ => FacetOrder::Alpha,
        }
    }

    /// 0, 1 or 2 typos for a word of `len` characters under `minWordSizeForTypos`; none
    /// when typos are off.
    pub fn typos_for_length(&self, len: usize) -> u8 {
        let typo = &self.typo_tolerance;
        if !typo.enabled {
            return 0;
        }
        let sizes = typo.min_word_size_for_typos;
        if len >= sizes.two_typos as usize {
            2
        } else if len >= sizes.one_typo as usize {
            1
        } else {
            0
        }
    }

    /// How many typos `word` may have: by its length in characters; none in
    /// `disableOnWords` (compared lowercased), nor for numbers when `disableOnNumbers` is on.
    pub fn typo_budget(&self, word: &str) -> u8 {
        let numeric = word
            .chars()
            .all(|c| c.is_ascii_digit() || c.is_ascii_punctuation());
        if self.typos_disabled_for(word) || (numeric && self.typo_tolerance.disable_on_numbers) {
            return 0;
        }
        self.typos_for_length(word.chars().count())
    }

    /// Whether `word` is in `disableOnWords` (compared lowercased).
    pub fn typos_disabled_for(&self, word: &str) -> bool {
        let lower = word.to_lowercase();
        let words = &self.typo_tolerance.disable_on_words;
        words.iter().any(|w| w.to_lowercase() == lower)
    }

    /// Whether typos are off on `attribute` (`disableOnAttributes`, compared as written).
    pub fn typos_disabled_on(&self, attribute: &str) -> bool {
        let attrs = &self.typo_tolerance.disable_on_attributes;
        attrs.iter().any(|a| a == attribute)
    }

    /// Whether query words ending the query match as prefixes (`prefixSearch`).
    pub fn prefix_search(&self) -> bool {
        self.prefix_search != PrefixSearch::Disabled
    }

    /// How long ranking may take (`searchCutoffMs`, 1500 ms when null).
    pub fn search_cutoff(&self) -> std::time::Duration {
        let ms = self.search_cutoff_ms.unwrap_or(DEFAULT_SEARCH_CUTOFF_MS);
        std::time::Duration::from_millis(ms)
    }

    /// `distinctAttribute`.
    pub fn distinct_attribute(&self) -> Option<&str> {
        self.distinct_attribute.as_deref()
    }

    /// The string-list settings the engine reads by name (`sortableAttributes`,
    /// `stopWords`, ...); `None` for a name that is not one.
    pub fn string_list(&self, name: &str) -> Option<&[String]> {
        let list = match name {
            "displayedAttributes" => &self.displayed_attributes,
            "searchableAttributes" => &self.searchable_attributes,
            "sortableAttributes" => &self.sortable_attributes,
            "rankingRules" => &self.ranking_rules,
            "stopWords" => &self.stop_words,
            "nonSeparatorTokens" => &self.non_separator_tokens,
            "separatorTokens" => &self.separator_tokens,
            "dictionary" => &self.dictionary,
            _ => return None,
        };
        Some(list)
    }
}
