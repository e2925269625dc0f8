//! The `huggingFace` source: a sentence-embedding model run in this process with fastembed on a
//! dynamically loaded ONNX Runtime. Nothing is ever downloaded: models are read from a models
//! root directory, one directory per model name (`<root>/<model>`, e.g.
//! `<root>/sentence-transformers/all-MiniLM-L6-v2/`), holding `model.onnx`, `tokenizer.json`,
//! `config.json`, `special_tokens_map.json`, `tokenizer_config.json` and optionally
//! `1_Pooling/config.json`. `scripts/fetch-model.sh` fills `.cache/models/` that way.
//!
//! The models root comes from the caller ([`build_local`]) or `QUARRY_MODELS_DIR`
//! ([`models_root_from_env`]); the ONNX Runtime library from [`init_runtime`] or
//! `ORT_DYLIB_PATH`. Vectors are L2-normalised (as sentence-transformers' normalised output),
//! and the same text always gives the same vector, alone or in a batch.

use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use api_types::{Code, Error, Result};
use fastembed::{InitOptionsUserDefined, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel};
use serde_json::Value;

use crate::config::{EmbedderConfig, Pooling, Source};
use crate::embed::{Embed, Embedding};

/// The environment variable naming the models root.
pub const MODELS_DIR_ENV: &str = "QUARRY_MODELS_DIR";
/// The environment variable naming the ONNX Runtime shared library (`libonnxruntime.so`).
pub const ORT_DYLIB_ENV: &str = "ORT_DYLIB_PATH";
/// Meilisearch's default `model` for `huggingFace`; served only if its directory exists.
pub const DEFAULT_MODEL: &str = "BAAI/bge-base-en-v1.5";
/// Texts per model call.
const BATCH: usize = 16;

fn embedding_error(message: impl std::fmt::Display) -> Error {
    Error::new(
        Code::VectorEmbeddingError,
        format!("Error while generating embeddings: {message}"),
    )
}

/// Threads a model's inference may use (`--max-indexing-threads`; 0: every core).
static MAX_THREADS: AtomicUsize = AtomicUsize::new(0);

/// Sets how many threads a model opened from now on may use for one call (at most four).
pub fn set_max_threads(threads: usize) {
    MAX_THREADS.store(threads, Ordering::Relaxed);
}

static RUNTIME: OnceLock<std::result::Result<PathBuf, String>> = OnceLock::new();

/// Loads ONNX Runtime once per process: from `path`, else from `ORT_DYLIB_PATH`. Later calls
/// return the first outcome (the library cannot be swapped once loaded).
pub fn init_runtime(path: Option<&Path>) -> Result<()> {
    let outcome = RUNTIME.get_or_init(|| {
        let path = match path {
            Some(p) => p.to_path_buf(),
            None => match std::env::var_os(ORT_DYLIB_ENV) {
                Some(p) if !p.is_empty() => PathBuf::from(p),
                _ => {
                    return Err(format!(
                        "the ONNX Runtime library is not configured: set `{ORT_DYLIB_ENV}` to the path of `libonnxruntime.so`"
                    ))
                }
            },
        };
        if !path.is_file() {
            return Err(format!(
                "the ONNX Runtime library `{}` does not exist",
                path.display()
            ));
        }
        match ort::init_from(&path) {
            Ok(_builder) => Ok(path),
            Err(e) => Err(format!(
                "cannot load the ONNX Runtime library `{}`: {e}",
                path.display()
            )),
        }
    });
    outcome.as_ref().map(|_| ()).map_err(embedding_error)
}

/// The models root from `QUARRY_MODELS_DIR`, if set.
pub fn models_root_from_env() -> Option<PathBuf> {
    std::env::var_os(MODELS_DIR_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The directory of `model` (None: [`DEFAULT_MODEL`]) under `root`; with a `revision`, the
/// directory is `<root>/<model>@<revision>`. Fails when the name would leave the root or the
/// directory does not exist, naming the directory.
pub fn model_dir(root: &Path, model: Option<&str>, revision: Option<&str>) -> Result<PathBuf> {
    let model = model.unwrap_or(DEFAULT_MODEL);
    let name = match revision {
        Some(rev) => format!("{model}@{rev}"),
        None => model.to_owned(),
    };
    let relative = Path::new(&name);
    let safe = !name.is_empty()
        && relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
    if !safe {
        return Err(embedding_error(format!(
            "invalid model name `{name}` for a local model"
        )));
    }
    let dir = root.join(relative);
    if !dir.is_dir() {
        return Err(embedding_error(format!(
            "model `{name}` is not available locally: directory `{}` does not exist (models are read from `{MODELS_DIR_ENV}`, never downloaded)",
            dir.display()
        )));
    }
    Ok(dir)
}

/// A local sentence-embedding model.
pub struct LocalEmbedder {
    model: Mutex<TextEmbedding>,
    dimensions: usize,
    dir: PathBuf,
}

impl std::fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEmbedder")
            .field("dir", &self.dir)
            .field("dimensions", &self.dimensions)
            .finish()
    }
}

fn read(dir: &Path, file: &str) -> Result<Vec<u8>> {
    let path = dir.join(file);
    std::fs::read(&path).map_err(|e| {
        embedding_error(format!(
            "cannot read `{}` of the local model: {e}",
            path.display()
        ))
    })
}

/// The pooling to apply: `forceMean`/`forceCls`, or for `useModel` what
/// `1_Pooling/config.json` asks (mean when the file is absent). Modes fastembed lacks (max,
/// mean_sqrt_len, last token) are errors.
fn resolve_pooling(dir: &Path, pooling: Pooling) -> Result<fastembed::Pooling> {
    match pooling {
        Pooling::ForceMean => return Ok(fastembed::Pooling::Mean),
        Pooling::ForceCls => return Ok(fastembed::Pooling::Cls),
        Pooling::UseModel => {}
    }
    let path = dir.join("1_Pooling/config.json");
    if !path.exists() {
        return Ok(fastembed::Pooling::Mean);
    }
    let config: Value = serde_json::from_slice(&read(dir, "1_Pooling/config.json")?)
        .map_err(|e| embedding_error(format!("invalid `{}`: {e}", path.display())))?;
    let flag = |key: &str| config.get(key).and_then(Value::as_bool).unwrap_or(false);
    if flag("pooling_mode_cls_token") {
        Ok(fastembed::Pooling::Cls)
    } else if flag("pooling_mode_mean_tokens") {
        Ok(fastembed::Pooling::Mean)
    } else if [
        "pooling_mode_lasttoken",
        "pooling_mode_mean_sqrt_len_tokens",
        "pooling_mode_max_tokens",
    ]
    .iter()
    .any(|k| flag(k))
    {
        Err(embedding_error(format!(
            "the pooling of `{}` is not supported; use `pooling: \"forceMean\"` or `\"forceCls\"`",
            path.display()
        )))
    } else {
        Ok(fastembed::Pooling::Mean)
    }
}

impl LocalEmbedder {
    /// Opens the model in `model_dir` (see the module documentation for its files). Loads ONNX
    /// Runtime first if needed ([`init_runtime`] with `ORT_DYLIB_PATH`). Errors are
    /// `vector_embedding_error`s naming the missing or invalid file.
    pub fn open(model_dir: &Path, pooling: Pooling) -> Result<LocalEmbedder> {
        if !model_dir.is_dir() {
            return Err(embedding_error(format!(
                "the local model directory `{}` does not exist",
                model_dir.display()
            )));
        }
        let pooling = resolve_pooling(model_dir, pooling)?;
        let tokenizer_files = TokenizerFiles {
            tokenizer_file: read(model_dir, "tokenizer.json")?,
            config_file: read(model_dir, "config.json")?,
            special_tokens_map_file: read(model_dir, "special_tokens_map.json")?,
            tokenizer_config_file: read(model_dir, "tokenizer_config.json")?,
        };
        let max_length = serde_json::from_slice::<Value>(&tokenizer_files.config_file)
            .ok()
            .and_then(|c| c.get("max_position_embeddings")?.as_u64())
            .map_or(512, |n| n.min(512) as usize);
        let onnx = read(model_dir, "model.onnx")?;
        init_runtime(None)?;
        let model = UserDefinedEmbeddingModel::new(onnx, tokenizer_files).with_pooling(pooling);
        // The indexer calls the model from one thread, a batch at a time: each call uses
        // every core (up to 4) the indexing limit allows.
        let threads = match MAX_THREADS.load(Ordering::Relaxed) {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
        .clamp(1, 4);
        let options = InitOptionsUserDefined::new()
            .with_max_length(max_length)
            .with_intra_threads(threads);
        let model = api_types::catch_panic(|| {
            TextEmbedding::try_new_from_user_defined(model, options).map_err(|e| {
                embedding_error(format!(
                    "cannot load the local model in `{}`: {e}",
                    model_dir.display()
                ))
            })
        })?;
        let mut embedder = LocalEmbedder {
            model: Mutex::new(model),
            dimensions: 0,
            dir: model_dir.to_path_buf(),
        };
        // As Meilisearch does: the dimensions are those of the vector of a probe text.
        embedder.dimensions = embedder.embed_batch(&["test"])?[0].len();
        Ok(embedder)
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Embedding>> {
        let mut model = self
            .model
            .lock()
            .map_err(|_| embedding_error("the local model is unusable after an earlier failure"))?;
        let vectors = api_types::catch_panic(|| {
            model.embed(texts, Some(BATCH)).map_err(|e| {
                embedding_error(format!(
                    "the local model in `{}` failed: {e}",
                    self.dir.display()
                ))
            })
        })?;
        if vectors.len() != texts.len() {
            return Err(embedding_error(format!(
                "the local model returned {} vectors for {} texts",
                vectors.len(),
                texts.len()
            )));
        }
        Ok(vectors)
    }
}

impl Embed for LocalEmbedder {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Embedding>> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            out.extend(self.embed_batch(chunk)?);
        }
        Ok(out)
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    fn batch_size(&self) -> usize {
        BATCH
    }
}

/// Builds a `huggingFace` embedder from the models under `models_root` (the model directory
/// is [`model_dir`] of the configured `model` and `revision`). Other sources are refused: use
/// [`crate::build()`] for them. A configured `dimensions` must match the model's.
pub fn build_local(
    name: &str,
    config: &EmbedderConfig,
    models_root: &Path,
) -> Result<Arc<dyn Embed>> {
    let Source::HuggingFace {
        model,
        revision,
        pooling,
    } = &config.source
    else {
        return Err(Error::internal(format!(
            "embedder `{name}` is not of source `huggingFace`"
        )));
    };
    let dir = model_dir(models_root, model.as_deref(), revision.as_deref())?;
    let embedder = LocalEmbedder::open(&dir, *pooling)?;
    if let Some(expected) = config.dimensions {
        if expected != embedder.dimensions() {
            return Err(embedding_error(format!(
                "embedder `{name}`: the model in `{}` gives {} dimensions, but `dimensions` is {expected}",
                dir.display(),
                embedder.dimensions()
            )));
        }
    }
    Ok(Arc::new(embedder))
}

/// [`build_local`] with the models root of `QUARRY_MODELS_DIR`; what [`crate::build()`] uses
/// for `huggingFace`. Fails with `vector_embedding_error` when the variable is not set.
pub fn build_from_env(name: &str, config: &EmbedderConfig) -> Result<Arc<dyn Embed>> {
    let root = models_root_from_env().ok_or_else(|| {
        embedding_error(format!(
            "embedder `{name}` of source `huggingFace` needs a local model: set `{MODELS_DIR_ENV}` to the directory holding `<model>/model.onnx` (models are never downloaded)"
        ))
    })?;
    build_local(name, config, &root)
}
