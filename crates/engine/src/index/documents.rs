//! Reading documents back: one by external id, a page of them (filtered, by ids, sorted),
//! their projection (`fields`, `_vectors`) shared with search hits, and the index's
//! statistics. Every read uses one LMDB snapshot and the committed fields map.

use std::collections::BTreeMap;

use api_types::{Code, Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::embeddings::{embedding_counts, VectorsView};
use super::Index;
use crate::codec;
use crate::settings::Settings;
use crate::store::{heed_error, keys, stat_bytes};

/// Query of `fetch_documents`.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(rename_all = "camelCase")]
pub struct FetchQuery {
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub offset: usize,
    #[serde(default = "super::default_limit")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub limit: usize,
    #[serde(default)]
    pub fields: Option<Vec<String>>,
    #[serde(default)]
    pub ids: Option<Vec<String>>,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub retrieve_vectors: bool,
    /// `attr:asc|desc` keys; empty or absent keeps internal-id order.
    #[serde(default)]
    pub sort: Option<Vec<String>>,
    /// A filter (string or array form); errors use `invalid_document_filter`.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub filter: Option<Value>,
    /// The `containsFilter` experimental feature: `CONTAINS` is refused without it.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub contains_filter: bool,
    /// The ids each `_foreign` condition of `filter` selects on its foreign index, in reading
    /// order, resolved by the caller (never from a request's body): the engine reads each
    /// condition as `field IN [ids]`.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub foreign_ids: Option<Vec<Vec<String>>>,
}

/// An index's statistics (`stats`), sizes in bytes as measured on disk.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct IndexStats {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub number_of_documents: u64,
    /// The pages of the documents' database.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub raw_document_db_size: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub avg_document_size: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub number_of_embeddings: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub number_of_embedded_documents: u64,
    /// How many documents hold each attribute.
    #[cfg_attr(feature = "ts", ts(type = "Record<string, number>"))]
    pub field_distribution: BTreeMap<String, u64>,
    /// The index's files.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub database_size: u64,
    /// The same, less the pages LMDB holds free for reuse.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub used_database_size: u64,
    /// Each store database's pages and the inverted index's files, those holding anything.
    #[cfg_attr(feature = "ts", ts(type = "Record<string, number>"))]
    pub internal_database_sizes: Map<String, Value>,
}

/// The bytes of the files directly in `dir` (lock files aside).
fn files_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().ends_with(".lock"))
            .filter_map(|e| e.metadata().ok())
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .sum()
    })
}

/// How many documents the `_foreign` conditions of one filter may select in one foreign index
/// (Meilisearch's bound).
pub const MAX_FOREIGN_FILTER_IDS: u64 = 100;

impl Index {
    /// Decodes a stored document on a read path (committed data, committed fields map).
    pub(crate) fn decode_doc(&self, bytes: &[u8]) -> Result<Map<String, Value>> {
        let fields = self.fields_map.read().unwrap().clone();
        codec::decode(bytes, &fields)
    }

    pub fn primary_key(&self) -> Result<Option<String>> {
        let rtxn = self.read_txn()?;
        self.store.get_string(&rtxn, keys::PRIMARY_KEY)
    }

    /// The stored settings object, or None before the first settings update.
    pub fn settings_json(&self) -> Result<Option<String>> {
        let rtxn = self.read_txn()?;
        self.store.get_string(&rtxn, keys::SETTINGS)
    }

    pub fn document_count(&self) -> Result<u64> {
        let rtxn = self.read_txn()?;
        self.store.docs.len(&rtxn).map_err(heed_error)
    }

    /// The index's statistics, sizes measured on disk: `databaseSize` is the files' bytes,
    /// `usedDatabaseSize` leaves out the LMDB pages free for reuse, and
    /// `internalDatabaseSizes` gives each store database's pages and the inverted index's
    /// files (those that hold anything).
    pub fn stats_json(&self) -> Result<String> {
        let rtxn = self.read_txn()?;
        let stat = self.store.docs.stat(&rtxn).map_err(heed_error)?;
        let count = stat.entries as u64;
        let raw = stat_bytes(&stat);
        let fd = self.field_distribution(&rtxn)?;
        let (embeddings, embedded) = embedding_counts(&self.store, &rtxn)?;
        let inverted = files_bytes(&self.dir.join("tantivy"));
        let mut internal = Map::new();
        let sizes = [
            (
                "main",
                stat_bytes(&self.store.meta.stat(&rtxn).map_err(heed_error)?),
            ),
            (
                "externalDocumentsIds",
                stat_bytes(&self.store.ids.stat(&rtxn).map_err(heed_error)?),
            ),
            ("documents", raw),
            (
                "documentTexts",
                stat_bytes(&self.store.texts.stat(&rtxn).map_err(heed_error)?),
            ),
            ("vectors", self.store.vectors.used_bytes(&rtxn)?),
            ("invertedIndex", inverted),
        ];
        for (name, bytes) in sizes {
            if bytes > 0 {
                internal.insert(name.to_string(), json!(bytes));
            }
        }
        let store_file =
            std::fs::metadata(self.dir.join("store").join("data.mdb")).map_or(0, |m| m.len());
        let store_used = self.store.env.non_free_pages_size().map_err(heed_error)?;
        let stats = IndexStats {
            number_of_documents: count,
            raw_document_db_size: raw,
            avg_document_size: raw.checked_div(count).unwrap_or(0),
            number_of_embeddings: embeddings,
            number_of_embedded_documents: embedded,
            field_distribution: fd,
            database_size: store_file + inverted,
            used_database_size: store_used + inverted,
            internal_database_sizes: internal,
        };
        serde_json::to_string(&stats).map_err(Error::internal)
    }

    /// One document by external id, with only `fields` when given, and its `_vectors` when
    /// `retrieve_vectors`.
    pub fn get_document(
        &self,
        id: &str,
        fields: Option<&[String]>,
        retrieve_vectors: bool,
    ) -> Result<Option<Vec<u8>>> {
        let rtxn = self.read_txn()?;
        let Some(iid) = self.store.internal_id(&rtxn, id)? else {
            return Ok(None);
        };
        let Some(bytes) = self.store.docs.get(&rtxn, &iid).map_err(heed_error)? else {
            return Ok(None);
        };
        let doc = self.decode_doc(bytes)?;
        let vectors = if retrieve_vectors {
            let settings = self.settings(&rtxn)?;
            let view = self.vectors_view(&rtxn, settings.as_ref())?;
            Some(view.of(self, &rtxn, iid, doc.get("_vectors"))?)
        } else {
            None
        };
        let doc = retrieve(doc, fields, vectors);
        Ok(Some(serde_json::to_vec(&doc).map_err(Error::internal)?))
    }

    /// For the `_foreign` conditions of a filter of another index (`filter`: its request
    /// JSON) that link to this one: the ids of this index's documents that the inner
    /// expression of each condition numbered in `which` (reading order) selects, in internal-id
    /// order. Errors carry `invalid_document_filter` and point into `filter`'s strings; more
    /// than [`MAX_FOREIGN_FILTER_IDS`] documents in all is `invalid_search_filter`, as in
    /// Meilisearch.
    pub fn foreign_ids(&self, filter: &Value, which: &[usize]) -> Result<Vec<Vec<String>>> {
        let code = Code::InvalidDocumentFilter;
        let Some(f) = crate::filter::Filter::from_json(filter).map_err(|m| Error::new(code, m))?
        else {
            return Ok(Vec::new());
        };
        let conditions = f.foreign();
        let rtxn = self.store.read()?;
        let settings = self.settings(&rtxn)?;
        let mut sets = Vec::with_capacity(which.len());
        for &k in which {
            let Some((_, inner, _)) = conditions.get(k) else {
                return Err(Error::internal("no such `_foreign` condition"));
            };
            let mut sub = f.sub_filter(inner);
            sub.validate(&settings).map_err(|m| Error::new(code, m))?;
            sub.bind_geo(&settings);
            sets.push(crate::search::filtering::scan_filter(self, &rtxn, &sub)?);
        }
        let all = sets
            .iter()
            .fold(roaring::RoaringBitmap::new(), |acc, s| acc | s);
        if all.len() > MAX_FOREIGN_FILTER_IDS {
            // `invalid_search_filter` whatever the route, as Meilisearch answers it.
            return Err(Error::new(
                Code::InvalidSearchFilter,
                format!("Foreign filter is retrieving too many documents, foreign filters can't retrieve more than {MAX_FOREIGN_FILTER_IDS} documents per index"),
            ));
        }
        let pk = self
            .store
            .get_string(&rtxn, keys::PRIMARY_KEY)?
            .unwrap_or_default();
        let mut ids = std::collections::HashMap::new();
        for iid in &all {
            if let Some(bytes) = self.store.docs.get(&rtxn, &iid).map_err(heed_error)? {
                let doc = self.decode_doc(bytes)?;
                let id = match doc.get(&pk) {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => continue,
                };
                ids.insert(iid, id);
            }
        }
        Ok(sets
            .iter()
            .map(|set| set.iter().filter_map(|i| ids.get(&i).cloned()).collect())
            .collect())
    }

    /// `{"results":[...],"offset","limit","total"}` in internal-id order, or by `sort`.
    pub fn fetch_documents(&self, q: &FetchQuery) -> Result<Vec<u8>> {
        let rtxn = self.read_txn()?;
        let settings = self.settings(&rtxn)?;
        let allowed = crate::search::filtering::allowed_ids(
            self,
            &rtxn,
            q.filter.as_ref(),
            settings.as_ref(),
            Code::InvalidDocumentFilter,
            (q.contains_filter, q.foreign_ids.as_deref()),
        )?;
        let passes = |iid: u32| allowed.as_ref().is_none_or(|a| a.contains(iid));
        let fields = q.fields.as_deref();
        let decode = |iid: u32| -> Result<Option<(u32, Map<String, Value>)>> {
            match self.store.docs.get(&rtxn, &iid).map_err(heed_error)? {
                Some(bytes) => Ok(Some((iid, self.decode_doc(bytes)?))),
                None => Ok(None),
            }
        };
        // The requested ids that exist and pass the filter, in internal-id order.
        let requested: Option<Vec<u32>> = match &q.ids {
            Some(ids) => {
                let mut iids: Vec<u32> = Vec::new();
                for id in ids {
                    if let Some(iid) = self.store.internal_id(&rtxn, id)? {
                        iids.push(iid);
                    }
                }
                iids.sort_unstable();
                iids.dedup();
                iids.retain(|&i| passes(i));
                Some(iids)
            }
            None => None,
        };
        let mut page: Vec<(u32, Map<String, Value>)> = Vec::new();
        let total;
        let sort_specs = q.sort.as_deref().unwrap_or_default();
        if !sort_specs.is_empty() {
            let sortable = &settings.sortable_attributes;
            let keys = crate::sort::parse(sort_specs, sortable, Code::InvalidDocumentSort)?;
            // Every candidate is read and ordered; the filters issue brings sorted columns.
            let mut docs: Vec<(u32, Map<String, Value>)> = Vec::new();
            match requested {
                Some(iids) => {
                    for iid in iids {
                        if let Some(found) = decode(iid)? {
                            docs.push(found);
                        }
                    }
                }
                None => {
                    for item in self.store.docs.iter(&rtxn).map_err(heed_error)? {
                        let (iid, bytes) = item.map_err(heed_error)?;
                        if passes(iid) {
                            docs.push((iid, self.decode_doc(bytes)?));
                        }
                    }
                }
            }
            crate::sort::sort_documents(&mut docs, &keys);
            total = docs.len() as u64;
            page.extend(docs.into_iter().skip(q.offset).take(q.limit));
        } else if let Some(iids) = requested {
            total = iids.len() as u64;
            for iid in iids.into_iter().skip(q.offset).take(q.limit) {
                page.extend(decode(iid)?);
            }
        } else if let Some(allowed) = &allowed {
            total = allowed.len();
            for iid in allowed.iter().skip(q.offset).take(q.limit) {
                page.extend(decode(iid)?);
            }
        } else {
            total = self.store.docs.len(&rtxn).map_err(heed_error)?;
            for item in self
                .store
                .docs
                .iter(&rtxn)
                .map_err(heed_error)?
                .skip(q.offset)
                .take(q.limit)
            {
                let (iid, bytes) = item.map_err(heed_error)?;
                page.push((iid, self.decode_doc(bytes)?));
            }
        }
        let view = match q.retrieve_vectors {
            true => Some(self.vectors_view(&rtxn, settings.as_ref())?),
            false => None,
        };
        let mut results: Vec<Value> = Vec::with_capacity(page.len());
        for (iid, doc) in page {
            let vectors = match &view {
                Some(view) => Some(view.of(self, &rtxn, iid, doc.get("_vectors"))?),
                None => None,
            };
            results.push(Value::Object(retrieve(doc, fields, vectors)));
        }
        serde_json::to_vec(
            &json!({"results": results, "offset": q.offset, "limit": q.limit, "total": total}),
        )
        .map_err(Error::internal)
    }

    /// The stored count of documents per top-level field.
    pub(crate) fn field_distribution(&self, txn: &heed::RoTxn) -> Result<BTreeMap<String, u64>> {
        match self.store.get_meta(txn, keys::FIELD_DISTRIBUTION)? {
            Some(b) => serde_json::from_slice(b).map_err(Error::internal),
            None => Ok(BTreeMap::new()),
        }
    }

    /// What printing `_vectors` under `settings` needs, for one request.
    pub(crate) fn vectors_view(
        &self,
        rtxn: &heed::RoTxn,
        settings: &Settings,
    ) -> Result<VectorsView> {
        VectorsView::load(&self.store, rtxn, settings)
    }
}

/// Projection for documents and hits: `fields`, then `vectors` as `_vectors` when
/// `retrieveVectors` asked for them.
pub(crate) fn retrieve(
    doc: Map<String, Value>,
    fields: Option<&[String]>,
    vectors: Option<Value>,
) -> Map<String, Value> {
    let mut out = project(doc, fields, false);
    if let Some(v) = vectors {
        out.insert("_vectors".into(), v);
    }
    out
}

/// Keeps only `fields` (top-level names, or dotted paths into objects) and drops `_vectors`
/// unless asked for.
pub(crate) fn project(
    doc: Map<String, Value>,
    fields: Option<&[String]>,
    keep_vectors: bool,
) -> Map<String, Value> {
    let mut doc = match fields {
        None => doc,
        Some(fields) if fields.iter().any(|f| f == "*") => doc,
        Some(fields) => select(doc, fields, false),
    };
    if !keep_vectors {
        doc.remove("_vectors");
    }
    doc
}

/// The fields of `doc` that `paths` name, as Meilisearch selects them: a dotted path reaches
/// into objects and into each object of an array (an object left with nothing stays `{}`
/// there); within an array, what a path meets that is neither (a string, a number) is kept
/// whole; `*` inside a path is no wildcard.
fn select(doc: Map<String, Value>, paths: &[String], in_array: bool) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, v) in doc {
        if paths.iter().any(|f| f == &k) {
            out.insert(k, v);
            continue;
        }
        let prefix = format!("{k}.");
        let nested: Vec<String> = paths
            .iter()
            .filter_map(|f| f.strip_prefix(&prefix).map(str::to_string))
            .collect();
        if nested.is_empty() {
            continue;
        }
        match v {
            Value::Object(inner) => {
                let sub = select(inner, &nested, in_array);
                if !sub.is_empty() {
                    out.insert(k, Value::Object(sub));
                }
            }
            Value::Array(items) => {
                out.insert(k, Value::Array(select_each(items, &nested)));
            }
            other if in_array => {
                out.insert(k, other);
            }
            _ => {}
        }
    }
    out
}

fn select_each(items: Vec<Value>, paths: &[String]) -> Vec<Value> {
    items
        .into_iter()
        .map(|item| match item {
            Value::Object(o) => Value::Object(select(o, paths, true)),
            Value::Array(a) => Value::Array(select_each(a, paths)),
            other => other,
        })
        .collect()
}

/// Pages of documents from several instances of a network, as `merge_pages` reads them.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PagesRequest {
    /// Each instance's first `offset + limit` documents, in the order the network lists them.
    pages: Vec<DocumentPage>,
    #[serde(default)]
    sort: Vec<String>,
    #[serde(default)]
    fields: Option<Vec<String>>,
    offset: usize,
    limit: usize,
    #[serde(default)]
    remote_errors: Map<String, Value>,
}

#[derive(Deserialize)]
struct DocumentPage {
    results: Vec<Map<String, Value>>,
    total: u64,
}

/// One page of a network's documents: the instances' pages one after the other, or merged
/// by `sort` in the order `/documents` sorts (ties in the order of the instances), then
/// `fields` kept. `{"results","offset","limit","total","remoteErrors"}`.
pub fn merge_pages(request_json: &str) -> Result<Vec<u8>> {
    let req: PagesRequest = serde_json::from_str(request_json).map_err(Error::internal)?;
    let total: u64 = req.pages.iter().map(|p| p.total).sum();
    let mut docs: Vec<(u32, Map<String, Value>)> = Vec::new();
    for page in req.pages {
        for doc in page.results {
            docs.push((docs.len() as u32, doc));
        }
    }
    if !req.sort.is_empty() {
        // The instances checked the attributes are sortable.
        let mut names: Vec<String> = req
            .sort
            .iter()
            .map(|s| {
                s.rsplit_once(':')
                    .map_or(s.as_str(), |(f, _)| f)
                    .trim()
                    .to_string()
            })
            .collect();
        names.push("_geo".into());
        let keys = crate::sort::parse(&req.sort, &names, Code::InvalidDocumentSort)?;
        crate::sort::sort_documents(&mut docs, &keys);
    }
    let results: Vec<Value> = docs
        .into_iter()
        .skip(req.offset)
        .take(req.limit)
        .map(|(_, d)| Value::Object(project(d, req.fields.as_deref(), true)))
        .collect();
    serde_json::to_vec(&json!({
        "results": results,
        "offset": req.offset,
        "limit": req.limit,
        "total": total,
        "remoteErrors": req.remote_errors,
    }))
    .map_err(Error::internal)
}

impl Index {
    /// The documents this index holds whose shard it no longer holds (after the network's
    /// shards changed), grouped by their shard, each with its `_vectors` as `retrieveVectors`
    /// shows them (so a `userProvided` embedding moves with its document):
    /// `{"primaryKey","moves":[{"shard","ids":[...],"documents":[...]}]}`.
    pub fn documents_elsewhere(&self, shards: &crate::index::Shards) -> Result<Vec<u8>> {
        let rtxn = self.read_txn()?;
        let Some(pk) = self.store.get_string(&rtxn, keys::PRIMARY_KEY)? else {
            return serde_json::to_vec(&json!({"primaryKey": null, "moves": []}))
                .map_err(Error::internal);
        };
        let settings = self.settings(&rtxn)?;
        let view = self.vectors_view(&rtxn, settings.as_ref())?;
        let mut moves: BTreeMap<String, (Vec<String>, Vec<Value>)> = BTreeMap::new();
        for item in self.store.docs.iter(&rtxn).map_err(heed_error)? {
            let (iid, bytes) = item.map_err(heed_error)?;
            let doc = self.decode_doc(bytes)?;
            let id = crate::docid::document_id(&doc, &pk)?;
            if shards.keeps(&id) {
                continue;
            }
            let Some(shard) = crate::docid::shard_of(&id, &shards.all) else {
                continue;
            };
            let vectors = view.of(self, &rtxn, iid, doc.get("_vectors"))?;
            let entry = moves.entry(shard.to_string()).or_default();
            entry.0.push(id);
            entry
                .1
                .push(Value::Object(retrieve(doc, None, Some(vectors))));
        }
        let moves: Vec<Value> = moves
            .into_iter()
            .map(|(shard, (ids, documents))| json!({"shard": shard, "ids": ids, "documents": documents}))
            .collect();
        serde_json::to_vec(&json!({"primaryKey": pk, "moves": moves})).map_err(Error::internal)
    }
}
