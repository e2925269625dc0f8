//! Embedders: what turns a document or a query into vectors.
//!
//! - `config`: the typed configuration of one embedder ([`EmbedderConfig`]), read from the
//!   JSON the index settings store.
//! - `embed`: the [`Embed`] trait every source implements, and [`Embedding`].
//! - `build`: from a configuration to a working [`Embed`] ([`build()`]); the remote sources
//!   are made by what [`install_remote`] registered (the `remote-embedders` crate).
//! - `fragment`: `indexingFragments` and `searchFragments` (the `multimodal` feature), what a
//!   `rest` source embeds in place of the template and the query text.
//! - `rest_template`: the checks of a `rest` source's `request` and `response` templates.
//! - `template`: `documentTemplate`, the text embedded for one document.
//! - `rules`: which fields each source takes, checked when a settings update arrives.
//! - `local`: the `huggingFace` source, a model read from a local directory ([`build_local`]).
//!
//! The engine owns the vector store and decides *when* to embed; this crate only knows *how*.
//! This crate sends no request: the remote sources (`rest`, `openAi`, `ollama`) live in the
//! `remote-embedders` crate, which the binding installs, so the engine depends on nothing that
//! reaches the network.

pub mod build;
pub mod config;
pub mod embed;
pub mod fragment;
pub mod local;
pub mod rest_template;
pub mod rules;
pub mod template;

pub use build::{build, install_remote, RemoteMaker};
pub use config::{Distribution, EmbedderConfig, Pooling, Source};
pub use embed::{Embed, Embedding};
pub use fragment::Fragments;
pub use local::{build_local, LocalEmbedder};
pub use template::DocumentTemplate;
