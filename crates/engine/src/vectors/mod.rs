//! Vectors: the embeddings of an index's documents and the nearest-neighbour search over
//! them.
//!
//! - [`store`]: the HNSW graphs (hannoy) in the index's LMDB environment, written in the
//!   batch's transaction;
//! - [`registry`]: which embedders have vectors, with their ids, dimensions and quantization;
//! - [`parse`]: the forms of `_vectors` in a document.
//!
//! Which text is embedded and by whom is the `embedders` crate's business; when to embed, and
//! what happens to vectors as documents and settings change, is decided in `index::update`.

pub mod parse;
pub mod registry;
pub mod store;
pub mod table;

pub use registry::Registry;
pub use store::{Space, VectorStore};

use api_types::Code;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use embedders::{Embed, EmbedderConfig};

/// A query vector sent as `f32` bytes in the machine's order (the binding's form, which spares
/// the JavaScript thread printing the numbers as JSON); a trailing partial value is ignored.
pub fn vector_of_bytes(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The directory of local models (`huggingFace` embedders), when configured.
static MODELS_DIR: RwLock<Option<std::path::PathBuf>> = RwLock::new(None);

/// Where local models are, and the ONNX Runtime library they run on (loaded once per
/// process: the first library configured stays).
pub fn configure_models(
    models_dir: Option<String>,
    onnx_runtime: Option<String>,
) -> api_types::Result<()> {
    *MODELS_DIR.write().unwrap_or_else(|e| e.into_inner()) = models_dir.map(Into::into);
    if let Some(path) = onnx_runtime {
        embedders::local::init_runtime(Some(std::path::Path::new(&path)))?;
    }
    Ok(())
}

/// Builds the embedder of `config`: local models from the configured directory (else the
/// `QUARRY_MODELS_DIR` environment variable), remote sources by what the binding installed
/// (`embedders::install_remote`): the engine sends no request itself.
/// A composite embedder indexes with its `indexingEmbedder` (see [`search_config`]).
fn build(name: &str, config: &EmbedderConfig) -> api_types::Result<Arc<dyn Embed>> {
    let models = MODELS_DIR.read().unwrap_or_else(|e| e.into_inner()).clone();
    match (&config.source, models) {
        (embedders::Source::Composite { indexing, .. }, _) => build(name, indexing),
        (embedders::Source::HuggingFace { .. }, Some(dir)) => {
            embedders::build_local(name, config, &dir)
        }
        _ => embedders::build(name, config),
    }
}

/// A process-wide map from a key to a value computed once, bounded: emptied when it reaches
/// its size (the embedders and query embeddings below; both are cheap to compute again).
struct Bounded<V> {
    map: Mutex<Option<HashMap<String, V>>>,
    size: usize,
}

impl<V: Clone> Bounded<V> {
    const fn new(size: usize) -> Bounded<V> {
        Bounded {
            map: Mutex::new(None),
            size,
        }
    }

    fn get_or_try(
        &self,
        key: String,
        compute: impl FnOnce() -> api_types::Result<V>,
    ) -> api_types::Result<V> {
        let found = self
            .map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|m| m.get(&key).cloned());
        if let Some(v) = found {
            return Ok(v);
        }
        // Computed outside the lock: an embedder may take long.
        let v = compute()?;
        let mut guard = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let map = guard.get_or_insert_with(HashMap::new);
        if map.len() >= self.size {
            map.clear();
        }
        map.insert(key, v.clone());
        Ok(v)
    }
}

/// Built embedders, by name and configuration: a local model is loaded once, a remote
/// source's client is reused.
static EMBEDDERS: Bounded<Arc<dyn Embed>> = Bounded::new(64);

/// The embedder of `config`, built once per configuration.
pub fn embedder(name: &str, config: &EmbedderConfig) -> api_types::Result<Arc<dyn Embed>> {
    EMBEDDERS.get_or_try(format!("{name}\0{config:?}"), || build(name, config))
}

/// Query embeddings already computed, by embedder configuration and query text (the
/// embedding cache of Meilisearch's `--experimental-embedding-cache-entries`, on by default).
static QUERIES: Bounded<Vec<f32>> = Bounded::new(4096);

/// The configuration that embeds queries: a composite's `searchEmbedder`, else `config`.
pub fn search_config(config: &EmbedderConfig) -> &EmbedderConfig {
    match &config.source {
        embedders::Source::Composite { search, .. } => search,
        _ => config,
    }
}

/// The embedding of a query by `config` (a composite's search embedder), from the cache or the
/// embedder: its text `q`, or for an embedder with search fragments the one fragment that `q`
/// (None when blank) and `media` render (see `embedders::fragment`).
pub fn embed_query(
    name: &str,
    config: &EmbedderConfig,
    q: Option<&str>,
    media: Option<&serde_json::Value>,
) -> api_types::Result<Vec<f32>> {
    let config = search_config(config);
    let none = || {
        api_types::Error::new(
            Code::VectorEmbeddingError,
            format!("Error while generating embeddings: embedder `{name}` returned no embedding for the query."),
        )
    };
    match (config.fragments(), media) {
        (Some(fragments), _) => {
            let fragment = embedders::fragment::render_search(fragments, q, media)?;
            QUERIES.get_or_try(format!("{name}\0{config:?}\0\0{fragment}"), || {
                embedder(name, config)?
                    .embed_fragments(std::slice::from_ref(&fragment))?
                    .pop()
                    .ok_or_else(none)
            })
        }
        (None, Some(_)) => Err(embedders::fragment::media_without_fragments(source_name(
            config,
        ))),
        (None, None) => {
            let q = q.unwrap_or("");
            QUERIES.get_or_try(format!("{name}\0{config:?}\0{q}"), || {
                embedder(name, config)?.embed(&[q])?.pop().ok_or_else(none)
            })
        }
    }
}

/// The source's name as settings spell it.
fn source_name(config: &EmbedderConfig) -> &'static str {
    match config.source {
        embedders::Source::UserProvided => "userProvided",
        embedders::Source::OpenAi { .. } => "openAi",
        embedders::Source::Ollama { .. } => "ollama",
        embedders::Source::Rest { .. } => "rest",
        embedders::Source::HuggingFace { .. } => "huggingFace",
        embedders::Source::Composite { .. } => "composite",
    }
}

/// Renders `template` with `document_json` (an object) as the render route does: every field
/// counts as searchable and nothing is cut. Without a document, only parses the template.
pub fn render_template(
    template: &str,
    document_json: Option<&str>,
) -> api_types::Result<Option<String>> {
    let parsed = embedders::DocumentTemplate::new(Some(template), Some(usize::MAX))?;
    let Some(json) = document_json else {
        return Ok(None);
    };
    let doc: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(json).map_err(api_types::Error::internal)?;
    parsed
        .try_render(&doc, &|_| true)
        .map(Some)
        .map_err(|e| e.for_render_route())
}

/// Checks one embedder of a settings update against its source's field rules (see
/// `embedders::rules`): `patch` is the embedder's JSON object as sent.
pub fn check_embedder(name: &str, patch_json: &str) -> api_types::Result<()> {
    let patch: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(patch_json).map_err(api_types::Error::internal)?;
    embedders::rules::check_patch(name, &patch)?;
    embedders::fragment::check_patch(&patch)?;
    embedders::rest_template::check_patch(&patch)
}

/// A composite embedder's two halves must agree: the same dimensions, and nearly the same
/// vector for one probe text (cosine at least 0.99).
pub fn check_composite(name: &str, config: &EmbedderConfig) -> api_types::Result<()> {
    let embedders::Source::Composite { indexing, search } = &config.source else {
        return Ok(());
    };
    if indexing.fragments().is_some() || search.fragments().is_some() {
        // Halves embedding fragments have no common probe: only their dimensions are checked
        // (when both are configured), as the vectors they give are.
        return match (indexing.dimensions, search.dimensions) {
            (Some(a), Some(b)) if a != b => Err(api_types::Error::new(
                Code::VectorEmbeddingError,
                format!("Error while generating embeddings: user error: error while generating test embeddings.\n  - the dimensions of embeddings produced at search time and at indexing time don't match.\n  - Search time dimensions: {b}\n  - Indexing time dimensions: {a}\n  - Note: Dimensions of embeddings produced by both embedders are required to match."),
            )),
            _ => Ok(()),
        };
    }
    let probe = "test";
    let a = embedder(name, search)?
        .embed(&[probe])?
        .pop()
        .unwrap_or_default();
    let b = embedder(name, indexing)?
        .embed(&[probe])?
        .pop()
        .unwrap_or_default();
    let error = |detail: String| {
        api_types::Error::new(
            Code::VectorEmbeddingError,
            format!("Error while generating embeddings: user error: error while generating test embeddings.\n{detail}"),
        )
    };
    if a.len() != b.len() {
        return Err(error(format!("  - the dimensions of embeddings produced at search time and at indexing time don't match.\n  - Search time dimensions: {}\n  - Indexing time dimensions: {}\n  - Note: Dimensions of embeddings produced by both embedders are required to match.", a.len(), b.len())));
    }
    let dot: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    let cos = dot / (norm(&a) * norm(&b)).max(f32::EPSILON);
    if cos < 0.99 {
        return Err(error(format!("  - the embeddings produced at search time and indexing time are not similar enough.\n  - Similarity of the test embeddings: {cos:.4}\n  - Note: Both embedders must embed the same text to nearly the same vector.")));
    }
    Ok(())
}
