//! The sort rule: a `sort` entry of `rankingRules` ordering by the query's `sort` keys, or a
//! custom `attr:asc|desc` rule. Documents without the value come after every other, in either
//! direction; numbers and strings sort apart. The `_rankingScoreDetails` entry shows the
//! value sorted on (and the distance, for a geo point).

use super::{index, ranked, TempIndex};
use serde_json::{json, Value};

fn shoes(ranking_rules: Value) -> TempIndex {
    let docs = json!([
        {"id": 0, "name": "red shoe", "price": 50, "brand": "Zeta", "_geo": {"lat": 45.76, "lng": 4.84}},
        {"id": 1, "name": "blue shoe", "brand": "alpha"},
        {"id": 2, "name": "green shoe", "price": 12.5, "brand": "Beta", "_geo": {"lat": 48.85, "lng": 2.35}},
        {"id": 3, "name": "black shoe", "price": 99, "_geo": {"lat": 43.30, "lng": 5.37}},
        {"id": 4, "name": "white shoe", "price": 12.5, "brand": "gamma"},
        {"id": 5, "name": "pink shoe", "price": "cheap", "brand": "Éclair", "_geo": {"lat": 48.86, "lng": 2.34}},
        {"id": 6, "name": "grey shoe", "price": 7, "brand": "beta"},
        {"id": 7, "name": "shoe box", "price": 3},
    ]);
    index(
        json!({"rankingRules": ranking_rules, "sortableAttributes": ["price", "brand", "_geo"]}),
        docs,
    )
}

#[test]
fn sort_orders_by_the_query_keys() {
    let index = shoes(json!(["words", "sort"]));
    let ranked = |sort: &str| {
        let body = json!({"q": "shoe", "sort": [sort]});
        ranked(&index, body, sort)
    };
    insta::assert_snapshot!("price_asc", ranked("price:asc"));
    insta::assert_snapshot!("price_desc", ranked("price:desc"));
    insta::assert_snapshot!("brand_asc", ranked("brand:asc"));
    insta::assert_snapshot!("geo", ranked("_geoPoint(48.8566, 2.3522):asc"));
}

#[test]
fn sort_by_a_custom_rule() {
    let index = shoes(json!(["words", "price:desc"]));
    insta::assert_snapshot!(
        "custom_price_desc",
        ranked(&index, json!({"q": "shoe"}), "price:desc")
    );
}
