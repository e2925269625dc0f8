//! Pairs of frequent words indexed as terms: a quoted phrase of two of them finds exactly the
//! documents holding the phrase, before the index chooses its pair words, across the batch
//! that chooses them (which gives tantivy every earlier document again), after updates,
//! deletions, a re-indexing settings change, and a reopen.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

mod common;

use common::{ids, search};
use engine::{stage_documents, BatchOp, Format, Index, Method, SearchQuery};
use serde_json::{json, Value};

/// Words most documents hold, then words few do.
const FREQUENT: [&str; 6] = ["the", "data", "fast", "tool", "for", "python"];

/// A deterministic stream of numbers (a linear congruential generator).
struct Numbers(u64);

impl Numbers {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }

    fn words(&mut self, n: u64) -> String {
        let count = 2 + self.next(n);
        (0..count)
            .map(|_| match self.next(10) {
                0..=5 => FREQUENT[self.next(FREQUENT.len() as u64) as usize].to_string(),
                _ => format!("rare{}", self.next(5000)),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Documents `ids` with a name, a summary and two tags, drawn from `seed`.
fn docs(ids: std::ops::Range<u64>, seed: u64) -> Vec<Value> {
    let mut n = Numbers(seed);
    ids.map(|id| {
        json!({
            "id": id,
            "name": n.words(3),
            "summary": n.words(10),
            "tags": [n.words(2), n.words(2)],
        })
    })
    .collect()
}

fn stage(dir: &Path, name: &str, docs: &[Value]) -> PathBuf {
    let path = dir.join(name);
    let body = Value::Array(docs.to_vec()).to_string();
    stage_documents(body.as_bytes(), Format::Json, None, &path).unwrap();
    path
}

fn add(task_uid: u64, file: PathBuf) -> BatchOp {
    BatchOp::add_documents(task_uid, file, Method::Replace, Some("id".into()))
}

/// Whether `text` holds `a` immediately followed by `b`.
fn holds(text: &str, a: &str, b: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().collect();
    words.windows(2).any(|w| w == [a, b])
}

/// The ids of the documents holding the phrase `a b` in one value of one of `fields`.
fn expected(docs: &[Value], fields: &[&str], a: &str, b: &str) -> BTreeSet<u64> {
    docs.iter()
        .filter(|d| {
            fields.iter().any(|f| match &d[*f] {
                Value::String(s) => holds(s, a, b),
                Value::Array(values) => values.iter().any(|v| holds(v.as_str().unwrap(), a, b)),
                _ => false,
            })
        })
        .map(|d| d["id"].as_u64().unwrap())
        .collect()
}

/// The ids of every hit of `q`.
fn found(index: &Index, q: &str) -> BTreeSet<u64> {
    let query: SearchQuery = serde_json::from_value(json!({
        "q": q, "limit": 20000, "attributesToRetrieve": ["id"]
    }))
    .unwrap();
    let r: Value = serde_json::from_slice(&index.search(&query).unwrap()).unwrap();
    let ids: BTreeSet<u64> = r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_u64().unwrap())
        .collect();
    assert_eq!(r["estimatedTotalHits"], json!(ids.len()), "{q}");
    ids
}

/// The ids and ranking scores of the hits of the search `body`.
fn ranked(index: &Index, mut body: Value) -> Vec<(u64, String)> {
    body["showRankingScore"] = json!(true);
    ids(&search(index, body))
}

/// Three pages of `q`, each ranked as without the shortcuts (`attributesToSearchOn` naming
/// every field of `fields`), with their offsets.
fn pages_as_without_shortcuts(
    index: &Index,
    q: &str,
    fields: &[&str],
) -> Vec<(usize, Vec<(u64, String)>)> {
    [(0, 5), (5, 10), (40, 20)]
        .into_iter()
        .map(|(offset, limit)| {
            let page = json!({ "q": q, "offset": offset, "limit": limit });
            let mut plain = page.clone();
            plain["attributesToSearchOn"] = json!(fields);
            let got = ranked(index, page);
            assert_eq!(got, ranked(index, plain), "{q} {offset}");
            (offset, got)
        })
        .collect()
}

/// Every phrase of two frequent words (and one negated) finds the documents holding it.
fn check_phrases(index: &Index, docs: &[Value], fields: &[&str]) {
    for (a, b) in [
        ("the", "data"),
        ("data", "the"),
        ("fast", "tool"),
        ("tool", "tool"),
        ("for", "python"),
        ("python", "fast"),
    ] {
        let want = expected(docs, fields, a, b);
        assert!(!want.is_empty(), "{a} {b}");
        let q = format!("\"{a} {b}\"");
        assert_eq!(found(index, &q), want, "{q}");
        // Its pages rank as without the shortcuts (which read the pair terms by field).
        pages_as_without_shortcuts(index, &q, fields);
        // Unquoted too. Before a word `words` drops (one nothing holds, or a rare one), the
        // second word is no prefix and the shortcut set of the words in a row reads their
        // pair term; with a frequent third word, the shortcut sets of the three hold most of
        // their level.
        for q in [
            format!("{a} {b}"),
            format!("{a} {b} nowhere"),
            format!("{a} {b} rare7"),
            format!("{a} {b} fast"),
            format!("{a} {b} the data"),
        ] {
            pages_as_without_shortcuts(index, &q, fields);
        }
    }
    // A negated phrase leaves out exactly its documents.
    let with_word: BTreeSet<u64> = found(index, "python");
    let negated = found(index, "python -\"the data\"");
    let gone = expected(docs, fields, "the", "data");
    assert_eq!(negated, &with_word - &gone);
}

#[test]
fn phrases_of_pair_words_find_the_documents_holding_them_before_across_and_after_the_choice() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    let all_fields = ["name", "summary", "tags"];
    let mut all = docs(0..6000, 1);
    let index = Index::open(&dir).unwrap();
    index
        .apply_batch(vec![
            add(1, stage(tmp.path(), "a", &all)),
            BatchOp::UpdateSettings {
                task_uid: 2,
                patch: json!({ "pagination": { "maxTotalHits": 100000 } }),
            },
        ])
        .unwrap();
    // Below 10,000 documents: no pair words, phrases are checked position by position.
    assert!(index.pair_words().is_empty());
    check_phrases(&index, &all, &all_fields);

    // The batch passing 10,000 chooses them, and gives the first 6,000 to tantivy again.
    let more = docs(6000..12000, 2);
    index
        .apply_batch(vec![add(3, stage(tmp.path(), "b", &more))])
        .unwrap();
    all.extend(more);
    let chosen = index.pair_words();
    for w in FREQUENT {
        assert!(chosen.contains(&w.to_string()), "{w} in {chosen:?}");
    }
    assert!(!chosen.iter().any(|w| w.starts_with("rare")), "{chosen:?}");
    check_phrases(&index, &all, &all_fields);

    // Updates and deletions: the pair terms follow the documents.
    let replaced = docs(0..500, 3);
    let file = stage(tmp.path(), "c", &replaced);
    let deleted: Vec<String> = (500..1000).map(|i| i.to_string()).collect();
    index
        .apply_batch(vec![
            add(4, file),
            BatchOp::DeleteDocuments {
                task_uid: 5,
                ids: deleted,
            },
        ])
        .unwrap();
    all.splice(0..1000, replaced);
    check_phrases(&index, &all, &all_fields);

    // A settings change that re-indexes keeps the chosen words; so does a reopen.
    index
        .apply_batch(vec![BatchOp::UpdateSettings {
            task_uid: 6,
            patch: json!({ "searchableAttributes": ["name", "summary"] }),
        }])
        .unwrap();
    assert_eq!(index.pair_words(), chosen);
    check_phrases(&index, &all, &["name", "summary"]);
    drop(index);
    let index = Index::open(&dir).unwrap();
    assert_eq!(index.pair_words(), chosen);
    check_phrases(&index, &all, &["name", "summary"]);
}

#[test]
fn one_batch_of_many_documents_chooses_the_pair_words_from_its_own_documents() {
    let tmp = tempfile::tempdir().unwrap();
    let all = docs(0..15000, 4);
    let index = Index::open(tmp.path().join("idx")).unwrap();
    index
        .apply_batch(vec![
            BatchOp::UpdateSettings {
                task_uid: 1,
                patch: json!({ "pagination": { "maxTotalHits": 100000 } }),
            },
            add(2, stage(tmp.path(), "a", &all)),
        ])
        .unwrap();
    assert!(index.pair_words().contains(&"the".to_string()));
    check_phrases(&index, &all, &["name", "summary", "tags"]);
}

/// Two pair words in a row, before a word `words` drops: the second is no prefix, and the
/// shortcut set of the words in a row reads their pair term. The documents holding them in a
/// row at the second place of the summary rank first; those holding them only reversed (or
/// reversed and again in a row further on) must not take their place.
#[test]
fn words_in_a_row_before_a_dropped_word_rank_as_without_the_shortcuts() {
    let tmp = tempfile::tempdir().unwrap();
    let all: Vec<Value> = (0..10_500u64)
        .map(|i| {
            let summary = match i % 5 {
                0 => format!("x{i} alpha beta y{i}"),
                1 => format!("beta alpha x{i}"),
                2 => format!("alpha x{i} beta"),
                3 => format!("x{i} y{i} z{i} alpha beta"),
                _ => format!("x{i} y{i} beta alpha beta"),
            };
            json!({ "id": i, "name": format!("n{i}"), "summary": summary })
        })
        .collect();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    index
        .apply_batch(vec![
            BatchOp::UpdateSettings {
                task_uid: 1,
                patch: json!({ "searchableAttributes": ["name", "summary"] }),
            },
            add(2, stage(tmp.path(), "a", &all)),
        ])
        .unwrap();
    let pairs = index.pair_words();
    assert!(pairs.contains(&"alpha".to_string()) && pairs.contains(&"beta".to_string()));
    for q in ["alpha beta nowhere", "alpha beta x7", "beta alpha nowhere"] {
        for (offset, got) in pages_as_without_shortcuts(&index, q, &["name", "summary"]) {
            if q == "alpha beta nowhere" {
                // The words in a row at the second place (ids 0, 5, 10...) come first.
                assert!(
                    got.iter().all(|(id, _)| id % 5 == 0),
                    "{q} {offset}: {got:?}"
                );
            }
        }
    }
}
