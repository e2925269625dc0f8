//! The read side's entry points on [`Index`]: search, facet search, similar documents and
//! the column warm-up. Each builds what the request reads (a [`SearchContext`] for those
//! that run the search steps) and hands the work to [`crate::search`], where the steps are.

use std::sync::Arc;
use std::time::Instant;

use api_types::Result;
use roaring::RoaringBitmap;

use super::Index;
use crate::search::{self, FacetSearchQuery, SearchContext, SearchQuery, SimilarQuery};

impl Index {
    /// The context of a search starting now (see [`SearchContext::of`]).
    pub(crate) fn search_context(&self) -> Result<SearchContext<'_>> {
        SearchContext::of(self)
    }

    /// Search: the steps are in the crate's `search` module, whose documentation gives them.
    pub fn search(&self, q: &SearchQuery) -> Result<Vec<u8>> {
        let started = q.received.unwrap_or_else(Instant::now);
        self.search_context()?.search(q, started)
    }

    /// `POST /indexes/{uid}/facet-search`: the values of one facet among the documents the
    /// accompanying query and filter match, with their counts.
    pub fn facet_search(&self, q: &FacetSearchQuery) -> Result<Vec<u8>> {
        let started = Instant::now();
        self.search_context()?.facet_search(q, started)
    }

    /// A facet search over several instances of a network: their `facetHits` (each cut at
    /// `maxValuesPerFacet`) as one list, counts added per value (values compared in their
    /// normal form, the first spelling shown), in this index's order for the facet, cut again.
    pub fn merge_facet_hits(&self, request_json: &str) -> Result<Vec<u8>> {
        search::facet_search::merge_facet_hits(self, request_json)
    }

    /// Builds the value columns searches read, so that the first filter, sort or facet count
    /// after the index opens does not: every filterable attribute the documents hold, the
    /// sortable ones and the distinct attribute, in one pass over the documents, with their
    /// value index and numbers' ids. The column cache keeps what its budget allows.
    pub fn prepare_columns(&self) -> Result<()> {
        self.search_context()?.prepare_columns()
    }

    /// `/similar`: `{hits, id, processingTimeMs, limit, offset, estimatedTotalHits}`.
    pub fn similar(&self, q: &SimilarQuery) -> Result<Vec<u8>> {
        search::similar::similar(self, q)
    }

    /// Every internal id `rtxn` sees, cached per generation (see [`search::all_ids`]).
    pub(crate) fn all_ids(&self, rtxn: &heed::RoTxn) -> Result<Arc<RoaringBitmap>> {
        search::all_ids(self, rtxn)
    }
}
