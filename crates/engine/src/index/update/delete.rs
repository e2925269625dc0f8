//! Deleting documents: by external id, by filter (evaluated on the batch's own view of the
//! documents, against the settings the batch has reached), or all of them. Each deleted
//! internal id joins the batch's dirty set; its tantivy document is deleted by term.

use api_types::{Code, Error, Result};
use heed::RwTxn;
use serde_json::Value;
use tantivy::{IndexWriter, Term};

use super::{decrement, BatchState};
use crate::codec;
use crate::docid;
use crate::filter::Filter;
use crate::index::{tv, Index};
use crate::store::heed_error;

impl Index {
    /// Deletes the documents with the external ids `ids`; how many there were.
    pub(super) fn delete_documents(
        &self,
        txn: &mut RwTxn,
        writer: &mut IndexWriter,
        state: &mut BatchState,
        ids: &[String],
    ) -> Result<u64> {
        let mut deleted = 0u64;
        for id in ids {
            if self.delete_one(txn, writer, state, id)? {
                deleted += 1;
            }
        }
        Ok(deleted)
    }

    /// Deletes the documents (as this batch sees them) matching `filter`, validated against
    /// the settings this batch has reached.
    pub(super) fn delete_by_filter(
        &self,
        txn: &mut RwTxn,
        writer: &mut IndexWriter,
        state: &mut BatchState,
        filter: &Value,
    ) -> Result<u64> {
        let invalid = |m: String| Error::new(Code::InvalidDocumentFilter, m);
        let Some(mut filter) = Filter::from_json(filter).map_err(invalid)? else {
            return Ok(0);
        };
        let settings = self.batch_settings(txn, state)?;
        filter.validate(&settings).map_err(invalid)?;
        filter.bind_geo(&settings);
        let Some(pk) = state.primary_key.clone() else {
            return Ok(0);
        };
        let mut matched = Vec::new();
        for item in self.store.docs.iter(txn).map_err(heed_error)? {
            let (_, bytes) = item.map_err(heed_error)?;
            let doc = codec::decode(bytes, &state.fields)?;
            if filter.matches(&doc) {
                matched.push(docid::document_id(&doc, &pk)?);
            }
        }
        let mut deleted = 0;
        for ext in matched {
            if self.delete_one(txn, writer, state, &ext)? {
                deleted += 1;
            }
        }
        Ok(deleted)
    }

    /// Deletes the document with external id `ext`; whether there was one.
    fn delete_one(
        &self,
        txn: &mut RwTxn,
        writer: &mut IndexWriter,
        state: &mut BatchState,
        ext: &str,
    ) -> Result<bool> {
        let Some(iid) = self.store.internal_id(txn, ext)? else {
            return Ok(false);
        };
        if let Some(old) = self.store.docs.get(txn, &iid).map_err(heed_error)? {
            let old = codec::decode(old, &state.fields)?;
            for k in old.keys() {
                decrement(&mut state.field_distribution, k);
            }
        }
        self.store.docs.delete(txn, &iid).map_err(heed_error)?;
        self.store.ids.delete(txn, ext).map_err(heed_error)?;
        self.delete_vectors(txn, state, iid)?;
        state.dirty.insert(iid);
        writer.delete_term(Term::from_field_u64(self.fields.iid, iid as u64));
        Ok(true)
    }

    /// Deletes every document; how many there were. Every id becomes dirty, and tantivy is
    /// emptied at once (the commit then feeds it the documents added after the clear).
    pub(super) fn clear_documents(
        &self,
        txn: &mut RwTxn,
        writer: &mut IndexWriter,
        state: &mut BatchState,
    ) -> Result<u64> {
        let count = self.store.docs.len(txn).map_err(heed_error)?;
        for item in self.store.docs.iter(txn).map_err(heed_error)? {
            let (iid, _) = item.map_err(heed_error)?;
            state.dirty.insert(iid);
        }
        self.store.docs.clear(txn).map_err(heed_error)?;
        self.store.ids.clear(txn).map_err(heed_error)?;
        self.clear_vectors(txn, state)?;
        state.field_distribution.clear();
        writer.delete_all_documents().map_err(tv)?;
        Ok(count)
    }
}
