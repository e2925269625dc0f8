//! From a typed configuration to a working embedder.

use api_types::Code;
use std::sync::Arc;

use api_types::{Error, Result};

use crate::config::{EmbedderConfig, Source};
use crate::embed::Embed;

/// Builds the embedder of `config`. Remote sources send their requests through `client`.
/// `userProvided` has no embedder: asking for one is an error the caller reports (a query
/// without `vector`, a document without `_vectors`).
pub fn build(
    name: &str,
    config: &EmbedderConfig,
    client: &outbound::Client,
) -> Result<Arc<dyn Embed>> {
    if let Some(remote) = crate::remote::build_remote(name, config, client) {
        return remote;
    }
    // `huggingFace`: a local model under `QUARRY_MODELS_DIR` (`local::build_from_env`); callers
    // holding the models root themselves call `local::build_local`.
    if matches!(config.source, Source::HuggingFace { .. }) {
        return crate::local::build_from_env(name, config);
    }
    let source = match &config.source {
        Source::UserProvided => "userProvided",
        Source::OpenAi { .. } => "openAi",
        Source::Ollama { .. } => "ollama",
        Source::Rest { .. } => "rest",
        Source::HuggingFace { .. } => "huggingFace",
        Source::Composite { .. } => "composite",
    };
    // `userProvided` has no embedder; a `composite` is built from its halves by the caller.
    Err(Error::new(
        Code::VectorEmbeddingError,
        format!("Error while generating embeddings: embedder `{name}` of source `{source}` does not generate embeddings."),
    ))
}
