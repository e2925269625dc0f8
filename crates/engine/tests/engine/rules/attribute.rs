//! `attribute`, the older rule: `attributeRank` then `wordPosition` in one
//! `_rankingScoreDetails` entry (`attributeRankingOrderScore`, `queryWordDistanceScore`).

use super::attribute_rank::fields_index;
use super::ranked;
use serde_json::json;

#[test]
fn attribute_ranks_by_field_then_position() {
    let index = fields_index("attribute");
    let ranked = |q: &str| {
        ranked(
            &index,
            json!({"q": q, "matchingStrategy": "all"}),
            "attribute",
        )
    };
    insta::assert_snapshot!("pasta", ranked("pasta"));
    insta::assert_snapshot!("tomato_pasta", ranked("tomato pasta"));
}
