//! The parser: every operator, syntax errors with Meilisearch's positions, depth limits,
//! quotes and escapes, the array form, and the `CONTAINS` feature check.

use serde_json::{json, Value};

use super::{doc, err, parse};
use crate::filter::Filter;

const OPS: &str = "`=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, `NOT EXISTS`, `IS NULL`, `IS NOT NULL`, `IS EMPTY`, `IS NOT EMPTY`, `CONTAINS`, `NOT CONTAINS`, `STARTS WITH`, `NOT STARTS WITH`, `_geoRadius`, `_geoBoundingBox` or `_geoPolygon`";

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
fn test_syntax_errors_carry_meilisearch_positions() {
    let cases: Vec<(&str, String)> = vec![
        (
            "channel = Ponce = 12",
            "Found unexpected characters at the end of the filter: `= 12`. You probably forgot an `OR` or an `AND` rule.\n17:21 channel = Ponce = 12".into(),
        ),
        (
            "channel =    ",
            "Was expecting a value but instead got nothing.\n14:14 channel =    ".into(),
        ),
        (
            "channel = 🐻 AND followers < 100",
            "Was expecting a value but instead got `🐻`.\n11:12 channel = 🐻 AND followers < 100".into(),
        ),
        (
            "'OR'",
            format!("Was expecting an operation {OPS} at `\\'OR\\'`.\n1:5 'OR'"),
        ),
        (
            "OR",
            "Was expecting a value but instead got `OR`, which is a reserved keyword. To use `OR` as a field name or a value, surround it by quotes.\n1:3 OR".into(),
        ),
        (
            "channel Ponce",
            format!("Was expecting an operation {OPS} at `channel Ponce`.\n1:14 channel Ponce"),
        ),
        (
            "channel = Ponce OR",
            format!("Was expecting an operation {OPS} but instead got nothing.\n19:19 channel = Ponce OR"),
        ),
        (
            "_geoRadius = 12",
            "The `_geoRadius` filter must be in the form: `_geoRadius(latitude, longitude, radius, optionalResolution)`.\n11:16 _geoRadius = 12".into(),
        ),
        (
            "_geoBoundingBox(1.0, 1.0)",
            "The `_geoBoundingBox` filter expects two pairs of arguments: `_geoBoundingBox([latitude, longitude], [latitude, longitude])`.\n17:26 _geoBoundingBox(1.0, 1.0)".into(),
        ),
        (
            "_geoPolygon([1,2],[1,2],[1,2,3])",
            "Was expecting 2 coordinates but instead found 3.\n26:27 _geoPolygon([1,2],[1,2],[1,2,3])".into(),
        ),
        (
            "_geoPolygon([1,2],[1,2,3])",
            "The `_geoPolygon` filter expects at least 3 points but only 2 were specified\n24:25 _geoPolygon([1,2],[1,2,3])".into(),
        ),
        (
            "_geoPolygon([1,2)",
            "The `_geoPolygon` filter doesn't match the expected format: `_geoPolygon([latitude, longitude], [latitude, longitude])`.\n17:18 _geoPolygon([1,2)".into(),
        ),
        (
            "position <= _geoPoint(12, 13, 14)",
            "`_geoPoint` is a reserved keyword and thus can't be used as a filter expression. Use the `_geoRadius(latitude, longitude, distance)` or `_geoBoundingBox([latitude, longitude], [latitude, longitude])` built-in rules to filter on `_geo` coordinates.\n13:34 position <= _geoPoint(12, 13, 14)".into(),
        ),
        (
            "position <= _geoRadius(12, 13, 14)",
            "The `_geoRadius` filter is an operation and can't be used as a value.\n13:35 position <= _geoRadius(12, 13, 14)".into(),
        ),
        (
            "channel = 'ponce",
            "Expression `\\'ponce` is missing the following closing delimiter: `'`.\n11:17 channel = 'ponce".into(),
        ),
        (
            "channel = mv OR (followers >= 1000",
            "Expression `(followers >= 1000` is missing the following closing delimiter: `)`.\n17:35 channel = mv OR (followers >= 1000".into(),
        ),
        (
            "channel = mv OR followers >= 1000)",
            "Found unexpected characters at the end of the filter: `)`. You probably forgot an `OR` or an `AND` rule.\n34:35 channel = mv OR followers >= 1000)".into(),
        ),
        (
            "subscribers 100 TO1000",
            format!("Was expecting an operation {OPS} at `subscribers 100 TO1000`.\n1:23 subscribers 100 TO1000"),
        ),
        (
            "colour IN blue, green]",
            "Expected `[` after `IN` keyword.\n11:23 colour IN blue, green]".into(),
        ),
        (
            "colour IN [blue, green, 'blue' > 2]",
            "Expected only comma-separated field names inside `IN[..]` but instead found `> 2]`.\n32:36 colour IN [blue, green, 'blue' > 2]".into(),
        ),
        (
            "colour IN [blue, green, AND]",
            "Expected only comma-separated field names inside `IN[..]` but instead found `AND]`.\n25:29 colour IN [blue, green, AND]".into(),
        ),
        (
            "colour IN [blue, green",
            "Expected matching `]` after the list of field names given to `IN[`\n23:23 colour IN [blue, green".into(),
        ),
        (
            "x = EXISTS",
            "Was expecting a value but instead got `EXISTS`, which is a reserved keyword. To use `EXISTS` as a field name or a value, surround it by quotes.\n5:11 x = EXISTS".into(),
        ),
        (
            "name = \"\\x\"",
            "The filter is incomplete and requires Unknown additional bytes to be parsed.\n1:12 name = \"\\x\"".into(),
        ),
        (
            "value IS NOT",
            format!("Was expecting an operation {OPS} at `value IS NOT`.\n1:13 value IS NOT"),
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(err(input), expected, "filter {input:?}");
    }
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
