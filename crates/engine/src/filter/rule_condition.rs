//! The `filter` condition of a dynamic search rule: `{"values": {"genre": "drama"}}` matches
//! a search whose filter asks for those values.
//!
//! Meilisearch 1.50's reading, settled on the reference binary: for every attribute the
//! condition names, some condition of the search's filter on that attribute (exactly that
//! name) must hold for the condition's value, `NOT` taken into account. Conditions on other
//! attributes, and how the conditions combine (`AND`, `OR`), do not matter. A search without a
//! filter matches only a condition that names no attribute (a `null` value names none; an
//! array is any of its values).
//!
//! What holds for a value: `=`, `!=` and `IN` compare normal forms of the text (`2` and `2.0`
//! are two values, `Drama` equals `drama`); `>`, `>=`, `<`, `<=` and `TO` compare numbers (a
//! value that is no number holds none of them); `EXISTS`, `IS NOT NULL` and `IS NOT EMPTY`
//! hold. `CONTAINS`, `STARTS WITH` and the geo rules never count, negated or not.

use api_types::{Code, Error, Result};
use serde_json::{Map, Value};

use super::{Expr, Filter, Op, Token};
use crate::value::normalize;

/// For each condition's `values` (a JSON object of attribute to value) in `conditions_json`
/// (a JSON array of them), whether the search filter `filter_json` (its JSON string or array
/// form, `null` for none) asks for them: the filter is parsed once for all the rules of a
/// search.
pub fn rule_filters_match(filter_json: &str, conditions_json: &str) -> Result<Vec<bool>> {
    let internal = |e: serde_json::Error| Error::new(Code::Internal, e.to_string());
    let conditions: Vec<Map<String, Value>> =
        serde_json::from_str(conditions_json).map_err(internal)?;
    let filter: Value = serde_json::from_str(filter_json).map_err(internal)?;
    // A filter that does not parse matches nothing here: the search itself answers its error.
    let filter = Filter::from_json(&filter).ok().flatten();
    Ok(conditions
        .iter()
        .map(|values| matches_values(filter.as_ref(), values))
        .collect())
}

/// Whether `filter` asks for every attribute's value of a condition's `values`.
fn matches_values(filter: Option<&Filter>, values: &Map<String, Value>) -> bool {
    let wanted: Vec<(&str, Vec<&Value>)> = values
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| match v {
            Value::Array(items) => (k.as_str(), items.iter().collect()),
            v => (k.as_str(), vec![v]),
        })
        .collect();
    if wanted.is_empty() {
        return true;
    }
    let Some(filter) = filter else {
        return false;
    };
    wanted.iter().all(|(field, values)| {
        values
            .iter()
            .any(|v| holds_somewhere(&filter.expr, field, v, false))
    })
}

/// Whether some condition on `field` within `expr` holds for `value` (`negated`: under an odd
/// number of `NOT`s).
fn holds_somewhere(expr: &Expr, field: &str, value: &Value, negated: bool) -> bool {
    match expr {
        Expr::And(v) | Expr::Or(v) => v.iter().any(|e| holds_somewhere(e, field, value, negated)),
        Expr::Not(inner) => holds_somewhere(inner, field, value, !negated),
        Expr::Cond { field: f, op } if f.value == field => {
            holds(op, value).is_some_and(|h| h != negated)
        }
        Expr::In { field: f, values } if f.value == field => {
            let text = text_of(value);
            values.iter().any(|t| same_text(&text, t)) != negated
        }
        _ => false,
    }
}

/// Whether `op` holds for `value`; `None` for the operators that never count.
fn holds(op: &Op, value: &Value) -> Option<bool> {
    let number = || number_of(value);
    let cmp = |t: &Token, f: fn(f64, f64) -> bool| {
        number()
            .zip(t.value.trim().parse::<f64>().ok())
            .is_some_and(|(v, b)| f(v, b))
    };
    Some(match op {
        Op::Eq(t) => same_text(&text_of(value), t),
        Op::Ne(t) => !same_text(&text_of(value), t),
        Op::Gt(t) => cmp(t, |v, b| v > b),
        Op::Ge(t) => cmp(t, |v, b| v >= b),
        Op::Lt(t) => cmp(t, |v, b| v < b),
        Op::Le(t) => cmp(t, |v, b| v <= b),
        Op::Between(lo, hi) => cmp(lo, |v, b| v >= b) && cmp(hi, |v, b| v <= b),
        Op::Exists => true,
        Op::Null | Op::Empty => false,
        Op::Contains(..) | Op::StartsWith(_) => return None,
    })
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => normalize(s).into_owned(),
        other => normalize(&other.to_string()).into_owned(),
    }
}

fn same_text(text: &str, token: &Token) -> bool {
    text == normalize(&token.value)
}

fn number_of(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::rule_filters_match;

    fn matches(filter: &str, values: &str) -> bool {
        let one = rule_filters_match(filter, &format!("[{values}]")).unwrap();
        // The answer for a condition does not depend on the others beside it.
        let three =
            rule_filters_match(filter, &format!("[{{}}, {values}, {{\"zz\": 1}}]")).unwrap();
        assert_eq!(three, [true, one[0], false]);
        one[0]
    }

    // Each case was answered by Meilisearch 1.50 with a rule pinning a document.
    #[test]
    fn a_condition_on_each_named_attribute_must_hold_for_its_value() {
        let g = r#"{"g":"a"}"#;
        for (filter, expected) in [
            ("null", false),
            (r#""g = a""#, true),
            (r#""g = A""#, true),
            (r#""g = a AND x > 0""#, true),
            (r#""g = b OR g = a""#, true),
            (r#""g IN [a, b]""#, true),
            (r#""g NOT IN [b]""#, true),
            (r#""NOT g = b""#, true),
            (r#""g != b""#, true),
            (r#""NOT NOT g = a""#, true),
            (r#""NOT g = a""#, false),
            (r#""g EXISTS""#, true),
            (r#""NOT g EXISTS""#, false),
            (r#""g IS NOT NULL""#, true),
            (r#""g IS NOT EMPTY""#, true),
            (r#""g STARTS WITH a""#, false),
            (r#""g CONTAINS a""#, false),
            (r#""g NOT STARTS WITH b""#, false),
            (r#""x > 0""#, false),
            (r#"["g = a"]"#, true),
            (r#"[["x = 1", "g = a"]]"#, true),
        ] {
            assert_eq!(matches(filter, g), expected, "{filter}");
        }
    }

    #[test]
    fn every_named_attribute_counts_and_numbers_compare_as_numbers() {
        let two = r#"{"g":"a","x":"2"}"#;
        assert!(matches(r#""g = a AND x > 0""#, two));
        assert!(!matches(r#""g = a""#, two));
        assert!(!matches(r#""g = a OR x = 1""#, two));
        assert!(matches(r#""g EXISTS AND x EXISTS""#, two));
        let x = r#"{"x":"2.0"}"#;
        assert!(!matches(r#""x = 2""#, x));
        assert!(matches(r#""x 2 TO 3""#, x));
        assert!(matches(r#""x > 1.5""#, x));
        assert!(!matches(r#""x IN [2, 5]""#, x));
        assert!(matches(r#""x NOT IN [1]""#, x));
        assert!(matches(r#""x = 2""#, r#"{"x":2}"#));
        assert!(matches(r#""g = a""#, r#"{"g":["a"]}"#));
    }

    #[test]
    fn a_condition_naming_nothing_matches_every_search() {
        assert!(matches("null", "{}"));
        assert!(matches("null", r#"{"g":null}"#));
        assert!(matches(r#""x = 1""#, "{}"));
    }
}
