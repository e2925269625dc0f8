//! `attributeRank`: documents matching in more important fields first, the fields' order
//! being `searchableAttributes`'. Per query word, the best field it occurs in; where in the
//! field does not count (that is `wordPosition`'s).

use super::{index, ranked, TempIndex};
use serde_json::{json, Value};

/// Documents with a `title`, a `subtitle` and a `body`, searched in that order, ranked by
/// `words` then `rule`.
pub fn fields_index(rule: &str) -> TempIndex {
    // The least important fields first: the rule must reverse this order.
    let docs = [
        // pasta and tomato: body
        ("soup", "for winter", "a recipe with tomato and pasta"),
        // pasta: subtitle; tomato: body
        ("soup", "pasta for winter", "with tomato"),
        // both: subtitle
        ("winter soup", "tomato pasta", "a recipe"),
        // tomato: title; pasta: subtitle
        ("tomato soup", "with pasta", "a recipe"),
        // pasta: title; tomato: body
        ("soup with pasta", "for winter", "tomato"),
        // pasta: body, far in
        (
            "a recipe",
            "for winter",
            "a long text on soups of every kind ending with pasta",
        ),
        // pasta: title; tomato: subtitle and body
        ("pasta", "tomato", "tomato pasta"),
        // both: title, in the query's order
        ("tomato pasta", "for winter", "a recipe"),
        // both: title
        ("pasta with tomato", "", "a recipe"),
    ];
    let docs: Vec<Value> = docs
        .iter()
        .enumerate()
        .map(|(i, (t, s, b))| json!({"id": i, "title": t, "subtitle": s, "body": b}))
        .collect();
    index(
        json!({"rankingRules": ["words", rule],
            "searchableAttributes": ["title", "subtitle", "body"]}),
        json!(docs),
    )
}

#[test]
fn attribute_rank_ranks_matches_in_earlier_fields_first() {
    let index = fields_index("attributeRank");
    let ranked = |q: &str| {
        ranked(
            &index,
            json!({"q": q, "matchingStrategy": "all"}),
            "attributeRank",
        )
    };
    insta::assert_snapshot!("pasta", ranked("pasta"));
    insta::assert_snapshot!("tomato_pasta", ranked("tomato pasta"));
}
