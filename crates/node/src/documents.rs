//! Document payloads, and filters read without an index: before a task exists, and the
//! filter conditions of dynamic search rules (↔ `ts/native/documents.ts`).

use std::path::PathBuf;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::to_napi_error;

/// Checks the filter of a deletion by filter or an edition (`indexUid` given: its errors name
/// the index) without an index, when its task is enqueued: `engine::filter::check_document_filter`.
#[napi]
pub fn check_document_filter(
    filter_json: String,
    contains_filter: bool,
    index_uid: Option<String>,
) -> Result<()> {
    engine::filter::check_document_filter(&filter_json, contains_filter, index_uid.as_deref())
        .map_err(to_napi_error)
}

/// The `_foreign` conditions of a filter (`filterJson`: its string or array form), in reading
/// order, as a JSON array of `[field, nested]` (`nested`: it holds another `_foreign`). Throws
/// the filter's syntax errors (`invalid_document_filter` when `document`, else
/// `invalid_search_filter`), or `feature_not_enabled` for a `_foreign` when `foreignKeys` is off.
#[napi]
pub fn foreign_conditions(
    filter_json: String,
    document: bool,
    foreign_keys: bool,
) -> Result<String> {
    let value: serde_json::Value = serde_json::from_str(&filter_json)
        .map_err(|e| to_napi_error(api_types::Error::internal(e)))?;
    let code = if document {
        api_types::Code::InvalidDocumentFilter
    } else {
        api_types::Code::InvalidSearchFilter
    };
    let found =
        engine::filter::foreign_conditions(&value, code, foreign_keys).map_err(to_napi_error)?;
    serde_json::to_string(&found).map_err(|e| to_napi_error(api_types::Error::internal(e)))
}

/// Checks a search's filter syntax without an index (`invalid_search_filter`), as a search on
/// an index that does not exist is answered.
#[napi]
pub fn check_search_filter(filter_json: String, contains_filter: bool) -> Result<()> {
    engine::filter::check_search_filter(&filter_json, contains_filter).map_err(to_napi_error)
}

/// For each dynamic search rule's filter condition in `conditionsJson` (a JSON array of their
/// `values` objects), whether a search whose filter is `filterJson` (its JSON string or array
/// form, `null` for none) meets it (the engine's `filter::rule_condition` says how Meilisearch
/// reads them).
#[napi]
pub fn rule_filters_match(filter_json: String, conditions_json: String) -> Result<Vec<bool>> {
    engine::filter::rule_condition::rule_filters_match(&filter_json, &conditions_json)
        .map_err(to_napi_error)
}

/// Compiles a document edition function (Rhai): `bad_request` with the compiler's message when
/// it does not compile. It runs when its task does.
#[napi]
pub fn check_edit_function(source: String) -> Result<()> {
    engine::edit::check_function(&source).map_err(to_napi_error)
}

/// The work of `stageDocuments`, on the libuv pool.
pub struct StageTask {
    payload: Vec<u8>,
    format: String,
    delimiter: Option<String>,
    dest: PathBuf,
}

/// A staged payload: its documents, and what its file must hold when its task runs.
#[napi(object)]
pub struct Staged {
    pub documents: f64,
    pub bytes: f64,
    pub crc32: u32,
}

impl Task for StageTask {
    type Output = (u64, engine::StagedCheck);
    type JsValue = Staged;

    fn compute(&mut self) -> Result<Self::Output> {
        api_types::catch_panic(|| {
            let format = engine::Format::parse(&self.format)?;
            engine::stage_documents(&self.payload, format, self.delimiter.as_deref(), &self.dest)
        })
        .map_err(to_napi_error)
    }

    fn resolve(&mut self, _env: Env, (n, check): Self::Output) -> Result<Staged> {
        Ok(Staged {
            documents: n as f64,
            bytes: check.bytes as f64,
            crc32: check.crc32,
        })
    }
}

/// Parses the raw request body (`format`: `json`, `ndjson` or `csv`) off the JS thread, checks
/// it is documents (JSON: one object or an array of objects; NDJSON: one object per non-blank
/// line; CSV: a header row, typed headers `name:number|boolean|string`, an empty cell is null),
/// writes them as canonical NDJSON (one compact object per line) to `destPath`, fsyncs the file
/// and its directory, and resolves with the document count and the file's length and CRC-32
/// (checked before the task reads it). Errors: `missing_payload` (empty
/// body), `malformed_payload` (syntax, not objects, nesting too deep),
/// `invalid_document_csv_delimiter`.
#[napi(ts_return_type = "Promise<Staged>")]
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
