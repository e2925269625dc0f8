//! Facet search (`POST /indexes/{uid}/facet-search`): the values of one facet among the
//! documents a query and filter match, with their counts. It runs the first steps of a search
//! (filter, query words, negations, the keyword candidates) and then counts the facet's values
//! over every candidate instead of ordering a page; distinct and the `faceting` settings are
//! the search's own.

use std::time::Instant;

use api_types::{Code, Error, Result};
use roaring::RoaringBitmap;
use serde_json::Value;

use super::distinct::apply_distinct;
use super::printer::facet_search_body;
use super::semantic::Mode;
use super::{rank, rule_list, search_on, FacetSearchQuery};
use crate::facets;
use crate::filter::rules;
use crate::index::Index;
use crate::search::filtering::filter_ids;
use crate::search::SearchContext;
use crate::settings::Settings;

impl SearchContext<'_> {
    /// `POST /indexes/{uid}/facet-search`: the values of one facet among the documents the
    /// accompanying query and filter match, with their counts.
    pub(crate) fn facet_search(&self, q: &FacetSearchQuery, started: Instant) -> Result<Vec<u8>> {
        let settings = &*self.settings;
        if !settings.facet_search {
            return Err(Error::new(
                Code::FacetSearchDisabled,
                "The facet search is disabled for this index",
            ));
        }
        // A vector without `hybrid` first, then the filter's syntax, `attributesToSearchOn`
        // (with a query or not), the filter against the settings and the facet's name, as
        // Meilisearch checks them.
        if q.hybrid.is_none() && q.vector.is_some() {
            return Err(super::semantic::missing_hybrid());
        }
        let filter = match q.filter.as_ref() {
            Some(value) => crate::filter::parse_request(
                value,
                Code::InvalidSearchFilter,
                q.contains_filter,
                q.foreign_ids.as_deref(),
            )?,
            None => None,
        };
        let fields = || self.fields_map().read().unwrap().names().to_vec();
        let search_on = search_on(settings, q.attributes_to_search_on.as_deref(), fields)?;
        let allowed = match (filter, q.filter.as_ref()) {
            (Some(mut filter), Some(value)) => {
                filter
                    .validate(settings)
                    .map_err(|m| Error::new(Code::InvalidSearchFilter, m))?;
                filter.bind_geo(settings);
                Some(filter_ids(
                    self.index(),
                    &self.rtxn,
                    &filter,
                    (value, q.foreign_ids.as_deref()),
                )?)
            }
            _ => None,
        };
        let filter_rules = rules::rules_of(settings);
        if let Some(m) = rules::facet_search_error(&filter_rules, &q.facet_name) {
            return Err(Error::new(Code::InvalidFacetSearchFacetName, m));
        }
        // A semantic or hybrid query has every allowed document as a candidate (its semantic
        // side ranks them all): the words then restrict nothing.
        let text = q.q.as_deref().unwrap_or("");
        let mode = self.search_mode(text, q.vector.as_deref(), q.hybrid.as_ref(), None)?;
        let text = match mode {
            Mode::Keyword { .. } => text,
            Mode::Semantic(_) | Mode::Hybrid(..) => "",
        };
        let searcher = &self.searcher;
        let (mut terms, allowed) = self.keyword_candidates(
            text,
            (q.matching_strategy.as_deref(), q.locales.as_deref()),
            allowed,
            None,
        )?;
        let mut set: RoaringBitmap = if terms.is_placeholder() {
            (*self.allowed_or_all(&allowed)?).clone()
        } else {
            // Every candidate: `words` alone orders them, nothing more is needed, unless a
            // score threshold asks for the search's score (under the index's ranking rules).
            let threshold = q.ranking_score_threshold.filter(|t| *t > 0.0);
            let names = match threshold {
                Some(_) => settings.ranking_rules().to_vec(),
                None => Vec::new(),
            };
            let (rules, _) = rule_list(&names, &[], false, terms.drop_order.is_none());
            self.derive_typos(searcher, &mut terms)?;
            let ranking = rank::Ranking {
                allowed: allowed.as_deref(),
                search_on: search_on.as_deref(),
                rules: &rules,
                key_specs: &[],
                deadline: started + settings.search_cutoff(),
            };
            self.rank(&mut terms, ranking, None)?
                .0
                .into_iter()
                .filter(|r| threshold.is_none_or(|t| r.verdict.score() >= t))
                .map(|r| r.iid)
                .collect()
        };
        if let (true, Some(field)) = (q.exhaustive_facet_count, settings.distinct_attribute()) {
            let column = self.columns(&[field.to_string()])?.remove(0);
            let order: Vec<u32> = set.iter().collect();
            set = apply_distinct(&column, order, |iid| iid)
                .into_iter()
                .collect();
        }
        let column = self.columns(std::slice::from_ref(&q.facet_name))?.remove(0);
        let typos = facet_query_typos(settings, &q.facet_name, q.facet_query.as_deref());
        let hits = facets::count(&column, &set).search(
            &column,
            q.facet_query.as_deref(),
            typos,
            settings.max_values_per_facet(),
            settings.facet_order(&q.facet_name),
        );
        facet_search_body(hits, q.facet_query.as_deref(), started, None)
    }
}

/// A facet search over several instances of a network: their `facetHits` (each cut at
/// `maxValuesPerFacet`) as one list, counts added per value (values compared in their
/// normal form, the first spelling shown), in this index's order for the facet, cut again.
pub(crate) fn merge_facet_hits(index: &Index, request_json: &str) -> Result<Vec<u8>> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Hit {
        value: String,
        count: u64,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Request {
        facet_name: String,
        #[serde(default)]
        facet_query: Option<String>,
        pages: Vec<Vec<Hit>>,
        #[serde(default)]
        remote_errors: serde_json::Map<String, Value>,
    }
    let started = Instant::now();
    let req: Request = serde_json::from_str(request_json).map_err(Error::internal)?;
    let rtxn = index.read_txn()?;
    let settings = index.settings(&rtxn)?;
    let mut merged: Vec<(String, String, u64)> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = Default::default();
    for hit in req.pages.into_iter().flatten() {
        let norm = crate::value::normalize(&hit.value).into_owned();
        match at.get(&norm) {
            Some(&i) => merged[i].2 += hit.count,
            None => {
                at.insert(norm.clone(), merged.len());
                merged.push((norm, hit.value, hit.count));
            }
        }
    }
    match settings.facet_order(&req.facet_name) {
        facets::FacetOrder::Alpha => merged.sort_by(|a, b| a.0.cmp(&b.0)),
        facets::FacetOrder::Count => merged.sort_by(|a, b| b.2.cmp(&a.2).then(b.0.cmp(&a.0))),
    }
    let hits = merged
        .into_iter()
        .take(settings.max_values_per_facet())
        .map(|(_, value, count)| (value, count))
        .collect();
    facet_search_body(
        hits,
        req.facet_query.as_deref(),
        started,
        Some(req.remote_errors),
    )
}

/// How many typos a facet query may hold: by its length in bytes; none when the facet is in
/// `disableOnAttributes` or the query in `disableOnWords`.
fn facet_query_typos(settings: &Settings, facet: &str, query: Option<&str>) -> u8 {
    let Some(query) = query else { return 0 };
    if settings.typos_disabled_on(facet) || settings.typos_disabled_for(query) {
        return 0;
    }
    settings.typos_for_length(query.trim().len())
}
