//! The vector graphs' tables: one build at a time, on a thread of its own, none kept past a
//! commit.

use std::sync::Arc;

use super::Generational;
use crate::vectors::table::GraphTables;

/// The vector graphs' tables ([`crate::vectors::table`]), built off the request path, one
/// build at a time. Unlike the other caches it is emptied when a batch commits: a table holds
/// a read transaction, which must not keep the pages of an old generation from being reused.
#[derive(Default)]
pub(crate) struct VectorTables {
    /// The last build that ended at the current generation; None inside when it failed (that
    /// generation's searches then use hannoy's reader).
    built: Generational<Option<GraphTables>>,
    /// Whether a build is running, whatever its generation.
    building: bool,
    /// The generation of the last commit: a build of an older one is dropped when it ends.
    floor: u64,
}

/// What [`VectorTables::lookup`] found.
pub(crate) enum TableLookup {
    Ready(Arc<Option<GraphTables>>),
    /// The caller is to build the table of the generation it asked for, then call
    /// [`VectorTables::finish`].
    Build,
    /// Another build is running: use hannoy's reader meanwhile.
    Busy,
}

impl VectorTables {
    pub(crate) fn lookup(&mut self, generation: u64) -> TableLookup {
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
    pub(crate) fn finish(&mut self, generation: u64, tables: Option<GraphTables>) {
        self.building = false;
        if generation >= self.floor {
            self.built.put(generation, Arc::new(tables));
        }
    }

    /// Drops the table (and its read transaction) of the generations before `generation`.
    pub(crate) fn commit(&mut self, generation: u64) {
        self.floor = generation;
        self.built.clear();
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
}
