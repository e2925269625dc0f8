//! The printer: turns a typed search result into the response JSON bytes.
//!
//! The search steps never build JSON; they hand over internal ids with their verdicts, the
//! totals, the facet counts and the timings (a [`SearchResult`]). The printer reads each hit's
//! document, projects it (`displayedAttributes`, then `attributesToRetrieve`), adds what the
//! request asked for (`_formatted`, `_matchesPosition`, `_geoDistance`, `_rankingScore`,
//! `_rankingScoreDetails`), then lays out the body. The body's key order is part of the
//! contract (clients snapshot it): `hits`, `query`, `processingTimeMs`, the pagination fields,
//! `facetDistribution`, `facetStats`, `performanceDetails`.

use std::time::Instant;

use api_types::{Error, Result};
use serde_json::{json, Map, Value};

use super::faceting::FacetCounts;
use super::format::{self, QueryPhrase, QueryWord};
use super::page::Pagination;
use super::{key_paths, rank, score_details, Ranked, SearchQuery};
use crate::index::{project, retrieve, Index};
use crate::languages::{self, Locales};
use crate::search::columns;
use crate::settings::Settings;
use crate::sort::{self, SortKey};
use crate::store::heed_error;

/// What a search found, before printing.
pub(super) struct SearchResult {
    /// The page's hits in order: internal ids with their verdicts and sort keys.
    pub hits: Vec<Ranked>,
    /// How many documents matched (the response caps it at `maxTotalHits`).
    pub candidates: usize,
    pub max_total_hits: usize,
    /// Facet counts, when the request asked for facets.
    pub facets: Option<FacetCounts>,
    /// The query as typed, and its words as highlighting matches them.
    pub query: String,
    pub words: Vec<QueryWord>,
    pub phrases: Vec<QueryPhrase>,
    /// The rules that ranked the hits and the sort keys they read (for the score details);
    /// hits of the semantic side were ranked by `semantic_rules`.
    pub rules: Vec<rank::Rule>,
    pub semantic_rules: Vec<rank::Rule>,
    pub key_specs: Vec<SortKey>,
    /// Where `_geoDistance` is measured from: the `_geoPoint` sort key's point.
    pub geo_point: Option<(f64, f64)>,
    /// `semanticHitCount`: how many hits of the page the semantic side gave (semantic and
    /// hybrid searches only).
    pub semantic_hits: Option<usize>,
    /// `queryVector`, shown when vectors are retrieved.
    pub query_vector: Option<Vec<f32>>,
    pub timings: Timings,
}

/// When each step of a search ended.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timings {
    pub started: Instant,
    pub filtered: Instant,
    pub ranked: Instant,
}

/// Whether `q` asks for `_formatted`.
pub(super) fn formatting(q: &SearchQuery) -> bool {
    q.attributes_to_highlight
        .as_ref()
        .is_some_and(|a| !a.is_empty())
        || q.attributes_to_crop.as_ref().is_some_and(|a| !a.is_empty())
}

/// Prints search results for one request on one index.
pub(super) struct Printer<'a> {
    index: &'a Index,
    rtxn: &'a heed::RoTxn<'a>,
    settings: &'a Settings,
    q: &'a SearchQuery,
}

impl<'a> Printer<'a> {
    pub(super) fn new(
        index: &'a Index,
        rtxn: &'a heed::RoTxn<'a>,
        settings: &'a Settings,
        q: &'a SearchQuery,
    ) -> Self {
        Printer {
            index,
            rtxn,
            settings,
            q,
        }
    }

    /// The response body of `result`. Hits are written one at a time as they are printed, so
    /// a page of many documents never holds all of them as JSON values at once.
    pub(super) fn print(&self, result: SearchResult) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(4096);
        out.extend_from_slice(b"{\"hits\":[");
        let mut first = true;
        self.each_hit(&result, |_, hit| {
            if !std::mem::take(&mut first) {
                out.push(b',');
            }
            serde_json::to_writer(&mut out, &hit).map_err(Error::internal)
        })?;
        out.extend_from_slice(b"],");
        let formatted_at = Instant::now();
        let t = result.timings;
        let ms = t.started.elapsed().as_millis() as u64;
        let mut body = Map::new();
        body.insert("query".into(), Value::String(result.query));
        if let Some(v) = result.query_vector {
            body.insert("queryVector".into(), json!(v));
        }
        body.insert("processingTimeMs".into(), ms.into());
        Pagination::of(self.q, result.candidates, result.max_total_hits).write(&mut body);
        if let Some(facets) = result.facets {
            let (distribution, stats) = facets_json(facets);
            body.insert("facetDistribution".into(), distribution);
            body.insert("facetStats".into(), stats);
        }
        if let Some(n) = result.semantic_hits {
            body.insert("semanticHitCount".into(), n.into());
        }
        if self.q.show_performance_details {
            let span = |a: Instant, b: Instant| format!("{:.2?}", b.duration_since(a));
            body.insert(
                "performanceDetails".into(),
                json!({
                    "search > filter": span(t.started, t.filtered),
                    "search > keyword search and ranking": span(t.filtered, t.ranked),
                    "search > format": span(t.ranked, formatted_at),
                    "search": span(t.started, formatted_at),
                }),
            );
        }
        // The rest of the body after `hits` (`query` is always there, so it is not empty).
        let rest = serde_json::to_vec(&body).map_err(Error::internal)?;
        out.extend_from_slice(&rest[1..]);
        Ok(out)
    }

    /// The page's hits as the response shows them; a hit whose document is gone is skipped.
    pub(super) fn hits(&self, result: &SearchResult) -> Result<Vec<Value>> {
        let mut hits = Vec::with_capacity(result.hits.len());
        self.each_hit(result, |_, hit| {
            hits.push(Value::Object(hit));
            Ok(())
        })?;
        Ok(hits)
    }

    /// Whether `attributesToHighlight` or `attributesToCrop` select a displayed field the
    /// index has: otherwise hits have no `_formatted`, as on Meilisearch.
    fn formats_a_known_field(&self) -> bool {
        let q = self.q;
        let displayed = self.settings.displayed();
        let fields = self.index.fields_map().read().unwrap();
        let known = fields.names().iter().chain(fields.nested()).any(|name| {
            let asked = format::selected(q.attributes_to_highlight.as_deref(), name).is_some()
                || format::selected(q.attributes_to_crop.as_deref(), name).is_some();
            asked
                && displayed.is_none_or(|d| d.iter().any(|a| crate::filter::eval::within(name, a)))
        });
        known
    }

    /// Hands each of the page's hits, as the response shows it, to `f`, in order; a hit whose
    /// document is gone is skipped.
    pub(super) fn each_hit(
        &self,
        result: &SearchResult,
        mut f: impl FnMut(&Ranked, Map<String, Value>) -> Result<()>,
    ) -> Result<()> {
        let q = self.q;
        let displayed = self.settings.displayed();
        let retrieve_fields = q
            .attributes_to_retrieve
            .as_deref()
            .filter(|a| !a.iter().any(|f| f == "*"));
        let formatting = formatting(q) && self.formats_a_known_field();
        let matching = format::Matching {
            words: &result.words,
            phrases: &result.phrases,
        };
        let key_columns = if q.show_ranking_score_details && !result.key_specs.is_empty() {
            columns(self.index, self.rtxn, &key_paths(&result.key_specs))?
        } else {
            Vec::new()
        };
        // `_vectors` only when asked for and displayed.
        let vectors_view = match q.retrieve_vectors
            && displayed.is_none_or(|d| d.iter().any(|f| f == "_vectors"))
        {
            true => Some(self.index.vectors_view(self.rtxn, self.settings)?),
            false => None,
        };
        // One tokenizer for every hit's formatting; each field cut in the request's locales,
        // or else in its own.
        let highlighter = self.settings.highlighter();
        let request_languages = q.locales.as_deref().and_then(languages::languages);
        let locales = Locales::from_settings(self.settings);
        let field_languages = format::FieldLanguages {
            request: request_languages.as_deref(),
            locales: (!locales.is_empty()).then_some(&locales),
        };
        highlighter.with(|tokenizer| -> Result<()> {
            let format_options = format::Options {
                matching,
                tokenizer,
                languages: field_languages,
                highlight: q.attributes_to_highlight.as_deref(),
                crop: q.attributes_to_crop.as_deref(),
                crop_length: q.crop_length,
                crop_marker: &q.crop_marker,
                pre_tag: &q.highlight_pre_tag,
                post_tag: &q.highlight_post_tag,
            };
            let format_paths = format::formatted_paths(retrieve_fields, &format_options);
            for ranked in &result.hits {
                let iid = ranked.iid;
                let Some(bytes) = self
                    .index
                    .store()
                    .docs
                    .get(self.rtxn, &iid)
                    .map_err(heed_error)?
                else {
                    continue;
                };
                let mut doc = self.index.decode_doc(bytes)?;
                let vectors = match &vectors_view {
                    Some(view) => Some(view.of(self.index, self.rtxn, iid, doc.get("_vectors"))?),
                    None => None,
                };
                if let Some(displayed) = displayed {
                    doc = project(doc, Some(displayed), true);
                }
                let shown = (formatting || q.show_matches_position).then(|| {
                    let mut d = doc.clone();
                    d.remove("_vectors");
                    d
                });
                let mut hit = retrieve(doc, retrieve_fields, vectors);
                if let Some(shown) = &shown {
                    if formatting {
                        let base = match &format_paths {
                            Some(paths) => project(shown.clone(), Some(paths), true),
                            None => shown.clone(),
                        };
                        let f = format::formatted(&base, &format_options);
                        if !f.is_empty() {
                            hit.insert("_formatted".into(), Value::Object(f));
                        }
                    }
                    if q.show_matches_position {
                        hit.insert(
                            "_matchesPosition".into(),
                            format::matches_position(shown, matching, (tokenizer, field_languages)),
                        );
                    }
                }
                if let Some((lat, lng)) = result.geo_point {
                    if let Some((dlat, dlng)) = sort::geo_of(&hit) {
                        let d = sort::haversine_m(lat, lng, dlat, dlng).round() as u64;
                        hit.insert("_geoDistance".into(), Value::from(d));
                    }
                }
                if q.show_ranking_score {
                    hit.insert("_rankingScore".into(), json!(ranked.score()));
                }
                if q.show_ranking_score_details {
                    let rules = match ranked.semantic {
                        true => &result.semantic_rules,
                        false => &result.rules,
                    };
                    let details = score_details(ranked, rules, &result.key_specs, &key_columns);
                    hit.insert("_rankingScoreDetails".into(), Value::Object(details));
                }
                f(ranked, hit)?;
            }
            Ok(())
        })
    }
}

/// `facetDistribution` and `facetStats`.
pub(super) fn facets_json(facets: FacetCounts) -> (Value, Value) {
    let stats: Map<String, Value> = facets
        .stats
        .iter()
        .map(|s| (s.name.clone(), json!({"min": s.min, "max": s.max})))
        .collect();
    (Value::Object(facets.distribution), Value::Object(stats))
}

/// The response body of a facet search: the values with their counts, in order.
pub(super) fn facet_search_body(
    hits: Vec<(String, u64)>,
    facet_query: Option<&str>,
    started: Instant,
    remote_errors: Option<Map<String, Value>>,
) -> Result<Vec<u8>> {
    let hits: Vec<Value> = hits
        .into_iter()
        .map(|(value, count)| json!({"value": value, "count": count}))
        .collect();
    let ms = started.elapsed().as_millis() as u64;
    let mut body = json!({
        "facetHits": hits,
        "facetQuery": facet_query,
        "processingTimeMs": ms,
    });
    if let Some(errors) = remote_errors {
        body["remoteErrors"] = Value::Object(errors);
    }
    serde_json::to_vec(&body).map_err(Error::internal)
}
