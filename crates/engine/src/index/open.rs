//! Opening an index: the tantivy schema (one text field of listed tokens with positions, the
//! words by field, the short fields' word counts, and the internal id), the LMDB store, and
//! the recovery that brings tantivy level with LMDB before the index serves anything (see
//! [`super::update::commit`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use api_types::{Code, Error, Result};
use tantivy::index::SegmentComponent;
use tantivy::schema::{IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED};
use tantivy::{IndexReader, ReloadPolicy};

use super::{
    io_errors, text, tv, ColumnCache, Fields, FilterCache, Index, Segments, SettingsCache,
    VectorTables, WordCache,
};
use crate::codec::FieldsMap;
use crate::payload;
use crate::store::{heed_error, keys, Store};

/// The fast field holding each document's internal id.
pub(super) const IID_FIELD: &str = "iid";
/// The field of every indexed word (see [`super::text`]).
pub(crate) const WORDS_FIELD: &str = "words";

/// The layout of the terms tantivy holds, raised when what a document is indexed as changes
/// (2: prefix markers, see [`super::text::prefix_marker`]; 3: the words fields read by
/// [`text::Listed`]; 4: pair terms, see [`text::PairWords`]). An index of another layout has
/// its tantivy directory rebuilt from LMDB when it opens (choosing its pair words).
pub const TEXT_LAYOUT: u64 = 4;

impl Index {
    /// Opens an index that must exist: a directory whose store is missing is refused rather
    /// than opened empty.
    pub fn open_existing(dir: impl AsRef<Path>) -> Result<Index> {
        let file = dir.as_ref().join("store").join("data.mdb");
        // LMDB would create a missing or empty file as a new, empty store.
        let what = match std::fs::metadata(&file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some("is missing"),
            Ok(m) if m.len() == 0 => Some("is empty"),
            _ => None,
        };
        if let Some(what) = what {
            return Err(Error::new(
                Code::InvalidStoreFile,
                format!("The file `{}` {what}.", file.display()),
            ));
        }
        Index::open(dir)
    }

    /// Opens (or creates) the index stored in `dir`, repairing tantivy from LMDB if a crash
    /// interrupted the last commit.
    pub fn open(dir: impl AsRef<Path>) -> Result<Index> {
        let dir = dir.as_ref().to_path_buf();
        // What opening reads of LMDB is the index's own writing: what fails to read or to
        // decode there is a damaged file (a system failure keeps its code).
        let file = dir.join("store").join("data.mdb");
        Index::open_in(dir).map_err(|e| api_types::damaged_in(e, &file))
    }

    fn open_in(dir: PathBuf) -> Result<Index> {
        let store = Store::open(&dir.join("store"))?;
        let tdir = dir.join("tantivy");
        let (layout_stale, generation) = {
            let rtxn = store.read()?;
            let layout = store.get_u64(&rtxn, keys::TEXT_LAYOUT)?;
            let generation = store.get_u64(&rtxn, keys::GENERATION)?;
            (layout != TEXT_LAYOUT, generation)
        };
        // Until the key says otherwise, tantivy may hold another layout: it starts empty and
        // is rebuilt whole below (a crash before the key is written rebuilds it again).
        if layout_stale && tdir.exists() {
            std::fs::remove_dir_all(&tdir).map_err(payload::io_error)?;
        }
        let (schema, fields) = schema();
        // tantivy holds nothing LMDB does not (see [`super::update::commit`]): files of another
        // layout, or damaged ones, are set aside and the inverted index rebuilt from the documents.
        let meta_missing = !layout_stale && generation > 0 && !tdir.join("meta.json").exists();
        let opened = open_tantivy(&tdir, &schema).and_then(|(t, r)| match damage(&t) {
            _ if meta_missing => Err(Opened::Damaged("`meta.json` is missing".into())),
            None => Ok((t, r)),
            Some(why) => Err(Opened::Damaged(why)),
        });
        let (tantivy, reader, repaired) = match opened {
            Ok((t, r)) => (t, r, None),
            Err(Opened::OtherLayout) => {
                let (t, r) = reopen_empty(&tdir, &schema)?;
                (t, r, None)
            }
            Err(Opened::Damaged(why)) => {
                let (t, r) = reopen_empty(&tdir, &schema)?;
                (t, r, Some(why))
            }
            Err(Opened::Failed(e)) => return Err(e),
        };
        let empty = reader.searcher().num_docs() == 0;
        let stale = layout_stale || repaired.is_some();
        let index = Index::assemble(Parts {
            dir,
            repaired,
            store,
            tantivy,
            reader,
            fields,
            read_only: None,
            merged_at: empty.then_some(0),
        });
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

/// The tantivy schema of every index, and its fields.
pub(super) fn schema() -> (Schema, Fields) {
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
    let fields = Fields {
        iid,
        words,
        lens,
        field_words,
    };
    (builder.build(), fields)
}

/// Why tantivy's directory could not be used as it is.
enum Opened {
    /// Written with another schema by an earlier version.
    OtherLayout,
    /// A file missing, cut short or changed: what is wrong, in words.
    Damaged(String),
    /// The system refused (permissions, a full disk, no file descriptors): not the files' fault.
    Failed(Error),
}

fn open_tantivy(
    tdir: &Path,
    schema: &Schema,
) -> std::result::Result<(tantivy::Index, IndexReader), Opened> {
    std::fs::create_dir_all(tdir).map_err(|e| Opened::Failed(payload::io_error(e)))?;
    let mmap = tantivy::directory::MmapDirectory::open(tdir)
        .map_err(|e| Opened::Failed(Error::internal(e.to_string())))?;
    let tantivy = match tantivy::Index::open_or_create(mmap, schema.clone()) {
        Ok(t) => t,
        Err(tantivy::TantivyError::SchemaError(_)) => return Err(Opened::OtherLayout),
        Err(e) => return Err(opening_failed(e)),
    };
    with_reader(tantivy).map_err(opening_failed)
}

/// `tantivy` with Quarry's tokenizer registered, and its reader (reloaded when a commit is
/// published, never on its own), for a writing or a read-only opening alike.
pub(super) fn with_reader(
    tantivy: tantivy::Index,
) -> tantivy::Result<(tantivy::Index, IndexReader)> {
    tantivy
        .tokenizers()
        .register(text::LISTED_TOKENIZER, text::Listed::default());
    let reader = tantivy
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?;
    Ok((tantivy, reader))
}

/// An error opening tantivy's files: the system's refusals keep their codes, anything else
/// (a file missing, a footer or a meta file that does not parse) is damage.
fn opening_failed(e: tantivy::TantivyError) -> Opened {
    let refused = io_errors(&e)
        .iter()
        .any(|io| io.raw_os_error().is_some() && io.kind() != std::io::ErrorKind::NotFound);
    match refused {
        true => Opened::Failed(tv(e)),
        false => Opened::Damaged(e.to_string()),
    }
}

/// Empties tantivy's directory and opens it again.
fn reopen_empty(tdir: &Path, schema: &Schema) -> Result<(tantivy::Index, IndexReader)> {
    std::fs::remove_dir_all(tdir).map_err(payload::io_error)?;
    std::fs::create_dir_all(tdir).map_err(payload::io_error)?;
    open_tantivy(tdir, schema).map_err(|e| match e {
        Opened::Failed(e) => e,
        Opened::OtherLayout => Error::internal("an empty tantivy directory has another schema"),
        Opened::Damaged(why) => Error::internal(format!("an empty tantivy directory: {why}")),
    })
}

/// What is wrong with the files of tantivy's live segments, if anything: one missing, or one
/// whose bytes no longer match its checksum (cut short, overwritten). Every byte is read once,
/// so damage is found when the index opens rather than by a search that reads it.
fn damage(tantivy: &tantivy::Index) -> Option<String> {
    let metas = match tantivy.searchable_segment_metas() {
        Ok(metas) => metas,
        Err(e) => return Some(e.to_string()),
    };
    let dir = tantivy.directory();
    // A segment's deletions file exists only once it has deletions.
    let mut files: Vec<_> = metas
        .iter()
        .flat_map(|m| {
            SegmentComponent::iterator()
                .filter(|c| **c != SegmentComponent::Delete || m.has_deletes())
                .map(|c| m.relative_path(*c))
        })
        .collect();
    files.sort();
    for file in files {
        let name = file.display();
        match dir.validate_checksum(&file) {
            Ok(true) => {}
            Ok(false) => return Some(format!("`{name}` does not match its checksum")),
            Err(tantivy::directory::error::OpenReadError::FileDoesNotExist(_)) => {
                return Some(format!("`{name}` is missing"))
            }
            Err(e) => return Some(format!("`{name}` cannot be read: {e}")),
        }
    }
    None
}

/// What an index is opened from: its files, and how it was opened.
pub(super) struct Parts {
    pub dir: PathBuf,
    pub repaired: Option<String>,
    pub store: Store,
    pub tantivy: tantivy::Index,
    pub reader: IndexReader,
    pub fields: Fields,
    pub read_only: Option<super::read_only::ReadOnly>,
    pub merged_at: Option<u64>,
}

impl Index {
    /// The index over `parts`, with no writer yet and its caches empty.
    pub(super) fn assemble(parts: Parts) -> Index {
        Index {
            dir: parts.dir,
            repaired: parts.repaired,
            store: parts.store,
            tantivy: parts.tantivy,
            reader: parts.reader,
            fields: parts.fields,
            read_only: parts.read_only,
            writer: Mutex::new(None),
            merged_at: Mutex::new(parts.merged_at),
            compacting: Default::default(),
            compaction_part_docs: super::update::compaction::COMPACTION_PART_DOCS,
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
        }
    }
}
