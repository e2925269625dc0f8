//! What is decoded from one tantivy segment's fast-field columns and kept for as long as the
//! segment lives: its internal ids and the document of each ([`DocsByIid`]), its lengths
//! column opened, its documents by field length ([`SegmentLengths`]), and its dictionary of
//! words opened as an FST ([`Words`]).
//!
//! A segment's columns never change once written (a deletion only marks a document dead), so
//! an entry is right across commits until the segment is merged away. Decoding is not cheap
//! (the documents by field length of PyPI's 886k-document segment take about 38 ms, its
//! internal ids a few), so it is done when a commit or a merge is published, before the new
//! searcher is ([`super::Index::publish_segments`]), on the writer's thread: a search finds a
//! new segment's columns ready instead of paying for them. A search still decodes what it
//! does not find (a failed decoding at publication, an index opened by an older process),
//! once.
//!
//! Entries are dropped two publications after their segment left the searcher: a search that
//! began before a merge's publication still reads the merged-away segments.
//!
//! tantivy's own `Warmer` is not used: it starts a thread per index reader that never ends.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use roaring::RoaringBitmap;
use tantivy::columnar::{Column, ColumnIndex};
use tantivy::directory::{CompositeFile, OwnedBytes};
use tantivy::index::{Segment, SegmentComponent, SegmentId};
use tantivy::{DocId, HasLen, SegmentReader};

use super::{open, text};

/// In [`Segments::iids`], a document without an internal id.
pub(crate) const NO_IID: u32 = u32::MAX;

/// The decoded columns of the live segments (see the module doc).
#[derive(Default)]
pub(crate) struct Segments {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The lengths column ([`text::LENGTHS_FIELD`]) opened: opening decodes its block index,
    /// about a millisecond a search on PyPI before it was kept.
    lens: HashMap<SegmentId, Column<u64>>,
    /// The internal id of each document ([`NO_IID`] for none): a pass over postings reads one
    /// for every document it meets.
    iids: HashMap<SegmentId, Arc<[u32]>>,
    docs: HashMap<SegmentId, Arc<DocsByIid>>,
    lengths: HashMap<SegmentId, Arc<SegmentLengths>>,
    words: HashMap<SegmentId, Arc<Words>>,
    /// The segments of the last publication.
    published: HashSet<SegmentId>,
}

impl State {
    /// Keeps the entries of `live` and of the publication before.
    fn keep(&mut self, live: HashSet<SegmentId>) {
        let keep = |id: &SegmentId| live.contains(id) || self.published.contains(id);
        self.lens.retain(|id, _| keep(id));
        self.iids.retain(|id, _| keep(id));
        self.docs.retain(|id, _| keep(id));
        self.lengths.retain(|id, _| keep(id));
        self.words.retain(|id, _| keep(id));
        self.published = live;
    }
}

impl Segments {
    /// `reader`'s entry of the map `pick` chooses, computed by `compute` when missing (outside
    /// the lock: two searches may both compute it, and the later one's is kept).
    fn cached<V: Clone>(
        &self,
        reader: &SegmentReader,
        pick: fn(&mut State) -> &mut HashMap<SegmentId, V>,
        compute: impl FnOnce() -> tantivy::Result<V>,
    ) -> tantivy::Result<V> {
        if let Some(v) = pick(&mut self.state.lock().unwrap()).get(&reader.segment_id()) {
            return Ok(v.clone());
        }
        let v = compute()?;
        pick(&mut self.state.lock().unwrap()).insert(reader.segment_id(), v.clone());
        Ok(v)
    }

    /// The lengths column of `reader` ([`text::LENGTHS_FIELD`]), opened once.
    pub(super) fn lens(&self, reader: &SegmentReader) -> tantivy::Result<Column<u64>> {
        self.cached(
            reader,
            |s| &mut s.lens,
            || reader.fast_fields().u64(text::LENGTHS_FIELD),
        )
    }

    /// The internal id of each document of `reader`, decoded once.
    pub(super) fn iids(&self, reader: &SegmentReader) -> tantivy::Result<Arc<[u32]>> {
        self.cached(
            reader,
            |s| &mut s.iids,
            || {
                // Opened here only to be decoded: the ids are what is kept.
                let column = reader.fast_fields().u64(open::IID_FIELD)?;
                let docs = reader.max_doc();
                Ok(match column.index {
                    ColumnIndex::Full => {
                        let mut all = vec![0u64; docs as usize];
                        column.values.get_range(0, &mut all);
                        all.into_iter().map(|v| v as u32).collect()
                    }
                    _ => (0..docs)
                        .map(|doc| column.first(doc).map_or(NO_IID, |v| v as u32))
                        .collect(),
                })
            },
        )
    }

    /// The document of each internal id in `reader`, from its internal ids, once.
    pub(super) fn docs(&self, reader: &SegmentReader) -> tantivy::Result<Arc<DocsByIid>> {
        let iids = self.iids(reader)?;
        self.cached(
            reader,
            |s| &mut s.docs,
            || Ok(Arc::new(DocsByIid::of(&iids))),
        )
    }

    /// The documents of `reader` by field length, decoded once.
    pub(super) fn lengths(&self, reader: &SegmentReader) -> tantivy::Result<Arc<SegmentLengths>> {
        let column = self.lens(reader)?;
        self.cached(
            reader,
            |s| &mut s.lengths,
            || Ok(Arc::new(SegmentLengths::decode(&column, reader.max_doc()))),
        )
    }

    /// The dictionary of words of `reader` (a segment of `index`), opened once.
    pub(crate) fn words(
        &self,
        index: &tantivy::Index,
        reader: &SegmentReader,
    ) -> tantivy::Result<Arc<Words>> {
        self.cached(
            reader,
            |s| &mut s.words,
            || {
                let meta = index.new_segment_meta(reader.segment_id(), reader.max_doc());
                open_words(&index.segment(meta)).map(Arc::new)
            },
        )
    }

    /// Whether `segment`'s columns are decoded.
    pub(super) fn holds(&self, segment: SegmentId) -> bool {
        let state = self.state.lock().unwrap();
        state.iids.contains_key(&segment)
            && state.docs.contains_key(&segment)
            && state.lengths.contains_key(&segment)
            && state.words.contains_key(&segment)
    }

    /// Decodes what a search reads of `reader`, the reader of `segment`. A failure is left
    /// for the search to meet (and report) when it decodes the segment itself.
    pub(super) fn warm(&self, segment: &Segment, reader: &SegmentReader) {
        let _ = self.docs(reader);
        let _ = self.lengths(reader);
        let _ = self.cached(
            reader,
            |s| &mut s.words,
            || open_words(segment).map(Arc::new),
        );
    }

    /// Records that the segments `live` are published: the entries of segments in neither this
    /// publication nor the one before are dropped.
    pub(super) fn published(&self, live: impl IntoIterator<Item = SegmentId>) {
        self.state.lock().unwrap().keep(live.into_iter().collect());
    }

    /// The segments with an entry of any kind, for tests.
    #[cfg(test)]
    pub(super) fn held(&self) -> HashSet<SegmentId> {
        let state = self.state.lock().unwrap();
        let mut held: HashSet<SegmentId> = state.lens.keys().copied().collect();
        held.extend(state.iids.keys());
        held.extend(state.docs.keys());
        held.extend(state.lengths.keys());
        held.extend(state.words.keys());
        held
    }
}

/// One segment's document of each internal id it holds, from its lowest one on (an index
/// over PyPI's merged segment: 3.5 MB): a narrow filter's ids become the segment's documents
/// without a search, and a pass over a broad word's postings seeks to them instead of going
/// through every document of the word (see `Index::each_kept`).
pub(crate) struct DocsByIid {
    first: u32,
    docs: Box<[DocId]>,
}

/// In [`DocsByIid`], an internal id without a document in the segment.
const NO_DOC: DocId = DocId::MAX;

impl DocsByIid {
    fn of(iids: &[u32]) -> DocsByIid {
        let held = || iids.iter().copied().filter(|&i| i != NO_IID);
        let (Some(first), Some(last)) = (held().min(), held().max()) else {
            return DocsByIid {
                first: 0,
                docs: Box::new([]),
            };
        };
        let mut docs = vec![NO_DOC; (last - first) as usize + 1];
        // An id held twice (replaced in the segment that held it): the later document, as a
        // deletion removes every document of an id and a replacement adds one after them.
        for (doc, &iid) in iids.iter().enumerate() {
            if iid != NO_IID {
                docs[(iid - first) as usize] = doc as DocId;
            }
        }
        DocsByIid {
            first,
            docs: docs.into(),
        }
    }

    /// The document holding `iid` in the segment, if one does (live or not).
    pub(crate) fn doc(&self, iid: u32) -> Option<DocId> {
        let at = iid.checked_sub(self.first)? as usize;
        self.docs.get(at).copied().filter(|&d| d != NO_DOC)
    }
}

/// One segment's dictionary of indexed words (the `words` field's terms) as the FST tantivy
/// stores it, for the typo walks to go down themselves (`query::typos`): tantivy's automaton
/// stream decodes every child node before it asks the automaton whether the child can
/// match, and in a Levenshtein walk of PyPI's dictionary most children cannot.
pub(crate) type Words = tantivy_fst::raw::Fst<OwnedBytes>;

/// Opens the FST of `segment`'s dictionary of words: the field's part of the terms file is
/// the FST, then the term infos, then the term infos' length (8 bytes) and a version (4),
/// then the dictionary's kind (4), as tantivy's own `TermDictionary::open` reads it. A
/// segment without any word has no part: its dictionary is empty.
fn open_words(segment: &Segment) -> tantivy::Result<Words> {
    let invalid =
        |what: String| tantivy::TantivyError::InternalError(format!("terms file: {what}"));
    let terms = segment.open_read(SegmentComponent::Terms)?;
    let field = segment.schema().get_field(open::WORDS_FIELD)?;
    let Some(file) = CompositeFile::open(&terms)?.open_read(field) else {
        return Words::new(OwnedBytes::new(empty_fst())).map_err(|e| invalid(e.to_string()));
    };
    if file.len() < 16 {
        return Err(invalid("a dictionary too short".into()));
    }
    let (file, _kind) = file.split_from_end(4);
    let (main, footer) = file.split_from_end(12);
    let footer = footer.read_bytes()?;
    let infos = footer.as_slice()[..8]
        .try_into()
        .map(u64::from_le_bytes)
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .filter(|n| *n <= main.len())
        .ok_or_else(|| invalid("a bad term infos length".into()))?;
    let (fst, _infos) = main.split_from_end(infos);
    Words::new(fst.read_bytes()?).map_err(|e| invalid(e.to_string()))
}

/// An FST without keys.
fn empty_fst() -> Vec<u8> {
    tantivy_fst::raw::Builder::memory()
        .into_inner()
        .unwrap_or_default()
}

/// One segment's documents by short field and word count (`text::LENGTHS_FIELD`), decoded
/// once: the ranking in order asks, of a few thousand candidates, which have a field of as
/// many words as the query (only those can be exact matches). Read through the column, one
/// document at a time, that was a third of a frequent phrase's ranking on PyPI (`"library
/// for"`: 0.46 ms for 2,629 candidates, the column's pages mostly out of the CPU's caches).
pub(crate) struct SegmentLengths {
    /// Per field id, its place in `docs` (`u32::MAX`: no document has it short).
    slots: Vec<u32>,
    /// Per slot and word count (`slot * LENGTH_SLOTS + words`), the documents.
    docs: Vec<RoaringBitmap>,
}

/// Word counts a field of [`SegmentLengths`] has room for: every count stored (at most
/// `text::COUNTED_FIELD_WORDS`).
const LENGTH_SLOTS: usize = 32;

impl SegmentLengths {
    /// Decodes `column`, the lengths of documents `0..max_doc`.
    pub(super) fn decode(column: &Column<u64>, max_doc: u32) -> Self {
        let mut values = vec![0u64; column.values.num_vals() as usize];
        column.values.get_range(0, &mut values);
        let mut slots: Vec<u32> = Vec::new();
        let mut lists: Vec<Vec<u32>> = Vec::new();
        for doc in 0..max_doc {
            for row in column.index.value_row_ids(doc) {
                let (fid, words) = text::field_and_length(values[row as usize]);
                let (fid, words) = (fid as usize, words as usize);
                if words >= LENGTH_SLOTS {
                    continue;
                }
                if fid >= slots.len() {
                    slots.resize(fid + 1, u32::MAX);
                }
                if slots[fid] == u32::MAX {
                    slots[fid] = (lists.len() / LENGTH_SLOTS) as u32;
                    lists.resize_with(lists.len() + LENGTH_SLOTS, Vec::new);
                }
                let list = &mut lists[slots[fid] as usize * LENGTH_SLOTS + words];
                // A document's values may repeat a field's count (an array's values).
                if list.last() != Some(&doc) {
                    list.push(doc);
                }
            }
        }
        let docs = lists
            .into_iter()
            .map(|l| RoaringBitmap::from_sorted_iter(l).unwrap_or_default())
            .collect();
        SegmentLengths { slots, docs }
    }

    /// The documents having field `fid` of `words` words (`None`: none has).
    pub(crate) fn docs_of(&self, fid: u32, words: u32) -> Option<&RoaringBitmap> {
        let slot = *self.slots.get(fid as usize)?;
        (slot != u32::MAX && (words as usize) < LENGTH_SLOTS)
            .then(|| &self.docs[slot as usize * LENGTH_SLOTS + words as usize])
    }

    /// Whether document `doc` has field `fid` of `words` words.
    #[cfg(test)]
    fn has(&self, doc: tantivy::DocId, fid: u32, words: u32) -> bool {
        self.docs_of(fid, words).is_some_and(|d| d.contains(doc))
    }

    /// The field ids some document of the segment has short.
    pub(crate) fn fields(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.slots.len() as u32).filter(|f| self.slots[*f as usize] != u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decoded lengths answer as the column read document by document: documents
    /// without a value (every field too long to count) among those with one or several, a
    /// count repeated, and a field id far past the others.
    #[test]
    fn segment_lengths_hold_each_documents_field_lengths() -> tantivy::Result<()> {
        use tantivy::schema::{Schema, FAST};
        let mut schema = Schema::builder();
        let lens = schema.add_u64_field("lens", FAST);
        let index = tantivy::Index::create_in_ram(schema.build());
        let mut writer: tantivy::IndexWriter = index.writer_with_num_threads(1, 15_000_000)?;
        let value = |fid: u64, words: u64| fid << 16 | words;
        let per_doc = |d: u64| -> Vec<u64> {
            match d % 5 {
                0 => vec![],
                1 => vec![value(3, d % 31)],
                2 => vec![value(1, 2), value(1, 2), value(900, 30)],
                _ => vec![value(1, d % 7), value(2, 7), value(d % 4, 2)],
            }
        };
        for d in 0..3000u64 {
            let mut doc = tantivy::TantivyDocument::new();
            for v in per_doc(d) {
                doc.add_u64(lens, v);
            }
            writer.add_document(doc)?;
        }
        writer.commit()?;
        let searcher = index.reader()?.searcher();
        let reader = searcher.segment_reader(0);
        let column = reader.fast_fields().u64("lens")?;
        let lengths = SegmentLengths::decode(&column, reader.max_doc());
        assert_eq!(lengths.fields().collect::<Vec<_>>(), vec![0, 1, 2, 3, 900]);
        let mut held = 0;
        for doc in 0..reader.max_doc() {
            let stored: Vec<u64> = column.values_for_doc(doc).collect();
            assert_eq!(stored.is_empty(), per_doc(doc as u64).is_empty());
            for fid in [0, 1, 2, 3, 4, 899, 900, 70_000] {
                for words in 0..40 {
                    let expected = stored.contains(&value(fid as u64, words as u64));
                    assert_eq!(
                        lengths.has(doc, fid, words),
                        expected,
                        "{doc} {fid} {words}"
                    );
                    held += expected as usize;
                }
            }
        }
        assert!(held > 5000, "{held}");
        assert!(!lengths.has(reader.max_doc(), 1, 2));
        Ok(())
    }

    /// The segments a searcher of `index` reads.
    fn searched(index: &super::super::Index) -> HashSet<SegmentId> {
        let searcher = index.reader.searcher();
        searcher
            .segment_readers()
            .iter()
            .map(|r| r.segment_id())
            .collect()
    }

    /// Every commit and merge publishes its segments decoded, before any search; the entries
    /// of merged-away segments go two publications later.
    #[test]
    fn segments_are_decoded_when_published_and_dropped_after_they_leave() {
        use crate::index::{BatchOp, Method};
        let tmp = tempfile::tempdir().unwrap();
        let index = super::super::Index::open(tmp.path().join("idx")).unwrap();
        let add = |batch: u64, count: u64| {
            let docs: Vec<String> = (0..count)
                .map(|i| format!(r#"{{"id":{},"t":"word{} common"}}"#, batch * 100 + i, i % 7))
                .collect();
            let file = tmp.path().join(format!("b{batch}"));
            let body = format!("[{}]", docs.join(","));
            crate::stage_documents(body.as_bytes(), crate::Format::Json, None, &file).unwrap();
            let op = BatchOp::add_documents(batch, file, Method::Replace, None);
            index.apply_batch(vec![op]).unwrap();
        };
        for batch in 1..=3 {
            add(batch, 50);
            let live = searched(&index);
            assert!(!live.is_empty());
            for id in &live {
                assert!(
                    index.segments.holds(*id),
                    "batch {batch}: {id:?} not decoded"
                );
            }
        }
        let before_merge = searched(&index);
        assert!(before_merge.len() > 1, "{before_merge:?}");
        index.compact().unwrap();
        let merged = searched(&index);
        assert_eq!(merged.len(), 1);
        assert!(merged.iter().all(|id| index.segments.holds(*id)));
        // A search that began before the merge's publication may still read the old ones.
        assert!(before_merge.is_subset(&index.segments.held()));
        add(4, 10);
        let live = searched(&index);
        assert!(live.iter().all(|id| index.segments.holds(*id)));
        let held = index.segments.held();
        assert!(held.is_disjoint(&before_merge), "{held:?}");
        assert!(held.is_subset(&live.union(&merged).copied().collect()));
        // Reopened, the index decodes what it finds before its first search.
        drop(index);
        let index = super::super::Index::open(tmp.path().join("idx")).unwrap();
        assert!(searched(&index).iter().all(|id| index.segments.holds(*id)));
    }
}
