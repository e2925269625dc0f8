//! Keyword search: typos and splits across commits, prefixes, every word before some,
//! placeholder pagination, and totals below and above `maxTotalHits`.

use crate::common::{add, hit_ids, search, stage, with_docs};
use engine::{BatchOp, Index, Method, SearchQuery};
use serde_json::{json, Value};

#[test]
fn typo_walks_and_splits_of_a_word_follow_each_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let ids = |q: &str| -> Vec<u64> {
        let mut ids: Vec<u64> = search(&index, Some(q))["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].as_u64().unwrap())
            .collect();
        ids.sort_unstable();
        ids
    };
    let a = stage(
        tmp.path(),
        "a",
        r#"[{"id":1,"t":"graphic"},{"id":2,"t":"sunflower"}]"#,
    );
    index
        .apply_batch(vec![add(1, a, Method::Replace, None)])
        .unwrap();
    // Asked twice, so the second answer comes from what the first one looked up.
    for _ in 0..2 {
        assert_eq!(ids("graphix"), vec![1]);
        assert_eq!(ids("sunflower"), vec![2]);
    }
    // A new near word, and the first document holding the word's halves side by side: the
    // same words now find them.
    let b = stage(
        tmp.path(),
        "b",
        r#"[{"id":3,"t":"graphiq"},{"id":4,"t":"sun flower"}]"#,
    );
    index
        .apply_batch(vec![add(2, b, Method::Replace, None)])
        .unwrap();
    assert_eq!(ids("graphix"), vec![1, 3]);
    assert_eq!(ids("sunflower"), vec![2, 4]);
}

#[test]
fn a_prefix_word_with_thousands_of_completions_still_finds_its_typos() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    // 10,400 words start with `tokens`; `tokenz` (one typo away) comes after all of them in
    // the dictionary, past the number of words a typo walk reads (in each segment).
    let letters = |i: usize| -> String {
        [i / 676, i / 26 % 26, i % 26]
            .iter()
            .map(|&c| (b'a' + c as u8) as char)
            .collect()
    };
    let mut docs: Vec<Value> = (0..100)
        .map(|d| {
            let words: Vec<String> = (0..104)
                .map(|w| format!("tokens{}", letters(d * 104 + w)))
                .collect();
            json!({ "id": d, "t": words.join(" ") })
        })
        .collect();
    docs.push(json!({ "id": 1000, "t": "tokenz" }));
    let a = stage(tmp.path(), "a", &Value::Array(docs).to_string());
    index
        .apply_batch(vec![add(1, a, Method::Replace, None)])
        .unwrap();
    let found = search(&index, Some("tokens"));
    let hits = found["hits"].as_array().unwrap();
    assert!(hits.iter().any(|h| h["id"] == json!(1000)), "{found}");
}

#[test]
fn placeholder_search_pagination() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let docs: Vec<Value> = (0..30).map(|i| json!({"id": i})).collect();
    let a = stage(tmp.path(), "a", &serde_json::to_string(&docs).unwrap());
    index
        .apply_batch(vec![add(1, a, Method::Replace, None)])
        .unwrap();
    let q: SearchQuery = serde_json::from_value(json!({ "page": 2, "hitsPerPage": 10 })).unwrap();
    let r: Value = serde_json::from_slice(&index.search(&q).unwrap()).unwrap();
    assert_eq!(r["hits"][0]["id"], json!(10));
    assert_eq!(r["totalPages"], json!(3));
    assert_eq!(r["totalHits"], json!(30));
    let keys: Vec<&String> = r.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "hits",
            "query",
            "processingTimeMs",
            "hitsPerPage",
            "page",
            "totalPages",
            "totalHits"
        ]
    );
}

#[test]
fn keyword_totals_are_exact_below_max_total_hits_and_capped_above() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let docs: Vec<Value> = (0..30)
        .map(|i| {
            let title = if i % 10 == 0 { "common rare" } else { "common" };
            json!({"id": i, "title": title})
        })
        .collect();
    let file = stage(tmp.path(), "a", &serde_json::to_string(&docs).unwrap());
    index
        .apply_batch(vec![
            BatchOp::UpdateSettings {
                task_uid: 1,
                patch: json!({"pagination": {"maxTotalHits": 12}}),
            },
            add(2, file, Method::Replace, None),
        ])
        .unwrap();
    // One term alone passes the cap: the count stops at maxTotalHits.
    let r = search(&index, Some("common"));
    assert_eq!(r["estimatedTotalHits"], json!(12));
    assert_eq!(r["hits"].as_array().unwrap().len(), 12);
    // Below the cap the union is counted exactly.
    assert_eq!(search(&index, Some("rare"))["estimatedTotalHits"], json!(3));
    // Deleting documents keeps the count exact near the cap.
    let ids: Vec<String> = (0..20).map(|i| i.to_string()).collect();
    index
        .apply_batch(vec![BatchOp::DeleteDocuments { task_uid: 3, ids }])
        .unwrap();
    assert_eq!(
        search(&index, Some("common"))["estimatedTotalHits"],
        json!(10)
    );
    assert_eq!(search(&index, Some("rare"))["estimatedTotalHits"], json!(1));
}

#[test]
fn a_filtered_total_counts_typo_matches_unless_those_without_pass_max_total_hits() {
    let tmp = tempfile::tempdir().unwrap();
    // 120 documents hold `contents`, 4 of them with n = 1; 2 hold `contentz` (one typo away)
    // and 78 neither, all with n = 1. The filters below pass enough documents for the total
    // to count the matches without typos first.
    let docs: Vec<Value> = (0..200)
        .map(|i| {
            let (name, n) = match i {
                0..120 => ("contents", i64::from(i < 4)),
                120..122 => ("contentz", 1),
                _ => ("other", 1),
            };
            json!({"id": i, "name": name, "summary": "x", "n": n})
        })
        .collect();
    let settings = json!({"filterableAttributes": ["n"], "pagination": {"maxTotalHits": 8}});
    let index = with_docs(tmp.path(), docs, settings);
    // `limit: 2`: the page is full without the typo level, so only the total may need it.
    let total = |filter: &str| {
        let q = json!({"q": "contents", "filter": filter, "limit": 2});
        let q: SearchQuery = serde_json::from_value(q).unwrap();
        let r: Value = serde_json::from_slice(&index.search(&q).unwrap()).unwrap();
        r["estimatedTotalHits"].clone()
    };
    // 120 pass without typos: the cap.
    assert_eq!(total("n >= 0"), json!(8));
    // 4 pass without typos, under the cap: the typo matches are counted too (4 + 2).
    assert_eq!(total("n = 1"), json!(6));
}

#[test]
fn a_one_letter_prefix_completes_to_its_fifty_most_frequent_words_ties_in_byte_order() {
    let tmp = tempfile::tempdir().unwrap();
    // 60 words `qaa`, `qab`, … starting with `q`; word i is in 1 + i % 3 documents: 20 words
    // in 3, 20 in 2 and 20 in 1. `q` (one byte, no prefix term of its own) completes to the
    // 50 most frequent: those in 3 and 2 documents, and the first 10 of those in 1 by byte
    // order (i = 0, 3, …, 27), so the documents of i = 30, 33, …, 57 are not found.
    let word = |i: usize| {
        format!(
            "q{}{}",
            (b'a' + (i / 26) as u8) as char,
            (b'a' + (i % 26) as u8) as char
        )
    };
    let mut docs: Vec<Value> = Vec::new();
    for i in 0..60 {
        for _ in 0..=(i % 3) {
            docs.push(json!({"id": docs.len(), "name": word(i), "summary": "x", "w": i}));
        }
    }
    // One batch of additions and no settings change: a change that reindexes would leave the
    // replaced documents counted in tantivy's frequencies until its segments merge, at a time
    // of its own, and the order of the completions with them.
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let file = stage(tmp.path(), "a", &Value::Array(docs.clone()).to_string());
    index
        .apply_batch(vec![add(1, file, Method::Replace, None)])
        .unwrap();
    let mut found = hit_ids(&index, json!({"q": "q", "limit": 200}));
    found.sort_unstable();
    let left_out = |i: i64| i % 3 == 0 && i >= 30;
    let expected: Vec<i64> = docs
        .iter()
        .filter(|d| !left_out(d["w"].as_i64().unwrap()))
        .map(|d| d["id"].as_i64().unwrap())
        .collect();
    assert_eq!(found, expected);
    assert_eq!(search(&index, Some("q"))["estimatedTotalHits"], json!(110));
}

#[test]
fn documents_with_every_word_come_before_those_with_some() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let file = stage(
        tmp.path(),
        "a",
        r#"[{"id":1,"t":"rust rust rust rust"},{"id":2,"t":"a long title about rust and the web and more"},{"id":3,"t":"web"},{"id":4,"t":"nothing"}]"#,
    );
    index
        .apply_batch(vec![add(1, file, Method::Replace, None)])
        .unwrap();
    let r = search(&index, Some("rust web"));
    let ids: Vec<u64> = r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_u64().unwrap())
        .collect();
    // Every word first; with the default strategy (`last`) the first word is required, so
    // the document holding only "web" is not a candidate.
    assert_eq!(ids, [2, 1]);
    assert_eq!(r["estimatedTotalHits"], json!(2));
    // The same word twice is one word.
    assert_eq!(
        search(&index, Some("web web"))["estimatedTotalHits"],
        json!(2)
    );
}
