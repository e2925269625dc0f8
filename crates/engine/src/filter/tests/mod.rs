//! Filters as the engine reads them: the array form, validation against rules, and
//! evaluation on small documents, one module per step; the helpers they share. The grammar's
//! own tests (syntax errors and their positions) are in `crates/filter-parser`.

use serde_json::{json, Map, Value};

use super::Filter;
use crate::settings::Settings;

mod bitmap;
mod eval;
mod parse;
mod rules;

fn parse(s: &str) -> Filter {
    Filter::from_json(&json!(s)).unwrap().unwrap()
}

fn err(s: &str) -> String {
    Filter::from_json(&json!(s)).unwrap_err()
}

fn doc(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

/// The documents passing `filter`, read document by document; when value columns can
/// answer the filter, their answer must be the same.
fn check(filter: &str, docs: &[Value]) -> Vec<usize> {
    parse(filter)
        .evaluate_both_ways(docs)
        .unwrap_or_else(|e| panic!("{filter}: {e}"))
        .into_iter()
        .map(|i| i as usize)
        .collect()
}

fn settings(filterable: Value) -> Settings {
    Settings::from_stored(Some(&json!({ "filterableAttributes": filterable })))
}
