//! Editing documents by function (see [`crate::edit`]): the documents matching the filter (all
//! of them without one), as this batch sees them, go through the function one at a time.
//!
//! Nothing is written until every matched document has been edited, so a function that fails
//! on any document (a runtime error, a bound reached, a changed primary key) fails its task
//! with nothing of it applied. The edited documents are staged as NDJSON next to the index and
//! go through the ordinary addition path ([`Batch::add_documents`], replacing), so the same
//! checks, field bookkeeping, vectors and tokenization apply as to a document sent over HTTP;
//! the deleted ones go through the ordinary deletion by id.

use std::fs::File;
use std::io::{BufWriter, Write};

use api_types::{Code, Error, Result};
use serde_json::Value;

use super::batch::Batch;
use super::Method;
use crate::codec;
use crate::docid;
use crate::edit::{DocumentEditor, Edition};
use crate::filter::Filter;
use crate::payload::io_error;
use crate::store::heed_error;

/// What an edition did, as the task details count it.
pub(super) struct Edited {
    /// Documents the function ran on.
    pub matched: u64,
}

/// Removes the staged editions however the op ends.
struct Staged(std::path::PathBuf);

impl Drop for Staged {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

impl Batch<'_, '_> {
    /// Runs `function` with `context` on the documents matching `filter` (all without one).
    pub(super) fn edit_documents(
        &mut self,
        function: &str,
        filter: Option<&Value>,
        context: Option<&Value>,
    ) -> Result<Edited> {
        let invalid = |m: String| Error::new(Code::InvalidDocumentFilter, m);
        let mut filter = match filter {
            Some(f) => Filter::from_json(f).map_err(invalid)?,
            None => None,
        };
        if let Some(filter) = &mut filter {
            let settings = self.settings()?;
            filter.validate(&settings).map_err(invalid)?;
            filter.bind_geo(&settings);
        }
        let editor = DocumentEditor::new(function, context)?;
        let Some(pk) = self.state.primary_key.clone() else {
            return Ok(Edited { matched: 0 });
        };
        self.set_progress(|p| {
            p.step = "editing documents";
            p.total = 0;
        });

        // One name: one batch at a time writes to an index, and a file left by a crash is
        // overwritten by the next edition.
        let staged = Staged(self.index.dir().join("edition.ndjson"));
        let mut out = BufWriter::new(File::create(&staged.0).map_err(io_error)?);
        let mut deleted: Vec<String> = Vec::new();
        let mut matched = 0u64;
        let mut replaced = 0u64;
        for item in self.index.store.docs.iter(&self.txn).map_err(heed_error)? {
            let (_, bytes) = item.map_err(heed_error)?;
            let doc = codec::decode(bytes, &self.state.fields)?;
            if filter.as_ref().is_some_and(|f| !f.matches(&doc)) {
                continue;
            }
            let id = docid::document_id(&doc, &pk)?;
            matched += 1;
            match editor.edit(&doc)? {
                Edition::Deleted => deleted.push(id),
                Edition::Replaced(edited) if edited == doc => {}
                Edition::Replaced(edited) => {
                    // The id compares as the string it stands for: `3` may become `"3"`.
                    if docid::document_id(&edited, &pk).ok().as_deref() != Some(id.as_str()) {
                        return Err(Error::new(
                            Code::EditDocumentsByFunctionError,
                            "Document editions cannot modify a document's primary key",
                        ));
                    }
                    serde_json::to_writer(&mut out, &edited).map_err(Error::internal)?;
                    out.write_all(b"\n").map_err(io_error)?;
                    replaced += 1;
                }
            }
            if matched.is_multiple_of(1024) {
                self.set_progress(|p| p.done = matched);
            }
        }
        out.flush().map_err(io_error)?;
        drop(out);
        if replaced > 0 {
            let addition = super::Addition {
                file: &staged.0,
                method: Method::Replace,
                primary_key: None,
                skip_creation: true,
                shards: None,
            };
            self.add_documents(addition)?;
        }
        self.delete_documents(&deleted)?;
        Ok(Edited { matched })
    }
}
