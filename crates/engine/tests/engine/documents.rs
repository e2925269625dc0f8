//! Batches of document operations: additions, updates, deletions (by id and by filter),
//! primary keys, replays, edits by function, stored field order and internal ids.

use crate::common::{add, fetch_all, search, stage};
use api_types::Code;
use engine::{BatchOp, Index, Method};
use serde_json::{json, Value};

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

#[test]
fn a_document_repeated_in_a_payload_counts_once_as_on_meilisearch() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let a = stage(
        tmp.path(),
        "a",
        r#"[{"id":15,"n":60},{"id":6,"title":"stars the"},{"id":6,"title":"snow empire"}]"#,
    );
    let b = stage(
        tmp.path(),
        "b",
        r#"[{"id":6,"n":1},{"id":7},{"id":6,"n":2},{"id":6,"n":3}]"#,
    );
    let results = index
        .apply_batch(vec![
            add(1, a, Method::Replace, None),
            add(2, b, Method::Update, None),
        ])
        .unwrap();
    assert_eq!(
        results[0],
        json!({"taskUid":1,"ok":true,"indexedDocuments":2})
    );
    assert_eq!(
        results[1],
        json!({"taskUid":2,"ok":true,"indexedDocuments":2})
    );
    let six: Value =
        serde_json::from_slice(&index.get_document("6", None, false).unwrap().unwrap()).unwrap();
    assert_eq!(six, json!({"id":6,"title":"snow empire","n":3}));
}
