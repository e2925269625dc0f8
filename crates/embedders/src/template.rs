//! `documentTemplate`: the text an embedder embeds for one document, a Liquid template.
//!
//! The template sees two objects:
//! - `doc`: the document itself; nested fields are reached with dots (`{{ doc.a.b }}`) or
//!   indexes (`{{ doc.list[0] }}`). Naming a field the document lacks is a rendering error, as in
//!   Meilisearch 1.50 (`Unknown index`).
//! - `fields`: one `{name, value, is_searchable}` object per top-level field of the document, in
//!   document order. Values render as Liquid renders JSON values: numbers as written (`1.0`
//!   becomes `1`), `null` as nothing, arrays as their items run together, objects as keys and
//!   values run together (in no fixed key order: Liquid's objects are hash maps, and Meilisearch
//!   shows the same; templates that need a stable text name the nested fields).
//!
//! Without a configured template the default one (Meilisearch's) is used: one line
//! `name: value` per searchable, non-null field. The rendered text is cut to
//! `documentTemplateMaxBytes` (default 400) at a character boundary, as the specification asks.
//! (Meilisearch 1.50 itself sends the whole rendered text; the limit only sizes its buffer.)
//!
//! Errors carry Meilisearch's codes and messages: [`validate_setting`] for a settings update
//! (`invalid_settings_embedders`), [`DocumentTemplate::new`] and [`DocumentTemplate::render`] for
//! the render route (`template_parsing_error`, `template_rendering_error`), and
//! [`RenderError::for_document`] for indexing (`invalid_document_fields`).

use std::fmt;
use std::sync::Arc;

use api_types::{Code, Error, Result};
use liquid::model::{Object, Value as LValue};
use serde_json::{Map, Value};

/// `documentTemplateMaxBytes` when none is configured.
pub const DEFAULT_MAX_BYTES: usize = 400;

/// Meilisearch's default `documentTemplate` (what `GET /settings/embedders` shows for an embedder
/// without one): every searchable field whose value is not null, as `name: value` lines.
pub const DEFAULT_TEMPLATE: &str = "{% for field in fields %}{% if field.is_searchable and field.value != nil %}{{ field.name }}: {{ field.value }}\n{% endif %}{% endfor %}";

/// A parsed document template with its byte limit. Cheap to share across threads.
#[derive(Clone)]
pub struct DocumentTemplate {
    template: Arc<liquid::Template>,
    source: Arc<str>,
    max_bytes: usize,
}

impl fmt::Debug for DocumentTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DocumentTemplate")
            .field("source", &self.source)
            .field("max_bytes", &self.max_bytes)
            .finish()
    }
}

/// Why a template failed to render one document: Liquid's own explanation, without any prefix.
/// Turn it into the error of the caller's context with [`RenderError::for_render_route`] or
/// [`RenderError::for_document`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderError {
    /// Liquid's message, e.g. "liquid: Unknown variable\n  with:\n    requested variable=foo\n".
    pub liquid: String,
}

impl RenderError {
    /// The render route's error: `template_rendering_error`.
    pub fn for_render_route(&self) -> Error {
        Error::new(
            Code::TemplateRenderingError,
            format!(
                "error while rendering template: user error: missing field in document: {}",
                self.liquid
            ),
        )
    }

    /// The error of an indexing task that rendered document `external_id` of index `index_uid`:
    /// `invalid_document_fields`.
    pub fn for_document(&self, index_uid: &str, external_id: &str) -> Error {
        Error::new(
            Code::InvalidDocumentFields,
            format!(
                "Index `{index_uid}`: user error: missing field in document `{external_id}`: {}",
                self.liquid
            ),
        )
    }
}

pub(crate) fn parser() -> liquid::Parser {
    // The standard library only registers tags and filters: building it cannot fail.
    liquid::ParserBuilder::with_stdlib()
        .build()
        .expect("the Liquid standard library builds")
}

fn parse(text: &str) -> std::result::Result<liquid::Template, String> {
    parser().parse(text).map_err(|e| e.to_string())
}

/// Checks the `documentTemplate` of embedder `embedder` in a settings update. Fails with
/// `invalid_settings_embedders` and Meilisearch's message when the template does not parse.
/// Templates that parse but name unknown variables pass here and fail when documents render.
pub fn validate_setting(embedder: &str, template: &str) -> Result<()> {
    parse(template).map(|_| ()).map_err(|liquid| {
        Error::new(
            Code::InvalidSettingsEmbedders,
            format!(
                "`.embedders.{embedder}.documentTemplate`: Invalid template: user error: cannot parse template: {liquid}."
            ),
        )
    })
}

impl DocumentTemplate {
    /// `template`: None for [`DEFAULT_TEMPLATE`]; `max_bytes`: None for [`DEFAULT_MAX_BYTES`].
    /// Fails with `template_parsing_error` (the render route's code) on a template that does not
    /// parse; settings updates check templates with [`validate_setting`] first.
    pub fn new(template: Option<&str>, max_bytes: Option<usize>) -> Result<DocumentTemplate> {
        let source = template.unwrap_or(DEFAULT_TEMPLATE);
        let template = parse(source).map_err(|liquid| {
            Error::new(
                Code::TemplateParsingError,
                format!(
                    "error while fetching template: user error: cannot parse template: {liquid}"
                ),
            )
        })?;
        Ok(DocumentTemplate {
            template: Arc::new(template),
            source: source.into(),
            max_bytes: max_bytes.unwrap_or(DEFAULT_MAX_BYTES),
        })
    }

    /// The template's text (the default template's when none was configured).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The byte limit of the rendered text.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Renders one document; `is_searchable(name)` tells whether top-level field `name` is
    /// searchable. The text is cut at `max_bytes` on a character boundary. Fails with the render
    /// route's `template_rendering_error`; indexing uses [`DocumentTemplate::try_render`].
    pub fn render(
        &self,
        doc: &Map<String, Value>,
        is_searchable: &dyn Fn(&str) -> bool,
    ) -> Result<String> {
        self.try_render(doc, is_searchable)
            .map_err(|e| e.for_render_route())
    }

    /// [`DocumentTemplate::render`] with the bare Liquid failure, for callers that word the
    /// error themselves.
    pub fn try_render(
        &self,
        doc: &Map<String, Value>,
        is_searchable: &dyn Fn(&str) -> bool,
    ) -> std::result::Result<String, RenderError> {
        let globals = globals(doc, is_searchable);
        let text = self.template.render(&globals).map_err(|e| RenderError {
            liquid: e.to_string(),
        })?;
        Ok(truncate(text, self.max_bytes))
    }
}

/// The `doc` and `fields` objects of one document.
fn globals(doc: &Map<String, Value>, is_searchable: &dyn Fn(&str) -> bool) -> Object {
    let fields: Vec<LValue> = doc
        .iter()
        .map(|(name, value)| {
            let mut field = Object::new();
            field.insert("name".into(), LValue::scalar(name.clone()));
            field.insert("value".into(), to_liquid(value));
            field.insert("is_searchable".into(), LValue::scalar(is_searchable(name)));
            LValue::Object(field)
        })
        .collect();
    let doc_object: Object = doc
        .iter()
        .map(|(k, v)| (k.clone().into(), to_liquid(v)))
        .collect();
    let mut globals = Object::new();
    globals.insert("doc".into(), LValue::Object(doc_object));
    globals.insert("fields".into(), LValue::Array(fields));
    globals
}

/// A JSON value as a Liquid value. Integers stay integers (u64 beyond i64 become floats, as
/// Liquid has no unsigned scalar).
pub(crate) fn to_liquid(value: &Value) -> LValue {
    match value {
        Value::Null => LValue::Nil,
        Value::Bool(b) => LValue::scalar(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => LValue::scalar(i),
            None => LValue::scalar(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => LValue::scalar(s.clone()),
        Value::Array(items) => LValue::Array(items.iter().map(to_liquid).collect()),
        Value::Object(map) => LValue::Object(
            map.iter()
                .map(|(k, v)| (k.clone().into(), to_liquid(v)))
                .collect(),
        ),
    }
}

/// Cuts `text` to at most `max` bytes, at a character boundary (never inside a UTF-8 sequence).
pub fn truncate(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}
