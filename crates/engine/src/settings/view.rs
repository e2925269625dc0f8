//! What `GET /indexes/{uid}/settings` shows: every field in Meilisearch's order, the
//! defaults Meilisearch shows for embedders configured without them, and API keys masked.
//! The experimental fields (`foreignKeys`, `chat`) are always present here; the HTTP layer
//! leaves them out while their feature is off.

use serde_json::{Map, Value};

use super::{Embedder, Settings, DEFAULT_DOCUMENT_TEMPLATE, DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES};

/// Meilisearch's redaction of a secret: under 10 bytes all of it, then the first 2, 3 or 5
/// bytes are kept (rounded up to a character boundary) before `XXXX...`.
pub fn hide_secret(secret: &str) -> String {
    let (keep, mask) = match secret.len() {
        0..10 => (0, "XXX..."),
        10..20 => (2, "XXXX..."),
        20..30 => (3, "XXXXX..."),
        _ => (5, "XXXXXX..."),
    };
    let mut end = 0;
    for (i, ch) in secret.char_indices() {
        if i >= keep {
            break;
        }
        end = i + ch.len_utf8();
    }
    format!("{}{mask}", &secret[..end])
}

/// Sources whose embedders render documents through a template.
const TEMPLATED_SOURCES: [&str; 4] = ["openAi", "huggingFace", "ollama", "rest"];

/// One embedder as shown: the template defaults filled in for the sources that use them (not
/// for a `rest` embedder with fragments, which embeds those instead), the API key masked.
fn embedder_view(config: &Embedder) -> Value {
    let source = config.get("source").and_then(Value::as_str);
    let mut out = config.clone();
    let fragments =
        config.contains_key("indexingFragments") || config.contains_key("searchFragments");
    if source.is_some_and(|s| TEMPLATED_SOURCES.contains(&s)) && !fragments {
        out.entry("documentTemplate")
            .or_insert_with(|| DEFAULT_DOCUMENT_TEMPLATE.into());
        out.entry("documentTemplateMaxBytes")
            .or_insert_with(|| DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES.into());
        if source == Some("huggingFace") {
            out.entry("pooling").or_insert_with(|| "useModel".into());
        }
    }
    if let Some(Value::String(key)) = out.get_mut("apiKey") {
        *key = hide_secret(key);
    }
    Value::Object(out)
}

impl crate::Index {
    /// The `foreignKeys` setting, read from the settings of the newest generation (cached per
    /// generation): what hydrating a search's hits needs, without building the whole view.
    pub fn foreign_keys(&self) -> crate::Result<Vec<super::ForeignKey>> {
        let rtxn = self.read_txn()?;
        Ok(self.settings(&rtxn)?.foreign_keys.clone())
    }

    /// The settings view of this index as JSON (the defaults before any update).
    pub fn settings_view_json(&self) -> crate::Result<String> {
        let stored = self.settings_json()?;
        let settings = Settings::from_stored_bytes(stored.as_deref().map(str::as_bytes));
        Ok(settings.view().to_string())
    }
}

impl Settings {
    /// The body of `GET /indexes/{uid}/settings` (with `foreignKeys` and `chat`).
    pub fn view(&self) -> Value {
        let mut out = self.to_json();
        let embedders: Map<String, Value> = self
            .embedders
            .iter()
            .map(|(name, config)| (name.clone(), embedder_view(config)))
            .collect();
        out["embedders"] = Value::Object(embedders);
        out
    }
}
