//! `documentTemplate`: the text an embedder embeds for one document.
//!
//! Placeholder until the Liquid implementation lands: renders the default template (one line
//! `name: value` per searchable, non-null field) whatever the configured template says.

use api_types::Result;
use serde_json::{Map, Value};

/// `documentTemplateMaxBytes` when none is configured.
pub const DEFAULT_MAX_BYTES: usize = 400;

/// A parsed document template with its byte limit.
#[derive(Debug, Clone)]
pub struct DocumentTemplate {
    max_bytes: usize,
}

impl DocumentTemplate {
    /// `template`: None for the default template. Fails with `invalid_settings_embedders` on a
    /// template that does not parse.
    pub fn new(_template: Option<&str>, max_bytes: Option<usize>) -> Result<DocumentTemplate> {
        Ok(DocumentTemplate {
            max_bytes: max_bytes.unwrap_or(DEFAULT_MAX_BYTES),
        })
    }

    /// Renders one document; `is_searchable` tells which fields are searchable. The text is
    /// cut at `max_bytes` on a character boundary.
    pub fn render(
        &self,
        doc: &Map<String, Value>,
        is_searchable: &dyn Fn(&str) -> bool,
    ) -> Result<String> {
        let mut out = String::new();
        for (name, value) in doc {
            if value.is_null() || !is_searchable(name) {
                continue;
            }
            let text = match value {
                Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            out.push_str(name);
            out.push_str(": ");
            out.push_str(&text);
            out.push('\n');
        }
        Ok(truncate(out, self.max_bytes))
    }
}

/// Cuts `text` to at most `max` bytes, at a character boundary.
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
