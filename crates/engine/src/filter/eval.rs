//! Whether one document matches a filter, read from its JSON.
//!
//! Semantics (Meilisearch's, see the filters section of the search reference):
//! - A filter value is tried both as a number (when it parses as a finite float) against
//!   JSON numbers and as a normalized string (trimmed, NFKD, lowercased) against strings and the
//!   booleans `"true"`/`"false"`. Strings that look like numbers stay strings.
//! - Ranges compare numbers numerically (when every bound is a number) and strings
//!   lexicographically (normalized).
//! - A dotted attribute `a.b` reaches `{"a":{"b":..}}`, `{"a.b":..}` and objects inside
//!   arrays; arrays match when any element does.
//! - `!=`, `NOT IN` and `NOT` are complements, so documents without the attribute pass them.
//! - `EXISTS`: the path is present with any value. `IS NULL`: `null` at the path itself (not
//!   inside an array). `IS EMPTY`: `""`, `[]` or `{}` at the path itself.
//!
//! The expression is compiled once per request ([`Node`]): filter values are normalized and
//! `IN` lists hashed up front, so a document costs one lookup per condition however long the
//! list is.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::ops::ControlFlow;

use serde_json::{Map, Value};

use super::{Expr, Op, Token};
use crate::value::geo::{geo_of, haversine_m};
use crate::value::{each_scalar, Scalar};
/// The normalization and path helpers filters share with the rest of the engine, also
/// reachable here where they used to live.
pub use crate::value::{normalize, values_at, within};

/// A compiled filter, ready to test documents.
#[derive(Debug, Clone)]
pub enum Node {
    And(Vec<Node>),
    Or(Vec<Node>),
    Not(Box<Node>),
    Field {
        path: String,
        test: Test,
    },
    /// `_geoRadius`: a document's `_geo` point within `radius` meters (when `points`), or its
    /// `_geojson` shape intersecting the circle drawn with `resolution` vertices (when `shape`
    /// holds them: `_geojson` is filterable; see [`Node::bind_geo`]).
    GeoRadius {
        lat: f64,
        lng: f64,
        radius: f64,
        resolution: usize,
        points: bool,
        shape: Option<Vec<(f64, f64)>>,
    },
    /// `_geoBoundingBox`, read from the same fields as `_geoRadius`.
    GeoBox {
        top: f64,
        right: f64,
        bottom: f64,
        left: f64,
        points: bool,
        shape: Option<Vec<(f64, f64)>>,
    },
    /// `_geoPolygon`: the document's `_geojson` shape intersects these `(lat, lng)` vertices.
    GeoPolygon(Vec<(f64, f64)>),
    /// A `_vectors` condition (its field), until the index resolves it into [`Node::Docs`].
    Vectors(String),
    /// The documents (internal ids) a resolved `_vectors` condition selects.
    Docs(std::sync::Arc<roaring::RoaringBitmap>),
    Never,
}

/// What a condition asks of the values at its path.
#[derive(Debug, Clone)]
pub enum Test {
    Exists,
    Null,
    Empty,
    Equal(Needles),
    Range {
        low: Option<Bound>,
        high: Option<Bound>,
    },
    Contains(String),
    StartsWith(String),
}

/// Values an equality accepts: numbers by their bits, strings normalized.
#[derive(Debug, Clone, Default)]
pub struct Needles {
    pub(super) numbers: HashSet<u64>,
    pub(super) texts: HashSet<String>,
}

/// One end of a range: the bound as a number (when it is one) and as a normalized string.
#[derive(Debug, Clone)]
pub struct Bound {
    pub(super) number: Option<f64>,
    pub(super) text: String,
    pub(super) inclusive: bool,
}

fn num(t: &Token) -> Option<f64> {
    t.value.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// `-0.0` and `0.0` are one number.
fn number_key(n: f64) -> u64 {
    if n == 0.0 {
        0
    } else {
        n.to_bits()
    }
}

impl Needles {
    fn add(&mut self, t: &Token) {
        if let Some(n) = num(t) {
            self.numbers.insert(number_key(n));
        }
        self.texts.insert(normalize(&t.value).into_owned());
    }

    fn accepts(&self, v: Scalar) -> bool {
        match v {
            Scalar::Num(n) => self.numbers.contains(&number_key(n)),
            Scalar::Str(s) => self.texts.contains(normalize(s).as_ref()),
        }
    }
}

fn bound(t: &Token, inclusive: bool) -> Bound {
    Bound {
        number: num(t),
        text: normalize(&t.value).into_owned(),
        inclusive,
    }
}

/// Compiles a parsed expression.
pub fn compile(expr: &Expr) -> Node {
    match expr {
        Expr::And(v) => Node::And(v.iter().map(compile).collect()),
        Expr::Or(v) => Node::Or(v.iter().map(compile).collect()),
        Expr::Not(e) => Node::Not(Box::new(compile(e))),
        Expr::In { field, values } => {
            let mut needles = Needles::default();
            values.iter().for_each(|t| needles.add(t));
            field_node(field, Test::Equal(needles))
        }
        Expr::Cond { field, op } if super::vectors::is_vector_condition(&field.value, op) => {
            Node::Vectors(field.value.clone())
        }
        Expr::Cond { field, op } => {
            let equal = |t: &Token| {
                let mut needles = Needles::default();
                needles.add(t);
                Test::Equal(needles)
            };
            let range = |low: Option<Bound>, high: Option<Bound>| Test::Range { low, high };
            let test = match op {
                Op::Exists => Test::Exists,
                Op::Null => Test::Null,
                Op::Empty => Test::Empty,
                Op::Eq(t) => equal(t),
                Op::Ne(t) => return Node::Not(Box::new(field_node(field, equal(t)))),
                Op::Gt(t) => range(Some(bound(t, false)), None),
                Op::Ge(t) => range(Some(bound(t, true)), None),
                Op::Lt(t) => range(None, Some(bound(t, false))),
                Op::Le(t) => range(None, Some(bound(t, true))),
                Op::Between(a, b) => range(Some(bound(a, true)), Some(bound(b, true))),
                Op::Contains(t, _) => Test::Contains(normalize(&t.value).into_owned()),
                Op::StartsWith(t) => Test::StartsWith(normalize(&t.value).into_owned()),
            };
            field_node(field, test)
        }
        Expr::GeoRadius {
            lat,
            lng,
            radius,
            resolution,
        } => match (num(lat), num(lng), num(radius)) {
            (Some(lat), Some(lng), Some(radius)) => Node::GeoRadius {
                lat,
                lng,
                radius,
                resolution: resolution
                    .as_ref()
                    .and_then(num)
                    .map_or(DEFAULT_RESOLUTION, |r| r as usize),
                points: true,
                shape: None,
            },
            _ => Node::Never,
        },
        Expr::GeoBoundingBox {
            top_right,
            bottom_left,
        } => {
            let nums = [
                &top_right[0],
                &top_right[1],
                &bottom_left[0],
                &bottom_left[1],
            ]
            .map(num);
            match nums {
                [Some(top), Some(right), Some(bottom), Some(left)] => Node::GeoBox {
                    top,
                    right,
                    bottom,
                    left,
                    points: true,
                    shape: None,
                },
                _ => Node::Never,
            }
        }
        Expr::GeoPolygon { points } => {
            let vertices: Option<Vec<(f64, f64)>> = points
                .iter()
                .map(|p| Some((num(&p[0])?, num(&p[1])?)))
                .collect();
            vertices.map_or(Node::Never, Node::GeoPolygon)
        }
        // Resolved into `IN` lists before a filter is evaluated (`Filter::resolve_foreign`);
        // one left is refused by `parse_request`, so this never answers a request.
        Expr::Foreign { .. } => Node::Never,
    }
}

fn field_node(field: &Token, test: Test) -> Node {
    Node::Field {
        path: field.value.clone(),
        test,
    }
}

/// How many vertices draw a `_geoRadius` circle against `_geojson` shapes when the filter
/// does not say (Meilisearch's default).
const DEFAULT_RESOLUTION: usize = 125;

impl Node {
    /// Replaces each [`Node::Vectors`] by the documents `resolved` holds for its field.
    pub fn resolve_vectors(
        &mut self,
        resolved: &std::collections::HashMap<String, std::sync::Arc<roaring::RoaringBitmap>>,
    ) {
        match self {
            Node::And(v) | Node::Or(v) => v.iter_mut().for_each(|n| n.resolve_vectors(resolved)),
            Node::Not(n) => n.resolve_vectors(resolved),
            Node::Vectors(field) => {
                if let Some(set) = resolved.get(field.as_str()) {
                    *self = Node::Docs(set.clone());
                }
            }
            _ => {}
        }
    }

    /// Settles which fields the geo conditions read: `_geo` points when `points` (`_geo` is
    /// filterable), `_geojson` shapes when `shapes` (`_geojson` is); both when both are.
    pub fn bind_geo(&mut self, points: bool, shapes: bool) {
        match self {
            Node::And(v) | Node::Or(v) => v.iter_mut().for_each(|n| n.bind_geo(points, shapes)),
            Node::Not(n) => n.bind_geo(points, shapes),
            Node::GeoRadius {
                lat,
                lng,
                radius,
                resolution,
                points: p,
                shape,
            } => {
                *p = points;
                *shape = shapes.then(|| circle(*lat, *lng, *radius, *resolution));
            }
            Node::GeoBox {
                top,
                right,
                bottom,
                left,
                points: p,
                shape,
            } => {
                *p = points;
                let (t, r, b, l) = (*top, *right, *bottom, *left);
                *shape = shapes.then(|| vec![(t, l), (t, r), (b, r), (b, l)]);
            }
            _ => {}
        }
    }

    /// Whether a geo node reads `_geojson` shapes (then columns cannot answer it).
    pub fn reads_shapes(&self) -> bool {
        match self {
            Node::And(v) | Node::Or(v) => v.iter().any(Node::reads_shapes),
            Node::Not(n) => n.reads_shapes(),
            Node::GeoRadius { shape, .. } | Node::GeoBox { shape, .. } => shape.is_some(),
            Node::GeoPolygon(_) => true,
            _ => false,
        }
    }

    /// Whether a point passes a `_geoRadius` or `_geoBoundingBox` node (false for others). A
    /// box whose right edge is west of its left edge crosses the antimeridian.
    pub fn geo_accepts(&self, lat: f64, lng: f64) -> bool {
        match self {
            Node::GeoRadius {
                lat: clat,
                lng: clng,
                radius,
                ..
            } => haversine_m(*clat, *clng, lat, lng) <= radius + f64::EPSILON,
            Node::GeoBox {
                top,
                right,
                bottom,
                left,
                ..
            } => {
                let lng_ok = if right < left {
                    lng >= *left || lng <= *right
                } else {
                    *left <= lng && lng <= *right
                };
                *bottom <= lat && lat <= *top && lng_ok
            }
            _ => false,
        }
    }
}

/// The `(lat, lng)` vertices of a circle of `radius` meters around a point, `n` of them.
fn circle(lat: f64, lng: f64, radius: f64, n: usize) -> Vec<(f64, f64)> {
    let n = n.max(3);
    let d = radius / crate::value::geo::EARTH_RADIUS_M;
    let (phi, lambda) = (lat.to_radians(), lng.to_radians());
    (0..n)
        .map(|i| {
            let bearing = std::f64::consts::TAU * i as f64 / n as f64;
            let phi2 = (phi.sin() * d.cos() + phi.cos() * d.sin() * bearing.cos()).asin();
            let lambda2 = lambda
                + (bearing.sin() * d.sin() * phi.cos()).atan2(d.cos() - phi.sin() * phi2.sin());
            (phi2.to_degrees(), lambda2.to_degrees())
        })
        .collect()
}

/// See the module doc.
pub fn matches(node: &Node, doc: &Map<String, Value>, iid: Option<u32>) -> bool {
    match node {
        Node::And(v) => v.iter().all(|n| matches(n, doc, iid)),
        Node::Or(v) => v.iter().any(|n| matches(n, doc, iid)),
        Node::Not(n) => !matches(n, doc, iid),
        Node::Docs(set) => iid.is_some_and(|i| set.contains(i)),
        // Unresolved: only where the index is not read (a deletion refuses these at enqueue).
        Node::Vectors(_) => false,
        Node::Field { path, test } => passes(&values_at(doc, path), test),
        Node::GeoRadius { points, shape, .. } | Node::GeoBox { points, shape, .. } => {
            (*points && geo_of(doc).is_some_and(|(lat, lng)| node.geo_accepts(lat, lng)))
                || shape.as_ref().is_some_and(|vertices| {
                    doc.get("_geojson")
                        .is_some_and(|g| crate::geojson::intersects_polygon(g, vertices))
                })
        }
        Node::GeoPolygon(vertices) => doc
            .get("_geojson")
            .is_some_and(|g| crate::geojson::intersects_polygon(g, vertices)),
        Node::Never => false,
    }
}

fn passes(found: &[&Value], test: &Test) -> bool {
    match test {
        Test::Exists => !found.is_empty(),
        Test::Null => found.iter().any(|v| v.is_null()),
        Test::Empty => found.iter().any(|v| match v {
            Value::String(s) => s.is_empty(),
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
            _ => false,
        }),
        Test::Equal(needles) => any_leaf(found, |v| needles.accepts(v)),
        Test::Range { low, high } => in_range(found, low.as_ref(), high.as_ref()),
        Test::Contains(needle) => any_text(found, |s| s.contains(needle.as_str())),
        Test::StartsWith(needle) => any_text(found, |s| s.starts_with(needle.as_str())),
    }
}

fn any_text(found: &[&Value], pred: impl Fn(&str) -> bool) -> bool {
    any_leaf(found, |v| match v {
        Scalar::Str(s) => pred(&normalize(s)),
        Scalar::Num(_) => false,
    })
}

/// Numbers compare numerically when every given bound is a number; strings always compare
/// lexicographically with the normalized bounds.
fn in_range(found: &[&Value], low: Option<&Bound>, high: Option<&Bound>) -> bool {
    let numeric = numeric_range(low, high);
    any_leaf(found, |v| match v {
        Scalar::Num(x) => {
            let cmp = |b: &Bound| x.partial_cmp(&b.number.unwrap_or(f64::NAN));
            numeric
                && low.is_none_or(|b| cmp(b).is_some_and(|o| b.passes_low(o)))
                && high.is_none_or(|b| cmp(b).is_some_and(|o| b.passes_high(o)))
        }
        Scalar::Str(s) => text_in_range(&normalize(s), low, high),
    })
}

/// Whether a range compares numbers: every given bound is one.
pub(super) fn numeric_range(low: Option<&Bound>, high: Option<&Bound>) -> bool {
    low.is_none_or(|b| b.number.is_some()) && high.is_none_or(|b| b.number.is_some())
}

/// Whether the normalized string `s` lies between the bounds' strings.
pub(super) fn text_in_range(s: &str, low: Option<&Bound>, high: Option<&Bound>) -> bool {
    low.is_none_or(|b| b.passes_low(s.cmp(b.text.as_str())))
        && high.is_none_or(|b| b.passes_high(s.cmp(b.text.as_str())))
}

impl Bound {
    /// Whether a value that compares `ord` to this bound passes it as the low end.
    fn passes_low(&self, ord: Ordering) -> bool {
        ord.is_gt() || (self.inclusive && ord.is_eq())
    }

    /// Whether a value that compares `ord` to this bound passes it as the high end.
    fn passes_high(&self, ord: Ordering) -> bool {
        ord.is_lt() || (self.inclusive && ord.is_eq())
    }
}

/// Whether `pred` holds for a scalar of `found`, arrays flattened.
fn any_leaf<'a>(found: &[&'a Value], mut pred: impl FnMut(Scalar<'a>) -> bool) -> bool {
    each_scalar(found, |v| {
        if pred(v) {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .is_break()
}
