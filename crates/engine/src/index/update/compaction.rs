//! Compaction: merging an index's segments into one (two for a large index), beside the
//! commit protocol of [`super::commit`], whose recovery rules it leaves unchanged.
//!
//! # When
//!
//! tantivy writes a segment per indexing thread per commit (or per 64 MiB of text), and its
//! background merges gather only the small ones (at most
//! [`BACKGROUND_MERGE_MAX_DOCS`](super::writer::BACKGROUND_MERGE_MAX_DOCS)
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
use std::sync::MutexGuard;

use api_types::Result;
use tantivy::index::SegmentId;

use super::writer::Writer;
use crate::index::{tv, Index};

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

/// [`Index::compact_if_worthwhile`]: whether the segments are worth merging ([`merge_parts`]),
/// merged at once when at least half the index is new.
pub(super) fn compact_if_worthwhile(index: &Index) -> Result<Compaction> {
    if index.compacting.load(Ordering::Acquire) {
        return Ok(Compaction::Nothing);
    }
    let metas = index.tantivy.searchable_segment_metas().map_err(tv)?;
    let plan = merge_parts(
        &metas,
        &mut index.merged_at.lock().unwrap(),
        false,
        index.compaction_part_docs,
    );
    drop(metas);
    match plan {
        None => Ok(Compaction::Nothing),
        Some(plan) if plan.unmerged * 2 < plan.total => Ok(Compaction::Later),
        Some(_) => {
            merge_segments(index, false)?;
            Ok(Compaction::Merged)
        }
    }
}

/// [`Index::compact_later`]: the batch lock is held only to start the merges and to publish
/// their segments.
pub(super) fn compact_later(index: &Index) -> Result<()> {
    if index.compacting.swap(true, Ordering::AcqRel) {
        return Ok(());
    }
    let _running = Running(&index.compacting);
    let (merges, total) = {
        let _batch = index.batch_lock.lock().unwrap();
        let mut merge = Merge::lock(index);
        let Some((groups, total)) = merge.groups(false)? else {
            return Ok(());
        };
        (merge.start(&groups)?, total)
    };
    let waited = wait(merges);
    let _batch = index.batch_lock.lock().unwrap();
    Merge::lock(index).publish(&waited, total)
}

/// Merges the segments worth merging (`always`: every segment into one), with the batch lock
/// held throughout.
pub(super) fn merge_segments(index: &Index, always: bool) -> Result<()> {
    let _batch = index.batch_lock.lock().unwrap();
    let mut merge = Merge::lock(index);
    let Some((groups, total)) = merge.groups(always)? else {
        return Ok(());
    };
    // The parts merge at once, each on a thread of tantivy's merge pool; every merge is
    // waited for, whether or not another failed.
    let merges = merge.start(&groups)?;
    let waited = wait(merges);
    merge.publish(&waited, total)
}

/// [`Index::copy_to`]: the store and tantivy's files copied with the batch lock held and the
/// writer released.
pub(super) fn copy_to(index: &Index, dest: &Path) -> Result<()> {
    let _batch = index.batch_lock.lock().unwrap();
    Writer::lock(index).finish_merges()?;
    let store = dest.join("store");
    std::fs::create_dir_all(&store).map_err(api_types::io_error)?;
    index
        .store
        .env
        .copy_to_path(store.join("data.mdb"), heed::CompactionOption::Enabled)
        .map_err(|e| api_types::heed_error_in(e, &store))?
        .sync_all()
        .map_err(api_types::io_error)?;
    let from = index.dir.join("tantivy");
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

/// A merge of segments, with the batch lock held by the caller: the tantivy writer and what
/// the last merge left (`Index::merged_at`), locked in this order.
struct Merge<'i> {
    index: &'i Index,
    merged_at: MutexGuard<'i, Option<u64>>,
    writer: Writer<'i>,
}

impl<'i> Merge<'i> {
    fn lock(index: &'i Index) -> Merge<'i> {
        let writer = Writer::lock(index);
        let merged_at = index.merged_at.lock().unwrap();
        Merge {
            index,
            merged_at,
            writer,
        }
    }

    /// The groups of segments worth merging now (each of two or more), and the documents they
    /// hold.
    fn groups(&mut self, always: bool) -> Result<Option<(Vec<Vec<SegmentId>>, u64)>> {
        let (tantivy, part_docs) = (&self.index.tantivy, self.index.compaction_part_docs);
        // Background merges only gather segments (fewer of them, a larger largest one), so a
        // merge not worth it now is not worth it after them either: the writer is kept.
        let metas = tantivy.searchable_segment_metas().map_err(tv)?;
        if merge_parts(&metas, &mut self.merged_at, always, part_docs).is_none() {
            return Ok(None);
        }
        drop(metas);
        // tantivy's merge policy may be merging some of these segments in the background (it
        // looks for merges after every commit), and a merge overlapping one that ends first
        // is thrown away when it ends: on PyPI, 8.5 s of work for nothing, leaving 6 segments.
        // So the background merges finish first (this releases the writer; the next use opens
        // another), and the segments are listed after them. A merge [`Index::compact_later`]
        // started is one of them.
        self.writer.finish_merges()?;
        let metas = tantivy.searchable_segment_metas().map_err(tv)?;
        let Some(plan) = merge_parts(&metas, &mut self.merged_at, always, part_docs) else {
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

    /// Starts merging each of `groups`, on the writer's merge threads.
    fn start(&mut self, groups: &[Vec<SegmentId>]) -> Result<Vec<Merging>> {
        let writer = self.writer.get()?;
        Ok(groups.iter().map(|ids| writer.merge(ids)).collect())
    }

    /// Publishes what the merges `waited` (how each ended) left, and answers the first
    /// failure. The merge keeps tantivy's commit payload (the generation), so recovery is
    /// unchanged; searches use the old segments until the merged ones are published. A merge
    /// that failed (a full disk) leaves the segments as they were: its partial files are
    /// deleted here, and the failure is the caller's to report (`POST
    /// /indexes/{uid}/compact` fails; after a batch, the batch is committed already and the
    /// worker only logs it).
    fn publish(&mut self, waited: &[Result<()>], total: u64) -> Result<()> {
        if waited.iter().all(|r| r.is_ok()) {
            *self.merged_at = Some(total);
        }
        if waited.iter().any(|r| r.is_ok()) {
            self.index.publish_segments()?;
        }
        // Delete the merged-away segment files, and those of a merge that failed, now rather
        // than at the next commit (files a running search still reads are kept by tantivy
        // until it lets go of them).
        self.writer.collect_garbage();
        match waited.iter().find_map(|r| r.as_ref().err()) {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

/// A merge started on the writer's merge threads.
type Merging = tantivy::FutureResult<Option<tantivy::index::SegmentMeta>>;

/// Waits for every merge, whether or not another failed: how each ended.
fn wait(merges: Vec<Merging>) -> Vec<Result<()>> {
    merges
        .into_iter()
        .map(|m| m.wait().map(drop).map_err(tv))
        .collect()
}

/// How many segments the compaction of an index of `total` documents leaves: one, or two on a
/// machine with two cores or more (within `--max-indexing-threads`) once each would hold `part_docs` ([`COMPACTION_PART_DOCS`]).
fn compaction_parts(total: u64, part_docs: u64) -> usize {
    let cores = crate::indexing::limits().threads;
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

    use super::super::writer::background_merge_policy;
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
        let cores = crate::indexing::limits().threads;
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
        let two = crate::indexing::limits().threads >= 2;
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
        let two = crate::indexing::limits().threads >= 2;
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
        Writer::lock(&index).discard_uncommitted();
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
