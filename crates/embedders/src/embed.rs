//! The interface of every embedder source.

use api_types::Result;

/// One vector.
pub type Embedding = Vec<f32>;

/// Turns texts into vectors. Implementations are cheap to share across threads; every call
/// blocks its (worker) thread until the vectors are there or the source failed. Failures are
/// `vector_embedding_error` errors whose message names the embedder and the cause.
pub trait Embed: Send + Sync {
    /// One vector per text, in order. `texts` may be longer than the source's batch size: the
    /// implementation splits it.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Embedding>>;

    /// One vector per rendered fragment (see [`crate::fragment`]), in order. Only a `rest`
    /// source with fragments has this.
    fn embed_fragments(&self, fragments: &[serde_json::Value]) -> Result<Vec<Embedding>> {
        let _ = fragments;
        Err(api_types::Error::new(
            api_types::Code::VectorEmbeddingError,
            "Error while generating embeddings: user error: this embedder has no fragments to embed.",
        ))
    }

    /// The length of every vector this embedder returns.
    fn dimensions(&self) -> usize;

    /// How many texts one request to the source carries at most (1 for sources without
    /// batched input). The indexer groups documents by this.
    fn batch_size(&self) -> usize {
        1
    }
}
