//! Writing to an index: a batch of operations from the task queue, applied in order and
//! committed once. An op that fails (a bad document, an invalid filter) is reported in its
//! result and the others go on; an error of the store itself aborts the whole batch.
//!
//! - [`add`]: adding or updating documents from a staged payload;
//! - [`delete`]: deleting by id, by filter, or all;
//! - [`edit`]: editing the documents matching a filter with a function;
//! - [`reindex`]: a settings update, and re-feeding tantivy when what is indexed changed;
//! - [`commit`]: the commit protocol, recovery at open, and compaction (with the argument
//!   for why a crash loses nothing acknowledged);
//! - [`progress`]: the progress of the running batch, for `GET /batches`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use api_types::{Code, Error, Result};
use heed::RwTxn;
use roaring::RoaringBitmap;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use tantivy::IndexWriter;

use super::{text, tv, Index};
use crate::codec::FieldsMap;
use crate::settings::Settings;
use crate::store::{heed_error, keys};

mod add;
pub(crate) mod commit;
pub(crate) mod compaction;
mod delete;
mod edit;
mod embedding;
mod progress;
mod reindex;
mod vectors;

pub(super) use progress::Progress;
pub(super) use vectors::user_vectors;

/// One operation of a batch, as the task queue sends it.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum BatchOp {
    #[serde(rename_all = "camelCase")]
    AddDocuments {
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        task_uid: u64,
        file: PathBuf,
        method: Method,
        primary_key: Option<String>,
        #[serde(default)]
        #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
        skip_creation: bool,
        /// On an instance of a sharded network: only the documents of its own shards are kept.
        #[serde(default)]
        shards: Option<Shards>,
        /// What the payload file held when it was staged (absent for files staged before it
        /// was recorded, or imported from a dump): checked before it is read.
        #[serde(default)]
        check: Option<crate::StagedCheck>,
    },
    #[serde(rename_all = "camelCase")]
    DeleteDocuments {
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        task_uid: u64,
        ids: Vec<String>,
    },
    /// Deletes the documents matching `filter` (string or array form).
    #[serde(rename_all = "camelCase")]
    DeleteByFilter {
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        task_uid: u64,
        #[cfg_attr(feature = "ts", ts(type = "unknown"))]
        filter: Value,
    },
    #[serde(rename_all = "camelCase")]
    ClearDocuments {
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        task_uid: u64,
    },
    /// Runs `function` (Rhai) on the documents matching `filter` (all without one), with
    /// `context`; see [`crate::edit`].
    #[serde(rename_all = "camelCase")]
    EditDocuments {
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        task_uid: u64,
        function: String,
        #[serde(default)]
        #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
        filter: Option<Value>,
        #[serde(default)]
        #[cfg_attr(feature = "ts", ts(optional, type = "Record<string, unknown> | null"))]
        context: Option<Value>,
    },
    #[serde(rename_all = "camelCase")]
    SetPrimaryKey {
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        task_uid: u64,
        primary_key: String,
    },
    /// Applies a settings update (the validated request, see [`crate::SettingsPatch`]) to the
    /// settings the batch has reached.
    #[serde(rename_all = "camelCase")]
    UpdateSettings {
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        task_uid: u64,
        #[cfg_attr(feature = "ts", ts(type = "unknown"))]
        patch: Value,
    },
}

impl BatchOp {
    pub fn task_uid(&self) -> u64 {
        match self {
            BatchOp::AddDocuments { task_uid, .. }
            | BatchOp::DeleteDocuments { task_uid, .. }
            | BatchOp::DeleteByFilter { task_uid, .. }
            | BatchOp::ClearDocuments { task_uid }
            | BatchOp::EditDocuments { task_uid, .. }
            | BatchOp::SetPrimaryKey { task_uid, .. }
            | BatchOp::UpdateSettings { task_uid, .. } => *task_uid,
        }
    }
}

/// The shards of a network (`all`) and those this instance holds (`own`).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Shards {
    pub all: Vec<String>,
    pub own: Vec<String>,
}

impl Shards {
    /// Whether the document of external id `id` belongs here.
    pub fn keeps(&self, id: &str) -> bool {
        crate::docid::shard_of(id, &self.all).is_some_and(|s| self.own.iter().any(|o| o == s))
    }
}

/// How added documents meet stored ones: replacing them, or updated field by field.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum Method {
    Replace,
    Update,
}

/// A batch, as `applyBatch` takes it: its ops, applied in order and committed once.
#[derive(Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BatchInput {
    pub ops: Vec<BatchOp>,
}

impl BatchOp {
    /// Adds the documents of the payload staged in `file` (see [`crate::stage_documents`]), as a
    /// task that may create the index, on an instance holding every shard, without a check of
    /// what the file held when it was staged.
    pub fn add_documents(
        task_uid: u64,
        file: PathBuf,
        method: Method,
        primary_key: Option<String>,
    ) -> BatchOp {
        BatchOp::AddDocuments {
            task_uid,
            file,
            method,
            primary_key,
            skip_creation: false,
            shards: None,
            check: None,
        }
    }
}

/// What one op of a batch came to (`applyBatch`'s `results`, in op order).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(untagged)]
pub enum BatchOpResult {
    #[serde(rename_all = "camelCase")]
    Done {
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        task_uid: u64,
        /// Always `true`.
        #[cfg_attr(feature = "ts", ts(type = "true"))]
        ok: bool,
        #[serde(flatten)]
        counts: OpCounts,
    },
    #[serde(rename_all = "camelCase")]
    Failed {
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        task_uid: u64,
        /// Always `false`.
        #[cfg_attr(feature = "ts", ts(type = "false"))]
        ok: bool,
        /// The op's error: `{code, message}`, `code` from the `api-types` table.
        #[cfg_attr(feature = "ts", ts(type = "{ code: string; message: string }"))]
        error: Value,
    },
}

impl BatchOpResult {
    fn done(task_uid: u64, counts: OpCounts) -> Self {
        BatchOpResult::Done {
            task_uid,
            ok: true,
            counts,
        }
    }

    fn failed(task_uid: u64, error: &Error) -> Self {
        BatchOpResult::Failed {
            task_uid,
            ok: false,
            error: error.to_json(),
        }
    }
}

/// The documents a successful op touched: `indexedDocuments` for additions,
/// `deletedDocuments` for deletions and clears, both edited and deleted for an edition.
#[derive(Debug, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct OpCounts {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "number"))]
    pub indexed_documents: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "number"))]
    pub edited_documents: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "number"))]
    pub deleted_documents: Option<u64>,
}

/// In-memory state of a batch being applied (written to `meta` at commit).
struct BatchState {
    primary_key: Option<String>,
    /// Internal ids from this one up were never given.
    next_id: u32,
    /// The ids below `next_id` not in use when the batch started, less those given since;
    /// `None` until the batch's first new document.
    free_ids: Option<RoaringBitmap>,
    field_distribution: BTreeMap<String, u64>,
    dirty: RoaringBitmap,
    /// The settings as the batch's settings ops left them; `None` while unchanged.
    settings: Option<Arc<Settings>>,
    fields: FieldsMap,
    vectors: vectors::VectorState,
    /// The index's pair words; `None` until they are chosen (see [`Index::choose_pair_words`],
    /// which writes them).
    pairs: Option<Arc<text::PairWords>>,
}

impl Index {
    /// Applies a batch (JSON `{"ops":[...]}`) and returns `{"results":[...]}`.
    pub fn apply_batch_json(&self, input: &str) -> Result<String> {
        let input: BatchInput =
            serde_json::from_str(input).map_err(|e| Error::internal(format!("bad batch: {e}")))?;
        let results = self.apply_batch(input.ops)?;
        Ok(json!({ "results": results }).to_string())
    }

    /// Applies the ops in order and commits once. Per-op failures are reported in the results.
    pub fn apply_batch(&self, ops: Vec<BatchOp>) -> Result<Vec<Value>> {
        let _batch = self.batch_lock.lock().unwrap();
        // An earlier batch committed in LMDB whose tantivy commit failed (a full disk) is
        // completed first, from the dirty set it left.
        self.recover()?;
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
                let result = match r {
                    Ok(counts) => BatchOpResult::done(op.task_uid(), counts),
                    Err(e) if is_batch_fatal(&e) => return Err(e),
                    Err(e) => BatchOpResult::failed(op.task_uid(), &e),
                };
                results.push(serde_json::to_value(result).map_err(Error::internal)?);
            }
            Ok(())
        })();
        // A batch that failed as a whole leaves no trace: its transaction is dropped and so is
        // the writer, once its files are deleted (a writer whose segment flush failed is not
        // used again; the next one starts from tantivy's last commit).
        let outcome =
            outcome.and_then(|()| self.commit_batch(wtxn, writer, &state, &results, clear_all));
        if let Err(e) = outcome {
            self.discard_uncommitted(&mut guard);
            return Err(e);
        }
        Ok(results)
    }

    /// Gives `doc`'s searchable paths field ids and hands its text to tantivy at once (the
    /// caller deleted any earlier version).
    fn feed_doc(
        &self,
        writer: &mut IndexWriter,
        iid: u32,
        doc: &Map<String, Value>,
        searchable: Option<&[String]>,
        fields: &mut FieldsMap,
        cut: text::Cutter,
    ) -> Result<()> {
        text::assign_fields(doc, searchable, fields);
        let tdoc = self.tantivy_doc(iid, doc, searchable, fields, cut);
        writer.add_document(tdoc).map_err(tv)?;
        Ok(())
    }

    fn load_state(&self, txn: &heed::RoTxn) -> Result<BatchState> {
        let field_distribution = self.field_distribution(txn)?;
        Ok(BatchState {
            primary_key: self.store.get_string(txn, keys::PRIMARY_KEY)?,
            next_id: self.store.get_u64(txn, keys::NEXT_ID)? as u32,
            free_ids: None,
            field_distribution,
            dirty: self.store.get_dirty(txn)?.unwrap_or_default(),
            settings: None,
            fields: self.store.fields_map(txn)?,
            vectors: vectors::VectorState::load(&self.store, txn)?,
            pairs: self.stored_pair_words(txn)?.map(Arc::new),
        })
    }

    /// A new document's internal id: the smallest one not in use when the batch started, else
    /// the next never given. Ids freed by deletions are given again, as Meilisearch does: the
    /// order of `GET /documents` and of a placeholder search's hits (and of ties) is the order
    /// of internal ids, which so stays Meilisearch's after deletions. The ids in use are read
    /// from the last commit (ids the batch itself deletes are given in a later batch); an index
    /// without holes is known by its count alone.
    fn new_internal_id(&self, state: &mut BatchState) -> Result<u32> {
        if state.free_ids.is_none() {
            let rtxn = self.store.read()?;
            let count = self.store.docs.len(&rtxn).map_err(heed_error)?;
            let mut free = RoaringBitmap::new();
            if count < u64::from(state.next_id) {
                free.insert_range(0..state.next_id);
                free -= &*self.all_ids(&rtxn)?;
            }
            state.free_ids = Some(free);
        }
        let free = state.free_ids.get_or_insert_with(RoaringBitmap::new);
        if let Some(iid) = free.min() {
            free.remove(iid);
            return Ok(iid);
        }
        let iid = state.next_id;
        state.next_id = iid
            .checked_add(1)
            .ok_or_else(|| Error::internal("internal id space exhausted"))?;
        Ok(iid)
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
        self.store.put_fields_map(txn, &state.fields)?;
        if let Some(settings) = &state.settings {
            self.store.put_meta(
                txn,
                keys::SETTINGS,
                &serde_json::to_vec(settings.as_ref()).map_err(Error::internal)?,
            )?;
        }
        Ok(())
    }

    /// The index's pair words as stored; `None` until they are chosen.
    pub(in crate::index) fn stored_pair_words(
        &self,
        txn: &heed::RoTxn,
    ) -> Result<Option<text::PairWords>> {
        let Some(bytes) = self.store.get_meta(txn, keys::PAIR_WORDS)? else {
            return Ok(None);
        };
        let words: Vec<String> = serde_json::from_slice(bytes).map_err(Error::internal)?;
        Ok(Some(text::PairWords::from_words(words)))
    }

    /// Whether the index's pair words are due once `adding` more documents are stored: not
    /// chosen yet, and the store would hold [`text::PAIR_WORDS_AT`] documents or more.
    fn pair_words_due(&self, txn: &RwTxn, state: &BatchState, adding: u64) -> Result<bool> {
        Ok(state.pairs.is_none()
            && self.store.docs.len(txn).map_err(heed_error)? + adding >= text::PAIR_WORDS_AT)
    }

    /// Chooses the index's pair words from [`text::PAIR_WORDS_SAMPLE`] stored documents drawn
    /// evenly and `more` (documents a batch is adding), and writes them with the batch (once:
    /// they never change after).
    fn choose_pair_words(
        &self,
        txn: &mut RwTxn,
        state: &mut BatchState,
        settings: &Settings,
        mut more: Vec<Map<String, Value>>,
    ) -> Result<()> {
        let stored = self.store.docs.len(txn).map_err(heed_error)? as usize;
        let step = stored.div_ceil(text::PAIR_WORDS_SAMPLE).max(1);
        for item in self.store.docs.iter(txn).map_err(heed_error)?.step_by(step) {
            let (_, bytes) = item.map_err(heed_error)?;
            more.push(crate::codec::decode(bytes, &state.fields)?);
        }
        let analyzer = settings.analyzer();
        let locales = crate::languages::Locales::from_settings(settings);
        let pairs = text::PairWords::choose(&more, settings.searchable(), &analyzer, &locales);
        let words = serde_json::to_vec(&pairs.words()).map_err(Error::internal)?;
        self.store.put_meta(txn, keys::PAIR_WORDS, &words)?;
        state.pairs = Some(Arc::new(pairs));
        Ok(())
    }

    /// The settings the batch has reached: its own once a settings op ran, else the stored
    /// ones (which the batch has not written: settings are written at commit).
    fn batch_settings(&self, txn: &heed::RoTxn, state: &BatchState) -> Result<Arc<Settings>> {
        match &state.settings {
            Some(s) => Ok(s.clone()),
            None => self.settings(txn),
        }
    }

    fn apply_op(
        &self,
        txn: &mut RwTxn,
        writer: &mut IndexWriter,
        state: &mut BatchState,
        op: &BatchOp,
        clear_all: &mut bool,
    ) -> Result<OpCounts> {
        let mut out = OpCounts::default();
        match op {
            BatchOp::AddDocuments {
                file,
                method,
                primary_key,
                skip_creation,
                shards,
                check,
                ..
            } => {
                if let Some(check) = check {
                    crate::payload::verify_staged(file, check)?;
                }
                let addition = add::Addition {
                    file,
                    method: *method,
                    primary_key: primary_key.as_deref(),
                    skip_creation: *skip_creation,
                    shards: shards.as_ref(),
                };
                let n = self.add_documents(txn, writer, state, addition)?;
                out.indexed_documents = Some(n);
            }
            BatchOp::DeleteDocuments { ids, .. } => {
                let deleted = self.delete_documents(txn, writer, state, ids)?;
                out.deleted_documents = Some(deleted);
            }
            BatchOp::DeleteByFilter { filter, .. } => {
                let deleted = self.delete_by_filter(txn, writer, state, filter)?;
                out.deleted_documents = Some(deleted);
            }
            BatchOp::EditDocuments {
                function,
                filter,
                context,
                ..
            } => {
                let edited = self.edit_documents(
                    txn,
                    writer,
                    state,
                    function,
                    filter.as_ref(),
                    context.as_ref(),
                )?;
                // Meilisearch reports the documents the function ran on as both edited and
                // deleted, whatever it did to them.
                out.edited_documents = Some(edited.matched);
                out.deleted_documents = Some(edited.matched);
            }
            BatchOp::ClearDocuments { .. } => {
                let count = self.clear_documents(txn, writer, state)?;
                *clear_all = true;
                out.deleted_documents = Some(count);
            }
            BatchOp::SetPrimaryKey { primary_key, .. } => {
                let has_docs = !self.store.docs.is_empty(txn).map_err(heed_error)?;
                match &state.primary_key {
                    Some(pk) if pk != primary_key && has_docs => return Err(pk_exists(pk)),
                    _ => state.primary_key = Some(primary_key.clone()),
                }
            }
            BatchOp::UpdateSettings { patch, .. } => {
                self.update_settings(txn, writer, state, patch)?;
            }
        }
        Ok(out)
    }
}

fn pk_exists(pk: &str) -> Error {
    Error::new(
        Code::IndexPrimaryKeyAlreadyExists,
        format!("Index already has a primary key: `{pk}`."),
    )
}

/// Errors that abort the whole batch rather than one op (the store itself failed).
fn is_batch_fatal(e: &Error) -> bool {
    matches!(
        e.code,
        Code::Internal
            | Code::IoError
            | Code::NoSpaceLeftOnDevice
            | Code::DatabaseSizeLimitReached
            | Code::TooManyOpenFiles
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
