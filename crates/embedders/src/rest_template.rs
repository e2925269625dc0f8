//! The checks of a `rest` embedder's `request` and `response` templates, with Meilisearch
//! 1.50's messages: the placeholder (`{{text}}`, or `{{fragment}}` for an embedder with
//! fragments, in `request`; `{{embedding}}` in `response`) is a whole string value found
//! exactly once, or once inside the first item of an array whose second item is `{{..}}`
//! (one item per input); `{{..}}` appears once, at position #1 of an array, not nested; and
//! `response` repeats exactly when `request` does.

use api_types::{Code, Error, Result};
use serde_json::{Map, Value};

pub const TEXT: &str = "{{text}}";
pub const FRAGMENT: &str = "{{fragment}}";
pub const EMBEDDING: &str = "{{embedding}}";
pub const REPEAT: &str = "{{..}}";

#[derive(Clone, Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

fn show(root: &str, path: &[Step]) -> String {
    let mut s = format!("`{root}");
    for step in path {
        match step {
            Step::Key(k) => s.push_str(&format!(".{k}")),
            Step::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s.push('`');
    s
}

/// Where the placeholder was found: alone, or inside a repeated value.
enum Found {
    Single(Vec<Step>),
    Repeated { array: Vec<Step>, inner: Vec<Step> },
}

struct Walk<'a> {
    root: &'a str,
    placeholder: &'a str,
    found: Option<Found>,
    repeat: Option<Vec<Step>>,
}

impl Walk<'_> {
    fn placeholder_at(
        &mut self,
        path: &[Step],
        repeated: Option<&[Step]>,
    ) -> std::result::Result<(), String> {
        let (p, root) = (self.placeholder, self.root);
        let here = match repeated {
            Some(array) => Found::Repeated {
                array: array.to_vec(),
                inner: path[array.len() + 1..].to_vec(),
            },
            None => Found::Single(path.to_vec()),
        };
        match (&self.found, &here) {
            (None, _) => {
                self.found = Some(here);
                Ok(())
            }
            (Some(Found::Single(previous)), Found::Single(current)) => Err(format!(
                r#"in {}: Found "{p}", but it was already present in {}"#,
                show(root, current),
                show(root, previous)
            )),
            (Some(Found::Repeated { array, inner }), Found::Single(single))
            | (Some(Found::Single(single)), Found::Repeated { array, inner }) => {
                let mut first = array.clone();
                first.push(Step::Index(0));
                first.extend(inner.iter().cloned());
                Err(format!(
                    r#"in {}: Found "{p}", but it was already present in {} (repeated)"#,
                    show(root, single),
                    show(root, &first)
                ))
            }
            (Some(Found::Repeated { .. }), Found::Repeated { .. }) => Err(format!(
                r#"in {}: Found "{p}", but it was already present in {}"#,
                show(root, path),
                show(root, path)
            )),
        }
    }

    fn visit(
        &mut self,
        v: &Value,
        path: &mut Vec<Step>,
        repeated: Option<&[Step]>,
    ) -> std::result::Result<(), String> {
        let root = self.root;
        match v {
            Value::String(s) if s == REPEAT => Err(format!(
                r#"in {}: "{REPEAT}" appears outside of an array"#,
                show(root, path)
            )),
            Value::String(s) if s == self.placeholder => self.placeholder_at(path, repeated),
            Value::Array(items) => {
                let repeats = items.get(1).and_then(Value::as_str) == Some(REPEAT);
                for (i, item) in items.iter().enumerate() {
                    path.push(Step::Index(i));
                    if item.as_str() == Some(REPEAT) {
                        if i != 1 {
                            return Err(format!(
                                r#"in {}: "{REPEAT}" expected at position #1, but found at position #{i}"#,
                                show(root, path)
                            ));
                        }
                        if repeated.is_some() {
                            return Err(format!(
                                r#"in {}: "{REPEAT}" appears nested inside of a value that is itself repeated"#,
                                show(root, path)
                            ));
                        }
                        if let Some(previous) = &self.repeat {
                            return Err(format!(
                                r#"in {}: Found "{REPEAT}", but it was already present in {}"#,
                                show(root, path),
                                show(root, previous)
                            ));
                        }
                        self.repeat = Some(path.clone());
                    } else if i == 0 && repeats && repeated.is_none() {
                        let array = path[..path.len() - 1].to_vec();
                        self.visit(item, path, Some(&array))?;
                        let inside = matches!(&self.found, Some(Found::Repeated { array: a, .. }) if *a == array);
                        if !inside {
                            return Err(format!(
                                r#"in {}: Expected "{}" inside of the repeated value"#,
                                show(root, path),
                                self.placeholder
                            ));
                        }
                    } else {
                        self.visit(item, path, repeated)?;
                    }
                    path.pop();
                }
                Ok(())
            }
            Value::Object(map) => {
                // In key order, as Meilisearch reads them (which decides which of two is "found").
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                for k in keys {
                    path.push(Step::Key(k.clone()));
                    self.visit(&map[k], path, repeated)?;
                    path.pop();
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// Checks one template; returns whether it repeats (several inputs or embeddings per call).
fn check(template: &Value, root: &str, placeholder: &str) -> std::result::Result<bool, String> {
    let mut walk = Walk {
        root,
        placeholder,
        found: None,
        repeat: None,
    };
    walk.visit(template, &mut Vec::new(), None)?;
    match walk.found {
        None => Err(format!(r#"in `{root}`: "{placeholder}" not found"#)),
        Some(Found::Repeated { .. }) => Ok(true),
        Some(Found::Single(_)) => Ok(false),
    }
}

fn user_error(message: String) -> Error {
    Error::new(
        Code::VectorEmbeddingError,
        format!("Error while generating embeddings: user error: {message}"),
    )
}

/// Checks `request` (with `{{fragment}}` when `fragments`, else `{{text}}`) and, when given,
/// `response` against it.
pub fn check_templates(request: &Value, response: Option<&Value>, fragments: bool) -> Result<()> {
    let (placeholder, note) = match fragments {
        true => (FRAGMENT, format!("\n  - Note: this template is using fragments, and so expects to contain the placeholder {FRAGMENT:?} rathern than {TEXT:?}")),
        false => (TEXT, format!("\n  - Note: this template is using a document template, and so expects to contain the placeholder {TEXT:?} rather than {FRAGMENT:?}")),
    };
    let many =
        check(request, "request", placeholder).map_err(|m| user_error(format!("{m}{note}")))?;
    let Some(response) = response else {
        return Ok(());
    };
    let many_embeddings = check(response, "response", EMBEDDING).map_err(user_error)?;
    match (many_embeddings, many) {
        (true, false) => Err(user_error("in `response`: `response` has multiple embeddings, but `request` has only one text to embed".into())),
        (false, true) => Err(user_error("in `response`: `response` has a single embedding, but `request` has multiple texts to embed".into())),
        _ => Ok(()),
    }
}

/// The checks of a settings update before it is queued, on a `rest` embedder object as sent
/// (`request` and `response` when it gives them). Which placeholder applies is known only once
/// merged with the stored object: here `{{fragment}}` when the object declares fragments or
/// its `request` uses it, and the task checks again ([`check_templates`]).
pub fn check_patch(patch: &Map<String, Value>) -> Result<()> {
    if patch.get("source").and_then(Value::as_str) != Some("rest") {
        return Ok(());
    }
    let Some(request) = patch.get("request").filter(|r| !r.is_null()) else {
        return Ok(());
    };
    let fragments =
        crate::fragment::Fragments::read(patch).is_some() || mentions(request, FRAGMENT);
    check_templates(
        request,
        patch.get("response").filter(|r| !r.is_null()),
        fragments,
    )
}

/// [`check_templates`] on a stored configuration (each half of a composite), when a settings
/// task runs.
pub fn check_config(config: &crate::EmbedderConfig) -> Result<()> {
    match &config.source {
        crate::Source::Rest {
            request,
            response,
            fragments,
            ..
        } => check_templates(
            request,
            Some(response).filter(|r| !r.is_null()),
            fragments.is_some(),
        ),
        crate::Source::Composite { indexing, search } => {
            check_config(indexing)?;
            check_config(search)
        }
        _ => Ok(()),
    }
}

fn mentions(v: &Value, s: &str) -> bool {
    match v {
        Value::String(x) => x == s,
        Value::Array(a) => a.iter().any(|v| mentions(v, s)),
        Value::Object(o) => o.values().any(|v| mentions(v, s)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(request: Value, response: Value, fragments: bool) -> String {
        check_templates(&request, Some(&response), fragments)
            .map(|_| String::new())
            .unwrap_or_else(|e| {
                e.message
                    .trim_start_matches("Error while generating embeddings: user error: ")
                    .to_string()
            })
    }

    #[test]
    fn meilisearch_messages() {
        let one = json!({"data": "{{embedding}}"});
        let many = json!({"data": [{"e": "{{embedding}}"}, "{{..}}"]});
        assert_eq!(
            message(json!({"input": "{{text}}"}), one.clone(), false),
            ""
        );
        assert_eq!(
            message(
                json!({"input": ["{{text}}", "{{..}}"]}),
                many.clone(),
                false
            ),
            ""
        );
        assert_eq!(
            message(
                json!({"input": [{"t": "{{fragment}}"}, "{{..}}"]}),
                many.clone(),
                true
            ),
            ""
        );
        assert!(message(json!({"input": "say {{text}}"}), one.clone(), false)
            .starts_with("in `request`: \"{{text}}\" not found\n  - Note: this template is using a document template"));
        assert!(message(json!({"input": ["{{text}}", "{{..}}"]}), one.clone(), true)
            .starts_with("in `request.input[0]`: Expected \"{{fragment}}\" inside of the repeated value\n  - Note: this template is using fragments"));
        assert!(message(json!({"input": ["{{text}}", "{{..}}"], "x": "{{text}}"}), many.clone(), false)
            .starts_with("in `request.x`: Found \"{{text}}\", but it was already present in `request.input[0]` (repeated)"));
        assert!(message(
            json!({"input": "{{text}}", "x": "{{text}}"}),
            one.clone(),
            false
        )
        .starts_with(
            "in `request.x`: Found \"{{text}}\", but it was already present in `request.input`"
        ));
        assert_eq!(
            message(json!({"input": ["{{text}}", "{{..}}"]}), one, false),
            "in `response`: `response` has a single embedding, but `request` has multiple texts to embed"
        );
        assert_eq!(
            message(json!({"input": "{{text}}"}), many, false),
            "in `response`: `response` has multiple embeddings, but `request` has only one text to embed"
        );
        assert!(message(
            json!({"input": ["{{..}}", "{{text}}"]}),
            json!("{{embedding}}"),
            false
        )
        .starts_with(
            "in `request.input[0]`: \"{{..}}\" expected at position #1, but found at position #0"
        ));
        assert!(message(
            json!({"input": "{{..}}", "t": "{{text}}"}),
            json!("{{embedding}}"),
            false
        )
        .starts_with("in `request.input`: \"{{..}}\" appears outside of an array"));
    }
}
