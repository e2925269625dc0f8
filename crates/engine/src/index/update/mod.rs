//! Writing to an index: a batch of operations from the task queue, applied in order and
//! committed once. An op that fails (a bad document, an invalid filter) is reported in its
//! result and the others go on; an error of the store itself aborts the whole batch.
//!
//! The entry points are the methods of [`Index`] below, for the binding, the index's opening
//! and the tests: each takes the index's locks (`batch_lock`, then the tantivy writer) and
//! hands the work to a write context holding what the work needs, whose methods are the steps:
//!
//! - [`batch`]: [`batch::Batch`], one batch being applied: the index, the LMDB write
//!   transaction, the locked tantivy writer and the [`batch::BatchState`] it commits; its ops
//!   and their steps are its methods:
//!   - [`add`]: adding or updating documents from a staged payload;
//!   - [`delete`]: deleting by id, by filter, or all;
//!   - [`edit`]: editing the documents matching a filter with a function;
//!   - [`reindex`]: a settings update, and re-feeding tantivy when what is indexed changed;
//!   - [`embedding`]: writing the documents' embeddings, given or generated (computed before
//!     anything is written), with the checks and state of [`vectors`];
//!   - [`adopt`]: a new embedder taking the embeddings stored documents carried for its name;
//! - [`commit`]: the commit protocol (a batch's last step), recovery at open and rebuilding a
//!   lost inverted index, with the argument for why a crash loses nothing acknowledged;
//! - [`compaction`]: merging the segments batches leave (`compaction::Merge`);
//! - [`writer`]: the tantivy writer, locked ([`writer::Writer`]), which batches, recovery and
//!   compaction share;
//! - [`progress`]: the progress of the running batch, for `GET /batches`.

use std::path::{Path, PathBuf};

use api_types::{Code, Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{tv, Index};
use crate::store::keys;
use batch::Batch;
use writer::Writer;

mod add;
mod adopt;
mod batch;
pub(crate) mod commit;
pub(crate) mod compaction;
mod delete;
mod edit;
mod embedding;
mod progress;
mod reindex;
mod vectors;
mod writer;

use compaction::Compaction;
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

/// One addition: the staged payload, how its documents meet stored ones, the primary key the
/// task asked for, whether the index may not be created, and the shards kept (`None`: all).
struct Addition<'a> {
    pub file: &'a Path,
    pub method: Method,
    pub primary_key: Option<&'a str>,
    pub skip_creation: bool,
    pub shards: Option<&'a Shards>,
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
        /// Whether its task reports the error naming the index (`Index \`uid\`: …`), as
        /// Meilisearch's batches report the errors of settings updates, deletions by filter and
        /// editions, and a document's vectors whatever the task (not a document's id or the
        /// primary key).
        names_index: bool,
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

    fn failed(op: &BatchOp, error: &Error) -> Self {
        let of_vectors = matches!(
            error.code,
            Code::VectorEmbeddingError | Code::InvalidVectorDimensions | Code::InvalidVectorsType
        );
        let of_op = matches!(
            op,
            BatchOp::UpdateSettings { .. }
                | BatchOp::DeleteByFilter { .. }
                | BatchOp::EditDocuments { .. }
        );
        BatchOpResult::Failed {
            task_uid: op.task_uid(),
            ok: false,
            error: error.to_json(),
            names_index: of_vectors || of_op,
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

/// The entry points of the write side: what the binding, the index's opening and the tests
/// call. Each takes the locks it needs and hands the work to the write contexts of the
/// submodules.
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
        // A read-only process killed mid-read leaves its LMDB reader slot, which would keep its
        // snapshot's pages from reuse: slots of dead processes are freed first.
        self.store
            .env
            .clear_stale_readers()
            .map_err(crate::store::heed_error)?;
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
        let mut writer = Writer::lock(self);
        let mut batch = Batch::begin(self, writer.get()?)?;
        // A batch that failed as a whole leaves no trace: its transaction is dropped and so is
        // the writer, once its files are deleted (a writer whose segment flush failed is not
        // used again; the next one starts from tantivy's last commit).
        let outcome = match batch.apply(ops) {
            Ok(results) => batch.commit(&results).map(|()| results),
            Err(e) => {
                drop(batch);
                Err(e)
            }
        };
        if outcome.is_err() {
            writer.discard_uncommitted();
        }
        outcome
    }

    /// Re-applies to tantivy a dirty set that LMDB committed but tantivy may not have (step 3
    /// of the commit protocol, see [`commit`]).
    pub(in crate::index) fn recover(&self) -> Result<()> {
        commit::recover(self)
    }

    /// Rebuilds tantivy from LMDB when it is behind with nothing left to replay (see
    /// [`commit`]), and merges what the rebuild wrote.
    pub(in crate::index) fn rebuild_if_behind(&self) -> Result<()> {
        commit::rebuild_if_behind(self)
    }

    /// `{"steps":[...],"percentage":p}` while a batch runs.
    pub fn progress_json(&self) -> Option<String> {
        let p = self.progress.lock().unwrap().clone()?;
        Some(p.json())
    }

    /// One segment answers a query several times faster than ten: each segment computes its
    /// own top hits. Merging costs about 5 µs per document on one thread (4.3 s for the 886k
    /// PyPI rows), so it runs only when the documents outside the segments the last merge left
    /// are at least an eighth of the index: a bulk load pays it once at the end, and a trickle
    /// of small updates pays it at most once per eighth of growth. An index of at least
    /// 2 × [`COMPACTION_PART_DOCS`](compaction::COMPACTION_PART_DOCS) is merged into two segments of about half its documents
    /// each, at once: PyPI's merge takes 2.3 s instead of 4.3, and its keyword searches are up
    /// to 12% slower at the median than on one segment. The task worker calls it after a batch
    /// when nothing else is queued for the index by then (a bulk load sent in several requests
    /// merges once, after its last batch, not after its first).
    ///
    /// When at least half the index was written since the last merge (a bulk load), it merges
    /// before returning, so the load's tasks are reported `succeeded` on a merged index. When
    /// less was (a trickle of small batches reached an eighth), it merges nothing and answers
    /// [`Compaction::Later`]: the caller runs [`Index::compact_later`] without waiting for it,
    /// since merging 100,000 documents there would hold up the batch's success and the next
    /// batch's by a second or more.
    pub fn compact_if_worthwhile(&self) -> Result<Compaction> {
        compaction::compact_if_worthwhile(self)
    }

    /// The merge [`Index::compact_if_worthwhile`] left for later, while batches go on: the
    /// batch lock is held only to start the merge and to publish its segments, so batches
    /// commit (and tantivy applies their deletions to the merged segment) while it runs. One
    /// runs at a time; a second call while one runs returns at once. Whatever asks for every
    /// merge to end (a snapshot's copy, `POST /indexes/{uid}/compact`) waits for it. A crash
    /// meanwhile leaves the segments as they were.
    pub fn compact_later(&self) -> Result<()> {
        compaction::compact_later(self)
    }

    /// `POST /indexes/{uid}/compact`: every segment of the inverted index merged into one,
    /// whatever their sizes and the index's.
    pub fn compact(&self) -> Result<()> {
        compaction::merge_segments(self, true)
    }

    /// Writes a consistent copy of the index into `dest` (a new directory) for a snapshot:
    /// with the batch lock held and the writer's merges finished and the writer released,
    /// nothing changes the files while the LMDB store is copied (compacted, as of one read
    /// transaction) and tantivy's files are copied as they are. The copy opens like any index.
    pub fn copy_to(&self, dest: &Path) -> Result<()> {
        compaction::copy_to(self, dest)
    }

    /// Segments of the inverted index that searches visit.
    pub fn segment_count(&self) -> Result<usize> {
        Ok(self.tantivy.searchable_segment_metas().map_err(tv)?.len())
    }
}
