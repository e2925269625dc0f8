//! Evaluation document by document: Meilisearch's semantics, geo radius and bounding box
//! on `_geo` points and `_geojson` shapes.

use serde_json::{json, Value};

use super::{check, doc, parse, settings};

#[test]
fn test_evaluation_semantics() {
    let docs = [
        json!({"id": 0, "n": 10, "s": "Hello", "tags": ["a", "B"], "o": {"x": 1}}),
        json!({"id": 1, "n": "10", "s": "hello ", "tags": [], "o": {}}),
        json!({"id": 2, "n": 10.5, "s": null, "tags": [null], "o.x": 2}),
        json!({"id": 3, "b": true, "s": "", "o": [{"x": 3}, {"y": 4}]}),
        json!({"id": 4, "n": "expensive", "deep": [[1, 2], [3]]}),
    ];
    // A number matches JSON numbers and the exact string; "10.0" is not "10".
    assert_eq!(check("n = 10", &docs), vec![0, 1]);
    assert_eq!(check("n = '10'", &docs), vec![0, 1]);
    assert_eq!(check("n != 10", &docs), vec![2, 3, 4]);
    assert_eq!(check("n > 10", &docs), vec![2, 4]);
    assert_eq!(check("n >= 10", &docs), vec![0, 1, 2, 4]);
    assert_eq!(check("n < 10.5", &docs), vec![0, 1]);
    assert_eq!(check("n 10 TO 10.5", &docs), vec![0, 1, 2]);
    assert_eq!(check("s = hello", &docs), vec![0, 1]);
    assert_eq!(check("s = HELLO", &docs), vec![0, 1]);
    assert_eq!(check("tags = b", &docs), vec![0]);
    assert_eq!(check("tags IN [a, z]", &docs), vec![0]);
    assert_eq!(check("tags NOT IN [a]", &docs), vec![1, 2, 3, 4]);
    assert_eq!(check("b = true", &docs), vec![3]);
    assert_eq!(check("o.x = 1", &docs), vec![0]);
    assert_eq!(check("o.x = 2", &docs), vec![2]);
    assert_eq!(check("o.x = 3", &docs), vec![3]);
    assert_eq!(check("o.x EXISTS", &docs), vec![0, 2, 3]);
    assert_eq!(check("o EXISTS", &docs), vec![0, 1, 3]);
    assert_eq!(check("o NOT EXISTS", &docs), vec![2, 4]);
    assert_eq!(check("o = 1", &docs), Vec::<usize>::new());
    assert_eq!(check("s IS NULL", &docs), vec![2]);
    assert_eq!(check("tags IS NULL", &docs), Vec::<usize>::new());
    assert_eq!(check("s IS NOT NULL", &docs), vec![0, 1, 3, 4]);
    assert_eq!(check("s IS EMPTY", &docs), vec![3]);
    assert_eq!(check("tags IS EMPTY OR o IS EMPTY", &docs), vec![1]);
    assert_eq!(check("deep = 3", &docs), vec![4]);
    assert_eq!(check("NOT s = hello", &docs), vec![2, 3, 4]);
    assert_eq!(check("s CONTAINS ell", &docs), vec![0, 1]);
    assert_eq!(check("s STARTS WITH he", &docs), vec![0, 1]);
    assert_eq!(
        check("(n = 10 OR b = true) AND NOT id = 0", &docs),
        vec![1, 3]
    );
    // Strings compare lexicographically with a numeric bound: "expensive" > "5".
    assert_eq!(check("n > 5", &docs), vec![0, 2, 4]);
}

#[test]
fn test_geo_radius_and_bounding_box() {
    let at = |lat: f64, lng: f64| doc(json!({"_geo": {"lat": lat, "lng": lng}}));
    // Across the antimeridian: 179.9 and -179.9 are ~22 km apart at the equator.
    let f = parse("_geoRadius(0, 179.9, 30000)");
    assert!(f.matches(&at(0.0, -179.9)));
    assert!(!f.matches(&at(0.0, 179.0 - 0.5)));
    // Near the pole every longitude is close.
    let f = parse("_geoRadius(89.99, 0, 5000)");
    assert!(f.matches(&at(89.99, 180.0)));
    assert!(!f.matches(&doc(json!({"id": 1}))));
    let f = parse("_geoBoundingBox([10, -170], [-10, 170])");
    assert!(f.matches(&at(0.0, 175.0)));
    assert!(f.matches(&at(0.0, -175.0)));
    assert!(!f.matches(&at(0.0, 0.0)));
    let f = parse("_geoBoundingBox([10, 10], [-10, -10])");
    assert!(f.matches(&at(0.0, 0.0)));
    assert!(!f.matches(&at(20.0, 0.0)));
    let strings = doc(json!({"_geo": {"lat": "1.0", "lng": "1.0"}}));
    assert!(f.matches(&strings));
}

#[test]
fn geo_radius_and_box_read_geojson_shapes_when_geojson_is_filterable() {
    let bound = |s: &str, filterable: Value| {
        let mut f = parse(s);
        let settings = settings(filterable);
        f.validate(&settings).unwrap();
        f.bind_geo(&settings);
        f
    };
    let point = doc(json!({"_geojson": {"type": "Point", "coordinates": [2.35, 48.85]}}));
    let polygon = doc(
        json!({"_geojson": {"type": "Polygon", "coordinates": [[[2.0, 48.0], [3.0, 48.0], [3.0, 49.0], [2.0, 49.0], [2.0, 48.0]]]}}),
    );
    let far = doc(json!({"_geojson": {"type": "Point", "coordinates": [100.0, 10.0]}}));
    let geo_far_shape_near = doc(
        json!({"_geo": {"lat": 45.0, "lng": 5.0}, "_geojson": {"type": "Point", "coordinates": [2.36, 48.84]}}),
    );
    let geo_near = doc(json!({"_geo": {"lat": 48.86, "lng": 2.34}}));
    // Only `_geojson`: shapes, never `_geo` points.
    let f = bound("_geoRadius(48.85, 2.35, 5000)", json!(["_geojson"]));
    assert!(f.matches(&point) && f.matches(&polygon) && f.matches(&geo_far_shape_near));
    assert!(!f.matches(&far) && !f.matches(&geo_near));
    assert!(!f.columns_can_answer());
    // A circle of 10 m inside the polygon still meets it.
    assert!(bound("_geoRadius(48.5, 2.5, 10)", json!(["_geojson"])).matches(&polygon));
    // Both: either field.
    let f = bound(
        "_geoBoundingBox([48.9, 2.4], [48.8, 2.3])",
        json!(["_geo", "_geojson"]),
    );
    assert!(f.matches(&point) && f.matches(&geo_near) && f.matches(&geo_far_shape_near));
    assert!(!f.matches(&far));
    let f = bound(
        "NOT _geoRadius(48.85, 2.35, 5000)",
        json!(["_geo", "_geojson"]),
    );
    assert!(f.matches(&far) && !f.matches(&point) && !f.matches(&geo_near));
    // Only `_geo`: points, as before, from the columns.
    let f = bound("_geoRadius(48.85, 2.35, 5000)", json!(["_geo"]));
    assert!(f.matches(&geo_near) && !f.matches(&point) && !f.matches(&geo_far_shape_near));
    assert!(f.columns_can_answer());
}
