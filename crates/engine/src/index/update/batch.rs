//! The write context of a batch: the index, the batch's LMDB write transaction, the locked
//! tantivy writer it feeds, and the state it carries to its commit. Each op is a method of it
//! (in [`super::add`], [`super::delete`], [`super::edit`], [`super::reindex`], with the
//! embeddings of [`super::embedding`]), and so is the commit ([`super::commit`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use api_types::{Code, Error, Result};
use heed::RwTxn;
use roaring::RoaringBitmap;
use serde_json::{Map, Value};
use tantivy::{IndexWriter, Term};

use super::{vectors, Addition, BatchOp, BatchOpResult, OpCounts};
use crate::codec::FieldsMap;
use crate::index::{text, tv, Fields, Index};
use crate::settings::Settings;
use crate::store::{heed_error, keys};

/// In-memory state of a batch being applied (written to `meta` at commit).
pub(super) struct BatchState {
    pub(super) primary_key: Option<String>,
    /// Internal ids from this one up were never given.
    pub(super) next_id: u32,
    /// The ids below `next_id` not in use when the batch started, less those given since;
    /// `None` until the batch's first new document.
    pub(super) free_ids: Option<RoaringBitmap>,
    pub(super) field_distribution: BTreeMap<String, u64>,
    pub(super) dirty: RoaringBitmap,
    /// The settings as the batch's settings ops left them; `None` while unchanged.
    pub(super) settings: Option<Arc<Settings>>,
    pub(super) fields: FieldsMap,
    pub(super) vectors: vectors::VectorState,
    /// The index's pair words; `None` until they are chosen (see [`Batch::choose_pair_words`],
    /// which writes them).
    pub(super) pairs: Option<Arc<text::PairWords>>,
}

/// A batch being applied: the index (`batch_lock` held by the caller), its write transaction,
/// the tantivy writer (locked by the caller) and the batch's state. Nothing of it is visible
/// until [`Batch::commit`]; dropped, it leaves the index as it was in LMDB (the caller then
/// discards what the writer wrote).
pub(super) struct Batch<'i, 'w> {
    pub(super) index: &'i Index,
    pub(super) txn: RwTxn<'i>,
    pub(super) writer: &'w mut IndexWriter,
    pub(super) state: BatchState,
    /// A `ClearDocuments` op ran: tantivy's `delete_all` also dropped what the batch added
    /// before it, fed again at commit.
    pub(super) clear_all: bool,
}

impl<'i, 'w> Batch<'i, 'w> {
    /// Opens the batch's write transaction and reads the state it starts from.
    pub(super) fn begin(index: &'i Index, writer: &'w mut IndexWriter) -> Result<Self> {
        let txn = index.store.write()?;
        let state = load_state(index, &txn)?;
        Ok(Batch {
            index,
            txn,
            writer,
            state,
            clear_all: false,
        })
    }

    /// Applies `ops` in order, each reported in its result (in op order); an error of the
    /// store itself fails the whole batch.
    pub(super) fn apply(&mut self, ops: &[BatchOp]) -> Result<Vec<Value>> {
        let mut results = Vec::with_capacity(ops.len());
        for (i, op) in ops.iter().enumerate() {
            self.set_progress(|p| {
                p.op = i;
                p.done = 0;
                p.total = 0;
            });
            let result = match self.apply_op(op) {
                Ok(counts) => BatchOpResult::done(op.task_uid(), counts),
                Err(e) if is_batch_fatal(&e) => return Err(e),
                Err(e) => BatchOpResult::failed(op, &e),
            };
            results.push(serde_json::to_value(result).map_err(Error::internal)?);
        }
        Ok(results)
    }

    fn apply_op(&mut self, op: &BatchOp) -> Result<OpCounts> {
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
                let addition = Addition {
                    file,
                    method: *method,
                    primary_key: primary_key.as_deref(),
                    skip_creation: *skip_creation,
                    shards: shards.as_ref(),
                };
                out.indexed_documents = Some(self.add_documents(addition)?);
            }
            BatchOp::DeleteDocuments { ids, .. } => {
                out.deleted_documents = Some(self.delete_documents(ids)?);
            }
            BatchOp::DeleteByFilter { filter, .. } => {
                out.deleted_documents = Some(self.delete_by_filter(filter)?);
            }
            BatchOp::EditDocuments {
                function,
                filter,
                context,
                ..
            } => {
                let edited = self.edit_documents(function, filter.as_ref(), context.as_ref())?;
                // Meilisearch reports the documents the function ran on as both edited and
                // deleted, whatever it did to them.
                out.edited_documents = Some(edited.matched);
                out.deleted_documents = Some(edited.matched);
            }
            BatchOp::ClearDocuments { .. } => {
                let count = self.clear_documents()?;
                self.clear_all = true;
                out.deleted_documents = Some(count);
            }
            BatchOp::SetPrimaryKey { primary_key, .. } => {
                let has_docs = !self
                    .index
                    .store
                    .docs
                    .is_empty(&self.txn)
                    .map_err(heed_error)?;
                match &self.state.primary_key {
                    Some(pk) if pk != primary_key && has_docs => return Err(pk_exists(pk)),
                    _ => self.state.primary_key = Some(primary_key.clone()),
                }
            }
            BatchOp::UpdateSettings { patch, .. } => {
                self.update_settings(patch)?;
            }
        }
        Ok(out)
    }

    /// A new document's internal id: the smallest one not in use when the batch started, else
    /// the next never given. Ids freed by deletions are given again, as Meilisearch does: the
    /// order of `GET /documents` and of a placeholder search's hits (and of ties) is the order
    /// of internal ids, which so stays Meilisearch's after deletions. The ids in use are read
    /// from the last commit (ids the batch itself deletes are given in a later batch); an index
    /// without holes is known by its count alone.
    pub(super) fn new_internal_id(&mut self) -> Result<u32> {
        let (index, state) = (self.index, &mut self.state);
        if state.free_ids.is_none() {
            let rtxn = index.store.read()?;
            let count = index.store.docs.len(&rtxn).map_err(heed_error)?;
            let mut free = RoaringBitmap::new();
            if count < u64::from(state.next_id) {
                free.insert_range(0..state.next_id);
                free -= &*index.all_ids(&rtxn)?;
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

    /// Writes the state to the transaction (the commit's first writes).
    pub(super) fn save_state(&mut self) -> Result<()> {
        let (store, txn, state) = (&self.index.store, &mut self.txn, &self.state);
        match &state.primary_key {
            Some(pk) => store.put_meta(txn, keys::PRIMARY_KEY, pk.as_bytes())?,
            None => store.del_meta(txn, keys::PRIMARY_KEY)?,
        }
        store.put_meta(txn, keys::NEXT_ID, &(state.next_id as u64).to_be_bytes())?;
        let fd = serde_json::to_vec(&state.field_distribution).map_err(Error::internal)?;
        store.put_meta(txn, keys::FIELD_DISTRIBUTION, &fd)?;
        store.put_fields_map(txn, &state.fields)?;
        if let Some(settings) = &state.settings {
            store.put_meta(
                txn,
                keys::SETTINGS,
                &serde_json::to_vec(settings.as_ref()).map_err(Error::internal)?,
            )?;
        }
        Ok(())
    }

    /// Whether the index's pair words are due once `adding` more documents are stored: not
    /// chosen yet, and the store would hold [`text::PAIR_WORDS_AT`] documents or more.
    pub(super) fn pair_words_due(&self, adding: u64) -> Result<bool> {
        Ok(self.state.pairs.is_none()
            && self.index.store.docs.len(&self.txn).map_err(heed_error)? + adding
                >= text::PAIR_WORDS_AT)
    }

    /// Chooses the index's pair words from [`text::PAIR_WORDS_SAMPLE`] stored documents drawn
    /// evenly and `more` (documents a batch is adding), and writes them with the batch (once:
    /// they never change after).
    pub(super) fn choose_pair_words(
        &mut self,
        settings: &Settings,
        mut more: Vec<Map<String, Value>>,
    ) -> Result<()> {
        let (store, txn) = (&self.index.store, &mut self.txn);
        let stored = store.docs.len(txn).map_err(heed_error)? as usize;
        let step = stored.div_ceil(text::PAIR_WORDS_SAMPLE).max(1);
        for item in store.docs.iter(txn).map_err(heed_error)?.step_by(step) {
            let (_, bytes) = item.map_err(heed_error)?;
            more.push(crate::codec::decode(bytes, &self.state.fields)?);
        }
        let analyzer = settings.analyzer();
        let locales = crate::languages::Locales::from_settings(settings);
        let pairs = text::PairWords::choose(&more, settings.searchable(), &analyzer, &locales);
        let words = serde_json::to_vec(&pairs.words()).map_err(Error::internal)?;
        store.put_meta(txn, keys::PAIR_WORDS, &words)?;
        self.state.pairs = Some(Arc::new(pairs));
        Ok(())
    }

    /// The settings the batch has reached: its own once a settings op ran, else the stored
    /// ones (which the batch has not written: settings are written at commit).
    pub(super) fn settings(&self) -> Result<Arc<Settings>> {
        match &self.state.settings {
            Some(s) => Ok(s.clone()),
            None => self.index.settings(&self.txn),
        }
    }
}

fn load_state(index: &Index, txn: &heed::RoTxn) -> Result<BatchState> {
    let store = &index.store;
    let field_distribution = index.field_distribution(txn)?;
    Ok(BatchState {
        primary_key: store.get_string(txn, keys::PRIMARY_KEY)?,
        next_id: store.get_u64(txn, keys::NEXT_ID)? as u32,
        free_ids: None,
        field_distribution,
        dirty: store.get_dirty(txn)?.unwrap_or_default(),
        settings: None,
        fields: store.fields_map(txn)?,
        vectors: vectors::VectorState::load(store, txn)?,
        pairs: text::PairWords::stored(store, txn)?.map(Arc::new),
    })
}

/// Gives `doc`'s searchable paths field ids and hands its text to tantivy at once (the
/// caller deleted any earlier version).
pub(super) fn feed_doc(
    (writer, tfields): (&mut IndexWriter, &Fields),
    iid: u32,
    doc: &Map<String, Value>,
    searchable: Option<&[String]>,
    fields: &mut FieldsMap,
    cut: text::Cutter,
) -> Result<()> {
    text::assign_fields(doc, searchable, fields);
    let tdoc = tfields.tantivy_doc(iid, doc, searchable, fields, cut);
    writer.add_document(tdoc).map_err(tv)?;
    Ok(())
}

/// The term naming document `iid` in tantivy, to delete it by.
pub(super) fn iid_term(fields: &Fields, iid: u32) -> Term {
    Term::from_field_u64(fields.iid, iid as u64)
}

pub(super) fn pk_exists(pk: &str) -> Error {
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

pub(super) fn decrement(fd: &mut BTreeMap<String, u64>, key: &str) {
    if let Some(n) = fd.get_mut(key) {
        *n -= 1;
        if *n == 0 {
            fd.remove(key);
        }
    }
}
