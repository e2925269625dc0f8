//! The first step of a search, after the filter: the request's parameters checked against
//! the index's settings. Sort keys need `sort` among the ranking rules and sortable
//! attributes, `distinct` a filterable attribute, `facets` filterable attributes (patterns
//! expand to those the documents hold); the page window is cut to `maxTotalHits`. The checks
//! run in this order, which decides the error a request with several mistakes gets.

use api_types::{Error, Result};
use serde_json::Value;

use super::distinct::distinct_field;
use super::page::{max_total_hits, Window};
use super::{ranking_rules, SearchQuery};
use crate::filter::rules;
use crate::index::{string_list, Index};
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

impl Index {
    /// Checks `q`'s sort, distinct, facets and pagination against `settings`.
    pub(super) fn parse_request(
        &self,
        rtxn: &heed::RoTxn,
        settings: Option<&Value>,
        q: &SearchQuery,
    ) -> Result<Request> {
        let rules = ranking_rules(settings);
        let sort_keys = match q.sort.as_deref() {
            Some(specs) if !specs.is_empty() => {
                if !rules.iter().any(|r| r == "sort") {
                    return Err(Error::new(
                        "invalid_search_sort",
                        "You must specify where `sort` is listed in the rankingRules setting to use the sort parameter at search time.",
                    ));
                }
                let sortable = string_list(settings, "sortableAttributes").unwrap_or_default();
                sort::parse(specs, &sortable, "invalid_search_sort")?
            }
            _ => Vec::new(),
        };
        let filter_rules = rules::rules_of(settings);
        let distinct = distinct_field(q.distinct.as_deref(), settings, &filter_rules)?;
        let facet_names = match &q.facets {
            Some(requested) => Some(self.facet_names(rtxn, requested, &filter_rules)?),
            None => None,
        };
        let max_total_hits = max_total_hits(settings);
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
