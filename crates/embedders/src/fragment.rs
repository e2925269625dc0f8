//! Fragments: what a `rest` embedder of the `multimodal` feature embeds instead of a document
//! template. `indexingFragments` and `searchFragments` map names to `{ "value": <JSON> }`; every
//! string inside a value is a Liquid template. The embedder's `request` holds `{{fragment}}`
//! where one rendered value goes (or `[<item>, "{{..}}"]` for several).
//!
//! - Indexing: each indexing fragment is rendered with `doc` (the document); a fragment naming
//!   a field the document lacks does not render, and gives the document no embedding. A
//!   document gets one embedding per fragment that renders, in name order.
//! - Search: the search fragments are rendered with `q` (the query text, when not blank) and
//!   `media` (the `media` parameter, when given); exactly one must render, else the search fails
//!   (none: "matches no search fragment"; two: "matches multiple search fragments"), as in
//!   Meilisearch 1.50.

use std::collections::BTreeMap;

use api_types::{Code, Error, Result};
use liquid::model::{Object, Value as LValue};
use serde_json::{Map, Value};

use crate::template::{parser, to_liquid};

/// The fragments of one embedder, by name (entries removed with `null` are not here).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Fragments {
    pub indexing: BTreeMap<String, Value>,
    pub search: BTreeMap<String, Value>,
}

impl Fragments {
    /// Reads `indexingFragments` and `searchFragments` of a stored embedder object; None when
    /// both are absent or empty (the embedder embeds its document template).
    pub fn read(config: &Map<String, Value>) -> Option<Fragments> {
        let map = |key: &str| -> BTreeMap<String, Value> {
            config
                .get(key)
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .filter_map(|(name, f)| Some((name.clone(), f.get("value")?.clone())))
                        .collect()
                })
                .unwrap_or_default()
        };
        let fragments = Fragments {
            indexing: map("indexingFragments"),
            search: map("searchFragments"),
        };
        (!fragments.indexing.is_empty() || !fragments.search.is_empty()).then_some(fragments)
    }
}

fn user_error(message: String) -> Error {
    Error::new(
        Code::VectorEmbeddingError,
        format!("Error while generating embeddings: user error: {message}"),
    )
}

/// Where a string is inside a JSON value.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// A JSON value whose strings are Liquid templates.
pub struct JsonTemplate {
    value: Value,
    templates: Vec<(Vec<Step>, liquid::Template)>,
}

impl JsonTemplate {
    /// Parses every string of `value`; fails with the path of the first that does not parse
    /// (`root` names the value, e.g. `.indexingFragments.basic`).
    pub fn new(value: &Value, root: &str) -> std::result::Result<JsonTemplate, String> {
        let parser = parser();
        let mut templates = Vec::new();
        let mut path = Vec::new();
        // Meilisearch's wording, quoted path and all.
        collect(value, &mut path, &parser, &mut templates).map_err(|(at, e)| {
            match at.is_empty() {
                true => format!("error while parsing template: {e}"),
                false => format!(
                    "in ``{root}{}``, error while parsing template: {e}",
                    show(&at)
                ),
            }
        })?;
        Ok(JsonTemplate {
            value: value.clone(),
            templates,
        })
    }

    /// The value with each string rendered from `globals`; None when one does not render
    /// (a variable or field it names is missing).
    fn render(&self, globals: &Object) -> Option<Value> {
        let mut out = self.value.clone();
        for (path, template) in &self.templates {
            let text = template.render(globals).ok()?;
            let mut at = &mut out;
            for step in path {
                at = match step {
                    Step::Key(k) => at.get_mut(k)?,
                    Step::Index(i) => at.get_mut(*i)?,
                };
            }
            *at = Value::String(text);
        }
        Some(out)
    }
}

type Collected = Vec<(Vec<Step>, liquid::Template)>;

fn collect(
    value: &Value,
    path: &mut Vec<Step>,
    parser: &liquid::Parser,
    out: &mut Collected,
) -> std::result::Result<(), (Vec<Step>, liquid::Error)> {
    match value {
        Value::String(s) => {
            let t = parser.parse(s).map_err(|e| (path.clone(), e))?;
            out.push((path.clone(), t));
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                path.push(Step::Index(i));
                collect(v, path, parser, out)?;
                path.pop();
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                path.push(Step::Key(k.clone()));
                collect(v, path, parser, out)?;
                path.pop();
            }
        }
        _ => {}
    }
    Ok(())
}

fn show(path: &[Step]) -> String {
    path.iter()
        .map(|s| match s {
            Step::Key(k) => format!(".{k}"),
            Step::Index(i) => format!("[{i}]"),
        })
        .collect()
}

/// Parses one map of fragments (`what`: `indexingFragments` or `searchFragments`).
fn parse_all(map: &BTreeMap<String, Value>, what: &str) -> Result<Vec<(String, JsonTemplate)>> {
    map.iter()
        .map(|(name, v)| {
            JsonTemplate::new(v, &format!(".{what}.{name}"))
                .map(|t| (name.clone(), t))
                .map_err(user_error)
        })
        .collect()
}

/// The indexing fragments of an embedder, parsed once for a batch of documents.
pub struct IndexingFragments {
    list: Vec<(String, JsonTemplate)>,
}

impl IndexingFragments {
    pub fn new(fragments: &Fragments) -> Result<IndexingFragments> {
        Ok(IndexingFragments {
            list: parse_all(&fragments.indexing, "indexingFragments")?,
        })
    }

    /// The fragments `doc` renders (its `_vectors` unseen), in name order.
    pub fn render(&self, doc: &Map<String, Value>) -> Vec<Value> {
        let doc_object: Object = doc
            .iter()
            .filter(|(k, _)| k.as_str() != "_vectors")
            .map(|(k, v)| (k.clone().into(), to_liquid(v)))
            .collect();
        let mut globals = Object::new();
        globals.insert("doc".into(), LValue::Object(doc_object));
        self.list
            .iter()
            .filter_map(|(_, t)| t.render(&globals))
            .collect()
    }
}

/// The one search fragment a query renders: `q` (None when blank) and `media`.
pub fn render_search(
    fragments: &Fragments,
    q: Option<&str>,
    media: Option<&Value>,
) -> Result<Value> {
    let mut globals = Object::new();
    if let Some(q) = q {
        globals.insert("q".into(), LValue::scalar(q.to_string()));
    }
    if let Some(m) = media {
        globals.insert("media".into(), to_liquid(m));
    }
    let note = || serde_json::json!({ "q": q, "media": media }).to_string();
    let mut found: Option<(String, Value)> = None;
    for (name, template) in parse_all(&fragments.search, "searchFragments")? {
        let Some(rendered) = template.render(&globals) else {
            continue;
        };
        if let Some((first, _)) = &found {
            return Err(user_error(format!(
                "Query matches multiple search fragments.\n  - Note: First matched fragment `{first}`.\n  - Note: Second matched fragment `{name}`.\n  - Note: {}",
                note()
            )));
        }
        found = Some((name, rendered));
    }
    found.map(|(_, v)| v).ok_or_else(|| {
        user_error(format!(
            "Query matches no search fragment.\n  - Note: {}",
            note()
        ))
    })
}

/// The error of a `media` query to an embedder without search fragments (`rest`: `source`
/// is its source's name).
pub fn media_without_fragments(source: &str) -> Error {
    match source {
        "rest" => user_error("`media` requested, and the configuration has source `rest`, but the configuration doesn't have `searchFragments`.".into()),
        _ => user_error("`media` requested but the configuration doesn't have source `rest`".into()),
    }
}

/// The checks a settings update gets before it is queued, on the embedder object as sent:
/// its fragments parse, and they do not come with a `documentTemplate`.
pub fn check_patch(patch: &Map<String, Value>) -> Result<()> {
    let Some(fragments) = Fragments::read(patch) else {
        return Ok(());
    };
    parse_all(&fragments.indexing, "indexingFragments")?;
    parse_all(&fragments.search, "searchFragments")?;
    if patch.get("documentTemplate").is_some_and(Value::is_string) {
        return Err(both(&fragments));
    }
    Ok(())
}

fn both(fragments: &Fragments) -> Error {
    user_error(format!(
        "cannot pass both fragments and a document template.\n  - Note: {} fragments declared in `indexingFragments` and {} fragments declared in `search_fragments_len`.\n  - Hint: remove the declared fragments or remove the `documentTemplate`",
        fragments.indexing.len(),
        fragments.search.len()
    ))
}

/// Checks the fragments of one (non-composite) embedder as stored after an update: they parse,
/// they come with no `documentTemplate`, both kinds are declared, and `dimensions` is given.
pub fn check(
    fragments: &Fragments,
    document_template: Option<&str>,
    dimensions: Option<usize>,
) -> Result<()> {
    parse_all(&fragments.indexing, "indexingFragments")?;
    parse_all(&fragments.search, "searchFragments")?;
    if document_template.is_some() {
        return Err(both(fragments));
    }
    let names = |m: &BTreeMap<String, Value>| {
        let mut s = m.keys().take(3).cloned().collect::<Vec<_>>().join(", ");
        if m.len() > 3 {
            s.push_str(", ...");
        }
        s
    };
    if fragments.indexing.is_empty() {
        return Err(user_error(format!(
            "inconsistent fragments: `indexingFragments` is empty, but `searchFragments` declares {} fragments: {}\n  - Hint: declare at least one fragment in `indexingFragments` or remove fragments from `searchFragments` by setting them to `null`",
            fragments.search.len(),
            names(&fragments.search)
        )));
    }
    if fragments.search.is_empty() {
        return Err(user_error(format!(
            "inconsistent fragments: `searchFragments` is empty, but `indexingFragments` declares {} fragments: {}\n - Hint: declare at least one fragment in `searchFragments` or remove fragments from `indexingFragments` by setting them to `null`",
            fragments.indexing.len(),
            names(&fragments.indexing)
        )));
    }
    if dimensions.is_none() {
        return Err(user_error("cannot infer `dimensions` for an embedder using `indexingFragments`.\n  - Note: Specify `dimensions` explicitly or don't use `indexingFragments`.".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fragments() -> Fragments {
        Fragments::read(
            json!({
                "indexingFragments": {
                    "withBreed": {"value": "{{ doc.name }} is a {{ doc.breed }}"},
                    "basic": {"value": {"text": "{{ doc.name }} is a dog", "n": 1}},
                    "gone": null
                },
                "searchFragments": {
                    "justBreed": {"value": "It's a {{ media.breed }}"},
                    "justName": {"value": "{{ media.name }} is a dog"},
                    "query": {"value": ["Some pre-prompt for query {{ q }}"]}
                }
            })
            .as_object()
            .unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn documents_render_the_fragments_they_have_fields_for() {
        let f = IndexingFragments::new(&fragments()).unwrap();
        let kefir = json!({"id": 0, "name": "kefir"});
        assert_eq!(
            f.render(kefir.as_object().unwrap()),
            vec![json!({"text": "kefir is a dog", "n": 1})]
        );
        let intel = json!({"id": 2, "name": "intel", "breed": "labrador"});
        assert_eq!(
            f.render(intel.as_object().unwrap()),
            vec![
                json!({"text": "intel is a dog", "n": 1}),
                json!("intel is a labrador")
            ]
        );
    }

    #[test]
    fn a_query_renders_exactly_one_search_fragment() {
        let f = fragments();
        assert_eq!(
            render_search(&f, Some("bulldog"), None).unwrap(),
            json!(["Some pre-prompt for query bulldog"])
        );
        assert_eq!(
            render_search(&f, None, Some(&json!({"breed": "labrador"}))).unwrap(),
            json!("It's a labrador")
        );
        let two = render_search(
            &f,
            None,
            Some(&json!({"name": "dustin", "breed": "labrador"})),
        )
        .unwrap_err();
        assert_eq!(two.message, "Error while generating embeddings: user error: Query matches multiple search fragments.\n  - Note: First matched fragment `justBreed`.\n  - Note: Second matched fragment `justName`.\n  - Note: {\"q\":null,\"media\":{\"name\":\"dustin\",\"breed\":\"labrador\"}}");
        let none = render_search(&f, None, Some(&json!({"ticker": "GME"}))).unwrap_err();
        assert!(none.message.contains("Query matches no search fragment."));
    }

    #[test]
    fn checks_follow_meilisearch() {
        let f = fragments();
        assert!(check(&f, None, Some(3)).is_ok());
        assert!(check(&f, Some("{{doc.name}}"), Some(3))
            .unwrap_err()
            .message
            .contains("cannot pass both fragments and a document template"));
        assert!(check(&f, None, None)
            .unwrap_err()
            .message
            .contains("cannot infer `dimensions`"));
        let only_search = Fragments {
            indexing: BTreeMap::new(),
            search: f.search.clone(),
        };
        assert!(check(&only_search, None, Some(3))
            .unwrap_err()
            .message
            .contains("`indexingFragments` is empty"));
        let bad = Fragments::read(
            json!({"indexingFragments": {"a": {"value": {"x": ["{{ doc.name "]}}}, "searchFragments": {"q": {"value": "{{q}}"}}})
                .as_object()
                .unwrap(),
        )
        .unwrap();
        let e = check(&bad, None, Some(3)).unwrap_err().message;
        assert!(
            e.starts_with("Error while generating embeddings: user error: in ``.indexingFragments.a.x[0]``, error while parsing template: liquid:"),
            "{e}"
        );
    }
}
