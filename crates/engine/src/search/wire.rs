//! The request shapes of search and facet search, as the TypeScript layer sends them
//! (already validated and normalized there), with the defaults of the fields it may leave out.

use serde::Deserialize;
use serde_json::Value;

use crate::settings::search_defaults;

/// Query of `search` (the normalized form the TypeScript layer sends).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(rename_all = "camelCase")]
pub struct SearchQuery {
    /// When the request reached the server (set by the caller, never by the wire): the
    /// answer's `processingTimeMs` counts from it, so the server's own path before the engine
    /// (parsing, validation, waiting for a search slot and a thread) is part of it.
    #[serde(skip)]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub received: Option<std::time::Instant>,
    #[serde(default)]
    pub q: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub offset: usize,
    #[serde(default = "crate::index::default_limit")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub limit: usize,
    #[serde(default)]
    pub page: Option<usize>,
    #[serde(default)]
    pub hits_per_page: Option<usize>,
    #[serde(default)]
    pub attributes_to_retrieve: Option<Vec<String>>,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub retrieve_vectors: bool,
    /// A filter (string or array form); errors use `invalid_search_filter`.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub filter: Option<Value>,
    /// The `containsFilter` experimental feature: `CONTAINS` is refused without it.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub contains_filter: bool,
    /// The ids each `_foreign` condition of `filter` selects on its foreign index, in reading
    /// order, resolved by the caller (never from a request's body): the engine reads each
    /// condition as `field IN [ids]`.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub foreign_ids: Option<Vec<Vec<String>>>,
    /// `attr:asc|desc` and `_geoPoint(lat, lng):asc|desc` keys.
    #[serde(default)]
    pub sort: Option<Vec<String>>,
    /// Derivations chosen for every instance of a network (a search over the network).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub pins: Option<super::query::Pins>,
    /// Documents dynamic search rules pin, in placing order (see [`super::pinned`]).
    #[serde(default)]
    pub pinned_documents: Option<Vec<super::pinned::PinnedDocument>>,
    /// Attribute names or patterns to compute `facetDistribution`/`facetStats` for.
    #[serde(default)]
    pub facets: Option<Vec<String>>,
    /// Keep the documents the facets were counted over (never from the wire): a federated
    /// search counts `facetsByIndex` once over every query of an index.
    #[serde(skip)]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub keep_facet_set: bool,
    /// Overrides the index's `distinctAttribute` (must be filterable).
    #[serde(default)]
    pub distinct: Option<String>,
    #[serde(default)]
    pub attributes_to_highlight: Option<Vec<String>>,
    #[serde(default)]
    pub attributes_to_crop: Option<Vec<String>>,
    #[serde(default = "default_crop_length")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub crop_length: usize,
    #[serde(default = "default_crop_marker")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub crop_marker: String,
    #[serde(default = "default_pre_tag")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub highlight_pre_tag: String,
    #[serde(default = "default_post_tag")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub highlight_post_tag: String,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub show_matches_position: bool,
    /// `last` (default), `all` or `frequency`.
    #[serde(default)]
    pub matching_strategy: Option<String>,
    /// Adds `performanceDetails`: the time each step took.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub show_performance_details: bool,
    /// Restricts the query to these searchable attributes.
    #[serde(default)]
    pub attributes_to_search_on: Option<Vec<String>>,
    /// The languages the query (and the highlighted text) is cut in: locale codes.
    #[serde(default)]
    pub locales: Option<Vec<String>>,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub show_ranking_score: bool,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub show_ranking_score_details: bool,
    /// Hits scoring below it are left out (and not counted).
    #[serde(default)]
    pub ranking_score_threshold: Option<f64>,
    /// The query's vector (semantic and hybrid search, with `hybrid`).
    #[serde(default, deserialize_with = "f32_list")]
    pub vector: Option<Vec<f32>>,
    /// `{embedder, semanticRatio}`: semantic or hybrid search.
    #[serde(default)]
    pub hybrid: Option<super::semantic::Hybrid>,
    /// `media` (multimodal search): what the embedder's search fragments render with, beside
    /// the query text.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub media: Option<Value>,
    /// The `multimodal` experimental feature: `media` is refused without it.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub multimodal: bool,
    /// The index's name, which the errors about its settings begin with (as Meilisearch's).
    #[serde(default)]
    pub index_uid: Option<String>,
}

// The request's defaults are defined once, with the settings' (`crate::settings`).
fn default_crop_length() -> usize {
    search_defaults::CROP_LENGTH
}

fn default_crop_marker() -> String {
    search_defaults::CROP_MARKER.to_string()
}

fn default_pre_tag() -> String {
    search_defaults::HIGHLIGHT_PRE_TAG.to_string()
}

fn default_post_tag() -> String {
    search_defaults::HIGHLIGHT_POST_TAG.to_string()
}

/// Query of `facet_search`.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(rename_all = "camelCase")]
pub struct FacetSearchQuery {
    pub facet_name: String,
    #[serde(default)]
    pub facet_query: Option<String>,
    #[serde(default)]
    pub q: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub filter: Option<Value>,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub contains_filter: bool,
    /// The ids each `_foreign` condition of `filter` selects on its foreign index, in reading
    /// order, resolved by the caller (never from a request's body): the engine reads each
    /// condition as `field IN [ids]`.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub foreign_ids: Option<Vec<Vec<String>>>,
    /// Counts documents once per distinct value when the index has a `distinctAttribute`.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub exhaustive_facet_count: bool,
    #[serde(default)]
    pub matching_strategy: Option<String>,
    #[serde(default)]
    pub attributes_to_search_on: Option<Vec<String>>,
    /// The languages `q` is cut in: locale codes.
    #[serde(default)]
    pub locales: Option<Vec<String>>,
    /// Semantic or hybrid facet search: every allowed document is a candidate.
    #[serde(default, deserialize_with = "f32_list")]
    pub vector: Option<Vec<f32>>,
    #[serde(default)]
    pub hybrid: Option<super::semantic::Hybrid>,
    /// Only the documents whose ranking score (the search's, under the index's ranking rules)
    /// reaches it count.
    #[serde(default)]
    pub ranking_score_threshold: Option<f64>,
}

/// A vector of JSON numbers as `f32`, each rounded to the nearest (`1e300` becomes infinity,
/// as in Meilisearch) instead of refusing values outside `f32`'s range.
fn f32_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<f32>>, D::Error> {
    let v: Option<Vec<f64>> = serde::Deserialize::deserialize(d)?;
    Ok(v.map(|v| v.into_iter().map(|x| x as f32).collect()))
}
