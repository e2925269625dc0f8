//! A settings update and how it applies to the current settings.
//!
//! A patch field is [`Setting::NotSet`] (absent: unchanged), [`Setting::Reset`] (null: back
//! to the default) or [`Setting::Set`]. Nested objects (typoTolerance and its
//! minWordSizeForTypos, faceting, pagination, each embedder, chat and its searchParameters)
//! merge field by field; `sortFacetValuesBy` and lists are replaced. Normalizations follow
//! Meilisearch: `*` anywhere in displayed/searchable attributes means all (`["*"]`), those
//! two lists drop repeated names, sets (sortable attributes, stop words, tokens, dictionary,
//! typo exceptions) come back sorted and deduplicated, maps are sorted by key, locales are
//! stored as their three-letter code, `sortFacetValuesBy` always keeps a `*` entry.

use api_types::Code;
use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::{
    canonical_locale, ChatSettings, Embedder, FacetValuesOrder, Faceting, FilterableAttributeRule,
    ForeignKey, LocalizedAttributeRule, MinWordSizeForTypos, Pagination, PrefixSearch,
    ProximityPrecision, Settings, TypoTolerance,
};
#[cfg(feature = "ts")]
use super::{ChatSearchParametersPatch, EmbedderPatch, Record};
use crate::{Error, Result};

/// One field of a patch: absent, null or a value.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Setting<T> {
    #[default]
    NotSet,
    Reset,
    Set(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Setting<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        // Absent fields never reach here (`#[serde(default)]` makes them `NotSet`).
        Ok(match Option::<T>::deserialize(d)? {
            Some(v) => Setting::Set(v),
            None => Setting::Reset,
        })
    }
}

/// A `Setting<u64>` that also reads a number past `u64::MAX` (JavaScript rounds the largest
/// u64 the validators accept up to 2^64), saturating.
pub(super) fn setting_u64<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Setting<u64>, D::Error> {
    Ok(match Option::<serde_json::Number>::deserialize(d)? {
        Some(n) => Setting::Set(saturating(&n)),
        None => Setting::Reset,
    })
}

/// A number as u64: fractions dropped, out-of-range values saturated.
pub(super) fn saturating(n: &serde_json::Number) -> u64 {
    n.as_u64()
        .unwrap_or_else(|| n.as_f64().map_or(0, |f| f as u64))
}

impl<T> Setting<T> {
    /// The value after this update: unchanged, the default, or the one sent.
    fn pick(self, current: T, default: impl FnOnce() -> T) -> T {
        match self {
            Setting::NotSet => current,
            Setting::Reset => default(),
            Setting::Set(v) => v,
        }
    }
}

/// A validated update (the JSON of the request after its shape was checked).
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(rename_all = "camelCase", default)]
pub struct SettingsPatch {
    pub displayed_attributes: Setting<Vec<String>>,
    pub searchable_attributes: Setting<Vec<String>>,
    pub filterable_attributes: Setting<Vec<FilterableAttributeRule>>,
    pub sortable_attributes: Setting<Vec<String>>,
    pub foreign_keys: Setting<Vec<ForeignKey>>,
    pub ranking_rules: Setting<Vec<String>>,
    pub stop_words: Setting<Vec<String>>,
    pub non_separator_tokens: Setting<Vec<String>>,
    pub separator_tokens: Setting<Vec<String>>,
    pub dictionary: Setting<Vec<String>>,
    #[cfg_attr(feature = "ts", ts(as = "Setting<Record<Vec<String>>>"))]
    pub synonyms: Setting<BTreeMap<String, Vec<String>>>,
    pub distinct_attribute: Setting<String>,
    pub proximity_precision: Setting<ProximityPrecision>,
    pub typo_tolerance: Setting<TypoTolerancePatch>,
    pub faceting: Setting<FacetingPatch>,
    pub pagination: Setting<PaginationPatch>,
    /// Embedder name → its partial configuration, or null to remove that embedder.
    #[cfg_attr(feature = "ts", ts(as = "Setting<Record<Option<EmbedderPatch>>>"))]
    pub embedders: Setting<BTreeMap<String, Option<Map<String, Value>>>>,
    #[serde(deserialize_with = "setting_u64")]
    #[cfg_attr(feature = "ts", ts(as = "Setting<usize>"))]
    pub search_cutoff_ms: Setting<u64>,
    pub localized_attributes: Setting<Vec<LocalizedAttributeRule>>,
    pub facet_search: Setting<bool>,
    pub prefix_search: Setting<PrefixSearch>,
    pub chat: Setting<ChatPatch>,
}

/// `typoTolerance` in a patch.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(rename_all = "camelCase", default)]
pub struct TypoTolerancePatch {
    pub enabled: Setting<bool>,
    pub min_word_size_for_typos: Setting<MinWordSizeForTyposPatch>,
    pub disable_on_words: Setting<Vec<String>>,
    pub disable_on_attributes: Setting<Vec<String>>,
    pub disable_on_numbers: Setting<bool>,
}

/// `typoTolerance.minWordSizeForTypos` in a patch.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(rename_all = "camelCase", default)]
pub struct MinWordSizeForTyposPatch {
    pub one_typo: Setting<u8>,
    pub two_typos: Setting<u8>,
}

/// `faceting` in a patch.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(rename_all = "camelCase", default)]
pub struct FacetingPatch {
    #[serde(deserialize_with = "setting_u64")]
    #[cfg_attr(feature = "ts", ts(as = "Setting<usize>"))]
    pub max_values_per_facet: Setting<u64>,
    #[cfg_attr(feature = "ts", ts(as = "Setting<Record<FacetValuesOrder>>"))]
    pub sort_facet_values_by: Setting<BTreeMap<String, FacetValuesOrder>>,
}

/// `pagination` in a patch.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(rename_all = "camelCase", default)]
pub struct PaginationPatch {
    #[serde(deserialize_with = "setting_u64")]
    #[cfg_attr(feature = "ts", ts(as = "Setting<usize>"))]
    pub max_total_hits: Setting<u64>,
}

/// `chat` in a patch.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(rename_all = "camelCase", default)]
pub struct ChatPatch {
    pub description: Setting<String>,
    pub document_template: Setting<String>,
    #[serde(deserialize_with = "setting_u64")]
    #[cfg_attr(feature = "ts", ts(as = "Setting<usize>"))]
    pub document_template_max_bytes: Setting<u64>,
    #[cfg_attr(feature = "ts", ts(as = "Setting<ChatSearchParametersPatch>"))]
    pub search_parameters: Setting<Map<String, Value>>,
}

impl SettingsPatch {
    /// The patch from its JSON; a malformed one is an internal error (the HTTP layer
    /// validated its shape).
    pub fn from_json(value: &Value) -> Result<SettingsPatch> {
        SettingsPatch::deserialize(value).map_err(Error::internal)
    }

    /// The patch a DELETE of every setting produces: all fields null.
    pub fn reset_all() -> SettingsPatch {
        let nulls: Map<String, Value> = super::SETTINGS_FIELDS
            .iter()
            .map(|f| (f.to_string(), Value::Null))
            .collect();
        SettingsPatch::from_json(&Value::Object(nulls)).expect("a patch of nulls parses")
    }
}

/// The message of a `minWordSizeForTypos` whose `oneTypo` exceeds `twoTypos`.
pub fn min_word_size_message(one_typo: u8, two_typos: u8) -> String {
    format!(
        "`minWordSizeForTypos` setting is invalid. `oneTypo` and `twoTypos` fields should be between `0` and `255`, and `twoTypos` should be greater or equals to `oneTypo` but found `oneTypo: {one_typo}` and twoTypos: {two_typos}`."
    )
}

/// Meilisearch stores displayed/searchable attributes without repeats; `*` means all.
fn wildcard_list(names: Vec<String>) -> Vec<String> {
    if names.iter().any(|n| n == "*") {
        return vec!["*".to_string()];
    }
    let mut seen = BTreeSet::new();
    names
        .into_iter()
        .filter(|n| seen.insert(n.clone()))
        .collect()
}

/// Sorted by bytes, without repeats.
fn sorted_set(mut items: Vec<String>) -> Vec<String> {
    items.sort();
    items.dedup();
    items
}

/// Keys of `map` in `order`, those not listed dropped.
fn ordered(mut map: Map<String, Value>, order: &[&str]) -> Map<String, Value> {
    order
        .iter()
        .filter_map(|k| map.remove(*k).map(|v| (k.to_string(), v)))
        .collect()
}

/// Merges `patch` into `into`: null removes a key, a value replaces it.
fn merge_fields(into: &mut Map<String, Value>, patch: Map<String, Value>) {
    for (k, v) in patch {
        if v.is_null() {
            into.remove(&k);
        } else {
            into.insert(k, v);
        }
    }
}

/// Fields that no longer apply once an embedder changes source.
const SOURCE_SPECIFIC_FIELDS: [&str; 12] = [
    "model",
    "revision",
    "pooling",
    "dimensions",
    "url",
    "indexingFragments",
    "searchFragments",
    "request",
    "response",
    "headers",
    "searchEmbedder",
    "indexingEmbedder",
];

pub(super) const EMBEDDER_FIELD_ORDER: [&str; 18] = [
    "source",
    "model",
    "revision",
    "pooling",
    "apiKey",
    "dimensions",
    "binaryQuantized",
    "documentTemplate",
    "documentTemplateMaxBytes",
    "url",
    "indexingFragments",
    "searchFragments",
    "request",
    "response",
    "headers",
    "searchEmbedder",
    "indexingEmbedder",
    "distribution",
];

pub(super) const SEARCH_PARAMETERS_ORDER: [&str; 7] = [
    "hybrid",
    "limit",
    "sort",
    "distinct",
    "matchingStrategy",
    "attributesToSearchOn",
    "rankingScoreThreshold",
];

/// One embedder: an update merges into the existing configuration field by field; a
/// sub-embedder is stored as sent, minus its fields sent as null.
fn apply_embedder(current: Option<Embedder>, patch: Map<String, Value>) -> Embedder {
    let mut merged = current.unwrap_or_default();
    let new_source = patch.get("source").and_then(Value::as_str);
    let old_source = merged.get("source").and_then(Value::as_str);
    if let (Some(new), Some(old)) = (new_source, old_source) {
        if new != old {
            for f in SOURCE_SPECIFIC_FIELDS {
                merged.remove(f);
            }
            if new == "userProvided" || new == "composite" {
                merged.remove("documentTemplate");
                merged.remove("documentTemplateMaxBytes");
            }
        }
    }
    for (k, v) in patch {
        match v {
            Value::Null => {
                merged.remove(&k);
            }
            Value::Object(sub) if k == "searchEmbedder" || k == "indexingEmbedder" => {
                let kept = sub.into_iter().filter(|(_, v)| !v.is_null()).collect();
                merged.insert(k, Value::Object(kept));
            }
            // Fragments merge by name: `null` removes one, one not named stays (Meilisearch's).
            Value::Object(sub) if k == "indexingFragments" || k == "searchFragments" => {
                let mut fragments = match merged.remove(&k) {
                    Some(Value::Object(m)) => m,
                    _ => Map::new(),
                };
                merge_fields(&mut fragments, sub);
                if !fragments.is_empty() {
                    // By name, as Meilisearch lists (and embeds) them.
                    let by_name: std::collections::BTreeMap<String, Value> =
                        fragments.into_iter().collect();
                    merged.insert(k, Value::Object(by_name.into_iter().collect()));
                }
            }
            v => {
                merged.insert(k, v);
            }
        }
    }
    ordered(merged, &EMBEDDER_FIELD_ORDER)
}

impl TypoTolerance {
    fn apply(self, patch: Setting<TypoTolerancePatch>) -> Result<TypoTolerance> {
        let d = TypoTolerance::default();
        let p = match patch {
            Setting::NotSet => return Ok(self),
            Setting::Reset => return Ok(d),
            Setting::Set(p) => p,
        };
        let current = self.min_word_size_for_typos;
        let sizes = match p.min_word_size_for_typos {
            Setting::NotSet => current,
            Setting::Reset => MinWordSizeForTypos::default(),
            Setting::Set(w) => {
                let dw = MinWordSizeForTypos::default();
                MinWordSizeForTypos {
                    one_typo: w.one_typo.pick(current.one_typo, || dw.one_typo),
                    two_typos: w.two_typos.pick(current.two_typos, || dw.two_typos),
                }
            }
        };
        // Checked when the update runs, against the current value of the field not sent.
        if sizes.one_typo > sizes.two_typos {
            let message = min_word_size_message(sizes.one_typo, sizes.two_typos);
            return Err(Error::new(Code::InvalidSettingsTypoTolerance, message));
        }
        Ok(TypoTolerance {
            enabled: p.enabled.pick(self.enabled, || d.enabled),
            min_word_size_for_typos: sizes,
            // Stored normalized, as Meilisearch does (and answers them).
            disable_on_words: sorted_set(
                p.disable_on_words
                    .pick(self.disable_on_words, Vec::new)
                    .iter()
                    .map(|w| crate::tokens::normalized(w))
                    .collect(),
            ),
            disable_on_attributes: sorted_set(
                p.disable_on_attributes
                    .pick(self.disable_on_attributes, Vec::new),
            ),
            disable_on_numbers: p.disable_on_numbers.pick(self.disable_on_numbers, || false),
        })
    }
}

impl Faceting {
    fn apply(self, patch: Setting<FacetingPatch>) -> Faceting {
        let p = match patch {
            Setting::NotSet => return self,
            Setting::Reset => return Faceting::default(),
            Setting::Set(p) => p,
        };
        let d = Faceting::default();
        let mut by = p
            .sort_facet_values_by
            .pick(self.sort_facet_values_by, || d.sort_facet_values_by.clone());
        by.entry("*".to_string()).or_insert(FacetValuesOrder::Alpha);
        Faceting {
            max_values_per_facet: p
                .max_values_per_facet
                .pick(self.max_values_per_facet, || d.max_values_per_facet),
            sort_facet_values_by: by,
        }
    }
}

impl Pagination {
    fn apply(self, patch: Setting<PaginationPatch>) -> Pagination {
        let d = Pagination::default();
        match patch {
            Setting::NotSet => self,
            Setting::Reset => d,
            Setting::Set(p) => Pagination {
                max_total_hits: p
                    .max_total_hits
                    .pick(self.max_total_hits, || d.max_total_hits),
            },
        }
    }
}

impl ChatSettings {
    fn apply(self, patch: Setting<ChatPatch>) -> Result<ChatSettings> {
        let d = ChatSettings::default();
        let p = match patch {
            Setting::NotSet => return Ok(self),
            Setting::Reset => return Ok(d),
            Setting::Set(p) => p,
        };
        let max_bytes = p
            .document_template_max_bytes
            .pick(self.document_template_max_bytes, || {
                d.document_template_max_bytes
            });
        if max_bytes == 0 {
            // Meilisearch files this engine error under the embedders code.
            return Err(Error::new(
                Code::InvalidSettingsEmbedders,
                "`.chat.documentTemplateMaxBytes`: `documentTemplateMaxBytes` cannot be zero",
            ));
        }
        let search_parameters = match p.search_parameters {
            Setting::NotSet => self.search_parameters,
            Setting::Reset => Map::new(),
            Setting::Set(sent) => {
                let mut next = self.search_parameters;
                merge_fields(&mut next, sent);
                ordered(next, &SEARCH_PARAMETERS_ORDER)
            }
        };
        Ok(ChatSettings {
            description: p.description.pick(self.description, || d.description),
            document_template: p
                .document_template
                .pick(self.document_template, || d.document_template),
            document_template_max_bytes: max_bytes,
            search_parameters,
        })
    }
}

impl Settings {
    /// Applies `patch`. Fails, leaving `self` unchanged, for what can only be checked against
    /// the current settings (`oneTypo` > `twoTypos` once merged, a zero chat template size);
    /// the settings task then fails with that error.
    pub fn apply(&mut self, patch: SettingsPatch) -> Result<()> {
        let s = self.clone();
        let d = Settings::default();
        let p = patch;
        let wildcard = |sent: Setting<Vec<String>>, current: Vec<String>| match sent {
            Setting::NotSet => current,
            sent => wildcard_list(sent.pick(Vec::new(), || vec!["*".to_string()])),
        };
        let set = |sent: Setting<Vec<String>>, current: Vec<String>| match sent {
            Setting::NotSet => current,
            sent => sorted_set(sent.pick(Vec::new(), Vec::new)),
        };
        let embedders = match p.embedders {
            Setting::NotSet => s.embedders,
            Setting::Reset => BTreeMap::new(),
            Setting::Set(sent) => {
                let mut next = s.embedders;
                for (name, config) in sent {
                    match config {
                        None => {
                            next.remove(&name);
                        }
                        Some(config) => {
                            let merged = apply_embedder(next.remove(&name), config);
                            next.insert(name, merged);
                        }
                    }
                }
                next
            }
        };
        let localized_attributes = match p.localized_attributes {
            Setting::NotSet => s.localized_attributes,
            Setting::Reset => None,
            Setting::Set(rules) => Some(
                rules
                    .into_iter()
                    .map(|r| LocalizedAttributeRule {
                        attribute_patterns: r.attribute_patterns,
                        locales: r
                            .locales
                            .iter()
                            .map(|l| canonical_locale(l).to_string())
                            .collect(),
                    })
                    .collect(),
            ),
        };
        *self = Settings {
            displayed_attributes: wildcard(p.displayed_attributes, s.displayed_attributes),
            searchable_attributes: wildcard(p.searchable_attributes, s.searchable_attributes),
            filterable_attributes: p
                .filterable_attributes
                .pick(s.filterable_attributes, Vec::new),
            sortable_attributes: set(p.sortable_attributes, s.sortable_attributes),
            foreign_keys: p.foreign_keys.pick(s.foreign_keys, Vec::new),
            ranking_rules: p.ranking_rules.pick(s.ranking_rules, || d.ranking_rules),
            stop_words: set(p.stop_words, s.stop_words),
            non_separator_tokens: set(p.non_separator_tokens, s.non_separator_tokens),
            separator_tokens: set(p.separator_tokens, s.separator_tokens),
            dictionary: set(p.dictionary, s.dictionary),
            synonyms: p.synonyms.pick(s.synonyms, BTreeMap::new),
            distinct_attribute: match p.distinct_attribute {
                Setting::NotSet => s.distinct_attribute,
                Setting::Reset => None,
                Setting::Set(a) => Some(a),
            },
            proximity_precision: p
                .proximity_precision
                .pick(s.proximity_precision, ProximityPrecision::default),
            typo_tolerance: s.typo_tolerance.apply(p.typo_tolerance)?,
            faceting: s.faceting.apply(p.faceting),
            pagination: s.pagination.apply(p.pagination),
            embedders,
            search_cutoff_ms: match p.search_cutoff_ms {
                Setting::NotSet => s.search_cutoff_ms,
                Setting::Reset => None,
                Setting::Set(ms) => Some(ms),
            },
            localized_attributes,
            facet_search: p.facet_search.pick(s.facet_search, || d.facet_search),
            prefix_search: p.prefix_search.pick(s.prefix_search, PrefixSearch::default),
            chat: s.chat.apply(p.chat)?,
        };
        Ok(())
    }
}
