//! `words`: documents holding more of the query's words first. Words are dropped in the
//! order `matchingStrategy` gives (`last`: from the end of the query; `frequency`: the most
//! frequent first) until the remaining ones all occur. A phrase counts its words. (With
//! `matchingStrategy: all` no word is dropped and the rule does not run.)

use super::{index, ranked, TempIndex};
use serde_json::{json, Value};

fn words_index() -> TempIndex {
    // Fewest query words first: the rule must reverse this order.
    let texts = [
        "brown fox jumps",                             // not `quick`, which `last` keeps
        "quick fox",                                   // `quick` alone is a prefix of the query
        "quick brown",                                 // two
        "quick brown fox",                             // three
        "the quick brown fox jumps over the lazy dog", // all four
        "quick brown fox jumps",                       // all four
        "jumps jumps",                                 // `jumps`, also in three others
        "lazy dog",                                    // none
    ];
    let docs: Vec<Value> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"id": i, "text": t}))
        .collect();
    index(json!({"rankingRules": ["words"]}), json!(docs))
}

#[test]
fn words_ranks_more_query_words_first() {
    let index = words_index();
    let ranked = |body: Value| ranked(&index, body, "words");
    let q = "quick brown fox jumps";
    insta::assert_snapshot!("last", ranked(json!({"q": q})));
    insta::assert_snapshot!(
        "frequency",
        ranked(json!({"q": q, "matchingStrategy": "frequency"}))
    );
}

#[test]
fn words_counts_a_phrase_as_its_words() {
    let index = words_index();
    insta::assert_snapshot!(
        "phrase",
        ranked(&index, json!({"q": "\"quick brown\" fox jumps"}), "words")
    );
}
