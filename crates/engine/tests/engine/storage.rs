//! What the index keeps on disk: segments merged by compaction, documents stored
//! compressed with a trained dictionary.

use crate::common::{add, search, stage, store_env};
use engine::{BatchOp, Compaction, Index, Method, SearchQuery};
use serde_json::{json, Value};
use std::path::Path;

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

/// The first byte of every stored document (3: encoded behind its checksum, 2: compressed),
/// and whether the store holds a dictionary.
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
    assert!(formats.iter().all(|f| *f == 3) && !dictionary);
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

/// Changes one byte of the stored document `iid` in place, as damage on a page whose
/// structure LMDB still reads would.
fn damage_document(dir: &Path, iid: u32, at: usize) {
    let env = store_env(dir);
    let mut wtxn = env.write_txn().unwrap();
    let docs: heed::Database<heed::types::U32<heed::byteorder::BE>, heed::types::Bytes> =
        env.open_database(&wtxn, Some("docs")).unwrap().unwrap();
    let mut bytes = docs.get(&wtxn, &iid).unwrap().unwrap().to_vec();
    let at = at.min(bytes.len() - 1);
    bytes[at] ^= 0x04;
    docs.put(&mut wtxn, &iid, &bytes).unwrap();
    wtxn.commit().unwrap();
    drop(env);
}

#[test]
fn a_document_changed_in_the_store_fails_its_reads_with_invalid_store_file_never_another_document()
{
    let tmp = tempfile::tempdir().unwrap();
    for (name, n) in [("plain", 50u32), ("compressed", 4_200)] {
        let dir = tmp.path().join(name);
        {
            let index = Index::open(&dir).unwrap();
            let file = stage(
                tmp.path(),
                &format!("{name}-a"),
                &Value::from(catalogue(0..n)).to_string(),
            );
            index
                .apply_batch(vec![add(1, file, Method::Replace, None)])
                .unwrap();
            // Past the training threshold, documents written after the dictionary are compressed.
            let more = stage(
                tmp.path(),
                "more",
                &Value::from(catalogue(n..n + 10)).to_string(),
            );
            index
                .apply_batch(vec![add(2, more, Method::Replace, None)])
                .unwrap();
        }
        // The string `package-<n+3>` sits in the middle of the plain encoding; any byte of a
        // compressed frame will do.
        damage_document(&dir, n + 3, 12);
        let index = Index::open(&dir).unwrap();
        let e = index
            .get_document(&(n + 3).to_string(), None, false)
            .expect_err("a damaged document is not returned");
        assert_eq!(
            e.code,
            api_types::Code::InvalidStoreFile,
            "{name}: {}",
            e.message
        );
        let q: SearchQuery = serde_json::from_value(json!({
            "q": format!("package-{}", n + 3), "matchingStrategy": "all"
        }))
        .unwrap();
        let e = index.search(&q).expect_err("a search showing it fails");
        assert_eq!(e.code, api_types::Code::InvalidStoreFile, "{name}");
        // The others read as they were.
        assert!(index
            .get_document(&(n + 4).to_string(), None, false)
            .unwrap()
            .is_some());
    }
}

#[test]
fn a_meta_value_changed_in_the_store_is_found_when_the_index_opens() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    index_of_twenty(tmp.path(), &dir);
    {
        let env = store_env(&dir);
        let mut wtxn = env.write_txn().unwrap();
        let meta: heed::Database<heed::types::Str, heed::types::Bytes> =
            env.open_database(&wtxn, Some("meta")).unwrap().unwrap();
        let mut fields = meta.get(&wtxn, "fieldsMap").unwrap().unwrap().to_vec();
        // `["id","name",…]` still parses with a name changed: only the checksum tells.
        let at = fields.iter().position(|b| *b == b'n').unwrap();
        fields[at] = b'm';
        meta.put(&mut wtxn, "fieldsMap", &fields).unwrap();
        wtxn.commit().unwrap();
    }
    let e = Index::open(&dir).err().expect("the damage is found");
    assert_eq!(e.code, api_types::Code::InvalidStoreFile);
    assert!(
        e.message
            .contains("`fieldsMap` does not match its checksum"),
        "{}",
        e.message
    );
}

#[test]
fn an_internal_id_changed_in_the_store_is_found_and_older_ids_still_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    index_of_twenty(tmp.path(), &dir);
    {
        let env = store_env(&dir);
        let mut wtxn = env.write_txn().unwrap();
        let ids: heed::Database<heed::types::Str, heed::types::Bytes> =
            env.open_database(&wtxn, Some("ids")).unwrap().unwrap();
        // `5` now points at document 6's internal id, its checksum left as it was.
        let mut five = ids.get(&wtxn, "5").unwrap().unwrap().to_vec();
        assert_eq!(five.len(), 8);
        five[3] ^= 3;
        ids.put(&mut wtxn, "5", &five).unwrap();
        // `7` as ids were written before they had a checksum.
        let seven = ids.get(&wtxn, "7").unwrap().unwrap()[..4].to_vec();
        ids.put(&mut wtxn, "7", &seven).unwrap();
        wtxn.commit().unwrap();
    }
    let index = Index::open(&dir).unwrap();
    let e = index.get_document("5", None, false).unwrap_err();
    assert_eq!(e.code, api_types::Code::InvalidStoreFile);
    assert!(
        e.message.contains("`5` does not match its checksum"),
        "{}",
        e.message
    );
    let seven: Value =
        serde_json::from_slice(&index.get_document("7", None, false).unwrap().unwrap()).unwrap();
    assert_eq!(seven["id"], json!(7));
}

/// Writes an index of 20 catalogue rows into `dir`, staging them in `tmp`.
fn index_of_twenty(tmp: &Path, dir: &Path) {
    let index = Index::open(dir).unwrap();
    let file = stage(tmp, "a", &Value::from(catalogue(0..20)).to_string());
    index
        .apply_batch(vec![add(1, file, Method::Replace, None)])
        .unwrap();
}
