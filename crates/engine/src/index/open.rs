//! Opening an index: the tantivy schema (one text field of listed tokens with positions, the
//! words by field, the short fields' word counts, and the internal id), the LMDB store, and
//! the recovery that brings tantivy level with LMDB before the index serves anything (see
//! [`super::update::commit`]).

use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

use api_types::{Error, Result};
use tantivy::schema::{IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED};
use tantivy::ReloadPolicy;

use super::{
    text, tv, ColumnCache, Fields, FilterCache, Index, Segments, SettingsCache, VectorTables,
    WordCache,
};
use crate::codec::FieldsMap;
use crate::payload;
use crate::store::{heed_error, keys, Store};

/// The fast field holding each document's internal id.
pub(super) const IID_FIELD: &str = "iid";
/// The field of every indexed word (see [`super::text`]).
pub(super) const WORDS_FIELD: &str = "words";

/// The layout of the terms tantivy holds, raised when what a document is indexed as changes
/// (2: prefix markers, see [`super::text::prefix_marker`]; 3: the words fields read by
/// [`text::Listed`]; 4: pair terms, see [`text::PairWords`]). An index of another layout has
/// its tantivy directory rebuilt from LMDB when it opens (choosing its pair words).
pub const TEXT_LAYOUT: u64 = 4;

impl Index {
    /// Opens (or creates) the index stored in `dir`, repairing tantivy from LMDB if a crash
    /// interrupted the last commit.
    pub fn open(dir: impl AsRef<Path>) -> Result<Index> {
        let dir = dir.as_ref().to_path_buf();
        let store = Store::open(&dir.join("store"))?;
        let tdir = dir.join("tantivy");
        let stale = {
            let rtxn = store.read()?;
            store.get_u64(&rtxn, keys::TEXT_LAYOUT)? != TEXT_LAYOUT
        };
        // Until the key says otherwise, tantivy may hold another layout: it starts empty and
        // is rebuilt whole below (a crash before the key is written rebuilds it again).
        if stale && tdir.exists() {
            std::fs::remove_dir_all(&tdir).map_err(payload::io_error)?;
        }
        std::fs::create_dir_all(&tdir).map_err(payload::io_error)?;
        let mut builder = Schema::builder();
        let iid = builder.add_u64_field(IID_FIELD, INDEXED | FAST);
        let words = builder.add_text_field(
            WORDS_FIELD,
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(text::LISTED_TOKENIZER)
                    .set_index_option(IndexRecordOption::WithFreqsAndPositions)
                    .set_fieldnorms(false),
            ),
        );
        let lens = builder.add_u64_field(text::LENGTHS_FIELD, FAST);
        let field_words = builder.add_text_field(
            "fwords",
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(text::LISTED_TOKENIZER)
                    .set_index_option(IndexRecordOption::Basic)
                    .set_fieldnorms(false),
            ),
        );
        let schema = builder.build();
        let mmap = tantivy::directory::MmapDirectory::open(&tdir)
            .map_err(|e| Error::internal(e.to_string()))?;
        let tantivy = match tantivy::Index::open_or_create(mmap, schema.clone()) {
            Ok(t) => t,
            // Written with another layout by an earlier version: tantivy only derives from
            // LMDB, so it starts empty and is rebuilt below.
            Err(tantivy::TantivyError::SchemaError(_)) => {
                std::fs::remove_dir_all(&tdir).map_err(payload::io_error)?;
                std::fs::create_dir_all(&tdir).map_err(payload::io_error)?;
                let mmap = tantivy::directory::MmapDirectory::open(&tdir)
                    .map_err(|e| Error::internal(e.to_string()))?;
                tantivy::Index::open_or_create(mmap, schema).map_err(tv)?
            }
            Err(e) => return Err(tv(e)),
        };
        tantivy
            .tokenizers()
            .register(text::LISTED_TOKENIZER, text::Listed::default());
        let reader = tantivy
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(tv)?;
        let empty = reader.searcher().num_docs() == 0;
        let index = Index {
            dir,
            store,
            tantivy,
            reader,
            fields: Fields {
                iid,
                words,
                lens,
                field_words,
            },
            writer: Mutex::new(None),
            merged_at: Mutex::new(empty.then_some(0)),
            compacting: Default::default(),
            compaction_part_docs: super::update::commit::COMPACTION_PART_DOCS,
            batch_lock: Mutex::new(()),
            progress: Mutex::new(None),
            fields_map: RwLock::new(Arc::new(FieldsMap::default())),
            filter_cache: Mutex::new(FilterCache::default()),
            columns: Mutex::new(ColumnCache::default()),
            segments: Segments::default(),
            vector_tables: Arc::new(Mutex::new(VectorTables::default())),
            settings_cache: Mutex::new(SettingsCache::default()),
            pair_words: RwLock::new(Arc::default()),
            word_cache: Mutex::new(WordCache::default()),
        };
        {
            let rtxn = index.store.read()?;
            let fields = index.store.fields_map(&rtxn)?;
            *index.fields_map.write().unwrap() = Arc::new(fields);
        }
        // A stale tantivy is rebuilt whole: replaying only the dirty documents would leave
        // out every other one.
        if !stale {
            index.recover()?;
        }
        index.rebuild_if_behind()?;
        if stale {
            let mut wtxn = index.store.write()?;
            let layout = TEXT_LAYOUT.to_be_bytes();
            index
                .store
                .put_meta(&mut wtxn, keys::TEXT_LAYOUT, &layout)?;
            wtxn.commit().map_err(heed_error)?;
        }
        // The segments found on disk are decoded before the first search.
        index.publish_segments()?;
        index.publish_pair_words()?;
        Ok(index)
    }
}
