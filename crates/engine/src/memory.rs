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

/// Asks the allocator to return the memory it holds free to the operating system: the calling
/// thread's free pages, the pages other threads freed into it, and every free page of its
/// arenas. Harmless when mimalloc is not the global allocator (it then holds nearly nothing).
pub fn release_free_memory() {
    // SAFETY: `mi_collect` only walks the allocator's own structures, under its own locks;
    // it frees nothing that is allocated.
    unsafe { mi_collect(true) }
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
}
