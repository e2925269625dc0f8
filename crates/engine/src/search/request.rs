//! The first steps of a search: the request read against the index. The filter is read
//! first and applied once the other parameters have been read (`SearchContext::search_result`
//! gives Meilisearch's order, which decides the error a request with several mistakes
//! gets); then the parameters are checked against the settings: sort keys need `sort` among
//! the ranking rules and sortable attributes, `facets` filterable attributes (patterns expand
//! to those the documents hold); the page window is cut to `maxTotalHits`. Last, the query's
//! words and the allowed set without the negated words: the keyword candidates. Facet search
//! shares the filter and the candidates.

use std::sync::Arc;

use api_types::{Code, Error, Result};
use roaring::RoaringBitmap;

use super::page::Window;
use super::{SearchQuery, Terms};
use crate::filter::{rules, Filter};
use crate::search::filtering::filter_ids;
use crate::search::SearchContext;
use crate::sort::{self, SortKey};

/// A search request checked against the index's settings.
pub(super) struct Request {
    /// The ranking rule names in use.
    pub rules: Vec<String>,
    /// The request's sort keys, in order.
    pub sort_keys: Vec<SortKey>,
    /// The attribute the search is distinct on.
    pub distinct: Option<String>,
    /// The concrete facets to count, when `facets` was given.
    pub facet_names: Option<Vec<String>>,
    pub max_total_hits: usize,
    pub window: Window,
}

impl Request {
    /// Where `_geoDistance` is measured from: the point of the `_geoPoint` sort key.
    pub(super) fn geo_point(&self) -> Option<(f64, f64)> {
        self.sort_keys.iter().find_map(|k| match k {
            SortKey::GeoPoint { lat, lng, .. } => Some((*lat, *lng)),
            _ => None,
        })
    }
}

impl SearchContext<'_> {
    /// A search's `filter`, read (its syntax, and `CONTAINS` against the feature) before the
    /// other parameters are checked; [`SearchContext::search_filtered`] applies it after them.
    pub(super) fn search_filter(&self, q: &SearchQuery) -> Result<Option<Filter>> {
        let Some(value) = q.filter.as_ref() else {
            return Ok(None);
        };
        let filter = crate::filter::parse_request(
            value,
            Code::InvalidSearchFilter,
            q.contains_filter,
            q.foreign_ids.as_deref(),
        )?;
        Ok(filter.map(|mut filter| {
            if q.index_uid.is_some() {
                filter.quote_rendered();
            }
            filter
        }))
    }

    /// A search's read `filter` applied (the documents it lets through), with Meilisearch's search
    /// errors about the index's settings (an attribute that is not filterable, a bad geo value)
    /// when the query names its index: the filter quoted as written out, the index named.
    pub(super) fn search_filtered(
        &self,
        q: &SearchQuery,
        filter: Option<Filter>,
    ) -> Result<Option<Arc<RoaringBitmap>>> {
        let rtxn = &self.rtxn;
        let settings = &*self.settings;
        let (Some(mut filter), Some(value)) = (filter, q.filter.as_ref()) else {
            return Ok(None);
        };
        filter
            .validate(settings)
            .map_err(|m| in_index(q, Error::new(Code::InvalidSearchFilter, m)))?;
        filter.bind_geo(settings);
        let key = (value, q.foreign_ids.as_deref());
        // A `_vectors` condition naming what the settings lack is about the index too.
        let ids = filter_ids(self.index(), rtxn, &filter, key).map_err(|e| match e.code {
            Code::InvalidSearchFilter => in_index(q, e),
            _ => e,
        })?;
        Ok(Some(ids))
    }

    /// The words of `text` (derived as `pins` say, when given) and the `allowed` set without
    /// the documents holding a negated word.
    pub(super) fn keyword_candidates(
        &self,
        text: &str,
        (matching_strategy, locales): (Option<&str>, Option<&[String]>),
        allowed: Option<Arc<RoaringBitmap>>,
        pins: Option<&super::query::Pins>,
    ) -> Result<(Terms, Option<Arc<RoaringBitmap>>)> {
        let terms = self.terms(text, (matching_strategy, locales), pins)?;
        let allowed = self.without_negated(&self.searcher, &terms, allowed)?;
        Ok((terms, allowed))
    }

    /// Checks `q`'s sort, distinct, facets and pagination against `settings`.
    pub(super) fn parse_request(
        &self,
        q: &SearchQuery,
        (sort_keys, distinct): (Vec<SortKey>, Option<String>),
    ) -> Result<Request> {
        let settings = &*self.settings;
        let rules = settings.ranking_rules().to_vec();
        let sort_keys = match sort_keys.is_empty() {
            false => {
                let keys = sort_keys;
                if !rules.iter().any(|r| r == "sort") {
                    return Err(in_index(q, Error::new(
                        Code::InvalidSearchSort,
                        "You must specify where `sort` is listed in the rankingRules setting to use the sort parameter at search time.",
                    )));
                }
                let sortable = &settings.sortable_attributes;
                sort::check(&keys, sortable, Code::InvalidSearchSort)
                    .map_err(|e| in_index(q, e))?;
                keys
            }
            true => Vec::new(),
        };
        let filter_rules = rules::rules_of(settings);
        let facet_names = match &q.facets {
            Some(requested) => Some(self.facet_names(requested, &filter_rules)?),
            None => None,
        };
        let max_total_hits = settings.max_total_hits();
        Ok(Request {
            rules,
            sort_keys,
            distinct,
            facet_names,
            max_total_hits,
            window: Window::of(q, max_total_hits),
        })
    }
}

/// An error about the index's settings, named after the index as Meilisearch's search names
/// it (`Index \`movies\`: Attribute \`x\` is not sortable…`).
pub(super) fn in_index(q: &SearchQuery, e: Error) -> Error {
    match &q.index_uid {
        Some(uid) => Error::new(e.code, format!("Index `{uid}`: {}", e.message)),
        None => e,
    }
}
