//! Deleting documents: by external id, by filter (evaluated on the batch's own view of the
//! documents, against the settings the batch has reached), or all of them. Each deleted
//! internal id joins the batch's dirty set; its tantivy document is deleted by term.

use api_types::{Code, Error, Result};
use serde_json::Value;

use super::batch::{decrement, iid_term, Batch};
use crate::codec;
use crate::docid;
use crate::filter::Filter;
use crate::index::tv;
use crate::store::heed_error;

impl Batch<'_, '_> {
    /// Deletes the documents with the external ids `ids`; how many there were.
    pub(super) fn delete_documents(&mut self, ids: &[String]) -> Result<u64> {
        let mut deleted = 0u64;
        for id in ids {
            if self.delete_one(id)? {
                deleted += 1;
            }
        }
        Ok(deleted)
    }

    /// Deletes the documents (as this batch sees them) matching `filter`, validated against
    /// the settings this batch has reached.
    pub(super) fn delete_by_filter(&mut self, filter: &Value) -> Result<u64> {
        let invalid = |m: String| Error::new(Code::InvalidDocumentFilter, m);
        let Some(mut filter) = Filter::from_json(filter).map_err(invalid)? else {
            return Ok(0);
        };
        let settings = self.settings()?;
        filter.validate(&settings).map_err(invalid)?;
        filter.bind_geo(&settings);
        let Some(pk) = self.state.primary_key.clone() else {
            return Ok(0);
        };
        let mut matched = Vec::new();
        for item in self.index.store.docs.iter(&self.txn).map_err(heed_error)? {
            let (_, bytes) = item.map_err(heed_error)?;
            let doc = codec::decode(bytes, &self.state.fields)?;
            if filter.matches(&doc) {
                matched.push(docid::document_id(&doc, &pk)?);
            }
        }
        let mut deleted = 0;
        for ext in matched {
            if self.delete_one(&ext)? {
                deleted += 1;
            }
        }
        Ok(deleted)
    }

    /// Deletes the document with external id `ext`; whether there was one.
    fn delete_one(&mut self, ext: &str) -> Result<bool> {
        let store = &self.index.store;
        let Some(iid) = store.internal_id(&self.txn, ext)? else {
            return Ok(false);
        };
        if let Some(old) = store.docs.get(&self.txn, &iid).map_err(heed_error)? {
            let old = codec::decode(old, &self.state.fields)?;
            for k in old.keys() {
                decrement(&mut self.state.field_distribution, k);
            }
        }
        store.docs.delete(&mut self.txn, &iid).map_err(heed_error)?;
        store.ids.delete(&mut self.txn, ext).map_err(heed_error)?;
        self.delete_vectors(iid)?;
        self.state.dirty.insert(iid);
        self.writer.delete_term(iid_term(&self.index.fields, iid));
        Ok(true)
    }

    /// Deletes every document; how many there were. Every id becomes dirty, and tantivy is
    /// emptied at once (the commit then feeds it the documents added after the clear).
    pub(super) fn clear_documents(&mut self) -> Result<u64> {
        let store = &self.index.store;
        let count = store.docs.len(&self.txn).map_err(heed_error)?;
        for item in store.docs.iter(&self.txn).map_err(heed_error)? {
            let (iid, _) = item.map_err(heed_error)?;
            self.state.dirty.insert(iid);
        }
        store.docs.clear(&mut self.txn).map_err(heed_error)?;
        store.ids.clear(&mut self.txn).map_err(heed_error)?;
        self.clear_vectors()?;
        self.state.field_distribution.clear();
        self.writer.delete_all_documents().map_err(tv)?;
        Ok(count)
    }
}
