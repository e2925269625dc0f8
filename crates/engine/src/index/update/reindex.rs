//! A settings update, and re-indexing: when what tantivy indexes changes (the set of
//! searchable attributes, or how text is cut into words), every document's text is fed to
//! tantivy again within the same batch.

use std::sync::Arc;

use api_types::Result;
use serde_json::Value;

use super::batch::{feed_doc, iid_term, Batch};
use crate::codec;
use crate::index::text;
use crate::languages::Locales;
use crate::settings::{Settings, SettingsPatch};
use crate::store::heed_error;

impl Batch<'_, '_> {
    /// The `UpdateSettings` op: `patch` is applied to the settings the batch has reached (a
    /// failed apply fails this task only), and the documents are re-indexed if what is
    /// indexed changed.
    pub(super) fn update_settings(&mut self, patch: &Value) -> Result<()> {
        // What is indexed: which attributes (their order only ranks) and how text is
        // cut into words.
        let indexed = |s: &Settings| {
            let mut attrs = s.searchable().map(<[String]>::to_vec);
            if let Some(a) = attrs.as_mut() {
                a.sort();
            }
            (attrs, s.text_settings())
        };
        let current = self.settings()?;
        let mut next = current.as_ref().clone();
        next.apply(SettingsPatch::from_json(patch)?)?;
        let settings = Arc::new(next);
        let before = indexed(&current);
        let after = indexed(&settings);
        // Embedders: everything that can fail (checks, embedding the stored documents) runs
        // before anything is written.
        let old_embedders = crate::vectors::registry::configs(&current)?;
        let new_embedders = crate::vectors::registry::configs(&settings)?;
        let generated = if old_embedders != new_embedders {
            let to_embed = self.plan_embedders(&old_embedders, &new_embedders)?;
            let adopted = self.stored_vectors_for(&old_embedders, &new_embedders)?;
            Some((self.embed_stored(&settings, &to_embed)?, adopted))
        } else {
            None
        };
        if let Some((generated, adopted)) = generated {
            self.apply_embedders(&old_embedders, &new_embedders, generated)?;
            self.adopt_stored_vectors(&new_embedders, adopted)?;
        }
        self.state.settings = Some(settings.clone());
        if before != after {
            self.reindex_text(&settings)?;
        }
        Ok(())
    }

    /// Re-feeds every stored document to tantivy with the new searchable attributes (part of
    /// the settings task: searches see the old text until the batch commits), choosing the
    /// index's pair words first when they are due.
    pub(super) fn reindex_text(&mut self, settings: &Settings) -> Result<()> {
        self.set_progress(|p| p.step = "reindexing searchable attributes");
        let searchable = settings.searchable();
        let analyzer = settings.analyzer();
        let locales = Locales::from_settings(settings);
        if self.pair_words_due(0)? {
            self.choose_pair_words(settings, Vec::new())?;
        }
        let pairs = self.state.pairs.clone().unwrap_or_default();
        let (index, txn, writer, state) =
            (self.index, &self.txn, &mut *self.writer, &mut self.state);
        analyzer.with(|tokenizer| {
            let cut = text::Cutter {
                tokenizer,
                locales: &locales,
                pairs: &pairs,
            };
            for item in index.store.docs.iter(txn).map_err(heed_error)? {
                let (iid, bytes) = item.map_err(heed_error)?;
                let doc = codec::decode(bytes, &state.fields)?;
                writer.delete_term(iid_term(&index.fields, iid));
                let fields = &mut state.fields;
                feed_doc(
                    (&mut *writer, &index.fields),
                    iid,
                    &doc,
                    searchable,
                    fields,
                    cut,
                )?;
                state.dirty.insert(iid);
            }
            Ok(())
        })
    }
}
