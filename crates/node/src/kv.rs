//! The durable metadata store: tasks, batches, the index registry, keys and features
//! (↔ `ts/native/kv.ts`, over the `kv` crate).

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::{to_napi_error, Handle};

/// One write of a commit: the value is the next `len` bytes of the commit's `values` buffer,
/// or a deletion of the key when `len` is negative.
#[napi(object)]
pub struct KvOp {
    /// The named database (created on first use).
    pub db: String,
    /// The key.
    pub key: String,
    /// The value's length in `values`; negative to delete the key.
    pub len: i64,
}

/// One entry of a scan.
#[napi(object)]
pub struct KvEntry {
    /// The key.
    pub key: String,
    /// The value.
    pub value: Buffer,
}

/// One LMDB environment of named databases, created on first use.
#[napi]
pub struct KvStore(Handle<kv::KvStore>);

/// The work of `commit`, on the libuv pool.
pub struct CommitTask {
    store: Arc<kv::KvStore>,
    ops: Vec<kv::Op>,
}

impl Task for CommitTask {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> Result<()> {
        api_types::catch_panic(|| self.store.commit(&self.ops)).map_err(to_napi_error)
    }

    fn resolve(&mut self, _env: Env, _: ()) -> Result<()> {
        Ok(())
    }
}

/// The work of `copyTo`, on the libuv pool.
pub struct CopyTask {
    store: Arc<kv::KvStore>,
    dir: String,
}

impl Task for CopyTask {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> Result<()> {
        api_types::catch_panic(|| self.store.copy_to(&self.dir)).map_err(to_napi_error)
    }

    fn resolve(&mut self, _env: Env, _: ()) -> Result<()> {
        Ok(())
    }
}

/// The size of the store's file before and after a compaction.
#[napi(object)]
pub struct KvCompaction {
    /// Bytes before.
    pub before: f64,
    /// Bytes after.
    pub after: f64,
}

/// The work of `compact`, on the libuv pool.
pub struct CompactTask {
    store: Arc<kv::KvStore>,
}

impl Task for CompactTask {
    type Output = kv::Compaction;
    type JsValue = KvCompaction;

    fn compute(&mut self) -> Result<kv::Compaction> {
        api_types::catch_panic(|| self.store.compact()).map_err(to_napi_error)
    }

    fn resolve(&mut self, _env: Env, c: kv::Compaction) -> Result<KvCompaction> {
        Ok(KvCompaction {
            before: c.before as f64,
            after: c.after as f64,
        })
    }
}

#[napi]
impl KvStore {
    /// Opens (creating the directory) the LMDB environment at `path`.
    #[napi(factory)]
    pub fn open(path: String, map_size_bytes: f64) -> Result<KvStore> {
        let store = kv::KvStore::open(path, map_size_bytes as usize).map_err(to_napi_error)?;
        Ok(KvStore(Handle::new(store)))
    }

    /// Opens the existing environment at `path` read-only, beside the process that writes it.
    #[napi(factory)]
    pub fn open_read_only(path: String, map_size_bytes: f64) -> Result<KvStore> {
        let store =
            kv::KvStore::open_read_only(path, map_size_bytes as usize).map_err(to_napi_error)?;
        Ok(KvStore(Handle::new(store)))
    }

    /// Opened read-only: whether the writer committed since the last call (a compaction's new
    /// file is opened). Opened for writing: false.
    #[napi]
    pub fn changed(&self) -> Result<bool> {
        self.store()?.changed().map_err(to_napi_error)
    }

    fn store(&self) -> Result<Arc<kv::KvStore>> {
        self.0.get("store")
    }

    /// Applies all `ops` in ONE write transaction: atomic, and durable when the promise
    /// resolves. Each op's value is the next `len` bytes of `values` (one buffer per commit
    /// keeps the boundary cheap).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn commit(&self, ops: Vec<KvOp>, values: Buffer) -> Result<AsyncTask<CommitTask>> {
        let ops = kv::Op::from_lengths(ops.into_iter().map(|o| (o.db, o.key, o.len)), &values)
            .map_err(to_napi_error)?;
        Ok(AsyncTask::new(CommitTask {
            store: self.store()?,
            ops,
        }))
    }

    /// Writes a consistent, compacted copy of the environment into directory `dir`
    /// (snapshots).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn copy_to(&self, dir: String) -> Result<AsyncTask<CopyTask>> {
        Ok(AsyncTask::new(CopyTask {
            store: self.store()?,
            dir,
        }))
    }

    /// The whole database `db` in key order (synchronous: start-up only).
    #[napi]
    pub fn scan(&self, db: String) -> Result<Vec<KvEntry>> {
        let entries = self.store()?.scan(&db).map_err(to_napi_error)?;
        Ok(entries
            .into_iter()
            .map(|(key, value)| KvEntry {
                key,
                value: value.into(),
            })
            .collect())
    }

    /// The value of `key` in database `db`, or null (synchronous).
    #[napi]
    pub fn get(&self, db: String, key: String) -> Result<Option<Buffer>> {
        let value = self.store()?.get(&db, &key).map_err(to_napi_error)?;
        Ok(value.map(Buffer::from))
    }

    /// `[file bytes, bytes of the pages in use]` (statistics).
    #[napi]
    pub fn sizes(&self) -> Result<Vec<f64>> {
        let (file, used) = self.store()?.sizes().map_err(to_napi_error)?;
        Ok(vec![file as f64, used as f64])
    }

    /// Rewrites the store's file without its free pages (LMDB copy with compaction) and goes
    /// on with it; commits wait meanwhile. Resolves with the file's size before and after.
    #[napi(ts_return_type = "Promise<KvCompaction>")]
    pub fn compact(&self) -> Result<AsyncTask<CompactTask>> {
        Ok(AsyncTask::new(CompactTask {
            store: self.store()?,
        }))
    }

    /// Releases this handle; the environment closes when the last running commit finishes.
    #[napi]
    pub fn close(&self) {
        self.0.close();
    }
}

/// The data directory's lock (`kv::DirLock`): one process per directory.
#[napi]
pub struct DataDirLock(std::sync::Mutex<Option<kv::DirLock>>);

#[napi]
impl DataDirLock {
    /// Locks the existing directory `dir` for this process; fails, naming the holder's pid,
    /// when another process (or another open in this one) holds it.
    #[napi(factory)]
    pub fn acquire(dir: String) -> Result<DataDirLock> {
        let lock = kv::DirLock::acquire(std::path::Path::new(&dir)).map_err(to_napi_error)?;
        Ok(DataDirLock(std::sync::Mutex::new(Some(lock))))
    }

    /// Releases the directory (idempotent).
    #[napi]
    pub fn release(&self) {
        if let Some(lock) = self.0.lock().unwrap_or_else(|p| p.into_inner()).take() {
            lock.release();
        }
    }
}

/// Reads every entry and value page of the LMDB environment in `dir` (`kv::walk`), returning
/// how many entries it read; a damaged file fails with `invalid_store_file`, or kills the
/// process, which is why the server runs it in a process of its own.
#[napi]
pub fn walk_store(dir: String) -> Result<f64> {
    api_types::catch_panic(|| kv::walk(std::path::Path::new(&dir)))
        .map(|n| n as f64)
        .map_err(to_napi_error)
}

/// The `invalid_store_file` message of the file `file`, damaged as `why` says (the process that
/// walked it died: only its parent can say so).
#[napi]
pub fn damaged_file_message(file: String, why: String) -> String {
    api_types::damaged_file(std::path::Path::new(&file), &why).message
}
