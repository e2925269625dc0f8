//! The durable key-value store behind the TypeScript task store: tasks, batches, the index
//! registry, API keys and experimental features, each a named database of string keys and
//! byte values in one LMDB environment.
//!
//! What it owns: opening the environment, creating databases on first use, and committing a
//! list of puts and deletes in ONE write transaction, so that a task's outcome and the registry
//! change it implies land together or not at all, and are durable once [`KvStore::commit`]
//! returns. What it does not do: interpret values (they are the TypeScript side's JSON) or
//! index documents (that is the engine, with an environment per index).
//!
//! Design decision: the store is a crate of its own rather than part of the engine because it
//! knows nothing of documents or search, and the binding should hold no storage code; it maps
//! LMDB failures to error codes through `api_types::heed_error`, as the engine does.

#![warn(missing_docs)]

mod lock;
mod walk;

pub use lock::{DirLock, LOCK_FILE};
pub use walk::walk;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use api_types::{heed_error, io_error, Error, Result};
use heed::types::{Bytes, Str};
use heed::{CompactionOption, Database, Env, EnvOpenOptions, WithoutTls};

/// How many named databases one environment may hold (each with its checksums' database).
const MAX_DBS: u32 = 64;

/// The database holding the checksums of database `db`'s values: under the same keys, the
/// CRC-32 (little-endian) of each value. LMDB checksums nothing: this finds a value changed in
/// place on a page whose structure is intact. Values written before checksums were kept have
/// none, and are read unchecked.
fn sums_of(db: &str) -> String {
    format!("{db}#sums")
}

/// The checksum kept for `value`.
fn sum(value: &[u8]) -> [u8; 4] {
    crc32fast::hash(value).to_le_bytes()
}

/// One write of a commit: a put of `value` under `key` in database `db`, or a deletion of the
/// key when `value` is `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    /// The named database (created on first use).
    pub db: String,
    /// The key.
    pub key: String,
    /// The new value, or `None` to delete the key.
    pub value: Option<Vec<u8>>,
}

impl Op {
    /// Builds the ops of a commit whose values travel in one buffer: each op's value is the
    /// next `len` bytes of `values`, or a deletion when `len` is negative. (One buffer per
    /// commit keeps the N-API boundary cheap.) Fails when `values` is too short.
    pub fn from_lengths(
        ops: impl IntoIterator<Item = (String, String, i64)>,
        values: &[u8],
    ) -> Result<Vec<Op>> {
        let mut at = 0usize;
        let mut out = Vec::new();
        for (db, key, len) in ops {
            let value = if len < 0 {
                None
            } else {
                let end = at + len as usize;
                let v = values
                    .get(at..end)
                    .ok_or_else(|| Error::internal("commit: values buffer too short"))?;
                at = end;
                Some(v.to_vec())
            };
            out.push(Op { db, key, value });
        }
        Ok(out)
    }
}

/// One LMDB environment of named databases.
pub struct KvStore {
    /// `None` only if reopening failed after a compaction (every call then fails).
    env: RwLock<Option<Env<WithoutTls>>>,
    dbs: Mutex<HashMap<String, Database<Str, Bytes>>>,
    path: PathBuf,
    map_size: usize,
    /// Opened without write access beside the writing process (see [`KvStore::open_read_only`]):
    /// the inode of `data.mdb` and the last transaction id seen.
    read_only: Option<Mutex<(u64, usize)>>,
}

/// The size of the environment's file before and after [`KvStore::compact`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compaction {
    /// Bytes of `data.mdb` before.
    pub before: u64,
    /// Bytes of `data.mdb` after.
    pub after: u64,
}

fn open_env(path: &Path, map_size: usize, read_only: bool) -> Result<Env<WithoutTls>> {
    // SAFETY: one environment per path in this process: the server opens the store once, and
    // `compact` (or a read-only store's `changed`) reopens it only after the previous
    // environment has closed.
    unsafe {
        let mut options = EnvOpenOptions::new().read_txn_without_tls();
        options.map_size(map_size).max_dbs(MAX_DBS);
        if read_only {
            options.flags(heed::EnvFlags::READ_ONLY);
        }
        options.open(path)
    }
    .map_err(heed_error)
}

/// The inode of `data.mdb` in `dir` (a compaction renames a new file over it).
fn inode(dir: &Path) -> Result<u64> {
    use std::os::unix::fs::MetadataExt;
    Ok(std::fs::metadata(dir.join("data.mdb"))
        .map_err(io_error)?
        .ino())
}

fn refused() -> Error {
    Error::internal("the task store was opened read-only")
}

fn closed() -> Error {
    Error::internal("the task store could not be reopened after its compaction")
}

impl KvStore {
    /// Opens (creating the directory and the environment) the store at `path`, reserving
    /// `map_size` bytes of address space.
    pub fn open(path: impl AsRef<Path>, map_size: usize) -> Result<KvStore> {
        let path = path.as_ref();
        std::fs::create_dir_all(path).map_err(Error::internal)?;
        let env = open_env(path, map_size, false)
            .map_err(|e| api_types::damaged_in(e, &path.join("data.mdb")))?;
        Ok(KvStore {
            env: RwLock::new(Some(env)),
            dbs: Mutex::new(HashMap::new()),
            path: path.to_path_buf(),
            map_size,
            read_only: None,
        })
    }

    /// Opens the existing store at `path` without write access (`MDB_RDONLY`), beside the
    /// process that writes it: nothing is created or written, and reads never block that
    /// process's commits. A database not created yet reads as empty; commits are refused.
    pub fn open_read_only(path: impl AsRef<Path>, map_size: usize) -> Result<KvStore> {
        let path = path.as_ref();
        let ino = inode(path)?;
        let env = open_env(path, map_size, true)?;
        let txn = env.info().last_txn_id;
        Ok(KvStore {
            env: RwLock::new(Some(env)),
            dbs: Mutex::new(HashMap::new()),
            path: path.to_path_buf(),
            map_size,
            read_only: Some(Mutex::new((ino, txn))),
        })
    }

    /// Opened read-only: whether the writer has committed since the last call (one read of
    /// LMDB's meta pages and one `stat`). A compaction of the writer's (a new file renamed over
    /// `data.mdb`) is followed by opening the new file. Opened for writing: always false.
    pub fn changed(&self) -> Result<bool> {
        let Some(seen) = &self.read_only else {
            return Ok(false);
        };
        let mut seen = seen.lock().unwrap();
        let ino = inode(&self.path)?;
        if ino != seen.0 {
            let mut guard = self.env.write().unwrap();
            if let Some(env) = guard.take() {
                self.dbs.lock().unwrap().clear();
                env.prepare_for_closing().wait();
            }
            let env = open_env(&self.path, self.map_size, true)?;
            *seen = (ino, env.info().last_txn_id);
            *guard = Some(env);
            return Ok(true);
        }
        let txn = self.with_env(|env| Ok(env.info().last_txn_id))?;
        let changed = txn != seen.1;
        seen.1 = txn;
        Ok(changed)
    }

    /// Runs `f` on the environment, which no compaction replaces meanwhile.
    fn with_env<T>(&self, f: impl FnOnce(&Env<WithoutTls>) -> Result<T>) -> Result<T> {
        let guard = self.env.read().unwrap();
        f(guard.as_ref().ok_or_else(closed)?)
    }

    /// The handle of database `name`, created (in a transaction of its own) on first use.
    fn db(&self, env: &Env<WithoutTls>, name: &str) -> Result<Database<Str, Bytes>> {
        self.existing_db(env, name)?.ok_or_else(refused)
    }

    /// The handle of database `name`; opened read-only, `None` while the writer has not
    /// created it.
    fn existing_db(
        &self,
        env: &Env<WithoutTls>,
        name: &str,
    ) -> Result<Option<Database<Str, Bytes>>> {
        let mut dbs = self.dbs.lock().unwrap();
        if let Some(db) = dbs.get(name) {
            return Ok(Some(*db));
        }
        if self.read_only.is_some() {
            let rtxn = env.read_txn().map_err(heed_error)?;
            let db = env
                .open_database::<Str, Bytes>(&rtxn, Some(name))
                .map_err(heed_error)?;
            // Committed, the read transaction keeps the handle open for the environment.
            rtxn.commit().map_err(heed_error)?;
            if let Some(db) = db {
                dbs.insert(name.to_string(), db);
            }
            return Ok(db);
        }
        let mut wtxn = env.write_txn().map_err(heed_error)?;
        let db = env
            .create_database::<Str, Bytes>(&mut wtxn, Some(name))
            .map_err(heed_error)?;
        wtxn.commit().map_err(heed_error)?;
        dbs.insert(name.to_string(), db);
        Ok(Some(db))
    }

    /// Applies every op in one write transaction: all of them are durable when this returns,
    /// or none is applied.
    pub fn commit(&self, ops: &[Op]) -> Result<()> {
        if self.read_only.is_some() {
            return Err(refused());
        }
        self.with_env(|env| {
            // Databases are created before the write transaction: LMDB allows one writer at
            // a time.
            let handles = ops
                .iter()
                .map(|op| Ok((self.db(env, &op.db)?, self.db(env, &sums_of(&op.db))?)))
                .collect::<Result<Vec<_>>>()?;
            // A read-only process killed mid-read leaves its reader slot, keeping its snapshot's
            // pages from reuse: slots of dead processes are freed (a scan of the slot table).
            env.clear_stale_readers().map_err(heed_error)?;
            let mut wtxn = env.write_txn().map_err(heed_error)?;
            for (op, (db, sums)) in ops.iter().zip(handles) {
                match &op.value {
                    Some(v) => {
                        db.put(&mut wtxn, &op.key, v).map_err(heed_error)?;
                        sums.put(&mut wtxn, &op.key, &sum(v)).map_err(heed_error)?;
                    }
                    None => {
                        db.delete(&mut wtxn, &op.key).map_err(heed_error)?;
                        sums.delete(&mut wtxn, &op.key).map_err(heed_error)?;
                    }
                }
            }
            wtxn.commit().map_err(heed_error)
        })
    }

    /// The whole database `db`, in key order.
    pub fn scan(&self, db: &str) -> Result<Vec<(String, Vec<u8>)>> {
        self.with_env(|env| {
            let Some(handle) = self.existing_db(env, db)? else {
                return Ok(Vec::new());
            };
            let sums = self.existing_db(env, &sums_of(db))?;
            let rtxn = env.read_txn().map_err(heed_error)?;
            let mut out = Vec::new();
            for item in handle.iter(&rtxn).map_err(heed_error)? {
                let (k, v) = item.map_err(heed_error)?;
                self.check(&rtxn, sums, db, k, v)?;
                out.push((k.to_string(), v.to_vec()));
            }
            Ok(out)
        })
    }

    /// Writes a consistent, compacted copy of the whole environment into the directory
    /// `dir` (created; it must not hold a `data.mdb` yet), as of one read transaction:
    /// commits made meanwhile are either wholly in the copy or not at all.
    pub fn copy_to(&self, dir: impl AsRef<Path>) -> Result<()> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(io_error)?;
        self.with_env(|env| {
            env.copy_to_path(dir.join("data.mdb"), heed::CompactionOption::Enabled)
                .map_err(|e| api_types::heed_error_in(e, dir))?
                .sync_all()
                .map_err(io_error)
        })
    }

    /// The bytes of the store's file, and of the pages in use (free pages left out).
    pub fn sizes(&self) -> Result<(u64, u64)> {
        self.with_env(|env| {
            let file = env.real_disk_size().map_err(heed_error)?;
            let used = env.non_free_pages_size().map_err(heed_error)?;
            Ok((file, used))
        })
    }

    /// The value of `key` in database `db`, if any.
    pub fn get(&self, db: &str, key: &str) -> Result<Option<Vec<u8>>> {
        self.with_env(|env| {
            let Some(handle) = self.existing_db(env, db)? else {
                return Ok(None);
            };
            let sums = self.existing_db(env, &sums_of(db))?;
            let rtxn = env.read_txn().map_err(heed_error)?;
            let Some(value) = handle.get(&rtxn, key).map_err(heed_error)? else {
                return Ok(None);
            };
            self.check(&rtxn, sums, db, key, value)?;
            Ok(Some(value.to_vec()))
        })
    }

    /// Fails with `invalid_store_file`, naming the file, when `value` (of `key` in `db`) does
    /// not match the checksum kept for it in `sums`.
    fn check(
        &self,
        rtxn: &heed::RoTxn<WithoutTls>,
        sums: Option<Database<Str, Bytes>>,
        db: &str,
        key: &str,
        value: &[u8],
    ) -> Result<()> {
        let Some(sums) = sums else { return Ok(()) };
        match sums.get(rtxn, key).map_err(heed_error)? {
            Some(kept) if kept != sum(value) => Err(api_types::damaged_file(
                &self.path.join("data.mdb"),
                &format!("the value `{key}` of `{db}` does not match its checksum."),
            )),
            _ => Ok(()),
        }
    }

    /// Rewrites the environment's file without its free pages (an LMDB copy with compaction)
    /// and carries on with the compacted file.
    ///
    /// Commits and reads wait meanwhile. The compacted copy is written and fsynced beside
    /// `data.mdb`, the environment is closed, and the copy is renamed over `data.mdb`: a crash
    /// at any point leaves either the old file or the complete new one. The environment is
    /// then reopened on the new file.
    pub fn compact(&self) -> Result<Compaction> {
        if self.read_only.is_some() {
            return Err(refused());
        }
        let mut guard = self.env.write().unwrap();
        let env = guard.take().ok_or_else(closed)?;
        let data = self.path.join("data.mdb");
        let copy = self.path.join("data.mdb.compacted");
        let copied = (|| {
            let before = std::fs::metadata(&data).map_err(io_error)?.len();
            let file = env
                .copy_to_path(&copy, CompactionOption::Enabled)
                .map_err(|e| api_types::heed_error_in(e, &self.path))?;
            file.sync_all().map_err(io_error)?;
            Ok(before)
        })();
        let before = match copied {
            Ok(before) => before,
            Err(e) => {
                let _ = std::fs::remove_file(&copy);
                *guard = Some(env);
                return Err(e);
            }
        };
        self.dbs.lock().unwrap().clear();
        // Nothing else holds the environment (every use goes through the lock held here).
        env.prepare_for_closing().wait();
        let renamed = std::fs::rename(&copy, &data).map_err(io_error);
        if renamed.is_ok() {
            if let Ok(dir) = std::fs::File::open(&self.path) {
                let _ = dir.sync_all();
            }
        }
        *guard = Some(open_env(&self.path, self.map_size, false)?);
        renamed?;
        let after = std::fs::metadata(&data).map_err(io_error)?.len();
        Ok(Compaction { before, after })
    }
}

#[cfg(test)]
mod tests;
