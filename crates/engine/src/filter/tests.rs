//! Filters as the engine reads them: the array form, validation against rules, and evaluation
//! on small documents. The grammar's own tests (syntax errors and their positions) are in
//! `crates/filter-parser`.

use serde_json::{json, Map, Value};

use super::Filter;
use crate::settings::Settings;

fn parse(s: &str) -> Filter {
    Filter::from_json(&json!(s)).unwrap().unwrap()
}

fn err(s: &str) -> String {
    Filter::from_json(&json!(s)).unwrap_err()
}

#[test]
fn test_every_operator_parses() {
    for f in [
        "a = 1",
        "a != 'x y'",
        "a > 1",
        "a >= 1",
        "a < 1",
        "a <= -1.5",
        "a 1 TO 10",
        "a IN [1, 'two', \"three\",]",
        "a IN []",
        "a NOT IN [1]",
        "a EXISTS",
        "a NOT EXISTS",
        "a IS NULL",
        "a IS NOT NULL",
        "a IS EMPTY",
        "a IS NOT EMPTY",
        "a CONTAINS b",
        "a NOT CONTAINS b",
        "a STARTS WITH b",
        "a NOT STARTS WITH b",
        "NOT a = 1",
        "NOT NOT a = 1",
        "(a = 1 OR b = 2) AND c = 3",
        "_geoRadius(45.4, 9.1, 2000)",
        "_geoRadius(45.4, 9.1, 2000, 10)",
        "_geoBoundingBox([1, 2], [-1.5, -2])",
        "_geoPolygon([1,2],[3,4],[5,6],)",
        "'AND' = \"OR\"",
        "  a = 1  ",
    ] {
        assert!(
            Filter::from_json(&json!(f)).is_ok(),
            "{f}: {:?}",
            Filter::from_json(&json!(f))
        );
    }
    assert!(Filter::from_json(&json!("   ")).unwrap().is_none());
    assert!(Filter::from_json(&json!([])).unwrap().is_none());
    assert!(Filter::from_json(&Value::Null).unwrap().is_none());
}

#[test]
fn test_contains_needs_its_feature() {
    let f = parse("doggo != echo AND doggo CONTAINS kefir");
    assert_eq!(
        f.check_contains(false).unwrap_err(),
        "Using `CONTAINS` in a filter requires enabling the `contains filter` experimental feature. See https://github.com/orgs/meilisearch/discussions/763\n25:33 doggo != echo AND doggo CONTAINS kefir"
    );
    assert!(f.check_contains(true).is_ok());
    assert!(parse("a STARTS WITH b").check_contains(false).is_ok());
}

#[test]
fn test_deep_nesting_is_an_error_not_a_crash() {
    let parens = format!("{}x = 1{}", "(".repeat(50), ")".repeat(50));
    let e = err(&parens);
    assert!(
        e.starts_with("The filter exceeded the maximum depth limit."),
        "{e}"
    );
    assert!(e.contains("\n38:106 "), "{e}");
    let nots = format!("{}x = 1", "NOT ".repeat(200));
    let e = err(&nots);
    assert!(e.contains("\n597:806 "), "{e}");
    // Far deeper than the limit: still a clean error.
    let deep = format!("{}x = 1{}", "(".repeat(100_000), ")".repeat(100_000));
    assert!(err(&deep).starts_with("The filter exceeded the maximum depth limit."));
    // A huge IN list is flat, not deep.
    let list: Vec<String> = (0..50_000).map(|i| i.to_string()).collect();
    let f = parse(&format!("x IN [{}]", list.join(",")));
    assert!(f.matches(&doc(json!({"x": 49_999}))));
}

#[test]
fn test_quotes_and_escapes() {
    let f = parse(r#"title = 'I\'m "here"'"#);
    assert!(f.matches(&doc(json!({"title": "I'm \"here\""}))));
    let f = parse(r#"title = "a\\b""#);
    assert!(f.matches(&doc(json!({"title": "a\\b"}))));
}

fn doc(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

/// The documents passing `filter`, read document by document; when value columns can
/// answer the filter, their answer must be the same.
fn check(filter: &str, docs: &[Value]) -> Vec<usize> {
    parse(filter)
        .evaluate_both_ways(docs)
        .unwrap_or_else(|e| panic!("{filter}: {e}"))
        .into_iter()
        .map(|i| i as usize)
        .collect()
}

#[test]
fn test_columns_answer_like_documents() {
    let docs = [
        json!({"t": "Élan", "n": [1, 5], "g": {"lat": 1, "lng": 2}}),
        json!({"t": "e\u{301}lan", "n": -0.0, "_geo": {"lat": "0.5", "lng": "179.9"}}),
        json!({"t": ["ﬁne", true], "n": "5", "_geo": {"lat": 0.5, "lng": -179.9}}),
        json!({"t": null, "n": 1e300}),
    ];
    assert_eq!(check("t = élan", &docs), vec![0, 1]);
    assert_eq!(check("t = fine OR t = TRUE", &docs), vec![2]);
    assert_eq!(check("n = 0", &docs), vec![1]);
    assert_eq!(check("n 1 TO 5", &docs), vec![0, 2]);
    // Each condition holds on its own: 5 > 1 and 1 < 5.
    assert_eq!(check("n > 1 AND n < 5", &docs), vec![0]);
    assert_eq!(check("n >= 5", &docs), vec![0, 2, 3]);
    assert_eq!(check("NOT n IN [5, 1e300]", &docs), vec![1]);
    assert_eq!(check("t > e AND t < g", &docs), vec![0, 1, 2]);
    assert_eq!(check("_geoRadius(0.5, 180, 20000)", &docs), vec![1, 2]);
    assert_eq!(
        check("_geoBoundingBox([1, -179], [0, 179])", &docs),
        vec![1, 2]
    );
}

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
fn test_array_form_is_and_of_ors() {
    let docs = [
        json!({"g": "a", "y": 1}),
        json!({"g": "b", "y": 2}),
        json!({"g": "c", "y": 1}),
    ];
    let f = Filter::from_json(&json!([["g = a", "g = b"], "y = 1"]))
        .unwrap()
        .unwrap();
    let hits: Vec<usize> = (0..3)
        .filter(|&i| f.matches(&doc(docs[i].clone())))
        .collect();
    assert_eq!(hits, vec![0]);
    let e = Filter::from_json(&json!(["g = a", "y ="])).unwrap_err();
    assert_eq!(e, "Was expecting a value but instead got nothing.\n4:4 y =");
    let e = Filter::from_json(&json!(true)).unwrap_err();
    assert_eq!(
        e,
        "Invalid syntax for the filter parameter: `expected String, Array, found: true`."
    );
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

fn settings(filterable: Value) -> Settings {
    Settings::from_stored(Some(&json!({ "filterableAttributes": filterable })))
}

#[test]
fn test_validation_against_filterable_attributes() {
    let s = settings(json!(["genre", "b", "nested"]));
    assert!(parse("genre = x AND nested.deep = 1").validate(&s).is_ok());
    assert_eq!(
        parse("x = 1").validate(&s).unwrap_err(),
        "Attribute `x` is not filterable. Available filterable attribute patterns are: `b`, `genre`, `nested`.\n1:2 x = 1"
    );
    assert_eq!(
        parse("  x = 1").validate(&Settings::default()).unwrap_err(),
        "Attribute `x` is not filterable. This index does not have configured filterable attributes.\n3:4   x = 1"
    );
    let patterns = settings(json!([
        {"attributePatterns": ["price_*"], "features": {"filter": {"equality": true, "comparison": false}}},
        {"attributePatterns": ["*_at"], "features": {"filters": {"equality": false, "comparison": true}}},
        {"attributePatterns": ["off"], "features": {"filter": {"equality": false, "comparison": false}}},
    ]));
    assert!(parse("price_usd = 1").validate(&patterns).is_ok());
    assert!(parse("created_at > 1").validate(&patterns).is_ok());
    let e = parse("price_usd > 1").validate(&patterns).unwrap_err();
    assert!(
        e.starts_with("Filter operator `>` is not allowed for the attribute `price_usd`.\n  - Note: allowed operators: OR, AND, NOT, =, !=, IN, IS EMPTY, IS NULL, EXISTS.\n  - Note: field `price_usd` matched rule #0"),
        "{e}"
    );
    let e = parse("created_at IN [1]").validate(&patterns).unwrap_err();
    assert!(e.starts_with("Filter operator `=` is not allowed"), "{e}");
    let e = parse("off = 1").validate(&patterns).unwrap_err();
    assert!(e.starts_with("Attribute `off` is not filterable. Available filterable attribute patterns are: `*_at`, `price_*`."), "{e}");
    // Geo needs a plain `_geo` rule.
    let e = parse("_geoRadius(1, 2, 3)").validate(&s).unwrap_err();
    assert!(
        e.starts_with("Attribute `_geo/_geojson` is not filterable."),
        "{e}"
    );
    assert!(e.ends_with("\n12:13 _geoRadius(1, 2, 3)"), "{e}");
    let geo = settings(json!(["_geo"]));
    assert!(parse("_geoRadius(1, 2, 3)").validate(&geo).is_ok());
    assert_eq!(
        parse("_geoRadius(91, 2, 3)").validate(&geo).unwrap_err(),
        "Bad latitude `91`. Latitude must be contained between -90 and 90 degrees.\n12:14 _geoRadius(91, 2, 3)"
    );
    let e = parse("_geoBoundingBox([1, 200], [0, 0])")
        .validate(&geo)
        .unwrap_err();
    assert!(e.contains("Hint: try using `-160` instead."), "{e}");
    let e = parse("_geoBoundingBox([0, 1], [1, 0])")
        .validate(&geo)
        .unwrap_err();
    assert!(
        e.starts_with("The top latitude `0` is below the bottom latitude `1`."),
        "{e}"
    );
    // The last operand is reported first, as Meilisearch does.
    let e = parse("a = 1 AND b2 = 2").validate(&s).unwrap_err();
    assert!(e.starts_with("Attribute `b2`"), "{e}");
}

#[test]
fn test_reads_only_the_fields_it_needs() {
    let f = parse("a.b = 1 OR (c EXISTS AND NOT _geoRadius(1, 2, 3))");
    for name in ["a", "a.b", "c", "_geo"] {
        assert!(f.reads_field(name), "{name}");
    }
    for name in ["b", "ab", "a.b.c", "cc", "d"] {
        assert!(!f.reads_field(name), "{name}");
    }
}

/// A stable-toolchain companion of the `cargo fuzz` target (crates/engine/fuzz): random
/// sentences over the filter's own vocabulary must parse or fail cleanly, and columns must
/// agree with documents on every filter that parses.
#[test]
fn test_random_filters_never_panic_and_columns_agree() {
    const WORDS: &[&str] = &[
        "genre",
        "year",
        "tags",
        "o.x",
        "=",
        "!=",
        ">",
        ">=",
        "<",
        "<=",
        "TO",
        "IN",
        "NOT",
        "AND",
        "OR",
        "(",
        ")",
        "[",
        "]",
        ",",
        "EXISTS",
        "IS",
        "NULL",
        "EMPTY",
        "drama",
        "\"Élan\"",
        "'a b'",
        "2015",
        "-1.5",
        "1e300",
        "_geoRadius(",
        "_geoBoundingBox(",
        "0",
        "\"",
        "'",
        "\\",
        "CONTAINS",
        "STARTS",
        "WITH",
        "true",
    ];
    let docs = [
        json!({"genre": "Drama", "year": 2015, "tags": ["a b", "B"], "o": {"x": 1}}),
        json!({"genre": ["élan", "x"], "year": "2012", "tags": [], "o": [{"x": 2}]}),
        json!({"genre": null, "year": 1e300, "tags": [null, true], "o.x": -1.5,
               "_geo": {"lat": 0, "lng": 0}}),
        json!({}),
    ];
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut parsed = 0;
    for _ in 0..20_000 {
        let text = if next(2) == 0 {
            // Word salad: mostly syntax errors.
            let len = 1 + next(12);
            let sentence: Vec<&str> = (0..len).map(|_| WORDS[next(WORDS.len())]).collect();
            sentence.join(if next(2) == 0 { " " } else { "" })
        } else {
            // Conditions joined by AND/OR, some negated or grouped.
            const FIELDS: &[&str] = &["genre", "year", "tags", "o.x", "o", "missing"];
            const VALUES: &[&str] = &[
                "drama",
                "\"Élan\"",
                "'a b'",
                "2015",
                "-1.5",
                "1e300",
                "2012",
                "b",
                "true",
                "\"\"",
            ];
            const OPS: &[&str] = &["=", "!=", ">", ">=", "<", "<="];
            let mut parts = Vec::new();
            for _ in 0..1 + next(4) {
                let f = FIELDS[next(FIELDS.len())];
                let (a, b) = (VALUES[next(VALUES.len())], VALUES[next(VALUES.len())]);
                let op = OPS[next(OPS.len())];
                let cond = match next(7) {
                    0 => format!("{f} IN [{a}, {b}]"),
                    1 => format!("{f} {a} TO {b}"),
                    2 => format!("{f} EXISTS"),
                    3 => format!("{f} IS NOT EMPTY"),
                    4 => format!("{f} IS NULL"),
                    _ => format!("{f} {op} {a}"),
                };
                parts.push(match next(4) {
                    0 => format!("NOT {cond}"),
                    1 => format!("({cond} OR {f} = {})", VALUES[next(VALUES.len())]),
                    _ => cond,
                });
            }
            parts.join(if next(2) == 0 { " AND " } else { " OR " })
        };
        let Ok(Some(f)) = Filter::from_json(&Value::String(text.clone())) else {
            continue;
        };
        parsed += 1;
        let _ = f.validate(&Settings::default());
        if let Err(e) = f.evaluate_both_ways(&docs) {
            panic!("{text}: {e}");
        }
    }
    assert!(
        parsed > 500,
        "the generator should produce valid filters too ({parsed})"
    );
}

#[test]
fn test_ranges_on_many_documents_agree_with_documents() {
    // Enough documents that a range's documents are gathered both ways (sorted when few,
    // through a dense bit set when many), with mixed types, several values per document,
    // missing values, nulls, empty arrays, `-0` and `0`, and holes of deleted ids (the
    // empty objects stand for them: they hold no value).
    let docs: Vec<Value> = (0..3000i64)
        .map(|i| match i % 11 {
            0 => json!({}),
            1 => json!({"n": null}),
            2 => json!({"n": []}),
            3 => json!({"n": [i % 50, (i * 7) % 50]}),
            4 => json!({"n": format!("{}", i % 40)}),
            5 => json!({"n": -0.0}),
            6 => json!({"n": [0, "zero", i as f64 / 3.0]}),
            7 => json!({"n": i % 13 == 0}),
            _ => json!({"n": (i % 100) as f64 - 20.5}),
        })
        .collect();
    let mut total = 0;
    for filter in [
        "n 10 TO 20",
        "n 0 TO 0",
        "n -0.0 TO 0",
        "n >= 0",
        "n > 0",
        "n <= 0",
        "n < 0",
        "n >= -20.5",
        "n > -20.5",
        "n < 79.5",
        "n <= 79.5",
        "n 49 TO 49",
        "n = 49",
        "n = 0",
        "n = -20.5",
        "n > 1000",
        "n < -1000",
        "n >= 999",
        "n 3 TO 2",
        "n 1 TO 3 OR n 30 TO 40",
        "n > 5 AND n < 7",
        "NOT n >= 10",
        "n >= 1e300",
        "n > a",
        "n a TO z",
        "n IN [0, 1, 2, 49, 'zero', true]",
    ] {
        total += check(filter, &docs).len();
    }
    assert!(total > 10_000, "the ranges select many documents ({total})");
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
