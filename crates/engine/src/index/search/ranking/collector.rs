//! The one id-collecting pass over a tantivy query: per segment, the documents it matches
//! with their internal ids (the `iid` fast field), in document order, unscored, those a filter
//! leaves out dropped as they come. Ranking reads the positions of exactly these documents;
//! other searches keep only the ids.

use roaring::RoaringBitmap;
use tantivy::query::{EnableScoring, Query};
use tantivy::DocId;

use crate::index::open::IID_FIELD;
use crate::index::Index;

/// Per segment (its ordinal), the matching documents and their internal ids, in document order.
pub(crate) type SegmentDocs = Vec<(u32, Vec<(DocId, u32)>)>;

impl Index {
    /// The live documents `query` matches, only those of `allowed` when it is given: a narrow
    /// filter then keeps ranking from holding every match of a broad word.
    pub(crate) fn level_docs(
        &self,
        searcher: &tantivy::Searcher,
        query: &dyn Query,
        allowed: Option<&RoaringBitmap>,
    ) -> tantivy::Result<SegmentDocs> {
        let weight = query.weight(EnableScoring::disabled_from_searcher(searcher))?;
        let mut out = Vec::with_capacity(searcher.segment_readers().len());
        for (ord, reader) in searcher.segment_readers().iter().enumerate() {
            let iids = self.segment_column(reader, IID_FIELD)?;
            let alive = reader.alive_bitset();
            let mut list: Vec<(DocId, u32)> = Vec::new();
            weight.for_each_no_score(reader, &mut |docs| {
                for &doc in docs {
                    if alive.is_some_and(|a| !a.is_alive(doc)) {
                        continue;
                    }
                    let Some(v) = iids.first(doc) else { continue };
                    let iid = v as u32;
                    if allowed.is_none_or(|a| a.contains(iid)) {
                        list.push((doc, iid));
                    }
                }
            })?;
            out.push((ord as u32, list));
        }
        Ok(out)
    }
}
