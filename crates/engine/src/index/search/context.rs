//! What one search reads, taken together when it starts.

use std::sync::Arc;

use api_types::Result;

use crate::index::text::PairWords;
use crate::index::Index;
use crate::settings::Settings;

/// The read side of one search: the LMDB read transaction (a snapshot of the documents and
/// settings), the typed settings of its generation, tantivy's searcher and the pair words
/// published with it. Built by one call ([`Index::search_context`]) and handed to the steps
/// of a search instead of each piece, so every step reads the same state. (The steps are still
/// methods of [`Index`], which holds the caches they share; moving them onto the context is
/// the next step of the read/write split.)
pub(crate) struct SearchContext<'i> {
    pub rtxn: heed::RoTxn<'i, heed::WithoutTls>,
    pub settings: Arc<Settings>,
    pub searcher: tantivy::Searcher,
    pub pairs: Arc<PairWords>,
}

impl Index {
    /// The context of a search starting now: the settings are those of the transaction's
    /// generation; the pair words are read before the searcher (see [`Index::searcher`]).
    pub(crate) fn search_context(&self) -> Result<SearchContext<'_>> {
        let rtxn = self.store.read()?;
        let settings = self.settings(&rtxn)?;
        let (searcher, pairs) = self.searcher();
        Ok(SearchContext {
            rtxn,
            settings,
            searcher,
            pairs,
        })
    }
}
