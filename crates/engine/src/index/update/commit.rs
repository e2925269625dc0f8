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
//!   commits with payload G; then removes `dirty`. `crates/engine/tests/index.rs` simulates
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
//! # Compaction
//!
//! tantivy writes a segment per indexing thread per commit (or per 64 MiB of text), and its
//! background merges gather only the small ones (at most [`BACKGROUND_MERGE_MAX_DOCS`]
//! documents each), so a bulk load ends with about ten large segments, and every query
//! computes its own top hits in each: on the PyPI catalogue a common word costs 0.97 ms of
//! server CPU on 11 segments and 0.43 ms on one. So when nothing else is queued for the index
//! once a batch has committed (the worker looks then, not when the batch starts),
//! [`Index::compact_if_worthwhile`] may merge every segment into one (two for a large index,
//! merged at once on two cores): before the batch's tasks are reported `succeeded` when most
//! of the index is new (a bulk load), else beside the batches that follow
//! ([`Index::compact_later`]), so that a trickle of small batches never waits for a merge of
//! the whole index. The merge keeps tantivy's commit payload, so the recovery rules above are
//! unchanged; searches use the old segments until the merged ones are published, and a crash
//! during the merge leaves the old segments (the batch itself is committed already).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use api_types::{Error, Result};
use heed::RwTxn;
use roaring::RoaringBitmap;
use serde_json::Value;
use tantivy::indexer::LogMergePolicy;
use tantivy::{IndexWriter, Term};

use super::BatchState;
use crate::index::{text, tv, Index};
use crate::languages::Locales;
use crate::store::{heed_error, keys};

const WRITER_MEMORY_PER_THREAD: usize = 64 << 20;

/// tantivy's background merges only gather segments of at most this many documents (a trickle
/// of small batches, one segment each). Larger segments are left to the compaction, which
/// merges everything once: were the background to merge them too, a bulk load would merge
/// most of its documents twice, and the compaction would first wait for that merge (on PyPI,
/// 8 segments of 97k documents merged into 731k, then all 886k again: a compaction step of
/// 11–14 s instead of 8).
const BACKGROUND_MERGE_MAX_DOCS: usize = 10_000;

/// tantivy merges segments on one thread each, so the compaction of an index of at least twice
/// this many documents merges it into two segments at once, on two cores, in about half the
/// time; a search then visits two segments, a few percent slower than one (see
/// [`Index::compact_if_worthwhile`]).
pub(in crate::index) const COMPACTION_PART_DOCS: u64 = 250_000;

/// What [`Index::compact_if_worthwhile`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compaction {
    /// Nothing: the segments are not worth merging, or a merge is running already.
    Nothing,
    /// The segments were merged before it returned (most of the index was new: a bulk load).
    Merged,
    /// Worth merging, but only a trickle is new: [`Index::compact_later`] merges them while
    /// the batches that follow go on.
    Later,
}

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

    /// One segment answers a query several times faster than ten: each segment computes its
    /// own top hits. Merging costs about 5 µs per document on one thread (4.3 s for the 886k
    /// PyPI rows), so it runs only when the documents outside the segments the last merge left
    /// are at least an eighth of the index: a bulk load pays it once at the end, and a trickle
    /// of small updates pays it at most once per eighth of growth. An index of at least
    /// 2 × [`COMPACTION_PART_DOCS`] is merged into two segments of about half its documents
    /// each, at once: PyPI's merge takes 2.3 s instead of 4.3, and its keyword searches are up
    /// to 12% slower at the median than on one segment. The task worker calls it after a batch when
    /// nothing else is queued for the index by then (a bulk load sent in several requests
    /// merges once, after its last batch, not after its first).
    ///
    /// When at least half the index was written since the last merge (a bulk load), it merges
    /// before returning, so the load's tasks are reported `succeeded` on a merged index. When
    /// less was (a trickle of small batches reached an eighth), it merges nothing and answers
    /// [`Compaction::Later`]: the caller runs [`Index::compact_later`] without waiting for it,
    /// since merging 100,000 documents there would hold up the batch's success and the next
    /// batch's by a second or more.
    pub fn compact_if_worthwhile(&self) -> Result<Compaction> {
        if self.compacting.load(Ordering::Acquire) {
            return Ok(Compaction::Nothing);
        }
        let metas = self.tantivy.searchable_segment_metas().map_err(tv)?;
        let plan = merge_parts(
            &metas,
            &mut self.merged_at.lock().unwrap(),
            false,
            self.compaction_part_docs,
        );
        drop(metas);
        match plan {
            None => Ok(Compaction::Nothing),
            Some(plan) if plan.unmerged * 2 < plan.total => Ok(Compaction::Later),
            Some(_) => {
                self.merge_segments(false)?;
                Ok(Compaction::Merged)
            }
        }
    }

    /// The merge [`Index::compact_if_worthwhile`] left for later, while batches go on: the
    /// batch lock is held only to start the merge and to publish its segments, so batches
    /// commit (and tantivy applies their deletions to the merged segment) while it runs. One
    /// runs at a time; a second call while one runs returns at once. Whatever asks for every
    /// merge to end (a snapshot's copy, `POST /indexes/{uid}/compact`) waits for it. A crash
    /// meanwhile leaves the segments as they were.
    pub fn compact_later(&self) -> Result<()> {
        if self.compacting.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let _running = Running(&self.compacting);
        let (merges, total) = {
            let _batch = self.batch_lock.lock().unwrap();
            let mut guard = self.writer.lock().unwrap();
            let mut merged_at = self.merged_at.lock().unwrap();
            let Some((groups, total)) = self.merge_groups(&mut guard, &mut merged_at, false)?
            else {
                return Ok(());
            };
            let writer = self.writer_mut(&mut guard)?;
            let merges: Vec<_> = groups.iter().map(|ids| writer.merge(ids)).collect();
            (merges, total)
        };
        let waited: Vec<Result<()>> = merges
            .into_iter()
            .map(|m| m.wait().map(drop).map_err(tv))
            .collect();
        let _batch = self.batch_lock.lock().unwrap();
        let mut guard = self.writer.lock().unwrap();
        self.publish_merged(
            &mut guard,
            &mut self.merged_at.lock().unwrap(),
            &waited,
            total,
        )
    }

    /// `POST /indexes/{uid}/compact`: every segment of the inverted index merged into one,
    /// whatever their sizes and the index's.
    pub fn compact(&self) -> Result<()> {
        self.merge_segments(true)
    }

    /// Writes a consistent copy of the index into `dest` (a new directory) for a snapshot:
    /// with the batch lock held and the writer's merges finished and the writer released,
    /// nothing changes the files while the LMDB store is copied (compacted, as of one read
    /// transaction) and tantivy's files are copied as they are. The copy opens like any index.
    pub fn copy_to(&self, dest: &Path) -> Result<()> {
        let _batch = self.batch_lock.lock().unwrap();
        if let Some(writer) = self.writer.lock().unwrap().take() {
            writer.wait_merging_threads().map_err(tv)?;
        }
        let store = dest.join("store");
        std::fs::create_dir_all(&store).map_err(api_types::io_error)?;
        self.store
            .env
            .copy_to_path(store.join("data.mdb"), heed::CompactionOption::Enabled)
            .map_err(|e| api_types::heed_error_in(e, &store))?
            .sync_all()
            .map_err(api_types::io_error)?;
        let from = self.dir.join("tantivy");
        let to = dest.join("tantivy");
        std::fs::create_dir_all(&to).map_err(api_types::io_error)?;
        for entry in std::fs::read_dir(&from).map_err(api_types::io_error)? {
            let entry = entry.map_err(api_types::io_error)?;
            let name = entry.file_name();
            // Lock files belong to the live directory's processes.
            if name.to_string_lossy().ends_with(".lock")
                || !entry.file_type().map_err(api_types::io_error)?.is_file()
            {
                continue;
            }
            std::fs::copy(entry.path(), to.join(&name)).map_err(api_types::io_error)?;
        }
        Ok(())
    }

    fn merge_segments(&self, always: bool) -> Result<()> {
        let _batch = self.batch_lock.lock().unwrap();
        let mut guard = self.writer.lock().unwrap();
        let mut merged_at = self.merged_at.lock().unwrap();
        let Some((groups, total)) = self.merge_groups(&mut guard, &mut merged_at, always)? else {
            return Ok(());
        };
        let writer = self.writer_mut(&mut guard)?;
        // The parts merge at once, each on a thread of tantivy's merge pool; every merge is
        // waited for, whether or not another failed.
        let merges: Vec<_> = groups.iter().map(|ids| writer.merge(ids)).collect();
        let waited: Vec<Result<()>> = merges
            .into_iter()
            .map(|m| m.wait().map(drop).map_err(tv))
            .collect();
        self.publish_merged(&mut guard, &mut merged_at, &waited, total)
    }

    /// The groups of segments worth merging now (each of two or more), and the documents they
    /// hold, with the batch lock held by the caller.
    fn merge_groups(
        &self,
        guard: &mut Option<IndexWriter>,
        merged_at: &mut Option<u64>,
        always: bool,
    ) -> Result<Option<(Vec<Vec<tantivy::index::SegmentId>>, u64)>> {
        // Background merges only gather segments (fewer of them, a larger largest one), so a
        // merge not worth it now is not worth it after them either: the writer is kept.
        let metas = self.tantivy.searchable_segment_metas().map_err(tv)?;
        if merge_parts(&metas, merged_at, always, self.compaction_part_docs).is_none() {
            return Ok(None);
        }
        drop(metas);
        // tantivy's merge policy may be merging some of these segments in the background (it
        // looks for merges after every commit), and a merge overlapping one that ends first
        // is thrown away when it ends: on PyPI, 8.5 s of work for nothing, leaving 6 segments.
        // So the background merges finish first (this releases the writer; the next use opens
        // another), and the segments are listed after them. A merge [`Index::compact_later`]
        // started is one of them.
        if let Some(writer) = guard.take() {
            writer.wait_merging_threads().map_err(tv)?;
        }
        let metas = self.tantivy.searchable_segment_metas().map_err(tv)?;
        let Some(plan) = merge_parts(&metas, merged_at, always, self.compaction_part_docs) else {
            return Ok(None);
        };
        let sizes: Vec<u64> = metas.iter().map(|m| m.num_docs() as u64).collect();
        let groups = partition(&sizes, plan.parts)
            .into_iter()
            .filter(|group| group.len() > 1)
            .map(|group| group.into_iter().map(|i| metas[i].id()).collect())
            .collect();
        // A live SegmentMeta keeps its files from the garbage collector.
        Ok(Some((groups, plan.total)))
    }

    /// Publishes what the merges `waited` (how each ended) left, with the batch lock held, and
    /// answers the first failure. The merge keeps tantivy's commit payload (the generation), so
    /// recovery is unchanged; searches use the old segments until the merged ones are
    /// published. A merge that failed (a full disk) leaves the segments as they were: its
    /// partial files are deleted here, and the failure is the caller's to report (`POST
    /// /indexes/{uid}/compact` fails; after a batch, the batch is committed already and the
    /// worker only logs it).
    fn publish_merged(
        &self,
        guard: &mut Option<IndexWriter>,
        merged_at: &mut Option<u64>,
        waited: &[Result<()>],
        total: u64,
    ) -> Result<()> {
        if waited.iter().all(|r| r.is_ok()) {
            *merged_at = Some(total);
        }
        if waited.iter().any(|r| r.is_ok()) {
            self.publish_segments()?;
        }
        // Delete the merged-away segment files, and those of a merge that failed, now rather
        // than at the next commit (files a running search still reads are kept by tantivy
        // until it lets go of them).
        if let Some(writer) = guard.as_mut() {
            let _ = writer.garbage_collect_files().wait();
        }
        match waited.iter().find_map(|r| r.as_ref().err()) {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Segments of the inverted index that searches visit.
    pub fn segment_count(&self) -> Result<usize> {
        Ok(self.tantivy.searchable_segment_metas().map_err(tv)?.len())
    }
}

fn background_merge_policy() -> LogMergePolicy {
    let mut policy = LogMergePolicy::default();
    policy.set_max_docs_before_merge(BACKGROUND_MERGE_MAX_DOCS);
    policy
}

/// How many segments the compaction of an index of `total` documents leaves: one, or two on a
/// machine with two cores or more once each would hold `part_docs` ([`COMPACTION_PART_DOCS`]).
fn compaction_parts(total: u64, part_docs: u64) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (total / part_docs.max(1)).clamp(1, 2).min(cores as u64) as usize
}

/// The segments of sizes `sizes` split into `parts` groups of about as many documents each,
/// as indexes into `sizes` (largest first: each goes to the group holding fewest so far).
fn partition(sizes: &[u64], parts: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
    let mut groups: Vec<(u64, Vec<usize>)> = vec![(0, Vec::new()); parts.max(1)];
    for i in order {
        let lightest = groups.iter_mut().min_by_key(|(docs, _)| *docs).unwrap();
        lightest.0 += sizes[i];
        lightest.1.push(i);
    }
    groups.into_iter().map(|(_, group)| group).collect()
}

/// A merge worth doing: into how many segments, the documents of the index and those written
/// since the last merge.
struct MergePlan {
    parts: usize,
    total: u64,
    unmerged: u64,
}

/// Whether the segments `metas` are worth merging, and into how many segments (`always`: into
/// one, whenever there are two or more). Segments no more numerous than the compaction's parts
/// record their documents as merged in `merged_at`.
fn merge_parts(
    metas: &[tantivy::index::SegmentMeta],
    merged_at: &mut Option<u64>,
    always: bool,
    part_docs: u64,
) -> Option<MergePlan> {
    let total: u64 = metas.iter().map(|m| m.num_docs() as u64).sum();
    let parts = if always {
        1
    } else {
        compaction_parts(total, part_docs)
    };
    if metas.len() <= parts {
        *merged_at = Some(total);
        return None;
    }
    // The documents a compaction left in place: those of the largest segments, as many as it
    // leaves.
    let mut sizes: Vec<u64> = metas.iter().map(|m| m.num_docs() as u64).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    let settled: u64 = sizes.iter().take(parts).sum();
    // The documents written since the last merge: those outside the settled segments, or,
    // when the background merges have gathered them into a large segment of their own, all
    // those added since this process last merged the index (a bulk load into an empty index
    // is merged whole at its end).
    let unmerged = (total - settled).max(total.saturating_sub(merged_at.unwrap_or(settled)));
    (always || unmerged * 8 >= total).then_some(MergePlan {
        parts,
        total,
        unmerged,
    })
}

/// Clears the flag of a running [`Index::compact_later`] however it ends.
struct Running<'a>(&'a AtomicBool);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use tantivy::index::SegmentId;
    use tantivy::indexer::MergePolicy;
    use tantivy::schema::Schema;

    use super::*;

    /// The segments the background would merge, as their document counts, largest first.
    fn background_merges(sizes: &[u32]) -> Vec<Vec<u32>> {
        let metas = metas(sizes);
        let size = |id| metas.iter().find(|m| m.id() == id).unwrap().max_doc();
        background_merge_policy()
            .compute_merge_candidates(&metas)
            .into_iter()
            .map(|c| {
                let mut s: Vec<u32> = c.0.into_iter().map(size).collect();
                s.sort_unstable_by(|a, b| b.cmp(a));
                s
            })
            .collect()
    }

    fn metas(sizes: &[u32]) -> Vec<tantivy::index::SegmentMeta> {
        let index = tantivy::Index::create_in_ram(Schema::builder().build());
        sizes
            .iter()
            .map(|&n| index.new_segment_meta(SegmentId::generate_random(), n))
            .collect()
    }

    #[test]
    fn a_large_index_is_compacted_into_two_balanced_parts() {
        let part = COMPACTION_PART_DOCS;
        assert_eq!(compaction_parts(0, part), 1);
        assert_eq!(compaction_parts(2 * part - 1, part), 1);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(compaction_parts(2 * part, part), cores.min(2));
        assert_eq!(compaction_parts(100 * part, part), cores.min(2));
        // Largest first, each to the lighter part: 97k + 60k + 10k + 3k against 97k + 50k + 20k.
        let sizes = [50_000, 97_000, 10_000, 97_000, 60_000, 20_000, 3_000];
        let groups = partition(&sizes, 2);
        let docs: Vec<u64> = groups
            .iter()
            .map(|g| g.iter().map(|&i| sizes[i]).sum())
            .collect();
        assert_eq!(docs, vec![170_000, 167_000]);
        let mut all: Vec<usize> = groups.concat();
        all.sort_unstable();
        assert_eq!(all, (0..sizes.len()).collect::<Vec<_>>());
        assert_eq!(partition(&sizes, 1), vec![vec![1, 3, 4, 0, 5, 2, 6]]);
    }

    /// Whether segments of `sizes` are worth merging, for an index that has not merged them.
    fn worth(sizes: &[u32], always: bool) -> bool {
        merge_parts(&metas(sizes), &mut None, always, COMPACTION_PART_DOCS).is_some()
    }

    #[test]
    fn the_segments_a_compaction_left_are_not_merged_again_for_a_few_documents() {
        let half = COMPACTION_PART_DOCS as u32 + 1_000;
        let two = std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2;
        // A bulk load's segments are worth merging.
        assert!(worth(&[97_000; 10], false));
        // The two parts of a large index are settled, and a few documents beside them too.
        assert_eq!(worth(&[half, half], false), !two);
        assert_eq!(worth(&[half, half, 5_000], false), !two);
        // An eighth of the index beside them is worth a merge; asked, they merge into one.
        assert!(worth(&[half, half, half / 3], false));
        assert!(worth(&[half, half], true));
        // A small index keeps to one segment.
        assert!(worth(&[40_000, 40_000], false));
        assert!(!worth(&[400_000, 1_000], false));
    }

    /// Adds documents `ids` (each with the word `common`) in one batch.
    fn add_batch(index: &Index, dir: &Path, task_uid: u64, ids: std::ops::Range<u64>) {
        let docs: Vec<Value> = ids
            .map(|i| serde_json::json!({"id": i, "t": format!("common word{}", i % 7)}))
            .collect();
        let file = dir.join(format!("b{task_uid}"));
        let body = serde_json::to_vec(&docs).unwrap();
        crate::payload::stage_documents(&body, crate::Format::Json, None, &file).unwrap();
        let op = crate::BatchOp::add_documents(task_uid, file, crate::Method::Replace, None);
        index.apply_batch(vec![op]).unwrap();
    }

    fn hits(index: &Index, q: &str) -> Value {
        let q: crate::SearchQuery = serde_json::from_value(serde_json::json!({ "q": q })).unwrap();
        serde_json::from_slice(&index.search(&q).unwrap()).unwrap()
    }

    #[test]
    fn a_large_index_ends_its_load_in_two_segments_merged_at_once() {
        let tmp = tempfile::tempdir().unwrap();
        let mut index = Index::open(tmp.path().join("idx")).unwrap();
        index.compaction_part_docs = 100;
        // Three batches: at most six segments, fewer than tantivy's background merges gather.
        for b in 0..3 {
            add_batch(&index, tmp.path(), b + 1, b * 100..(b + 1) * 100);
        }
        assert!(index.segment_count().unwrap() >= 3);
        let before = hits(&index, "common word3");
        index.compact_if_worthwhile().unwrap();
        let two = std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2;
        let sizes: Vec<u32> = {
            let metas = index.tantivy.searchable_segment_metas().unwrap();
            metas.iter().map(|m| m.num_docs()).collect()
        };
        match two {
            // 300 documents, at least three segments: 200 and 100 at worst.
            true => assert!(
                sizes.len() == 2 && sizes.iter().all(|&n| (100..=200).contains(&n)),
                "{sizes:?}"
            ),
            false => assert_eq!(sizes, vec![300]),
        }
        let after = hits(&index, "common word3");
        assert_eq!(after["estimatedTotalHits"], serde_json::json!(300));
        assert_eq!(before["hits"], after["hits"]);
        // A few more documents stay beside the two parts; an eighth of the index more merges
        // it into two again; asked, it becomes one.
        add_batch(&index, tmp.path(), 4, 300..305);
        index.compact_if_worthwhile().unwrap();
        assert!(index.segment_count().unwrap() > sizes.len());
        // (A sixth of the index is a trickle, not a load: merged beside the next batches.)
        add_batch(&index, tmp.path(), 5, 305..360);
        assert_eq!(index.compact_if_worthwhile().unwrap(), Compaction::Later);
        index.compact_later().unwrap();
        assert_eq!(index.segment_count().unwrap(), sizes.len());
        index.compact().unwrap();
        assert_eq!(index.segment_count().unwrap(), 1);
        assert_eq!(
            hits(&index, "common")["estimatedTotalHits"],
            serde_json::json!(360)
        );
    }

    #[test]
    fn the_files_of_a_failed_batch_are_deleted_once_its_last_indexing_thread_lets_go() {
        let tmp = tempfile::tempdir().unwrap();
        let index = Index::open(tmp.path().join("idx")).unwrap();
        add_batch(&index, tmp.path(), 1, 0..10);
        let files = || -> HashSet<PathBuf> { index.tantivy.directory().list_managed_files() };
        let committed = files();
        // An indexing thread tantivy did not join: it holds its new segment for a while after
        // the batch failed, so the first collection keeps that segment's file.
        let mut segment = index.tantivy.new_segment();
        let mut write = segment
            .open_write(tantivy::index::SegmentComponent::Postings)
            .unwrap();
        std::io::Write::write_all(&mut write, b"half a segment").unwrap();
        drop(write);
        assert!(files().len() > committed.len());
        let thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(segment);
        });
        index.discard_uncommitted(&mut index.writer.lock().unwrap());
        assert_eq!(files(), committed);
        thread.join().unwrap();
        assert_eq!(hits(&index, "common")["estimatedTotalHits"], 10);
    }

    #[test]
    fn the_background_gathers_small_segments_and_leaves_large_ones_to_the_compaction() {
        // A bulk load's segments (PyPI: about 97k documents each) wait for the compaction.
        assert!(background_merges(&[97_000; 12]).is_empty());
        // A trickle of small batches is gathered, without the large segments beside it.
        let mut sizes = vec![800_000, 97_000, 97_000];
        sizes.extend([1, 3, 2, 1, 40, 1, 7, 1]);
        assert_eq!(
            background_merges(&sizes),
            vec![vec![40, 7, 3, 2, 1, 1, 1, 1]]
        );
        // Fewer than eight small segments are left as they are.
        assert!(background_merges(&[800_000, 5, 5, 5]).is_empty());
    }
}
