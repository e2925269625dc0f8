//! Embedders: what turns a document or a query into vectors.
//!
//! - `config`: the typed configuration of one embedder ([`EmbedderConfig`]), read from the
//!   JSON the index settings store.
//! - `embed`: the [`Embed`] trait every source implements, and [`Embedding`].
//! - `build`: from a configuration to a working [`Embed`] ([`build()`]).
//! - `template`: `documentTemplate`, the text embedded for one document.
//! - `remote`: the `rest`, `openAi` and `ollama` sources, through the outbound client.
//! - `rules`: which fields each source takes, checked when a settings update arrives.
//! - `local`: the `huggingFace` source, a model read from a local directory ([`build_local`]).
//!
//! The engine owns the vector store and decides *when* to embed; this crate only knows *how*.
//! Remote sources reach the network through the `outbound` crate's client, never directly.

pub mod build;
pub mod config;
pub mod embed;
pub mod local;
pub mod remote;
pub mod rules;
pub mod template;

pub use build::build;
pub use config::{Distribution, EmbedderConfig, Pooling, Source};
pub use embed::{Embed, Embedding};
pub use local::{build_local, LocalEmbedder};
pub use template::DocumentTemplate;
