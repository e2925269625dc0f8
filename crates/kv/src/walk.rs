//! A read of every page of an LMDB environment, to find damage before a server trusts it.
//!
//! LMDB keeps no checksums and trusts what its pages say: a page overwritten with other bytes
//! can make it read outside the map and kill the process (a segmentation fault, not an error).
//! [`walk`] reads every entry of every database, and every page of every value, so that a
//! process run for that purpose meets the damage first: it fails with `invalid_store_file`,
//! or dies in that process's place, before the server opens the environment.

use std::path::Path;

use api_types::{heed_error, Error, Result};
use heed::types::Bytes;
use heed::{Database, EnvFlags, EnvOpenOptions};

/// Reads every entry of every named database of the environment in `dir` (opened read-only),
/// touching one byte of each page of each value; returns how many entries were read. Damage
/// fails with `invalid_store_file` naming `dir`'s `data.mdb`.
pub fn walk(dir: &Path) -> Result<u64> {
    let file = dir.join("data.mdb");
    // Nothing to read in a file missing or empty (those who open it say what that means).
    if std::fs::metadata(&file).map_or(true, |m| m.len() == 0) {
        return Ok(0);
    }
    walk_in(dir).map_err(|e| api_types::damaged_in(e, &file))
}

fn walk_in(dir: &Path) -> Result<u64> {
    // SAFETY: opened read-only by a process that does nothing else with it.
    let env = unsafe {
        EnvOpenOptions::new()
            .read_txn_without_tls()
            .max_dbs(256)
            .flags(EnvFlags::READ_ONLY | EnvFlags::NO_LOCK)
            .open(dir)
    }
    .map_err(heed_error)?;
    let rtxn = env.read_txn().map_err(heed_error)?;
    let main: Database<Bytes, Bytes> = env
        .open_database(&rtxn, None)
        .map_err(heed_error)?
        .ok_or_else(|| Error::internal("an LMDB environment without its main database"))?;
    let mut names = Vec::new();
    let mut entries = 0u64;
    for item in main.iter(&rtxn).map_err(heed_error)? {
        let (key, value) = item.map_err(heed_error)?;
        touch(value);
        entries += 1;
        names.push(String::from_utf8_lossy(key).into_owned());
    }
    for name in names {
        // A main-database entry that is not a database is a plain value, already read.
        let Ok(Some(db)) = env.open_database::<Bytes, Bytes>(&rtxn, Some(&name)) else {
            continue;
        };
        for item in db.iter(&rtxn).map_err(heed_error)? {
            let (key, value) = item.map_err(heed_error)?;
            touch(key);
            touch(value);
            entries += 1;
        }
    }
    Ok(entries)
}

/// Reads one byte of each 4 KiB of `bytes` and its last byte.
fn touch(bytes: &[u8]) {
    let sum = bytes.iter().step_by(4096).fold(0u8, |a, b| a ^ b);
    std::hint::black_box(sum ^ bytes.last().copied().unwrap_or(0));
}
