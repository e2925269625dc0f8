//! `exactness`: documents matching the query as typed first. First the kind of match: a field
//! that is exactly the query (`exactMatch`), a field starting with it (`matchesStart`), or
//! neither (`noExactMatch`); then, among the last, how many query words occur as typed (not
//! as a completion or with a typo).

use super::{index, ranked, TempIndex};
use serde_json::{json, Value};

fn exactness_index() -> TempIndex {
    // The least exact first: the rule must reverse this order.
    let docs = [
        ("grean aple", ""),        // both with a typo
        ("green apples", ""),      // `apple` completed
        ("grean apple", ""),       // `green` with a typo
        ("apple green", ""),       // both as typed, swapped
        ("fresh green apple", ""), // both as typed, not at the start
        ("green apple pie", ""),   // starts with the query
        ("fruit", "green apple"),  // the second field is the query
        ("green apple", "fruit"),  // the first field is the query
        ("apple", ""),             // `apple` alone
        ("big apple", ""),         // `apple` not at the start
    ];
    let docs: Vec<Value> = docs
        .iter()
        .enumerate()
        .map(|(i, (name, note))| json!({"id": i, "name": name, "note": note}))
        .collect();
    index(
        json!({"rankingRules": ["words", "exactness"], "searchableAttributes": ["name", "note"]}),
        json!(docs),
    )
}

#[test]
fn exactness_ranks_exact_matches_first() {
    let index = exactness_index();
    let ranked = |q: &str| {
        ranked(
            &index,
            json!({"q": q, "matchingStrategy": "all"}),
            "exactness",
        )
    };
    insta::assert_snapshot!("green_apple", ranked("green apple"));
    insta::assert_snapshot!("apple", ranked("apple"));
}
