//! Which fields each embedder source takes, checked when a settings update arrives (a 400
//! before any task), with Meilisearch's messages: a field the source does not use, a field it
//! needs, zero `dimensions`, an OpenAI model it does not know, a template that does not parse.
//! An update without `source` only merges into a stored embedder; its fields are checked when
//! the task applies it.

use api_types::{Code, Error, Result};
use serde_json::{Map, Value};

/// Every embedder field, in Meilisearch's order, with the sources that take it.
const FIELDS: [(&str, &[&str]); 16] = [
    ("source", ALL),
    ("model", &["openAi", "huggingFace", "ollama"]),
    ("revision", &["huggingFace"]),
    ("pooling", &["huggingFace"]),
    ("apiKey", &["openAi", "ollama", "rest"]),
    ("dimensions", &["openAi", "ollama", "userProvided", "rest"]),
    (
        "documentTemplate",
        &["openAi", "huggingFace", "ollama", "rest"],
    ),
    (
        "documentTemplateMaxBytes",
        &["openAi", "huggingFace", "ollama", "rest"],
    ),
    ("url", &["openAi", "ollama", "rest"]),
    ("request", &["rest"]),
    ("response", &["rest"]),
    ("headers", &["rest"]),
    ("searchEmbedder", &["composite"]),
    ("indexingEmbedder", &["composite"]),
    ("distribution", ALL),
    ("binaryQuantized", ALL),
];

const ALL: &[&str] = &[
    "openAi",
    "huggingFace",
    "ollama",
    "userProvided",
    "rest",
    "composite",
];

/// The fields a source cannot do without.
fn mandatory(source: &str) -> &'static [&'static str] {
    match source {
        "userProvided" => &["dimensions"],
        "ollama" => &["model"],
        "rest" => &["url", "request", "response"],
        "composite" => &["searchEmbedder", "indexingEmbedder"],
        _ => &[],
    }
}

/// The models the `openAi` source knows.
pub const OPENAI_MODELS: [&str; 3] = [
    "text-embedding-ada-002",
    "text-embedding-3-small",
    "text-embedding-3-large",
];

fn invalid(message: String) -> Error {
    Error::new(Code::InvalidSettingsEmbedders, message)
}

fn quoted(items: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    items
        .into_iter()
        .map(|s| format!("`{}`", s.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks the update of embedder `name` (`patch`, as sent; null fields reset and are not
/// checked). The first error only, as Meilisearch answers.
pub fn check_patch(name: &str, patch: &Map<String, Value>) -> Result<()> {
    if patch.get("dimensions").and_then(Value::as_u64) == Some(0) {
        return Err(invalid(format!(
            "`.embedders.{name}.dimensions`: `dimensions` cannot be zero"
        )));
    }
    if let Some(template) = patch.get("documentTemplate").and_then(Value::as_str) {
        crate::template::validate_setting(name, template)?;
    }
    let Some(source) = patch.get("source").and_then(Value::as_str) else {
        return Ok(());
    };
    for (field, value) in patch {
        if value.is_null() {
            continue;
        }
        let Some((_, sources)) = FIELDS.iter().find(|(f, _)| f == field) else {
            continue;
        };
        if !sources.contains(&source) {
            let available = FIELDS
                .iter()
                .filter(|(_, s)| s.contains(&source))
                .map(|(f, _)| *f);
            return Err(invalid(format!(
                "`.embedders.{name}`: Field `{field}` unavailable for source `{source}`.\n  - note: `{field}` is available for sources: {}\n  - note: available fields for source `{source}`: {}",
                quoted(sources.iter()),
                quoted(available)
            )));
        }
    }
    for field in mandatory(source) {
        if patch.get(*field).is_none_or(Value::is_null) {
            return Err(invalid(format!(
                "`.embedders.{name}`: Missing field `{field}` (note: this field is mandatory for source `{source}`)"
            )));
        }
    }
    if source == "composite" {
        for (key, role) in [
            ("searchEmbedder", "search"),
            ("indexingEmbedder", "indexing"),
        ] {
            if let Some(Value::Object(nested)) = patch.get(key) {
                check_nested(name, key, role, nested)?;
            }
        }
    }
    if source == "openAi" {
        if let Some(model) = patch.get("model").and_then(Value::as_str) {
            if !OPENAI_MODELS.contains(&model) {
                return Err(invalid(format!(
                    "`.embedders.{name}.model`: Invalid model `{model}` for OpenAI. Supported models: {}",
                    serde_json::to_string(&OPENAI_MODELS).unwrap_or_default()
                )));
            }
        }
    }
    Ok(())
}

/// Fields a nested embedder of a composite cannot have: the composite's own, and for the
/// search embedder what only indexing uses.
fn nested_unavailable(role: &str) -> &'static [&'static str] {
    match role {
        "search" => &[
            "documentTemplate",
            "documentTemplateMaxBytes",
            "distribution",
            "binaryQuantized",
            "searchEmbedder",
            "indexingEmbedder",
        ],
        _ => &[
            "distribution",
            "binaryQuantized",
            "searchEmbedder",
            "indexingEmbedder",
        ],
    }
}

/// One embedder of a composite (`searchEmbedder` or `indexingEmbedder`).
fn check_nested(name: &str, key: &str, role: &str, nested: &Map<String, Value>) -> Result<()> {
    let path = format!(".embedders.{name}.{key}");
    let Some(source) = nested.get("source").and_then(Value::as_str) else {
        return Err(invalid(format!("`{path}`: Missing field `source`")));
    };
    if source == "userProvided" || source == "composite" {
        return Err(invalid(format!(
            "`{path}.source`: Source `{source}` is not available in a nested embedder"
        )));
    }
    let unavailable = nested_unavailable(role);
    let available = FIELDS
        .iter()
        .filter(|(f, s)| s.contains(&source) && !unavailable.contains(f))
        .map(|(f, _)| *f);
    let available = quoted(available);
    for (field, value) in nested {
        if value.is_null() {
            continue;
        }
        let Some((_, sources)) = FIELDS.iter().find(|(f, _)| f == field) else {
            continue;
        };
        if unavailable.contains(&field.as_str()) && sources.contains(&source) {
            return Err(invalid(format!(
                "`{path}`: Field `{field}` unavailable for source `{source}` for the {role} embedder.\n  - note: available fields for source `{source}` for the {role} embedder: {available}\n  - note: `{field}` is available when source `{source}` is not for the {role} embedder"
            )));
        }
        if !sources.contains(&source) || unavailable.contains(&field.as_str()) {
            return Err(invalid(format!(
                "`{path}`: Field `{field}` unavailable for source `{source}`.\n  - note: `{field}` is available for sources: {}\n  - note: available fields for source `{source}`: {available}",
                quoted(sources.iter())
            )));
        }
    }
    for field in mandatory(source) {
        if nested.get(*field).is_none_or(Value::is_null) {
            return Err(invalid(format!(
                "`{path}`: Missing field `{field}` (note: this field is mandatory for source `{source}`)"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(v: Value) -> std::result::Result<(), String> {
        check_patch("x", v.as_object().unwrap()).map_err(|e| e.message)
    }

    #[test]
    fn meilisearch_messages() {
        assert_eq!(
            check(json!({"source": "userProvided"})).unwrap_err(),
            "`.embedders.x`: Missing field `dimensions` (note: this field is mandatory for source `userProvided`)"
        );
        assert_eq!(
            check(json!({"source": "userProvided", "dimensions": 3, "documentTemplate": "a"})).unwrap_err(),
            "`.embedders.x`: Field `documentTemplate` unavailable for source `userProvided`.\n  - note: `documentTemplate` is available for sources: `openAi`, `huggingFace`, `ollama`, `rest`\n  - note: available fields for source `userProvided`: `source`, `dimensions`, `distribution`, `binaryQuantized`"
        );
        assert_eq!(
            check(json!({"source": "rest", "url": "http://127.0.0.1:9/x", "request": {}})).unwrap_err(),
            "`.embedders.x`: Missing field `response` (note: this field is mandatory for source `rest`)"
        );
        assert_eq!(
            check(json!({"source": "openAi", "dimensions": 0})).unwrap_err(),
            "`.embedders.x.dimensions`: `dimensions` cannot be zero"
        );
        assert!(check(json!({"source": "openAi", "model": "nope"}))
            .unwrap_err()
            .starts_with("`.embedders.x.model`: Invalid model `nope` for OpenAI."));
        assert!(check(json!({"source": "huggingFace", "model": "a/b"})).is_ok());
        assert!(check(json!({"binaryQuantized": true})).is_ok());
        assert!(check(json!({"source": "userProvided", "dimensions": 3, "model": null})).is_ok());
        let rest = json!({"source": "rest", "url": "http://127.0.0.1:9/", "request": "{{text}}", "response": "{{embedding}}", "dimensions": 3});
        assert_eq!(
            check(json!({"source": "composite", "searchEmbedder": {"source": "userProvided", "dimensions": 3}, "indexingEmbedder": rest})).unwrap_err(),
            "`.embedders.x.searchEmbedder.source`: Source `userProvided` is not available in a nested embedder"
        );
        let mut with_template = rest.clone();
        with_template["documentTemplate"] = json!("x");
        assert_eq!(
            check(json!({"source": "composite", "searchEmbedder": with_template, "indexingEmbedder": rest})).unwrap_err(),
            "`.embedders.x.searchEmbedder`: Field `documentTemplate` unavailable for source `rest` for the search embedder.\n  - note: available fields for source `rest` for the search embedder: `source`, `apiKey`, `dimensions`, `url`, `request`, `response`, `headers`\n  - note: `documentTemplate` is available when source `rest` is not for the search embedder"
        );
        assert!(check(json!({"source": "composite", "searchEmbedder": rest, "indexingEmbedder": with_template})).is_ok());
        assert_eq!(
            check(json!({"source": "composite", "searchEmbedder": rest})).unwrap_err(),
            "`.embedders.x`: Missing field `indexingEmbedder` (note: this field is mandatory for source `composite`)"
        );
    }
}
