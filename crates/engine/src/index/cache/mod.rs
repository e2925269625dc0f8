//! What the read paths keep between requests, each entry tied to the generation (the count of
//! committed batches) it was computed at: a commit makes it stale, and a reader still at an
//! older generation computes its own rather than using or evicting a newer one.
//!
//! - [`SettingsCache`]: the typed settings, so a search parses no stored JSON;
//! - [`FilterCache`]: recent filter results (tenant tokens repeat one filter on every search);
//! - [`ColumnCache`]: value columns (sort, distinct, facets) and the set of all ids;
//! - [`VectorTables`]: the vector graphs' tables, built on a thread of their own and dropped at
//!   commit rather than left stale;
//! - [`WordCache`]: the typo walks and splits of recent query words, per searcher generation
//!   (the dictionary they read) rather than per commit.
//!
//! Together they hold at most about [`CACHE_BYTES`] per index, each cache its share: value
//! columns half, filter results a quarter, the words' four lots a sixteenth each (the settings
//! and the set of all ids are small). Past its share, a cache drops its least recently used
//! entries, but never the one it just took in: a column larger than the share alone is kept
//! until the next one comes, or a search that sorts by it would build it on every request.
//! The vector tables are not counted: they hold a read transaction over the graphs' pages,
//! which stay in the memory map rather than the heap. Shares, not one pool: each cache has its
//! own lock, and a pool shared across them would make every insertion take the others' locks.

use std::sync::Arc;

use roaring::RoaringBitmap;

use crate::settings::Settings;

mod columns;
mod vector_tables;
mod words;
pub(crate) use columns::{worth_updating, ColumnCache};
pub(crate) use vector_tables::{TableLookup, VectorTables};
pub(crate) use words::WordCache;

/// About how many bytes one index's caches hold together at most (see the module doc).
pub const CACHE_BYTES: usize = 128 << 20;

/// How many bytes of filter results [`FilterCache`] holds: a quarter of [`CACHE_BYTES`].
const FILTER_BYTES: usize = CACHE_BYTES / 4;

/// How many filter results [`FilterCache`] keeps.
const FILTER_CACHE_SIZE: usize = 16;

/// One value computed at one generation: a reader at that generation shares it, one at an
/// older generation computes its own.
pub(crate) struct Generational<T> {
    entry: Option<(u64, Arc<T>)>,
}

impl<T> Default for Generational<T> {
    fn default() -> Self {
        Generational { entry: None }
    }
}

impl<T> Generational<T> {
    pub(crate) fn get(&self, generation: u64) -> Option<Arc<T>> {
        let (g, value) = self.entry.as_ref()?;
        (*g == generation).then(|| value.clone())
    }

    /// Keeps `value` unless a newer generation is held.
    pub(crate) fn put(&mut self, generation: u64, value: Arc<T>) {
        if self.entry.as_ref().is_none_or(|(g, _)| *g <= generation) {
            self.entry = Some((generation, value));
        }
    }

    /// Whether a value of `generation` or a newer one is held.
    fn holds(&self, generation: u64) -> bool {
        self.entry.as_ref().is_some_and(|(g, _)| *g >= generation)
    }

    fn clear(&mut self) {
        self.entry = None;
    }
}

/// The typed settings of one generation. Settings are written only by a batch's commit,
/// which moves the generation on, so one generation has one settings object.
pub(crate) type SettingsCache = Generational<Settings>;

/// Recent filter results, least recently used first, at most [`FILTER_CACHE_SIZE`] of them
/// and [`FILTER_BYTES`] together.
pub(crate) struct FilterCache {
    entries: Vec<FilterEntry>,
    bytes: usize,
    budget: usize,
}

/// One filter's result: (generation, filter JSON, matching internal ids, bytes held).
type FilterEntry = (u64, String, Arc<RoaringBitmap>, usize);

impl Default for FilterCache {
    fn default() -> Self {
        FilterCache::with_budget(FILTER_BYTES)
    }
}

impl FilterCache {
    fn with_budget(budget: usize) -> Self {
        FilterCache {
            entries: Vec::new(),
            bytes: 0,
            budget,
        }
    }

    /// The ids matching the filter whose request JSON is `key`, if computed at `generation`;
    /// a result found becomes the most recently used.
    pub(crate) fn get(&mut self, generation: u64, key: &str) -> Option<Arc<RoaringBitmap>> {
        let at = self
            .entries
            .iter()
            .position(|(g, k, _, _)| *g == generation && *k == key)?;
        let entry = self.entries.remove(at);
        let ids = entry.2.clone();
        self.entries.push(entry);
        Some(ids)
    }

    pub(crate) fn put(&mut self, generation: u64, key: String, ids: Arc<RoaringBitmap>) {
        // A newer generation makes older results useless; an older reader keeps its own.
        self.entries.retain(|(g, _, _, _)| *g >= generation);
        let bytes = key.len() + ids.serialized_size() + std::mem::size_of::<FilterEntry>();
        self.entries.push((generation, key, ids, bytes));
        self.bytes = self.entries.iter().map(|e| e.3).sum();
        while self.entries.len() > 1
            && (self.entries.len() > FILTER_CACHE_SIZE || self.bytes > self.budget)
        {
            self.bytes -= self.entries.remove(0).3;
        }
    }

    /// The bytes the results hold.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generational_value_is_replaced_only_by_a_newer_one() {
        let mut g = Generational::default();
        g.put(3, Arc::new("three"));
        g.put(2, Arc::new("two"));
        assert_eq!(g.get(3).as_deref(), Some(&"three"));
        assert_eq!(g.get(2), None);
        g.put(4, Arc::new("four"));
        assert_eq!(g.get(4).as_deref(), Some(&"four"));
        assert_eq!(g.get(3), None);
    }

    /// Filter results are bounded by bytes too, least recently used first.
    #[test]
    fn test_filter_results_are_evicted_by_bytes() {
        let ids = |n: u32| Arc::new((0..n).map(|i| i * 3).collect::<RoaringBitmap>());
        let one = ids(100_000).serialized_size();
        let mut cache = FilterCache::with_budget(one * 2 + one / 2);
        cache.put(1, "a".into(), ids(100_000));
        cache.put(1, "b".into(), ids(100_000));
        assert!(cache.get(1, "a").is_some());
        cache.put(1, "c".into(), ids(100_000));
        assert!(
            cache.get(1, "b").is_none(),
            "the least recently used result is dropped"
        );
        assert!(cache.get(1, "a").is_some() && cache.get(1, "c").is_some());
        assert!(cache.bytes() <= one * 2 + one / 2);
        // Small results are bounded by count as before.
        for i in 0..40 {
            cache.put(1, format!("small {i}"), ids(10));
        }
        assert_eq!(cache.entries.len(), FILTER_CACHE_SIZE);
    }
}
