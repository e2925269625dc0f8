//! One open index, the engine's `Index` (↔ `ts/native/index.ts`).
//!
//! Queries and batches cross as JSON text and results come back as the response bytes, so a
//! search costs one string in and one buffer out. The JSON shapes are the engine's serde types;
//! their TypeScript declarations are generated into `ts/native/shapes.generated.ts` (named
//! below), and `tests/shapes.rs` fails when that file drifts from them.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::outbound::OutboundPeers;
use crate::{internal, to_napi_error, Handle};

/// What an async index call does, computed off the JS thread.
pub enum IndexJob {
    Apply(String),
    Get(String, Option<Vec<String>>, bool),
    Fetch(String),
    /// The query, its `vector` as `f32` bytes (the machine's order) when sent apart, and when
    /// its request arrived.
    Search(String, Option<Vec<u8>>, std::time::Instant),
    FacetSearch(String),
    MergeFacetHits(String),
    Elsewhere(String),
    Fields(String),
    Compact {
        always: bool,
    },
    CompactLater,
    PrepareColumns,
    CopyTo(String),
    /// The query and when its request arrived.
    Similar(String, std::time::Instant),
    /// Another index's filter (JSON text) and which of its `_foreign` conditions to resolve.
    ForeignIds(String, Vec<u32>),
}

/// An index call on the libuv pool (a batch too: never on the JS thread).
pub struct IndexTask {
    index: Arc<engine::Index>,
    job: Option<IndexJob>,
}

/// What an index call answers: the batch results as text, or a document/response buffer.
pub enum JobOutput {
    Text(String),
    Bytes(Option<Vec<u8>>),
}

/// Runs one job: the one engine call of the JS method that made it.
fn run(index: &engine::Index, job: IndexJob) -> api_types::Result<JobOutput> {
    use api_types::Error;
    Ok(match job {
        IndexJob::Apply(batch) => JobOutput::Text(index.apply_batch_json(&batch)?),
        IndexJob::Get(id, fields, vectors) => {
            JobOutput::Bytes(index.get_document(&id, fields.as_deref(), vectors)?)
        }
        IndexJob::Fetch(q) => {
            let q = serde_json::from_str(&q).map_err(Error::internal)?;
            JobOutput::Bytes(Some(index.fetch_documents(&q)?))
        }
        IndexJob::Search(q, vector, received) => {
            let mut q: engine::SearchQuery = serde_json::from_str(&q).map_err(Error::internal)?;
            q.received = Some(received);
            if let Some(bytes) = vector {
                q.vector = Some(engine::vector_of_bytes(&bytes));
            }
            JobOutput::Bytes(Some(index.search(&q)?))
        }
        IndexJob::FacetSearch(q) => {
            let q = serde_json::from_str(&q).map_err(Error::internal)?;
            JobOutput::Bytes(Some(index.facet_search(&q)?))
        }
        IndexJob::MergeFacetHits(q) => JobOutput::Bytes(Some(index.merge_facet_hits(&q)?)),
        IndexJob::Compact { always: true } => {
            index.compact()?;
            JobOutput::Bytes(None)
        }
        IndexJob::Compact { always: false } => JobOutput::Text(
            match index.compact_if_worthwhile()? {
                engine::Compaction::Nothing => "nothing",
                engine::Compaction::Merged => "merged",
                engine::Compaction::Later => "later",
            }
            .to_string(),
        ),
        IndexJob::CompactLater => {
            index.compact_later()?;
            JobOutput::Bytes(None)
        }
        IndexJob::PrepareColumns => {
            index.prepare_columns()?;
            JobOutput::Bytes(None)
        }
        IndexJob::CopyTo(dir) => {
            index.copy_to(std::path::Path::new(&dir))?;
            JobOutput::Bytes(None)
        }
        IndexJob::Fields(q) => {
            let q = serde_json::from_str(&q).map_err(Error::internal)?;
            JobOutput::Bytes(Some(index.fields(&q)?))
        }
        IndexJob::Elsewhere(s) => {
            let shards = serde_json::from_str(&s).map_err(Error::internal)?;
            JobOutput::Bytes(Some(index.documents_elsewhere(&shards)?))
        }
        IndexJob::ForeignIds(filter, which) => {
            let filter = serde_json::from_str(&filter).map_err(Error::internal)?;
            let which: Vec<usize> = which.into_iter().map(|k| k as usize).collect();
            let ids = index.foreign_ids(&filter, &which)?;
            JobOutput::Text(serde_json::to_string(&ids).map_err(Error::internal)?)
        }
        IndexJob::Similar(q, received) => {
            let mut q: engine::SimilarQuery = serde_json::from_str(&q).map_err(Error::internal)?;
            q.received = Some(received);
            JobOutput::Bytes(Some(index.similar(&q)?))
        }
    })
}

impl Task for IndexTask {
    type Output = JobOutput;
    type JsValue = Either3<String, Buffer, Null>;

    fn compute(&mut self) -> Result<JobOutput> {
        let job = self.job.take().expect("an index task runs once");
        api_types::catch_panic(|| run(&self.index, job)).map_err(to_napi_error)
    }

    fn resolve(&mut self, _env: Env, output: JobOutput) -> Result<Self::JsValue> {
        Ok(match output {
            JobOutput::Text(s) => Either3::A(s),
            JobOutput::Bytes(Some(b)) => Either3::B(b.into()),
            JobOutput::Bytes(None) => Either3::C(Null),
        })
    }
}

/// One index of the engine.
#[napi]
pub struct NativeIndex(Handle<engine::Index>);

#[napi]
impl NativeIndex {
    /// Opens or creates the index in `dir` (with `existing`, one that must exist), running
    /// crash recovery and the check of its files (see ARCHITECTURE.md).
    #[napi(factory)]
    pub fn open(dir: String, existing: bool) -> Result<NativeIndex> {
        let index = api_types::catch_panic(|| match existing {
            true => engine::Index::open_existing(dir),
            false => engine::Index::open(dir),
        })
        .map_err(to_napi_error)?;
        Ok(NativeIndex(Handle::new(index)))
    }

    /// Opens the index in `dir` read-only, beside the process that writes it: no recovery,
    /// nothing written; each read follows the writer's commits (see ARCHITECTURE.md).
    #[napi(factory)]
    pub fn open_read_only(dir: String) -> Result<NativeIndex> {
        let index =
            api_types::catch_panic(|| engine::Index::open_read_only(dir)).map_err(to_napi_error)?;
        Ok(NativeIndex(Handle::new(index)))
    }

    /// Why the inverted index was rebuilt from the documents when it opened, if it was.
    #[napi]
    pub fn repaired(&self) -> Result<Option<String>> {
        Ok(self.index()?.repaired().map(str::to_string))
    }

    fn index(&self) -> Result<Arc<engine::Index>> {
        self.0.get("index")
    }

    fn task(&self, job: IndexJob) -> Result<AsyncTask<IndexTask>> {
        Ok(AsyncTask::new(IndexTask {
            index: self.index()?,
            job: Some(job),
        }))
    }

    /// Applies a batch on the libuv pool (never the JS thread).
    /// `batchJson` is a `BatchInput` (`{"ops":[BatchOp...]}`), applied in order with ONE
    /// durable commit at the end; the answer is `{"results":[BatchOpResult...]}` in op order.
    /// A `deleteByFilter` filter is checked against `filterableAttributes` as the batch sees
    /// them (a bad one fails the op with `invalid_document_filter`). A per-op failure fails
    /// only that op; a whole-batch failure rejects the promise. Replaying a batch already
    /// committed (a crash between the engine commit and the task-store commit) returns the
    /// stored results without applying anything twice.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn apply_batch(&self, batch_json: String) -> Result<AsyncTask<IndexTask>> {
        self.task(IndexJob::Apply(batch_json))
    }

    /// While a batch runs: `{"steps":[{"currentStep":"...","finished":n,"total":m}],"percentage":p}`.
    #[napi]
    pub fn progress(&self) -> Result<Option<String>> {
        Ok(self.index()?.progress_json())
    }

    /// One document (only `fieldsJson`'s fields, a JSON array, when given; `_vectors` when
    /// `retrieveVectors`), or null when absent.
    #[napi(ts_return_type = "Promise<Buffer | null>")]
    pub fn get_document(
        &self,
        id: String,
        fields_json: Option<String>,
        retrieve_vectors: Option<bool>,
    ) -> Result<AsyncTask<IndexTask>> {
        let fields = match fields_json {
            Some(f) => Some(serde_json::from_str::<Vec<String>>(&f).map_err(internal)?),
            None => None,
        };
        self.task(IndexJob::Get(id, fields, retrieve_vectors.unwrap_or(false)))
    }

    /// A page of documents: `queryJson` is a `FetchQuery`; the answer is `{"results":[...],"offset","limit","total"}`,
    /// documents in internal-id order unless sorted, `total` counting those passing `ids` and
    /// `filter`. Throws `invalid_document_filter`, `invalid_document_sort`.
    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn fetch_documents(&self, query_json: String) -> Result<AsyncTask<IndexTask>> {
        self.task(IndexJob::Fetch(query_json))
    }

    /// A search: `queryJson` is a `SearchQuery` (normalized by `ts/schemas/search.ts`); the
    /// answer is the response body. `sort`, `facets` and `distinct` are passed as the client gave them and
    /// checked here (`invalid_search_sort`, `invalid_search_facets`, `invalid_search_distinct`);
    /// a bad filter throws `invalid_search_filter`. `sinceMs`: how long ago the request
    /// arrived, so `processingTimeMs` covers the whole server path (absent: from now).
    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn search(
        &self,
        query_json: String,
        vector: Option<Buffer>,
        since_ms: Option<f64>,
    ) -> Result<AsyncTask<IndexTask>> {
        let vector = vector.map(|b| b.to_vec());
        self.task(IndexJob::Search(query_json, vector, received_at(since_ms)))
    }

    /// `search`, run on the calling thread: for the embedded library's small, fast searches,
    /// where handing the work to the libuv pool and back costs more than the search itself.
    /// The caller decides when that is (`ts/library/index-handle.ts`); the engine call is the
    /// same one.
    #[napi]
    pub fn search_sync(&self, query_json: String, vector: Option<Buffer>) -> Result<Buffer> {
        let job = IndexJob::Search(query_json, vector.map(|b| b.to_vec()), received_at(None));
        let index = self.index()?;
        match api_types::catch_panic(|| run(&index, job)).map_err(to_napi_error)? {
            JobOutput::Bytes(Some(bytes)) => Ok(bytes.into()),
            _ => Err(internal("a search answers bytes")),
        }
    }

    /// A facet search: `queryJson` is a `FacetSearchQuery`; the answer is `{facetHits, facetQuery, processingTimeMs}`.
    /// Throws `facet_search_disabled`, `invalid_facet_search_facet_name`, `invalid_search_filter`.
    /// Its `processingTimeMs` counts from the engine (see `ts/search/service.ts`).
    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn facet_search(&self, query_json: String) -> Result<AsyncTask<IndexTask>> {
        self.task(IndexJob::FacetSearch(query_json))
    }

    /// Merges the segments of the inverted index: always into one (`POST
    /// /indexes/{uid}/compact`), or with `onlyIfWorthwhile` when enough of the index lies
    /// outside the segments the last merge left, into one or, for a large index, two (the
    /// worker, after a batch, when nothing else waits).
    /// With `onlyIfWorthwhile` it answers what it did: `"nothing"`, `"merged"`, or `"later"`
    /// (only a trickle is new: `compactLater` merges without holding up the next batches).
    #[napi(ts_return_type = "Promise<string | null>")]
    pub fn compact(&self, only_if_worthwhile: Option<bool>) -> Result<AsyncTask<IndexTask>> {
        let always = !only_if_worthwhile.unwrap_or(false);
        self.task(IndexJob::Compact { always })
    }

    /// The merge `compact(true)` answered `"later"` for: batches commit while it runs.
    #[napi(ts_return_type = "Promise<null>")]
    pub fn compact_later(&self) -> Result<AsyncTask<IndexTask>> {
        self.task(IndexJob::CompactLater)
    }

    /// Builds the value columns searches read (filterable, sortable, distinct attributes), so
    /// the first filter, sort or facet count after the index opens finds them.
    #[napi(ts_return_type = "Promise<null>")]
    pub fn prepare_columns(&self) -> Result<AsyncTask<IndexTask>> {
        self.task(IndexJob::PrepareColumns)
    }

    /// Writes a consistent copy of the index into the new directory `dir` (snapshots).
    #[napi(ts_return_type = "Promise<Buffer | null>")]
    pub fn copy_to(&self, dir: String) -> Result<AsyncTask<IndexTask>> {
        self.task(IndexJob::CopyTo(dir))
    }

    /// The index's attributes with what its settings make of each: `queryJson` is a
    /// `FieldsQuery`; the answer is `{results, offset, limit, total}`.
    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn fields(&self, query_json: String) -> Result<AsyncTask<IndexTask>> {
        self.task(IndexJob::Fields(query_json))
    }

    /// The documents whose shard this instance no longer holds: `shardsJson` is `Shards`; the
    /// answer is `{"primaryKey","moves":[{"shard","ids","documents"}]}`
    /// (documents with their `_vectors` as `retrieveVectors` shows them).
    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn documents_elsewhere(&self, shards_json: String) -> Result<AsyncTask<IndexTask>> {
        self.task(IndexJob::Elsewhere(shards_json))
    }

    /// A facet search over a network: `requestJson` is `{facetName, facetQuery, pages:
    /// [[{value, count}]], remoteErrors}`, each page an instance's `facetHits`; the answer is
    /// the facet search body, counts added per value, in this index's order, with
    /// `remoteErrors`.
    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn merge_facet_hits(&self, request_json: String) -> Result<AsyncTask<IndexTask>> {
        self.task(IndexJob::MergeFacetHits(request_json))
    }

    /// For the `_foreign` conditions of another index's filter (`filterJson`: its string or
    /// array form) that link to this index: the ids of the documents the inner expression of
    /// each condition numbered in `which` (reading order) selects here, as a JSON array of
    /// arrays of strings. Throws `invalid_document_filter` (an attribute not filterable here),
    /// `invalid_search_filter` (more than 100 documents in all).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn foreign_ids(
        &self,
        filter_json: String,
        which: Vec<u32>,
    ) -> Result<AsyncTask<IndexTask>> {
        self.task(IndexJob::ForeignIds(filter_json, which))
    }

    /// Similar documents: `queryJson` is a `SimilarQuery`; the answer is `{hits, id, processingTimeMs, limit, offset,
    /// estimatedTotalHits}`. Throws `invalid_similar_embedder`, `not_found_similar_id`,
    /// `invalid_similar_filter`. `sinceMs`: as for `search`.
    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn similar(
        &self,
        query_json: String,
        since_ms: Option<f64>,
    ) -> Result<AsyncTask<IndexTask>> {
        self.task(IndexJob::Similar(query_json, received_at(since_ms)))
    }

    /// The index's statistics, an `IndexStats`.
    #[napi]
    pub fn stats(&self) -> Result<String> {
        self.index()?.stats_json().map_err(to_napi_error)
    }

    /// The primary key, once set or inferred.
    #[napi]
    pub fn primary_key(&self) -> Result<Option<String>> {
        self.index()?.primary_key().map_err(to_napi_error)
    }

    /// The `foreignKeys` setting (JSON array), without the rest of the settings view.
    #[napi]
    pub fn foreign_keys(&self) -> Result<String> {
        let keys = self.index()?.foreign_keys().map_err(to_napi_error)?;
        serde_json::to_string(&keys).map_err(|e| to_napi_error(api_types::Error::internal(e)))
    }

    /// The settings view (JSON), defaults included.
    #[napi]
    pub fn settings(&self) -> Result<String> {
        self.index()?.settings_view_json().map_err(to_napi_error)
    }

    /// The number of documents.
    #[napi]
    pub fn document_count(&self) -> Result<f64> {
        Ok(self.index()?.document_count().map_err(to_napi_error)? as f64)
    }

    /// Releases this handle; the files close when the last running call finishes, after which
    /// the directory may be deleted or renamed.
    #[napi]
    pub fn close(&self) {
        self.0.close();
    }
}

/// A call over several indexes (or none) on the libuv pool: `run` with the indexes and the
/// request's JSON text, answering the response body.
pub struct ManyTask {
    indexes: Vec<Arc<engine::Index>>,
    request: String,
    run: ManyRun,
}

/// What a [`ManyTask`] computes from its indexes and request.
type ManyRun = Box<dyn Fn(&[&engine::Index], &str) -> api_types::Result<Vec<u8>> + Send>;

impl ManyTask {
    fn new(
        indexes: &[ClassInstance<NativeIndex>],
        request: String,
        run: ManyRun,
    ) -> Result<AsyncTask<ManyTask>> {
        let indexes = indexes
            .iter()
            .map(|i| i.index())
            .collect::<Result<Vec<_>>>()?;
        Ok(AsyncTask::new(ManyTask {
            indexes,
            request,
            run,
        }))
    }
}

impl Task for ManyTask {
    type Output = Vec<u8>;
    type JsValue = Buffer;

    fn compute(&mut self) -> Result<Vec<u8>> {
        api_types::catch_panic(|| {
            let indexes: Vec<&engine::Index> = self.indexes.iter().map(|i| &**i).collect();
            (self.run)(&indexes, &self.request)
        })
        .map_err(to_napi_error)
    }

    fn resolve(&mut self, _env: Env, output: Vec<u8>) -> Result<Buffer> {
        Ok(output.into())
    }
}

/// A federated multi-search: `indexes[i]` is the index of local query `i` of `requestJson`,
/// `{"queries":[{"indexUid","weight","position","remote","query":{normalized search query}}],
/// "remotes":[{"name","url","apiKey","queries":[{"position","indexUid","weight","body"}]}],
/// "federation":{"offset","limit","page","hitsPerPage","facetsByIndex":[[uid,[facet...]]...],
/// "mergeFacets":{"maxValuesPerFacet"},"distinct","showPerformanceDetails","showRuns",
/// "remoteTimeoutMs","query","pinDerivations"}}` (each `federation` field optional). The
/// queries of `remotes` are asked of those instances through the outbound client
/// ([`OutboundPeers`]). The answer
/// is the response body.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn federated_search(
    indexes: Vec<ClassInstance<NativeIndex>>,
    request_json: String,
    since_ms: Option<f64>,
) -> Result<AsyncTask<ManyTask>> {
    let received = received_at(since_ms);
    let run = move |indexes: &[&engine::Index], request: &str| {
        engine::federated_search_json(indexes, request, received, &OutboundPeers)
    };
    ManyTask::new(&indexes, request_json, Box::new(run))
}

/// What the words of each query of a federated request (as `federatedSearch` takes it) derive
/// from on this instance: `{"candidates":[...]}`, for the instance running a search over the
/// network (its `Quarry-Derivation-Candidates` request).
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn derivation_candidates(
    indexes: Vec<ClassInstance<NativeIndex>>,
    request_json: String,
) -> Result<AsyncTask<ManyTask>> {
    ManyTask::new(
        &indexes,
        request_json,
        Box::new(engine::derivation_candidates_json),
    )
}

/// One page of a network's documents: `requestJson` is `{"pages":[{"results":[...],"total"}],
/// "sort":[...],"fields":[...]|null,"offset","limit","remoteErrors":{...}}`, each page an
/// instance's first `offset + limit` documents in network order. The answer is the body of
/// `/documents`, with `remoteErrors`.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn merge_document_pages(request_json: String) -> Result<AsyncTask<ManyTask>> {
    ManyTask::new(
        &[],
        request_json,
        Box::new(|_, request| engine::merge_pages(request)),
    )
}

/// The instant a request arrived, from how long ago it did (`sinceMs`; absent: now), so an
/// answer's `processingTimeMs` covers the server's whole path, the wait for a thread included.
fn received_at(since_ms: Option<f64>) -> std::time::Instant {
    let now = std::time::Instant::now();
    let ago = std::time::Duration::try_from_secs_f64(since_ms.unwrap_or(0.0) / 1000.0)
        .unwrap_or_default();
    now.checked_sub(ago).unwrap_or(now)
}
