//! Pages of large levels: what the shortcuts rank on one page (frequent words, a sort,
//! three words, facets under a word) equals what ranking the whole level gives.

use crate::common::{hit_ids, with_docs};
use engine::{Index, SearchQuery};
use serde_json::{json, Value};

/// Every page (offset, limit) of `body` equals the one ranked without shortcuts
/// (`attributesToSearchOn` naming every searchable field turns them off, nothing else).
fn pages_as_without_shortcuts(index: &Index, body: Value, pages: &[(usize, usize)]) {
    for (offset, limit) in pages {
        let mut page = body.clone();
        page["offset"] = json!(offset);
        page["limit"] = json!(limit);
        let mut plain = page.clone();
        plain["attributesToSearchOn"] = json!(["name", "summary"]);
        assert_eq!(
            hit_ids(index, page.clone()),
            hit_ids(index, plain),
            "{page}"
        );
    }
}

#[test]
fn a_frequent_word_ranks_as_the_whole_level_would_whatever_the_page() {
    let tmp = tempfile::tempdir().unwrap();
    // 400 documents open `name` with the word, so the level is ranked a page at a time.
    // Exact matches (a field that is the word alone) come last by id; some documents have a
    // one-word field that is another word; a few hold the word only with a typo.
    let mut docs = Vec::new();
    for i in 0..400 {
        let (name, summary) = match i {
            _ if i >= 390 => ("react", "tool kit"),
            _ if i % 50 == 7 => ("react kit", "react"),
            _ if i % 5 == 0 => ("react tool kit", "kit"),
            _ if i % 3 == 0 => ("react kit", "tool"),
            _ => ("react tool kit", "a tool kit"),
        };
        docs.push(json!({"id": i, "name": name, "summary": summary, "n": i % 4}));
    }
    for i in 400..420 {
        docs.push(json!({"id": i, "name": "reakt kit", "summary": "tool"}));
    }
    let index = with_docs(tmp.path(), docs, json!({"filterableAttributes": ["n"]}));
    let ids = |q: Value| hit_ids(&index, q);
    // The exact matches first (a whole name or a whole summary), by id.
    let page = ids(json!({"q": "react", "limit": 20}));
    let mut exact: Vec<i64> = (0..390).filter(|i| i % 50 == 7).collect();
    exact.extend(390..400);
    assert_eq!(page[..exact.len()], exact[..]);
    assert_eq!(page[exact.len()..], [0, 1]);
    // Every page equals the one ranked without shortcuts.
    let pages = [(0, 1), (0, 5), (0, 20), (3, 70), (250, 100)];
    let queries = [
        "react",
        "rea",
        "reakt",
        "raect",
        "reactkit",
        "react kit",
        "kit",
    ];
    for q in queries {
        for filter in [Value::Null, json!("n < 2")] {
            let body = json!({"q": q, "filter": filter});
            pages_as_without_shortcuts(&index, body, &pages);
        }
    }
}

#[test]
fn facets_under_a_word_count_what_ranking_every_match_would() {
    let tmp = tempfile::tempdir().unwrap();
    // Enough matches that a page of 20 leaves most unranked; words with typos, splits and
    // phrases, a string and a numeric facet.
    let mut docs = Vec::new();
    for i in 0..600 {
        let (name, summary) = match i % 7 {
            0 => ("react tool kit", "a kit for tools"),
            1 => ("reakt kit", "tool"),
            2 => ("react", "tool kit react"),
            3 => ("reactkit", "kit"),
            4 => ("kit react", "the tool"),
            5 => ("tools", "readme kit"),
            _ => ("other", "nothing here"),
        };
        docs.push(json!({"id": i, "name": name, "summary": summary,
            "tag": format!("t{}", i % 13), "n": (i % 37) as f64 / 2.0}));
    }
    let index = with_docs(
        tmp.path(),
        docs,
        json!({"filterableAttributes": ["tag", "n"]}),
    );
    let counts = |body: &Value| -> (Value, Value, Value) {
        let q: SearchQuery = serde_json::from_value(body.clone()).unwrap();
        let r: Value = serde_json::from_slice(&index.search(&q).unwrap()).unwrap();
        (
            r["facetDistribution"].clone(),
            r["facetStats"].clone(),
            r["estimatedTotalHits"].clone(),
        )
    };
    let queries = [
        "react",
        "rea",
        "raect",
        "reactkit",
        "react kit",
        "kit tool react",
        "\"tool kit\"",
        "kit -react",
        "tool",
        "t",
    ];
    for q in queries {
        for strategy in ["last", "all", "frequency"] {
            for filter in [Value::Null, json!("n < 9"), json!("tag IN [t1, t2]")] {
                let body = json!({"q": q, "matchingStrategy": strategy, "filter": filter,
                    "facets": ["tag", "n"], "limit": 20});
                // Naming every searchable attribute changes no match, and makes the search
                // rank every match (the ranking checks each occurrence's attribute).
                let mut whole = body.clone();
                whole["attributesToSearchOn"] = json!(["name", "summary"]);
                let (apart, all) = (counts(&body), counts(&whole));
                // Unfiltered, more match than the page holds.
                assert!(
                    !filter.is_null() || apart.2.as_u64().unwrap() > 20,
                    "{body}"
                );
                assert_eq!(apart, all, "{body}");
            }
        }
    }
}

#[test]
fn a_sorted_word_ranks_as_the_whole_level_would_whatever_the_page() {
    let tmp = tempfile::tempdir().unwrap();
    // 300 documents open `name` with the word (values with many ties, some missing), then
    // 30 hold it in `summary` only, with a better value.
    let mut docs = Vec::new();
    for i in 0..300 {
        let name = if i % 3 == 0 {
            "react kit"
        } else {
            "react tool kit"
        };
        docs.push(json!({"id": i, "name": name, "summary": "tool", "n": (i * 7) % 40}));
    }
    for i in 300..310 {
        docs.push(json!({"id": i, "name": "react kit", "summary": "tool"}));
    }
    for i in 310..340 {
        docs.push(json!({"id": i, "name": "tool", "summary": "react kit", "n": 100}));
    }
    let settings = json!({"sortableAttributes": ["n"], "filterableAttributes": ["n"]});
    let index = with_docs(tmp.path(), docs, settings);
    let ids = |q: Value| hit_ids(&index, q);
    // A page of the documents opening `name` (a better attribute than any value), by
    // value: the highest values first, the documents without one after every other.
    let value = |id: i64| if id < 300 { Some((id * 7) % 40) } else { None };
    let page = ids(json!({"q": "react", "sort": ["n:desc"], "limit": 310}));
    assert_eq!(page.len(), 310);
    assert!(page.iter().all(|id| *id < 310));
    let values: Vec<Option<i64>> = page.iter().map(|id| value(*id)).collect();
    assert!(values[..300].windows(2).all(|w| w[0] >= w[1]), "{values:?}");
    assert_eq!(values[0], Some(39));
    assert!(values[300..].iter().all(Option::is_none));
    // Every page equals the one ranked without shortcuts.
    let pages = [(0, 5), (0, 20), (0, 100), (40, 70), (250, 100)];
    for q in ["react", "\"react kit\"", "kit", "react kit"] {
        for filter in [Value::Null, json!("n < 20")] {
            let body = json!({"q": q, "sort": ["n:desc"], "filter": filter});
            pages_as_without_shortcuts(&index, body, &pages);
        }
    }
}

#[test]
fn three_frequent_words_rank_as_the_whole_level_would_whatever_the_page() {
    let tmp = tempfile::tempdir().unwrap();
    // 2,500 documents hold the three words, more than a page's read-first cap, so the level
    // is ranked through its set by weight (a word in `name`). Most of the set's documents
    // have the words far apart; those outside it (`tool`) have them in a row, and rank
    // before all but the few of the set that do too. 40 hold the words with a typo.
    let names = ["python-lib", "lib", "python-library", "tool"];
    let apart = [
        "a library of tools in python made for you",
        "for the many users of python this library",
        "library that python developers reach for",
    ];
    let mut docs = Vec::new();
    for i in 0..2500 {
        let name = format!("{}-{i}", names[i % 4]);
        let summary = match i {
            _ if i % 4 == 3 || i % 100 == 0 => "python library for data",
            _ => apart[(i / 4) % 3],
        };
        docs.push(json!({"id": i, "name": name, "summary": summary, "n": i % 3}));
    }
    for i in 2500..2540 {
        docs.push(json!({"id": i, "name": "pythn", "summary": "librari for"}));
    }
    let index = with_docs(tmp.path(), docs, json!({"filterableAttributes": ["n"]}));
    let pages = [
        (0, 1),
        (0, 5),
        (0, 20),
        (0, 40),
        (35, 30),
        (1200, 100),
        (2480, 40),
    ];
    let queries = [
        "python library for",
        "python library fo",
        "library for python",
        "python users library",
        "pythn librari for",
    ];
    for q in queries {
        for filter in [Value::Null, json!("n < 2")] {
            let body = json!({"q": q, "filter": filter});
            pages_as_without_shortcuts(&index, body, &pages);
        }
    }
    // The set's documents with the words in a row first, then the others with them so.
    let top = hit_ids(&index, json!({"q": "python library for", "limit": 40}));
    assert!(top[..25].iter().all(|id| id % 100 == 0), "{top:?}");
    assert!(top[25..].iter().all(|id| id % 4 == 3), "{top:?}");
}
