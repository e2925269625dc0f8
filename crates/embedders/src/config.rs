//! The typed configuration of one embedder.
//!
//! The index settings store each embedder as the JSON object the user sent (merged field by
//! field across updates); [`EmbedderConfig::read`] turns a stored object into this typed form.
//! Source names are Meilisearch's: `openAi`, `huggingFace`, `ollama`, `rest`, `userProvided`,
//! `composite`.

use api_types::{Code, Error, Result};
use serde_json::{Map, Value};

use crate::fragment::Fragments;

/// Where an embedder's vectors come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Vectors only come from documents' `_vectors` and from the query's `vector`.
    UserProvided,
    /// A hosted embeddings API of the OpenAI shape (`POST {url}` with `input`, `model`).
    OpenAi {
        url: Option<String>,
        api_key: Option<String>,
        model: Option<String>,
    },
    /// A local model server of the Ollama shape (`/api/embed` or `/api/embeddings`).
    Ollama {
        url: Option<String>,
        api_key: Option<String>,
        model: Option<String>,
    },
    /// Any REST API, described by request and response templates.
    Rest {
        url: String,
        api_key: Option<String>,
        request: Value,
        response: Value,
        headers: Map<String, Value>,
        /// `indexingFragments` and `searchFragments` (the `multimodal` feature): what is
        /// embedded in place of the document template and the query text.
        fragments: Option<Box<Fragments>>,
    },
    /// A model run in this process (fastembed / ONNX Runtime), read from a local directory.
    HuggingFace {
        model: Option<String>,
        revision: Option<String>,
        pooling: Pooling,
    },
    /// One embedder for indexing, another for search (the `compositeEmbedders` feature).
    Composite {
        indexing: Box<EmbedderConfig>,
        search: Box<EmbedderConfig>,
    },
}

/// `pooling` of a `huggingFace` embedder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pooling {
    #[default]
    UseModel,
    ForceMean,
    ForceCls,
}

/// `distribution`: the affine correction of semantic scores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Distribution {
    pub mean: f64,
    pub sigma: f64,
}

/// One embedder, typed.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbedderConfig {
    pub source: Source,
    /// `dimensions` as configured (None = inferred from the source's first answer).
    pub dimensions: Option<usize>,
    /// `documentTemplate` (None = the default template); unused by `userProvided`.
    pub document_template: Option<String>,
    /// `documentTemplateMaxBytes` (None = the default, 400).
    pub document_template_max_bytes: Option<usize>,
    pub binary_quantized: bool,
    pub distribution: Option<Distribution>,
}

fn str_field(config: &Map<String, Value>, key: &str) -> Option<String> {
    config.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn usize_field(config: &Map<String, Value>, key: &str) -> Option<usize> {
    config
        .get(key)
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
}

impl EmbedderConfig {
    /// Reads a stored embedder object. The object passed the settings checks when it was
    /// stored, so this only fails on a missing `source` (a stored object always has one).
    pub fn read(name: &str, config: &Map<String, Value>) -> Result<EmbedderConfig> {
        let missing = || {
            Error::new(
                Code::InvalidSettingsEmbedders,
                format!("`.embedders.{name}`: Missing field `source`."),
            )
        };
        let source = match config
            .get("source")
            .and_then(Value::as_str)
            .ok_or_else(missing)?
        {
            "userProvided" => Source::UserProvided,
            "openAi" => Source::OpenAi {
                url: str_field(config, "url"),
                api_key: str_field(config, "apiKey"),
                model: str_field(config, "model"),
            },
            "ollama" => Source::Ollama {
                url: str_field(config, "url"),
                api_key: str_field(config, "apiKey"),
                model: str_field(config, "model"),
            },
            "rest" => Source::Rest {
                url: str_field(config, "url").unwrap_or_default(),
                api_key: str_field(config, "apiKey"),
                request: config.get("request").cloned().unwrap_or(Value::Null),
                response: config.get("response").cloned().unwrap_or(Value::Null),
                headers: config
                    .get("headers")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default(),
                fragments: Fragments::read(config).map(Box::new),
            },
            "huggingFace" => Source::HuggingFace {
                model: str_field(config, "model"),
                revision: str_field(config, "revision"),
                pooling: match config.get("pooling").and_then(Value::as_str) {
                    Some("forceMean") => Pooling::ForceMean,
                    Some("forceCls") => Pooling::ForceCls,
                    _ => Pooling::UseModel,
                },
            },
            "composite" => {
                let sub = |key: &str| -> Result<Box<EmbedderConfig>> {
                    let obj = config
                        .get(key)
                        .and_then(Value::as_object)
                        .ok_or_else(missing)?;
                    Ok(Box::new(EmbedderConfig::read(name, obj)?))
                };
                Source::Composite {
                    indexing: sub("indexingEmbedder")?,
                    search: sub("searchEmbedder")?,
                }
            }
            _ => return Err(missing()),
        };
        let distribution = config
            .get("distribution")
            .and_then(Value::as_object)
            .and_then(|d| {
                Some(Distribution {
                    mean: d.get("mean")?.as_f64()?,
                    sigma: d.get("sigma")?.as_f64()?,
                })
            });
        Ok(EmbedderConfig {
            source,
            dimensions: usize_field(config, "dimensions"),
            document_template: str_field(config, "documentTemplate"),
            document_template_max_bytes: usize_field(config, "documentTemplateMaxBytes"),
            binary_quantized: config
                .get("binaryQuantized")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            distribution,
        })
    }

    /// Whether documents are embedded by the source (false: vectors come only from `_vectors`).
    pub fn generates(&self) -> bool {
        !matches!(self.source, Source::UserProvided)
    }

    /// The fragments of a `rest` source that has some.
    pub fn fragments(&self) -> Option<&Fragments> {
        match &self.source {
            Source::Rest { fragments, .. } => fragments.as_deref(),
            _ => None,
        }
    }
}
