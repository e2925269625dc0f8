//! What one search reads, taken together when it starts.

use std::sync::{Arc, Mutex, RwLock};

use api_types::Result;
use tantivy::columnar::Column;
use tantivy::SegmentReader;

use crate::codec::FieldsMap;
use crate::index::cache::{VectorTables, WordCache};
use crate::index::segments::{DocsByIid, SegmentLengths, Words};
use crate::index::text::PairWords;
use crate::index::{Fields, Index};
use crate::settings::Settings;
use crate::store::Store;

/// The read side of one search: the LMDB read transaction (a snapshot of the documents and
/// settings), the typed settings of its generation, tantivy's searcher and the pair words
/// published with it, and the index they were read from. Built by one call
/// ([`Index::search_context`]); the steps of a search are its methods (or take it), so every
/// step reads the same state, and reads the index only through the accessors below: the
/// document store, the tantivy fields, the fields map and the caches the searches share.
pub(crate) struct SearchContext<'i> {
    index: &'i Index,
    pub rtxn: heed::RoTxn<'i, heed::WithoutTls>,
    pub settings: Arc<Settings>,
    pub searcher: tantivy::Searcher,
    pub pairs: Arc<PairWords>,
}

impl<'i> SearchContext<'i> {
    /// The index this context reads.
    #[inline]
    pub(crate) fn index(&self) -> &'i Index {
        self.index
    }

    /// The LMDB document store.
    #[inline]
    pub(crate) fn store(&self) -> &'i Store {
        self.index.store()
    }

    /// The tantivy fields of a document.
    #[inline]
    pub(crate) fn fields(&self) -> &'i Fields {
        self.index.schema_fields()
    }

    /// The committed fields map (or a superset), for decoding documents.
    #[inline]
    pub(crate) fn fields_map(&self) -> &'i RwLock<Arc<FieldsMap>> {
        self.index.fields_map()
    }

    /// The vector graphs' tables of the newest generation searched.
    #[inline]
    pub(crate) fn vector_tables(&self) -> &'i Arc<Mutex<VectorTables>> {
        self.index.vector_tables()
    }

    /// Typo walks and splits of recent query words.
    #[inline]
    pub(crate) fn word_cache(&self) -> &'i Mutex<WordCache> {
        self.index.word_cache()
    }

    /// The lengths column of one segment, opened once.
    #[inline]
    pub(crate) fn segment_lens(&self, reader: &SegmentReader) -> tantivy::Result<Column<u64>> {
        self.index.segment_lens(reader)
    }

    /// One segment's documents by field length, decoded once.
    #[inline]
    pub(crate) fn segment_lengths(
        &self,
        reader: &SegmentReader,
    ) -> tantivy::Result<Arc<SegmentLengths>> {
        self.index.segment_lengths(reader)
    }

    /// One segment's dictionary of words, opened once.
    #[inline]
    pub(crate) fn segment_words(&self, reader: &SegmentReader) -> Result<Arc<Words>> {
        self.index.segment_words(reader)
    }

    /// The document of each internal id in one segment, once.
    #[inline]
    pub(crate) fn segment_docs(&self, reader: &SegmentReader) -> tantivy::Result<Arc<DocsByIid>> {
        self.index.segment_docs(reader)
    }

    /// The internal id of each document of one segment, decoded once.
    #[inline]
    pub(crate) fn segment_iids(&self, reader: &SegmentReader) -> tantivy::Result<Arc<[u32]>> {
        self.index.segment_iids(reader)
    }

    /// The context of a search starting now on `index`: the settings are those of the
    /// transaction's generation; the pair words are read before the searcher (see
    /// [`Index::searcher`]).
    pub(crate) fn of(index: &'i Index) -> Result<SearchContext<'i>> {
        let rtxn = index.read_txn()?;
        let settings = index.settings(&rtxn)?;
        let (searcher, pairs) = index.searcher();
        Ok(SearchContext {
            index,
            rtxn,
            settings,
            searcher,
            pairs,
        })
    }
}
