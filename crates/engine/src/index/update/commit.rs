//! The commit protocol that keeps LMDB and tantivy consistent (the last step of a
//! [`Batch`]), the recovery at open that completes an interrupted commit, and the rebuilding
//! of a lost inverted index.
//!
//! # The protocol
//!
//! LMDB (`store/`) is the source of truth; tantivy is derived from it. While a batch's ops are
//! applied ([`super::batch`]), every document goes both into one LMDB write transaction and to
//! tantivy's writer (delete by internal id, add the new version), so tantivy indexes in
//! parallel; nothing of it is committed yet. Then ([`Batch::commit`]):
//!
//! 1. The LMDB transaction records, with the batch's documents, the new generation G
//!    (previous + 1), the set of internal ids the batch touched (`dirty`: added, replaced,
//!    deleted or re-indexed), the batch's per-op results (`lastBatch`), the primary key,
//!    fields map, field distribution and settings it reached. Before it commits, tantivy
//!    writes the batch's segments (`prepare_commit`, not yet part of any commit; after a
//!    clear it is first rolled back and fed the dirty set again from the transaction, since
//!    its `delete_all` also dropped the documents added after the clear): the bulk of the
//!    bytes, so that a full disk fails the batch here, with nothing committed anywhere.
//! 2. The LMDB transaction commits (fsync). This is the point of truth for the documents.
//! 3. tantivy commits what it prepared, with payload G (a small file), and `dirty` is removed
//!    from LMDB.
//! 4. The engine returns the results; the worker (TypeScript) commits the task outcomes in
//!    the task store. Only then is any task of the batch reported `succeeded`.
//!
//! A batch that fails before step 2 (a full disk, any store error) drops its transaction and
//! its writer: the index is as it was, and the next batch starts a writer from tantivy's last
//! commit. Should step 3 fail after step 2 (the disk filled in between), `dirty` stays in
//! LMDB and the next batch first completes tantivy from it ([`Index::recover`]), as a restart
//! would. The fields map readers use is replaced before step 2 commits, so a reader never
//! sees a document with a field id it cannot name. Between steps 2 and 3 a running search may
//! pair LMDB's new documents with tantivy's old text; step 3 publishes the new text.
//!
//! # Why a crash loses nothing acknowledged
//!
//! A task is acknowledged at step 4, after step 2 made its documents durable. At each crash
//! point:
//!
//! - Before step 2: LMDB's transaction never happened (LMDB commits atomically), and
//!   tantivy's committed state is the previous one (segment files it wrote meanwhile belong
//!   to no commit, and tantivy's garbage collection removes them). The tasks are still
//!   `processing`; at start-up the worker puts them back to `enqueued` and the batch runs
//!   again from scratch.
//! - After step 2, before tantivy's commit in step 3: at open, `dirty` is present and
//!   tantivy's payload is not G,
//!   so [`Index::recover`] deletes every dirty id from tantivy, re-adds the version LMDB holds
//!   (none for a deleted document), with the settings and fields map committed with it, and
//!   commits with payload G; then removes `dirty`. `crates/engine/tests/engine/recovery.rs` simulates
//!   exactly this state. Recovery runs inside [`Index::open`], before anything can read.
//! - After tantivy's commit, before `dirty` is removed: tantivy's payload is G: recovery only
//!   removes `dirty`.
//! - After step 2 or 3, before step 4: the tasks are still `processing`, so the worker
//!   runs the batch again after recovery. Applying it again would leave the same documents
//!   (each op sets its documents to a state that does not depend on an earlier run) but not
//!   always report the same results (a deletion would count 0 documents), so
//!   [`Index::apply_batch`] first compares the batch's task uids with the stored `lastBatch`
//!   results: when every op's task is among them, it returns those results instead. One
//!   stored batch is enough: the worker runs one batch at a time and commits its outcomes
//!   before the next. (Should the second run's batch hold further tasks, it is applied again
//!   as a whole, with the same documents as the outcome.)
//!
//! `__tests__/durability/crash.test.ts` kills the server in the middle of a large batch and
//! checks every accepted task ends `succeeded` with all its documents.
//!
//! # Rebuilding a lost inverted index
//!
//! When tantivy is behind with no `dirty` set to replay (its directory was lost, or an earlier
//! version wrote it with another layout, which tantivy reports as a schema mismatch and which
//! [`Index::open`] then starts afresh), [`Index::rebuild_if_behind`] re-feeds every document
//! from LMDB. Every document is marked dirty in LMDB (committed) before tantivy commits, so a
//! crash during the rebuild is replayed by the recovery above at the next open. The same test
//! file deletes an index's `tantivy/` directory between two runs and searches again.
//!
//! Compaction, which merges the segments batches leave, is in [`super::compaction`].

use std::sync::Arc;

use api_types::{Error, Result};
use roaring::RoaringBitmap;
use serde_json::Value;
use tantivy::IndexWriter;

use super::batch::{feed_doc, iid_term, Batch};
use super::writer::Writer;
use crate::index::{text, tv, Index};
use crate::languages::Locales;
use crate::store::{heed_error, keys, Store};

impl Batch<'_, '_> {
    /// Steps 1 to 3 of the protocol, once every op of the batch has been applied to the
    /// transaction and fed to the writer.
    pub(super) fn commit(mut self, results: &[Value]) -> Result<()> {
        self.set_progress(|p| p.step = "committing");
        let index = self.index;
        let store = &index.store;
        // The batch, its generation, dirty set and results, in the LMDB transaction.
        let rtxn_gen = store.get_u64(&self.txn, keys::GENERATION)?;
        let generation = rtxn_gen + 1;
        self.save_state()?;
        let Batch {
            txn: mut wtxn,
            writer,
            state,
            clear_all,
            ..
        } = self;
        state.vectors.commit(store, &mut wtxn)?;
        store.put_meta(&mut wtxn, keys::GENERATION, &generation.to_be_bytes())?;
        store.put_dirty(&mut wtxn, &state.dirty)?;
        store.put_meta(
            &mut wtxn,
            keys::LAST_BATCH,
            &serde_json::to_vec(results).map_err(Error::internal)?,
        )?;
        // Readers must know every field id before they can see a document that uses it (a
        // superset, should the commit fail, names nothing wrongly).
        *index.fields_map.write().unwrap() = Arc::new(state.fields.clone());
        // Step 1: tantivy writes the batch's segments, not yet committed. A full disk fails
        // here, before anything is committed: the batch leaves the index as it was.
        if clear_all {
            // Documents added after the clear were deleted by `delete_all`; feed them again,
            // as the batch's own transaction holds them.
            writer.rollback().map_err(tv)?;
            feed_tantivy_in(index, writer, &state.dirty, &wtxn)?;
        }
        let mut prepared = writer.prepare_commit().map_err(tv)?;
        prepared.set_payload(&generation.to_string());
        // Step 2: LMDB commits: the point of truth. The ids this commit changed are recorded
        // first, from which readers' value columns are updated.
        index
            .columns
            .lock()
            .unwrap()
            .record_changes(generation, &state.dirty);
        wtxn.commit().map_err(heed_error)?;
        index.vector_tables.lock().unwrap().commit(generation);
        if let Some(settings) = &state.settings {
            let mut cache = index.settings_cache.lock().unwrap();
            cache.put(generation, settings.clone());
        }
        // Step 3: tantivy commits what it wrote in step 1, recording the generation it
        // reached (a small file). Should that fail, `dirty` stays in LMDB and the next batch
        // first repairs tantivy from it ([`Index::recover`]).
        prepared.commit().map_err(tv)?;
        index.publish_segments()?;
        index.publish_pair_words()?;
        clear_dirty(store)?;
        Ok(())
    }
}

/// [`Index::recover`]: re-applies to tantivy a dirty set that LMDB committed but tantivy may
/// not have.
pub(super) fn recover(index: &Index) -> Result<()> {
    let rtxn = index.store.read()?;
    let generation = index.store.get_u64(&rtxn, keys::GENERATION)?;
    let dirty = index.store.get_dirty(&rtxn)?;
    drop(rtxn);
    let Some(dirty) = dirty else { return Ok(()) };
    if tantivy_generation(&index.tantivy)? != generation {
        let mut writer = Writer::lock(index);
        writer.feed_tantivy(&dirty)?;
        writer.commit_tantivy(generation)?;
    }
    clear_dirty(&index.store)
}

/// [`Index::rebuild_if_behind`]: rebuilds tantivy from LMDB when it is behind with nothing
/// left to replay: its directory was lost, or was written with another layout. The re-fed
/// documents land in as many segments as the writer's threads and memory budget cut them
/// into (10 for the 886k PyPI rows), which search visits one by one, so the rebuild ends
/// merged like a bulk load does: else an index that is only read after an upgrade stays
/// slower.
pub(super) fn rebuild_if_behind(index: &Index) -> Result<()> {
    let rtxn = index.store.read()?;
    let generation = index.store.get_u64(&rtxn, keys::GENERATION)?;
    drop(rtxn);
    if tantivy_generation(&index.tantivy)? == generation {
        return Ok(());
    }
    rebuild(index, generation)?;
    super::compaction::merge_segments(index, false)
}

fn rebuild(index: &Index, generation: u64) -> Result<()> {
    let mut writer = Writer::lock(index);
    let tantivy_writer = writer.get()?;
    tantivy_writer.delete_all_documents().map_err(tv)?;
    let mut batch = Batch::begin(index, tantivy_writer)?;
    let settings = index.stored_settings(&batch.txn)?;
    batch.reindex_text(&settings)?;
    // Every document is dirty until tantivy commits: a crash in between replays them.
    batch.save_state()?;
    let Batch { mut txn, state, .. } = batch;
    index.store.put_dirty(&mut txn, &state.dirty)?;
    *index.fields_map.write().unwrap() = Arc::new(state.fields.clone());
    txn.commit().map_err(heed_error)?;
    writer.commit_tantivy(generation)?;
    clear_dirty(&index.store)?;
    Ok(())
}

/// Step 3: tantivy has reached LMDB's generation, so nothing is left to replay.
fn clear_dirty(store: &Store) -> Result<()> {
    let mut wtxn = store.write()?;
    store.del_meta(&mut wtxn, keys::DIRTY)?;
    wtxn.commit().map_err(heed_error)
}

fn tantivy_generation(tantivy: &tantivy::Index) -> Result<u64> {
    let metas = tantivy.load_metas().map_err(tv)?;
    Ok(metas.payload.and_then(|p| p.parse().ok()).unwrap_or(0))
}

impl Writer<'_> {
    /// Deletes every dirty id from tantivy and re-adds the version LMDB holds.
    fn feed_tantivy(&mut self, dirty: &RoaringBitmap) -> Result<()> {
        let index = self.index;
        let writer = self.get()?;
        let rtxn = index.store.read()?;
        feed_tantivy_in(index, writer, dirty, &rtxn)
    }

    fn commit_tantivy(&mut self, generation: u64) -> Result<()> {
        let index = self.index;
        let writer = self.get()?;
        let mut prepared = writer.prepare_commit().map_err(tv)?;
        prepared.set_payload(&generation.to_string());
        prepared.commit().map_err(tv)?;
        index.publish_segments()?;
        index.publish_pair_words()
    }
}

/// [`Writer::feed_tantivy`] with the versions `rtxn` holds (a batch's own transaction, not
/// yet committed: its settings are read from it, never from the per-generation cache).
fn feed_tantivy_in(
    index: &Index,
    writer: &mut IndexWriter,
    dirty: &RoaringBitmap,
    rtxn: &heed::RoTxn,
) -> Result<()> {
    let store = &index.store;
    let settings = index.stored_settings(rtxn)?;
    let searchable = settings.searchable();
    if store.docs.is_empty(rtxn).map_err(heed_error)? {
        writer.delete_all_documents().map_err(tv)?;
        return Ok(());
    }
    // Every field id these documents need was committed with them.
    let mut fields = (*index.fields_map.read().unwrap().clone()).clone();
    let analyzer = settings.analyzer();
    let locales = Locales::from_settings(&settings);
    let pairs = text::PairWords::stored(store, rtxn)?.unwrap_or_default();
    analyzer.with(|tokenizer| {
        let cut = text::Cutter {
            tokenizer,
            locales: &locales,
            pairs: &pairs,
        };
        for iid in dirty {
            writer.delete_term(iid_term(&index.fields, iid));
            if let Some(bytes) = store.docs.get(rtxn, &iid).map_err(heed_error)? {
                let doc = index.decode_doc(bytes)?;
                let to = (&mut *writer, &index.fields);
                feed_doc(to, iid, &doc, searchable, &mut fields, cut)?;
            }
        }
        Ok(())
    })
}
