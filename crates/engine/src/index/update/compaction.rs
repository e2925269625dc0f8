//! Compaction: merging an index's segments into one (two for a large index), beside the
//! commit protocol of [`super::commit`], whose recovery rules it leaves unchanged.
//!
//! # When
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
//! the whole index. The merge keeps tantivy's commit payload, so the recovery rules of
//! [`super::commit`] are unchanged; searches use the old segments until the merged ones are published, and a crash
//! during the merge leaves the old segments (the batch itself is committed already).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use api_types::Result;
use tantivy::indexer::LogMergePolicy;
use tantivy::IndexWriter;

use crate::index::{tv, Index};

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

    pub(super) fn merge_segments(&self, always: bool) -> Result<()> {
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

pub(super) fn background_merge_policy() -> LogMergePolicy {
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

    use std::collections::HashSet;
    use std::path::PathBuf;
    use std::time::Duration;

    use serde_json::Value;

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
