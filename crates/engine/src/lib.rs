//! Quarry's engine: documents, the tantivy index and the commit protocol between them.
//!
//! It knows nothing of HTTP or N-API: callers hand it parsed requests and get JSON back.

mod codec;
pub mod docid;
pub mod edit;
pub mod facets;
pub mod filter;
pub mod geojson;
pub mod index;
pub mod indexing;
pub mod languages;
pub mod memory;
pub mod payload;
mod search;
pub mod settings;
pub mod sort;
mod store;
pub mod tokens;
pub mod value;
pub(crate) mod vectors;

pub use api_types::{Error, Result};
pub use index::{
    derivation_candidates_json, federated_search, federated_search_json, merge_pages, BatchInput,
    BatchOp, BatchOpResult, Compaction, FacetSearchQuery, FederatedQuery, Federation, FetchQuery,
    FieldsQuery, Index, IndexStats, Method, SearchQuery, Shards, SimilarQuery, TEXT_LAYOUT,
};
pub use index::{Asking, Peers, Remote};
pub use indexing::{configure_indexing, IndexingLimits};
pub use payload::{stage_documents, Format, StagedCheck};
pub use settings::{Settings, SettingsPatch};
pub use vectors::{check_embedder, configure_models, render_template, vector_of_bytes};

/// The engine's version, reported by `GET /version` next to the package's.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
