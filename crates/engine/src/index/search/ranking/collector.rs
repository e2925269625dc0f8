//! The one id-collecting pass over a tantivy query: per segment, the documents it matches
//! with their internal ids (the `iid` fast field), in document order, unscored, those a filter
//! leaves out dropped as they come. Ranking reads the positions of exactly these documents;
//! other searches keep only the ids.

use roaring::RoaringBitmap;
use tantivy::columnar::Column;
use tantivy::fastfield::AliveBitSet;
use tantivy::query::{EnableScoring, Query};
use tantivy::{DocId, DocSet, TERMINATED};

use crate::index::open::IID_FIELD;
use crate::index::Index;

/// The internal id of `doc` when it is live and `allowed`.
fn kept(
    alive: Option<&AliveBitSet>,
    iids: &Column<u64>,
    allowed: Option<&RoaringBitmap>,
    doc: DocId,
) -> Option<u32> {
    if alive.is_some_and(|a| !a.is_alive(doc)) {
        return None;
    }
    let iid = iids.first(doc)? as u32;
    allowed.is_none_or(|a| a.contains(iid)).then_some(iid)
}

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
                    if let Some(iid) = kept(alive, &iids, allowed, doc) {
                        list.push((doc, iid));
                    }
                }
            })?;
            out.push((ord as u32, list));
        }
        Ok(out)
    }

    /// The same as [`Index::level_docs`] when `query` matches at most `cap` of them; `None`
    /// as soon as it matches more (a quoted phrase of frequent words is then not read whole).
    pub(crate) fn level_docs_up_to(
        &self,
        searcher: &tantivy::Searcher,
        query: &dyn Query,
        allowed: Option<&RoaringBitmap>,
        cap: usize,
    ) -> tantivy::Result<Option<SegmentDocs>> {
        let weight = query.weight(EnableScoring::disabled_from_searcher(searcher))?;
        let mut out = Vec::with_capacity(searcher.segment_readers().len());
        let mut n = 0usize;
        for (ord, reader) in searcher.segment_readers().iter().enumerate() {
            let iids = self.segment_column(reader, IID_FIELD)?;
            let alive = reader.alive_bitset();
            let mut list: Vec<(DocId, u32)> = Vec::new();
            let mut scorer = weight.scorer(reader, 1.0)?;
            let mut doc = scorer.doc();
            while doc != TERMINATED {
                if let Some(iid) = kept(alive, &iids, allowed, doc) {
                    if n == cap {
                        return Ok(None);
                    }
                    n += 1;
                    list.push((doc, iid));
                }
                doc = scorer.advance();
            }
            out.push((ord as u32, list));
        }
        Ok(Some(out))
    }
}
