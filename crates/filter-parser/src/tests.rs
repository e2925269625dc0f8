//! The grammar on its own: syntax errors with Meilisearch's messages and positions, the tree
//! the parser builds, and the depth bound.

use super::*;

/// The error of a filter string that does not parse (the engine passes it through as is).
fn err(s: &str) -> String {
    parse(s, 0).unwrap_err()
}

const OPS: &str = "`=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, `NOT EXISTS`, `IS NULL`, `IS NOT NULL`, `IS EMPTY`, `IS NOT EMPTY`, `CONTAINS`, `NOT CONTAINS`, `STARTS WITH`, `NOT STARTS WITH`, `_geoRadius`, `_geoBoundingBox` or `_geoPolygon`";

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

fn tok(value: &str, src: usize, start: usize, end: usize) -> Token {
    Token {
        value: value.to_string(),
        src,
        start,
        end,
    }
}

fn tree(s: &str) -> Expr {
    parse(s, 0).unwrap().unwrap()
}

#[test]
fn blank_filters_are_none() {
    assert_eq!(parse("", 0), Ok(None));
    assert_eq!(parse(" \t\n ", 7), Ok(None));
}

#[test]
fn tokens_carry_their_string_and_byte_range() {
    assert_eq!(
        parse("  a = 1  ", 3),
        Ok(Some(Expr::Cond {
            field: tok("a", 3, 2, 3),
            op: Op::Eq(tok("1", 3, 6, 7)),
        }))
    );
    // Quotes are outside the range; escapes are resolved in the value.
    assert_eq!(
        tree(r"t = 'I\'m'"),
        Expr::Cond {
            field: tok("t", 0, 0, 1),
            op: Op::Eq(tok("I'm", 0, 5, 9)),
        }
    );
    // `CONTAINS` keeps its keyword, for the feature gate's error.
    assert_eq!(
        tree("a CONTAINS b"),
        Expr::Cond {
            field: tok("a", 0, 0, 1),
            op: Op::Contains(tok("b", 0, 11, 12), tok("CONTAINS", 0, 2, 10)),
        }
    );
}

#[test]
fn the_tree_follows_precedence_and_folds_negations() {
    let cond = |field: &str, at: usize, op: fn(Token) -> Op, value: &str| Expr::Cond {
        field: tok(field, 0, at, at + field.len()),
        op: op(tok(
            value,
            0,
            at + field.len() + 3,
            at + field.len() + 3 + value.len(),
        )),
    };
    assert_eq!(
        tree("a = 1 OR b = 2 AND c = 3"),
        Expr::Or(vec![
            cond("a", 0, Op::Eq, "1"),
            Expr::And(vec![cond("b", 9, Op::Eq, "2"), cond("c", 19, Op::Eq, "3")]),
        ])
    );
    assert_eq!(tree("NOT NOT a = 1"), cond("a", 8, Op::Eq, "1"));
    assert_eq!(
        tree("NOT a = 1"),
        Expr::Not(Box::new(cond("a", 4, Op::Eq, "1")))
    );
    assert_eq!(
        tree("a IS NOT NULL"),
        Expr::Not(Box::new(Expr::Cond {
            field: tok("a", 0, 0, 1),
            op: Op::Null,
        }))
    );
    assert_eq!(
        tree("a NOT IN [x]"),
        Expr::Not(Box::new(Expr::In {
            field: tok("a", 0, 0, 1),
            values: vec![tok("x", 0, 10, 11)],
        }))
    );
    assert_eq!(
        tree("a 1 TO 2"),
        Expr::Cond {
            field: tok("a", 0, 0, 1),
            op: Op::Between(tok("1", 0, 2, 3), tok("2", 0, 7, 8)),
        }
    );
}

#[test]
fn operators_have_meilisearch_names() {
    let t = || tok("x", 0, 0, 1);
    assert_eq!(Op::Ge(t()).name(), ">=");
    assert_eq!(Op::Between(t(), t()).name(), "TO");
    assert_eq!(Op::Null.name(), "IS NULL");
    assert_eq!(Op::StartsWith(t()).name(), "STARTS WITH");
}

#[test]
fn locate_counts_characters_from_one() {
    // `é` is two bytes but one column.
    assert_eq!(locate("é = x", 5, 6), "5:6 é = x");
    assert_eq!(locate("a =", 3, 3), "4:4 a =");
}

#[test]
fn nesting_is_bounded_by_max_depth() {
    assert_eq!(MAX_DEPTH, 150);
    // Each parenthesis costs four levels: 36 fit, 37 do not.
    let nested = |n: usize| format!("{}x = 1{}", "(".repeat(n), ")".repeat(n));
    assert!(parse(&nested(36), 0).unwrap().is_some());
    let e = err(&nested(37));
    assert!(
        e.starts_with("The filter exceeded the maximum depth limit."),
        "{e}"
    );
}

/// `_foreign(field, expression)`: its tree, and once its name is read, one message for any
/// failure, from where it happened to the end (as probed on Meilisearch 1.50).
#[test]
fn test_foreign_conditions() {
    let Some(Expr::Foreign { field, inner }) = parse("_foreign(actors, age > 60)", 0).unwrap()
    else {
        panic!("not a foreign condition");
    };
    assert_eq!(
        (field.value.as_str(), field.start, field.end),
        ("actors", 9, 15)
    );
    assert!(matches!(*inner, Expr::Cond { op: Op::Gt(_), .. }));
    let Some(Expr::Not(inner)) = parse("NOT _foreign(a, b = 1 OR c = 2)", 0).unwrap() else {
        panic!("not a negation");
    };
    assert!(matches!(*inner, Expr::Foreign { .. }));
    assert_eq!(
        err("_foreign(actors age > 1)"),
        "Was expecting a field name and an condition inside `_foreign(..)` filter but instead found `age > 1)`.\n17:25 _foreign(actors age > 1)"
    );
    assert_eq!(
        err("_foreign(actors, age > 1"),
        "Was expecting a field name and an condition inside `_foreign(..)` filter but instead found ``.\n25:25 _foreign(actors, age > 1"
    );
}
