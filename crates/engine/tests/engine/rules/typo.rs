//! `typo`: fewer typos first. With the default tolerance a word of 5 to 8 letters takes one
//! typo and one of 9 or more two; words under 5 letters take none. A completion of the last
//! query word (a prefix) costs no typo; a word split in two costs one, as in milli.

use super::{index, ranked, TempIndex};
use serde_json::{json, Value};

/// An index of documents with a `text` each, ids in order, ranked by `words` then `typo`.
fn typo_index(texts: &[&str]) -> TempIndex {
    let docs: Vec<Value> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"id": i, "text": t}))
        .collect();
    index(json!({"rankingRules": ["words", "typo"]}), json!(docs))
}

/// The most typos first: the rule must reverse this order.
const TEXTS: [&str; 12] = [
    "bonchmerk results",  // benchmark, two typos
    "venchmark results",  // benchmark, a typo on the first letter
    "benchmerk results",  // benchmark, one typo
    "benchmarks results", // benchmark completed (prefix)
    "benchmark results",  // benchmark as typed
    "tamer",              // tiger, two typos: beyond a 5-letter word's one
    "tigre",              // tiger, two letters swapped
    "timer",              // tiger, one typo
    "tigers",             // tiger completed
    "tiger",              // tiger as typed
    "cut",                // cat, one typo: too short for any
    "cat",                // cat as typed
];

#[test]
fn typo_ranks_fewer_typos_first() {
    let index = typo_index(&TEXTS);
    let ranked = |q: &str| ranked(&index, json!({"q": q}), "typo");
    insta::assert_snapshot!("benchmark", ranked("benchmark"));
    insta::assert_snapshot!("tiger", ranked("tiger"));
    insta::assert_snapshot!("cat", ranked("cat"));
}

#[test]
fn typo_sums_the_typos_of_every_word() {
    let index = typo_index(&[
        "tigre benchmrak",
        "tigre benchmark",
        "tiger benchmrak",
        "tiger",
        "tiger benchmark",
    ]);
    // `words` first: the document missing `benchmark` comes last whatever its typos.
    insta::assert_snapshot!(
        "tiger_benchmark",
        ranked(&index, json!({"q": "tiger benchmark"}), "typo")
    );
}

#[test]
fn typo_counts_a_split_word_as_one_typo() {
    let index = typo_index(&[
        "benchmerk results",  // one typo
        "bench mark results", // split in two
        "benchmark results",  // as typed
    ]);
    insta::assert_snapshot!(
        "benchmark_split",
        ranked(&index, json!({"q": "benchmark"}), "typo")
    );
}

/// The split word among other candidates read before it: the split's parts may stand past
/// the document asked (`TermReader::read` never seeks them backwards, which tantivy's
/// `SegmentPostings::seek` asserts against in debug builds).
#[test]
fn typo_counts_a_split_word_as_one_typo_among_other_candidates() {
    let mut texts = TEXTS.to_vec();
    texts.insert(2, "bench mark results");
    let index = typo_index(&texts);
    insta::assert_snapshot!(
        "benchmark_split_among_others",
        ranked(&index, json!({"q": "benchmark"}), "typo")
    );
}
