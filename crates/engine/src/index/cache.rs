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

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::sync::Arc;

use roaring::RoaringBitmap;

use super::search::TypoCandidates;
use crate::facets::Column;
use crate::settings::Settings;
use crate::vectors::table::GraphTables;

/// About how many bytes one index's caches hold together at most (see the module doc).
pub const CACHE_BYTES: usize = 128 << 20;

/// How many bytes of columns [`ColumnCache`] holds: half of [`CACHE_BYTES`]. A column of the
/// npm catalogue's `downloads` over 100,000 documents takes about 1 MB, a string column of
/// PyPI's names about 6 MB.
const COLUMN_BYTES: usize = CACHE_BYTES / 2;

/// How many bytes of filter results [`FilterCache`] holds: a quarter of [`CACHE_BYTES`].
const FILTER_BYTES: usize = CACHE_BYTES / 4;

/// How many filter results [`FilterCache`] keeps.
const FILTER_CACHE_SIZE: usize = 16;

/// How many columns [`ColumnCache`] holds at most, whatever their bytes.
const COLUMN_CACHE_SIZE: usize = 64;

/// How many query words [`Recent`] takes in before it starts a new lot (keeping the last one).
/// The bench's mixes walk about 1,300 words (PyPI and npm): at 512, a server cycling through
/// them found none of its walks again, and they were a fifth to a third of its engine time.
const RECENT_WORDS: usize = 2048;

/// How many bytes of keys and values [`Recent`] takes in before it starts a new lot: a word's
/// walk holds 1 KB (npm) to 1.8 KB (PyPI) on average, but a long prefix's, with its first
/// letter's variants completed, up to some tens of KB. Two caches of two lots: four of these
/// are the words' share of [`CACHE_BYTES`].
const RECENT_BYTES: usize = CACHE_BYTES / 32;

/// One value computed at one generation: a reader at that generation shares it, one at an
/// older generation computes its own.
pub(super) struct Generational<T> {
    entry: Option<(u64, Arc<T>)>,
}

impl<T> Default for Generational<T> {
    fn default() -> Self {
        Generational { entry: None }
    }
}

impl<T> Generational<T> {
    pub(super) fn get(&self, generation: u64) -> Option<Arc<T>> {
        let (g, value) = self.entry.as_ref()?;
        (*g == generation).then(|| value.clone())
    }

    /// Keeps `value` unless a newer generation is held.
    pub(super) fn put(&mut self, generation: u64, value: Arc<T>) {
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
pub(super) type SettingsCache = Generational<Settings>;

/// Recent filter results, least recently used first, at most [`FILTER_CACHE_SIZE`] of them
/// and [`FILTER_BYTES`] together.
pub(super) struct FilterCache {
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
    pub(super) fn get(&mut self, generation: u64, key: &str) -> Option<Arc<RoaringBitmap>> {
        let at = self
            .entries
            .iter()
            .position(|(g, k, _, _)| *g == generation && *k == key)?;
        let entry = self.entries.remove(at);
        let ids = entry.2.clone();
        self.entries.push(entry);
        Some(ids)
    }

    pub(super) fn put(&mut self, generation: u64, key: String, ids: Arc<RoaringBitmap>) {
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

/// What [`super::Index`] keeps for sorting, distinct and facets: the set of all ids of the
/// newest generation, each attribute's newest column with the generation it was built at, and
/// the internal ids each recent commit changed. A reader at an older generation builds its own
/// columns, uncached; one at a newer generation derives its columns from the older ones and the
/// documents changed since, when the changes are known (see [`ColumnCache::changed_since`]).
///
/// The columns hold at most [`COLUMN_BYTES`] (as [`Column::bytes`] counts them) and
/// [`COLUMN_CACHE_SIZE`] columns; past either, the least recently used go first.
pub(super) struct ColumnCache {
    generation: u64,
    all: Option<Arc<RoaringBitmap>>,
    columns: HashMap<String, CachedColumn>,
    /// What the columns hold together.
    bytes: usize,
    budget: usize,
    /// Counts uses: a column's `used` is the count at its last use.
    clock: Cell<u64>,
    /// `(generation, ids its commit changed)`, oldest first, at most [`CHANGES_KEPT`].
    changes: VecDeque<(u64, RoaringBitmap)>,
}

/// A column in [`ColumnCache`], with the generation it was built at.
struct CachedColumn {
    generation: u64,
    column: Arc<Column>,
    bytes: usize,
    /// When it was last used (a tick of [`ColumnCache::clock`]); a `Cell` so that reads, which
    /// hold the cache's lock, stay `&self`.
    used: Cell<u64>,
}

impl Default for ColumnCache {
    fn default() -> Self {
        ColumnCache::with_budget(COLUMN_BYTES)
    }
}

/// How many commits' changed ids [`ColumnCache`] remembers.
const CHANGES_KEPT: usize = 32;

/// Whether something cached at an older generation (a column, the set of all ids) is worth
/// updating with the `changed` ids rather than computing afresh over the `count` documents:
/// past a quarter changed, one pass over every document is about as fast.
pub(super) fn worth_updating(changed: &RoaringBitmap, count: u64) -> bool {
    changed.len().saturating_mul(4) <= count
}

impl ColumnCache {
    fn with_budget(budget: usize) -> Self {
        ColumnCache {
            generation: 0,
            all: None,
            columns: HashMap::new(),
            bytes: 0,
            budget,
            clock: Cell::new(0),
            changes: VecDeque::new(),
        }
    }

    fn tick(&self) -> u64 {
        let now = self.clock.get() + 1;
        self.clock.set(now);
        now
    }

    /// The bytes the columns hold.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.bytes
    }

    pub(super) fn all_at(&self, generation: u64) -> Option<Arc<RoaringBitmap>> {
        (self.generation == generation).then(|| self.all.clone())?
    }

    /// The set of all ids of a generation older than `generation`, if one is held.
    pub(super) fn older_all(&self, generation: u64) -> Option<(u64, Arc<RoaringBitmap>)> {
        let all = self.all.as_ref().filter(|_| self.generation < generation)?;
        Some((self.generation, all.clone()))
    }

    pub(super) fn put_all(&mut self, generation: u64, all: Arc<RoaringBitmap>) {
        if generation > self.generation {
            self.generation = generation;
            self.all = None;
        }
        if generation == self.generation {
            self.all = Some(all);
        }
    }

    /// The column of `path` at `generation`, if held. Its views built since it was last
    /// measured count now, and may push others out.
    pub(super) fn get(&mut self, generation: u64, path: &str) -> Option<Arc<Column>> {
        let now = self.tick();
        let c = self
            .columns
            .get_mut(path)
            .filter(|c| c.generation == generation)?;
        c.used.set(now);
        let column = c.column.clone();
        let bytes = column.bytes();
        if bytes != c.bytes {
            self.bytes = self.bytes - c.bytes + bytes;
            c.bytes = bytes;
            self.evict(path);
        }
        Some(column)
    }

    /// The column of `path` built at a generation older than `generation`, if one is held.
    pub(super) fn older(&self, generation: u64, path: &str) -> Option<(u64, Arc<Column>)> {
        let c = self
            .columns
            .get(path)
            .filter(|c| c.generation < generation)?;
        c.used.set(self.tick());
        Some((c.generation, c.column.clone()))
    }

    /// Keeps `column` unless a newer generation's is held, then drops the least recently used
    /// others while the columns are too many or hold more than the budget.
    pub(super) fn put(&mut self, generation: u64, path: &str, column: Arc<Column>) {
        if self
            .columns
            .get(path)
            .is_some_and(|c| c.generation > generation)
        {
            return;
        }
        let bytes = column.bytes();
        let entry = CachedColumn {
            generation,
            column,
            bytes,
            used: Cell::new(self.tick()),
        };
        if let Some(old) = self.columns.insert(path.to_string(), entry) {
            self.bytes -= old.bytes;
        }
        self.bytes += bytes;
        self.evict(path);
    }

    /// Drops the least recently used columns but `keep` while they are too many or hold more
    /// than the budget.
    fn evict(&mut self, keep: &str) {
        while self.columns.len() > 1
            && (self.columns.len() > COLUMN_CACHE_SIZE || self.bytes > self.budget)
        {
            let oldest = self
                .columns
                .iter()
                .filter(|(p, _)| p.as_str() != keep)
                .min_by_key(|(_, c)| c.used.get())
                .map(|(p, _)| p.clone())
                .expect("another column is held");
            self.bytes -= self.columns.remove(&oldest).expect("just found").bytes;
        }
    }

    /// Records the internal ids the commit of `generation` added, changed or deleted (called
    /// before the commit, so that a reader seeing the generation finds them; a commit that
    /// fails and is retried under the same number adds its ids to the same entry).
    pub(super) fn record_changes(&mut self, generation: u64, ids: &RoaringBitmap) {
        if let Some((_, known)) = self.changes.iter_mut().find(|(g, _)| *g == generation) {
            *known |= ids;
            return;
        }
        if self.changes.len() >= CHANGES_KEPT {
            self.changes.pop_front();
        }
        self.changes.push_back((generation, ids.clone()));
    }

    /// Every internal id changed by the commits after `from` up to `to`, or `None` when one
    /// of those commits is not remembered (the columns are then built afresh).
    pub(super) fn changed_since(&self, from: u64, to: u64) -> Option<RoaringBitmap> {
        let mut out = RoaringBitmap::new();
        for generation in from + 1..=to {
            let (_, ids) = self.changes.iter().find(|(g, _)| *g == generation)?;
            out |= ids;
        }
        Some(out)
    }
}

/// The vector graphs' tables ([`crate::vectors::table`]), built off the request path, one
/// build at a time. Unlike the other caches it is emptied when a batch commits: a table holds
/// a read transaction, which must not keep the pages of an old generation from being reused.
#[derive(Default)]
pub(super) struct VectorTables {
    /// The last build that ended at the current generation; None inside when it failed (that
    /// generation's searches then use hannoy's reader).
    built: Generational<Option<GraphTables>>,
    /// Whether a build is running, whatever its generation.
    building: bool,
    /// The generation of the last commit: a build of an older one is dropped when it ends.
    floor: u64,
}

/// What [`VectorTables::lookup`] found.
pub(super) enum TableLookup {
    Ready(Arc<Option<GraphTables>>),
    /// The caller is to build the table of the generation it asked for, then call
    /// [`VectorTables::finish`].
    Build,
    /// Another build is running: use hannoy's reader meanwhile.
    Busy,
}

impl VectorTables {
    pub(super) fn lookup(&mut self, generation: u64) -> TableLookup {
        if let Some(t) = self.built.get(generation) {
            return TableLookup::Ready(t);
        }
        if self.building || generation < self.floor || self.built.holds(generation) {
            return TableLookup::Busy;
        }
        self.building = true;
        TableLookup::Build
    }

    /// Ends the build claimed by [`Self::lookup`]; its table is kept unless a commit came since.
    pub(super) fn finish(&mut self, generation: u64, tables: Option<GraphTables>) {
        self.building = false;
        if generation >= self.floor {
            self.built.put(generation, Arc::new(tables));
        }
    }

    /// Drops the table (and its read transaction) of the generations before `generation`.
    pub(super) fn commit(&mut self, generation: u64) {
        self.floor = generation;
        self.built.clear();
    }
}

/// What recent query words cost to look up in the dictionary, for one searcher generation:
/// - the typo walk of a word for a budget, as a prefix or not (on PyPI, a 2-typo walk is a
///   fifth of the engine's time for two words);
/// - the split of a word into two that the most documents hold side by side (a phrase count
///   per split point).
///
/// Search-as-you-type sends every word but the last again with each keystroke, and common
/// words recur across users. Both depend on the dictionary alone, so they are kept for as
/// long as the searcher generation (a commit or a merge starts another).
#[derive(Default)]
pub(super) struct WordCache {
    pub(super) walks: Recent<(Box<str>, u8, bool), Arc<TypoCandidates>>,
    pub(super) splits: Recent<Box<str>, Option<usize>>,
}

/// Values of one generation, in two lots of at most [`RECENT_WORDS`] keys and
/// [`RECENT_BYTES`] each: when the newer lot is full it becomes the older one and the oldest
/// lot is dropped, so a key used in either lot stays.
pub(super) struct Recent<K, V> {
    generation: u64,
    newer: HashMap<K, V>,
    /// What the newer lot's keys and values hold (see [`Weigh`]).
    newer_bytes: usize,
    older: HashMap<K, V>,
}

/// About how many bytes a key or value of [`Recent`] holds, its heap included.
pub(super) trait Weigh {
    fn bytes(&self) -> usize;
}

impl Weigh for Box<str> {
    fn bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.len()
    }
}

impl Weigh for (Box<str>, u8, bool) {
    fn bytes(&self) -> usize {
        self.0.bytes() + 8
    }
}

impl Weigh for Option<usize> {
    fn bytes(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}

impl Weigh for Arc<TypoCandidates> {
    fn bytes(&self) -> usize {
        let list = |l: &[String]| -> usize {
            std::mem::size_of::<Vec<String>>()
                + l.iter()
                    .map(|w| std::mem::size_of::<String>() + w.capacity())
                    .sum::<usize>()
        };
        std::mem::size_of::<TypoCandidates>()
            + list(&self.one)
            + list(&self.two)
            + self.variants.iter().map(|v| list(v)).sum::<usize>()
    }
}

impl<K, V> Default for Recent<K, V> {
    fn default() -> Self {
        Recent {
            generation: 0,
            newer: HashMap::new(),
            newer_bytes: 0,
            older: HashMap::new(),
        }
    }
}

impl<K: Eq + Hash + Clone + Weigh, V: Clone + Weigh> Recent<K, V> {
    pub(super) fn get<Q>(&mut self, generation: u64, key: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        if generation != self.generation {
            return None;
        }
        if let Some(v) = self.newer.get(key) {
            return Some(v.clone());
        }
        let (k, v) = self.older.remove_entry(key)?;
        self.insert(k, v.clone());
        Some(v)
    }

    /// Keeps `value` unless a newer generation is held (an older reader computes its own).
    pub(super) fn put(&mut self, generation: u64, key: K, value: V) {
        if generation < self.generation {
            return;
        }
        if generation > self.generation {
            *self = Recent {
                generation,
                ..Recent::default()
            };
        }
        self.insert(key, value);
    }

    fn insert(&mut self, key: K, value: V) {
        if self.newer.len() >= RECENT_WORDS || self.newer_bytes >= RECENT_BYTES {
            self.older = std::mem::take(&mut self.newer);
            self.newer_bytes = 0;
        }
        self.newer_bytes += key.bytes() + value.bytes();
        self.newer.insert(key, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_build(l: TableLookup) -> bool {
        matches!(l, TableLookup::Build)
    }

    fn is_busy(l: TableLookup) -> bool {
        matches!(l, TableLookup::Busy)
    }

    /// A failed build stands in for a table here: the bookkeeping is the same.
    #[test]
    fn one_vector_table_build_at_a_time_and_none_kept_past_a_commit() {
        let mut t = VectorTables::default();
        assert!(is_build(t.lookup(5)));
        // Concurrent searches do not build it again, at this generation or another.
        assert!(is_busy(t.lookup(5)));
        assert!(is_busy(t.lookup(4)));
        t.finish(5, None);
        assert!(matches!(t.lookup(5), TableLookup::Ready(_)));
        // A reader at an older generation never builds over a newer table.
        assert!(is_busy(t.lookup(4)));

        // A commit drops the table; the next generation builds its own.
        t.commit(6);
        assert!(is_busy(t.lookup(5)));
        assert!(is_build(t.lookup(6)));
        // A build that a commit overtook is dropped when it ends.
        t.commit(7);
        assert!(is_busy(t.lookup(7)), "the overtaken build still runs");
        t.finish(6, None);
        assert!(is_build(t.lookup(7)));
        t.finish(7, None);
        assert!(matches!(t.lookup(7), TableLookup::Ready(_)));
    }

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

    /// A column of `n` documents with distinct strings of 100 bytes: about 14 KB per 100.
    fn string_column(path: &str, n: usize) -> Arc<Column> {
        let docs: Vec<serde_json::Value> = (0..n)
            .map(|i| {
                let mut doc = serde_json::Map::new();
                doc.insert(path.to_string(), format!("{i:0>100}").into());
                serde_json::Value::Object(doc)
            })
            .collect();
        Arc::new(crate::facets::column::column(path, &docs))
    }

    /// Past the byte budget the least recently used column goes, not the newest nor one
    /// just read; the bytes counted follow what is held.
    #[test]
    fn test_columns_are_evicted_by_bytes_least_recently_used_first() {
        let size = string_column("x", 1000).bytes();
        assert!(
            size > 100_000,
            "a column of 1,000 strings of 100 bytes counts them"
        );
        let mut cache = ColumnCache::with_budget(size * 3 + size / 2);
        for path in ["a", "b", "c"] {
            cache.put(1, path, string_column(path, 1000));
        }
        assert_eq!(cache.columns.len(), 3);
        // `a` is used, so `b` is now the least recently used.
        assert!(cache.get(1, "a").is_some());
        cache.put(1, "d", string_column("d", 1000));
        assert!(
            cache.get(1, "b").is_none(),
            "the least recently used column is dropped"
        );
        for path in ["a", "c", "d"] {
            assert!(cache.get(1, path).is_some(), "{path} is kept");
        }
        assert!(cache.bytes() <= size * 3 + size / 2);
        assert_eq!(
            cache.bytes(),
            cache.columns.values().map(|c| c.bytes).sum::<usize>()
        );

        // A column larger than the whole budget is kept alone, the others dropped.
        cache.put(1, "big", string_column("big", 5000));
        assert_eq!(cache.columns.len(), 1);
        assert!(cache.get(1, "big").is_some());
        // Replacing a column counts its bytes once.
        cache.put(2, "big", string_column("big", 10));
        assert_eq!(cache.bytes(), cache.columns["big"].bytes);
    }

    /// The views of a column built after it was cached (its value index, its numbers' ids)
    /// count from its next use, and push out the least recently used others.
    #[test]
    fn test_views_built_later_count_in_the_budget() {
        let size = string_column("x", 1000).bytes();
        let grown = {
            let c = string_column("x", 1000);
            let _ = c.index();
            c.bytes() - size
        };
        assert!(grown > 1000 * 8, "the bitmaps of 1,000 strings count");
        let mut cache = ColumnCache::with_budget(size * 2 + grown / 2);
        for path in ["a", "b"] {
            cache.put(1, path, string_column(path, 1000));
        }
        let b = cache.get(1, "b").unwrap();
        let _ = b.index();
        let _ = b.number_ids();
        assert_eq!(
            b.bytes(),
            size + grown,
            "no numbers: their ids hold nothing"
        );
        assert!(
            cache.get(1, "a").is_some(),
            "not measured again before its use"
        );
        assert!(cache.get(1, "b").is_some());
        assert!(cache.get(1, "a").is_none(), "the least recently used goes");
        assert_eq!(cache.bytes(), b.bytes());
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

    impl Weigh for u32 {
        fn bytes(&self) -> usize {
            4
        }
    }

    impl Weigh for Vec<u8> {
        fn bytes(&self) -> usize {
            self.len()
        }
    }

    /// A lot holding [`RECENT_BYTES`] starts another, however few its keys.
    #[test]
    fn recent_lots_are_bounded_by_bytes() {
        let mut r: Recent<u32, Vec<u8>> = Recent::default();
        let big = vec![0u8; RECENT_BYTES / 4];
        for k in 0..4 {
            r.put(1, k, big.clone());
        }
        assert_eq!(r.newer.len(), 4);
        r.put(1, 4, big.clone());
        assert_eq!((r.newer.len(), r.older.len()), (1, 4));
        r.put(1, 5, vec![1]);
        for k in 6..10 {
            r.put(1, k, big.clone());
        }
        // The lot before last is dropped; keys 0-3 are gone.
        assert_eq!(r.get(1, &0), None);
        assert_eq!(r.get(1, &5), Some(vec![1]));
        assert_eq!(r.older.len() + r.newer.len(), 6);
    }

    #[test]
    fn recent_keeps_two_lots_of_one_generation() {
        let mut r: Recent<u32, u32> = Recent::default();
        r.put(3, 0, 100);
        assert_eq!(r.get(3, &0), Some(100));
        // Another generation's reader neither sees nor replaces it.
        assert_eq!(r.get(2, &0), None);
        r.put(2, 0, 7);
        assert_eq!(r.get(3, &0), Some(100));
        // A full lot becomes the older one; a key used from it moves to the newer lot, and
        // the lot before is dropped.
        for k in 1..RECENT_WORDS as u32 {
            r.put(3, k, k);
        }
        r.put(3, 9999, 9999);
        assert_eq!(r.get(3, &0), Some(100));
        for k in 10_000..10_000 + RECENT_WORDS as u32 {
            r.put(3, k, k);
        }
        assert_eq!(r.get(3, &0), Some(100));
        assert_eq!(r.get(3, &1), None);
        // A newer generation starts afresh.
        r.put(4, 5, 5);
        assert_eq!(r.get(4, &0), None);
        assert_eq!(r.get(4, &5), Some(5));
    }
}
