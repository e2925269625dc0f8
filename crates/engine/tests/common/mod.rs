//! Helpers shared by the engine's integration tests.

use engine::{Index, SearchQuery};
use serde_json::Value;

/// The response of the search `body`.
pub fn search(index: &Index, body: Value) -> Value {
    let q: SearchQuery = serde_json::from_value(body).unwrap();
    serde_json::from_slice(&index.search(&q).unwrap()).unwrap()
}

/// The ids and ranking scores of a response's hits.
pub fn ids(r: &Value) -> Vec<(u64, String)> {
    r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["id"].as_u64().unwrap(), h["_rankingScore"].to_string()))
        .collect()
}
