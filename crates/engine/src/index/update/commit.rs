//! The commit protocol that keeps LMDB and tantivy consistent, the recovery at open that
//! completes an interrupted commit, and compaction.
//!
//! # The protocol
//!
//! LMDB (`store/`) is the source of truth; tantivy is derived from it. While a batch's ops are
//! applied ([`super`]), every document goes both into one LMDB write transaction and to
//! tantivy's writer (delete by internal id, add the new version), so tantivy indexes in
//! parallel; nothing of it is committed yet. Then ([`Index::commit_batch`]):
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

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use api_types::{Error, Result};
use heed::RwTxn;
use roaring::RoaringBitmap;
use serde_json::Value;
use tantivy::{IndexWriter, Term};

use super::compaction::background_merge_policy;
use super::BatchState;
use crate::index::{text, tv, Index};
use crate::languages::Locales;
use crate::store::{heed_error, keys};

const WRITER_MEMORY_PER_THREAD: usize = 64 << 20;

impl Index {
    /// Steps 1 to 3 of the protocol, once every op of the batch has been applied to `wtxn`
    /// and fed to `writer`.
    pub(super) fn commit_batch(
        &self,
        mut wtxn: RwTxn,
        writer: &mut IndexWriter,
        state: &BatchState,
        results: &[Value],
        clear_all: bool,
    ) -> Result<()> {
        self.set_progress(|p| p.step = "committing");
        // The batch, its generation, dirty set and results, in the LMDB transaction.
        let rtxn_gen = self.store.get_u64(&wtxn, keys::GENERATION)?;
        let generation = rtxn_gen + 1;
        self.save_state(&mut wtxn, state)?;
        state.vectors.commit(&self.store, &mut wtxn)?;
        self.store
            .put_meta(&mut wtxn, keys::GENERATION, &generation.to_be_bytes())?;
        self.store.put_dirty(&mut wtxn, &state.dirty)?;
        self.store.put_meta(
            &mut wtxn,
            keys::LAST_BATCH,
            &serde_json::to_vec(results).map_err(Error::internal)?,
        )?;
        // Readers must know every field id before they can see a document that uses it (a
        // superset, should the commit fail, names nothing wrongly).
        *self.fields_map.write().unwrap() = Arc::new(state.fields.clone());
        // Step 1: tantivy writes the batch's segments, not yet committed. A full disk fails
        // here, before anything is committed: the batch leaves the index as it was.
        if clear_all {
            // Documents added after the clear were deleted by `delete_all`; feed them again,
            // as the batch's own transaction holds them.
            writer.rollback().map_err(tv)?;
            self.feed_tantivy_in(writer, &state.dirty, &wtxn)?;
        }
        let mut prepared = writer.prepare_commit().map_err(tv)?;
        prepared.set_payload(&generation.to_string());
        // Step 2: LMDB commits: the point of truth. The ids this commit changed are recorded
        // first, from which readers' value columns are updated.
        self.columns
            .lock()
            .unwrap()
            .record_changes(generation, &state.dirty);
        wtxn.commit().map_err(heed_error)?;
        self.vector_tables.lock().unwrap().commit(generation);
        if let Some(settings) = &state.settings {
            let mut cache = self.settings_cache.lock().unwrap();
            cache.put(generation, settings.clone());
        }
        // Step 3: tantivy commits what it wrote in step 1, recording the generation it
        // reached (a small file). Should that fail, `dirty` stays in LMDB and the next batch
        // first repairs tantivy from it ([`Index::recover`]).
        prepared.commit().map_err(tv)?;
        self.publish_segments()?;
        self.publish_pair_words()?;
        self.clear_dirty()?;
        Ok(())
    }

    /// Re-applies to tantivy a dirty set that LMDB committed but tantivy may not have.
    pub(in crate::index) fn recover(&self) -> Result<()> {
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
        self.clear_dirty()?;
        Ok(())
    }

    /// Rebuilds tantivy from LMDB when it is behind with nothing left to replay: its
    /// directory was lost, or was written with another layout. The re-fed documents land in
    /// as many segments as the writer's threads and memory budget cut them into (10 for the
    /// 886k PyPI rows), which search visits one by one, so the rebuild ends merged like a
    /// bulk load does: else an index that is only read after an upgrade stays slower.
    pub(in crate::index) fn rebuild_if_behind(&self) -> Result<()> {
        let rtxn = self.store.read()?;
        let generation = self.store.get_u64(&rtxn, keys::GENERATION)?;
        drop(rtxn);
        if self.tantivy_generation()? == generation {
            return Ok(());
        }
        self.rebuild(generation)?;
        self.merge_segments(false)
    }

    fn rebuild(&self, generation: u64) -> Result<()> {
        let mut guard = self.writer.lock().unwrap();
        let writer = self.writer_mut(&mut guard)?;
        writer.delete_all_documents().map_err(tv)?;
        let mut wtxn = self.store.write()?;
        let mut state = self.load_state(&wtxn)?;
        let settings = self.stored_settings(&wtxn)?;
        self.reindex_text(&mut wtxn, writer, &mut state, &settings)?;
        // Every document is dirty until tantivy commits: a crash in between replays them.
        self.save_state(&mut wtxn, &state)?;
        self.store.put_dirty(&mut wtxn, &state.dirty)?;
        *self.fields_map.write().unwrap() = Arc::new(state.fields.clone());
        wtxn.commit().map_err(heed_error)?;
        self.commit_tantivy(writer, generation)?;
        self.clear_dirty()?;
        Ok(())
    }

    /// Step 3: tantivy has reached LMDB's generation, so nothing is left to replay.
    fn clear_dirty(&self) -> Result<()> {
        let mut wtxn = self.store.write()?;
        self.store.del_meta(&mut wtxn, keys::DIRTY)?;
        wtxn.commit().map_err(heed_error)
    }

    fn tantivy_generation(&self) -> Result<u64> {
        let metas = self.tantivy.load_metas().map_err(tv)?;
        Ok(metas.payload.and_then(|p| p.parse().ok()).unwrap_or(0))
    }

    pub(super) fn writer_mut<'a>(
        &self,
        guard: &'a mut Option<IndexWriter>,
    ) -> Result<&'a mut IndexWriter> {
        if guard.is_none() {
            let threads = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
                .clamp(1, 4);
            let writer = self
                .tantivy
                .writer_with_num_threads(threads, threads * WRITER_MEMORY_PER_THREAD)
                .map_err(tv)?;
            writer.set_merge_policy(Box::new(background_merge_policy()));
            *guard = Some(writer);
        }
        Ok(guard.as_mut().unwrap())
    }

    /// Deletes the segment files a failed batch wrote, now rather than at the next commit (a
    /// full disk gets its space back at once). The writer is dropped: a new one lists as
    /// living only the segments of tantivy's last commit. But tantivy's `prepare_commit`
    /// returns the first failing indexing thread's error without joining the others, so one
    /// may still be finishing its segment: the collection is repeated until no file outside
    /// the last commit is left, for two seconds at most (the next commit collects the rest).
    pub(super) fn discard_uncommitted(&self, guard: &mut Option<IndexWriter>) {
        drop(guard.take());
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            if let Ok(writer) = self.writer_mut(guard) {
                let _ = writer.garbage_collect_files().wait();
            }
            let Ok(metas) = self.tantivy.load_metas() else {
                return;
            };
            // tantivy manages `meta.json` too.
            let mut living: HashSet<PathBuf> = metas
                .segments
                .iter()
                .flat_map(|segment| segment.list_files())
                .collect();
            living.insert(PathBuf::from("meta.json"));
            let stray = self
                .tantivy
                .directory()
                .list_managed_files()
                .into_iter()
                .any(|file| !living.contains(&file));
            if !stray || Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Deletes every dirty id from tantivy and re-adds the version LMDB holds.
    pub(super) fn feed_tantivy(
        &self,
        writer: &mut IndexWriter,
        dirty: &RoaringBitmap,
    ) -> Result<()> {
        let rtxn = self.store.read()?;
        self.feed_tantivy_in(writer, dirty, &rtxn)
    }

    /// [`Index::feed_tantivy`] with the versions `rtxn` holds (a batch's own transaction, not
    /// yet committed: its settings are read from it, never from the per-generation cache).
    fn feed_tantivy_in(
        &self,
        writer: &mut IndexWriter,
        dirty: &RoaringBitmap,
        rtxn: &heed::RoTxn,
    ) -> Result<()> {
        let settings = self.stored_settings(rtxn)?;
        let searchable = settings.searchable();
        if self.store.docs.is_empty(rtxn).map_err(heed_error)? {
            writer.delete_all_documents().map_err(tv)?;
            return Ok(());
        }
        // Every field id these documents need was committed with them.
        let mut fields = (*self.fields_map.read().unwrap().clone()).clone();
        let analyzer = settings.analyzer();
        let locales = Locales::from_settings(&settings);
        let pairs = self.stored_pair_words(rtxn)?.unwrap_or_default();
        analyzer.with(|tokenizer| {
            let cut = text::Cutter {
                tokenizer,
                locales: &locales,
                pairs: &pairs,
            };
            for iid in dirty {
                writer.delete_term(Term::from_field_u64(self.fields.iid, iid as u64));
                if let Some(bytes) = self.store.docs.get(rtxn, &iid).map_err(heed_error)? {
                    let doc = self.decode_doc(bytes)?;
                    self.feed_doc(writer, iid, &doc, searchable, &mut fields, cut)?;
                }
            }
            Ok(())
        })
    }

    fn commit_tantivy(&self, writer: &mut IndexWriter, generation: u64) -> Result<()> {
        let mut prepared = writer.prepare_commit().map_err(tv)?;
        prepared.set_payload(&generation.to_string());
        prepared.commit().map_err(tv)?;
        self.publish_segments()?;
        self.publish_pair_words()
    }
}
