//! Reading values at dotted paths: the path rules shared by filters, value columns, sort and
//! the settings that name attributes.

use std::ops::ControlFlow;

use serde_json::{Map, Value};

/// Whether the dotted `path` is `ancestor` or lies inside it (`a.b` is within `a`, `ab` is not).
pub fn within(path: &str, ancestor: &str) -> bool {
    path == ancestor
        || (path.len() > ancestor.len()
            && path.starts_with(ancestor)
            && path.as_bytes()[ancestor.len()] == b'.')
}

/// The values at a dotted path, as stored (arrays not flattened at the end of the path):
/// `a.b` reaches `{"a.b":..}`, `{"a":{"b":..}}`, `{"a":[{"b":..}]}` and mixes of them.
pub fn values_at<'a>(doc: &'a Map<String, Value>, path: &str) -> Vec<&'a Value> {
    let mut out = Vec::new();
    collect(doc, path, &mut out);
    out
}

fn collect<'a>(map: &'a Map<String, Value>, path: &str, out: &mut Vec<&'a Value>) {
    if let Some(v) = map.get(path) {
        out.push(v);
    }
    for (dot, _) in path.match_indices('.') {
        let (head, tail) = (&path[..dot], &path[dot + 1..]);
        if let Some(inner) = map.get(head) {
            descend(inner, tail, out);
        }
    }
}

fn descend<'a>(v: &'a Value, path: &str, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(m) => collect(m, path, out),
        Value::Array(items) => items.iter().for_each(|i| descend(i, path, out)),
        _ => {}
    }
}

/// A value that takes part in comparisons: a number, or a string as written (booleans are
/// the strings `"true"` and `"false"`). `null` and objects are not scalars.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar<'a> {
    Num(f64),
    Str(&'a str),
}

impl<'a> Scalar<'a> {
    /// The scalar `v` is, if it is one (arrays are not: see [`each_scalar`]).
    pub fn of(v: &'a Value) -> Option<Scalar<'a>> {
        match v {
            Value::Number(n) => n.as_f64().map(Scalar::Num),
            Value::String(s) => Some(Scalar::Str(s)),
            Value::Bool(b) => Some(Scalar::Str(if *b { "true" } else { "false" })),
            _ => None,
        }
    }
}

/// Calls `f` on every scalar of `found` (as [`values_at`] gives them), arrays flattened, in
/// document order, until it breaks.
pub fn each_scalar<'a, B>(
    found: &[&'a Value],
    mut f: impl FnMut(Scalar<'a>) -> ControlFlow<B>,
) -> ControlFlow<B> {
    let mut stack: Vec<&'a Value> = found.iter().rev().copied().collect();
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items.iter().rev()),
            other => {
                if let Some(s) = Scalar::of(other) {
                    f(s)?;
                }
            }
        }
    }
    ControlFlow::Continue(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn test_dotted_paths_reach_nested_objects_and_arrays() {
        let doc = json!({"a": {"b": 1}, "a.b": 2, "c": [{"b": 3}, {"a": {"b": 4}}]});
        let doc = doc.as_object().unwrap();
        assert_eq!(values_at(doc, "a.b"), [&json!(2), &json!(1)]);
        assert_eq!(values_at(doc, "c.b"), [&json!(3)]);
        assert_eq!(values_at(doc, "c.a.b"), [&json!(4)]);
        assert!(within("a.b", "a") && within("a", "a") && !within("ab", "a"));
    }

    #[test]
    fn test_scalars_in_document_order() {
        let found = [&json!([1, ["X", true], null, {"k": 2}]), &json!("y")];
        let mut seen = Vec::new();
        let _ = each_scalar::<()>(&found, |s| {
            seen.push(s);
            ControlFlow::Continue(())
        });
        assert_eq!(
            seen,
            [
                Scalar::Num(1.0),
                Scalar::Str("X"),
                Scalar::Str("true"),
                Scalar::Str("y")
            ]
        );
    }
}
