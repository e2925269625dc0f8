//! `wordPosition`: documents where the query's words sit near their query position in a
//! field first (positions bucketed as milli's: exact up to 15, then 24, then powers of two),
//! in any field.

use super::attribute_rank::fields_index;
use super::{index, ranked};
use serde_json::{json, Value};

#[test]
fn word_position_ranks_words_near_the_start_first() {
    let filler = |n: usize| vec!["word"; n].join(" ");
    // The farthest first: the rule must reverse this order. `at` (not searched) tells where.
    let docs = [
        ("pasta at 300", format!("{} pasta", filler(300))),
        ("pasta at 40", format!("{} pasta", filler(40))),
        ("pasta at 20", format!("{} pasta", filler(20))),
        (
            "pasta at 5, tomato at 6",
            format!("{} pasta tomato", filler(5)),
        ),
        ("pasta at 2", format!("{} pasta", filler(2))),
        ("tomato pasta", "tomato pasta".to_string()),
        ("pasta and tomato", "pasta and tomato".to_string()),
        ("pasta tomato", "pasta tomato".to_string()),
    ];
    let docs: Vec<Value> = docs
        .iter()
        .enumerate()
        .map(|(i, (at, text))| json!({"id": i, "at": at, "text": text}))
        .collect();
    let index = index(
        json!({"rankingRules": ["words", "wordPosition"], "searchableAttributes": ["text"]}),
        json!(docs),
    );
    let ranked = |q: &str| {
        ranked(
            &index,
            json!({"q": q, "matchingStrategy": "all", "attributesToRetrieve": ["id", "at"]}),
            "wordPosition",
        )
    };
    insta::assert_snapshot!("pasta", ranked("pasta"));
    insta::assert_snapshot!("pasta_tomato", ranked("pasta tomato"));
}

#[test]
fn word_position_reads_every_field_whatever_its_rank() {
    // The fields of `attributeRank`'s documents, ranked on position alone.
    let index = fields_index("wordPosition");
    insta::assert_snapshot!(
        "fields",
        ranked(
            &index,
            json!({"q": "pasta", "matchingStrategy": "all"}),
            "wordPosition"
        )
    );
}
