//! One index: the LMDB document store, the tantivy index, and the commit protocol that keeps
//! them consistent across crashes.
//!
//! Commit protocol of [`Index::apply_batch`] (ARCHITECTURE.md explains it at length):
//! 1. every op of the batch is validated, then applied to one LMDB write transaction, together
//!    with `generation + 1`, the set of touched internal ids (`dirty`) and the batch results;
//!    the transaction commits (fsync). This is the point of truth.
//! 2. the same documents are fed to tantivy (delete by internal id, re-add the new version) and
//!    tantivy commits with the generation as its payload.
//! 3. the dirty set is removed from LMDB.
//!
//! At open, a dirty set whose generation is newer than tantivy's payload is re-applied to
//! tantivy from LMDB. A batch replayed after a crash between step 1 and the task store's own
//! commit is recognised by its task uids and answered from the stored results.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use api_types::{Error, Result};
use heed::RwTxn;
use roaring::RoaringBitmap;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED,
};
use tantivy::{IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use crate::codec::{self, FieldsMap};
use crate::docid;
use crate::facets::Column;
use crate::filter::Filter;
use crate::payload;
use crate::store::{heed_error, keys, Store};
use crate::tokens;

mod rank;
mod search;
mod text;
pub use search::{FacetSearchQuery, SearchQuery};

/// One operation of a batch, as the task queue sends it.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum BatchOp {
    #[serde(rename_all = "camelCase")]
    AddDocuments {
        task_uid: u64,
        file: PathBuf,
        method: Method,
        primary_key: Option<String>,
        #[serde(default)]
        skip_creation: bool,
    },
    #[serde(rename_all = "camelCase")]
    DeleteDocuments { task_uid: u64, ids: Vec<String> },
    /// Deletes the documents matching `filter` (string or array form).
    #[serde(rename_all = "camelCase")]
    DeleteByFilter { task_uid: u64, filter: Value },
    #[serde(rename_all = "camelCase")]
    ClearDocuments { task_uid: u64 },
    #[serde(rename_all = "camelCase")]
    SetPrimaryKey { task_uid: u64, primary_key: String },
    /// Applies a settings update (the validated request, see [`crate::SettingsPatch`]) to the
    /// settings the batch has reached.
    #[serde(rename_all = "camelCase")]
    UpdateSettings { task_uid: u64, patch: Value },
}

impl BatchOp {
    pub fn task_uid(&self) -> u64 {
        match self {
            BatchOp::AddDocuments { task_uid, .. }
            | BatchOp::DeleteDocuments { task_uid, .. }
            | BatchOp::DeleteByFilter { task_uid, .. }
            | BatchOp::ClearDocuments { task_uid }
            | BatchOp::SetPrimaryKey { task_uid, .. }
            | BatchOp::UpdateSettings { task_uid, .. } => *task_uid,
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Method {
    Replace,
    Update,
}

#[derive(Deserialize)]
struct BatchInput {
    ops: Vec<BatchOp>,
    /// No further task waits for this index: a good moment to compact the inverted index.
    #[serde(default)]
    idle: bool,
}

/// Query of `fetch_documents`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FetchQuery {
    #[serde(default)]
    pub offset: usize,
    #[serde(default = "default_limit")]
    pub limit: usize,
    #[serde(default)]
    pub fields: Option<Vec<String>>,
    #[serde(default)]
    pub ids: Option<Vec<String>>,
    #[serde(default)]
    pub retrieve_vectors: bool,
    /// `attr:asc|desc` keys; empty or absent keeps internal-id order.
    #[serde(default)]
    pub sort: Option<Vec<String>>,
    /// A filter (string or array form); errors use `invalid_document_filter`.
    #[serde(default)]
    pub filter: Option<Value>,
    /// The `containsFilter` experimental feature: `CONTAINS` is refused without it.
    #[serde(default)]
    pub contains_filter: bool,
}

fn default_limit() -> usize {
    20
}

struct Fields {
    iid: Field,
    words: Field,
    /// Word counts of short fields (see [`text`]).
    lens: Field,
    /// Words by field, documents only (see [`text::field_word`]).
    field_words: Field,
}

/// In-memory state of a batch being applied (written to `meta` at commit).
struct BatchState {
    primary_key: Option<String>,
    next_id: u32,
    field_distribution: BTreeMap<String, u64>,
    dirty: RoaringBitmap,
    settings: Option<Value>,
    fields: FieldsMap,
}

/// Progress of the batch being applied, for `GET /batches`.
#[derive(Default, Clone)]
struct Progress {
    op: usize,
    ops: usize,
    step: &'static str,
    done: u64,
    total: u64,
}

pub struct Index {
    dir: PathBuf,
    store: Store,
    tantivy: tantivy::Index,
    reader: IndexReader,
    fields: Fields,
    writer: Mutex<Option<IndexWriter>>,
    batch_lock: Mutex<()>,
    progress: Mutex<Option<Progress>>,
    /// The committed fields map (or a superset), for decoding documents on the read paths.
    fields_map: RwLock<Arc<FieldsMap>>,
    /// Recent filter results: (generation, filter JSON, matching internal ids). A result is
    /// only reused at the generation it was computed for, so a commit invalidates it.
    filter_cache: Mutex<Vec<(u64, String, Arc<RoaringBitmap>)>>,
    /// Value columns (sort, distinct, facets) and the set of all ids, for one generation.
    columns: Mutex<ColumnCache>,
}

/// What [`Index`] keeps of one generation for sorting, distinct and facets. A newer
/// generation replaces it; a reader at an older one builds its own, uncached.
#[derive(Default)]
struct ColumnCache {
    generation: u64,
    all: Option<Arc<RoaringBitmap>>,
    columns: std::collections::HashMap<String, Arc<Column>>,
}

/// How many columns [`ColumnCache`] holds before it starts over.
const COLUMN_CACHE_SIZE: usize = 64;

impl ColumnCache {
    fn all_at(&self, generation: u64) -> Option<Arc<RoaringBitmap>> {
        (self.generation == generation).then(|| self.all.clone())?
    }

    fn get(&self, generation: u64, path: &str) -> Option<Arc<Column>> {
        (self.generation == generation).then(|| self.columns.get(path).cloned())?
    }

    /// Moves to `generation` if it is newer; whether it is now the cached one.
    fn advance(&mut self, generation: u64) -> bool {
        if generation > self.generation {
            *self = ColumnCache {
                generation,
                ..ColumnCache::default()
            };
        }
        generation == self.generation
    }

    fn put_all(&mut self, generation: u64, all: Arc<RoaringBitmap>) {
        if self.advance(generation) {
            self.all = Some(all);
        }
    }

    fn put(&mut self, generation: u64, path: &str, column: Arc<Column>) {
        if self.advance(generation) {
            if self.columns.len() >= COLUMN_CACHE_SIZE {
                self.columns.clear();
            }
            self.columns.insert(path.to_string(), column);
        }
    }
}

/// How many filter results [`Index`] keeps (tenant tokens repeat one filter on every search).
const FILTER_CACHE_SIZE: usize = 16;

const WRITER_MEMORY_PER_THREAD: usize = 64 << 20;

/// Documents tokenized together, split among threads (see `Index::index_text`).
const TEXT_CHUNK: usize = 4096;

/// Documents written to LMDB whose text is not yet in tantivy, and their internal ids (a
/// repeated document must reach tantivy before its next version deletes it).
#[derive(Default)]
struct PendingText {
    docs: Vec<(u32, Map<String, Value>)>,
    ids: HashSet<u32>,
}

fn tv(e: tantivy::TantivyError) -> Error {
    Error::internal(format!("tantivy: {e}"))
}

impl Index {
    /// Opens (or creates) the index stored in `dir`, repairing tantivy from LMDB if a crash
    /// interrupted the last commit.
    pub fn open(dir: impl AsRef<Path>) -> Result<Index> {
        let dir = dir.as_ref().to_path_buf();
        let store = Store::open(&dir.join("store"))?;
        let tdir = dir.join("tantivy");
        std::fs::create_dir_all(&tdir).map_err(payload::io_error)?;
        let mut builder = Schema::builder();
        let iid = builder.add_u64_field("iid", INDEXED | FAST);
        let words = builder.add_text_field(
            "words",
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_index_option(IndexRecordOption::WithFreqsAndPositions)
                    .set_fieldnorms(false),
            ),
        );
        let lens = builder.add_u64_field("lens", FAST);
        let field_words = builder.add_text_field(
            "fwords",
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
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
        let reader = tantivy
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(tv)?;
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
            batch_lock: Mutex::new(()),
            progress: Mutex::new(None),
            fields_map: RwLock::new(Arc::new(FieldsMap::default())),
            filter_cache: Mutex::new(Vec::new()),
            columns: Mutex::new(ColumnCache::default()),
        };
        {
            let rtxn = index.store.read()?;
            let fields = FieldsMap::from_json(index.store.get_meta(&rtxn, keys::FIELDS_MAP)?)?;
            *index.fields_map.write().unwrap() = Arc::new(fields);
        }
        index.recover()?;
        index.rebuild_if_behind()?;
        Ok(index)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The stored settings object, if any.
    fn stored_settings(&self, rtxn: &heed::RoTxn) -> Result<Option<Value>> {
        match self.store.get_meta(rtxn, keys::SETTINGS)? {
            Some(b) => Ok(serde_json::from_slice(b).ok()),
            None => Ok(None),
        }
    }

    /// Parses and validates a request's filter against `settings`; errors carry `code`.
    fn request_filter(
        &self,
        value: Option<&Value>,
        settings: Option<&Value>,
        code: &'static str,
        contains_enabled: bool,
    ) -> Result<Option<Filter>> {
        let Some(value) = value else { return Ok(None) };
        let filter = Filter::from_json(value).map_err(|m| Error::new(code, m))?;
        if let Some(f) = &filter {
            f.check_contains(contains_enabled)
                .map_err(|m| Error::new("feature_not_enabled", m))?;
            f.validate(settings).map_err(|m| Error::new(code, m))?;
        }
        Ok(filter)
    }

    /// The documents a request's filter lets through (`None`: no filter, all of them).
    fn allowed_ids(
        &self,
        rtxn: &heed::RoTxn,
        value: Option<&Value>,
        settings: Option<&Value>,
        code: &'static str,
        contains_enabled: bool,
    ) -> Result<Option<Arc<RoaringBitmap>>> {
        match (
            self.request_filter(value, settings, code, contains_enabled)?,
            value,
        ) {
            (Some(f), Some(key)) => Ok(Some(self.filter_ids(rtxn, &f, key)?)),
            _ => Ok(None),
        }
    }

    /// The internal ids of the documents `rtxn` sees matching `filter` (whose request JSON is
    /// `key`), from the cache when the same filter ran at the same generation.
    fn filter_ids(
        &self,
        rtxn: &heed::RoTxn,
        filter: &Filter,
        key: &Value,
    ) -> Result<Arc<RoaringBitmap>> {
        let generation = self.store.get_u64(rtxn, keys::GENERATION)?;
        let key = key.to_string();
        {
            let cache = self.filter_cache.lock().unwrap();
            if let Some((_, _, ids)) = cache.iter().find(|(g, k, _)| *g == generation && *k == key)
            {
                return Ok(ids.clone());
            }
        }
        let ids = Arc::new(self.scan_filter(rtxn, filter)?);
        let mut cache = self.filter_cache.lock().unwrap();
        // A newer generation makes older results useless; an older reader keeps its own.
        cache.retain(|(g, _, _)| *g >= generation);
        if cache.len() >= FILTER_CACHE_SIZE {
            cache.remove(0);
        }
        cache.push((generation, key, ids.clone()));
        Ok(ids)
    }

    /// The documents `rtxn` sees passing `filter`: from the value columns (documents by
    /// value) when they can answer it, else by reading every document.
    fn scan_filter(&self, rtxn: &heed::RoTxn, filter: &Filter) -> Result<RoaringBitmap> {
        if filter.columns_can_answer() {
            let paths = filter.paths().to_vec();
            let columns = self.columns(rtxn, &paths)?;
            let columns = paths.into_iter().zip(columns).collect();
            let universe = self.all_ids(rtxn)?;
            return Ok(filter.evaluate(&columns, &universe));
        }
        self.scan_documents(rtxn, filter)
    }

    /// Evaluates `filter` on every document `rtxn` sees, in internal-id order.
    fn scan_documents(&self, rtxn: &heed::RoTxn, filter: &Filter) -> Result<RoaringBitmap> {
        let fields = self.fields_map.read().unwrap().clone();
        let mut out = RoaringBitmap::new();
        for item in self.store.docs.iter(rtxn).map_err(heed_error)? {
            let (iid, bytes) = item.map_err(heed_error)?;
            let doc = codec::decode_fields(bytes, &fields, |name| filter.reads_field(name))?;
            if filter.matches(&doc) {
                out.insert(iid);
            }
        }
        Ok(out)
    }

    /// Decodes a stored document on a read path (committed data, committed fields map).
    fn decode_doc(&self, bytes: &[u8]) -> Result<Map<String, Value>> {
        let fields = self.fields_map.read().unwrap().clone();
        codec::decode(bytes, &fields)
    }

    /// Re-applies to tantivy a dirty set that LMDB committed but tantivy may not have.
    fn recover(&self) -> Result<()> {
        let rtxn = self.store.read()?;
        let generation = self.store.get_u64(&rtxn, keys::GENERATION)?;
        let dirty = self.store.get_dirty(&rtxn)?;
        drop(rtxn);
        let Some(dirty) = dirty else { return Ok(()) };
        if self.tantivy_generation()? != generation {
            let mut guard = self.writer.lock().unwrap();
            let writer = self.writer_mut(&mut guard)?;
            self.feed_tantivy(writer, &dirty)?;
            self.commit_tantivy(writer, generation)?;
        }
        let mut wtxn = self.store.write()?;
        self.store.del_meta(&mut wtxn, keys::DIRTY)?;
        wtxn.commit().map_err(heed_error)?;
        Ok(())
    }

    /// Rebuilds tantivy from LMDB when it is behind with nothing left to replay: its
    /// directory was lost, or was written with another layout.
    fn rebuild_if_behind(&self) -> Result<()> {
        let rtxn = self.store.read()?;
        let generation = self.store.get_u64(&rtxn, keys::GENERATION)?;
        drop(rtxn);
        if self.tantivy_generation()? == generation {
            return Ok(());
        }
        let mut guard = self.writer.lock().unwrap();
        let writer = self.writer_mut(&mut guard)?;
        writer.delete_all_documents().map_err(tv)?;
        let mut wtxn = self.store.write()?;
        let mut state = self.load_state(&wtxn)?;
        let settings = self.stored_settings(&wtxn)?.unwrap_or(Value::Null);
        self.reindex_text(&mut wtxn, writer, &mut state, &settings)?;
        // Every document is dirty until tantivy commits: a crash in between replays them.
        self.save_state(&mut wtxn, &state)?;
        self.store.put_dirty(&mut wtxn, &state.dirty)?;
        *self.fields_map.write().unwrap() = Arc::new(state.fields.clone());
        wtxn.commit().map_err(heed_error)?;
        self.commit_tantivy(writer, generation)?;
        let mut wtxn = self.store.write()?;
        self.store.del_meta(&mut wtxn, keys::DIRTY)?;
        wtxn.commit().map_err(heed_error)?;
        Ok(())
    }

    fn tantivy_generation(&self) -> Result<u64> {
        let metas = self.tantivy.load_metas().map_err(tv)?;
        Ok(metas.payload.and_then(|p| p.parse().ok()).unwrap_or(0))
    }

    fn writer_mut<'a>(&self, guard: &'a mut Option<IndexWriter>) -> Result<&'a mut IndexWriter> {
        if guard.is_none() {
            let threads = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
                .clamp(1, 4);
            let writer = self
                .tantivy
                .writer_with_num_threads(threads, threads * WRITER_MEMORY_PER_THREAD)
                .map_err(tv)?;
            *guard = Some(writer);
        }
        Ok(guard.as_mut().unwrap())
    }

    /// Deletes every dirty id from tantivy and re-adds the version LMDB holds.
    fn feed_tantivy(&self, writer: &mut IndexWriter, dirty: &RoaringBitmap) -> Result<()> {
        let rtxn = self.store.read()?;
        let settings = self.stored_settings(&rtxn)?;
        let searchable = searchable_of(settings.as_ref());
        if self.store.docs.is_empty(&rtxn).map_err(heed_error)? {
            writer.delete_all_documents().map_err(tv)?;
            return Ok(());
        }
        // Every field id these documents need was committed with them.
        let mut fields = (*self.fields_map.read().unwrap().clone()).clone();
        let analyzer = tokens::Analyzer::from_settings(settings.as_ref());
        analyzer.with(|tokenizer| {
            for iid in dirty {
                writer.delete_term(Term::from_field_u64(self.fields.iid, iid as u64));
                if let Some(bytes) = self.store.docs.get(&rtxn, &iid).map_err(heed_error)? {
                    let doc = self.decode_doc(bytes)?;
                    text::assign_fields(&doc, searchable.as_deref(), &mut fields);
                    let tdoc =
                        self.tantivy_doc(iid, &doc, searchable.as_deref(), &fields, tokenizer);
                    writer.add_document(tdoc).map_err(tv)?;
                }
            }
            Ok(())
        })
    }

    fn commit_tantivy(&self, writer: &mut IndexWriter, generation: u64) -> Result<()> {
        let mut prepared = writer.prepare_commit().map_err(tv)?;
        prepared.set_payload(&generation.to_string());
        prepared.commit().map_err(tv)?;
        self.reader.reload().map_err(tv)?;
        Ok(())
    }

    /// The tantivy document of `doc`: the words of its searchable attributes (`None`: all)
    /// and the word counts of its short fields (see [`text`]).
    fn tantivy_doc(
        &self,
        iid: u32,
        doc: &Map<String, Value>,
        searchable: Option<&[String]>,
        fields: &FieldsMap,
        tokenizer: &charabia::Tokenizer,
    ) -> TantivyDocument {
        let text = text::doc_text(doc, searchable, fields, tokenizer);
        let mut tdoc = TantivyDocument::default();
        tdoc.add_u64(self.fields.iid, iid as u64);
        tdoc.add_pre_tokenized_text(self.fields.words, text.words);
        tdoc.add_pre_tokenized_text(self.fields.field_words, text.field_words);
        for len in text.lens {
            tdoc.add_u64(self.fields.lens, len);
        }
        tdoc
    }

    /// Applies a batch (JSON `{"ops":[...]}`) and returns `{"results":[...]}`.
    pub fn apply_batch_json(&self, input: &str) -> Result<String> {
        let input: BatchInput =
            serde_json::from_str(input).map_err(|e| Error::internal(format!("bad batch: {e}")))?;
        let results = self.apply_batch_then(input.ops, input.idle)?;
        Ok(json!({ "results": results }).to_string())
    }

    /// Applies the ops in order and commits once. Per-op failures are reported in the results.
    pub fn apply_batch(&self, ops: Vec<BatchOp>) -> Result<Vec<Value>> {
        self.apply_batch_then(ops, false)
    }

    /// [`Index::apply_batch`], then, when `idle` (nothing else queued for the index), merges
    /// the inverted index into one segment if enough of it lies outside the largest one.
    pub fn apply_batch_then(&self, ops: Vec<BatchOp>, idle: bool) -> Result<Vec<Value>> {
        let results = self.apply_batch_inner(ops)?;
        if idle {
            self.compact_if_worthwhile()?;
        }
        Ok(results)
    }

    /// One segment answers a query several times faster than ten: each segment computes its
    /// own top hits. Merging everything costs about 4 µs per document (3.5 s for the 886k
    /// PyPI rows), so it runs only when the documents outside the largest segment are at
    /// least an eighth of the index: a bulk load pays it once at the end, and a trickle of
    /// small updates pays it at most once per eighth of growth.
    fn compact_if_worthwhile(&self) -> Result<()> {
        let _batch = self.batch_lock.lock().unwrap();
        let metas = self.tantivy.searchable_segment_metas().map_err(tv)?;
        if metas.len() < 2 {
            return Ok(());
        }
        let total: u64 = metas.iter().map(|m| m.num_docs() as u64).sum();
        let largest = metas.iter().map(|m| m.num_docs() as u64).max().unwrap_or(0);
        if (total - largest) * 8 < total {
            return Ok(());
        }
        let ids: Vec<tantivy::index::SegmentId> = metas.iter().map(|m| m.id()).collect();
        // A live SegmentMeta keeps its files from the garbage collector.
        drop(metas);
        let mut guard = self.writer.lock().unwrap();
        let writer = self.writer_mut(&mut guard)?;
        // The merge keeps tantivy's commit payload (the generation), so recovery is unchanged;
        // searches use the old segments until the merged one is published. It is an
        // optimisation only: the batch is committed already, so a merge that cannot run (the
        // merge policy is merging some of these segments right now) is skipped, not an error.
        if writer.merge(&ids).wait().is_ok() {
            self.reader.reload().map_err(tv)?;
            // Delete the merged-away segment files now rather than at the next commit (files
            // a running search still reads are kept by tantivy until it lets go of them).
            let _ = writer.garbage_collect_files().wait();
        }
        Ok(())
    }

    /// Segments of the inverted index that searches visit.
    pub fn segment_count(&self) -> Result<usize> {
        Ok(self.tantivy.searchable_segment_metas().map_err(tv)?.len())
    }

    fn apply_batch_inner(&self, ops: Vec<BatchOp>) -> Result<Vec<Value>> {
        let _batch = self.batch_lock.lock().unwrap();
        if let Some(stored) = self.replayed_results(&ops)? {
            return Ok(stored);
        }
        *self.progress.lock().unwrap() = Some(Progress {
            ops: ops.len(),
            step: "validating",
            ..Progress::default()
        });
        let outcome = self.apply_locked(&ops);
        *self.progress.lock().unwrap() = None;
        outcome
    }

    /// When every op's task was already applied (a replay after a crash), the stored results.
    fn replayed_results(&self, ops: &[BatchOp]) -> Result<Option<Vec<Value>>> {
        let rtxn = self.store.read()?;
        let Some(bytes) = self.store.get_meta(&rtxn, keys::LAST_BATCH)? else {
            return Ok(None);
        };
        let stored: Vec<Value> = serde_json::from_slice(bytes).map_err(Error::internal)?;
        let uids: Vec<u64> = stored
            .iter()
            .filter_map(|r| r["taskUid"].as_u64())
            .collect();
        if !ops.is_empty() && ops.iter().all(|op| uids.contains(&op.task_uid())) {
            Ok(Some(stored))
        } else {
            Ok(None)
        }
    }

    fn apply_locked(&self, ops: &[BatchOp]) -> Result<Vec<Value>> {
        let mut guard = self.writer.lock().unwrap();
        let writer = self.writer_mut(&mut guard)?;
        let mut wtxn = self.store.write()?;
        let mut state = self.load_state(&wtxn)?;
        let mut results = Vec::with_capacity(ops.len());
        let mut clear_all = false;
        let outcome: Result<()> = (|| {
            for (i, op) in ops.iter().enumerate() {
                self.set_progress(|p| {
                    p.op = i;
                    p.done = 0;
                    p.total = 0;
                });
                let r = self.apply_op(&mut wtxn, writer, &mut state, op, &mut clear_all);
                results.push(match r {
                    Ok(v) => {
                        let mut r = Map::new();
                        r.insert("taskUid".into(), json!(op.task_uid()));
                        r.insert("ok".into(), json!(true));
                        r.extend(v);
                        Value::Object(r)
                    }
                    Err(e) if is_batch_fatal(&e) => return Err(e),
                    Err(e) => {
                        json!({ "taskUid": op.task_uid(), "ok": false, "error": e.to_json() })
                    }
                });
            }
            Ok(())
        })();
        if let Err(e) = outcome {
            drop(wtxn);
            let _ = writer.rollback();
            return Err(e);
        }
        self.set_progress(|p| p.step = "committing");
        let rtxn_gen = self.store.get_u64(&wtxn, keys::GENERATION)?;
        let generation = rtxn_gen + 1;
        self.save_state(&mut wtxn, &state)?;
        self.store
            .put_meta(&mut wtxn, keys::GENERATION, &generation.to_be_bytes())?;
        self.store.put_dirty(&mut wtxn, &state.dirty)?;
        self.store.put_meta(
            &mut wtxn,
            keys::LAST_BATCH,
            &serde_json::to_vec(&results).map_err(Error::internal)?,
        )?;
        // Readers must know every field id before they can see a document that uses it.
        *self.fields_map.write().unwrap() = Arc::new(state.fields.clone());
        wtxn.commit().map_err(heed_error)?;
        // LMDB now holds the truth; tantivy follows and records the generation it reached.
        if clear_all {
            // Documents added after the clear were deleted by `delete_all`; feed them again.
            writer.rollback().map_err(tv)?;
            self.feed_tantivy(writer, &state.dirty)?;
        }
        self.commit_tantivy(writer, generation)?;
        let mut wtxn = self.store.write()?;
        self.store.del_meta(&mut wtxn, keys::DIRTY)?;
        wtxn.commit().map_err(heed_error)?;
        Ok(results)
    }

    fn set_progress(&self, f: impl FnOnce(&mut Progress)) {
        if let Some(p) = self.progress.lock().unwrap().as_mut() {
            f(p);
        }
    }

    /// The stored count of documents per top-level field.
    fn field_distribution(&self, txn: &heed::RoTxn) -> Result<BTreeMap<String, u64>> {
        match self.store.get_meta(txn, keys::FIELD_DISTRIBUTION)? {
            Some(b) => serde_json::from_slice(b).map_err(Error::internal),
            None => Ok(BTreeMap::new()),
        }
    }

    fn load_state(&self, txn: &heed::RoTxn) -> Result<BatchState> {
        let field_distribution = self.field_distribution(txn)?;
        Ok(BatchState {
            primary_key: self.store.get_string(txn, keys::PRIMARY_KEY)?,
            next_id: self.store.get_u64(txn, keys::NEXT_ID)? as u32,
            field_distribution,
            dirty: self.store.get_dirty(txn)?.unwrap_or_default(),
            settings: None,
            fields: FieldsMap::from_json(self.store.get_meta(txn, keys::FIELDS_MAP)?)?,
        })
    }

    fn save_state(&self, txn: &mut RwTxn, state: &BatchState) -> Result<()> {
        match &state.primary_key {
            Some(pk) => self.store.put_meta(txn, keys::PRIMARY_KEY, pk.as_bytes())?,
            None => self.store.del_meta(txn, keys::PRIMARY_KEY)?,
        }
        self.store
            .put_meta(txn, keys::NEXT_ID, &(state.next_id as u64).to_be_bytes())?;
        let fd = serde_json::to_vec(&state.field_distribution).map_err(Error::internal)?;
        self.store.put_meta(txn, keys::FIELD_DISTRIBUTION, &fd)?;
        self.store
            .put_meta(txn, keys::FIELDS_MAP, &state.fields.to_json())?;
        if let Some(settings) = &state.settings {
            self.store.put_meta(
                txn,
                keys::SETTINGS,
                &serde_json::to_vec(settings).map_err(Error::internal)?,
            )?;
        }
        Ok(())
    }

    fn apply_op(
        &self,
        txn: &mut RwTxn,
        writer: &mut IndexWriter,
        state: &mut BatchState,
        op: &BatchOp,
        clear_all: &mut bool,
    ) -> Result<Map<String, Value>> {
        let mut out = Map::new();
        match op {
            BatchOp::AddDocuments {
                file,
                method,
                primary_key,
                skip_creation,
                ..
            } => {
                let n = self.add_documents(
                    txn,
                    writer,
                    state,
                    file,
                    *method,
                    primary_key.as_deref(),
                    *skip_creation,
                )?;
                out.insert("indexedDocuments".into(), json!(n));
            }
            BatchOp::DeleteDocuments { ids, .. } => {
                let mut deleted = 0u64;
                for id in ids {
                    if self.delete_one(txn, writer, state, id)? {
                        deleted += 1;
                    }
                }
                out.insert("deletedDocuments".into(), json!(deleted));
            }
            BatchOp::DeleteByFilter { filter, .. } => {
                let deleted = self.delete_by_filter(txn, writer, state, filter)?;
                out.insert("deletedDocuments".into(), json!(deleted));
            }
            BatchOp::ClearDocuments { .. } => {
                let count = self.store.docs.len(txn).map_err(heed_error)?;
                for item in self.store.docs.iter(txn).map_err(heed_error)? {
                    let (iid, _) = item.map_err(heed_error)?;
                    state.dirty.insert(iid);
                }
                self.store.docs.clear(txn).map_err(heed_error)?;
                self.store.ids.clear(txn).map_err(heed_error)?;
                state.field_distribution.clear();
                writer.delete_all_documents().map_err(tv)?;
                *clear_all = true;
                out.insert("deletedDocuments".into(), json!(count));
            }
            BatchOp::SetPrimaryKey { primary_key, .. } => {
                let has_docs = !self.store.docs.is_empty(txn).map_err(heed_error)?;
                match &state.primary_key {
                    Some(pk) if pk != primary_key && has_docs => return Err(pk_exists(pk)),
                    _ => state.primary_key = Some(primary_key.clone()),
                }
            }
            BatchOp::UpdateSettings { patch, .. } => {
                // What is indexed: which attributes (their order only ranks) and how text is
                // cut into words.
                let indexed = |s: Option<&Value>| {
                    let mut attrs = searchable_of(s);
                    if let Some(a) = attrs.as_mut() {
                        a.sort();
                    }
                    (attrs, tokens::text_settings(s))
                };
                let current = match &state.settings {
                    Some(s) => Some(s.clone()),
                    None => self.stored_settings(txn)?,
                };
                let mut next = crate::Settings::from_stored(current.as_ref());
                next.apply(crate::SettingsPatch::from_json(patch)?)?;
                let settings = &next.to_json();
                let before = indexed(current.as_ref());
                let after = indexed(Some(settings));
                state.settings = Some(settings.clone());
                if before != after {
                    self.reindex_text(txn, writer, state, settings)?;
                }
            }
        }
        Ok(out)
    }

    /// Re-feeds every document to tantivy with the new searchable attributes (part of the
    /// settings task: searches see the old text until the batch commits).
    fn reindex_text(
        &self,
        txn: &mut RwTxn,
        writer: &mut IndexWriter,
        state: &mut BatchState,
        settings: &Value,
    ) -> Result<()> {
        self.set_progress(|p| p.step = "reindexing searchable attributes");
        let searchable = searchable_of(Some(settings));
        let analyzer = tokens::Analyzer::from_settings(Some(settings));
        analyzer.with(|tokenizer| {
            for item in self.store.docs.iter(txn).map_err(heed_error)? {
                let (iid, bytes) = item.map_err(heed_error)?;
                let doc = codec::decode(bytes, &state.fields)?;
                writer.delete_term(Term::from_field_u64(self.fields.iid, iid as u64));
                text::assign_fields(&doc, searchable.as_deref(), &mut state.fields);
                let tdoc =
                    self.tantivy_doc(iid, &doc, searchable.as_deref(), &state.fields, tokenizer);
                writer.add_document(tdoc).map_err(tv)?;
                state.dirty.insert(iid);
            }
            Ok(())
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn add_documents(
        &self,
        txn: &mut RwTxn,
        writer: &mut IndexWriter,
        state: &mut BatchState,
        file: &Path,
        method: Method,
        requested_pk: Option<&str>,
        skip_creation: bool,
    ) -> Result<u64> {
        // Pass 1: decide the primary key and validate every id, so a bad document fails the
        // whole task before anything is written.
        let mut pk = state.primary_key.clone();
        let mut total = 0u64;
        let mut first_error: Option<Error> = None;
        let settings = match &state.settings {
            Some(s) => Some(s.clone()),
            None => self.stored_settings(txn)?,
        };
        // `_geo` is checked when something reads it (a filter or a sort), `_geojson` when
        // filters read it.
        let rules = crate::filter::rules::rules_of(settings.as_ref());
        let geo = docid::GeoChecks {
            geo: crate::filter::rules::has_plain_rule(&rules, "_geo")
                || string_list(settings.as_ref(), "sortableAttributes")
                    .is_some_and(|s| s.iter().any(|f| f == "_geo")),
            geojson: crate::filter::rules::has_plain_rule(&rules, "_geojson"),
        };
        let searchable = searchable_of(settings.as_ref());
        payload::read_staged(file, |doc| {
            if first_error.is_some() {
                return Ok(());
            }
            if pk.is_none() {
                match requested_pk {
                    Some(p) => pk = Some(p.to_string()),
                    None => match docid::infer_primary_key(&doc) {
                        Ok(p) => pk = Some(p),
                        Err(e) => {
                            first_error = Some(e);
                            return Ok(());
                        }
                    },
                }
            }
            let pk = pk.as_deref().unwrap();
            if let Err(e) = docid::document_id(&doc, pk).and_then(|id| geo.check(&doc, pk, id)) {
                first_error = Some(e);
            }
            total += 1;
            Ok(())
        })?;
        if let (Some(existing), Some(requested)) = (&state.primary_key, requested_pk) {
            if existing != requested {
                return Err(pk_exists(existing));
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        let Some(pk) = pk else { return Ok(0) };
        state.primary_key = Some(pk.clone());
        self.set_progress(|p| {
            p.step = "indexing documents";
            p.total = total;
        });

        // Pass 2: write each document to LMDB and tantivy.
        let mut done = 0u64;
        let mut encoded = Vec::with_capacity(256);
        let analyzer = tokens::Analyzer::from_settings(settings.as_ref());
        // Documents written to LMDB whose text is not yet in tantivy: tokenized a chunk at a
        // time on every core.
        let mut pending = PendingText::default();
        payload::read_staged(file, |mut doc| {
            let ext = docid::document_id(&doc, &pk)?;
            let existing = self.store.ids.get(txn, &ext).map_err(heed_error)?;
            let iid = match existing {
                Some(iid) => {
                    let old_bytes = self.store.docs.get(txn, &iid).map_err(heed_error)?;
                    if let Some(old_bytes) = old_bytes {
                        let old = codec::decode(old_bytes, &state.fields)?;
                        for k in old.keys() {
                            decrement(&mut state.field_distribution, k);
                        }
                        if method == Method::Update {
                            let mut merged = old;
                            for (k, v) in doc {
                                merged.insert(k, v);
                            }
                            doc = merged;
                        }
                    }
                    iid
                }
                None if skip_creation => {
                    done += 1;
                    return Ok(());
                }
                None => {
                    let iid = state.next_id;
                    state.next_id = state
                        .next_id
                        .checked_add(1)
                        .ok_or_else(|| Error::internal("internal id space exhausted"))?;
                    self.store.ids.put(txn, &ext, &iid).map_err(heed_error)?;
                    iid
                }
            };
            for k in doc.keys() {
                *state.field_distribution.entry(k.clone()).or_insert(0) += 1;
            }
            codec::encode(&doc, &mut state.fields, &mut encoded);
            self.store
                .docs
                .put(txn, &iid, &encoded)
                .map_err(heed_error)?;
            state.dirty.insert(iid);
            // A new internal id has never reached tantivy (ids only grow, and a batch that
            // fails rolls tantivy back with LMDB): nothing to delete. A document repeated in
            // the payload is deleted after its earlier version reached tantivy.
            if existing.is_some() {
                if pending.ids.contains(&iid) {
                    self.index_text(
                        writer,
                        &mut pending,
                        searchable.as_deref(),
                        &state.fields,
                        &analyzer,
                    )?;
                }
                writer.delete_term(Term::from_field_u64(self.fields.iid, iid as u64));
            }
            text::assign_fields(&doc, searchable.as_deref(), &mut state.fields);
            pending.ids.insert(iid);
            pending.docs.push((iid, doc));
            if pending.docs.len() >= TEXT_CHUNK {
                self.index_text(
                    writer,
                    &mut pending,
                    searchable.as_deref(),
                    &state.fields,
                    &analyzer,
                )?;
            }
            done += 1;
            if done.is_multiple_of(4096) {
                self.set_progress(|p| p.done = done);
            }
            Ok(())
        })?;
        self.index_text(
            writer,
            &mut pending,
            searchable.as_deref(),
            &state.fields,
            &analyzer,
        )?;
        Ok(total)
    }

    /// Tokenizes `pending` on every core (up to 4 threads) and hands the documents to
    /// tantivy in order; empties `pending`.
    fn index_text(
        &self,
        writer: &mut IndexWriter,
        pending: &mut PendingText,
        searchable: Option<&[String]>,
        fields: &FieldsMap,
        analyzer: &tokens::Analyzer,
    ) -> Result<()> {
        if pending.docs.is_empty() {
            return Ok(());
        }
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 4);
        let part = pending.docs.len().div_ceil(threads);
        let docs: Vec<Vec<TantivyDocument>> = std::thread::scope(|scope| {
            let handles: Vec<_> = pending
                .docs
                .chunks(part)
                .map(|chunk| {
                    scope.spawn(move || {
                        analyzer.with(|tokenizer| {
                            chunk
                                .iter()
                                .map(|(iid, doc)| {
                                    self.tantivy_doc(*iid, doc, searchable, fields, tokenizer)
                                })
                                .collect::<Vec<_>>()
                        })
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a tokenizing thread panicked"))
                .collect()
        });
        for tdoc in docs.into_iter().flatten() {
            writer.add_document(tdoc).map_err(tv)?;
        }
        pending.docs.clear();
        pending.ids.clear();
        Ok(())
    }

    /// Deletes the documents (as this batch sees them) matching `filter`, validated against
    /// the settings this batch has reached.
    fn delete_by_filter(
        &self,
        txn: &mut RwTxn,
        writer: &mut IndexWriter,
        state: &mut BatchState,
        filter: &Value,
    ) -> Result<u64> {
        let invalid = |m: String| Error::new("invalid_document_filter", m);
        let Some(filter) = Filter::from_json(filter).map_err(invalid)? else {
            return Ok(0);
        };
        let settings = match &state.settings {
            Some(s) => Some(s.clone()),
            None => self.stored_settings(txn)?,
        };
        filter.validate(settings.as_ref()).map_err(invalid)?;
        let Some(pk) = state.primary_key.clone() else {
            return Ok(0);
        };
        let mut matched = Vec::new();
        for item in self.store.docs.iter(txn).map_err(heed_error)? {
            let (_, bytes) = item.map_err(heed_error)?;
            let doc = codec::decode(bytes, &state.fields)?;
            if filter.matches(&doc) {
                matched.push(docid::document_id(&doc, &pk)?);
            }
        }
        let mut deleted = 0;
        for ext in matched {
            if self.delete_one(txn, writer, state, &ext)? {
                deleted += 1;
            }
        }
        Ok(deleted)
    }

    fn delete_one(
        &self,
        txn: &mut RwTxn,
        writer: &mut IndexWriter,
        state: &mut BatchState,
        ext: &str,
    ) -> Result<bool> {
        let Some(iid) = self.store.ids.get(txn, ext).map_err(heed_error)? else {
            return Ok(false);
        };
        if let Some(old) = self.store.docs.get(txn, &iid).map_err(heed_error)? {
            let old = codec::decode(old, &state.fields)?;
            for k in old.keys() {
                decrement(&mut state.field_distribution, k);
            }
        }
        self.store.docs.delete(txn, &iid).map_err(heed_error)?;
        self.store.ids.delete(txn, ext).map_err(heed_error)?;
        state.dirty.insert(iid);
        writer.delete_term(Term::from_field_u64(self.fields.iid, iid as u64));
        Ok(true)
    }

    /// `{"steps":[...],"percentage":p}` while a batch runs.
    pub fn progress_json(&self) -> Option<String> {
        let p = self.progress.lock().unwrap().clone()?;
        let op_fraction = if p.total > 0 {
            p.done as f64 / p.total as f64
        } else {
            0.0
        };
        let percentage = if p.ops == 0 {
            0.0
        } else {
            (p.op as f64 + op_fraction) / p.ops as f64 * 100.0
        };
        let mut steps =
            vec![json!({"currentStep": "processing tasks", "finished": p.op, "total": p.ops})];
        if p.total > 0 {
            steps.push(json!({"currentStep": p.step, "finished": p.done, "total": p.total}));
        } else {
            steps.push(json!({"currentStep": p.step, "finished": 0, "total": 1}));
        }
        Some(
            json!({"steps": steps, "percentage": (percentage * 1000.0).round() / 1000.0})
                .to_string(),
        )
    }

    pub fn primary_key(&self) -> Result<Option<String>> {
        let rtxn = self.store.read()?;
        self.store.get_string(&rtxn, keys::PRIMARY_KEY)
    }

    /// The stored settings object, or None before the first settings update.
    pub fn settings_json(&self) -> Result<Option<String>> {
        let rtxn = self.store.read()?;
        self.store.get_string(&rtxn, keys::SETTINGS)
    }

    pub fn document_count(&self) -> Result<u64> {
        let rtxn = self.store.read()?;
        self.store.docs.len(&rtxn).map_err(heed_error)
    }

    pub fn stats_json(&self) -> Result<String> {
        let rtxn = self.store.read()?;
        let stat = self.store.docs.stat(&rtxn).map_err(heed_error)?;
        let count = stat.entries as u64;
        let pages = (stat.leaf_pages + stat.branch_pages + stat.overflow_pages) as u64;
        let raw = pages * stat.page_size as u64;
        let fd = self.field_distribution(&rtxn)?;
        Ok(json!({
            "numberOfDocuments": count,
            "rawDocumentDbSize": raw,
            "avgDocumentSize": raw.checked_div(count).unwrap_or(0),
            "fieldDistribution": fd,
        })
        .to_string())
    }

    /// One document by external id, with only `fields` when given.
    pub fn get_document(&self, id: &str, fields: Option<&[String]>) -> Result<Option<Vec<u8>>> {
        let rtxn = self.store.read()?;
        let Some(iid) = self.store.ids.get(&rtxn, id).map_err(heed_error)? else {
            return Ok(None);
        };
        let Some(bytes) = self.store.docs.get(&rtxn, &iid).map_err(heed_error)? else {
            return Ok(None);
        };
        let doc = self.decode_doc(bytes)?;
        let doc = project(doc, fields, false);
        Ok(Some(serde_json::to_vec(&doc).map_err(Error::internal)?))
    }

    /// `{"results":[...],"offset","limit","total"}` in internal-id order, or by `sort`.
    pub fn fetch_documents(&self, q: &FetchQuery) -> Result<Vec<u8>> {
        let rtxn = self.store.read()?;
        let settings = self.stored_settings(&rtxn)?;
        let allowed = self.allowed_ids(
            &rtxn,
            q.filter.as_ref(),
            settings.as_ref(),
            "invalid_document_filter",
            q.contains_filter,
        )?;
        let passes = |iid: u32| allowed.as_ref().is_none_or(|a| a.contains(iid));
        let fields = q.fields.as_deref();
        let decode = |iid: u32| -> Result<Option<Map<String, Value>>> {
            match self.store.docs.get(&rtxn, &iid).map_err(heed_error)? {
                Some(bytes) => Ok(Some(self.decode_doc(bytes)?)),
                None => Ok(None),
            }
        };
        // The requested ids that exist and pass the filter, in internal-id order.
        let requested: Option<Vec<u32>> = match &q.ids {
            Some(ids) => {
                let mut iids: Vec<u32> = Vec::new();
                for id in ids {
                    if let Some(iid) = self.store.ids.get(&rtxn, id).map_err(heed_error)? {
                        iids.push(iid);
                    }
                }
                iids.sort_unstable();
                iids.dedup();
                iids.retain(|&i| passes(i));
                Some(iids)
            }
            None => None,
        };
        let mut page: Vec<Map<String, Value>> = Vec::new();
        let total;
        let sort_specs = q.sort.as_deref().unwrap_or_default();
        if !sort_specs.is_empty() {
            let sortable = string_list(settings.as_ref(), "sortableAttributes").unwrap_or_default();
            let keys = crate::sort::parse(sort_specs, &sortable, "invalid_document_sort")?;
            // Every candidate is read and ordered; the filters issue brings sorted columns.
            let mut docs: Vec<(u32, Map<String, Value>)> = Vec::new();
            match requested {
                Some(iids) => {
                    for iid in iids {
                        if let Some(doc) = decode(iid)? {
                            docs.push((iid, doc));
                        }
                    }
                }
                None => {
                    for item in self.store.docs.iter(&rtxn).map_err(heed_error)? {
                        let (iid, bytes) = item.map_err(heed_error)?;
                        if passes(iid) {
                            docs.push((iid, self.decode_doc(bytes)?));
                        }
                    }
                }
            }
            crate::sort::sort_documents(&mut docs, &keys);
            total = docs.len() as u64;
            page.extend(
                docs.into_iter()
                    .skip(q.offset)
                    .take(q.limit)
                    .map(|(_, d)| d),
            );
        } else if let Some(iids) = requested {
            total = iids.len() as u64;
            for iid in iids.into_iter().skip(q.offset).take(q.limit) {
                page.extend(decode(iid)?);
            }
        } else if let Some(allowed) = &allowed {
            total = allowed.len();
            for iid in allowed.iter().skip(q.offset).take(q.limit) {
                page.extend(decode(iid)?);
            }
        } else {
            total = self.store.docs.len(&rtxn).map_err(heed_error)?;
            for item in self
                .store
                .docs
                .iter(&rtxn)
                .map_err(heed_error)?
                .skip(q.offset)
                .take(q.limit)
            {
                page.push(self.decode_doc(item.map_err(heed_error)?.1)?);
            }
        }
        let results: Vec<Value> = page
            .into_iter()
            .map(|doc| Value::Object(retrieve(doc, fields, q.retrieve_vectors)))
            .collect();
        serde_json::to_vec(
            &json!({"results": results, "offset": q.offset, "limit": q.limit, "total": total}),
        )
        .map_err(Error::internal)
    }
}

fn pk_exists(pk: &str) -> Error {
    Error::new(
        "index_primary_key_already_exists",
        format!("Index already has a primary key: `{pk}`."),
    )
}

/// Errors that abort the whole batch rather than one op (the store itself failed).
fn is_batch_fatal(e: &Error) -> bool {
    matches!(
        e.code,
        "internal"
            | "io_error"
            | "no_space_left_on_device"
            | "database_size_limit_reached"
            | "too_many_open_files"
    )
}

fn decrement(fd: &mut BTreeMap<String, u64>, key: &str) {
    if let Some(n) = fd.get_mut(key) {
        *n -= 1;
        if *n == 0 {
            fd.remove(key);
        }
    }
}

/// Projection for documents and hits: `fields`, then `_vectors` as `retrieveVectors` asks.
fn retrieve(
    doc: Map<String, Value>,
    fields: Option<&[String]>,
    vectors: bool,
) -> Map<String, Value> {
    if !vectors {
        return project(doc, fields, false);
    }
    let stored = doc.get("_vectors").cloned();
    let mut out = project(doc, fields, false);
    if let Some(v) = stored {
        out.insert("_vectors".into(), v);
    }
    with_vectors(out)
}

/// Keeps only `fields` (top-level names, or dotted paths into objects) and drops `_vectors`
/// unless asked for.
fn project(
    doc: Map<String, Value>,
    fields: Option<&[String]>,
    keep_vectors: bool,
) -> Map<String, Value> {
    let mut doc = match fields {
        None => doc,
        Some(fields) if fields.iter().any(|f| f == "*") => doc,
        Some(fields) => {
            let mut out = Map::new();
            for (k, v) in doc {
                if fields.iter().any(|f| f == &k) {
                    out.insert(k, v);
                } else if let Value::Object(inner) = v {
                    let prefix = format!("{k}.");
                    let nested: Vec<String> = fields
                        .iter()
                        .filter_map(|f| f.strip_prefix(&prefix).map(str::to_string))
                        .collect();
                    if !nested.is_empty() {
                        let sub = project(inner, Some(&nested), true);
                        if !sub.is_empty() {
                            out.insert(k, Value::Object(sub));
                        }
                    }
                }
            }
            out
        }
    };
    if !keep_vectors {
        doc.remove("_vectors");
    }
    doc
}

/// The document as `retrieveVectors` asks: `_vectors` present (empty without embedders).
fn with_vectors(mut doc: Map<String, Value>) -> Map<String, Value> {
    if !doc.contains_key("_vectors") {
        doc.insert("_vectors".into(), Value::Object(Map::new()));
    }
    doc
}

/// The searchable attributes in order, `None` when every attribute is (`["*"]` or unset).
fn searchable_of(settings: Option<&Value>) -> Option<Vec<String>> {
    string_list(settings, "searchableAttributes").filter(|a| !a.iter().any(|f| f == "*"))
}

/// A list-of-strings setting (`sortableAttributes`, `displayedAttributes`, ...); `None` when
/// unset or when settings were never written.
fn string_list(settings: Option<&Value>, name: &str) -> Option<Vec<String>> {
    settings?[name].as_array().map(|a| {
        a.iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    })
}
