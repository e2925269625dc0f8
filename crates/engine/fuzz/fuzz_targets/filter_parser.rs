//! Fuzzes the filter language end to end: parsing (string and array forms), validation
//! against filterable rules, evaluation on documents and on value columns, which must agree.
//! Any panic, stack overflow or disagreement is a finding.
//!
//!   cd crates/engine/fuzz && cargo fuzz run filter_parser -- -max_total_time=600
#![no_main]

use engine::filter::Filter;
use engine::Settings;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

fn documents() -> Vec<Value> {
    vec![
        json!({"id": 0, "genre": "Drama", "year": 2015, "tags": ["a", "B"], "o": {"x": 1}, "_geo": {"lat": 48.8, "lng": 2.3},
               "_geojson": {"type": "Polygon", "coordinates": [[[0, 0], [5, 0], [5, 5], [0, 0]]]}}),
        json!({"id": 1, "genre": ["action", "Élan"], "year": "2012", "tags": [], "o": [{"x": 2}], "_geo": {"lat": "-89.9", "lng": "179.99"}}),
        json!({"id": 2, "genre": null, "year": 1e300, "tags": [null, true], "o.x": 3}),
        json!({"id": 3}),
    ]
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The array form when the input is JSON, the string form always.
    let mut inputs = vec![Value::String(text.to_string())];
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        inputs.push(v);
    }
    let settings = Settings::from_stored(Some(&json!({"filterableAttributes": ["genre", "year", "tags", "o", "_geo", "_geojson", "id",
        {"attributePatterns": ["t*"], "features": {"filter": {"equality": true, "comparison": false}}}]})));
    let docs = documents();
    for input in inputs {
        let Ok(Some(filter)) = Filter::from_json(&input) else {
            continue;
        };
        let _ = filter.validate(&settings);
        let _ = filter.check_contains(false);
        if let Err(e) = filter.evaluate_both_ways(&docs) {
            panic!("{input}: {e}");
        }
    }
});
