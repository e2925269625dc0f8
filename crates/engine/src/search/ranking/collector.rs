//! The one id-collecting pass over a tantivy query: per segment, the documents it matches
//! with their internal ids (the `iid` fast field), in document order, unscored, those a filter
//! leaves out dropped as they come. Ranking reads the positions of exactly these documents;
//! other searches keep only the ids.

use roaring::RoaringBitmap;
use tantivy::fastfield::AliveBitSet;
use tantivy::query::{EnableScoring, Query, Scorer};
use tantivy::{DocId, SegmentReader, TERMINATED};

use crate::facets::DenseSet;
use crate::index::segments::NO_IID;
use crate::search::SearchContext;

/// The documents a filter lets through, as the passes over postings test them: a test of a
/// sparse bitmap searches its containers, so a sparse set is also held as one bit per
/// internal id (a test is then one load, and every document of a broad word is tested).
pub(crate) struct Allowed<'a> {
    set: &'a RoaringBitmap,
    bits: Option<DenseSet>,
}

impl<'a> Allowed<'a> {
    pub fn new(set: &'a RoaringBitmap) -> Allowed<'a> {
        // Below one id in 16 of its range, a bitmap's containers are mostly sorted arrays,
        // searched on every test; the bits take an eighth of a byte per id of the range (128
        // KiB for a million).
        let bound = set.max().map_or(0, |m| m as u64 + 1);
        let bits = (set.len().saturating_mul(16) < bound)
            .then(|| DenseSet::from_bitmap(set, bound as usize));
        Allowed { set, bits }
    }

    #[inline]
    pub fn contains(&self, iid: u32) -> bool {
        match &self.bits {
            Some(bits) => bits.contains(iid),
            None => self.set.contains(iid),
        }
    }
}

/// The internal id of `doc` when it is live and `allowed`.
pub(crate) fn kept(
    alive: Option<&AliveBitSet>,
    iids: &[u32],
    allowed: Option<&Allowed>,
    doc: DocId,
) -> Option<u32> {
    if alive.is_some_and(|a| !a.is_alive(doc)) {
        return None;
    }
    let iid = *iids.get(doc as usize)?;
    (iid != NO_IID && allowed.is_none_or(|a| a.contains(iid))).then_some(iid)
}

/// A pass over a query's documents seeks to those of a filter instead when the query's
/// scorer would go through more than this many documents per filtered one. A seek into a
/// union within its window steps through it anyway, and the filter's documents are found and
/// sorted first: at 8, the ranking of PyPI's filter-and-word mix was no faster (p50 0.33
/// against 0.31 ms); at 64 it is unchanged, while a filter passing a handful of documents
/// under a frequent word takes 0.6 ms of ranking instead of 1.5.
const SEEK_RATIO: u64 = 64;

/// Per segment (its ordinal), the matching documents and their internal ids, in document order.
pub(crate) type SegmentDocs = Vec<(u32, Vec<(DocId, u32)>)>;

impl SearchContext<'_> {
    /// The live documents `query` matches, only those of `allowed` when it is given: a narrow
    /// filter then keeps ranking from holding every match of a broad word.
    pub(crate) fn level_docs(
        &self,
        searcher: &tantivy::Searcher,
        query: &dyn Query,
        allowed: Option<&Allowed>,
    ) -> tantivy::Result<SegmentDocs> {
        let weight = query.weight(EnableScoring::disabled_from_searcher(searcher))?;
        let mut out = Vec::with_capacity(searcher.segment_readers().len());
        for (ord, reader) in searcher.segment_readers().iter().enumerate() {
            let iids = self.segment_iids(reader)?;
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

    /// The same as [`SearchContext::level_docs`] when `query` matches at most `cap` of them; `None`
    /// as soon as it matches more (a quoted phrase of frequent words is then not read whole).
    pub(crate) fn level_docs_up_to(
        &self,
        searcher: &tantivy::Searcher,
        query: &dyn Query,
        allowed: Option<&Allowed>,
        cap: usize,
    ) -> tantivy::Result<Option<SegmentDocs>> {
        let weight = query.weight(EnableScoring::disabled_from_searcher(searcher))?;
        let mut out = Vec::with_capacity(searcher.segment_readers().len());
        let mut n = 0usize;
        for (ord, reader) in searcher.segment_readers().iter().enumerate() {
            let mut list: Vec<(DocId, u32)> = Vec::new();
            let mut scorer = weight.scorer(reader, 1.0)?;
            let whole = self.each_kept(reader, scorer.as_mut(), allowed, |doc, iid| {
                if n == cap {
                    return false;
                }
                n += 1;
                list.push((doc, iid));
                true
            })?;
            if !whole {
                return Ok(None);
            }
            out.push((ord as u32, list));
        }
        Ok(Some(out))
    }

    /// Hands each live document `scorer` matches in `reader` that `allowed` lets through, with
    /// its internal id, to `each`, in document order, until `each` answers false; whether it
    /// never did. Under a filter letting through far fewer of the segment's documents than
    /// the scorer holds ([`SEEK_RATIO`]), the scorer is sought to each of them rather than
    /// read through (PyPI, `package` under `rank >= 5000`: 620 documents kept of the
    /// hundreds of thousands the word's alternatives hold).
    pub(crate) fn each_kept(
        &self,
        reader: &SegmentReader,
        scorer: &mut dyn Scorer,
        allowed: Option<&Allowed>,
        mut each: impl FnMut(DocId, u32) -> bool,
    ) -> tantivy::Result<bool> {
        let iids = self.segment_iids(reader)?;
        let alive = reader.alive_bitset();
        let narrow = allowed
            .filter(|a| a.set.len().saturating_mul(SEEK_RATIO) < u64::from(scorer.size_hint()));
        if let Some(allowed) = narrow {
            let by_iid = self.segment_docs(reader)?;
            let mut docs: Vec<DocId> = allowed.set.iter().filter_map(|i| by_iid.doc(i)).collect();
            docs.sort_unstable();
            for doc in docs {
                let at = match scorer.doc() {
                    d if d < doc => scorer.seek(doc),
                    d => d,
                };
                if at == TERMINATED {
                    break;
                }
                if at == doc {
                    if let Some(iid) = kept(alive, &iids, None, doc) {
                        if !each(doc, iid) {
                            return Ok(false);
                        }
                    }
                }
            }
            return Ok(true);
        }
        let mut doc = scorer.doc();
        while doc != TERMINATED {
            if let Some(iid) = kept(alive, &iids, allowed, doc) {
                if !each(doc, iid) {
                    return Ok(false);
                }
            }
            doc = scorer.advance();
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_tests_like_its_bitmap_sparse_or_dense() {
        let sparse: RoaringBitmap = (0..3000u32).map(|i| i * 97).collect();
        let dense: RoaringBitmap = (0..300_000u32).filter(|i| i % 3 != 0).collect();
        for set in [sparse, dense, RoaringBitmap::new()] {
            let allowed = Allowed::new(&set);
            let bound = set.max().unwrap_or(0) + 200;
            assert!((0..bound).all(|i| allowed.contains(i) == set.contains(i)));
            assert!(!allowed.contains(u32::MAX));
        }
        // A sparse set is tested through its bits, a dense one through the bitmap.
        assert!(Allowed::new(&(0..10u32).map(|i| i * 1000).collect())
            .bits
            .is_some());
        assert!(Allowed::new(&(0..1000u32).collect()).bits.is_none());
    }
}
