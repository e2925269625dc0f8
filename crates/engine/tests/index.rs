//! The engine on a real directory: batches, per-op failures, replay, and crash repair.

use api_types::Code;
use engine::{
    stage_documents, BatchOp, Compaction, FetchQuery, Format, Index, Method, SearchQuery,
    TEXT_LAYOUT,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn stage(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    stage_documents(body.as_bytes(), Format::Json, None, &path).unwrap();
    path
}

fn add(task_uid: u64, file: PathBuf, method: Method, primary_key: Option<&str>) -> BatchOp {
    BatchOp::add_documents(task_uid, file, method, primary_key.map(str::to_string))
}

fn fetch_all(index: &Index) -> Value {
    let q = FetchQuery {
        offset: 0,
        limit: 1000,
        fields: None,
        ids: None,
        retrieve_vectors: false,
        sort: None,
        filter: None,
        contains_filter: false,
    };
    serde_json::from_slice(&index.fetch_documents(&q).unwrap()).unwrap()
}

fn search(index: &Index, q: Option<&str>) -> Value {
    let q: SearchQuery = serde_json::from_value(json!({ "q": q })).unwrap();
    serde_json::from_slice(&index.search(&q).unwrap()).unwrap()
}

#[test]
fn add_update_delete_in_one_batch() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let a = stage(
        tmp.path(),
        "a",
        r#"[{"id":1,"title":"hello world","n":1},{"id":"two","title":"second"}]"#,
    );
    let b = stage(tmp.path(), "b", r#"{"id":1,"extra":true}"#);
    let bad = stage(tmp.path(), "c", r#"[{"id":3},{"id":"not valid!"}]"#);
    let results = index
        .apply_batch(vec![
            add(1, a, Method::Replace, None),
            add(2, b, Method::Update, None),
            add(3, bad, Method::Replace, None),
            BatchOp::DeleteDocuments {
                task_uid: 4,
                ids: vec!["two".into(), "missing".into()],
            },
        ])
        .unwrap();
    assert_eq!(
        results[0],
        json!({"taskUid":1,"ok":true,"indexedDocuments":2})
    );
    assert_eq!(
        results[1],
        json!({"taskUid":2,"ok":true,"indexedDocuments":1})
    );
    assert_eq!(results[2]["ok"], json!(false));
    assert_eq!(results[2]["error"]["code"], json!(Code::InvalidDocumentId));
    assert_eq!(
        results[3],
        json!({"taskUid":4,"ok":true,"deletedDocuments":1})
    );
    assert_eq!(index.primary_key().unwrap().as_deref(), Some("id"));
    let all = fetch_all(&index);
    assert_eq!(all["total"], json!(1));
    assert_eq!(
        all["results"][0],
        json!({"id":1,"title":"hello world","n":1,"extra":true})
    );
    assert_eq!(
        index.get_document("3", None, false).unwrap(),
        None,
        "a failed op applies none of its documents"
    );
    let stats: Value = serde_json::from_str(&index.stats_json().unwrap()).unwrap();
    assert_eq!(
        stats["fieldDistribution"],
        json!({"extra":1,"id":1,"n":1,"title":1})
    );
    assert_eq!(search(&index, Some("hello"))["hits"][0]["id"], json!(1));
    assert_eq!(
        search(&index, Some("second"))["estimatedTotalHits"],
        json!(0)
    );
}

#[test]
fn primary_key_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let none = stage(tmp.path(), "a", r#"[{"title":"x"}]"#);
    let two = stage(tmp.path(), "b", r#"[{"id":1,"uid":2}]"#);
    let ok = stage(tmp.path(), "c", r#"[{"key":"k1"}]"#);
    let other = stage(tmp.path(), "d", r#"[{"id":"k2","key":"k2"}]"#);
    let r = index
        .apply_batch(vec![
            add(1, none, Method::Replace, None),
            add(2, two, Method::Replace, None),
            add(3, ok, Method::Replace, Some("key")),
            add(4, other, Method::Replace, Some("id")),
        ])
        .unwrap();
    assert_eq!(
        r[0]["error"]["code"],
        json!(Code::IndexPrimaryKeyNoCandidateFound)
    );
    assert_eq!(
        r[1]["error"]["code"],
        json!(Code::IndexPrimaryKeyMultipleCandidatesFound)
    );
    assert_eq!(r[2]["ok"], json!(true));
    assert_eq!(
        r[3]["error"]["code"],
        json!(Code::IndexPrimaryKeyAlreadyExists)
    );
    let r = index
        .apply_batch(vec![BatchOp::SetPrimaryKey {
            task_uid: 5,
            primary_key: "other".into(),
        }])
        .unwrap();
    assert_eq!(
        r[0]["error"]["code"],
        json!(Code::IndexPrimaryKeyAlreadyExists)
    );
}

#[test]
fn replayed_batch_is_not_applied_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let a = stage(tmp.path(), "a", r#"[{"id":1,"n":1}]"#);
    let first = index
        .apply_batch(vec![add(7, a.clone(), Method::Replace, None)])
        .unwrap();
    let b = stage(tmp.path(), "b", r#"[{"id":1,"n":2}]"#);
    index
        .apply_batch(vec![add(8, b, Method::Replace, None)])
        .unwrap();
    // Task 8 replays (the task store did not record it): same answer, nothing applied twice.
    let c = stage(tmp.path(), "c", r#"[{"id":1,"n":3}]"#);
    let replay = index
        .apply_batch(vec![add(8, c, Method::Replace, None)])
        .unwrap();
    assert_eq!(
        replay,
        vec![json!({"taskUid":8,"ok":true,"indexedDocuments":1})]
    );
    assert_eq!(fetch_all(&index)["results"][0]["n"], json!(2));
    assert_eq!(first[0]["taskUid"], json!(7));
}

#[test]
fn reopen_repairs_tantivy_from_the_dirty_set() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    {
        let index = Index::open(&dir).unwrap();
        let a = stage(
            tmp.path(),
            "a",
            r#"[{"id":1,"t":"alpha"},{"id":2,"t":"beta"}]"#,
        );
        index
            .apply_batch(vec![add(1, a, Method::Replace, None)])
            .unwrap();
    }
    // Simulate a crash after the LMDB commit of generation 2 and before tantivy's: write the
    // documents and the dirty set straight into the store, as step 1 of the protocol would.
    {
        let env = store_env(&dir);
        let mut wtxn = env.write_txn().unwrap();
        let docs: heed::Database<heed::types::U32<heed::byteorder::BE>, heed::types::Bytes> =
            env.open_database(&wtxn, Some("docs")).unwrap().unwrap();
        let ids: heed::Database<heed::types::Str, heed::types::U32<heed::byteorder::BE>> =
            env.open_database(&wtxn, Some("ids")).unwrap().unwrap();
        let meta: heed::Database<heed::types::Str, heed::types::Bytes> =
            env.open_database(&wtxn, Some("meta")).unwrap().unwrap();
        docs.put(&mut wtxn, &1, br#"{"id":2,"t":"gamma"}"#).unwrap();
        docs.put(&mut wtxn, &5, br#"{"id":9,"t":"delta"}"#).unwrap();
        ids.put(&mut wtxn, "9", &5).unwrap();
        let mut dirty = roaring::RoaringBitmap::new();
        dirty.insert(1);
        dirty.insert(5);
        let mut bytes = Vec::new();
        dirty.serialize_into(&mut bytes).unwrap();
        meta.put(&mut wtxn, "dirty", &bytes).unwrap();
        meta.put(&mut wtxn, "generation", &2u64.to_be_bytes())
            .unwrap();
        wtxn.commit().unwrap();
        env.prepare_for_closing().wait();
    }
    let index = Index::open(&dir).unwrap();
    assert_eq!(search(&index, Some("gamma"))["hits"][0]["id"], json!(2));
    assert_eq!(search(&index, Some("delta"))["hits"][0]["id"], json!(9));
    assert_eq!(search(&index, Some("beta"))["estimatedTotalHits"], json!(0));
    assert_eq!(
        search(&index, Some("alpha"))["estimatedTotalHits"],
        json!(1)
    );
}

/// The index's LMDB store, opened beside the engine (as a crash would leave it).
fn store_env(dir: &Path) -> heed::Env {
    unsafe {
        heed::EnvOpenOptions::new()
            .map_size(1 << 30)
            .max_dbs(8)
            .open(dir.join("store"))
    }
    .unwrap()
}

/// Writes `doc` under internal id `iid` straight into the store, behind tantivy's back, and
/// sets (`Some`) or removes (`None`) the text layout key.
fn write_behind_tantivy(dir: &Path, iid: u32, doc: &[u8], layout: Option<u64>) {
    let env = store_env(dir);
    let mut wtxn = env.write_txn().unwrap();
    let docs: heed::Database<heed::types::U32<heed::byteorder::BE>, heed::types::Bytes> =
        env.open_database(&wtxn, Some("docs")).unwrap().unwrap();
    let meta: heed::Database<heed::types::Str, heed::types::Bytes> =
        env.open_database(&wtxn, Some("meta")).unwrap().unwrap();
    docs.put(&mut wtxn, &iid, doc).unwrap();
    match layout {
        Some(l) => meta.put(&mut wtxn, "textLayout", &l.to_be_bytes()).unwrap(),
        None => meta.delete(&mut wtxn, "textLayout").map(|_| ()).unwrap(),
    }
    wtxn.commit().unwrap();
    env.prepare_for_closing().wait();
}

#[test]
fn an_index_of_another_text_layout_is_rebuilt_whole_once_when_it_opens() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    {
        let index = Index::open(&dir).unwrap();
        let a = stage(tmp.path(), "a", r#"[{"id":1,"t":"alpha"}]"#);
        index
            .apply_batch(vec![add(1, a, Method::Replace, None)])
            .unwrap();
    }
    // An index written before the layout key (or with another layout): tantivy is rebuilt
    // from every stored document, including one it never saw.
    write_behind_tantivy(&dir, 7, br#"{"id":2,"t":"gamma"}"#, None);
    {
        let index = Index::open(&dir).unwrap();
        assert_eq!(search(&index, Some("gamma"))["hits"][0]["id"], json!(2));
        assert_eq!(search(&index, Some("alp"))["hits"][0]["id"], json!(1));
    }
    // Once rebuilt, the layout is recorded: the next open rebuilds nothing.
    write_behind_tantivy(&dir, 8, br#"{"id":3,"t":"delta"}"#, Some(TEXT_LAYOUT));
    {
        let index = Index::open(&dir).unwrap();
        assert_eq!(
            search(&index, Some("delta"))["estimatedTotalHits"],
            json!(0)
        );
    }
    write_behind_tantivy(&dir, 9, br#"{"id":4,"t":"omega"}"#, Some(TEXT_LAYOUT - 1));
    let index = Index::open(&dir).unwrap();
    assert_eq!(search(&index, Some("omega"))["hits"][0]["id"], json!(4));
    assert_eq!(search(&index, Some("delta"))["hits"][0]["id"], json!(3));
}

#[test]
fn a_damaged_segment_is_found_when_the_index_opens_and_rebuilt_from_the_documents() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    {
        let index = Index::open(&dir).unwrap();
        let a = stage(
            tmp.path(),
            "a",
            r#"[{"id":1,"t":"alpha beta"},{"id":2,"t":"beta gamma"}]"#,
        );
        index
            .apply_batch(vec![add(1, a, Method::Replace, None)])
            .unwrap();
        assert_eq!(index.repaired(), None);
    }
    // One byte of the postings changed: only its checksum tells.
    let tdir = dir.join("tantivy");
    let idx = std::fs::read_dir(&tdir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "idx"))
        .unwrap();
    let mut bytes = std::fs::read(&idx).unwrap();
    bytes[0] ^= 0xff;
    std::fs::write(&idx, &bytes).unwrap();
    {
        let index = Index::open(&dir).unwrap();
        let why = index.repaired().unwrap();
        assert!(why.contains("does not match its checksum"), "{why}");
        assert_eq!(search(&index, Some("beta"))["estimatedTotalHits"], json!(2));
        assert_eq!(search(&index, Some("gamma"))["hits"][0]["id"], json!(2));
    }
    assert_eq!(Index::open(&dir).unwrap().repaired(), None);
    // A store that is not there is refused where the index must exist, never created empty.
    std::fs::remove_file(dir.join("store").join("data.mdb")).unwrap();
    let e = Index::open_existing(&dir).err().unwrap();
    assert_eq!(e.code, Code::InvalidStoreFile);
    assert!(
        e.message.ends_with("data.mdb` is missing."),
        "{}",
        e.message
    );
}

#[test]
fn a_rebuilt_index_is_searched_as_one_segment() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    {
        let index = Index::open(&dir).unwrap();
        let words = [
            "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
        ];
        let docs: Vec<Value> = (0..6000)
            .map(|i| json!({"id": i, "t": format!("{} common", words[i % 7])}))
            .collect();
        let file = stage(tmp.path(), "a", &serde_json::to_string(&docs).unwrap());
        index
            .apply_batch(vec![add(1, file, Method::Replace, None)])
            .unwrap();
    }
    // The rebuild re-feeds the documents through the writer's threads, one segment each at
    // least; a search then visits every one until the next write merges them.
    write_behind_tantivy(&dir, 6000, br#"{"id":6000,"t":"omega"}"#, None);
    let index = Index::open(&dir).unwrap();
    assert_eq!(index.segment_count().unwrap(), 1);
    assert_eq!(
        search(&index, Some("delta"))["estimatedTotalHits"],
        json!((0..6000).filter(|i| i % 7 == 3).count())
    );
    assert_eq!(search(&index, Some("omega"))["hits"][0]["id"], json!(6000));
}

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
fn clear_then_add_in_one_batch() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let a = stage(
        tmp.path(),
        "a",
        r#"[{"id":1,"t":"old"},{"id":2,"t":"old"}]"#,
    );
    index
        .apply_batch(vec![add(1, a, Method::Replace, None)])
        .unwrap();
    let b = stage(tmp.path(), "b", r#"[{"id":3,"t":"new"}]"#);
    let r = index
        .apply_batch(vec![
            BatchOp::ClearDocuments { task_uid: 2 },
            add(3, b, Method::Replace, None),
        ])
        .unwrap();
    assert_eq!(r[0]["deletedDocuments"], json!(2));
    assert_eq!(index.document_count().unwrap(), 1);
    assert_eq!(search(&index, Some("old"))["estimatedTotalHits"], json!(0));
    assert_eq!(search(&index, Some("new"))["estimatedTotalHits"], json!(1));
    assert_eq!(search(&index, None)["estimatedTotalHits"], json!(1));
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
fn documents_keep_values_and_field_order_across_reopen_and_updates() {
    let tmp = tempfile::tempdir().unwrap();
    let first = stage(
        tmp.path(),
        "a",
        r#"[{"id":1,"z":"last \"quoted\"","a":[1,{"b":null}],"m":1.25,"t":true},{"id":2,"only":"x"}]"#,
    );
    {
        let index = Index::open(tmp.path().join("idx")).unwrap();
        index
            .apply_batch(vec![add(1, first, Method::Replace, None)])
            .unwrap();
    }
    // A new process: the fields map comes back from the store.
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let doc: Value =
        serde_json::from_slice(&index.get_document("1", None, false).unwrap().unwrap()).unwrap();
    assert_eq!(
        serde_json::to_string(&doc).unwrap(),
        r#"{"id":1,"z":"last \"quoted\"","a":[1,{"b":null}],"m":1.25,"t":true}"#
    );
    // A partial update adds a field the map has never seen, next to known ones.
    let update = stage(tmp.path(), "b", r#"{"id":2,"fresh":"new","z":"known"}"#);
    index
        .apply_batch(vec![add(2, update, Method::Update, None)])
        .unwrap();
    let doc: Value =
        serde_json::from_slice(&index.get_document("2", None, false).unwrap().unwrap()).unwrap();
    assert_eq!(
        serde_json::to_string(&doc).unwrap(),
        r#"{"id":2,"only":"x","fresh":"new","z":"known"}"#
    );
    assert_eq!(fetch_all(&index)["total"], json!(2));
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

#[test]
fn compacting_after_a_batch_merges_the_inverted_index_into_one_segment() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    for b in 0..4u64 {
        let docs: Vec<Value> = (0..50)
            .map(|i| json!({"id": b * 100 + i, "t": format!("word{} common", i % 7)}))
            .collect();
        let file = stage(
            tmp.path(),
            &format!("b{b}"),
            &serde_json::to_string(&docs).unwrap(),
        );
        index
            .apply_batch(vec![add(b + 1, file, Method::Replace, None)])
            .unwrap();
    }
    assert!(index.segment_count().unwrap() > 1);
    let before = search(&index, Some("common word3"));
    // A fifth of the index arrives in the last batch: worth one merge.
    let docs: Vec<Value> = (0..50)
        .map(|i| json!({"id": 1000 + i, "t": "common"}))
        .collect();
    let file = stage(tmp.path(), "last", &serde_json::to_string(&docs).unwrap());
    index
        .apply_batch(vec![add(9, file, Method::Replace, None)])
        .unwrap();
    // Nothing merges until asked.
    assert!(index.segment_count().unwrap() > 1);
    index.compact_if_worthwhile().unwrap();
    assert_eq!(index.segment_count().unwrap(), 1);
    // The merged-away segments' files are gone from disk.
    let postings = std::fs::read_dir(tmp.path().join("idx/tantivy"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "idx")
        })
        .count();
    assert_eq!(postings, 1);
    let after = search(&index, Some("common word3"));
    assert_eq!(after["estimatedTotalHits"], json!(250));
    assert_eq!(before["hits"][0], after["hits"][0]);
    // A single new document is not worth rewriting the index: it stays in its own segment.
    let file = stage(tmp.path(), "one", r#"{"id": 9999, "t": "common"}"#);
    index
        .apply_batch(vec![add(10, file, Method::Replace, None)])
        .unwrap();
    index.compact_if_worthwhile().unwrap();
    assert_eq!(index.segment_count().unwrap(), 2);
    // Reopening after the merge finds every document and no repair to do.
    drop(index);
    let index = Index::open(tmp.path().join("idx")).unwrap();
    assert_eq!(
        search(&index, Some("common"))["estimatedTotalHits"],
        json!(251)
    );
    assert_eq!(index.segment_count().unwrap(), 2);
}

#[test]
fn a_trickle_is_merged_later_while_batches_go_on() {
    let tmp = tempfile::tempdir().unwrap();
    let index = std::sync::Arc::new(Index::open(tmp.path().join("idx")).unwrap());
    let batch = |uid: u64, docs: Vec<Value>| {
        let file = stage(
            tmp.path(),
            &format!("b{uid}"),
            &serde_json::to_string(&docs).unwrap(),
        );
        index
            .apply_batch(vec![add(uid, file, Method::Replace, None)])
            .unwrap();
    };
    // A bulk load is merged before its tasks are reported.
    batch(
        1,
        (0..400)
            .map(|i| json!({"id": i, "t": format!("bulk w{}", i % 9)}))
            .collect(),
    );
    assert_eq!(index.compact_if_worthwhile().unwrap(), Compaction::Merged);
    assert_eq!(index.segment_count().unwrap(), 1);
    // A trickle of small batches: nothing worth merging until they reach an eighth.
    let mut uid = 2;
    let mut later = false;
    while !later {
        batch(
            uid,
            (0..10)
                .map(|i| json!({"id": 1000 + uid * 10 + i, "t": "trickle"}))
                .collect(),
        );
        uid += 1;
        match index.compact_if_worthwhile().unwrap() {
            Compaction::Later => later = true,
            Compaction::Nothing => assert!(uid < 12, "a trickle of an eighth is worth a merge"),
            Compaction::Merged => panic!("a trickle is not merged before its tasks are reported"),
        }
    }
    let segments = index.segment_count().unwrap();
    assert!(segments > 1);
    // The merge runs while a batch replaces documents inside the merging segments and adds one.
    let merging = {
        let index = index.clone();
        std::thread::spawn(move || index.compact_later().unwrap())
    };
    batch(
        100,
        (0..20)
            .map(|i| json!({"id": i, "t": "replaced"}))
            .chain([json!({"id": 5000, "t": "replaced"})])
            .collect(),
    );
    merging.join().unwrap();
    let trickled = (uid - 2) * 10;
    assert_eq!(
        search(&index, Some("trickle"))["estimatedTotalHits"],
        json!(trickled)
    );
    assert_eq!(
        search(&index, Some("replaced"))["estimatedTotalHits"],
        json!(21)
    );
    // The replaced documents are found by their new words only.
    assert_eq!(
        search(&index, Some("bulk"))["estimatedTotalHits"],
        json!(380)
    );
    assert!(index.segment_count().unwrap() < segments);
    assert_eq!(index.compact_if_worthwhile().unwrap(), Compaction::Nothing);
    // Reopened, the index holds the same.
    let index = std::sync::Arc::try_unwrap(index).ok().unwrap();
    drop(index);
    let index = Index::open(tmp.path().join("idx")).unwrap();
    assert_eq!(
        search(&index, Some("bulk"))["estimatedTotalHits"],
        json!(380)
    );
    assert_eq!(
        search(&index, Some("replaced"))["estimatedTotalHits"],
        json!(21)
    );
}

#[test]
fn delete_by_filter_sees_the_batch_settings_and_replays_idempotently() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let file = stage(
        tmp.path(),
        "a",
        r#"[{"id":1,"g":"a","t":"rust"},{"id":2,"g":"b","t":"rust"},{"id":3,"g":"a"}]"#,
    );
    let settings = json!({"filterableAttributes": ["g"]});
    let ops = || {
        vec![
            add(1, file.clone(), Method::Replace, None),
            BatchOp::DeleteByFilter {
                task_uid: 2,
                filter: json!("t = rust"),
            },
            BatchOp::UpdateSettings {
                task_uid: 3,
                patch: settings.clone(),
            },
            BatchOp::DeleteByFilter {
                task_uid: 4,
                filter: json!(["g = a"]),
            },
        ]
    };
    let results = index.apply_batch(ops()).unwrap();
    // `t` is not filterable: that op alone fails; the later one sees the new settings.
    assert_eq!(results[1]["ok"], json!(false));
    assert_eq!(
        results[1]["error"]["code"],
        json!(Code::InvalidDocumentFilter)
    );
    assert_eq!(
        results[3],
        json!({"taskUid": 4, "ok": true, "deletedDocuments": 2})
    );
    let ids = |v: Value| -> Vec<u64> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["id"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(ids(fetch_all(&index)), vec![2]);
    assert_eq!(search(&index, Some("rust"))["estimatedTotalHits"], json!(1));
    // A replay after a crash returns the stored results and deletes nothing more.
    assert_eq!(index.apply_batch(ops()).unwrap(), results);
    assert_eq!(ids(fetch_all(&index)), vec![2]);
}

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

fn edit(task_uid: u64, function: &str, filter: Option<Value>, context: Option<Value>) -> BatchOp {
    BatchOp::EditDocuments {
        task_uid,
        function: function.to_string(),
        filter,
        context,
    }
}

#[test]
fn edit_documents_by_function_edits_deletes_and_reindexes() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let file = stage(
        tmp.path(),
        "a",
        r#"[{"id":1,"title":"apple","g":"x"},{"id":2,"title":"banana","g":"y"},{"id":3,"title":"cherry","g":"x"}]"#,
    );
    let results = index
        .apply_batch(vec![
            add(1, file, Method::Replace, None),
            BatchOp::UpdateSettings {
                task_uid: 2,
                patch: json!({"filterableAttributes": ["g"]}),
            },
            edit(
                3,
                "doc.title = doc.title + \" \" + context.word; doc.n = 1",
                Some(json!("g = x")),
                Some(json!({"word": "pie"})),
            ),
            edit(4, "if doc.id == 2 { doc = () }", None, None),
        ])
        .unwrap();
    assert_eq!(
        results[2],
        json!({"taskUid":3,"ok":true,"editedDocuments":2,"deletedDocuments":2})
    );
    assert_eq!(
        results[3],
        json!({"taskUid":4,"ok":true,"editedDocuments":3,"deletedDocuments":3})
    );
    assert_eq!(
        fetch_all(&index)["results"],
        json!([
            {"id":1,"title":"apple pie","g":"x","n":1},
            {"id":3,"title":"cherry pie","g":"x","n":1}
        ])
    );
    // The edited text is what searches find; the deleted document is gone from them.
    assert_eq!(search(&index, Some("pie"))["estimatedTotalHits"], json!(2));
    assert_eq!(
        search(&index, Some("banana"))["estimatedTotalHits"],
        json!(0)
    );
    assert_eq!(search(&index, None)["estimatedTotalHits"], json!(2));
}

#[test]
fn edit_documents_by_function_fails_whole_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let file = stage(
        tmp.path(),
        "a",
        r#"[{"id":1,"title":"apple"},{"id":2,"title":"banana"}]"#,
    );
    index
        .apply_batch(vec![add(1, file, Method::Replace, None)])
        .unwrap();
    let before = fetch_all(&index);
    let results = index
        .apply_batch(vec![
            // Edits the first document, then changes the second's id: nothing of it lands.
            edit(
                2,
                "doc.title = \"x\"; if doc.id == 2 { doc.id = 7 }",
                None,
                None,
            ),
            edit(3, "loop {}", None, None),
            edit(4, "let s = \"ab\"; loop { s += s; }", None, None),
            edit(5, "doc = 5", None, None),
            edit(6, "doc.title = \"ok\"", Some(json!("title = apple")), None),
            // The id may change type as long as it stands for the same string.
            edit(7, "if doc.id == 1 { doc.id = \"1\" }", None, None),
        ])
        .unwrap();
    for r in &results[0..4] {
        assert_eq!(r["ok"], json!(false), "{r}");
        assert_eq!(
            r["error"]["code"],
            json!(Code::EditDocumentsByFunctionError)
        );
    }
    assert_eq!(
        results[0]["error"]["message"],
        json!("Document editions cannot modify a document's primary key")
    );
    assert!(results[1]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Too many operations"));
    // `title` is not filterable.
    assert_eq!(
        results[4]["error"]["code"],
        json!(Code::InvalidDocumentFilter)
    );
    assert_eq!(results[5]["ok"], json!(true));
    let mut expected = before;
    expected["results"][0]["id"] = json!("1");
    assert_eq!(fetch_all(&index), expected);
}

/// An index in `dir` holding `docs` (`name` and `summary` searchable, in that order) with
/// `settings` besides.
fn with_docs(dir: &Path, docs: Vec<Value>, mut settings: Value) -> Index {
    let index = Index::open(dir.join("idx")).unwrap();
    let file = stage(dir, "a", &Value::Array(docs).to_string());
    settings["searchableAttributes"] = json!(["name", "summary"]);
    index
        .apply_batch(vec![
            add(1, file, Method::Replace, None),
            BatchOp::UpdateSettings {
                task_uid: 2,
                patch: settings,
            },
        ])
        .unwrap();
    index
}

/// The ids of the hits of the search `q`.
fn hit_ids(index: &Index, q: Value) -> Vec<i64> {
    let q: SearchQuery = serde_json::from_value(q).unwrap();
    let r: Value = serde_json::from_slice(&index.search(&q).unwrap()).unwrap();
    r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_i64().unwrap())
        .collect()
}

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

/// The first byte of every stored document (1: encoded, 2: compressed), and whether the
/// store holds a dictionary.
fn stored_formats(dir: &Path) -> (Vec<u8>, bool) {
    let env = store_env(dir);
    let rtxn = env.read_txn().unwrap();
    let docs: heed::Database<heed::types::U32<heed::byteorder::BE>, heed::types::Bytes> =
        env.open_database(&rtxn, Some("docs")).unwrap().unwrap();
    let meta: heed::Database<heed::types::Str, heed::types::Bytes> =
        env.open_database(&rtxn, Some("meta")).unwrap().unwrap();
    let formats = docs
        .iter(&rtxn)
        .unwrap()
        .map(|item| item.unwrap().1[0])
        .collect();
    let dictionary = meta.get(&rtxn, "docsDictionary").unwrap().is_some();
    drop(rtxn);
    env.prepare_for_closing().wait();
    (formats, dictionary)
}

fn catalogue(ids: std::ops::Range<u32>) -> Vec<Value> {
    let kinds = ["parser", "server", "client", "plotter"];
    ids.map(|i| {
        json!({"id": i, "name": format!("package-{i}"), "kind": kinds[i as usize % 4],
            "summary": format!("A {} for {} data, release {}", kinds[i as usize % 4],
                ["json", "csv", "xml"][i as usize % 3], i % 17)})
    })
    .collect()
}

#[test]
fn documents_are_stored_compressed_once_the_index_has_enough_to_train_on() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    let batch = |index: &Index, uid: u64, docs: &[Value], method: Method| {
        let file = stage(
            tmp.path(),
            &format!("b{uid}"),
            &Value::from(docs.to_vec()).to_string(),
        );
        index
            .apply_batch(vec![add(uid, file, method, None)])
            .unwrap();
    };
    {
        let index = Index::open(&dir).unwrap();
        // Fewer documents than the dictionary is trained on: stored encoded.
        batch(&index, 1, &catalogue(0..3_000), Method::Replace);
    }
    let (formats, dictionary) = stored_formats(&dir);
    assert!(formats.iter().all(|f| *f == 1) && !dictionary);
    {
        let index = Index::open(&dir).unwrap();
        // A small batch past the threshold: trained on the stored documents, for later ones.
        batch(&index, 2, &catalogue(3_000..4_500), Method::Replace);
        batch(&index, 3, &catalogue(4_500..4_600), Method::Replace);
        // A partial update rewrites an older document compressed.
        batch(
            &index,
            4,
            &[json!({"id": 7, "kind": "renamed"})],
            Method::Update,
        );
    }
    let (formats, dictionary) = stored_formats(&dir);
    assert!(dictionary);
    let compressed: Vec<usize> = (0..formats.len()).filter(|i| formats[*i] == 2).collect();
    assert_eq!(compressed.len(), 101, "the last batch and the update");
    assert!(compressed.contains(&7) && compressed.iter().filter(|i| **i >= 4_500).count() == 100);

    // A new process reads every document back, whichever way it was stored.
    let index = Index::open(&dir).unwrap();
    let mut expected = catalogue(0..4_600);
    expected[7]["kind"] = json!("renamed");
    for (i, want) in expected
        .iter()
        .enumerate()
        .step_by(7)
        .chain([(7, &expected[7])])
    {
        let got: Value = serde_json::from_slice(
            &index
                .get_document(&i.to_string(), None, false)
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(&got, want);
    }
    // The value columns read compressed and plain documents alike.
    index
        .apply_batch(vec![BatchOp::UpdateSettings {
            task_uid: 5,
            patch: json!({"filterableAttributes": ["kind"]}),
        }])
        .unwrap();
    let q: SearchQuery = serde_json::from_value(
        json!({"q": "server", "filter": "kind = server", "facets": ["kind"], "limit": 3}),
    )
    .unwrap();
    let r: Value = serde_json::from_slice(&index.search(&q).unwrap()).unwrap();
    assert_eq!(r["facetDistribution"]["kind"], json!({"server": 1_150}));
    let q: SearchQuery =
        serde_json::from_value(json!({"q": "package", "filter": "kind = renamed"})).unwrap();
    let r: Value = serde_json::from_slice(&index.search(&q).unwrap()).unwrap();
    assert_eq!(r["hits"], json!([expected[7]]));
    let q: SearchQuery =
        serde_json::from_value(json!({"q": "", "facets": ["kind"], "limit": 0})).unwrap();
    let r: Value = serde_json::from_slice(&index.search(&q).unwrap()).unwrap();
    assert_eq!(
        r["facetDistribution"]["kind"],
        json!({"client": 1_150, "parser": 1_150, "plotter": 1_149, "renamed": 1, "server": 1_150})
    );

    // One batch larger than the training set: its first documents train the dictionary and
    // the rest of them are stored compressed.
    let fresh = tmp.path().join("fresh");
    {
        let index = Index::open(&fresh).unwrap();
        batch(&index, 1, &catalogue(0..5_000), Method::Replace);
        let got: Value =
            serde_json::from_slice(&index.get_document("4999", None, false).unwrap().unwrap())
                .unwrap();
        assert_eq!(got, catalogue(4_999..5_000)[0]);
    }
    let (formats, dictionary) = stored_formats(&fresh);
    assert!(dictionary);
    assert_eq!(formats.iter().filter(|f| **f == 2).count(), 5_000 - 4_096);
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

/// The ids of `GET /documents` and of a placeholder search, in their order.
fn order(index: &Index) -> (Vec<u64>, Vec<u64>) {
    let ids = |v: &Value, key: &str| -> Vec<u64> {
        v[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["id"].as_u64().unwrap())
            .collect()
    };
    (
        ids(&fetch_all(index), "results"),
        ids(&search(index, None), "hits"),
    )
}

#[test]
fn new_documents_take_the_internal_ids_deletions_freed_as_on_meilisearch() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let batch = |uid: u64, body: &str| {
        let file = stage(tmp.path(), &format!("b{uid}"), body);
        index
            .apply_batch(vec![add(uid, file, Method::Replace, None)])
            .unwrap();
    };
    let delete = |uid: u64, ids: &[&str]| {
        let ids = ids.iter().map(|s| s.to_string()).collect();
        index
            .apply_batch(vec![BatchOp::DeleteDocuments { task_uid: uid, ids }])
            .unwrap();
    };
    batch(1, r#"[{"id":1},{"id":2},{"id":3},{"id":4},{"id":5}]"#);
    delete(2, &["2", "3"]);
    // Meilisearch 1.50 answers these orders (both routes) on the same steps.
    batch(3, r#"[{"id":10},{"id":11},{"id":12}]"#);
    let expected = vec![1, 10, 11, 4, 5, 12];
    assert_eq!(order(&index), (expected.clone(), expected));
    delete(4, &["4"]);
    batch(5, r#"[{"id":20},{"id":21}]"#);
    let expected = vec![1, 10, 11, 20, 5, 12, 21];
    assert_eq!(order(&index), (expected.clone(), expected));
    // A document deleted and another added in one batch: the freed id waits for the next one.
    let file = stage(tmp.path(), "b6", r#"[{"id":30}]"#);
    index
        .apply_batch(vec![
            BatchOp::DeleteDocuments {
                task_uid: 6,
                ids: vec!["1".into()],
            },
            add(7, file, Method::Replace, None),
        ])
        .unwrap();
    batch(8, r#"[{"id":40}]"#);
    let expected = vec![40, 10, 11, 20, 5, 12, 21, 30];
    assert_eq!(order(&index), (expected.clone(), expected));
    // Searches still find the documents behind reused ids, and only them.
    assert_eq!(search(&index, Some("40"))["hits"], json!([{"id": 40}]));
    drop(index);
    let index = Index::open(tmp.path().join("idx")).unwrap();
    assert_eq!(order(&index).0, vec![40, 10, 11, 20, 5, 12, 21, 30]);
}
