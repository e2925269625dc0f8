//! The engine on a real directory: batches, per-op failures, replay, crash repair, search,
//! filters, storage and vectors, one module per area, and snapshots of each ranking rule's output
//! (`rules`). One test binary, so the engine is linked once for all of them.

mod common;
mod documents;
mod filters;
mod recovery;
mod rules;
mod search;
mod search_pages;
mod storage;
mod vectors;
