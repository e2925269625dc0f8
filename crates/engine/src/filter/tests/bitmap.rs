//! Value columns (bitmaps) answer as documents do: fixed cases, ranges over many documents,
//! and random filters.

use serde_json::{json, Value};

use super::check;
use crate::filter::Filter;
use crate::settings::Settings;

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
