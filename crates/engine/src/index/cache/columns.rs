//! The value columns (sort, distinct, facets) and the set of all ids, per generation, within
//! their share of the index's cache budget.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use roaring::RoaringBitmap;

use super::CACHE_BYTES;
use crate::facets::Column;

/// How many bytes of columns [`ColumnCache`] holds: half of [`CACHE_BYTES`]. A column of the
/// npm catalogue's `downloads` over 100,000 documents takes about 1 MB, a string column of
/// PyPI's names about 6 MB.
const COLUMN_BYTES: usize = CACHE_BYTES / 2;

/// How many columns [`ColumnCache`] holds at most, whatever their bytes.
const COLUMN_CACHE_SIZE: usize = 64;

/// What [`super::Index`] keeps for sorting, distinct and facets: the set of all ids of the
/// newest generation, each attribute's newest column with the generation it was built at, and
/// the internal ids each recent commit changed. A reader at an older generation builds its own
/// columns, uncached; one at a newer generation derives its columns from the older ones and the
/// documents changed since, when the changes are known (see [`ColumnCache::changed_since`]).
///
/// The columns hold at most [`COLUMN_BYTES`] (as [`Column::bytes`] counts them) and
/// [`COLUMN_CACHE_SIZE`] columns; past either, the least recently used go first.
pub(crate) struct ColumnCache {
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
pub(crate) fn worth_updating(changed: &RoaringBitmap, count: u64) -> bool {
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

    pub(crate) fn all_at(&self, generation: u64) -> Option<Arc<RoaringBitmap>> {
        (self.generation == generation).then(|| self.all.clone())?
    }

    /// The set of all ids of a generation older than `generation`, if one is held.
    pub(crate) fn older_all(&self, generation: u64) -> Option<(u64, Arc<RoaringBitmap>)> {
        let all = self.all.as_ref().filter(|_| self.generation < generation)?;
        Some((self.generation, all.clone()))
    }

    pub(crate) fn put_all(&mut self, generation: u64, all: Arc<RoaringBitmap>) {
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
    pub(crate) fn get(&mut self, generation: u64, path: &str) -> Option<Arc<Column>> {
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
    pub(crate) fn older(&self, generation: u64, path: &str) -> Option<(u64, Arc<Column>)> {
        let c = self
            .columns
            .get(path)
            .filter(|c| c.generation < generation)?;
        c.used.set(self.tick());
        Some((c.generation, c.column.clone()))
    }

    /// Keeps `column` unless a newer generation's is held, then drops the least recently used
    /// others while the columns are too many or hold more than the budget.
    pub(crate) fn put(&mut self, generation: u64, path: &str, column: Arc<Column>) {
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
    pub(crate) fn record_changes(&mut self, generation: u64, ids: &RoaringBitmap) {
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
    pub(crate) fn changed_since(&self, from: u64, to: u64) -> Option<RoaringBitmap> {
        let mut out = RoaringBitmap::new();
        for generation in from + 1..=to {
            let (_, ids) = self.changes.iter().find(|(g, _)| *g == generation)?;
            out |= ids;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

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
}
