//! Embeddings stored documents carried before their embedder existed, as Meilisearch 1.50
//! treats them (each case answered by the reference binary).

use crate::common::{add, stage};
use api_types::Code;
use engine::{BatchOp, FetchQuery, Index, Method};
use serde_json::{json, Value};

fn documents_with_vectors(index: &Index) -> Value {
    let q = FetchQuery {
        offset: 0,
        limit: 100,
        fields: None,
        ids: None,
        retrieve_vectors: true,
        sort: None,
        filter: None,
        contains_filter: false,
        foreign_ids: None,
    };
    serde_json::from_slice(&index.fetch_documents(&q).unwrap()).unwrap()
}

fn add_embedder(index: &Index, task_uid: u64) -> Value {
    let patch = json!({"embedders": {"e": {"source": "userProvided", "dimensions": 3}}});
    index
        .apply_batch(vec![BatchOp::UpdateSettings { task_uid, patch }])
        .unwrap()
        .remove(0)
}

#[test]
fn a_new_embedder_takes_the_embeddings_the_documents_carried() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let docs = r#"[{"id":1,"_vectors":{"e":[1,2,3]}},
        {"id":2,"_vectors":{"e":{"embeddings":[[3,2,1]],"regenerate":false}}},
        {"id":3,"_vectors":{"e":null}}]"#;
    let file = stage(tmp.path(), "a", docs);
    index
        .apply_batch(vec![add(1, file, Method::Replace, None)])
        .unwrap();
    assert_eq!(add_embedder(&index, 2)["ok"], json!(true));
    let fetched = documents_with_vectors(&index);
    let vectors: Vec<Value> = fetched["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["_vectors"]["e"].clone())
        .collect();
    assert_eq!(
        vectors,
        vec![
            json!({"embeddings": [[1.0, 2.0, 3.0]], "regenerate": false}),
            json!({"embeddings": [[3.0, 2.0, 1.0]], "regenerate": false}),
            json!({"embeddings": [], "regenerate": false}),
        ]
    );
    // The embeddings left the documents.
    let stored: Value =
        serde_json::from_slice(&index.get_document("1", None, false).unwrap().unwrap()).unwrap();
    assert_eq!(stored, json!({"id": 1}));
}

#[test]
fn a_new_user_provided_embedder_refuses_documents_that_give_it_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let thirty: Vec<Value> = (1..=30).map(|i| json!({"id": i})).collect();
    let a = stage(tmp.path(), "a", &Value::Array(thirty).to_string());
    index
        .apply_batch(vec![add(1, a, Method::Replace, None)])
        .unwrap();
    let refused = add_embedder(&index, 2);
    assert_eq!(refused["ok"], json!(false));
    assert_eq!(refused["error"]["code"], json!(Code::VectorEmbeddingError));
    assert_eq!(
        refused["error"]["message"],
        json!("While embedding documents for embedder `e`: no vectors provided for document `1` and at least 29 other document(s)\n- Note: `e` has `source: userProvided`, so documents must provide embeddings as an array in `_vectors.e`.\n- Hint: opt-out for a document with `_vectors.e: null`")
    );
    assert_eq!(
        index.settings_json().unwrap(),
        None,
        "the refused update changed nothing"
    );

    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path().join("idx")).unwrap();
    let b = stage(
        tmp.path(),
        "b",
        r#"[{"id":1,"_vectors":{"e":[1,2,3]}},{"id":2}]"#,
    );
    index
        .apply_batch(vec![add(1, b, Method::Replace, None)])
        .unwrap();
    let refused = add_embedder(&index, 2);
    assert!(refused["error"]["message"].as_str().unwrap().starts_with(
        "While embedding documents for embedder `e`: no vectors provided for document `2`\n"
    ));
}
