//! What the indexer may use: how many threads and how much memory (`--max-indexing-threads`,
//! `--max-indexing-memory`), set once per process by [`configure_indexing`] and read by every
//! part of a batch that spawns threads or buffers work: tokenization ([`crate::index::cores`]),
//! tantivy's writer (its indexing and merge threads and their arenas), the HNSW builds,
//! the compaction's parts and local models. Unset, the limits are Meilisearch's defaults: every
//! core, and two thirds of the machine's memory (of the cgroup's limit when it is lower).
//!
//! Threads the indexer starts are named `quarry-index-N` (tokenization) and `quarry-hnsw-N`
//! (graph builds); tantivy names its own (`thrd-tantivy-index0`, `merge_thread_0`), so a
//! process's indexing threads can be counted in `/proc/self/task/*/comm`.

use std::sync::RwLock;

/// The limits in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexingLimits {
    /// Threads working at once for one batch (at least 1).
    pub threads: usize,
    /// Bytes the indexer's buffers may hold (tantivy's arenas, documents awaiting
    /// tokenization).
    pub memory: u64,
}

static LIMITS: RwLock<Option<IndexingLimits>> = RwLock::new(None);

/// Sets the process's indexing limits; `None` restores a default. A thread count of 0 is 1.
pub fn configure_indexing(threads: Option<usize>, memory: Option<u64>) {
    let limits = IndexingLimits {
        threads: threads.unwrap_or_else(default_threads).max(1),
        memory: memory.unwrap_or_else(default_memory),
    };
    *LIMITS.write().unwrap_or_else(|e| e.into_inner()) = Some(limits);
    start_hnsw_pool(limits.threads);
    embedders::local::set_max_threads(limits.threads);
}

/// The limits in force (the defaults until [`configure_indexing`] is called).
pub fn limits() -> IndexingLimits {
    if let Some(l) = *LIMITS.read().unwrap_or_else(|e| e.into_inner()) {
        return l;
    }
    IndexingLimits {
        threads: default_threads(),
        memory: default_memory(),
    }
}

/// Every core, as Meilisearch defaults.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Two thirds of the memory this process may use, as Meilisearch defaults: the machine's
/// (`MemTotal`), or its cgroup's limit if lower; 2 GiB when neither can be read.
pub fn default_memory() -> u64 {
    let total = [machine_memory(), cgroup_memory()]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(3 << 30);
    total / 3 * 2
}

fn machine_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn cgroup_memory() -> Option<u64> {
    [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .find_map(|p| std::fs::read_to_string(p).ok()?.trim().parse().ok())
}

/// Threads for work split over cores: the limit, and no more than four (beyond four, the
/// batch's own thread, which feeds tantivy and writes LMDB, keeps them waiting).
pub(crate) fn worker_threads() -> usize {
    limits().threads.clamp(1, 4)
}

/// tantivy's smallest arena per indexing thread (its `MEMORY_BUDGET_NUM_BYTES_MIN`).
const TANTIVY_MIN_ARENA: u64 = 15_000_000;
/// The arena per indexing thread when memory is plentiful: larger ones gave no faster loads.
const TANTIVY_ARENA: u64 = 64 << 20;

/// tantivy's writer: indexing threads and the arena of each. Half the budget goes to the
/// arenas (the other half to the documents on their way, and the segments tantivy writes), at
/// most [`TANTIVY_ARENA`] each; fewer threads when each would get less than tantivy accepts.
pub(crate) fn tantivy_writer(limits: IndexingLimits) -> (usize, usize) {
    let mut threads = limits.threads.clamp(1, 4) as u64;
    let arenas = limits.memory / 2;
    while threads > 1 && arenas / threads < TANTIVY_MIN_ARENA {
        threads -= 1;
    }
    let arena = (arenas / threads).clamp(TANTIVY_MIN_ARENA, TANTIVY_ARENA);
    (threads as usize, arena as usize)
}

/// Encoded bytes of documents held before they are tokenized and handed to tantivy: a 32nd
/// of the budget, at least 1 MiB (parsed, then tokenized, they take several times as much).
pub(crate) fn pending_text_bytes() -> usize {
    (limits().memory / 32).max(1 << 20) as usize
}

/// Sizes rayon's global pool, whose threads (named `quarry-hnsw-N`) hannoy's parallel
/// iterators use when they build a graph: the batch's thread keeps the write transaction and
/// waits while they work. The pool is built once per process, so the first configuration's
/// thread count stays (a server configures before it opens an index).
fn start_hnsw_pool(threads: usize) {
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("quarry-hnsw-{i}"))
        .build_global();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tantivy_gets_half_the_budget_and_fewer_threads_when_it_is_small() {
        let l = |threads, mib: u64| IndexingLimits {
            threads,
            memory: mib << 20,
        };
        assert_eq!(tantivy_writer(l(8, 16 << 10)), (4, 64 << 20));
        assert_eq!(tantivy_writer(l(1, 16 << 10)), (1, 64 << 20));
        assert_eq!(tantivy_writer(l(4, 256)), (4, 32 << 20));
        // 64 MiB: 32 MiB of arenas, two threads of 16 MiB.
        assert_eq!(tantivy_writer(l(4, 64)), (2, 16 << 20));
        assert_eq!(tantivy_writer(l(4, 1)), (1, TANTIVY_MIN_ARENA as usize));
        assert!(default_memory() > 0 && default_threads() >= 1);
    }
}
