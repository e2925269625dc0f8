//! From a typed configuration to a working embedder.

use std::sync::{Arc, RwLock};

use api_types::{Code, Error, Result};

use crate::config::{EmbedderConfig, Source};
use crate::embed::Embed;

/// Makes the embedder of a remote source (`rest`, `openAi`, `ollama`); `None` for others.
pub type RemoteMaker =
    Box<dyn Fn(&str, &EmbedderConfig) -> Option<Result<Arc<dyn Embed>>> + Send + Sync>;

/// The remote sources' maker of this process, once installed.
static REMOTE: RwLock<Option<RemoteMaker>> = RwLock::new(None);

/// Installs the maker of remote embedders (the `remote-embedders` crate's, which sends
/// through the outbound client). Until one is, a remote source is an error to build.
pub fn install_remote(maker: RemoteMaker) {
    *REMOTE.write().unwrap_or_else(|e| e.into_inner()) = Some(maker);
}

/// Builds the embedder of `config`. `userProvided` has no embedder: asking for one is an error
/// the caller reports (a query without `vector`, a document without `_vectors`).
pub fn build(name: &str, config: &EmbedderConfig) -> Result<Arc<dyn Embed>> {
    let source = match &config.source {
        Source::UserProvided => "userProvided",
        Source::OpenAi { .. } => "openAi",
        Source::Ollama { .. } => "ollama",
        Source::Rest { .. } => "rest",
        Source::HuggingFace { .. } => "huggingFace",
        Source::Composite { .. } => "composite",
    };
    if let Source::OpenAi { .. } | Source::Ollama { .. } | Source::Rest { .. } = config.source {
        let remote = REMOTE.read().unwrap_or_else(|e| e.into_inner());
        if let Some(built) = remote.as_ref().and_then(|make| make(name, config)) {
            return built;
        }
        return Err(Error::new(
            Code::VectorEmbeddingError,
            format!("Error while generating embeddings: embedder `{name}` of source `{source}` cannot send requests from this process (no remote embedders installed)."),
        ));
    }
    // `huggingFace`: a local model under `QUARRY_MODELS_DIR` (`local::build_from_env`); callers
    // holding the models root themselves call `local::build_local`.
    if matches!(config.source, Source::HuggingFace { .. }) {
        return crate::local::build_from_env(name, config);
    }
    // `userProvided` has no embedder; a `composite` is built from its halves by the caller.
    Err(Error::new(
        Code::VectorEmbeddingError,
        format!("Error while generating embeddings: embedder `{name}` of source `{source}` does not generate embeddings."),
    ))
}
