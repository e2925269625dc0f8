//! `_vectors` conditions, as Meilisearch 1.50 reads them: `_vectors EXISTS` (documents with an
//! embedding of any embedder), `_vectors.<embedder> EXISTS`, and with a suffix
//! `.userProvided` (embeddings the document gave), `.documentTemplate` (generated from the
//! template), `.regenerate` (that the source regenerates) or `.fragments.<name>` (generated from
//! that indexing fragment); `NOT EXISTS` negates. They need no filterable attribute. The
//! documents each one selects are resolved on the index before the filter is evaluated
//! ([`super::Filter::resolve_vectors`]).

use super::Token;

/// What a `_vectors` condition asks of an embedder's documents.
#[derive(Debug, Clone, PartialEq)]
pub enum VectorKind {
    Any,
    UserProvided,
    DocumentTemplate,
    Regenerate,
    Fragment(String),
}

/// One `_vectors` condition: its field (for error positions), embedder (None: any) and kind.
#[derive(Debug, Clone)]
pub struct VectorCondition {
    pub field: Token,
    pub embedder: Option<String>,
    pub kind: VectorKind,
}

const SUFFIXES: &str = "`fragments`, `userProvided`, `documentTemplate`, `regenerate`";

/// Whether a condition is a `_vectors` one: `EXISTS` on `_vectors` or `_vectors.` and more
/// (with another operator, `_vectors.…` is an ordinary attribute, as in Meilisearch).
pub fn is_vector_condition(field: &str, op: &super::Op) -> bool {
    *op == super::Op::Exists && (field == "_vectors" || field.starts_with("_vectors."))
}

/// A syntax error: Meilisearch's message, and the byte range of `field` it points at.
pub type SyntaxError = (String, usize, usize);

/// Reads a `_vectors` field into its embedder and kind, or Meilisearch's syntax error.
pub fn read(field: &str) -> Result<Read, SyntaxError> {
    read_message(field).map_err(|(m, part)| {
        // The part of the field the message is about (the end of the field when none).
        let (start, end) = match part {
            Some(p) => {
                let start = field.rfind(p).unwrap_or(field.len());
                (start, start + p.len())
            }
            None => (field.len(), field.len()),
        };
        (m, start, end)
    })
}

/// What a `_vectors` field names: its embedder (None: any) and what it asks of it.
type Read = (Option<String>, VectorKind);

fn read_message(field: &str) -> Result<Read, (String, Option<&str>)> {
    let Some(rest) = field.strip_prefix("_vectors.") else {
        return Ok((None, VectorKind::Any));
    };
    let (embedder, suffix) = match rest.split_once('.') {
        Some((e, s)) => (e, Some(s)),
        None => (rest, None),
    };
    if embedder.is_empty() {
        return Err((
            "Was expecting embedder name but found nothing.".into(),
            None,
        ));
    }
    let Some(suffix) = suffix else {
        return Ok((Some(embedder.to_string()), VectorKind::Any));
    };
    if suffix.is_empty() {
        return Err(("Was expecting one of `.fragments`, `.userProvided`, `.documentTemplate`, `.regenerate` or nothing, but instead found a point without a valid value.".into(), None));
    }
    let (head, tail) = match suffix.split_once('.') {
        Some((h, t)) => (h, Some(t)),
        None => (suffix, None),
    };
    let both = |first: &str, second: &str| {
        format!("Vector filter can only accept one of `fragments`, `userProvided`, `documentTemplate` or `regenerate`, but found both `{first}` and `{second}`.")
    };
    let kind = match head {
        "fragments" => {
            let Some(tail) = tail.filter(|t| !t.is_empty()) else {
                return Err(("The vector filter is missing a fragment name.".into(), None));
            };
            if let Some((_, more)) = tail.split_once('.') {
                let part = more.split('.').next().unwrap_or(more);
                return Err((both("fragments", part), Some(part)));
            }
            return Ok((
                Some(embedder.to_string()),
                VectorKind::Fragment(tail.to_string()),
            ));
        }
        "userProvided" => VectorKind::UserProvided,
        "documentTemplate" => VectorKind::DocumentTemplate,
        "regenerate" => VectorKind::Regenerate,
        other => {
            return Err((
                format!("Was expecting one of {SUFFIXES} or nothing, but instead found `{other}`."),
                Some(other),
            ))
        }
    };
    if let Some(tail) = tail {
        let part = tail.split('.').next().unwrap_or(tail);
        return Err((both(head, part), Some(part)));
    }
    Ok((Some(embedder.to_string()), kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_as_meilisearch_reads_them() {
        assert_eq!(read("_vectors").unwrap(), (None, VectorKind::Any));
        assert_eq!(
            read("_vectors.e").unwrap(),
            (Some("e".into()), VectorKind::Any)
        );
        assert_eq!(
            read("_vectors.e.userProvided").unwrap(),
            (Some("e".into()), VectorKind::UserProvided)
        );
        assert_eq!(
            read("_vectors.e.fragments.basic").unwrap(),
            (Some("e".into()), VectorKind::Fragment("basic".into()))
        );
        assert_eq!(
            read("_vectors.").unwrap_err(),
            (
                "Was expecting embedder name but found nothing.".into(),
                9,
                9
            )
        );
        assert_eq!(
            read("_vectors.e.fragments").unwrap_err().0,
            "The vector filter is missing a fragment name."
        );
        let (m, start, end) = read("_vectors.e.nope").unwrap_err();
        assert!(m.contains("instead found `nope`") && (start, end) == (11, 15));
        assert!(read("_vectors.e.regenerate.x")
            .unwrap_err()
            .0
            .contains("found both `regenerate` and `x`"));
        assert!(!is_vector_condition("_vectorsx", &super::super::Op::Exists));
        assert!(!is_vector_condition("_vectors.e", &super::super::Op::Null));
    }
}
