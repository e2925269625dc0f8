//! Parsing as the engine does it (syntax errors with their positions are the grammar's own
//! tests, in `crates/filter-parser`): every operator, depth limits,
//! quotes and escapes, the array form, and the `CONTAINS` feature check.

use serde_json::{json, Value};

use super::{doc, err, parse};
use crate::filter::Filter;

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

/// A deletion's or edition's filter checked when its task is enqueued: `null` is no filter,
/// one that parses to nothing is empty, and an edition's syntax errors name its index, as
/// Meilisearch 1.50 answers them.
#[test]
fn document_filters_checked_before_their_task() {
    use crate::filter::{check_document_filter, check_search_filter};
    use api_types::Code;
    let check = |f: &str, index: Option<&str>| {
        check_document_filter(f, false, index).map_err(|e| (e.code, e.message))
    };
    let shape = "Invalid syntax for the filter parameter: `expected String, Array, found: null`.";
    assert_eq!(
        check("null", None),
        Err((Code::InvalidDocumentFilter, shape.to_string()))
    );
    for empty in [r#""""#, r#""  ""#, "[]", r#"[""]"#, "[[]]"] {
        let e = check(empty, Some("f")).unwrap_err();
        assert_eq!(e.1, "Sending an empty filter is forbidden.", "{empty}");
    }
    let e = check("5", Some("f")).unwrap_err();
    assert_eq!(
        e.1,
        "Index `f`: Invalid syntax for the filter parameter: `expected String, Array, found: 5`."
    );
    assert!(check("5", None)
        .unwrap_err()
        .1
        .starts_with("Invalid syntax"));
    assert_eq!(check(r#""a = 1""#, None), Ok(()));
    let e = check(r#""a CONTAINS b""#, None).unwrap_err();
    assert_eq!(e.0, Code::FeatureNotEnabled);
    // A search's filter: `null` is no filter, and its errors are the search's.
    assert!(check_search_filter("null", false).is_ok());
    let e = check_search_filter("[[1]]", false).unwrap_err();
    assert_eq!(e.code, Code::InvalidSearchFilter);
    assert_eq!(
        e.message,
        "Invalid syntax for the filter parameter: `expected String, found: 1`."
    );
}
