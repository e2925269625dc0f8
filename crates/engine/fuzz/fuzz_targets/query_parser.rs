//! Fuzzes the query path end to end: the input is a search's `q` on a small index with
//! synonyms, stop words, a distinct attribute and every formatting option on, under each
//! matching strategy. It goes through query parsing, phrases and negations, typo, split and
//! concatenation derivations, synonyms, ranking and highlighting/cropping. Every search must
//! answer a JSON body with `hits`, or an error of the table that is not internal. Any panic
//! is a finding.
//!
//!   cd crates/engine/fuzz && cargo fuzz run query_parser -- -max_total_time=600
#![no_main]

use std::sync::OnceLock;

use engine::{stage_documents, BatchOp, Format, Index, Method, SearchQuery};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

struct Fixture {
    _dir: tempfile::TempDir,
    index: Index,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let index = Index::open(dir.path().join("idx")).unwrap();
        let docs = json!([
            {"id": 1, "title": "The New York subway", "body": "a quick brown fox jumps over the lazy dog", "tag": "a"},
            {"id": 2, "title": "Élan vital, Bergson", "body": "l'évolution créatrice — 1907 \"quoted\" words", "tag": "b"},
            {"id": 3, "title": "東京 タワー", "body": "中文 文本 测试 and mixed-script ünïcödé", "tag": "a"},
            {"id": 4, "title": "sun flower sunflower", "body": ["nested", {"deep": "values here"}], "tag": null},
        ]);
        let file = dir.path().join("docs.ndjson");
        stage_documents(docs.to_string().as_bytes(), Format::Json, None, &file).unwrap();
        let patch = json!({
            "synonyms": {"nyc": ["new york"], "new york": ["nyc", "big apple"], "fox": ["dog"]},
            "stopWords": ["the", "a"],
            "distinctAttribute": "tag",
            "filterableAttributes": ["tag"],
        });
        let results = index
            .apply_batch(vec![
                BatchOp::add_documents(1, file, Method::Replace, None),
                BatchOp::UpdateSettings { task_uid: 2, patch },
            ])
            .unwrap();
        for r in results {
            assert_eq!(r["ok"], json!(true), "{r}");
        }
        Fixture { _dir: dir, index }
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let index = &fixture().index;
    for strategy in ["last", "all", "frequency"] {
        let q: SearchQuery = serde_json::from_value(json!({
            "q": text,
            "matchingStrategy": strategy,
            "attributesToHighlight": ["*"],
            "attributesToCrop": ["body"],
            "cropLength": 3,
            "showMatchesPosition": true,
            "showRankingScoreDetails": true,
            "facets": ["tag"],
        }))
        .unwrap();
        match index.search(&q) {
            Ok(bytes) => {
                let body: Value = serde_json::from_slice(&bytes).expect("the body is JSON");
                assert!(body["hits"].is_array(), "no hits in {body}");
            }
            Err(e) => assert_ne!(e.code, api_types::Code::Internal, "{text:?}: {e:?}"),
        }
    }
});
