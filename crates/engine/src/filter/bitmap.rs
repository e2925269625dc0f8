//! A compiled filter evaluated on value columns instead of documents: each condition reads
//! its attribute's [`ValueIndex`] (documents by value, numbers sorted), and `AND`/`OR`/`NOT`
//! become bitmap operations. Same results as [`super::eval::matches`] document by document;
//! the conditions columns can't answer (`EXISTS`, `IS NULL`, `IS EMPTY`, which look at
//! structure the columns drop, and `_geoPolygon`, which reads `_geojson` shapes) make
//! [`supported`] false and the caller scans instead.
//!
//! [`ValueIndex`]: crate::facets::ValueIndex

use std::collections::HashMap;
use std::sync::Arc;

use roaring::RoaringBitmap;

use super::eval::{numeric_range, text_in_range, Bound, Node, Test};
use crate::facets::{documents_of, Column, Item};

/// Whether every condition of `node` can be answered from columns.
pub fn supported(node: &Node) -> bool {
    match node {
        Node::And(v) | Node::Or(v) => v.iter().all(supported),
        Node::Not(n) => supported(n),
        Node::Field { test, .. } => !matches!(test, Test::Exists | Test::Null | Test::Empty),
        Node::GeoRadius { shape, .. } | Node::GeoBox { shape, .. } => shape.is_none(),
        Node::Never | Node::Docs(_) | Node::Vectors(_) => true,
        // Shapes are read from the documents.
        Node::GeoPolygon(_) => false,
    }
}

/// The documents of `universe` matching `node`; `columns` holds the column of every path the
/// filter reads (and `_geo` for geo conditions).
pub fn evaluate(
    node: &Node,
    columns: &HashMap<String, Arc<Column>>,
    universe: &RoaringBitmap,
) -> RoaringBitmap {
    match node {
        Node::And(v) => {
            let mut out: Option<RoaringBitmap> = None;
            for n in v {
                let part = evaluate(n, columns, universe);
                out = Some(match out {
                    Some(acc) => acc & part,
                    None => part,
                });
                if out.as_ref().is_some_and(RoaringBitmap::is_empty) {
                    break;
                }
            }
            out.unwrap_or_else(|| universe.clone())
        }
        Node::Or(v) => {
            let mut out = RoaringBitmap::new();
            for n in v {
                out |= evaluate(n, columns, universe);
            }
            out
        }
        Node::Not(n) => universe - evaluate(n, columns, universe),
        Node::Field { path, test } => match columns.get(path) {
            Some(column) => field(column, test) & universe,
            None => RoaringBitmap::new(),
        },
        Node::GeoRadius { .. } | Node::GeoBox { .. } => {
            geo(columns, universe, |lat, lng| node.geo_accepts(lat, lng))
        }
        Node::Docs(set) => universe & &**set,
        Node::GeoPolygon(_) | Node::Vectors(_) | Node::Never => RoaringBitmap::new(),
    }
}

fn geo(
    columns: &HashMap<String, Arc<Column>>,
    universe: &RoaringBitmap,
    keep: impl Fn(f64, f64) -> bool,
) -> RoaringBitmap {
    let Some(column) = columns.get("_geo") else {
        return RoaringBitmap::new();
    };
    universe
        .iter()
        .filter(|iid| match column.values(*iid) {
            [Item::Num(lat), Item::Num(lng), ..] => keep(*lat, *lng),
            _ => false,
        })
        .collect()
}

/// The documents whose values at the column's path pass `test`.
fn field(column: &Column, test: &Test) -> RoaringBitmap {
    let index = column.index();
    let strings_where = |pred: &dyn Fn(&str) -> bool| {
        let mut out = RoaringBitmap::new();
        for (id, entry) in column.strings.iter().enumerate() {
            if pred(&entry.normalized) {
                out |= &index.strings[id];
            }
        }
        out
    };
    match test {
        Test::Equal(needles) => {
            let mut out = RoaringBitmap::new();
            for bits in &needles.numbers {
                let n = f64::from_bits(*bits);
                let lo = index.numbers.partition_point(|(v, _)| *v < n);
                let hi = index.numbers.partition_point(|(v, _)| *v <= n);
                out |= documents_of(&index.numbers[lo..hi], column.id_count());
            }
            for text in &needles.texts {
                if let Some(id) = column.string_id(text) {
                    out |= &index.strings[id as usize];
                }
            }
            out
        }
        Test::Range { low, high } => {
            let numeric = numeric_range(low.as_ref(), high.as_ref());
            let mut out = RoaringBitmap::new();
            if numeric {
                let start = match low {
                    Some(Bound {
                        number: Some(n),
                        inclusive,
                        ..
                    }) => index
                        .numbers
                        .partition_point(|(v, _)| if *inclusive { v < n } else { v <= n }),
                    _ => 0,
                };
                let end = match high {
                    Some(Bound {
                        number: Some(n),
                        inclusive,
                        ..
                    }) => index
                        .numbers
                        .partition_point(|(v, _)| if *inclusive { v <= n } else { v < n }),
                    _ => index.numbers.len(),
                };
                if start < end {
                    out = documents_of(&index.numbers[start..end], column.id_count());
                }
            }
            out |= strings_where(&|s| text_in_range(s, low.as_ref(), high.as_ref()));
            out
        }
        Test::Contains(needle) => strings_where(&|s| s.contains(needle.as_str())),
        Test::StartsWith(needle) => strings_where(&|s| s.starts_with(needle.as_str())),
        Test::Exists | Test::Null | Test::Empty => {
            unreachable!("`supported` keeps these conditions off columns")
        }
    }
}
