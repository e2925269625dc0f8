//! Building value columns: one pass over the stored documents collects, for one attribute,
//! the scalars every document holds there.

use std::collections::{BTreeSet, HashMap};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use roaring::RoaringBitmap;
use serde_json::{Map, Value};

use super::{SortKey, ValueIndex};
use crate::value::{self, Key, Scalar};

/// One scalar of a document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Item {
    Num(f64),
    /// An id into [`Column::strings`].
    Str(u32),
}

#[derive(Debug, Clone)]
pub struct StrEntry {
    pub normalized: Box<str>,
    pub original: Box<str>,
    /// The position of `normalized` among all of the column's strings in byte order.
    pub rank: u32,
}

#[derive(Debug, Default)]
pub struct Column {
    /// `offsets[iid]..offsets[iid + 1]` are the items of document `iid`.
    offsets: Vec<u32>,
    items: Vec<Item>,
    pub strings: Vec<StrEntry>,
    /// Normalized string → its id in `strings`.
    ids: HashMap<Box<str>, u32>,
    /// The inverted view, built the first time a filter needs it.
    pub(super) index: OnceLock<ValueIndex>,
    /// The numbers as dense ids, built the first time a facet count needs them.
    pub(super) number_ids: OnceLock<super::NumberIds>,
    /// Per number id, the rank of its printed form, built the first time an alphabetical
    /// facet order needs them.
    pub(super) printed: OnceLock<Vec<u32>>,
    /// The counts over every document, built the first time a facet distribution needs them.
    pub(super) every: OnceLock<super::distribution::Tally>,
    /// The bytes of the views above built so far.
    views: AtomicUsize,
    /// The paths below the attribute that its documents' objects hold (`a`, `b`, `b.c` for
    /// `{"a": 1, "b": {"c": 2}}`), each relative to the attribute: what `facets` expands an
    /// object attribute to. A path no document holds any more stays until the column is built
    /// whole again.
    pub nested: BTreeSet<Box<str>>,
}

/// Builds a column from documents given in increasing internal-id order.
pub struct ColumnBuilder {
    path: String,
    column: Column,
    geo: Geo,
}

/// How a column reads `_geo`: as the attribute's point, one of its coordinates, or not at all.
#[derive(Clone, Copy, PartialEq)]
enum Geo {
    /// `_geo`: latitude then longitude.
    Point,
    /// `_geo.lat` (0) or `_geo.lng` (1): that coordinate, a number even when written as a string.
    Part(usize),
    No,
}

impl Geo {
    fn of(path: &str) -> Geo {
        match path {
            "_geo" => Geo::Point,
            "_geo.lat" => Geo::Part(0),
            "_geo.lng" => Geo::Part(1),
            _ => Geo::No,
        }
    }
}

impl ColumnBuilder {
    /// A builder for the attribute at dotted `path`; `_geo` gives the two coordinates
    /// (`lat`, `lng`) of each document instead, and `_geo.lat` and `_geo.lng` one of them.
    pub fn new(path: &str) -> ColumnBuilder {
        ColumnBuilder {
            path: path.to_string(),
            column: Column {
                offsets: vec![0],
                ..Column::default()
            },
            geo: Geo::of(path),
        }
    }

    /// A builder for `base`'s attribute that starts from `base`'s strings (same ids), so its
    /// documents can be copied over by [`ColumnBuilder::copy`].
    pub fn from_column(path: &str, base: &Column) -> ColumnBuilder {
        ColumnBuilder {
            path: path.to_string(),
            column: Column {
                offsets: vec![0],
                items: Vec::with_capacity(base.items.len()),
                strings: base.strings.clone(),
                ids: base.ids.clone(),
                nested: base.nested.clone(),
                ..Column::default()
            },
            geo: Geo::of(path),
        }
    }

    /// `base` (the column of `path`) with the values of the documents `ids` instead of those
    /// it holds: `changed` gives each of them, by increasing internal id, with its document
    /// (`None` for a deleted one).
    pub fn updated(
        path: &str,
        base: &Column,
        ids: &RoaringBitmap,
        changed: &[(u32, Option<Map<String, Value>>)],
    ) -> Column {
        let mut b = ColumnBuilder::from_column(path, base);
        let mut next = 0;
        for (iid, doc) in changed {
            b.copy(base, next..*iid);
            match doc {
                Some(doc) => b.push(*iid, doc),
                None => b.push_none(*iid),
            }
            next = iid + 1;
        }
        b.copy(base, next..u32::MAX);
        let column = b.finish();
        // An index the base had built is updated rather than built again.
        if let Some(index) = base.index.get() {
            let index = index.updated(base, &column, ids);
            column.viewed(index.bytes());
            let _ = column.index.set(index);
        }
        column
    }

    /// Covers every id below `iid` (those not pushed hold nothing).
    fn reach(&mut self, iid: u32) {
        let col = &mut self.column;
        while (col.offsets.len() as u64) <= iid as u64 {
            let end = *col.offsets.last().unwrap();
            col.offsets.push(end);
        }
    }

    /// Copies the values `base` (the column this builder started from) holds for the
    /// documents `ids`, given in increasing order after those already pushed.
    pub fn copy(&mut self, base: &Column, ids: std::ops::Range<u32>) {
        let end = (ids.end as usize).min(base.id_count());
        let start = ids.start as usize;
        if start >= end {
            return;
        }
        self.reach(ids.start);
        let col = &mut self.column;
        let from = base.offsets[start] as usize;
        let shift = col.items.len() as i64 - from as i64;
        col.items
            .extend_from_slice(&base.items[from..base.offsets[end] as usize]);
        col.offsets.extend(
            base.offsets[start + 1..=end]
                .iter()
                .map(|o| (*o as i64 + shift) as u32),
        );
    }

    /// Document `iid` holds nothing (a deleted document).
    pub fn push_none(&mut self, iid: u32) {
        self.reach(iid);
        let end = *self.column.offsets.last().unwrap();
        self.column.offsets.push(end);
    }

    pub fn push(&mut self, iid: u32, doc: &Map<String, Value>) {
        self.reach(iid);
        match self.geo {
            Geo::Point | Geo::Part(_) => {
                if let Some((lat, lng)) = value::geo::geo_of(doc) {
                    match self.geo {
                        Geo::Part(0) => self.column.items.push(Item::Num(lat)),
                        Geo::Part(_) => self.column.items.push(Item::Num(lng)),
                        _ => self.column.items.extend([Item::Num(lat), Item::Num(lng)]),
                    }
                }
            }
            Geo::No => {
                let found = value::values_at(doc, &self.path);
                for v in &found {
                    nested_paths(v, "", &mut self.column.nested);
                }
                let _ = value::each_scalar::<()>(&found, |s| {
                    let item = match s {
                        Scalar::Num(n) => Item::Num(n),
                        Scalar::Str(s) => self.string_id(s),
                    };
                    self.column.items.push(item);
                    ControlFlow::Continue(())
                });
            }
        }
        self.column.offsets.push(self.column.items.len() as u32);
    }

    fn string_id(&mut self, s: &str) -> Item {
        let normalized = value::normalize(s);
        if let Some(id) = self.column.ids.get(normalized.as_ref()) {
            return Item::Str(*id);
        }
        let id = self.column.strings.len() as u32;
        let normalized: Box<str> = normalized.into();
        self.column.ids.insert(normalized.clone(), id);
        self.column.strings.push(StrEntry {
            normalized,
            original: s.into(),
            rank: 0,
        });
        Item::Str(id)
    }

    pub fn finish(mut self) -> Column {
        let mut order: Vec<u32> = (0..self.column.strings.len() as u32).collect();
        order.sort_unstable_by(|a, b| {
            self.column.strings[*a as usize]
                .normalized
                .cmp(&self.column.strings[*b as usize].normalized)
        });
        for (rank, id) in order.into_iter().enumerate() {
            self.column.strings[id as usize].rank = rank as u32;
        }
        self.column
    }
}

/// Adds the paths (below `prefix`) that the objects in `v` hold to `out`: the value's own
/// keys, those of objects within (in arrays too), dotted.
fn nested_paths(v: &Value, prefix: &str, out: &mut BTreeSet<Box<str>>) {
    match v {
        Value::Object(map) => {
            for (key, inner) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                nested_paths(inner, &path, out);
                if !out.contains(path.as_str()) {
                    out.insert(path.into());
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| nested_paths(i, prefix, out)),
        _ => {}
    }
}

impl Column {
    /// Counts `bytes` more for a view just built.
    pub(super) fn viewed(&self, bytes: usize) {
        self.views.fetch_add(bytes, Ordering::Relaxed);
    }

    /// The scalars of document `iid` (none when it has no value there).
    pub fn values(&self, iid: u32) -> &[Item] {
        let i = iid as usize;
        if i + 1 >= self.offsets.len() {
            return &[];
        }
        &self.items[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// How many internal ids the column covers (one past the highest document pushed).
    pub fn id_count(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// The normal form of document `iid`'s string whose rank is `rank` (a string sort key).
    pub fn string_with_rank(&self, iid: u32, rank: u32) -> Option<&str> {
        self.values(iid).iter().find_map(|i| match *i {
            Item::Str(id) if self.strings[id as usize].rank == rank => {
                Some(&*self.strings[id as usize].normalized)
            }
            _ => None,
        })
    }

    /// Document `iid`'s point (a `_geo` column holds latitude then longitude).
    pub fn point(&self, iid: u32) -> Option<(f64, f64)> {
        match self.values(iid) {
            [Item::Num(lat), Item::Num(lng), ..] => Some((*lat, *lng)),
            _ => None,
        }
    }

    /// The id of a normalized string, if some document holds it.
    pub fn string_id(&self, normalized: &str) -> Option<u32> {
        self.ids.get(normalized).copied()
    }

    /// Approximate heap size, for the cache's budget.
    /// The bytes the column holds, with the views of it built so far (so the figure grows
    /// as they are built).
    pub fn bytes(&self) -> usize {
        self.views.load(Ordering::Relaxed)
            + self.nested.iter().map(|p| p.len() + 16).sum::<usize>()
            + self.offsets.len() * 4
            + self.items.len() * std::mem::size_of::<Item>()
            + self
                .strings
                .iter()
                .map(|s| s.normalized.len() + s.original.len() + 40)
                .sum::<usize>()
    }

    /// The document's sort key: its best value for the direction (numbers before strings).
    pub fn sort_key(&self, iid: u32, asc: bool) -> SortKey {
        let keys = self.values(iid).iter().map(|item| match *item {
            Item::Num(n) => Key::Num(n),
            Item::Str(id) => Key::Str(self.strings[id as usize].rank),
        });
        value::best(keys, asc)
    }
}

#[cfg(test)]
pub(crate) fn column(path: &str, docs: &[Value]) -> Column {
    let mut b = ColumnBuilder::new(path);
    for (i, d) in docs.iter().enumerate() {
        b.push(i as u32, d.as_object().unwrap());
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sort_keys_order_numbers_strings_missing() {
        let docs = [
            json!({"v": "b"}),
            json!({"v": [3, 1]}),
            json!({}),
            json!({"v": "A"}),
        ];
        let c = column("v", &docs);
        let mut ids: Vec<u32> = (0..4).collect();
        let cmp = value::compare::<u32>;
        ids.sort_by(|a, b| cmp(&c.sort_key(*a, true), &c.sort_key(*b, true), true));
        assert_eq!(ids, [1, 3, 0, 2]);
        ids.sort_by(|a, b| cmp(&c.sort_key(*a, false), &c.sort_key(*b, false), false));
        assert_eq!(ids, [1, 0, 3, 2]);
        assert_eq!(c.sort_key(1, true), SortKey::Num(1.0));
        assert_eq!(c.sort_key(1, false), SortKey::Num(3.0));
    }

    #[test]
    fn items_keep_document_order_and_group_spellings() {
        let docs = [json!({"v": ["B", 2, ["b", true]]}), json!({"v": null})];
        let c = column("v", &docs);
        let b = c.string_id("b").unwrap();
        let t = c.string_id("true").unwrap();
        assert_eq!(
            c.values(0),
            [Item::Str(b), Item::Num(2.0), Item::Str(b), Item::Str(t)]
        );
        assert_eq!(&*c.strings[b as usize].original, "B");
        assert!(c.values(1).is_empty() && c.values(7).is_empty());
        assert_eq!(c.id_count(), 2);
    }
}
