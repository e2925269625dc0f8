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

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use api_types::{heed_error, Error, Result};
use heed::types::{Bytes, Str};
use heed::{Database, Env, EnvOpenOptions, WithoutTls};

/// How many named databases one environment may hold.
const MAX_DBS: u32 = 64;

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
    env: Env<WithoutTls>,
    dbs: Mutex<HashMap<String, Database<Str, Bytes>>>,
}

impl KvStore {
    /// Opens (creating the directory and the environment) the store at `path`, reserving
    /// `map_size` bytes of address space.
    pub fn open(path: impl AsRef<Path>, map_size: usize) -> Result<KvStore> {
        let path = path.as_ref();
        std::fs::create_dir_all(path).map_err(Error::internal)?;
        // SAFETY: one environment per path in this process (the server opens it once).
        let env = unsafe {
            EnvOpenOptions::new()
                .read_txn_without_tls()
                .map_size(map_size)
                .max_dbs(MAX_DBS)
                .open(path)
        }
        .map_err(heed_error)?;
        Ok(KvStore {
            env,
            dbs: Mutex::new(HashMap::new()),
        })
    }

    /// The handle of database `name`, created (in a transaction of its own) on first use.
    fn db(&self, name: &str) -> Result<Database<Str, Bytes>> {
        let mut dbs = self.dbs.lock().unwrap();
        if let Some(db) = dbs.get(name) {
            return Ok(*db);
        }
        let mut wtxn = self.env.write_txn().map_err(heed_error)?;
        let db = self
            .env
            .create_database::<Str, Bytes>(&mut wtxn, Some(name))
            .map_err(heed_error)?;
        wtxn.commit().map_err(heed_error)?;
        dbs.insert(name.to_string(), db);
        Ok(db)
    }

    /// Applies every op in one write transaction: all of them are durable when this returns,
    /// or none is applied.
    pub fn commit(&self, ops: &[Op]) -> Result<()> {
        // Databases are created before the write transaction: LMDB allows one writer at a time.
        let handles = ops
            .iter()
            .map(|op| self.db(&op.db))
            .collect::<Result<Vec<_>>>()?;
        let mut wtxn = self.env.write_txn().map_err(heed_error)?;
        for (op, db) in ops.iter().zip(handles) {
            match &op.value {
                Some(v) => db.put(&mut wtxn, &op.key, v).map_err(heed_error)?,
                None => {
                    db.delete(&mut wtxn, &op.key).map_err(heed_error)?;
                }
            }
        }
        wtxn.commit().map_err(heed_error)
    }

    /// The whole database `db`, in key order.
    pub fn scan(&self, db: &str) -> Result<Vec<(String, Vec<u8>)>> {
        let handle = self.db(db)?;
        let rtxn = self.env.read_txn().map_err(heed_error)?;
        let mut out = Vec::new();
        for item in handle.iter(&rtxn).map_err(heed_error)? {
            let (k, v) = item.map_err(heed_error)?;
            out.push((k.to_string(), v.to_vec()));
        }
        Ok(out)
    }

    /// Writes a consistent, compacted copy of the whole environment into the directory
    /// `dir` (created; it must not hold a `data.mdb` yet), as of one read transaction:
    /// commits made meanwhile are either wholly in the copy or not at all.
    pub fn copy_to(&self, dir: impl AsRef<Path>) -> Result<()> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(Error::internal)?;
        let file = self
            .env
            .copy_to_path(dir.join("data.mdb"), heed::CompactionOption::Enabled)
            .map_err(heed_error)?;
        file.sync_all().map_err(Error::internal)
    }

    /// The bytes of the store's file, and of the pages in use (free pages left out).
    pub fn sizes(&self) -> Result<(u64, u64)> {
        let file = self.env.real_disk_size().map_err(heed_error)?;
        let used = self.env.non_free_pages_size().map_err(heed_error)?;
        Ok((file, used))
    }

    /// The value of `key` in database `db`, if any.
    pub fn get(&self, db: &str, key: &str) -> Result<Option<Vec<u8>>> {
        let handle = self.db(db)?;
        let rtxn = self.env.read_txn().map_err(heed_error)?;
        Ok(handle
            .get(&rtxn, key)
            .map_err(heed_error)?
            .map(<[u8]>::to_vec))
    }
}

#[cfg(test)]
mod tests;
