//! The N-API binding: thin wrappers over the engine and the key-value store, one coarse call
//! per request.
//!
//! One Rust file per TypeScript wrapper file in `ts/native/`:
//! - `lib.rs` ↔ `binding.ts`: the error table, the engine version, and [`to_napi_error`],
//!   the one way errors leave the binding;
//! - `documents.rs` ↔ `documents.ts`: payload staging, and filters read without an index;
//! - `kv.rs` ↔ `kv.ts`: the durable key-value store (the `kv` crate);
//! - `index.rs` ↔ `index.ts`: one open index (the engine's `Index`);
//! - `outbound.rs` ↔ `outbound.ts`: one request through the one outbound client.
//!
//! Each exported function or method converts its arguments, makes one engine or store call and
//! converts the result; logic belongs in those crates. Heavy calls (`stageDocuments`,
//! `applyBatch`, `search`, fetches, `KvStore.commit`) run as async tasks off the JS thread.
//! The doc comments here are the contract with TypeScript: they flow into the generated
//! `native/index.d.ts`, which types the wrappers in `ts/native/`.

#![deny(clippy::all)]

pub mod documents;
pub mod index;
pub mod kv;
pub mod outbound;

use api_types::Error as ApiError;
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// The engine allocates many small, short-lived values from several threads at once (indexing
/// workers, searches); mimalloc serves them without glibc's arena locks and consolidation.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Transparent huge pages off for this process, when the addon loads. mimalloc asks the kernel
/// for huge pages on its arena, and a search touches a few hundred kilobytes of memory the
/// arena has not used yet: with huge pages each touch zeroes a whole 2 MiB page first. On a
/// restarted server with a 100k-document index, one-word searches a fifth of a second apart took
/// 11–13 ms in the engine instead of 0.9 ms (`bench/paced.js` compares). An operator who sets
/// `MIMALLOC_ALLOW_THP` (mimalloc's own switch) decides instead: the flag is then left as the
/// process inherited it.
#[cfg(target_os = "linux")]
#[napi_derive::module_init]
fn no_transparent_huge_pages() {
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_none() {
        // SAFETY: `prctl` with `PR_SET_THP_DISABLE` only sets a flag of the calling process.
        unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
    }
}

/// Gives the calling thread a short scheduler slice (0.1 ms, the kernel's least) so that it
/// preempts a thread of the same priority as soon as it wakes, instead of waiting for that
/// thread's default slice (about 3 ms on two cores) to end. Needs Linux 6.12 or later (custom
/// slices of the EEVDF scheduler); an older kernel takes the call and keeps its default. Only
/// a thread of the normal policy is changed, and its nice value is kept. Returns whether the
/// kernel took it. `ts/startup/threads.ts` calls it on the server's JavaScript thread.
#[napi]
pub fn shorten_slice() -> bool {
    #[cfg(target_os = "linux")]
    {
        /// `struct sched_attr` of `sched_setattr(2)`.
        #[repr(C)]
        #[derive(Default)]
        struct SchedAttr {
            size: u32,
            policy: u32,
            flags: u64,
            nice: i32,
            priority: u32,
            runtime: u64,
            deadline: u64,
            period: u64,
            util_min: u32,
            util_max: u32,
        }
        const SLICE_NS: u64 = 100_000;
        // SAFETY: reads and sets the scheduling attributes of the calling thread only, with a
        // `sched_attr` that lives across the call.
        unsafe {
            if libc::sched_getscheduler(0) != libc::SCHED_OTHER {
                return false;
            }
            *libc::__errno_location() = 0;
            let nice = libc::getpriority(libc::PRIO_PROCESS, 0);
            if *libc::__errno_location() != 0 {
                return false;
            }
            let attr = SchedAttr {
                size: std::mem::size_of::<SchedAttr>() as u32,
                policy: libc::SCHED_OTHER as u32,
                nice,
                runtime: SLICE_NS,
                ..Default::default()
            };
            libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) == 0
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// How every error leaves the binding: a JS `Error` whose `message` is the JSON text
/// `{"code":...,"message":...}`, `code` being a code of the table (`internal` for internal
/// failures). napi's own `code` property only carries napi statuses, so `ts/native` reads the
/// code from the message and turns it back into an `ApiError`.
pub(crate) fn to_napi_error(e: ApiError) -> napi::Error {
    napi::Error::new(Status::GenericFailure, e.to_json().to_string())
}

/// An internal failure (a conversion that cannot fail on input from `ts/native`).
pub(crate) fn internal(e: impl std::fmt::Display) -> napi::Error {
    to_napi_error(ApiError::internal(e))
}

/// What a JS object holds of a Rust resource (an index, the key-value store). JS may close it
/// while calls on it still run: each call takes its own reference, and closing drops only the
/// handle's, so the resource goes when the last running call ends. Every method takes `&self`:
/// closing never conflicts with a call in flight.
pub(crate) struct Handle<T>(std::sync::RwLock<Option<std::sync::Arc<T>>>);

impl<T> Handle<T> {
    pub(crate) fn new(value: T) -> Handle<T> {
        Handle(std::sync::RwLock::new(Some(std::sync::Arc::new(value))))
    }

    /// The resource, or an internal error naming `what` once closed.
    pub(crate) fn get(&self, what: &str) -> Result<std::sync::Arc<T>> {
        let held = self.0.read().unwrap_or_else(|e| e.into_inner());
        held.clone()
            .ok_or_else(|| internal(format!("the {what} is closed")))
    }

    pub(crate) fn close(&self) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// One row of the error table.
#[napi(object)]
pub struct ErrorCodeRow {
    /// The wire code, e.g. `index_not_found`.
    pub code: String,
    /// `invalid_request`, `internal`, `auth` or `system`.
    pub error_type: String,
    /// The HTTP status.
    pub status: u32,
    /// The documentation link of the code.
    pub link: String,
}

/// The one error table (the `api-types` crate), every code with its type and HTTP status.
#[napi]
pub fn error_catalog() -> Vec<ErrorCodeRow> {
    api_types::catalog()
        .map(|r| ErrorCodeRow {
            code: r.code.to_string(),
            error_type: r.error_type.as_str().to_string(),
            status: r.status as u32,
            link: api_types::link(r.code),
        })
        .collect()
}

/// Sets the networks every outbound request of the process (remote embedders, remote
/// instances, webhooks) may reach: CIDRs, or `any`.
#[napi]
pub fn configure_outbound(allowed_networks: Vec<String>) -> Result<()> {
    ::outbound::configure(&allowed_networks).map_err(to_napi_error)
}

/// Sets what the indexer of every index may use (`--max-indexing-threads`,
/// `--max-indexing-memory` in bytes; null: every core, two thirds of the memory). See
/// `engine::indexing`.
#[napi]
pub fn configure_indexing(max_threads: Option<u32>, max_memory: Option<f64>) {
    engine::configure_indexing(
        max_threads.map(|n| n as usize),
        max_memory.map(|b| b.max(0.0) as u64),
    );
}

/// When the addon loads: the remote embedders (`rest`, `openAi`, `ollama`), which the engine
/// builds but cannot send from, are installed with the one outbound client.
#[napi_derive::module_init]
fn install_remote_embedders() {
    remote_embedders::install();
}

/// Where `huggingFace` embedders find their models, and the ONNX Runtime library (loaded
/// once per process).
#[napi]
pub fn configure_models(
    models_dir: Option<String>,
    onnx_runtime_path: Option<String>,
) -> Result<()> {
    engine::configure_models(models_dir, onnx_runtime_path).map_err(to_napi_error)
}

/// How long a remote embedder's request may take and for how long a failed one is tried
/// again, in seconds (null: 30 s, and three tries whatever the time).
#[napi]
pub fn configure_remote_embedders(
    timeout_seconds: Option<f64>,
    max_retry_duration_seconds: Option<f64>,
) {
    let d = |s: f64| std::time::Duration::try_from_secs_f64(s).ok();
    remote_embedders::configure(
        timeout_seconds.and_then(d),
        max_retry_duration_seconds.and_then(d),
    );
}

/// Renders a document template with a document (`documentJson`, an object; null only parses
/// the template and renders nothing). Throws `template_parsing_error`,
/// `template_rendering_error`.
#[napi]
pub fn render_template(template: String, document_json: Option<String>) -> Result<Option<String>> {
    engine::render_template(&template, document_json.as_deref()).map_err(to_napi_error)
}

/// Checks one embedder of a settings update (`patchJson`, as sent) against its source's field
/// rules. Throws `invalid_settings_embedders`.
#[napi]
pub fn check_embedder(name: String, patch_json: String) -> Result<()> {
    engine::check_embedder(&name, &patch_json).map_err(to_napi_error)
}

/// Returns the memory the allocator holds free to the operating system
/// (`engine::memory::release_free_memory`), on a thread of the libuv pool: the server calls it
/// once a burst of large answers has been sent (`ts/http/response-budget.ts`).
#[napi(ts_return_type = "Promise<void>")]
pub fn release_free_memory() -> AsyncTask<ReleaseTask> {
    AsyncTask::new(ReleaseTask)
}

/// The task of [`release_free_memory`].
pub struct ReleaseTask;

impl Task for ReleaseTask {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> Result<()> {
        engine::memory::release_free_memory();
        Ok(())
    }

    fn resolve(&mut self, _env: Env, _: ()) -> Result<()> {
        Ok(())
    }
}

/// The engine's version.
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
