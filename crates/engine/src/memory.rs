//! Giving memory back to the operating system after a burst.
//!
//! The addon runs on mimalloc (its global allocator, `crates/node`). mimalloc keeps the pages a
//! thread freed for that thread's next allocations, and returns ("purges") them to the
//! operating system only when some later allocation or free walks past them. After a burst of
//! large answers (tens of megabytes each, built on the search threads and freed on the
//! JavaScript thread once the answers were sent), nothing walks past them: the server sat idle
//! at its peak resident size. [`release_free_memory`] asks mimalloc to collect and purge now.
//!
//! It does not free anything still in use, and it costs a walk of the allocator's pages (a few
//! milliseconds after a burst), so callers ask for it once a burst is over, not per request.

// The functions below are mimalloc's own (`mimalloc.h`); `libmimalloc-sys` builds and links
// the library. Declared here rather than through its `extended` feature, which would add a
// dependency for two declarations.
use libmimalloc_sys as _;

extern "C" {
    fn mi_collect(force: bool);
}

/// Asks the allocators to return the memory they hold free to the operating system: mimalloc's
/// (the calling thread's free pages, the pages other threads freed into it, and every free page
/// of its arenas; harmless when it is not the global allocator) and glibc's (`malloc_trim`:
/// Node's own allocations, the copies of answers among them, are glibc's, and the free pages
/// in the middle of its arenas stay resident until trimmed; on `bench/memory.js` this took
/// 40 MiB more off the resident size after a burst).
pub fn release_free_memory() {
    // SAFETY: `mi_collect` only walks the allocator's own structures, under its own locks;
    // it frees nothing that is allocated.
    unsafe { mi_collect(true) }
    // SAFETY: as above, for glibc's arenas.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn test_release_free_memory_after_frees() {
        let blocks: Vec<Vec<u8>> = (0..16).map(|i| vec![i as u8; 1 << 20]).collect();
        drop(blocks);
        super::release_free_memory();
        // Still usable afterwards.
        assert_eq!(vec![7u8; 1 << 20][12345], 7);
    }

    /// Resident bytes of this process.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn resident() -> u64 {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
        statm.split(' ').nth(1).unwrap().parse::<u64>().unwrap() * 4096
    }

    /// The unit tests run on glibc's allocator (the addon's global allocator is set in
    /// `crates/node`): 256 MiB of small blocks, all freed but the last one, stay resident in a
    /// thread's arena (nothing at its top to give back) until the release trims them.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn test_release_free_memory_trims_what_glibc_holds_free() {
        std::thread::spawn(|| {
            let mut blocks: Vec<Vec<u8>> = (0..65_536).map(|i| vec![i as u8; 4000]).collect();
            let last = blocks.pop();
            drop(blocks);
            let before = resident();
            super::release_free_memory();
            let after = resident();
            assert!(
                after + (128 << 20) < before,
                "resident {before} before, {after} after"
            );
            drop(last);
        })
        .join()
        .unwrap();
    }
}
