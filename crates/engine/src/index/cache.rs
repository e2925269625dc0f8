//! What the read paths keep between requests, each entry tied to the generation (the count of
//! committed batches) it was computed at: a commit makes it stale, and a reader still at an
//! older generation computes its own rather than using or evicting a newer one.
//!
//! - [`SettingsCache`]: the typed settings, so a search parses no stored JSON;
//! - [`FilterCache`]: recent filter results (tenant tokens repeat one filter on every search);
//! - [`ColumnCache`]: value columns (sort, distinct, facets) and the set of all ids;
//! - [`SegmentColumns`]: tantivy's fast-field columns, per segment rather than generation;
//! - [`VectorTables`]: the vector graphs' tables, dropped at commit rather than left stale.

use std::collections::HashMap;
use std::sync::Arc;

use roaring::RoaringBitmap;
use tantivy::index::SegmentId;
use tantivy::SegmentReader;

use crate::facets::Column;
use crate::settings::Settings;
use crate::vectors::table::GraphTables;

/// How many filter results [`FilterCache`] keeps.
const FILTER_CACHE_SIZE: usize = 16;

/// How many columns [`ColumnCache`] holds before it starts over.
const COLUMN_CACHE_SIZE: usize = 64;

/// How many segment columns [`SegmentColumns`] holds before it starts over.
const SEGMENT_COLUMNS_SIZE: usize = 64;

/// The typed settings of one generation. Settings are written only by a batch's commit,
/// which moves the generation on, so one generation has one settings object; a reader at an
/// older generation parses its own.
#[derive(Default)]
pub(super) struct SettingsCache {
    entry: Option<(u64, Arc<Settings>)>,
}

impl SettingsCache {
    pub(super) fn get(&self, generation: u64) -> Option<Arc<Settings>> {
        let (g, settings) = self.entry.as_ref()?;
        (*g == generation).then(|| settings.clone())
    }

    /// Keeps `settings` unless a newer generation is cached.
    pub(super) fn put(&mut self, generation: u64, settings: Arc<Settings>) {
        if self.entry.as_ref().is_none_or(|(g, _)| *g <= generation) {
            self.entry = Some((generation, settings));
        }
    }
}

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

/// What [`super::Index`] keeps of one generation for sorting, distinct and facets. A newer
/// generation replaces it; a reader at an older one builds its own, uncached.
#[derive(Default)]
pub(super) struct ColumnCache {
    generation: u64,
    all: Option<Arc<RoaringBitmap>>,
    columns: HashMap<String, Arc<Column>>,
}

impl ColumnCache {
    pub(super) fn all_at(&self, generation: u64) -> Option<Arc<RoaringBitmap>> {
        (self.generation == generation).then(|| self.all.clone())?
    }

    pub(super) fn get(&self, generation: u64, path: &str) -> Option<Arc<Column>> {
        (self.generation == generation).then(|| self.columns.get(path).cloned())?
    }

    /// Moves to `generation` if it is newer; whether it is now the cached one.
    fn advance(&mut self, generation: u64) -> bool {
        if generation > self.generation {
            *self = ColumnCache {
                generation,
                ..ColumnCache::default()
            };
        }
        generation == self.generation
    }

    pub(super) fn put_all(&mut self, generation: u64, all: Arc<RoaringBitmap>) {
        if self.advance(generation) {
            self.all = Some(all);
        }
    }

    pub(super) fn put(&mut self, generation: u64, path: &str, column: Arc<Column>) {
        if self.advance(generation) {
            if self.columns.len() >= COLUMN_CACHE_SIZE {
                self.columns.clear();
            }
            self.columns.insert(path.to_string(), column);
        }
    }
}

/// Opened fast-field columns (internal ids, field lengths) by segment. A segment's columns
/// never change once written (deletions only mark documents dead), so an entry is right for
/// as long as the segment lives, across commits. Opening a column decodes its whole block
/// index: on the 886k PyPI rows that is about a millisecond per search, paid once per level
/// before this cache.
#[derive(Default)]
pub(super) struct SegmentColumns {
    entries: HashMap<(SegmentId, &'static str), tantivy::columnar::Column<u64>>,
}

impl SegmentColumns {
    pub(super) fn get(
        &self,
        reader: &SegmentReader,
        field: &'static str,
    ) -> Option<tantivy::columnar::Column<u64>> {
        self.entries.get(&(reader.segment_id(), field)).cloned()
    }

    pub(super) fn put(
        &mut self,
        reader: &SegmentReader,
        field: &'static str,
        column: tantivy::columnar::Column<u64>,
    ) {
        // Merged-away segments leave entries behind: starting over bounds them.
        if self.entries.len() >= SEGMENT_COLUMNS_SIZE {
            self.entries.clear();
        }
        self.entries.insert((reader.segment_id(), field), column);
    }
}

/// The vector graphs' tables of one generation ([`crate::vectors::table`]). Unlike the other
/// caches it is emptied when a batch commits: a table holds a read transaction, which must not
/// keep the pages of an old generation from being reused.
#[derive(Default)]
pub(super) struct VectorTables {
    entry: Option<(u64, Arc<GraphTables>)>,
}

impl VectorTables {
    pub(super) fn get(&self, generation: u64) -> Option<Arc<GraphTables>> {
        let (g, tables) = self.entry.as_ref()?;
        (*g == generation).then(|| tables.clone())
    }

    pub(super) fn put(&mut self, generation: u64, tables: Arc<GraphTables>) {
        self.entry = Some((generation, tables));
    }

    pub(super) fn clear(&mut self) {
        self.entry = None;
    }
}
