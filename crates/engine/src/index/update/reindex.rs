//! A settings update, and re-indexing: when what tantivy indexes changes (the set of
//! searchable attributes, or how text is cut into words), every document's text is fed to
//! tantivy again within the same batch.

use api_types::Result;
use heed::RwTxn;
use serde_json::Value;
use tantivy::{IndexWriter, Term};

use super::BatchState;
use crate::codec;
use crate::index::{searchable_of, Index};
use crate::store::heed_error;
use crate::tokens;

impl Index {
    /// The `UpdateSettings` op: `patch` is applied to the settings the batch has reached (a
    /// failed apply fails this task only), and the documents are re-indexed if what is
    /// indexed changed.
    pub(super) fn update_settings(
        &self,
        txn: &mut RwTxn,
        writer: &mut IndexWriter,
        state: &mut BatchState,
        patch: &Value,
    ) -> Result<()> {
        // What is indexed: which attributes (their order only ranks) and how text is
        // cut into words.
        let indexed = |s: Option<&Value>| {
            let mut attrs = searchable_of(s);
            if let Some(a) = attrs.as_mut() {
                a.sort();
            }
            (attrs, tokens::text_settings(s))
        };
        let current = match &state.settings {
            Some(s) => Some(s.clone()),
            None => self.stored_settings(txn)?,
        };
        let mut next = crate::Settings::from_stored(current.as_ref());
        next.apply(crate::SettingsPatch::from_json(patch)?)?;
        let settings = &next.to_json();
        let before = indexed(current.as_ref());
        let after = indexed(Some(settings));
        // Embedders: everything that can fail (checks, embedding the stored documents) runs
        // before anything is written.
        let old_embedders = crate::vectors::registry::configs(current.as_ref())?;
        let new_embedders = crate::vectors::registry::configs(Some(settings))?;
        let generated = if old_embedders != new_embedders {
            let to_embed = self.plan_embedders(state, &old_embedders, &new_embedders)?;
            Some(self.embed_stored(txn, state, Some(settings), &to_embed)?)
        } else {
            None
        };
        if let Some(generated) = generated {
            self.apply_embedders(txn, state, &old_embedders, &new_embedders, generated)?;
        }
        state.settings = Some(settings.clone());
        if before != after {
            self.reindex_text(txn, writer, state, settings)?;
        }
        Ok(())
    }

    /// Re-feeds every document to tantivy with the new searchable attributes (part of the
    /// settings task: searches see the old text until the batch commits).
    pub(super) fn reindex_text(
        &self,
        txn: &mut RwTxn,
        writer: &mut IndexWriter,
        state: &mut BatchState,
        settings: &Value,
    ) -> Result<()> {
        self.set_progress(|p| p.step = "reindexing searchable attributes");
        let searchable = searchable_of(Some(settings));
        let analyzer = tokens::Analyzer::from_settings(Some(settings));
        analyzer.with(|tokenizer| {
            for item in self.store.docs.iter(txn).map_err(heed_error)? {
                let (iid, bytes) = item.map_err(heed_error)?;
                let doc = codec::decode(bytes, &state.fields)?;
                writer.delete_term(Term::from_field_u64(self.fields.iid, iid as u64));
                let fields = &mut state.fields;
                self.feed_doc(writer, iid, &doc, searchable.as_deref(), fields, tokenizer)?;
                state.dirty.insert(iid);
            }
            Ok(())
        })
    }
}
