//! The read side of an index: search and facet search, as a pipeline of small steps. One
//! search walks through them in this order ([`SearchContext::search`] calls them one after the
//! other):
//!
//! 1. **Parse the request** ([`wire`] holds its shape and defaults): the filter becomes the
//!    allowed set of internal ids, then [`request`] checks sort, distinct and facets against
//!    the settings and [`page`] turns offset/limit or page/hitsPerPage into a window.
//! 2. **Candidates**: the query is cut into words and phrases with charabia (see
//!    [`crate::tokens`]); each word gets its alternatives (prefix completions of the last
//!    word, synonyms, typo derivations); negated words leave the allowed set.
//! 3. **Ranking** ([`collect`]): keyword candidates are ranked by the relevancy rules
//!    computed per document from the positions tantivy stores (see [`ranking`]), level by level
//!    while `words` and `typo` lead the rules, so a page usually ranks only the documents
//!    keeping every query word without typos. Sort keys come from the value columns (see
//!    [`crate::facets`]). A placeholder search needs no ranking: internal-id order, or the
//!    value index for one sort key.
//! 4. **Distinct** ([`distinct`]): the first document of each value of the distinct
//!    attribute stays.
//! 5. **Page** ([`page`]): the window of the ordered hits, and the total.
//! 6. **Facets** ([`faceting`]): value counts and numeric ranges over the kept documents.
//! 7. **Print** ([`printer`], with [`format`] for highlight and crop): the typed result
//!    (internal ids with their verdicts, totals, facet counts, timings) becomes the response
//!    bytes.
//!
//! The steps before printing build no JSON, so a semantic candidate list can be merged with
//! the keyword one before ranking, and federated search can merge typed hits by score before
//! printing. Facet search ([`facet_search`]) runs steps 1 and 2 and counts one facet's values
//! over every candidate.
//!
//! The steps are methods of a [`SearchContext`] ([`context`]): what one search reads, taken
//! together when it starts (the LMDB snapshot, the settings of its generation, the tantivy
//! searcher), with the index it was read from, which the steps reach only through its
//! accessors (the document store, the tantivy fields, the fields map, the shared caches and
//! segment data); the index's fields stay private to [`crate::index`]. The public entry
//! points (`Index::search`, `facet_search`, `similar`, ...) are thin methods of
//! [`Index`](crate::index::Index) in `index/search.rs`: they build the context and call in
//! here. What needs only the store and the caches, not a searcher, is a function of the
//! index: the value columns ([`columns()`]), every id ([`all_ids`]), filters ([`filtering`],
//! also used when fetching documents), similar documents ([`similar`]).

use std::sync::Arc;
use std::time::Instant;

use api_types::Result;

use crate::facets::Column;
use crate::sort::SortKey;

// The steps (the module doc gives their order).
mod candidates;
mod collect;
mod columns;
mod context;
mod distinct;
pub(crate) mod facet_search;
mod faceting;
mod federated;
pub(crate) mod filtering;
pub(crate) mod format;
mod page;
mod pinned;
mod printer;
mod query;
mod ranking;
mod remote;
mod request;
mod semantic;
pub(crate) mod similar;
mod wire;

pub(crate) use candidates::all_ids;
use candidates::search_on;
use collect::Order;
pub(crate) use columns::columns;
pub(crate) use context::SearchContext;
pub use federated::derivation_candidates_json;
pub use federated::{
    federated_search, federated_search_json, FederatedQuery, Federation, MergeFacets,
};
use page::Window;
use printer::{Printer, SearchResult, Timings};
pub(crate) use query::TypoCandidates;
use query::{group_query, Counted, Group, Reach, TermSet, Terms};
use ranking::{
    self as rank, compare_ranked, rule_list, score_details, semantic_rule_list, steps, Ranked,
};
pub use remote::{Asking, Peers, Remote};
use semantic::{keyword_suffices, merge, Mode};
pub use similar::SimilarQuery;
pub use wire::{FacetSearchQuery, SearchQuery};

/// The columns sort keys read.
fn key_paths(specs: &[SortKey]) -> Vec<String> {
    specs
        .iter()
        .map(|s| match s {
            SortKey::Field { name, .. } => name.clone(),
            SortKey::GeoPoint { .. } => "_geo".to_string(),
        })
        .collect()
}

impl SearchContext<'_> {
    /// Search: see the module's documentation. Each step below is one module.
    pub(crate) fn search(&self, q: &SearchQuery, started: Instant) -> Result<Vec<u8>> {
        let result = self.search_result(q, started)?;
        Printer::new(self.index(), &self.rtxn, &self.settings, q).print(result)
    }
}

impl SearchContext<'_> {
    /// The value columns of `paths` at the context's generation (see [`columns()`]).
    #[inline]
    pub(crate) fn columns(&self, paths: &[String]) -> Result<Vec<Arc<Column>>> {
        let rtxn = &self.rtxn;
        columns(self.index(), rtxn, paths)
    }

    /// Steps 1 to 6 of a search: the typed result, before printing.
    fn search_result(&self, q: &SearchQuery, started: Instant) -> Result<SearchResult> {
        let settings = &*self.settings;
        // Read the request in Meilisearch's order, which decides the error a request with
        // several mistakes gets: the filter's syntax; `media` with `vector`, or either without
        // `hybrid`; the embedder, when the search embeds its query or takes a vector (the
        // query is embedded then); the sort's syntax; `attributesToSearchOn`; `distinct`;
        // then the filter against the settings, the sort's attributes and the facets.
        let filter = self.search_filter(q)?;
        let media = q.media.as_ref().filter(|m| !m.is_null());
        if media.is_some() && q.vector.is_some() {
            return Err(semantic::media_and_vector());
        }
        if q.hybrid.is_none() && (q.vector.is_some() || media.is_some()) {
            return Err(semantic::missing_hybrid());
        }
        let query_text = q.q.clone().unwrap_or_default();
        let mode = self.search_mode(&query_text, q.vector.as_deref(), q.hybrid.as_ref(), media)?;
        // Checked once the query is embedded, as Meilisearch does.
        if media.is_some() && !q.multimodal {
            return Err(api_types::Error::new(
                api_types::Code::FeatureNotEnabled,
                "passing `media` in a search query requires enabling the `multimodal` experimental feature. See https://github.com/orgs/meilisearch/discussions/846",
            ));
        }
        let sort_keys = match q.sort.as_deref() {
            Some(specs) => crate::sort::parse_syntax(specs, api_types::Code::InvalidSearchSort)?,
            None => Vec::new(),
        };
        let fields = || self.fields_map().read().unwrap().names().to_vec();
        let search_on = search_on(settings, q.attributes_to_search_on.as_deref(), fields)
            .map_err(|e| request::in_index(q, e))?;
        let filter_rules = crate::filter::rules::rules_of(settings);
        let distinct = distinct::distinct_field(q.distinct.as_deref(), settings, &filter_rules)
            .map_err(|e| request::in_index(q, e))?;
        let allowed = self.search_filtered(q, filter)?;
        let filtered_at = Instant::now();
        let mut request = self.parse_request(q, (sort_keys, distinct))?;
        // Pinned documents leave the natural order, which is then ranked from the first hit
        // so that they can be placed in it.
        let pinned = self.pinned(q.pinned_documents.as_deref(), allowed.as_deref())?;
        let page_window = request.window;
        let allowed = match pinned.is_empty() {
            true => allowed,
            false => {
                request.window = Window {
                    offset: 0,
                    limit: page_window.end(),
                };
                let mut set = self.allowed_or_all(&allowed)?.as_ref().clone();
                set -= &pinned.set;
                Some(Arc::new(set))
            }
        };
        // Candidates: the query's words, and the allowed set without the negated words (a
        // semantic search has no words: every allowed document is a candidate).
        let keyword_text = match &mode {
            Mode::Semantic(_) => "",
            _ => query_text.as_str(),
        };
        let (mut terms, allowed) = self.keyword_candidates(
            keyword_text,
            (q.matching_strategy.as_deref(), q.locales.as_deref()),
            allowed,
            q.pins.as_ref(),
        )?;
        let placeholder = terms.is_placeholder();
        let (rank_rules, key_specs) = rule_list(
            &request.rules,
            &request.sort_keys,
            placeholder,
            terms.drop_order.is_none(),
        );
        // The semantic side's rules, only when there is one.
        let semantic_rules = match &mode {
            Mode::Keyword { .. } => Vec::new(),
            _ => semantic_rule_list(&request.rules, &request.sort_keys).0,
        };
        // Ranking, distinct, facets and the page.
        let base = Order {
            ctx: self,
            allowed: allowed.clone(),
            rules: &rank_rules,
            key_specs: &key_specs,
            search_on: search_on.as_deref(),
            distinct: request.distinct.as_deref(),
            facet_names: request.facet_names.as_deref(),
            threshold: q.ranking_score_threshold.filter(|t| *t > 0.0),
            key_details: q.show_ranking_score_details,
            scores: q.show_ranking_score || q.show_ranking_score_details,
            window: request.window,
            max_total_hits: request.max_total_hits,
            started,
            pinned: (!pinned.is_empty()).then(|| Arc::new(pinned.set.clone())),
            keep_facet_set: q.keep_facet_set,
        };
        let order = |rules, window| Order {
            rules,
            window,
            ..base.clone()
        };
        let window = request.window;
        let (mut ordered, semantic_hits, query_vector) = match &mode {
            Mode::Keyword { semantic_hits } => (
                self.order(&order(&rank_rules, window), &mut terms)?,
                *semantic_hits,
                None,
            ),
            Mode::Semantic(s) => {
                let ordered = self.semantic_order(&order(&semantic_rules, window), s)?;
                let n = ordered.page.len();
                (ordered, Some(n), Some(s.vector.clone()))
            }
            Mode::Hybrid(s, ratio) => {
                let head = Window {
                    offset: 0,
                    limit: window.end(),
                };
                let keyword = self.order(&order(&rank_rules, head), &mut terms)?;
                if keyword_suffices(&keyword, window, *ratio) {
                    let page = keyword.page.into_iter().skip(window.offset).collect();
                    let keyword = collect::Ordered { page, ..keyword };
                    (keyword, Some(0), Some(s.vector.clone()))
                } else {
                    let semantic = self.semantic_order(&order(&semantic_rules, head), s)?;
                    let distinct = match request.distinct.as_deref() {
                        Some(field) => Some(self.columns(&[field.to_string()])?.remove(0)),
                        None => None,
                    };
                    let sides = semantic::Sides {
                        keyword,
                        keyword_rules: &rank_rules,
                        semantic,
                        semantic_rules: &semantic_rules,
                    };
                    let (merged, n) = merge(sides, *ratio, window, distinct.as_deref());
                    (merged, Some(n), Some(s.vector.clone()))
                }
            }
        };
        if !pinned.is_empty() {
            ordered.page = pinned.place(std::mem::take(&mut ordered.page), page_window);
            ordered.candidates += pinned.len();
        }
        let ranked_at = Instant::now();
        // Highlighting reads the typo derivations.
        if !placeholder && (printer::formatting(q) || q.show_matches_position) {
            self.derive_typos(&self.searcher, &mut terms)?;
        }
        let result = SearchResult {
            hits: ordered.page,
            candidates: ordered.candidates,
            max_total_hits: request.max_total_hits,
            facets: ordered.facets,
            query: query_text,
            words: std::mem::take(&mut terms.words),
            phrases: std::mem::take(&mut terms.phrases),
            rules: rank_rules,
            semantic_rules,
            key_specs,
            geo_point: request.geo_point(),
            semantic_hits,
            query_vector: query_vector.filter(|_| q.retrieve_vectors),
            timings: Timings {
                started,
                filtered: filtered_at,
                ranked: ranked_at,
            },
        };
        Ok(result)
    }
}
