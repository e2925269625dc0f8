//! `proximity`: documents where consecutive query words are closer first. Per pair of
//! consecutive query words the cost of their closest occurrences: 0 adjacent, 1 with a word
//! between or swapped, 2 with two between (or swapped with one between), 3 farther or in
//! different fields. With `proximityPrecision: byAttribute`, 0 for words in one field, else 3.

use super::{index, ranked, TempIndex};
use serde_json::{json, Value};

/// Documents with a `title` and a `text`, ids in order, ranked by `words` then `proximity`
/// (and `settings` besides).
fn proximity_index(settings: Value) -> TempIndex {
    // The farthest first: the rule must reverse this order.
    let docs = [
        ("", "quick a b c d brown e f g h fox"), // far apart: 3 + 3
        ("quick", "brown fox"),                  // quick | brown: other fields, 3 + 0
        ("", "quick a b brown c d fox"),         // two between: 2 + 2
        ("", "fox brown quick"),                 // swapped: 1 + 1
        ("", "quick a brown b fox"),             // one between: 1 + 1
        ("", "quick brown a fox"),               // 0 + 1
        ("", "quick brown fox"),                 // adjacent: 0 + 0
    ];
    let docs: Vec<Value> = docs
        .iter()
        .enumerate()
        .map(|(i, (title, text))| json!({"id": i, "title": title, "text": text}))
        .collect();
    let mut settings = settings;
    settings["rankingRules"] = json!(["words", "proximity"]);
    settings["searchableAttributes"] = json!(["title", "text"]);
    index(settings, json!(docs))
}

#[test]
fn proximity_ranks_closer_words_first() {
    let index = proximity_index(json!({}));
    let ranked = |q: &str| {
        ranked(
            &index,
            json!({"q": q, "matchingStrategy": "all"}),
            "proximity",
        )
    };
    insta::assert_snapshot!("quick_brown_fox", ranked("quick brown fox"));
    insta::assert_snapshot!("quick_fox", ranked("quick fox"));
}

#[test]
fn proximity_by_attribute_only_tells_one_field_from_several() {
    let index = proximity_index(json!({"proximityPrecision": "byAttribute"}));
    insta::assert_snapshot!(
        "by_attribute",
        ranked(
            &index,
            json!({"q": "quick brown fox", "matchingStrategy": "all"}),
            "proximity"
        )
    );
}
