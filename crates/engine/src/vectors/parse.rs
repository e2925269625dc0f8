//! `_vectors` in a document: what it says for each embedder.
//!
//! Every form Meilisearch accepts, per embedder name:
//! - `null` or `[]`: no embedding (the document opts out);
//! - `[f, f, ...]`: one embedding; `[[f, ...], [f, ...]]`: several;
//! - `{"embeddings": <one of the above>, "regenerate": bool}`: the same, with `regenerate`
//!   saying whether the embedder may replace them (`true`) or they are the user's (`false`);
//!   `{"regenerate": true}` alone asks the embedder for them.
//!
//! Entries naming no configured embedder stay in the stored document as they were sent.

use api_types::{Code, Error, Result};
use serde_json::{Map, Value};

/// What a document's `_vectors` says for one embedder.
#[derive(Debug, Clone, PartialEq)]
pub struct Supplied {
    /// The embeddings given (empty: none, the document opted out); `None` when only
    /// `regenerate` was given.
    pub embeddings: Option<Vec<Vec<f32>>>,
    /// Whether the embedder may generate (and later replace) them.
    pub regenerate: bool,
}

fn type_error(doc_id: &str, message: String) -> Error {
    Error::new(
        Code::InvalidVectorsType,
        format!("Bad embedder configuration in the document with id: `{doc_id}`. {message}"),
    )
}

fn kind(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean `{b}`"),
        Value::Number(n) => format!("the number `{n}`"),
        Value::String(s) => format!("the string `{s}`"),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

const EXPECTED: &str =
    "an array of floats, an array of arrays of floats, or an object with at least the field `regenerate`";

/// The `_vectors` entry of `name` in the document whose id is `doc_id`, if it has one.
pub fn supplied(doc: &Map<String, Value>, name: &str, doc_id: &str) -> Result<Option<Supplied>> {
    let Some(vectors) = doc.get("_vectors") else {
        return Ok(None);
    };
    let vectors = match vectors {
        Value::Null => return Ok(None),
        Value::Object(m) => m,
        other => {
            return Err(type_error(
                doc_id,
                format!(
                    "Expected `._vectors` to be an object mapping embedder names to embeddings, but got {}",
                    kind(other)
                ),
            ))
        }
    };
    let Some(entry) = vectors.get(name) else {
        return Ok(None);
    };
    let path = format!("._vectors.{name}");
    match entry {
        Value::Null => Ok(Some(Supplied {
            embeddings: Some(Vec::new()),
            regenerate: false,
        })),
        Value::Array(_) => Ok(Some(Supplied {
            embeddings: Some(embeddings(entry, &path, doc_id)?),
            regenerate: false,
        })),
        Value::Object(obj) => {
            if let Some(unknown) = obj
                .keys()
                .find(|k| *k != "embeddings" && *k != "regenerate")
            {
                return Err(type_error(
                    doc_id,
                    format!("Unknown field `{unknown}` inside `{path}`: expected one of `embeddings`, `regenerate`"),
                ));
            }
            let regenerate = match obj.get("regenerate") {
                Some(Value::Bool(b)) => *b,
                Some(other) => {
                    return Err(type_error(
                        doc_id,
                        format!(
                            "Invalid value type at `{path}.regenerate`: expected a boolean, but found {}",
                            kind(other)
                        ),
                    ))
                }
                None => {
                    return Err(type_error(
                        doc_id,
                        format!("Missing field `{path}.regenerate`\n  - note: `{path}` must be an array of floats, an array of arrays of floats, or an object with field `regenerate`"),
                    ))
                }
            };
            let embeddings = match obj.get("embeddings") {
                None => None,
                Some(Value::Null) => Some(Vec::new()),
                Some(e) => Some(embeddings(e, &format!("{path}.embeddings"), doc_id)?),
            };
            Ok(Some(Supplied {
                embeddings,
                regenerate,
            }))
        }
        other => Err(type_error(
            doc_id,
            format!(
                "Expected `{path}` to be {EXPECTED}, but got {}",
                kind(other)
            ),
        )),
    }
}

/// One embedding (`[f, ...]`) or several (`[[f, ...], ...]`); `[]` is none.
fn embeddings(v: &Value, path: &str, doc_id: &str) -> Result<Vec<Vec<f32>>> {
    let Value::Array(items) = v else {
        return Err(type_error(
            doc_id,
            format!("Expected `{path}` to be {EXPECTED}, but got {}", kind(v)),
        ));
    };
    if items.is_empty() {
        return Ok(Vec::new());
    }
    if items.iter().all(|i| i.is_array()) {
        return items
            .iter()
            .enumerate()
            .map(|(i, e)| floats(e.as_array().unwrap(), &format!("{path}[{i}]"), doc_id))
            .collect();
    }
    Ok(vec![floats(items, path, doc_id)?])
}

fn floats(items: &[Value], path: &str, doc_id: &str) -> Result<Vec<f32>> {
    items
        .iter()
        .enumerate()
        .map(|(i, x)| match x.as_f64() {
            Some(f) if (f as f32).is_finite() => Ok(f as f32),
            _ => Err(type_error(
                doc_id,
                format!(
                    "Invalid value type at `{path}[{i}]`: expected a number, but found {}",
                    match x {
                        Value::String(s) => format!("a string: `{}`", Value::String(s.clone())),
                        Value::Number(n) => format!("a number out of range: `{n}`"),
                        other => kind(other),
                    }
                ),
            )),
        })
        .collect()
}

/// Checks every embedding has `dimensions` values.
pub fn check_dimensions(
    embeddings: &[Vec<f32>],
    dimensions: usize,
    name: &str,
    doc_id: &str,
) -> Result<()> {
    if let Some((i, e)) = embeddings
        .iter()
        .enumerate()
        .find(|(_, e)| e.len() != dimensions)
    {
        return Err(Error::new(
            Code::InvalidVectorDimensions,
            format!(
                "Invalid vector dimensions in document with id `{doc_id}` in `._vectors.{name}`.\n  - note: embedding #{i} has dimensions {}\n  - note: embedder `{name}` requires {dimensions}",
                e.len()
            ),
        ));
    }
    if embeddings.len() > super::store::MAX_EMBEDDINGS_PER_DOCUMENT {
        return Err(Error::new(
            Code::TooManyVectors,
            format!(
                "Too many vectors for document with id `{doc_id}` in `._vectors.{name}`: {} embeddings, at most {} per embedder.",
                embeddings.len(),
                super::store::MAX_EMBEDDINGS_PER_DOCUMENT
            ),
        ));
    }
    Ok(())
}

/// The stored form of `doc`: `_vectors` without the entries of configured embedders (their
/// vectors live in the vector store), removed altogether when nothing is left.
pub fn strip_configured(doc: &mut Map<String, Value>, configured: &dyn Fn(&str) -> bool) {
    if let Some(Value::Object(v)) = doc.get_mut("_vectors") {
        v.retain(|name, _| !configured(name));
        if v.is_empty() {
            doc.remove("_vectors");
        }
    } else if doc.get("_vectors").is_some_and(Value::is_null) {
        doc.remove("_vectors");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: Value) -> Map<String, Value> {
        json!({ "id": 1, "_vectors": v })
            .as_object()
            .unwrap()
            .clone()
    }

    #[test]
    fn every_form() {
        let s = |v: Value| supplied(&doc(v), "e", "1");
        assert_eq!(s(json!({})).unwrap(), None);
        assert_eq!(
            s(json!({"e": null})).unwrap().unwrap().embeddings,
            Some(vec![])
        );
        assert_eq!(
            s(json!({"e": []})).unwrap().unwrap().embeddings,
            Some(vec![])
        );
        assert_eq!(
            s(json!({"e": [1, 2]})).unwrap().unwrap().embeddings,
            Some(vec![vec![1.0, 2.0]])
        );
        assert_eq!(
            s(json!({"e": [[1, 2], [3, 4]]}))
                .unwrap()
                .unwrap()
                .embeddings,
            Some(vec![vec![1.0, 2.0], vec![3.0, 4.0]])
        );
        let r = s(json!({"e": {"embeddings": [1], "regenerate": true}}))
            .unwrap()
            .unwrap();
        assert_eq!((r.embeddings, r.regenerate), (Some(vec![vec![1.0]]), true));
        let r = s(json!({"e": {"regenerate": true}})).unwrap().unwrap();
        assert_eq!((r.embeddings, r.regenerate), (None, true));
        for bad in [
            json!({"e": "abc"}),
            json!({"e": [1, "a"]}),
            json!({"e": {"embeddings": [1]}}),
            json!({"e": {"regenerate": false, "x": 1}}),
            json!([1, 2]),
        ] {
            assert_eq!(s(bad).unwrap_err().code, Code::InvalidVectorsType);
        }
    }

    #[test]
    fn dimensions_are_checked() {
        let e = check_dimensions(&[vec![1.0; 3], vec![1.0; 2]], 3, "e", "7").unwrap_err();
        assert_eq!(e.code, Code::InvalidVectorDimensions);
        assert!(e.message.contains("embedding #1 has dimensions 2"));
    }

    #[test]
    fn configured_entries_leave_the_stored_document() {
        let mut d = doc(json!({"e": [1], "other": [1, 2]}));
        strip_configured(&mut d, &|n| n == "e");
        assert_eq!(d["_vectors"], json!({"other": [1, 2]}));
        let mut d = doc(json!({"e": [1]}));
        strip_configured(&mut d, &|n| n == "e");
        assert!(!d.contains_key("_vectors"));
    }
}
