//! `_geojson` shapes for the `_geoPolygon` filter: whether a document's GeoJSON geometry
//! (Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon, GeometryCollection,
//! Feature, FeatureCollection) intersects a polygon given as `(lat, lng)` vertices.
//!
//! Geometry is planar on (longitude, latitude), which is what a polygon drawn on a map means
//! for shapes that do not cross the antimeridian. Polygon holes are ignored: a shape inside a
//! hole counts as intersecting.

use serde_json::Value;

type Pt = (f64, f64); // (x = lng, y = lat)

/// Whether `geojson` is a GeoJSON object this module reads (the `_geojson` validation).
pub fn is_valid(geojson: &Value) -> bool {
    let mut parts = Parts::default();
    collect(geojson, &mut parts)
}

/// Whether the document's shape intersects the polygon with `vertices` (`(lat, lng)` pairs).
pub fn intersects_polygon(geojson: &Value, vertices: &[(f64, f64)]) -> bool {
    let mut parts = Parts::default();
    if !collect(geojson, &mut parts) {
        return false;
    }
    let poly: Vec<Pt> = vertices.iter().map(|&(lat, lng)| (lng, lat)).collect();
    if parts.points.iter().any(|p| inside(*p, &poly)) {
        return true;
    }
    let edges = |ring: &[Pt]| -> Vec<(Pt, Pt)> {
        (0..ring.len())
            .map(|i| (ring[i], ring[(i + 1) % ring.len()]))
            .collect()
    };
    let poly_edges = edges(&poly);
    let crosses = |a: Pt, b: Pt| poly_edges.iter().any(|&(c, d)| segments_cross(a, b, c, d));
    for line in &parts.lines {
        if line.iter().any(|p| inside(*p, &poly)) || line.windows(2).any(|w| crosses(w[0], w[1])) {
            return true;
        }
    }
    for ring in &parts.rings {
        if ring.iter().any(|p| inside(*p, &poly))
            || poly.iter().any(|p| inside(*p, ring))
            || edges(ring).into_iter().any(|(a, b)| crosses(a, b))
        {
            return true;
        }
    }
    false
}

#[derive(Default)]
struct Parts {
    points: Vec<Pt>,
    lines: Vec<Vec<Pt>>,
    rings: Vec<Vec<Pt>>,
}

fn position(v: &Value) -> Option<Pt> {
    let a = v.as_array()?;
    let (x, y) = (a.first()?.as_f64()?, a.get(1)?.as_f64()?);
    (x.is_finite() && y.is_finite()).then_some((x, y))
}

fn positions(v: &Value) -> Option<Vec<Pt>> {
    v.as_array()?.iter().map(position).collect()
}

/// Adds the shape's parts; false when it is not valid GeoJSON.
fn collect(v: &Value, parts: &mut Parts) -> bool {
    let Some(kind) = v.get("type").and_then(Value::as_str) else {
        return false;
    };
    let coords = v.get("coordinates");
    let ok = |o: Option<()>| o.is_some();
    match kind {
        "Point" => ok(coords.and_then(position).map(|p| parts.points.push(p))),
        "MultiPoint" => ok(coords.and_then(positions).map(|p| parts.points.extend(p))),
        "LineString" => ok(coords
            .and_then(positions)
            .filter(|l| l.len() >= 2)
            .map(|l| parts.lines.push(l))),
        "MultiLineString" => ok(coords.and_then(Value::as_array).and_then(|ls| {
            for l in ls {
                parts.lines.push(positions(l).filter(|l| l.len() >= 2)?);
            }
            Some(())
        })),
        "Polygon" => ok(coords.and_then(|c| polygon(c, parts))),
        "MultiPolygon" => ok(coords.and_then(Value::as_array).and_then(|ps| {
            for p in ps {
                polygon(p, parts)?;
            }
            Some(())
        })),
        "GeometryCollection" => v
            .get("geometries")
            .and_then(Value::as_array)
            .is_some_and(|gs| gs.iter().all(|g| collect(g, parts))),
        "Feature" => v.get("geometry").is_some_and(|g| collect(g, parts)),
        "FeatureCollection" => v
            .get("features")
            .and_then(Value::as_array)
            .is_some_and(|fs| fs.iter().all(|f| collect(f, parts))),
        _ => false,
    }
}

/// A polygon's outer ring (closed, at least 4 positions).
fn polygon(v: &Value, parts: &mut Parts) -> Option<()> {
    let rings = v.as_array()?;
    let mut outer = positions(rings.first()?)?;
    for hole in &rings[1..] {
        positions(hole)?;
    }
    if outer.len() < 4 || outer.first() != outer.last() {
        return None;
    }
    outer.pop();
    parts.rings.push(outer);
    Some(())
}

/// Even-odd rule; points on an edge count as inside.
fn inside(p: Pt, ring: &[Pt]) -> bool {
    let n = ring.len();
    let mut result = false;
    for i in 0..n {
        let (a, b) = (ring[i], ring[(i + 1) % n]);
        if on_segment(p, a, b) {
            return true;
        }
        if (a.1 > p.1) != (b.1 > p.1) {
            let x = a.0 + (p.1 - a.1) * (b.0 - a.0) / (b.1 - a.1);
            if p.0 < x {
                result = !result;
            }
        }
    }
    result
}

fn cross(o: Pt, a: Pt, b: Pt) -> f64 {
    (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0)
}

fn on_segment(p: Pt, a: Pt, b: Pt) -> bool {
    cross(a, b, p).abs() <= 1e-12
        && p.0 >= a.0.min(b.0)
        && p.0 <= a.0.max(b.0)
        && p.1 >= a.1.min(b.1)
        && p.1 <= a.1.max(b.1)
}

fn segments_cross(a: Pt, b: Pt, c: Pt, d: Pt) -> bool {
    let (d1, d2) = (cross(c, d, a), cross(c, d, b));
    let (d3, d4) = (cross(a, b, c), cross(a, b, d));
    if ((d1 > 0.0 && d2 < 0.0) || (d1 < 0.0 && d2 > 0.0))
        && ((d3 > 0.0 && d4 < 0.0) || (d3 < 0.0 && d4 > 0.0))
    {
        return true;
    }
    on_segment(a, c, d) || on_segment(b, c, d) || on_segment(c, a, b) || on_segment(d, a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // A square from (lat 0, lng 0) to (lat 10, lng 10).
    const SQUARE: [(f64, f64); 4] = [(0.0, 0.0), (0.0, 10.0), (10.0, 10.0), (10.0, 0.0)];

    #[test]
    fn points_lines_and_polygons() {
        let yes = [
            json!({"type": "Point", "coordinates": [5, 5]}),
            json!({"type": "Point", "coordinates": [10, 5]}),
            json!({"type": "MultiPoint", "coordinates": [[50, 50], [1, 1]]}),
            json!({"type": "LineString", "coordinates": [[-5, 5], [15, 5]]}),
            json!({"type": "Polygon", "coordinates": [[[-5, -5], [20, -5], [20, 20], [-5, 20], [-5, -5]]]}),
            json!({"type": "Polygon", "coordinates": [[[9, 9], [12, 9], [12, 12], [9, 9]]]}),
            json!({"type": "Feature", "geometry": {"type": "Point", "coordinates": [2, 3]}, "properties": {}}),
            json!({"type": "FeatureCollection", "features": [
                {"type": "Feature", "geometry": {"type": "Point", "coordinates": [50, 50]}},
                {"type": "Feature", "geometry": {"type": "Point", "coordinates": [3, 2]}}]}),
        ];
        for g in yes {
            assert!(is_valid(&g), "{g}");
            assert!(intersects_polygon(&g, &SQUARE), "{g}");
        }
        let no = [
            json!({"type": "Point", "coordinates": [11, 5]}),
            json!({"type": "LineString", "coordinates": [[-5, -5], [-1, 20]]}),
            json!({"type": "Polygon", "coordinates": [[[20, 20], [30, 20], [30, 30], [20, 20]]]}),
        ];
        for g in no {
            assert!(is_valid(&g), "{g}");
            assert!(!intersects_polygon(&g, &SQUARE), "{g}");
        }
    }

    #[test]
    fn invalid_shapes_are_refused() {
        for g in [
            json!({"type": "Point"}),
            json!({"type": "Point", "coordinates": ["a", 1]}),
            json!({"type": "Circle", "coordinates": [1, 1]}),
            json!({"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [0, 0]]]}),
            json!([1, 2]),
        ] {
            assert!(!is_valid(&g), "{g}");
        }
    }
}
