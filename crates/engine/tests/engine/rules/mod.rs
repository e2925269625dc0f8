//! Snapshots of each ranking rule's output, one module per rule, as milli keeps them
//! (`milli/src/search/new/tests`): a dozen documents made for the rule, the ranking rules set
//! so that it decides (`words`, then the rule), and for a few queries the hits in order with
//! the `_rankingScoreDetails` entries up to the rule's. The documents a rule ranks first are
//! added last, so the order a snapshot shows is the rule's, not the tie-break's (internal ids,
//! in the order of addition).
//!
//! Besides the snapshot, every query checks that the rules' scores, taken in rule order up to
//! the rule under test, never rise from one hit to the next: the rule does decide.
//!
//! When a snapshot changes the test fails and insta writes the new output beside it
//! (`.snap.new`): accept it only once its order and details are what the rule should give.

mod attribute;
mod attribute_rank;
mod exactness;
mod proximity;
mod sort;
mod typo;
mod word_position;
mod words;

use crate::common::{add, stage};
use engine::{BatchOp, Index, Method, SearchQuery};
use serde_json::{json, Map, Value};

/// An index in a temporary directory, removed with it.
pub struct TempIndex {
    index: Index,
    _dir: tempfile::TempDir,
}

/// An index with `settings`, then `docs` (an array, added in its order).
pub fn index(settings: Value, docs: Value) -> TempIndex {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::open(dir.path().join("idx")).unwrap();
    let file = stage(dir.path(), "docs", &docs.to_string());
    let results = index
        .apply_batch(vec![
            BatchOp::UpdateSettings {
                task_uid: 1,
                patch: settings,
            },
            add(2, file, Method::Replace, Some("id")),
        ])
        .unwrap();
    for r in &results {
        assert_eq!(r["ok"], json!(true), "{r}");
    }
    TempIndex { index, _dir: dir }
}

/// The hits of the search `body`, one line each: the id, the document's other fields, and the
/// `_rankingScoreDetails` entries in rule order up to `rule`'s (which must be there), after a
/// first line giving the query. Checks that those entries' scores never rise from one hit to
/// the next (entries without a score, the sort keys', are shown and not compared).
pub fn ranked(index: &TempIndex, mut body: Value, rule: &str) -> String {
    body["showRankingScoreDetails"] = json!(true);
    let q: SearchQuery = serde_json::from_value(body.clone()).unwrap();
    let r: Value = serde_json::from_slice(&index.index.search(&q).unwrap()).unwrap();
    body.as_object_mut()
        .unwrap()
        .shift_remove("showRankingScoreDetails");
    let mut out = format!("search {body}\n");
    let mut previous: Option<Vec<f64>> = None;
    for hit in r["hits"].as_array().unwrap() {
        let mut doc = hit.as_object().unwrap().clone();
        let id = doc.shift_remove("id").unwrap();
        let details = doc.shift_remove("_rankingScoreDetails").unwrap();
        let entries = up_to(&details, rule);
        let shown: Vec<String> = entries.iter().map(|(n, v)| format!("{n} {v}")).collect();
        out += &format!("{id:>3} {} | {}\n", Value::Object(doc), shown.join(" | "));
        let scores: Vec<f64> = entries
            .iter()
            .filter_map(|(_, v)| v["score"].as_f64())
            .collect();
        if let Some(p) = &previous {
            assert!(
                p.iter()
                    .zip(&scores)
                    .find(|(a, b)| a != b)
                    .is_none_or(|(a, b)| a > b),
                "scores rise at id {id}: {p:?} then {scores:?}\n{out}"
            );
        }
        previous = Some(scores);
    }
    out
}

/// The entries of `details` in rule order (`order`), up to `rule`'s, without their `order`.
fn up_to(details: &Value, rule: &str) -> Vec<(String, Value)> {
    let mut entries: Vec<(&String, &Value)> = details.as_object().unwrap().iter().collect();
    entries.sort_by_key(|(_, v)| v["order"].as_u64().unwrap());
    let end = entries
        .iter()
        .position(|(n, _)| *n == rule)
        .unwrap_or_else(|| panic!("no `{rule}` entry in {details}"));
    entries[..=end]
        .iter()
        .map(|(n, v)| {
            let mut v: Map<String, Value> = v.as_object().unwrap().clone();
            v.shift_remove("order");
            (n.to_string(), Value::Object(v))
        })
        .collect()
}
