//! The N-API binding: a thin, coarse layer over the engine (see docs/native-contract.md).
//!
//! One call per request. Heavy calls (`stageDocuments`, `applyBatch`, `search`, fetches,
//! `KvStore.commit`) run as async tasks off the JS thread. User-facing errors cross the
//! boundary as a JS `Error` whose message is `{"code":...,"message":...}` JSON; ts/native
//! turns it back into an ApiError.

#![deny(clippy::all)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use api_types::Error as ApiError;
use heed::types::{Bytes, Str};
use heed::{Database, Env as HeedEnv, EnvOpenOptions, WithoutTls};
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// The engine allocates many small, short-lived values from several threads at once (indexing
/// workers, searches); mimalloc serves them without glibc's arena locks and consolidation.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Wraps an engine error so that TypeScript can recover its catalog code.
fn js_err(e: ApiError) -> napi::Error {
    napi::Error::new(Status::GenericFailure, e.to_json().to_string())
}

fn heed_err(e: heed::Error) -> napi::Error {
    let api = match e {
        heed::Error::Mdb(heed::MdbError::MapFull) => ApiError::new(
            "database_size_limit_reached",
            "Maximum database size has been reached.",
        ),
        other => ApiError::internal(other),
    };
    js_err(api)
}

#[napi(object)]
pub struct ErrorCodeRow {
    pub code: String,
    pub error_type: String,
    pub status: u32,
}

/// The one error table.
#[napi]
pub fn error_catalog() -> Vec<ErrorCodeRow> {
    api_types::catalog()
        .map(|r| ErrorCodeRow {
            code: r.code.to_string(),
            error_type: r.error_type.as_str().to_string(),
            status: r.status as u32,
        })
        .collect()
}

#[napi]
pub fn engine_version() -> String {
    engine::VERSION.to_string()
}

/// Meilisearch's redaction of a secret (embedder API keys in task details).
#[napi]
pub fn hide_secret(secret: String) -> String {
    engine::settings::hide_secret(&secret)
}

/// The locales settings and searches accept, as `[twoLetter, threeLetter]` pairs in
/// Meilisearch's order (`cmn`, which has no two-letter form, comes last on its own).
#[napi]
pub fn settings_locales() -> Vec<Vec<String>> {
    let pairs = engine::settings::LOCALE_PAIRS.iter();
    let mut out: Vec<Vec<String>> = pairs
        .map(|(a, b)| vec![a.to_string(), b.to_string()])
        .collect();
    out.push(vec!["cmn".to_string()]);
    out
}

/// Checks the syntax of a document filter (the JSON text of its string or array form), as
/// delete-by-filter does when it enqueues. Throws `invalid_document_filter`, or
/// `feature_not_enabled` for `CONTAINS` without the `containsFilter` feature.
#[napi]
pub fn check_document_filter(filter_json: String, contains_filter: bool) -> Result<()> {
    let value: serde_json::Value =
        serde_json::from_str(&filter_json).map_err(|e| js_err(ApiError::internal(e)))?;
    let filter = engine::filter::Filter::from_json(&value)
        .map_err(|m| js_err(ApiError::new("invalid_document_filter", m)))?;
    match filter {
        Some(f) => f
            .check_contains(contains_filter)
            .map_err(|m| js_err(ApiError::new("feature_not_enabled", m))),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// stageDocuments

pub struct StageTask {
    payload: Vec<u8>,
    format: String,
    delimiter: Option<String>,
    dest: PathBuf,
}

impl Task for StageTask {
    type Output = u64;
    type JsValue = f64;

    fn compute(&mut self) -> Result<u64> {
        let format = engine::Format::parse(&self.format).map_err(js_err)?;
        engine::stage_documents(&self.payload, format, self.delimiter.as_deref(), &self.dest)
            .map_err(js_err)
    }

    fn resolve(&mut self, _env: Env, n: u64) -> Result<f64> {
        Ok(n as f64)
    }
}

/// Parses a documents payload and writes it as canonical NDJSON (fsynced) to `destPath`.
#[napi(ts_return_type = "Promise<number>")]
pub fn stage_documents(
    payload: Buffer,
    format: String,
    csv_delimiter: Option<String>,
    dest_path: String,
) -> AsyncTask<StageTask> {
    AsyncTask::new(StageTask {
        payload: payload.to_vec(),
        format,
        delimiter: csv_delimiter,
        dest: PathBuf::from(dest_path),
    })
}

// ---------------------------------------------------------------------------------------------
// KvStore: the durable metadata store

struct KvInner {
    env: HeedEnv<WithoutTls>,
    dbs: Mutex<HashMap<String, Database<Str, Bytes>>>,
}

impl KvInner {
    fn db(&self, name: &str) -> Result<Database<Str, Bytes>> {
        let mut dbs = self.dbs.lock().unwrap();
        if let Some(db) = dbs.get(name) {
            return Ok(*db);
        }
        let mut wtxn = self.env.write_txn().map_err(heed_err)?;
        let db = self
            .env
            .create_database::<Str, Bytes>(&mut wtxn, Some(name))
            .map_err(heed_err)?;
        wtxn.commit().map_err(heed_err)?;
        dbs.insert(name.to_string(), db);
        Ok(db)
    }
}

/// One write of a commit: the value is the next `len` bytes of the commit's `values` buffer,
/// or a deletion when `len` is negative. (One buffer per commit keeps the boundary cheap.)
#[napi(object)]
pub struct KvOp {
    pub db: String,
    pub key: String,
    pub len: i64,
}

#[napi(object)]
pub struct KvEntry {
    pub key: String,
    pub value: Buffer,
}

#[napi]
pub struct KvStore {
    inner: Option<Arc<KvInner>>,
}

struct OwnedOp {
    db: String,
    key: String,
    value: Option<Vec<u8>>,
}

pub struct CommitTask {
    inner: Arc<KvInner>,
    ops: Vec<OwnedOp>,
}

impl Task for CommitTask {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> Result<()> {
        let mut handles = Vec::with_capacity(self.ops.len());
        for op in &self.ops {
            handles.push(self.inner.db(&op.db)?);
        }
        let mut wtxn = self.inner.env.write_txn().map_err(heed_err)?;
        for (op, db) in self.ops.iter().zip(handles) {
            match &op.value {
                Some(v) => db.put(&mut wtxn, &op.key, v).map_err(heed_err)?,
                None => {
                    db.delete(&mut wtxn, &op.key).map_err(heed_err)?;
                }
            }
        }
        wtxn.commit().map_err(heed_err)
    }

    fn resolve(&mut self, _env: Env, _: ()) -> Result<()> {
        Ok(())
    }
}

#[napi]
impl KvStore {
    /// Opens (creating) the LMDB environment at `path`.
    #[napi(factory)]
    pub fn open(path: String, map_size_bytes: f64) -> Result<KvStore> {
        std::fs::create_dir_all(&path).map_err(|e| js_err(ApiError::internal(e)))?;
        // SAFETY: one environment per path in this process (the server opens it once).
        let env = unsafe {
            EnvOpenOptions::new()
                .read_txn_without_tls()
                .map_size(map_size_bytes as usize)
                .max_dbs(64)
                .open(&path)
        }
        .map_err(heed_err)?;
        Ok(KvStore {
            inner: Some(Arc::new(KvInner {
                env,
                dbs: Mutex::new(HashMap::new()),
            })),
        })
    }

    fn inner(&self) -> Result<&Arc<KvInner>> {
        self.inner
            .as_ref()
            .ok_or_else(|| js_err(ApiError::internal("the store is closed")))
    }

    /// All ops in one write transaction, durable when the promise resolves.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn commit(&self, ops: Vec<KvOp>, values: Buffer) -> Result<AsyncTask<CommitTask>> {
        let bytes: &[u8] = &values;
        let mut at = 0usize;
        let mut owned = Vec::with_capacity(ops.len());
        for o in ops {
            let value = if o.len < 0 {
                None
            } else {
                let end = at + o.len as usize;
                let v = bytes
                    .get(at..end)
                    .ok_or_else(|| js_err(ApiError::internal("commit: values buffer too short")))?;
                at = end;
                Some(v.to_vec())
            };
            owned.push(OwnedOp {
                db: o.db,
                key: o.key,
                value,
            });
        }
        Ok(AsyncTask::new(CommitTask {
            inner: self.inner()?.clone(),
            ops: owned,
        }))
    }

    /// The whole database in key order.
    #[napi]
    pub fn scan(&self, db: String) -> Result<Vec<KvEntry>> {
        let inner = self.inner()?;
        let handle = inner.db(&db)?;
        let rtxn = inner.env.read_txn().map_err(heed_err)?;
        let mut out = Vec::new();
        for item in handle.iter(&rtxn).map_err(heed_err)? {
            let (k, v) = item.map_err(heed_err)?;
            out.push(KvEntry {
                key: k.to_string(),
                value: v.to_vec().into(),
            });
        }
        Ok(out)
    }

    #[napi]
    pub fn get(&self, db: String, key: String) -> Result<Option<Buffer>> {
        let inner = self.inner()?;
        let handle = inner.db(&db)?;
        let rtxn = inner.env.read_txn().map_err(heed_err)?;
        Ok(handle
            .get(&rtxn, &key)
            .map_err(heed_err)?
            .map(|v| v.to_vec().into()))
    }

    #[napi]
    pub fn close(&mut self) {
        self.inner = None;
    }
}

// ---------------------------------------------------------------------------------------------
// NativeIndex

/// What an async index call does, computed on a worker thread.
pub enum IndexJob {
    Apply(String),
    Get(String, Option<Vec<String>>),
    Fetch(String),
    Search(String),
    FacetSearch(String),
}

pub struct IndexTask {
    index: Arc<engine::Index>,
    job: Option<IndexJob>,
}

pub enum JobOutput {
    Text(String),
    Bytes(Option<Vec<u8>>),
}

impl Task for IndexTask {
    type Output = JobOutput;
    type JsValue = Either3<String, Buffer, Null>;

    fn compute(&mut self) -> Result<JobOutput> {
        let job = self.job.take().expect("an index task runs once");
        let index = &self.index;
        let out = match job {
            IndexJob::Apply(batch) => {
                JobOutput::Text(index.apply_batch_json(&batch).map_err(js_err)?)
            }
            IndexJob::Get(id, fields) => {
                JobOutput::Bytes(index.get_document(&id, fields.as_deref()).map_err(js_err)?)
            }
            IndexJob::Fetch(q) => {
                let q: engine::FetchQuery =
                    serde_json::from_str(&q).map_err(|e| js_err(ApiError::internal(e)))?;
                JobOutput::Bytes(Some(index.fetch_documents(&q).map_err(js_err)?))
            }
            IndexJob::Search(q) => {
                let q: engine::SearchQuery =
                    serde_json::from_str(&q).map_err(|e| js_err(ApiError::internal(e)))?;
                JobOutput::Bytes(Some(index.search(&q).map_err(js_err)?))
            }
            IndexJob::FacetSearch(q) => {
                let q: engine::FacetSearchQuery =
                    serde_json::from_str(&q).map_err(|e| js_err(ApiError::internal(e)))?;
                JobOutput::Bytes(Some(index.facet_search(&q).map_err(js_err)?))
            }
        };
        Ok(out)
    }

    fn resolve(&mut self, _env: Env, output: JobOutput) -> Result<Self::JsValue> {
        Ok(match output {
            JobOutput::Text(s) => Either3::A(s),
            JobOutput::Bytes(Some(b)) => Either3::B(b.into()),
            JobOutput::Bytes(None) => Either3::C(Null),
        })
    }
}

#[napi]
pub struct NativeIndex {
    index: Option<Arc<engine::Index>>,
}

#[napi]
impl NativeIndex {
    /// Opens or creates the index in `dir`, repairing it after a crash.
    #[napi(factory)]
    pub fn open(dir: String) -> Result<NativeIndex> {
        let index = engine::Index::open(dir).map_err(js_err)?;
        Ok(NativeIndex {
            index: Some(Arc::new(index)),
        })
    }

    fn index(&self) -> Result<&Arc<engine::Index>> {
        self.index
            .as_ref()
            .ok_or_else(|| js_err(ApiError::internal("the index is closed")))
    }

    fn task(&self, job: IndexJob) -> Result<AsyncTask<IndexTask>> {
        Ok(AsyncTask::new(IndexTask {
            index: self.index()?.clone(),
            job: Some(job),
        }))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn apply_batch(&self, batch_json: String) -> Result<AsyncTask<IndexTask>> {
        self.task(IndexJob::Apply(batch_json))
    }

    #[napi]
    pub fn progress(&self) -> Result<Option<String>> {
        Ok(self.index()?.progress_json())
    }

    #[napi(ts_return_type = "Promise<Buffer | null>")]
    pub fn get_document(
        &self,
        id: String,
        fields_json: Option<String>,
    ) -> Result<AsyncTask<IndexTask>> {
        let fields = match fields_json {
            Some(f) => Some(
                serde_json::from_str::<Vec<String>>(&f)
                    .map_err(|e| js_err(ApiError::internal(e)))?,
            ),
            None => None,
        };
        self.task(IndexJob::Get(id, fields))
    }

    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn fetch_documents(&self, query_json: String) -> Result<AsyncTask<IndexTask>> {
        self.task(IndexJob::Fetch(query_json))
    }

    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn search(&self, query_json: String) -> Result<AsyncTask<IndexTask>> {
        self.task(IndexJob::Search(query_json))
    }

    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn facet_search(&self, query_json: String) -> Result<AsyncTask<IndexTask>> {
        self.task(IndexJob::FacetSearch(query_json))
    }

    #[napi]
    pub fn stats(&self) -> Result<String> {
        self.index()?.stats_json().map_err(js_err)
    }

    #[napi]
    pub fn primary_key(&self) -> Result<Option<String>> {
        self.index()?.primary_key().map_err(js_err)
    }

    /// The settings view (JSON), defaults included.
    #[napi]
    pub fn settings(&self) -> Result<String> {
        self.index()?.settings_view_json().map_err(js_err)
    }

    #[napi]
    pub fn document_count(&self) -> Result<f64> {
        Ok(self.index()?.document_count().map_err(js_err)? as f64)
    }

    /// Releases this handle; the files close when the last running call finishes.
    #[napi]
    pub fn close(&mut self) {
        self.index = None;
    }
}
