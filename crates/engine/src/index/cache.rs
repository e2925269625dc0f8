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

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::sync::Arc;

use roaring::RoaringBitmap;

use super::search::TypoCandidates;
use crate::facets::Column;
use crate::settings::Settings;
use crate::vectors::table::GraphTables;

/// How many filter results [`FilterCache`] keeps.
const FILTER_CACHE_SIZE: usize = 16;

/// How many columns [`ColumnCache`] holds before it starts over.
const COLUMN_CACHE_SIZE: usize = 64;

/// How many query words [`Recent`] takes in before it starts a new lot (keeping the last one).
/// The bench's mixes walk about 1,300 words (PyPI and npm): at 512, a server cycling through
/// them found none of its walks again, and they were a fifth to a third of its engine time.
const RECENT_WORDS: usize = 2048;

/// How many bytes of keys and values [`Recent`] takes in before it starts a new lot: a word's
/// walk holds 1 KB (npm) to 1.8 KB (PyPI) on average, but a long prefix's, with its first
/// letter's variants completed, up to some tens of KB.
const RECENT_BYTES: usize = 4 << 20;

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

/// Recent filter results: (generation, filter JSON, matching internal ids), oldest first.
#[derive(Default)]
pub(super) struct FilterCache {
    entries: Vec<(u64, String, Arc<RoaringBitmap>)>,
}

impl FilterCache {
    /// The ids matching the filter whose request JSON is `key`, if computed at `generation`.
    pub(super) fn get(&self, generation: u64, key: &str) -> Option<Arc<RoaringBitmap>> {
        self.entries
            .iter()
            .find(|(g, k, _)| *g == generation && *k == key)
            .map(|(_, _, ids)| ids.clone())
    }

    pub(super) fn put(&mut self, generation: u64, key: String, ids: Arc<RoaringBitmap>) {
        // A newer generation makes older results useless; an older reader keeps its own.
        self.entries.retain(|(g, _, _)| *g >= generation);
        if self.entries.len() >= FILTER_CACHE_SIZE {
            self.entries.remove(0);
        }
        self.entries.push((generation, key, ids));
    }
}

/// What [`super::Index`] keeps for sorting, distinct and facets: the set of all ids of the
/// newest generation, each attribute's newest column with the generation it was built at, and
/// the internal ids each recent commit changed. A reader at an older generation builds its own
/// columns, uncached; one at a newer generation derives its columns from the older ones and the
/// documents changed since, when the changes are known (see [`ColumnCache::changed_since`]).
#[derive(Default)]
pub(super) struct ColumnCache {
    generation: u64,
    all: Option<Arc<RoaringBitmap>>,
    columns: HashMap<String, (u64, Arc<Column>)>,
    /// `(generation, ids its commit changed)`, oldest first, at most [`CHANGES_KEPT`].
    changes: VecDeque<(u64, RoaringBitmap)>,
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

    pub(super) fn get(&self, generation: u64, path: &str) -> Option<Arc<Column>> {
        match self.columns.get(path) {
            Some((g, column)) if *g == generation => Some(column.clone()),
            _ => None,
        }
    }

    /// The column of `path` built at a generation older than `generation`, if one is held.
    pub(super) fn older(&self, generation: u64, path: &str) -> Option<(u64, Arc<Column>)> {
        match self.columns.get(path) {
            Some((g, column)) if *g < generation => Some((*g, column.clone())),
            _ => None,
        }
    }

    /// Keeps `column` unless a newer generation's is held.
    pub(super) fn put(&mut self, generation: u64, path: &str, column: Arc<Column>) {
        if self.columns.get(path).is_some_and(|(g, _)| *g > generation) {
            return;
        }
        if self.columns.len() >= COLUMN_CACHE_SIZE && !self.columns.contains_key(path) {
            self.columns.clear();
        }
        self.columns.insert(path.to_string(), (generation, column));
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
