use super::*;
use api_types::Code;

const MAP: usize = 1 << 24;

fn put(db: &str, key: &str, value: &str) -> Op {
    Op {
        db: db.to_string(),
        key: key.to_string(),
        value: Some(value.as_bytes().to_vec()),
    }
}

fn delete(db: &str, key: &str) -> Op {
    Op {
        db: db.to_string(),
        key: key.to_string(),
        value: None,
    }
}

fn text(v: Option<Vec<u8>>) -> Option<String> {
    v.map(|b| String::from_utf8(b).unwrap())
}

#[test]
fn test_commit_then_get_and_scan_in_key_order() {
    let dir = tempfile::tempdir().unwrap();
    let kv = KvStore::open(dir.path(), MAP).unwrap();
    kv.commit(&[
        put("tasks", "2", "b"),
        put("tasks", "1", "a"),
        put("meta", "k", "v"),
    ])
    .unwrap();
    assert_eq!(text(kv.get("tasks", "1").unwrap()).as_deref(), Some("a"));
    assert_eq!(text(kv.get("meta", "k").unwrap()).as_deref(), Some("v"));
    assert_eq!(kv.get("tasks", "3").unwrap(), None);
    let keys: Vec<String> = kv
        .scan("tasks")
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, ["1", "2"]);
    assert!(kv.scan("never-written").unwrap().is_empty());
}

#[test]
fn test_delete_removes_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let kv = KvStore::open(dir.path(), MAP).unwrap();
    kv.commit(&[put("tasks", "1", "a"), put("tasks", "2", "b")])
        .unwrap();
    kv.commit(&[delete("tasks", "1"), delete("tasks", "absent")])
        .unwrap();
    assert_eq!(kv.get("tasks", "1").unwrap(), None);
    assert_eq!(kv.scan("tasks").unwrap().len(), 1);
}

#[test]
fn test_commits_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let kv = KvStore::open(dir.path(), MAP).unwrap();
        kv.commit(&[put("keys", "k", "v")]).unwrap();
    }
    let kv = KvStore::open(dir.path(), MAP).unwrap();
    assert_eq!(text(kv.get("keys", "k").unwrap()).as_deref(), Some("v"));
}

#[test]
fn test_all_ops_of_one_commit_are_atomic() {
    let dir = tempfile::tempdir().unwrap();
    // A map this small cannot hold the second commit: it must fail as a whole.
    let kv = KvStore::open(dir.path(), 1 << 16).unwrap();
    kv.commit(&[put("tasks", "kept", "x")]).unwrap();
    let big = "x".repeat(4096);
    let ops: Vec<Op> = (0..64)
        .map(|i| put("tasks", &format!("{i:04}"), &big))
        .chain([delete("tasks", "kept")])
        .collect();
    let err = kv.commit(&ops).unwrap_err();
    assert_eq!(err.code, Code::DatabaseSizeLimitReached);
    assert_eq!(kv.get("tasks", "0000").unwrap(), None);
    assert_eq!(text(kv.get("tasks", "kept").unwrap()).as_deref(), Some("x"));
}

#[test]
fn test_values_are_cut_from_one_buffer() {
    let ops = Op::from_lengths(
        [
            ("a".to_string(), "1".to_string(), 2),
            ("a".to_string(), "2".to_string(), -1),
            ("b".to_string(), "3".to_string(), 3),
        ],
        b"hixyz",
    )
    .unwrap();
    assert_eq!(ops[0].value.as_deref(), Some(&b"hi"[..]));
    assert_eq!(ops[1].value, None);
    assert_eq!(ops[2].value.as_deref(), Some(&b"xyz"[..]));
    let short = Op::from_lengths([("a".to_string(), "1".to_string(), 9)], b"hi");
    assert_eq!(short.unwrap_err().code, Code::Internal);
}

#[test]
fn test_copy_to_holds_every_database_and_opens_on_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let kv = KvStore::open(dir.path().join("live"), MAP).unwrap();
    kv.commit(&[put("tasks", "1", "a"), put("meta", "k", "v")])
        .unwrap();
    kv.commit(&[delete("tasks", "1"), put("tasks", "2", "b")])
        .unwrap();
    kv.copy_to(dir.path().join("copy")).unwrap();
    kv.commit(&[put("tasks", "3", "after")]).unwrap();

    let copy = KvStore::open(dir.path().join("copy"), MAP).unwrap();
    let keys: Vec<String> = copy
        .scan("tasks")
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, vec!["2"]);
    assert_eq!(text(copy.get("meta", "k").unwrap()).as_deref(), Some("v"));
}

#[test]
fn test_compact_shrinks_the_file_and_keeps_every_entry() {
    let dir = tempfile::tempdir().unwrap();
    let kv = KvStore::open(dir.path(), MAP).unwrap();
    let big = "x".repeat(2000);
    let ops: Vec<Op> = (0..2000)
        .map(|i| put("tasks", &format!("{i:05}"), &big))
        .collect();
    kv.commit(&ops).unwrap();
    let deletes: Vec<Op> = (0..1990)
        .map(|i| delete("tasks", &format!("{i:05}")))
        .collect();
    kv.commit(&deletes).unwrap();
    let c = kv.compact().unwrap();
    assert!(c.after < c.before / 4, "{c:?}");
    let on_disk = std::fs::metadata(dir.path().join("data.mdb"))
        .unwrap()
        .len();
    assert_eq!(on_disk, c.after);
    assert!(!dir.path().join("data.mdb.compacted").exists());
    // The store goes on after the compaction: reads, writes, and a reopening see it all.
    assert_eq!(kv.scan("tasks").unwrap().len(), 10);
    kv.commit(&[put("meta", "k", "v")]).unwrap();
    assert_eq!(text(kv.get("tasks", "01999").unwrap()), Some(big.clone()));
    drop(kv);
    let kv = KvStore::open(dir.path(), MAP).unwrap();
    assert_eq!(kv.scan("tasks").unwrap().len(), 10);
    assert_eq!(text(kv.get("meta", "k").unwrap()).as_deref(), Some("v"));
}

#[test]
fn test_a_walk_reads_every_entry_and_finds_damaged_meta_pages() {
    let dir = tempfile::tempdir().unwrap();
    {
        let kv = KvStore::open(dir.path(), MAP).unwrap();
        let big = "x".repeat(10_000);
        kv.commit(&[
            put("tasks", "1", "a"),
            put("tasks", "2", &big),
            put("keys", "k", "v"),
        ])
        .unwrap();
    }
    // Three entries, their three checksums, and the four databases' entries in the main
    // database.
    assert_eq!(crate::walk(dir.path()).unwrap(), 10);
    let file = dir.path().join("data.mdb");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[..8192].fill(0x5a);
    std::fs::write(&file, &bytes).unwrap();
    let e = crate::walk(dir.path()).unwrap_err();
    assert_eq!(e.code, Code::InvalidStoreFile);
    assert!(e.message.contains("MDB_INVALID"), "{}", e.message);
    let named = format!("The file `{}` is damaged: ", file.display());
    assert!(e.message.starts_with(&named), "{}", e.message);
    // Opened for writing, the same damage is named the same way.
    let e = KvStore::open(dir.path(), MAP).err().unwrap();
    assert!(e.message.starts_with(&named), "{}", e.message);
    // A directory without a store has nothing to walk.
    assert_eq!(crate::walk(&dir.path().join("none")).unwrap(), 0);
}

#[test]
fn test_a_value_changed_in_place_is_found_by_its_checksum() {
    let dir = tempfile::tempdir().unwrap();
    {
        let kv = KvStore::open(dir.path(), MAP).unwrap();
        kv.commit(&[
            put("tasks", "1", r#"{"status":"succeeded","indexUid":"books"}"#),
            put("tasks", "2", r#"{"status":"failed"}"#),
        ])
        .unwrap();
    }
    // `succeeded` becomes `succeedes`, on a page whose structure LMDB still reads.
    let file = dir.path().join("data.mdb");
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes.windows(9).position(|w| w == b"succeeded").unwrap();
    bytes[at + 8] = b's';
    std::fs::write(&file, &bytes).unwrap();
    assert!(
        crate::walk(dir.path()).is_ok(),
        "the pages themselves are intact"
    );
    let kv = KvStore::open(dir.path(), MAP).unwrap();
    let named = format!(
        "The file `{}` is damaged: the value `1` of `tasks` does not match its checksum.",
        file.display()
    );
    for e in [
        kv.get("tasks", "1").unwrap_err(),
        kv.scan("tasks").unwrap_err(),
    ] {
        assert_eq!(e.code, Code::InvalidStoreFile);
        assert_eq!(e.message, named);
    }
    // The other values read, and a value written again is whole again.
    assert!(kv.get("tasks", "2").unwrap().is_some());
    kv.commit(&[put("tasks", "1", "{}")]).unwrap();
    assert_eq!(kv.scan("tasks").unwrap().len(), 2);
    // A deletion takes its checksum with it.
    kv.commit(&[Op {
        db: "tasks".into(),
        key: "1".into(),
        value: None,
    }])
    .unwrap();
    assert_eq!(kv.get("tasks", "1").unwrap(), None);
}
