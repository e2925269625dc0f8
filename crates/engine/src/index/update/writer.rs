//! The index's tantivy writer, locked for a batch, a recovery, a rebuild or a compaction
//! ([`Writer`]), and the merges it runs in the background.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

use api_types::Result;
use tantivy::indexer::IndexWriterOptions;
use tantivy::indexer::LogMergePolicy;
use tantivy::IndexWriter;

use crate::index::{tv, Index};

/// tantivy's background merges only gather segments of at most this many documents (a trickle
/// of small batches, one segment each). Larger segments are left to the compaction, which
/// merges everything once: were the background to merge them too, a bulk load would merge
/// most of its documents twice, and the compaction would first wait for that merge (on PyPI,
/// 8 segments of 97k documents merged into 731k, then all 886k again: a compaction step of
/// 11–14 s instead of 8).
pub(super) const BACKGROUND_MERGE_MAX_DOCS: usize = 10_000;

/// The index's tantivy writer (`Index::writer`), locked for a batch, a recovery, a rebuild or
/// a compaction, and opened on first use.
pub(super) struct Writer<'i> {
    pub(super) index: &'i Index,
    guard: MutexGuard<'i, Option<IndexWriter>>,
}

impl<'i> Writer<'i> {
    pub(super) fn lock(index: &'i Index) -> Writer<'i> {
        Writer {
            index,
            guard: index.writer.lock().unwrap(),
        }
    }

    /// The writer, opened if it is not.
    pub(super) fn get(&mut self) -> Result<&mut IndexWriter> {
        if self.guard.is_none() {
            // Within `--max-indexing-threads` and `--max-indexing-memory`: the indexing
            // threads, their arenas, and the merge threads (tantivy starts four by default).
            let limits = crate::indexing::limits();
            let (threads, arena) = crate::indexing::tantivy_writer(limits);
            let options = IndexWriterOptions::builder()
                .num_worker_threads(threads)
                .memory_budget_per_thread(arena)
                .num_merge_threads(limits.threads.clamp(1, 4))
                .build();
            let writer = self
                .index
                .tantivy
                .writer_with_options(options)
                .map_err(tv)?;
            writer.set_merge_policy(Box::new(background_merge_policy()));
            *self.guard = Some(writer);
        }
        Ok(self.guard.as_mut().unwrap())
    }

    /// Waits for the writer's merges to end, and releases it (the next use opens another).
    pub(super) fn finish_merges(&mut self) -> Result<()> {
        if let Some(writer) = self.guard.take() {
            writer.wait_merging_threads().map_err(tv)?;
        }
        Ok(())
    }

    /// Deletes the files no commit and no merge holds, if the writer is open.
    pub(super) fn collect_garbage(&mut self) {
        if let Some(writer) = self.guard.as_mut() {
            let _ = writer.garbage_collect_files().wait();
        }
    }

    /// Deletes the segment files a failed batch wrote, now rather than at the next commit (a
    /// full disk gets its space back at once). The writer is dropped: a new one lists as
    /// living only the segments of tantivy's last commit. But tantivy's `prepare_commit`
    /// returns the first failing indexing thread's error without joining the others, so one
    /// may still be finishing its segment: the collection is repeated until no file outside
    /// the last commit is left, for two seconds at most (the next commit collects the rest).
    pub(super) fn discard_uncommitted(&mut self) {
        drop(self.guard.take());
        let tantivy = &self.index.tantivy;
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            if let Ok(writer) = self.get() {
                let _ = writer.garbage_collect_files().wait();
            }
            let Ok(metas) = tantivy.load_metas() else {
                return;
            };
            // tantivy manages `meta.json` too.
            let mut living: HashSet<PathBuf> = metas
                .segments
                .iter()
                .flat_map(|segment| segment.list_files())
                .collect();
            living.insert(PathBuf::from("meta.json"));
            let stray = tantivy
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
}

pub(super) fn background_merge_policy() -> LogMergePolicy {
    let mut policy = LogMergePolicy::default();
    policy.set_max_docs_before_merge(BACKGROUND_MERGE_MAX_DOCS);
    policy
}
