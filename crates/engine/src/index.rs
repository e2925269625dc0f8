//! One index: a set of documents with one primary key, its settings, and the structures that
//! search them.
//!
//! On disk, under the index's directory:
//! - `store/`: the LMDB document store ([`crate::store`]), the source of truth: documents by
//!   internal id, internal ids by external id, and the meta values (primary key, settings,
//!   fields map, field distribution, generation, the dirty set, the last batch's results).
//! - `tantivy/`: the inverted index of the documents' text ([`text`]), derived from LMDB and
//!   tagged with the generation it reached; it can always be rebuilt from `store/`.
//!
//! Who writes: one batch at a time (`batch_lock`), through [`update`]; the commit protocol
//! that keeps the two parts consistent across crashes, and the recovery at [`open`], are in
//! [`update::commit`]. Readers (search, fetch, stats) never wait for a batch: they read an LMDB
//! snapshot and tantivy's last published commit.
//!
//! The modules:
//! - [`open`]: the tantivy schema and opening an index;
//! - [`read_only`]: an index opened beside the process that writes it;
//! - [`update`]: batches of operations (add, delete, settings) and their commit;
//! - [`cache`]: the per-generation caches (typed settings, filter results, value columns,
//!   query words, vector tables);
//! - [`segments`]: what is decoded from each tantivy segment, kept while it lives;
//! - [`documents`]: fetching documents, their projection, and the index's statistics;
//! - [`search`]: the entry points of search, facet search and similar documents, whose steps
//!   are in [`crate::search`] and read an index through the accessors below;
//! - [`text`]: what tantivy holds of a document's text;
//! - [`embeddings`], [`fields`]: the embedders' and the fields' views of an index;
//! - [`cores`]: how many cores a batch's tokenization may use.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use api_types::{Error, Result};
use tantivy::schema::Field;
use tantivy::{IndexReader, IndexWriter};

use crate::codec::FieldsMap;
use crate::settings::Settings;
use crate::store::{keys, Store};

pub(crate) mod cache;
pub(crate) mod cores;
mod documents;
mod embeddings;
mod fields;
pub(crate) mod open;
mod read_only;
mod search;
pub(crate) mod segments;
pub(crate) mod text;
mod update;

pub use crate::search::{
    derivation_candidates_json, federated_search, federated_search_json, Asking, FacetSearchQuery,
    FederatedQuery, Federation, MergeFacets, Peers, Remote, SearchQuery, SimilarQuery,
};
pub use documents::{merge_pages, FetchQuery, IndexStats};
pub use fields::FieldsQuery;
pub use open::TEXT_LAYOUT;
pub use read_only::RELOAD_EVERY;
pub use update::compaction::Compaction;
pub use update::{BatchInput, BatchOp, BatchOpResult, Method, OpCounts, Shards};

// Shared with the submodules (and the printer of search results: `project`, `retrieve`).
use cache::{ColumnCache, FilterCache, SettingsCache, VectorTables, WordCache};
pub(crate) use documents::{project, retrieve};
use update::Progress;

use segments::{SegmentLengths, Segments};

/// The tantivy fields of a document (see [`open`] for the schema).
pub(crate) struct Fields {
    pub(crate) iid: Field,
    pub(crate) words: Field,
    /// Word counts of short fields (see [`text`]).
    pub(crate) lens: Field,
    /// Words by field, and pairs of pair words, documents only (see [`text::field_word`]
    /// and [`text::pair_term`]).
    pub(crate) field_words: Field,
}

pub struct Index {
    dir: PathBuf,
    /// Why the inverted index was rebuilt from the documents when the index opened (a damaged
    /// or missing file), for the caller to say so.
    repaired: Option<String>,
    store: Store,
    tantivy: tantivy::Index,
    reader: IndexReader,
    fields: Fields,
    /// Set when opened read-only beside a writing process (see [`read_only`]).
    read_only: Option<read_only::ReadOnly>,
    writer: Mutex<Option<IndexWriter>>,
    /// How many documents the inverted index held when this process last compacted it (0 for
    /// an index opened empty; `None`: the largest segments stand for them).
    merged_at: Mutex<Option<u64>>,
    /// Whether a merge started by [`Index::compact_later`] is running (one at a time).
    compacting: std::sync::atomic::AtomicBool,
    /// The documents an index needs per part to be compacted into two segments at once
    /// (`update::compaction::COMPACTION_PART_DOCS`; tests lower it).
    compaction_part_docs: u64,
    batch_lock: Mutex<()>,
    progress: Mutex<Option<Progress>>,
    /// The committed fields map (or a superset), for decoding documents on the read paths.
    fields_map: RwLock<Arc<FieldsMap>>,
    /// Recent filter results, each reused only at the generation it was computed for, so a
    /// commit invalidates it.
    filter_cache: Mutex<FilterCache>,
    /// Value columns (sort, distinct, facets) and the set of all ids, for one generation.
    columns: Mutex<ColumnCache>,
    /// What is decoded from the live segments' columns (see [`segments`]).
    segments: Segments,
    /// The typed settings of the newest generation read.
    settings_cache: Mutex<SettingsCache>,
    /// The vector graphs' tables of the newest generation searched.
    vector_tables: Arc<Mutex<VectorTables>>,
    /// The pair words searches read pair terms of (see [`Index::searcher`]): empty until the
    /// commit that indexed the documents with them is published.
    pair_words: RwLock<Arc<text::PairWords>>,
    /// Typo walks and splits of recent query words, for one searcher generation.
    word_cache: Mutex<WordCache>,
}

impl Index {
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Why the inverted index was rebuilt when this index opened, if it was.
    pub fn repaired(&self) -> Option<&str> {
        self.repaired.as_deref()
    }

    /// The pair words, then the searcher. Pair words are chosen once and published only after
    /// the commit indexing every document with them, so read in this order, a search never
    /// looks for a pair term in segments indexed without it.
    pub(crate) fn searcher(&self) -> (tantivy::Searcher, Arc<text::PairWords>) {
        let pairs = self.pair_words.read().unwrap().clone();
        (self.reader.searcher(), pairs)
    }

    /// Publishes the stored pair words, once chosen (they never change after).
    fn publish_pair_words(&self) -> Result<()> {
        if !self.pair_words.read().unwrap().is_empty() {
            return Ok(());
        }
        let rtxn = self.store.read()?;
        if let Some(words) = text::PairWords::stored(&self.store, &rtxn)? {
            *self.pair_words.write().unwrap() = Arc::new(words);
        }
        Ok(())
    }

    /// The index's pair words, sorted (empty until chosen).
    pub fn pair_words(&self) -> Vec<String> {
        self.pair_words.read().unwrap().words()
    }

    /// The typed settings `rtxn` sees, parsed once per generation: a settings update only
    /// lands with a commit, which moves the generation on (see [`cache::SettingsCache`]).
    /// Not for a write transaction holding a batch's own settings: a batch reads those from
    /// its state (see [`update`]).
    pub(crate) fn settings(&self, rtxn: &heed::RoTxn) -> Result<Arc<Settings>> {
        let generation = self.store.get_u64(rtxn, keys::GENERATION)?;
        if let Some(s) = self.settings_cache.lock().unwrap().get(generation) {
            return Ok(s);
        }
        let settings = Arc::new(self.stored_settings(rtxn)?);
        self.settings_cache
            .lock()
            .unwrap()
            .put(generation, settings.clone());
        Ok(settings)
    }

    /// The lengths column of one segment ([`text::LENGTHS_FIELD`]), opened once.
    pub(crate) fn segment_lens(
        &self,
        reader: &tantivy::SegmentReader,
    ) -> tantivy::Result<tantivy::columnar::Column<u64>> {
        self.segments.lens(reader)
    }

    /// One segment's documents by field length ([`SegmentLengths`]), decoded once.
    pub(crate) fn segment_lengths(
        &self,
        reader: &tantivy::SegmentReader,
    ) -> tantivy::Result<Arc<SegmentLengths>> {
        self.segments.lengths(reader)
    }

    /// One segment's dictionary of words, opened once.
    pub(crate) fn segment_words(
        &self,
        reader: &tantivy::SegmentReader,
    ) -> Result<Arc<segments::Words>> {
        self.segments.words(&self.tantivy, reader).map_err(tv)
    }

    /// The document of each internal id in one segment, once.
    pub(crate) fn segment_docs(
        &self,
        reader: &tantivy::SegmentReader,
    ) -> tantivy::Result<Arc<segments::DocsByIid>> {
        self.segments.docs(reader)
    }

    /// The internal id of each document of one segment ([`segments::NO_IID`] for none),
    /// decoded once.
    pub(crate) fn segment_iids(
        &self,
        reader: &tantivy::SegmentReader,
    ) -> tantivy::Result<Arc<[u32]>> {
        self.segments.iids(reader)
    }

    /// Publishes tantivy's last commit to searches, the columns of its new segments decoded
    /// first (see [`segments`]), so that no search pays for them.
    fn publish_segments(&self) -> Result<()> {
        for segment in self.tantivy.searchable_segments().map_err(tv)? {
            if !self.segments.holds(segment.id()) {
                self.segments.warm(
                    &segment,
                    &tantivy::SegmentReader::open(&segment).map_err(tv)?,
                );
            }
        }
        self.reader.reload().map_err(tv)?;
        self.segments.published(
            self.reader
                .searcher()
                .segment_readers()
                .iter()
                .map(|r| r.segment_id()),
        );
        Ok(())
    }

    /// The settings stored in `txn`, parsed (defaults when never written).
    fn stored_settings(&self, txn: &heed::RoTxn) -> Result<Settings> {
        let stored = self.store.get_meta(txn, keys::SETTINGS)?;
        Ok(Settings::from_stored_bytes(stored))
    }
}

/// What the read side reads of an index: the search steps see these through their
/// [`SearchContext`](crate::search::SearchContext), never the fields themselves.
impl Index {
    #[inline]
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// The tantivy fields of a document.
    #[inline]
    pub(crate) fn schema_fields(&self) -> &Fields {
        &self.fields
    }

    #[inline]
    pub(crate) fn fields_map(&self) -> &RwLock<Arc<FieldsMap>> {
        &self.fields_map
    }

    #[inline]
    pub(crate) fn filter_cache(&self) -> &Mutex<FilterCache> {
        &self.filter_cache
    }

    #[inline]
    pub(crate) fn column_cache(&self) -> &Mutex<ColumnCache> {
        &self.columns
    }

    #[inline]
    pub(crate) fn vector_tables(&self) -> &Arc<Mutex<VectorTables>> {
        &self.vector_tables
    }

    #[inline]
    pub(crate) fn word_cache(&self) -> &Mutex<WordCache> {
        &self.word_cache
    }
}

/// A tantivy failure: a full disk or exhausted file descriptors keep their own codes (through
/// [`api_types::io_error`]); anything else is internal.
pub(crate) fn tv(e: tantivy::TantivyError) -> Error {
    for io in io_errors(&e) {
        // tempfile wraps the OS error with its path: the kind tells then.
        let code = match (io.raw_os_error(), io.kind()) {
            (Some(code @ (24 | 28)), _) => Some(code),
            (_, std::io::ErrorKind::StorageFull) => Some(28),
            _ => None,
        };
        if let Some(code) = code {
            return api_types::io_error(std::io::Error::from_raw_os_error(code));
        }
    }
    // A writer whose indexing thread failed reports it in words only.
    let text = e.to_string();
    for code in [28, 24] {
        if text.contains(&format!("(os error {code})"))
            || text.contains(&format!("Os {{ code: {code},"))
        {
            return api_types::io_error(std::io::Error::from_raw_os_error(code));
        }
    }
    Error::internal(format!("tantivy: {e}"))
}

/// The I/O errors in the chain of a tantivy error (tantivy wraps them, some in an `Arc`).
fn io_errors(e: &tantivy::TantivyError) -> Vec<&std::io::Error> {
    let mut out = Vec::new();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        let io = err.downcast_ref::<std::io::Error>().or_else(|| {
            err.downcast_ref::<Arc<std::io::Error>>()
                .map(|arc| arc.as_ref())
        });
        out.extend(io);
        source = err.source();
    }
    out
}

pub(crate) fn default_limit() -> usize {
    20
}
