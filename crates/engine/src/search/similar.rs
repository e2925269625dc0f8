//! Similar documents (`/similar`): the documents nearest to one document's embedding for an
//! embedder, among those the filter allows (the document itself left out). Only documents
//! with an embedding are hits; the total counts every allowed document. As in Meilisearch,
//! each embedding of the document is compared with the others' embeddings of the same rank
//! (its first with their first, ...), each document keeping its best similarity.

use std::time::Instant;

use api_types::{Code, Error, Result};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::candidates::allowed_or_all;
use super::page::Window;
use super::printer::{Printer, SearchResult, Timings};
use super::{rank, Ranked, SearchQuery};
use crate::index::Index;
use crate::search::filtering::allowed_ids;
use crate::vectors::{registry, Registry};

/// Query of `similar` (the normalized form the TypeScript layer sends).
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(rename_all = "camelCase")]
pub struct SimilarQuery {
    /// When the request reached the server, as [`super::SearchQuery::received`].
    #[serde(skip)]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub received: Option<Instant>,
    pub id: String,
    pub embedder: String,
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
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub offset: usize,
    #[serde(default = "crate::index::default_limit")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub limit: usize,
    #[serde(default)]
    pub attributes_to_retrieve: Option<Vec<String>>,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub retrieve_vectors: bool,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub show_ranking_score: bool,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub show_ranking_score_details: bool,
    #[serde(default)]
    pub ranking_score_threshold: Option<f64>,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub show_performance_details: bool,
}

/// `{hits, id, processingTimeMs, limit, offset, estimatedTotalHits}`. Reads no searcher: the
/// vectors are in the document store.
pub(crate) fn similar(index: &Index, q: &SimilarQuery) -> Result<Vec<u8>> {
    let started = q.received.unwrap_or_else(Instant::now);
    let rtxn = index.read_txn()?;
    let settings = index.settings(&rtxn)?;
    let settings = settings.as_ref();
    // The embedder is checked before the filter, as Meilisearch checks them.
    if !registry::configs(settings)?
        .iter()
        .any(|(n, _)| *n == q.embedder)
    {
        return Err(Error::new(
            Code::InvalidSimilarEmbedder,
            format!("Cannot find embedder with name `{}`.", q.embedder),
        ));
    }
    let allowed = allowed_ids(
        index,
        &rtxn,
        q.filter.as_ref(),
        settings,
        Code::InvalidSimilarFilter,
        (q.contains_filter, q.foreign_ids.as_deref()),
    )?;
    let filtered = Instant::now();
    let Some(target) = index.store().internal_id(&rtxn, &q.id)? else {
        return Err(Error::new(
            Code::NotFoundSimilarId,
            format!("Document `{}` not found.", q.id),
        ));
    };
    let mut candidates = (*allowed_or_all(index, &rtxn, &allowed)?).clone();
    candidates.remove(target);
    let max_total_hits = settings.max_total_hits();
    let window = Window {
        offset: q.offset,
        limit: q.limit.min(max_total_hits.saturating_sub(q.offset)),
    };
    let space = Registry::load(index.store(), &rtxn)?
        .get(&q.embedder)
        .map(|e| e.space());
    let mut hits: Vec<Ranked> = Vec::new();
    if let Some(space) = space {
        let need = match q.ranking_score_threshold {
            Some(_) => candidates.len() as usize,
            None => window.end(),
        };
        hits = index
            .store()
            .vectors
            .nearest_to_item(&rtxn, space, target, Some(&candidates), need)?
            .into_iter()
            .map(|(iid, s)| Ranked::semantic(iid, Some(s)))
            .collect();
    }
    if let Some(t) = q.ranking_score_threshold {
        hits.retain(|r| r.score() >= t);
    }
    let total = match q.ranking_score_threshold {
        Some(_) => hits.len(),
        None => candidates.len() as usize,
    };
    let page: Vec<Ranked> = hits
        .into_iter()
        .skip(window.offset)
        .take(window.limit)
        .collect();
    // The hits print as search hits do.
    let as_search: SearchQuery = serde_json::from_value(json!({
        "attributesToRetrieve": q.attributes_to_retrieve,
        "retrieveVectors": q.retrieve_vectors,
        "showRankingScore": q.show_ranking_score,
        "showRankingScoreDetails": q.show_ranking_score_details,
    }))
    .map_err(Error::internal)?;
    let ranked = Instant::now();
    let result = SearchResult {
        hits: page,
        candidates: total,
        max_total_hits,
        facets: None,
        query: String::new(),
        words: Vec::new(),
        phrases: Vec::new(),
        rules: Vec::new(),
        semantic_rules: vec![rank::Rule::Vector],
        key_specs: Vec::new(),
        geo_point: None,
        semantic_hits: None,
        query_vector: None,
        timings: Timings {
            started,
            filtered,
            ranked,
        },
    };
    let printed = Printer::new(index, &rtxn, settings, &as_search).hits(&result)?;
    let mut body = Map::new();
    body.insert("hits".into(), Value::Array(printed));
    body.insert("id".into(), Value::String(q.id.clone()));
    body.insert(
        "processingTimeMs".into(),
        (started.elapsed().as_millis() as u64).into(),
    );
    body.insert("limit".into(), q.limit.into());
    body.insert("offset".into(), q.offset.into());
    body.insert(
        "estimatedTotalHits".into(),
        total.min(max_total_hits).into(),
    );
    if q.show_performance_details {
        let span = |a: Instant, b: Instant| format!("{:.2?}", b.duration_since(a));
        let done = Instant::now();
        body.insert(
            "performanceDetails".into(),
            json!({
                "similar > filter": span(started, filtered),
                "similar > vector search": span(filtered, ranked),
                "similar > format": span(ranked, done),
                "similar": span(started, done),
            }),
        );
    }
    serde_json::to_vec(&body).map_err(Error::internal)
}
