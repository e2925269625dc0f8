//! Quoted phrases and words in a row: the pages found through the shortcut sets by field
//! weight are the pages the whole ranking gives, and totals past ranking count exactly up
//! to `maxTotalHits`.

mod common;

use common::{ids, search};
use engine::{stage_documents, BatchOp, Format, Index, Method};
use serde_json::{json, Value};

/// Names and summaries placing "fast parser" (and its words apart) in every way the rules
/// tell apart: opening or inside the name or the summary, split, exact, and absent.
fn catalogue() -> Vec<Value> {
    let names = [
        "fast parser",
        "fast parser kit",
        "my fast parser",
        "parser fast",
        "tool",
        "fast tool",
        "parser tool",
        "fastparse",
        "fast parsers",
    ];
    let summaries = [
        "Fast parser for logs",
        "fast parser",
        "A fast parser",
        "The very fast parser of text",
        "Parser that is fast",
        "fast and small parser",
        "Nothing to see",
        "Fast parsing of logs",
        "A tool that is a fast parser for all",
        "fast parsers and fast lexers",
        "",
    ];
    let mut docs = Vec::new();
    let mut id = 0;
    for (i, n) in names.iter().enumerate() {
        for (j, s) in summaries.iter().enumerate() {
            // Every pair, some twice, so that sets hold ties broken by id.
            for _ in 0..(1 + (i + j) % 2) {
                docs.push(json!({"id": id, "name": n, "summary": s}));
                id += 1;
            }
        }
    }
    docs
}

fn index_of(tmp: &tempfile::TempDir, settings: Value) -> Index {
    index_with(tmp, settings, catalogue())
}

fn index_with(tmp: &tempfile::TempDir, settings: Value, docs: Vec<Value>) -> Index {
    let index = Index::open(tmp.path().join("idx")).unwrap();
    index
        .apply_batch(vec![BatchOp::UpdateSettings {
            task_uid: 1,
            patch: settings,
        }])
        .unwrap();
    add_documents(&index, tmp, 2, &docs);
    index
}

/// Adds (or replaces) `docs` in one batch, as task `task_uid`.
fn add_documents(index: &Index, tmp: &tempfile::TempDir, task_uid: u64, docs: &[Value]) {
    let file = tmp.path().join(format!("docs-{task_uid}"));
    let body = serde_json::to_string(docs).unwrap();
    stage_documents(body.as_bytes(), Format::Json, None, &file).unwrap();
    index
        .apply_batch(vec![BatchOp::add_documents(
            task_uid,
            file,
            Method::Replace,
            None,
        )])
        .unwrap();
}

/// Every page of `q` equals the same page of the whole ranking (a score threshold just above
/// 0 ranks every candidate and keeps them all; one of 0 is no threshold, so a page).
fn pages_match_the_whole_ranking(index: &Index, q: &str) {
    pages_of(index, json!({"q": q}));
}

/// The same for a search `body` of any parameters.
fn pages_of(index: &Index, body: Value) {
    let q = body["q"].clone();
    for (offset, limit) in [
        (0, 1),
        (0, 3),
        (0, 5),
        (0, 8),
        (2, 6),
        (0, 20),
        (10, 15),
        (0, 60),
    ] {
        let mut body = body.clone();
        body["offset"] = json!(offset);
        body["limit"] = json!(limit);
        body["showRankingScore"] = json!(true);
        let page = search(index, body.clone());
        let mut all = body;
        all["rankingScoreThreshold"] = json!(1e-9);
        let whole = search(index, all);
        assert_eq!(ids(&page), ids(&whole), "{q} at {offset}+{limit}");
        assert_eq!(
            page["estimatedTotalHits"], whole["estimatedTotalHits"],
            "{q} total"
        );
    }
}

#[test]
fn phrase_and_word_pages_equal_the_whole_ranking() {
    let tmp = tempfile::tempdir().unwrap();
    let index = index_of(&tmp, json!({"searchableAttributes": ["name", "summary"]}));
    for q in [
        "\"fast parser\"",
        "\"parser fast\"",
        "\"fast parser\" logs",
        "tool \"fast parser\"",
        "fast parser",
        "fast pars",
        "fast parser logs",
        "parser fast",
    ] {
        pages_match_the_whole_ranking(&index, q);
    }
    // The phrase in the name comes first, then the summaries it opens.
    let r = search(&index, json!({"q": "\"fast parser\"", "limit": 3}));
    let first: Vec<String> = r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        first.iter().all(|n| n.starts_with("fast parser")),
        "{first:?}"
    );
}

/// The catalogue's best documents added last, and a third of the documents updated after
/// the others (read after them while keeping their internal ids): a page's bounded ranking,
/// which stops ranking a document once it cannot enter the page, gives the whole ranking's
/// page, ties broken by internal id.
#[test]
fn pages_equal_the_whole_ranking_when_the_best_documents_come_last() {
    let tmp = tempfile::tempdir().unwrap();
    let mut docs = catalogue();
    docs.reverse();
    let index = index_with(
        &tmp,
        json!({"searchableAttributes": ["name", "summary"]}),
        docs,
    );
    let again: Vec<Value> = catalogue()
        .into_iter()
        .filter(|d| d["id"].as_u64().unwrap() % 3 == 0)
        .collect();
    add_documents(&index, &tmp, 3, &again);
    for q in [
        "fast parser",
        "fast pars",
        "parser",
        "tool",
        "\"fast parser\"",
    ] {
        pages_match_the_whole_ranking(&index, q);
    }
}

#[test]
fn three_weights_and_the_legacy_attribute_rule_keep_the_order() {
    let tmp = tempfile::tempdir().unwrap();
    let index = index_of(
        &tmp,
        json!({"searchableAttributes": ["name", "summary", "id"]}),
    );
    for q in ["\"fast parser\"", "fast parser", "fast pars"] {
        pages_match_the_whole_ranking(&index, q);
    }
    let tmp = tempfile::tempdir().unwrap();
    let index = index_of(
        &tmp,
        json!({"searchableAttributes": ["name", "summary"],
               "rankingRules": ["words", "typo", "proximity", "attribute", "exactness"]}),
    );
    for q in ["\"fast parser\"", "fast parser", "fast pars"] {
        pages_match_the_whole_ranking(&index, q);
    }
}

/// Words in a row with a third weighted field holding them too: the set of documents with a
/// word in a field of the best weight settles a page only with the documents whose weights
/// sum below every word in the next field. A document with one word in the name and the row
/// in the third field sums as much as one with the row in the second field alone, which is
/// outside the set and may come first (its row opens the field).
#[test]
fn words_in_a_row_with_three_weighted_fields_keep_the_order() {
    let tags = [
        "fast parser",
        "parser",
        "fast",
        "",
        "tool fast",
        "parser fast",
        "fast tool parser",
    ];
    let mut docs: Vec<Value> = catalogue()
        .into_iter()
        .enumerate()
        .map(|(i, mut d)| {
            d["tags"] = json!(tags[(i * 5 + i / 7) % tags.len()]);
            d
        })
        .collect();
    let first = docs.len();
    for (n, (name, summary, tags)) in [
        ("fast", "", "the fast parser"),
        ("other", "fast parser", ""),
        ("fast", "", "a fast parser"),
    ]
    .into_iter()
    .enumerate()
    {
        docs.push(json!({"id": first + n, "name": name, "summary": summary, "tags": tags}));
    }
    for fields in [
        json!(["name", "summary", "tags"]),
        json!(["name", "tags", "summary"]),
        json!(["tags", "name", "summary"]),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let index = index_with(
            &tmp,
            json!({ "searchableAttributes": fields }),
            docs.clone(),
        );
        for q in [
            "fast parser",
            "fast pars",
            "parser fast",
            "\"fast parser\" tool",
            "tool fast",
        ] {
            pages_match_the_whole_ranking(&index, q);
        }
        // Only the three documents at the end hold the row, none with both words in the name.
        let tmp = tempfile::tempdir().unwrap();
        let index = index_with(
            &tmp,
            json!({ "searchableAttributes": fields }),
            docs[docs.len() - 3..].to_vec(),
        );
        pages_match_the_whole_ranking(&index, "fast parser");
    }
}

#[test]
fn phrase_totals_are_exact_below_max_total_hits_and_capped_above() {
    let tmp = tempfile::tempdir().unwrap();
    let index = index_of(
        &tmp,
        json!({"searchableAttributes": ["name", "summary"], "filterableAttributes": ["id"],
               "pagination": {"maxTotalHits": 1000}}),
    );
    let whole = |q: &str, filter: Option<&str>| {
        let mut body = json!({"q": q, "limit": 1, "rankingScoreThreshold": 0.0});
        if let Some(f) = filter {
            body["filter"] = json!(f);
        }
        search(&index, body)["estimatedTotalHits"].clone()
    };
    let total = |q: &str, filter: Option<&str>| {
        let mut body = json!({"q": q, "limit": 1});
        if let Some(f) = filter {
            body["filter"] = json!(f);
        }
        search(&index, body)["estimatedTotalHits"].clone()
    };
    for q in ["\"fast parser\"", "\"parser fast\"", "\"fast parser\" logs"] {
        assert_eq!(total(q, None), whole(q, None), "{q}");
        assert_eq!(total(q, Some("id < 50")), whole(q, Some("id < 50")), "{q}");
        assert!(total(q, None).as_u64().unwrap() > 1, "{q}");
    }
    // Past the cap the count stops there.
    index
        .apply_batch(vec![BatchOp::UpdateSettings {
            task_uid: 3,
            patch: json!({"pagination": {"maxTotalHits": 7}}),
        }])
        .unwrap();
    assert_eq!(total("\"fast parser\"", None), json!(7));
    assert_eq!(total("\"fast parser\"", Some("id < 50")), json!(7));
}

#[test]
fn pages_under_a_sparse_filter_equal_the_whole_ranking() {
    // One document in twenty has a rank: the filter passes too few for the shortcuts, and the
    // levels are read (filtered) before anything is ranked.
    let tmp = tempfile::tempdir().unwrap();
    let docs: Vec<Value> = catalogue()
        .into_iter()
        .map(|mut d| {
            let id = d["id"].as_u64().unwrap();
            if id % 20 == 0 {
                d["rank"] = json!(id);
            }
            d
        })
        .collect();
    let settings =
        json!({"searchableAttributes": ["name", "summary"], "filterableAttributes": ["rank"]});
    let index = index_with(&tmp, settings, docs);
    for q in [
        "fast",
        "fast parser",
        "fast parsre",
        "pars",
        "\"fast parser\"",
        "tool",
    ] {
        pages_of(&index, json!({"q": q, "filter": "rank >= 0"}));
        let r = search(&index, json!({"q": q, "filter": "rank >= 0", "limit": 100}));
        let hits = r["hits"].as_array().unwrap();
        assert!(
            hits.iter().all(|h| h["id"].as_u64().unwrap() % 20 == 0),
            "{q}: {hits:?}"
        );
        assert!(!hits.is_empty(), "{q}");
        // A filter no document passes.
        let none = search(&index, json!({"q": q, "filter": "rank >= 100000"}));
        assert_eq!(none["hits"], json!([]), "{q}");
        assert_eq!(none["estimatedTotalHits"], json!(0), "{q}");
    }
}

/// A phrase most documents hold past a field's start ("definitions for" after a first word,
/// or further): no shortcut set holds a page, so the level's documents outside the sets are
/// ranked by internal id until the page is certain. One most summaries open ("typescript
/// definitions"): the set by weight holds a page, its documents in the name ranked first and
/// the others by internal id. Some hold it in the name, at the start
/// of the summary, as the whole summary, or later; a third are updated after the others (read
/// after them, keeping their internal ids), and the best ones come last. Every page equals
/// the whole ranking's, under a filter too, with three weights and the legacy rule.
#[test]
fn phrase_pages_past_the_shortcuts_equal_the_whole_ranking() {
    let summary = |i: usize| match i % 401 {
        0 => "definitions for".to_string(),
        1 => format!("Definitions for tool {i}"),
        2 => format!("the typescript definitions for {i}"),
        3 => format!("many words then definitions for {i}"),
        // The phrase's words, not as the phrase: its first word opening the summary (6)
        // puts the document in the set by weight, read without the phrase's positions; the
        // ranking leaves it out.
        4 => format!("for definitions {i}"),
        6 => format!("definitions and more for {i}"),
        // Added late (larger internal ids), yet better than the others on `wordPosition`.
        5 => format!("some for package {i}"),
        _ => format!("TypeScript definitions for package {i}"),
    };
    let name = |i: usize| match i % 409 {
        0 => format!("definitions for {i}"),
        1 => format!("x definitions for {i}"),
        2 => format!("typescript definitions {i}"),
        _ => format!("pkg{i}"),
    };
    let docs: Vec<Value> = (0..2000usize)
        .rev()
        .map(|i| json!({"id": i, "name": name(i), "summary": summary(i), "rank": i % 7}))
        .collect();
    let again: Vec<Value> = docs
        .iter()
        .filter(|d| d["id"].as_u64().unwrap() % 3 == 0)
        .cloned()
        .collect();
    for settings in [
        json!({"searchableAttributes": ["name", "summary"], "filterableAttributes": ["rank"]}),
        json!({"searchableAttributes": ["summary", "name"], "filterableAttributes": ["rank"]}),
        json!({"searchableAttributes": ["name", "summary", "id"], "filterableAttributes": ["rank"]}),
        json!({"filterableAttributes": ["rank"]}),
        json!({"searchableAttributes": ["name", "summary"], "filterableAttributes": ["rank"],
               "rankingRules": ["words", "typo", "proximity", "attribute", "exactness"]}),
        json!({"searchableAttributes": ["name", "summary"], "filterableAttributes": ["rank"],
               "rankingRules": ["exactness", "words", "typo", "wordPosition", "attributeRank"]}),
    ] {
        // Totals past a page are counted, not capped at 1000.
        let mut settings = settings;
        settings["pagination"] = json!({"maxTotalHits": 5000});
        let tmp = tempfile::tempdir().unwrap();
        let index = index_with(&tmp, settings.clone(), docs.clone());
        add_documents(&index, &tmp, 3, &again);
        for q in [
            "\"definitions for\"",
            "\"typescript definitions\"",
            "\"for package\"",
        ] {
            pages_of(&index, json!({"q": q}));
            pages_of(&index, json!({"q": q, "filter": "rank < 5"}));
        }
        // The page is not the first documents by id: those holding the phrase in the name
        // (or opening a field) come first.
        let r = search(&index, json!({"q": "\"definitions for\"", "limit": 30}));
        assert_eq!(r["hits"].as_array().unwrap().len(), 30, "{settings}");
        let holding = (0..2000)
            .filter(|&i| {
                let has = |s: String| s.to_lowercase().contains("definitions for");
                has(summary(i)) || has(name(i))
            })
            .count();
        assert_eq!(r["estimatedTotalHits"], json!(holding), "{settings}");
    }
}

/// A phrase repeating a word matches only the word twice in a row in one field: not twice
/// apart (a comma between counts as apart, as in Meilisearch), nor once in each of two
/// fields, nor once.
#[test]
fn a_phrase_repeating_a_word_matches_it_in_a_row_only() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = vec![
        json!({"id": 1, "name": "fast fast parser", "summary": "x"}),
        json!({"id": 2, "name": "fast parser", "summary": "fast lexer"}),
        json!({"id": 3, "name": "parser fast", "summary": "fast lexer"}),
        json!({"id": 4, "name": "fast tool fast", "summary": "x"}),
        json!({"id": 5, "name": "fast", "summary": "x"}),
        json!({"id": 6, "name": "tool", "summary": "so fast fast fast"}),
        json!({"id": 7, "name": "tool", "summary": "fast, fast!"}),
    ];
    let index = index_with(
        &tmp,
        json!({"searchableAttributes": ["name", "summary"]}),
        docs,
    );
    let found = |q: &str| -> Vec<u64> {
        let r = search(&index, json!({"q": q, "matchingStrategy": "all"}));
        let mut ids: Vec<u64> = r["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].as_u64().unwrap())
            .collect();
        ids.sort_unstable();
        ids
    };
    assert_eq!(found("\"fast fast\""), vec![1, 6]);
    assert_eq!(found("\"fast fast fast\""), vec![6]);
    assert_eq!(found("\"fast fast\" parser"), vec![1]);
    pages_match_the_whole_ranking(&index, "\"fast fast\"");
}

/// A short prefix most names open with a completion of (`rea`: `react`, `ready`, `realm`):
/// the set of names opening so is ranked by internal id past those holding the word as
/// typed (`rea` itself, anywhere), which match better on `exactness` wherever their ids fall.
/// Some hold it in the name, some only in the summary, some nowhere; the best ones come
/// last, and a third are updated after the others. Every page equals the whole ranking's.
#[test]
fn prefix_pages_past_the_completions_equal_the_whole_ranking() {
    let names = [
        "react hooks",
        "ready set go",
        "realm db",
        "reactive streams",
        "tool react",
    ];
    let mut docs = Vec::new();
    for i in 0..600usize {
        // Names open with a completion, but for a few late ones holding the word as typed.
        let name = match i {
            598.. => "rea",
            590.. => "my rea kit",
            _ => names[i % names.len()],
        };
        // The word as typed in summaries of the second half only.
        let summary = match i {
            301.. if i % 7 == 0 => "the rea helper",
            301.. if i % 13 == 0 => "rea",
            _ => ["", "hooks for react", "reading list", "nothing here"][i % 4],
        };
        docs.push(json!({"id": i, "name": name, "summary": summary}));
    }
    let tmp = tempfile::tempdir().unwrap();
    let index = index_with(
        &tmp,
        json!({"searchableAttributes": ["name", "summary"]}),
        docs.clone(),
    );
    let again: Vec<Value> = docs
        .into_iter()
        .filter(|d| d["id"].as_u64().unwrap() % 3 == 0)
        .collect();
    add_documents(&index, &tmp, 3, &again);
    for q in ["rea", "reac", "re", "real", "hooks rea", "rea tool"] {
        pages_match_the_whole_ranking(&index, q);
    }
    // The typed word in a summary only ranks before completions alone, ids aside.
    let r = search(&index, json!({"q": "rea", "limit": 400}));
    let hits = r["hits"].as_array().unwrap();
    let typed_in_summary = hits
        .iter()
        .position(|h| {
            !h["name"].as_str().unwrap().contains("rea ")
                && h["name"].as_str().unwrap() != "rea"
                && matches!(h["summary"].as_str().unwrap(), "the rea helper" | "rea")
        })
        .unwrap();
    let completion_only = hits
        .iter()
        .position(|h| {
            !h["name"].as_str().unwrap().split(' ').any(|w| w == "rea")
                && !h["summary"]
                    .as_str()
                    .unwrap()
                    .split(' ')
                    .any(|w| w == "rea")
        })
        .unwrap();
    assert!(typed_in_summary < completion_only, "{hits:?}");
}
