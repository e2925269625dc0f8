//! Filters, facets and sorts on search and fetch: totals, the cache, value columns kept
//! up to date batch after batch, and narrow filters under broad words.

use crate::common::{add, stage, with_docs};
use api_types::Code;
use engine::{BatchOp, FetchQuery, Index, Method, SearchQuery};
use serde_json::{json, Value};
use std::path::Path;

#[test]
fn search_and_fetch_apply_the_filter_to_hits_and_totals() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let file = stage(
        tmp.path(),
        "a",
        r#"[{"id":1,"n":5,"t":"rust web"},{"id":2,"n":15,"t":"rust"},{"id":3,"n":25,"t":"web"}]"#,
    );
    let settings = json!({"filterableAttributes": ["n"]});
    index
        .apply_batch(vec![
            add(1, file, Method::Replace, None),
            BatchOp::UpdateSettings {
                task_uid: 2,
                patch: settings,
            },
        ])
        .unwrap();
    let query = |q: Option<&str>, filter: Value| -> SearchQuery {
        serde_json::from_value(json!({ "q": q, "filter": filter })).unwrap()
    };
    let run =
        |q: SearchQuery| -> Value { serde_json::from_slice(&index.search(&q).unwrap()).unwrap() };
    let r = run(query(None, json!("n > 10")));
    assert_eq!(r["estimatedTotalHits"], json!(2));
    let r = run(query(Some("rust"), json!("n > 10")));
    assert_eq!(r["estimatedTotalHits"], json!(1));
    assert_eq!(r["hits"][0]["id"], json!(2));
    let e = index.search(&query(None, json!("t = 1"))).unwrap_err();
    assert_eq!(e.code, Code::InvalidSearchFilter);
    let f = FetchQuery {
        offset: 0,
        limit: 1,
        fields: None,
        ids: None,
        retrieve_vectors: false,
        sort: None,
        filter: Some(json!("n 10 TO 30")),
        contains_filter: false,
        foreign_ids: None,
    };
    let r: Value = serde_json::from_slice(&index.fetch_documents(&f).unwrap()).unwrap();
    assert_eq!(r["total"], json!(2));
    assert_eq!(r["results"][0]["id"], json!(2));
    // A repeated filter is answered from the cache until the next commit changes the data.
    assert_eq!(
        run(query(None, json!("n > 10")))["estimatedTotalHits"],
        json!(2)
    );
    let more = stage(tmp.path(), "b", r#"[{"id":4,"n":20}]"#);
    index
        .apply_batch(vec![add(3, more, Method::Replace, None)])
        .unwrap();
    assert_eq!(
        run(query(None, json!("n > 10")))["estimatedTotalHits"],
        json!(3)
    );
}

/// Every search of `queries` answers on `live` as on an index built afresh in `dir` from
/// `docs` (same settings), `processingTimeMs` aside.
fn answers_as_fresh(live: &Index, dir: &Path, docs: &[Value], settings: &Value, queries: &[Value]) {
    let fresh = Index::open(dir).unwrap();
    let file = stage(
        dir.parent().unwrap(),
        "fresh-docs",
        &Value::from(docs.to_vec()).to_string(),
    );
    fresh
        .apply_batch(vec![
            add(1, file, Method::Replace, None),
            BatchOp::UpdateSettings {
                task_uid: 2,
                patch: settings.clone(),
            },
        ])
        .unwrap();
    for q in queries {
        let run = |index: &Index| {
            let q: SearchQuery = serde_json::from_value(q.clone()).unwrap();
            let mut r: Value = serde_json::from_slice(&index.search(&q).unwrap()).unwrap();
            r.as_object_mut().unwrap().remove("processingTimeMs");
            r
        };
        assert_eq!(run(live), run(&fresh), "{q}");
    }
}

#[test]
fn value_columns_follow_every_batch_as_a_fresh_build_would() {
    let tmp = tempfile::tempdir().unwrap();
    let settings = json!({"filterableAttributes": ["kind", "n", "tags", "_geo"],
        "sortableAttributes": ["n", "kind", "id", "_geo"]});
    let queries = [
        json!({"q": "", "facets": ["kind", "n", "tags"], "filter": "n > 10",
            "sort": ["n:desc", "kind:asc", "id:asc"], "limit": 1000}),
        json!({"q": "", "filter": "tags = t3 OR kind IN [k1, k9]", "sort": ["kind:desc", "id:asc"],
            "facets": ["tags"], "limit": 1000}),
        json!({"q": "", "facets": ["kind"], "sort": ["n:asc", "id:asc"], "limit": 1000}),
        json!({"q": "", "filter": "NOT kind = k1", "limit": 0}),
        json!({"q": "", "filter": "_geoRadius(45.0, 5.0, 200000)",
            "sort": ["_geoPoint(45.0, 5.0):asc", "id:asc"], "limit": 50}),
    ];
    let seed = std::cell::Cell::new(7u64);
    let rand = |m: u64| {
        seed.set(
            seed.get()
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407),
        );
        (seed.get() >> 33) % m
    };
    let doc = |id: u64, kinds: u64| {
        let tags: Vec<String> = (0..rand(3)).map(|_| format!("t{}", rand(6))).collect();
        let mut d =
            json!({"id": id, "kind": format!("k{}", rand(kinds)), "n": rand(40), "tags": tags});
        if rand(3) > 0 {
            d["_geo"] =
                json!({"lat": 44.0 + rand(20) as f64 / 10.0, "lng": 4.0 + rand(20) as f64 / 10.0});
        }
        d
    };
    let mut docs: std::collections::BTreeMap<u64, Value> =
        (0..400).map(|id| (id, doc(id, 5))).collect();
    let live = Index::open(tmp.path().join("live")).unwrap();
    let file = stage(
        tmp.path(),
        "first",
        &Value::from(docs.values().cloned().collect::<Vec<_>>()).to_string(),
    );
    live.apply_batch(vec![
        add(1, file, Method::Replace, None),
        BatchOp::UpdateSettings {
            task_uid: 2,
            patch: settings.clone(),
        },
    ])
    .unwrap();
    let mut next_id = 400;
    for step in 0..10u64 {
        // The columns of the generation before this batch are built (and cached).
        answers_as_fresh(
            &live,
            &tmp.path().join(format!("fresh-{step}")),
            &docs.values().cloned().collect::<Vec<_>>(),
            &settings,
            &queries,
        );
        let mut ops = Vec::new();
        // New documents, some with a kind never seen before.
        let added: Vec<Value> = (0..1 + rand(20))
            .map(|_| {
                next_id += 1;
                doc(next_id, 5 + step)
            })
            .collect();
        // Replaced documents, and partial updates changing one value.
        let keys: Vec<u64> = docs.keys().copied().collect();
        let replaced: Vec<Value> = (0..rand(15))
            .map(|_| doc(keys[rand(keys.len() as u64) as usize], 12))
            .collect();
        let updated: Vec<Value> = (0..rand(10))
            .map(|_| json!({"id": keys[rand(keys.len() as u64) as usize], "n": 100 + rand(5)}))
            .collect();
        let deleted: Vec<u64> = (0..rand(15))
            .map(|_| keys[rand(keys.len() as u64) as usize])
            .collect();
        for (name, list, method) in [
            ("added", &added, Method::Replace),
            ("replaced", &replaced, Method::Replace),
        ] {
            let file = stage(
                tmp.path(),
                &format!("{name}-{step}"),
                &Value::from(list.clone()).to_string(),
            );
            ops.push(add(10 * step + ops.len() as u64 + 10, file, method, None));
        }
        for d in added.iter().chain(&replaced) {
            docs.insert(d["id"].as_u64().unwrap(), d.clone());
        }
        let file = stage(
            tmp.path(),
            &format!("updated-{step}"),
            &Value::from(updated.clone()).to_string(),
        );
        ops.push(add(10 * step + 12, file, Method::Update, None));
        for u in &updated {
            docs.get_mut(&u["id"].as_u64().unwrap()).unwrap()["n"] = u["n"].clone();
        }
        ops.push(BatchOp::DeleteDocuments {
            task_uid: 10 * step + 13,
            ids: deleted.iter().map(|i| i.to_string()).collect(),
        });
        for id in &deleted {
            docs.remove(id);
        }
        live.apply_batch(ops).unwrap();
    }
    answers_as_fresh(
        &live,
        &tmp.path().join("fresh-last"),
        &docs.values().cloned().collect::<Vec<_>>(),
        &settings,
        &queries,
    );
}

/// A narrow filter under a broad word: the pass over the word's documents seeks to the
/// filter's instead of reading through them, in a segment where some documents were replaced
/// or deleted since (a replaced document's internal id is held by a dead document and a live
/// one). The hits and the total are the word's documents the filter passes, whatever the
/// filter's width.
#[test]
fn a_narrow_filter_under_a_broad_word_finds_exactly_its_documents() {
    let tmp = tempfile::tempdir().unwrap();
    let doc = |i: i64, name: &str, n: i64| json!({"id": i, "name": name, "summary": "x", "n": n});
    let docs: Vec<Value> = (0..3000)
        .map(|i| doc(i, &format!("common word{}", i % 5), i % 1000))
        .collect();
    let index = with_docs(tmp.path(), docs, json!({"filterableAttributes": ["n"]}));
    // Replaced: 7 and 1007 without the word, 2007 with another n, 9 with the word kept.
    let b = stage(
        tmp.path(),
        "b",
        &json!([
            doc(7, "other", 7),
            doc(1007, "other", 7),
            doc(2007, "common", 8),
            doc(9, "common again", 9)
        ])
        .to_string(),
    );
    index
        .apply_batch(vec![
            add(3, b, Method::Replace, None),
            BatchOp::DeleteDocuments {
                task_uid: 4,
                ids: vec!["1009".into(), "2008".into()],
            },
        ])
        .unwrap();
    let n_of = |i: i64| if i == 2007 { 8 } else { i % 1000 };
    let holds = |i: i64| ![7, 1007, 1009, 2008].contains(&i);
    for (filter, passes) in [
        (
            "n = 7",
            Box::new(|n: i64| n == 7) as Box<dyn Fn(i64) -> bool>,
        ),
        ("n = 8", Box::new(|n| n == 8)),
        ("n = 9", Box::new(|n| n == 9)),
        ("n < 4", Box::new(|n| n < 4)),
        ("n >= 990", Box::new(|n| n >= 990)),
        ("n < 600", Box::new(|n| n < 600)),
    ] {
        let mut expected: Vec<i64> = (0..3000).filter(|&i| holds(i) && passes(n_of(i))).collect();
        expected.sort_unstable();
        for q in ["common", "comon"] {
            let found = |limit: usize| -> Value {
                let body = json!({"q": q, "filter": filter, "limit": limit});
                let body = index
                    .search(&serde_json::from_value(body).unwrap())
                    .unwrap();
                serde_json::from_slice(&body).unwrap()
            };
            let r = found(3000);
            let mut ids: Vec<i64> = r["hits"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h["id"].as_i64().unwrap())
                .collect();
            ids.sort_unstable();
            // At most `maxTotalHits` (1,000) hits: a wider filter's are some of its documents.
            if expected.len() <= 1000 {
                assert_eq!(ids, expected, "{q} {filter}");
            } else {
                assert_eq!(ids.len(), 1000, "{q} {filter}");
                assert!(
                    ids.iter().all(|i| expected.binary_search(i).is_ok()),
                    "{q} {filter}"
                );
            }
            // With a page of two, the total is counted, not read off the ranked documents.
            let total = json!(expected.len().min(1000));
            assert_eq!(r["estimatedTotalHits"], total, "{q} {filter}");
            assert_eq!(
                found(2)["estimatedTotalHits"],
                total,
                "{q} {filter} limit 2"
            );
        }
    }
}
