//! Helpers shared by the engine's tests: staging documents, applying batches, reading
//! documents and search results back, and the index's store opened beside the engine.

use engine::{stage_documents, BatchOp, FetchQuery, Format, Index, Method, SearchQuery};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

pub fn stage(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    stage_documents(body.as_bytes(), Format::Json, None, &path).unwrap();
    path
}

pub fn add(task_uid: u64, file: PathBuf, method: Method, primary_key: Option<&str>) -> BatchOp {
    BatchOp::add_documents(task_uid, file, method, primary_key.map(str::to_string))
}

pub fn fetch_all(index: &Index) -> Value {
    let q = FetchQuery {
        offset: 0,
        limit: 1000,
        fields: None,
        ids: None,
        retrieve_vectors: false,
        sort: None,
        filter: None,
        contains_filter: false,
        foreign_ids: None,
    };
    serde_json::from_slice(&index.fetch_documents(&q).unwrap()).unwrap()
}

pub fn search(index: &Index, q: Option<&str>) -> Value {
    let q: SearchQuery = serde_json::from_value(json!({ "q": q })).unwrap();
    serde_json::from_slice(&index.search(&q).unwrap()).unwrap()
}

/// The index's LMDB store, opened beside the engine (as a crash would leave it).
pub fn store_env(dir: &Path) -> heed::Env {
    unsafe {
        heed::EnvOpenOptions::new()
            .map_size(1 << 30)
            .max_dbs(8)
            .open(dir.join("store"))
    }
    .unwrap()
}

/// An index in `dir` holding `docs` (`name` and `summary` searchable, in that order) with
/// `settings` besides.
pub fn with_docs(dir: &Path, docs: Vec<Value>, mut settings: Value) -> Index {
    let index = Index::open(dir.join("idx")).unwrap();
    let file = stage(dir, "a", &Value::Array(docs).to_string());
    settings["searchableAttributes"] = json!(["name", "summary"]);
    index
        .apply_batch(vec![
            add(1, file, Method::Replace, None),
            BatchOp::UpdateSettings {
                task_uid: 2,
                patch: settings,
            },
        ])
        .unwrap();
    index
}

/// The ids of the hits of the search `q`.
pub fn hit_ids(index: &Index, q: Value) -> Vec<i64> {
    let q: SearchQuery = serde_json::from_value(q).unwrap();
    let r: Value = serde_json::from_slice(&index.search(&q).unwrap()).unwrap();
    r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_i64().unwrap())
        .collect()
}

/// Writes the `meta` value `key` straight into the store, with its checksum beside it as the
/// engine keeps it (`None` removes both).
pub fn put_meta(
    meta: &heed::Database<heed::types::Str, heed::types::Bytes>,
    wtxn: &mut heed::RwTxn,
    key: &str,
    value: Option<&[u8]>,
) {
    let sum = format!("{key}\u{0}crc32");
    match value {
        Some(v) => {
            meta.put(wtxn, key, v).unwrap();
            meta.put(wtxn, &sum, &crc32fast::hash(v).to_le_bytes())
                .unwrap();
        }
        None => {
            meta.delete(wtxn, key).unwrap();
            meta.delete(wtxn, &sum).unwrap();
        }
    }
}
