//! Embeddings the stored documents carried before their embedder existed. A document's
//! `_vectors.<name>` for a name no embedder has is kept in the document; when a settings update
//! adds an embedder of that name (or gives an existing name another source), the documents'
//! embeddings become that embedder's, marked as the user's unless `regenerate: true`, and
//! leave the documents, as Meilisearch does. A new `userProvided` embedder refuses the update
//! when a stored document gives it nothing (`null` opts out), with the same error an addition
//! gets.

use std::collections::HashMap;

use api_types::Result;
use embedders::EmbedderConfig;
use serde_json::Value;

use super::batch::Batch;
use super::vectors::missing_vectors;
use crate::codec;
use crate::store::heed_error;
use crate::vectors::parse::{self, Supplied};

/// What the stored documents give the embedders a settings update adopts: per embedder name,
/// each document's embeddings (by internal id), and the documents whose `_vectors` must lose
/// those names.
#[derive(Default)]
pub(super) struct Adopted {
    given: HashMap<String, Vec<(u32, Supplied)>>,
    carriers: Vec<u32>,
}

impl Batch<'_, '_> {
    /// Reads what the stored documents give the embedders of `after` that `before` did not
    /// have with the same source, and checks it (shapes, dimensions, a `userProvided` embedder
    /// given nothing); writes nothing.
    pub(super) fn stored_vectors_for(
        &self,
        before: &[(String, EmbedderConfig)],
        after: &[(String, EmbedderConfig)],
    ) -> Result<Adopted> {
        let adopting: Vec<&(String, EmbedderConfig)> = after
            .iter()
            .filter(|(name, config)| {
                !before
                    .iter()
                    .any(|(n, old)| n == name && old.source == config.source)
            })
            .collect();
        let mut adopted = Adopted::default();
        if adopting.is_empty() {
            return Ok(adopted);
        }
        let (store, txn, state) = (&self.index.store, &self.txn, &self.state);
        let pk = state.primary_key.as_deref().unwrap_or("id");
        // Per userProvided embedder: the first document giving nothing, and how many more.
        let mut missing: HashMap<&str, (String, u64)> = HashMap::new();
        for item in store.docs.iter(txn).map_err(heed_error)? {
            let (iid, bytes) = item.map_err(heed_error)?;
            let doc = codec::decode(bytes, &state.fields)?;
            let doc_id = match doc.get(pk) {
                Some(Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => iid.to_string(),
            };
            let mut carries = false;
            for (name, config) in &adopting {
                match parse::supplied(&doc, name, &doc_id)? {
                    Some(supplied) => {
                        if let (Some(e), Some(d)) = (&supplied.embeddings, config.dimensions) {
                            parse::check_dimensions(e, d, name, &doc_id)?;
                        }
                        carries = true;
                        adopted
                            .given
                            .entry(name.clone())
                            .or_default()
                            .push((iid, supplied));
                    }
                    None if !config.generates() => {
                        missing
                            .entry(name.as_str())
                            .and_modify(|(_, others)| *others += 1)
                            .or_insert((doc_id.clone(), 0));
                    }
                    None => {}
                }
            }
            if carries {
                adopted.carriers.push(iid);
            }
        }
        // The first embedder in the settings' order that some document gives nothing.
        if let Some((name, (first, others))) = adopting
            .iter()
            .find_map(|(n, _)| missing.get_key_value(n.as_str()))
        {
            return Err(missing_vectors(name, first, *others));
        }
        Ok(adopted)
    }

    /// Writes what [`Batch::stored_vectors_for`] read, once the registry follows the new
    /// embedders, and takes those embeddings out of the documents.
    pub(super) fn adopt_stored_vectors(
        &mut self,
        after: &[(String, EmbedderConfig)],
        adopted: Adopted,
    ) -> Result<()> {
        for (name, given) in adopted.given {
            let Some((_, config)) = after.iter().find(|(n, _)| *n == name) else {
                continue;
            };
            for (iid, supplied) in given {
                let Some(embeddings) = supplied.embeddings else {
                    continue;
                };
                let (store, txn, state) = (&self.index.store, &mut self.txn, &mut self.state);
                let dims = config
                    .dimensions
                    .or_else(|| state.vectors.registry.get(&name).map(|e| e.dimensions))
                    .or_else(|| embeddings.first().map(Vec::len));
                let Some(dims) = dims else {
                    // An opt-out before any embedding fixed the dimensions: nothing to write.
                    continue;
                };
                if supplied.regenerate && config.generates() {
                    // The source's own: generated from the document like any other.
                    continue;
                }
                let id = state.vectors.put(
                    (store, txn),
                    (&name, dims, config.binary_quantized),
                    iid,
                    &embeddings,
                )?;
                state.vectors.user(store, txn, id)?.insert(iid);
            }
        }
        let (mut encoded, mut packed) = (Vec::new(), Vec::new());
        for iid in adopted.carriers {
            let store = &self.index.store;
            let Some(bytes) = store.docs.get(&self.txn, &iid).map_err(heed_error)? else {
                continue;
            };
            let mut doc = codec::decode(bytes, &self.state.fields)?;
            crate::vectors::parse::strip_configured(&mut doc, &|n| {
                after.iter().any(|(name, _)| name == n)
            });
            let stored = codec::encode(&doc, &mut self.state.fields, &mut encoded, &mut packed)?;
            store
                .docs
                .put(&mut self.txn, &iid, stored)
                .map_err(heed_error)?;
        }
        Ok(())
    }
}
