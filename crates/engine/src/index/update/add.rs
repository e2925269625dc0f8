//! Adding documents from a staged payload (NDJSON written by the HTTP layer), in two passes
//! over the file: the first settles the primary key and checks every document's id (and its
//! `_geo`/`_geojson` when something reads them), so a bad document fails its task before
//! anything of it is written; the second writes each document to LMDB (replacing it, or merging
//! it into the stored version for [`Method::Update`]) and hands its text to tantivy, tokenized
//! a chunk at a time on up to four cores.

use std::collections::HashSet;

use api_types::{Code, Error, Result};
use roaring::RoaringBitmap;
use serde_json::{Map, Value};

use super::batch::{decrement, iid_term, pk_exists, Batch};
use super::vectors::{missing_vectors, Embedders};
use super::{Addition, Method};
use crate::codec::{self, FieldsMap};
use crate::docid;
use crate::index::cores::on_cores;
use crate::index::{text, tv};
use crate::languages::Locales;
use crate::payload;
use crate::store::heed_error;
use crate::tokens;

/// Attribute names an index may hold (top-level attributes and searchable nested paths), as
/// Meilisearch bounds them.
const MAX_FIELDS: usize = u16::MAX as usize;

/// Documents tokenized together, split among threads (see `Batch::index_text`).
const TEXT_CHUNK: usize = 4096;

/// Documents written to LMDB whose text is not yet in tantivy, and their internal ids (a
/// repeated document must reach tantivy before its next version deletes it).
#[derive(Default)]
struct PendingText {
    docs: Vec<(u32, Map<String, Value>)>,
    ids: HashSet<u32>,
    /// The documents' encoded size, kept within `--max-indexing-memory`
    /// ([`crate::indexing::pending_text_bytes`]).
    bytes: usize,
}

impl Batch<'_, '_> {
    /// Adds the documents of `addition`'s payload; how many documents it indexed (a document
    /// the payload holds several times counts once, as Meilisearch counts it).
    pub(super) fn add_documents(&mut self, addition: Addition) -> Result<u64> {
        let Addition {
            file,
            method,
            primary_key: requested_pk,
            skip_creation,
            shards,
        } = addition;
        // Every instance checks every document (so all of them fail or succeed alike) and
        // writes only those of its own shards.
        let keeps = |id: &str| shards.is_none_or(|s| s.keeps(id));
        // Pass 1: decide the primary key and validate every id, so a bad document fails the
        // whole task before anything is written.
        let mut pk = self.state.primary_key.clone();
        let mut total = 0u64;
        let mut first_error: Option<Error> = None;
        let settings = self.settings()?;
        // `_geo` is checked when something reads it (a filter or a sort), `_geojson` when
        // filters read it.
        let rules = crate::filter::rules::rules_of(&settings);
        let geo = docid::GeoChecks {
            geo: crate::filter::rules::has_plain_rule(&rules, "_geo")
                || settings.sortable_attributes.iter().any(|f| f == "_geo"),
            geojson: crate::filter::rules::has_plain_rule(&rules, "_geojson"),
        };
        let searchable = settings.searchable();
        let embedders = Embedders::of(&settings)?;
        // The first document giving no vectors to a `userProvided` embedder, and how many more.
        let mut missing: Option<(String, String)> = None;
        let mut missing_others = 0u64;
        // Attribute names the payload would add to the index's field map.
        let mut new_fields: HashSet<String> = HashSet::new();
        // Until the index has pair words: documents drawn evenly from the payload to choose
        // them from, should this batch take the index to enough documents.
        let mut sample = self.state.pairs.is_none().then(Sample::default);
        payload::read_staged(file, |doc| {
            if first_error.is_some() {
                return Ok(());
            }
            if pk.is_none() {
                match requested_pk {
                    Some(p) => pk = Some(p.to_string()),
                    None => match docid::infer_primary_key(&doc) {
                        Ok(p) => pk = Some(p),
                        Err(e) => {
                            first_error = Some(e);
                            return Ok(());
                        }
                    },
                }
            }
            let pk = pk.as_deref().unwrap();
            let id = match docid::document_id(&doc, pk).and_then(|id| {
                geo.check(&doc, pk, id.clone())?;
                Ok(id)
            }) {
                Ok(id) => id,
                Err(e) => {
                    first_error = Some(e);
                    return Ok(());
                }
            };
            text::field_names(&doc, searchable, |name| {
                if self.state.fields.id(name).is_none() && !new_fields.contains(name) {
                    new_fields.insert(name.to_string());
                }
            });
            if self.state.fields.len() + new_fields.len() > MAX_FIELDS {
                first_error = Some(Error::new(
                    Code::MaxFieldsLimitExceeded,
                    "A document cannot contain more than 65,535 fields.",
                ));
                return Ok(());
            }
            if !keeps(&id) {
                return Ok(());
            }
            if !embedders.is_empty() {
                let is_new = self.index.store.internal_id(&self.txn, &id)?.is_none();
                match embedders.check(&self.state.vectors, &doc, &id, is_new) {
                    Ok(names) => {
                        if let Some(name) = names.first() {
                            match &missing {
                                None => missing = Some((name.to_string(), id)),
                                Some(_) => missing_others += 1,
                            }
                        }
                    }
                    Err(e) => first_error = Some(e),
                }
            }
            if let Some(sample) = sample.as_mut() {
                sample.offer(&doc);
            }
            total += 1;
            Ok(())
        })?;
        if let (Some(existing), Some(requested)) = (&self.state.primary_key, requested_pk) {
            if existing != requested {
                return Err(pk_exists(existing));
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        if let Some((name, id)) = missing {
            return Err(missing_vectors(&name, &id, missing_others));
        }
        let Some(pk) = pk else { return Ok(0) };
        self.state.primary_key = Some(pk.clone());
        // The batch taking the index to enough documents chooses its pair words before
        // writing any, and gives tantivy every document stored before again, with them.
        if let Some(sample) = sample.filter(|_| total > 0) {
            if self.pair_words_due(total)? {
                self.choose_pair_words(&settings, sample.docs)?;
                self.reindex_text(&settings)?;
            }
        }
        self.set_progress(|p| {
            p.step = "indexing documents";
            p.total = total;
        });

        // Pass 2: write each document to LMDB and tantivy.
        let mut done = 0u64;
        // The documents this payload wrote, to count one repeated in it once.
        let mut written = RoaringBitmap::new();
        let mut repeated = 0u64;
        let (mut encoded, mut packed) = (Vec::with_capacity(256), Vec::with_capacity(256));
        // The first documents encoded while the index has no dictionary, to train one on
        // (once a batch: a failed training is not tried again on every next few).
        let mut samples = self.state.fields.dictionary().is_none().then(Vec::new);
        let analyzer = settings.analyzer();
        let locales = Locales::from_settings(&settings);
        let pairs = self.state.pairs.clone().unwrap_or_default();
        let cut = (&analyzer, &locales, pairs.as_ref());
        // Documents written to LMDB whose text is not yet in tantivy: tokenized a chunk at a
        // time on up to four cores.
        let mut pending = PendingText::default();
        let pending_max = crate::indexing::pending_text_bytes();
        // What the sources must embed, before anything is written: a source that fails fails
        // the task with nothing of it written.
        let generated = match embedders.is_empty() {
            true => Default::default(),
            false => self.embed_payload((&settings, &embedders), (file, method, &pk), &keeps)?,
        };
        payload::read_staged(file, |mut doc| {
            let ext = docid::document_id(&doc, &pk)?;
            if !keeps(&ext) {
                return Ok(());
            }
            let existing = self.index.store.internal_id(&self.txn, &ext)?;
            let iid = match existing {
                Some(iid) => {
                    let old_bytes = self
                        .index
                        .store
                        .docs
                        .get(&self.txn, &iid)
                        .map_err(heed_error)?;
                    if let Some(old_bytes) = old_bytes {
                        let old = codec::decode(old_bytes, &self.state.fields)?;
                        for k in old.keys() {
                            decrement(&mut self.state.field_distribution, k);
                        }
                        if method == Method::Update {
                            let mut merged = old;
                            for (k, v) in doc {
                                merged.insert(k, v);
                            }
                            doc = merged;
                        }
                    }
                    iid
                }
                None if skip_creation => {
                    done += 1;
                    return Ok(());
                }
                None => {
                    let iid = self.new_internal_id()?;
                    let store = &self.index.store;
                    store.put_internal_id(&mut self.txn, &ext, iid)?;
                    iid
                }
            };
            if !embedders.is_empty() {
                self.write_vectors(&embedders, (iid, &doc, &ext), &generated)?;
                crate::vectors::parse::strip_configured(&mut doc, &|n| embedders.configured(n));
            }
            for k in doc.keys() {
                // `_vectors` is not a field (Meilisearch leaves it out of the distribution).
                if k != "_vectors" {
                    *self.state.field_distribution.entry(k.clone()).or_insert(0) += 1;
                }
            }
            let stored = codec::encode(&doc, &mut self.state.fields, &mut encoded, &mut packed)?;
            let docs = &self.index.store.docs;
            docs.put(&mut self.txn, &iid, stored).map_err(heed_error)?;
            if let Some(list) = samples.as_mut() {
                list.push(encoded.clone());
                if list.len() >= codec::TRAINING_SAMPLES {
                    train_dictionary(&mut self.state.fields, samples.take().unwrap_or_default());
                }
            }
            self.state.dirty.insert(iid);
            if !written.insert(iid) {
                repeated += 1;
            }
            // A new internal id has never reached tantivy (ids only grow, and a batch that
            // fails rolls tantivy back with LMDB): nothing to delete. A document repeated in
            // the payload is deleted after its earlier version reached tantivy.
            if existing.is_some() {
                if pending.ids.contains(&iid) {
                    self.index_text(&mut pending, searchable, cut)?;
                }
                self.writer.delete_term(iid_term(&self.index.fields, iid));
            }
            text::assign_fields(&doc, searchable, &mut self.state.fields);
            pending.ids.insert(iid);
            pending.docs.push((iid, doc));
            pending.bytes += encoded.len();
            if pending.docs.len() >= TEXT_CHUNK || pending.bytes >= pending_max {
                self.index_text(&mut pending, searchable, cut)?;
            }
            done += 1;
            if done.is_multiple_of(4096) {
                self.set_progress(|p| p.done = done);
            }
            Ok(())
        })?;
        self.index_text(&mut pending, searchable, cut)?;
        // Batches too small to train on: once the index holds enough, its first documents.
        if samples.is_some()
            && done > 0
            && self.index.store.docs.len(&self.txn).map_err(heed_error)?
                >= codec::TRAINING_SAMPLES as u64
        {
            let mut stored = Vec::with_capacity(codec::TRAINING_SAMPLES);
            for item in self.index.store.docs.iter(&self.txn).map_err(heed_error)? {
                let (_, bytes) = item.map_err(heed_error)?;
                if let Some(plain) = codec::plain_of(bytes) {
                    stored.push(plain.to_vec());
                }
                if stored.len() == codec::TRAINING_SAMPLES {
                    break;
                }
            }
            train_dictionary(&mut self.state.fields, stored);
        }
        Ok(total - repeated)
    }

    /// Tokenizes `pending` on every core (up to four) and hands the documents to
    /// tantivy in order; empties `pending`.
    fn index_text(
        &mut self,
        pending: &mut PendingText,
        searchable: Option<&[String]>,
        (analyzer, locales, pairs): (&tokens::Analyzer, &Locales, &text::PairWords),
    ) -> Result<()> {
        if pending.docs.is_empty() {
            return Ok(());
        }
        let (tfields, fields) = (&self.index.fields, &self.state.fields);
        let docs = on_cores(&pending.docs, 2, |chunk| {
            analyzer.with(|tokenizer| {
                let cut = text::Cutter {
                    tokenizer,
                    locales,
                    pairs,
                };
                chunk
                    .iter()
                    .map(|(iid, doc)| tfields.tantivy_doc(*iid, doc, searchable, fields, cut))
                    .collect::<Vec<_>>()
            })
        });
        for tdoc in docs.into_iter().flatten() {
            self.writer.add_document(tdoc).map_err(tv)?;
        }
        pending.docs.clear();
        pending.ids.clear();
        pending.bytes = 0;
        Ok(())
    }
}

/// Documents drawn evenly from a payload as it is read (reservoir sampling, with a fixed
/// seed so a batch run again draws the same).
struct Sample {
    docs: Vec<Map<String, Value>>,
    seen: u64,
    state: u64,
}

impl Default for Sample {
    fn default() -> Sample {
        Sample {
            docs: Vec::new(),
            seen: 0,
            state: 0x9e37_79b9_7f4a_7c15,
        }
    }
}

impl Sample {
    fn offer(&mut self, doc: &Map<String, Value>) {
        self.seen += 1;
        if self.docs.len() < text::PAIR_WORDS_SAMPLE {
            self.docs.push(doc.clone());
            return;
        }
        // xorshift64*: a slot among the documents seen; kept when it is one of the sample's.
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        let slot = self.state.wrapping_mul(0x2545_f491_4f6c_dd1d) % self.seen;
        if let Some(kept) = self.docs.get_mut(slot as usize) {
            *kept = doc.clone();
        }
    }
}

/// Gives `fields` a dictionary trained on `samples` (encoded documents). Documents written
/// before it stay as they are; zstd finding nothing to train on leaves the index without one
/// (tried again with a later batch).
fn train_dictionary(fields: &mut FieldsMap, samples: Vec<Vec<u8>>) {
    if let Some(dictionary) = codec::Dictionary::train(&samples) {
        fields.set_dictionary(dictionary);
    }
}
