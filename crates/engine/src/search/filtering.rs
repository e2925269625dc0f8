//! Filters to sets of internal ids, for search, document fetching and facet search: a
//! request's filter is parsed and validated against the settings, then evaluated on the
//! value columns when they can answer it, else on every stored document. Results are cached
//! per generation ([`crate::index::cache::FilterCache`]).
//!
//! Deleting by filter evaluates its filter on the batch's own, uncommitted view instead (see
//! `update::delete`).

use std::sync::Arc;

use api_types::{Code, Error, Result};
use roaring::RoaringBitmap;
use serde_json::{json, Value};

use super::{all_ids, columns};
use crate::codec;
use crate::filter::Filter;
use crate::index::Index;
use crate::settings::Settings;
use crate::store::{heed_error, keys};

/// Parses and validates a request's filter against `settings`; errors carry `code`.
pub(crate) fn request_filter(
    value: Option<&Value>,
    settings: &Settings,
    code: Code,
    (contains_enabled, foreign_ids): (bool, Option<&[Vec<String>]>),
) -> Result<Option<Filter>> {
    let Some(value) = value else { return Ok(None) };
    let mut filter = crate::filter::parse_request(value, code, contains_enabled, foreign_ids)?;
    if let Some(f) = &mut filter {
        f.validate(settings).map_err(|m| Error::new(code, m))?;
        f.bind_geo(settings);
    }
    Ok(filter)
}

/// The documents a request's filter lets through (`None`: no filter, all of them).
pub(crate) fn allowed_ids(
    index: &Index,
    rtxn: &heed::RoTxn,
    value: Option<&Value>,
    settings: &Settings,
    code: Code,
    features: (bool, Option<&[Vec<String>]>),
) -> Result<Option<Arc<RoaringBitmap>>> {
    match (request_filter(value, settings, code, features)?, value) {
        (Some(f), Some(key)) => Ok(Some(filter_ids(index, rtxn, &f, (key, features.1))?)),
        _ => Ok(None),
    }
}

/// The internal ids of the documents `rtxn` sees matching `filter` (whose request JSON is
/// `key`, and the ids its `_foreign` conditions were resolved to `foreign`), from the cache
/// when the same filter ran at the same generation.
pub(crate) fn filter_ids(
    index: &Index,
    rtxn: &heed::RoTxn,
    filter: &Filter,
    (key, foreign): (&Value, Option<&[Vec<String>]>),
) -> Result<Arc<RoaringBitmap>> {
    let generation = index.store().get_u64(rtxn, keys::GENERATION)?;
    // The foreign indexes change apart from this one: their ids are part of the key.
    let key = match foreign {
        None => key.to_string(),
        Some(ids) => json!([key, ids]).to_string(),
    };
    if let Some(ids) = index.filter_cache().lock().unwrap().get(generation, &key) {
        return Ok(ids);
    }
    let ids = Arc::new(scan_filter(index, rtxn, filter)?);
    index
        .filter_cache()
        .lock()
        .unwrap()
        .put(generation, key, ids.clone());
    Ok(ids)
}

/// The documents `rtxn` sees passing `filter`: from the value columns (documents by
/// value) when they can answer it, else by reading every document.
pub(crate) fn scan_filter(
    index: &Index,
    rtxn: &heed::RoTxn,
    filter: &Filter,
) -> Result<RoaringBitmap> {
    // `_vectors` conditions become the documents they select, read from the vector store.
    let resolved;
    let filter = match filter.vector_conditions().is_empty() {
        true => filter,
        false => {
            let failed = std::cell::RefCell::new(None);
            let mut f = filter.clone();
            let outcome = f.resolve_vectors(&|c| match index.vector_filter_docs(rtxn, c) {
                Ok(found) => found,
                Err(e) => {
                    failed.borrow_mut().get_or_insert(e);
                    Ok(RoaringBitmap::new())
                }
            });
            if let Some(e) = failed.into_inner() {
                return Err(e);
            }
            outcome.map_err(|m| Error::new(filter.code(), m))?;
            resolved = f;
            &resolved
        }
    };
    if filter.columns_can_answer() {
        let paths = filter.paths().to_vec();
        let columns = columns(index, rtxn, &paths)?;
        let columns = paths.into_iter().zip(columns).collect();
        let universe = all_ids(index, rtxn)?;
        return Ok(filter.evaluate(&columns, &universe));
    }
    scan_documents(index, rtxn, filter)
}

/// Evaluates `filter` on every document `rtxn` sees, in internal-id order.
pub(crate) fn scan_documents(
    index: &Index,
    rtxn: &heed::RoTxn,
    filter: &Filter,
) -> Result<RoaringBitmap> {
    let fields = index.fields_map().read().unwrap().clone();
    let mut out = RoaringBitmap::new();
    for item in index.store().docs.iter(rtxn).map_err(heed_error)? {
        let (iid, bytes) = item.map_err(heed_error)?;
        let doc = codec::decode_fields(bytes, &fields, |name| filter.reads_field(name))?;
        if filter.matches_at(iid, &doc) {
            out.insert(iid);
        }
    }
    Ok(out)
}
