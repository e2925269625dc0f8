//! The shapes of the settings parts the engine keeps as sent JSON: one embedder (and a
//! composite's sub-embedders), chat's `searchParameters`, and their enumerations.
//!
//! The engine stores these objects as JSON ([`super::Embedder`], `ChatSettings::search_parameters`)
//! and types an embedder only when it reads it (`embedders::EmbedderConfig`). The structs below
//! describe what a request may send: their fields in Meilisearch's order, the stored form
//! (every field optional) and the patch form (every field also nullable). They are the source
//! of the TypeScript declarations and key orders (`crates/node/tests/shapes.rs` writes
//! `ts/settings/settings.generated.ts`); the tests below hold the engine's own key orders
//! (`patch.rs`) to them.
//!
//! With the `ts` feature this module also gives `TS` to [`Setting`] (absent, null or a value:
//! `field?: T | null`) and the [`Record`] stand-in for string-keyed maps.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(feature = "ts")]
pub use ts_impls::Record;

use super::Setting;

/// `source` of an embedder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum EmbedderSource {
    OpenAi,
    HuggingFace,
    Ollama,
    UserProvided,
    Rest,
    Composite,
}

/// `pooling` of a `huggingFace` embedder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum Pooling {
    UseModel,
    ForceCls,
    ForceMean,
}

/// `matchingStrategy` of chat's search parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum MatchingStrategy {
    Last,
    All,
    Frequency,
}

/// `distribution` of an embedder: the affine correction of semantic scores.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Distribution {
    pub mean: f64,
    pub sigma: f64,
}

/// One fragment of `indexingFragments` / `searchFragments`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Fragment {
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub value: Value,
}

/// One embedder configuration as stored (fields sent as null removed), in Meilisearch's order.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(rename = "Embedder", optional_fields)
)]
#[serde(rename_all = "camelCase")]
pub struct EmbedderSettings {
    pub source: Option<EmbedderSource>,
    pub model: Option<String>,
    pub revision: Option<String>,
    pub pooling: Option<Pooling>,
    pub api_key: Option<String>,
    pub dimensions: Option<usize>,
    pub binary_quantized: Option<bool>,
    pub document_template: Option<String>,
    pub document_template_max_bytes: Option<usize>,
    pub url: Option<String>,
    #[cfg_attr(feature = "ts", ts(as = "Option<Record<Option<Fragment>>>"))]
    pub indexing_fragments: Option<BTreeMap<String, Option<Fragment>>>,
    #[cfg_attr(feature = "ts", ts(as = "Option<Record<Option<Fragment>>>"))]
    pub search_fragments: Option<BTreeMap<String, Option<Fragment>>>,
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub request: Option<Value>,
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub response: Option<Value>,
    #[cfg_attr(feature = "ts", ts(as = "Option<Record<String>>"))]
    pub headers: Option<BTreeMap<String, String>>,
    pub search_embedder: Option<SubEmbedderSettings>,
    pub indexing_embedder: Option<SubEmbedderSettings>,
    pub distribution: Option<Distribution>,
}

/// A sub-embedder of a `composite` one, as stored; its own sub-embedders stay JSON.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(rename = "SubEmbedder", optional_fields)
)]
#[serde(rename_all = "camelCase")]
pub struct SubEmbedderSettings {
    pub source: Option<EmbedderSource>,
    pub model: Option<String>,
    pub revision: Option<String>,
    pub pooling: Option<Pooling>,
    pub api_key: Option<String>,
    pub dimensions: Option<usize>,
    pub document_template: Option<String>,
    pub document_template_max_bytes: Option<usize>,
    pub url: Option<String>,
    #[cfg_attr(feature = "ts", ts(as = "Option<Record<Option<Fragment>>>"))]
    pub indexing_fragments: Option<BTreeMap<String, Option<Fragment>>>,
    #[cfg_attr(feature = "ts", ts(as = "Option<Record<Option<Fragment>>>"))]
    pub search_fragments: Option<BTreeMap<String, Option<Fragment>>>,
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub request: Option<Value>,
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub response: Option<Value>,
    #[cfg_attr(feature = "ts", ts(as = "Option<Record<String>>"))]
    pub headers: Option<BTreeMap<String, String>>,
    pub distribution: Option<Distribution>,
    pub binary_quantized: Option<bool>,
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub search_embedder: Option<Value>,
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub indexing_embedder: Option<Value>,
}

/// One embedder in an update: every field absent (unchanged), null (removed) or a value.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(rename_all = "camelCase", default)]
pub struct EmbedderPatch {
    pub source: Setting<EmbedderSource>,
    pub model: Setting<String>,
    pub revision: Setting<String>,
    pub pooling: Setting<Pooling>,
    pub api_key: Setting<String>,
    pub dimensions: Setting<usize>,
    pub binary_quantized: Setting<bool>,
    pub document_template: Setting<String>,
    pub document_template_max_bytes: Setting<usize>,
    pub url: Setting<String>,
    #[cfg_attr(feature = "ts", ts(as = "Setting<Record<Option<Fragment>>>"))]
    pub indexing_fragments: Setting<BTreeMap<String, Option<Fragment>>>,
    #[cfg_attr(feature = "ts", ts(as = "Setting<Record<Option<Fragment>>>"))]
    pub search_fragments: Setting<BTreeMap<String, Option<Fragment>>>,
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub request: Setting<Value>,
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub response: Setting<Value>,
    #[cfg_attr(feature = "ts", ts(as = "Setting<Record<String>>"))]
    pub headers: Setting<BTreeMap<String, String>>,
    pub search_embedder: Setting<SubEmbedderPatch>,
    pub indexing_embedder: Setting<SubEmbedderPatch>,
    pub distribution: Setting<Distribution>,
}

/// A sub-embedder in an update (kept as sent, minus its null fields, when it applies).
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(rename_all = "camelCase", default)]
pub struct SubEmbedderPatch {
    pub source: Setting<EmbedderSource>,
    pub model: Setting<String>,
    pub revision: Setting<String>,
    pub pooling: Setting<Pooling>,
    pub api_key: Setting<String>,
    pub dimensions: Setting<usize>,
    pub document_template: Setting<String>,
    pub document_template_max_bytes: Setting<usize>,
    pub url: Setting<String>,
    #[cfg_attr(feature = "ts", ts(as = "Setting<Record<Option<Fragment>>>"))]
    pub indexing_fragments: Setting<BTreeMap<String, Option<Fragment>>>,
    #[cfg_attr(feature = "ts", ts(as = "Setting<Record<Option<Fragment>>>"))]
    pub search_fragments: Setting<BTreeMap<String, Option<Fragment>>>,
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub request: Setting<Value>,
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub response: Setting<Value>,
    #[cfg_attr(feature = "ts", ts(as = "Setting<Record<String>>"))]
    pub headers: Setting<BTreeMap<String, String>>,
    pub distribution: Setting<Distribution>,
    pub binary_quantized: Setting<bool>,
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub search_embedder: Setting<Value>,
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub indexing_embedder: Setting<Value>,
}

/// `hybrid` of chat's search parameters.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChatHybrid {
    #[serde(default = "search_semantic_ratio")]
    pub semantic_ratio: f64,
    pub embedder: String,
}

/// chat's `hybrid.semanticRatio` when not sent: a search's, the serde default of its `hybrid`.
fn search_semantic_ratio() -> f64 {
    let query: crate::SearchQuery =
        serde_json::from_value(serde_json::json!({ "hybrid": { "embedder": "" } }))
            .expect("a search query of a hybrid");
    query.hybrid.map_or(0.0, |hybrid| hybrid.semantic_ratio)
}

/// chat's `searchParameters` as stored, in Meilisearch's order.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ChatSearchParameters {
    pub hybrid: Option<ChatHybrid>,
    pub limit: Option<usize>,
    pub sort: Option<Vec<String>>,
    pub distinct: Option<String>,
    pub matching_strategy: Option<MatchingStrategy>,
    pub attributes_to_search_on: Option<Vec<String>>,
    pub ranking_score_threshold: Option<f64>,
}

/// chat's `searchParameters` in an update.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(rename_all = "camelCase", default)]
pub struct ChatSearchParametersPatch {
    pub hybrid: Setting<ChatHybrid>,
    pub limit: Setting<usize>,
    pub sort: Setting<Vec<String>>,
    pub distinct: Setting<String>,
    pub matching_strategy: Setting<MatchingStrategy>,
    pub attributes_to_search_on: Setting<Vec<String>>,
    pub ranking_score_threshold: Setting<f64>,
}

/// The names serde reads for a struct's fields (aliases included) or an enum's variants, in
/// declaration order; empty for other types.
pub fn serde_names<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let mut names = Names(&[]);
    let _ = T::deserialize(&mut names);
    names.0
}

/// A deserializer that only records the names a derived `Deserialize` asks for.
struct Names(&'static [&'static str]);

/// The one error of [`Names`]: nothing is ever deserialized.
#[derive(Debug)]
struct NoValue;

impl std::fmt::Display for NoValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no value")
    }
}

impl std::error::Error for NoValue {}

impl serde::de::Error for NoValue {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        NoValue
    }
}

impl<'de> serde::Deserializer<'de> for &mut Names {
    type Error = NoValue;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, NoValue> {
        Err(NoValue)
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, NoValue> {
        self.0 = fields;
        Err(NoValue)
    }

    fn deserialize_enum<V: serde::de::Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, NoValue> {
        self.0 = variants;
        Err(NoValue)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::patch::{EMBEDDER_FIELD_ORDER, SEARCH_PARAMETERS_ORDER};
    use crate::settings::{Settings, SettingsPatch, SETTINGS_FIELDS};

    /// The keys of `value` serialized, in order.
    fn keys(value: impl Serialize) -> Vec<String> {
        match serde_json::to_value(value).unwrap() {
            Value::Object(map) => map.keys().cloned().collect(),
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn the_engine_orders_follow_the_shapes() {
        assert_eq!(keys(Settings::default()), SETTINGS_FIELDS);
        assert_eq!(serde_names::<SettingsPatch>(), SETTINGS_FIELDS);
        assert_eq!(keys(EmbedderSettings::default()), EMBEDDER_FIELD_ORDER);
        assert_eq!(serde_names::<EmbedderPatch>(), EMBEDDER_FIELD_ORDER);
        assert_eq!(
            serde_names::<SubEmbedderPatch>(),
            keys(SubEmbedderSettings::default())
        );
        assert_eq!(
            keys(ChatSearchParameters::default()),
            SEARCH_PARAMETERS_ORDER
        );
        assert_eq!(
            serde_names::<ChatSearchParametersPatch>(),
            SEARCH_PARAMETERS_ORDER
        );
    }

    #[test]
    fn serde_names_lists_variants_and_fields() {
        assert_eq!(
            serde_names::<Pooling>(),
            ["useModel", "forceCls", "forceMean"]
        );
        assert_eq!(serde_names::<Distribution>(), ["mean", "sigma"]);
        assert!(serde_names::<String>().is_empty());
    }
}

#[cfg(feature = "ts")]
mod ts_impls {
    use std::marker::PhantomData;

    use ts_rs::{Dummy, TypeVisitor, TS};

    use super::Setting;

    /// Lets `#[ts(optional)]` apply to a `Setting` field.
    impl<T> ts_rs::IsOption for Setting<T> {}

    /// `Setting<T>` in TypeScript: with `optional_fields = nullable`, `field?: T | null`.
    impl<T: TS> TS for Setting<T> {
        type WithoutGenerics = Setting<Dummy>;
        type OptionInnerType = T;
        const IS_OPTION: bool = true;

        fn name() -> String {
            format!("{} | null", T::name())
        }

        fn inline() -> String {
            format!("{} | null", T::inline())
        }

        fn visit_dependencies(v: &mut impl TypeVisitor)
        where
            Self: 'static,
        {
            T::visit_dependencies(v);
        }

        fn visit_generics(v: &mut impl TypeVisitor)
        where
            Self: 'static,
        {
            T::visit_generics(v);
            v.visit::<T>();
        }

        fn decl() -> String {
            panic!("{} cannot be declared", Self::name())
        }

        fn decl_concrete() -> String {
            panic!("{} cannot be declared", Self::name())
        }

        fn inline_flattened() -> String {
            panic!("{} cannot be flattened", Self::name())
        }
    }

    /// A map with string keys, declared `Record<string, V>` (ts-rs writes maps as
    /// `{ [key in string]?: V }`, whose values may be `undefined`).
    pub struct Record<V>(PhantomData<V>);

    impl<V: TS> TS for Record<V> {
        type WithoutGenerics = Record<Dummy>;
        type OptionInnerType = Self;

        fn name() -> String {
            format!("Record<string, {}>", V::name())
        }

        fn inline() -> String {
            format!("Record<string, {}>", V::inline())
        }

        fn visit_dependencies(v: &mut impl TypeVisitor)
        where
            Self: 'static,
        {
            V::visit_dependencies(v);
        }

        fn visit_generics(v: &mut impl TypeVisitor)
        where
            Self: 'static,
        {
            V::visit_generics(v);
            v.visit::<V>();
        }

        fn decl() -> String {
            panic!("{} cannot be declared", Self::name())
        }

        fn decl_concrete() -> String {
            panic!("{} cannot be declared", Self::name())
        }

        fn inline_flattened() -> String {
            panic!("{} cannot be flattened", Self::name())
        }
    }
}
