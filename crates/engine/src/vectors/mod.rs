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

pub use registry::Registry;
pub use store::{Space, VectorStore};

use std::sync::RwLock;

/// The outbound client remote embedders use (loopback only until the operator allows more).
static OUTBOUND: RwLock<Option<outbound::Client>> = RwLock::new(None);

/// Sets the networks every remote embedder of this process may reach (CIDRs, or `any`).
pub fn configure_outbound(allowed: &[String]) -> api_types::Result<()> {
    let client = outbound::Client::new(allowed)?;
    *OUTBOUND.write().unwrap_or_else(|e| e.into_inner()) = Some(client);
    Ok(())
}

/// The client remote embedders use.
pub fn outbound() -> outbound::Client {
    OUTBOUND
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or_else(outbound::Client::loopback)
}
