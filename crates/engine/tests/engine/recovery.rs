//! Crash repair and rebuilds when an index opens: the dirty set, another text layout, a
//! damaged segment, a missing store.

use crate::common::{add, put_meta, search, stage, store_env};
use api_types::Code;
use engine::{Index, Method, TEXT_LAYOUT};
use serde_json::{json, Value};
use std::path::Path;

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
        put_meta(&meta, &mut wtxn, "dirty", Some(&bytes));
        put_meta(&meta, &mut wtxn, "generation", Some(&2u64.to_be_bytes()));
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
    let layout = layout.map(u64::to_be_bytes);
    put_meta(
        &meta,
        &mut wtxn,
        "textLayout",
        layout.as_ref().map(|l| &l[..]),
    );
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
