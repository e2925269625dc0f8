//! The documents holding any, or every one, of several terms, unscored; or, of several groups
//! of terms, one term of each.
//!
//! Any: a word's alternatives (its typo derivations and completions) and the shortcuts'
//! marker terms are unions of up to thousands of terms. As a tantivy `BooleanQuery` of
//! `TermQuery`s, each term costs a weight, a scorer and a place in a merging union, about a
//! third of the time a short mistyped word takes. Here the terms are found in one walk of each
//! segment's dictionary (see [`term_infos`]), and their documents are read block by block into
//! one bitset (as tantivy's `AutomatonWeight` does).
//!
//! Every one: the level of a quoted phrase read without its positions (see the ranking's
//! `Floor`). tantivy's intersection seeks each term's postings document by document: for
//! `"for the"` on npm, two words held by tens of thousands of summaries, that was a fifth of
//! the engine's time. Here the rarest term's documents are read into a bitset, and each
//! other term, when it is not much more frequent than what is left, is read whole into a
//! second one and the two are and-ed; a far more frequent one is seeked, only for the
//! documents left.
//!
//! Groups: the same, a group counting as often as its terms' documents; read whole, its
//! terms go into the one bitset; seeked, a document stays when one of them holds it. A query
//! of one phrase has its shortcut set by weight read so (its first word opening a field, one
//! of several marker terms, and each other word), without the phrase's positions.

use std::sync::Arc;

use tantivy::postings::{SegmentPostings, TermInfo};
use tantivy::query::{ConstScorer, EmptyScorer, EnableScoring, Explanation, Query, Scorer, Weight};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocId, DocSet, Score, SegmentReader, Term, TERMINATED};

/// Documents holding, for each of its groups, one of the group's terms; all of one field.
#[derive(Clone, Debug)]
pub(crate) struct TermSet {
    groups: Arc<[Vec<Term>]>,
}

/// A term at most this many times as frequent as the documents left is read whole, not
/// seeked (reading decodes its postings a block at a time; a seek costs a skip-list walk).
const READ_WHOLE: u64 = 16;

impl TermSet {
    /// Documents holding any of `terms`, which must be of one field (the first one's).
    pub(crate) fn any(terms: Vec<Term>) -> TermSet {
        TermSet::all_of(vec![terms])
    }

    /// Documents holding every one of `terms` (at least one), of one field.
    pub(crate) fn every(terms: Vec<Term>) -> TermSet {
        debug_assert!(!terms.is_empty());
        TermSet::all_of(terms.into_iter().map(|t| vec![t]).collect())
    }

    /// Documents holding one term of each group (at least one group), all of one field.
    pub(crate) fn all_of(groups: Vec<Vec<Term>>) -> TermSet {
        debug_assert!({
            let mut all = groups.iter().flatten();
            let field = all.next().map(Term::field);
            all.all(|t| Some(t.field()) == field)
        });
        TermSet {
            groups: groups.into(),
        }
    }
}

/// Above this many terms, they are looked up in one walk of the dictionary.
const LOOKED_UP_ONE_BY_ONE: usize = 8;

/// The dictionary entries of the `terms` found in `inverted`. A word's alternatives and
/// their marker terms share long prefixes (`\u{1}0\u{1}manag`, `\u{1}0\u{1}managemnt`, …):
/// one walk of the dictionary restricted to them follows each shared prefix once, where a
/// lookup per term starts again from the root (on PyPI, 840 lookups were a fifth of the
/// engine's time for `managx`).
fn term_infos(
    inverted: &tantivy::InvertedIndexReader,
    terms: &[Term],
) -> tantivy::Result<Vec<TermInfo>> {
    let mut infos = Vec::with_capacity(terms.len());
    if terms.len() <= LOOKED_UP_ONE_BY_ONE {
        for t in terms {
            infos.extend(inverted.get_term_info(t)?);
        }
        return Ok(infos);
    }
    let mut keys: Vec<&[u8]> = terms.iter().map(|t| t.serialized_value_bytes()).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut stream = inverted.terms().search(KeySet(&keys)).into_stream()?;
    while stream.advance() {
        infos.push(stream.value().clone());
    }
    Ok(infos)
}

/// An automaton accepting exactly the sorted, distinct `keys`. Its state is the range of keys
/// that start with the bytes read so far, and how many bytes that is.
struct KeySet<'a>(&'a [&'a [u8]]);

impl tantivy_fst::Automaton for KeySet<'_> {
    type State = (usize, usize, usize);

    fn start(&self) -> Self::State {
        (0, self.0.len(), 0)
    }

    fn is_match(&self, &(low, high, depth): &Self::State) -> bool {
        // The shortest key of the range sorts first.
        low < high && self.0[low].len() == depth
    }

    fn can_match(&self, &(low, high, _): &Self::State) -> bool {
        low < high
    }

    fn accept(&self, &(low, high, depth): &Self::State, byte: u8) -> Self::State {
        // The range's keys share their first `depth` bytes, so they sort by the next one
        // (a key that ends there first).
        let range = &self.0[low..high];
        let from = range.partition_point(|k| k.get(depth).is_none_or(|b| *b < byte));
        let to = range.partition_point(|k| k.get(depth).is_none_or(|b| *b <= byte));
        (low + from, low + to, depth + 1)
    }
}

impl Query for TermSet {
    fn weight(&self, _: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(self.clone()))
    }

    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a Term, bool)) {
        for t in self.groups.iter().flatten() {
            visitor(t, false);
        }
    }
}

impl Weight for TermSet {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        let Some(field) = self.groups.iter().flatten().next().map(Term::field) else {
            return Ok(Box::new(EmptyScorer));
        };
        let inverted = reader.inverted_index(field)?;
        // Each group's entries; a group none of whose terms is here: no document.
        let mut groups: Vec<Vec<TermInfo>> = Vec::with_capacity(self.groups.len());
        for terms in self.groups.iter() {
            let infos = term_infos(&inverted, terms)?;
            if infos.is_empty() {
                return Ok(Box::new(EmptyScorer));
            }
            groups.push(infos);
        }
        // A term's documents into a bitset, a block at a time.
        let read = |info: &TermInfo, bits: &mut Bits| -> tantivy::Result<()> {
            let mut block =
                inverted.read_block_postings_from_terminfo(info, IndexRecordOption::Basic)?;
            loop {
                let docs = block.docs();
                if docs.is_empty() {
                    return Ok(());
                }
                docs.iter().for_each(|&d| bits.insert(d));
                block.advance();
            }
        };
        if groups.len() == 1 && groups[0].len() == 1 {
            let one = &groups[0][0];
            let postings = inverted.read_postings_from_terminfo(one, IndexRecordOption::Basic)?;
            return Ok(Box::new(ConstScorer::new(postings, boost)));
        }
        // The rarest group first (how many documents its terms have at most).
        let freq = |g: &[TermInfo]| g.iter().map(|i| i.doc_freq as u64).sum::<u64>();
        groups.sort_unstable_by_key(|g| (freq(g), g[0].postings_range.start));
        groups.dedup();
        let mut bits = Bits::new(reader.max_doc());
        for info in &groups[0] {
            read(info, &mut bits)?;
        }
        let mut left = freq(&groups[0]);
        let mut other: Option<Bits> = None;
        for group in &groups[1..] {
            if left == 0 {
                break;
            }
            if freq(group) <= left.saturating_mul(READ_WHOLE) {
                let other = other.get_or_insert_with(|| Bits::new(reader.max_doc()));
                other.words.fill(0);
                for info in group {
                    read(info, other)?;
                }
                for (w, o) in bits.words.iter_mut().zip(&other.words) {
                    *w &= o;
                }
            } else {
                let mut postings = group
                    .iter()
                    .map(|i| inverted.read_postings_from_terminfo(i, IndexRecordOption::Basic))
                    .collect::<std::io::Result<Vec<_>>>()?;
                for (i, w) in bits.words.iter_mut().enumerate() {
                    let mut rest = *w;
                    while rest != 0 {
                        let bit = rest.trailing_zeros();
                        rest &= rest - 1;
                        let doc = (i * 64) as DocId + bit;
                        // Postings only move forward: one already past `doc` lacks it.
                        let holds = |p: &mut SegmentPostings| match p.doc() {
                            d if d < doc => p.seek(doc) == doc,
                            d => d == doc,
                        };
                        if !postings.iter_mut().any(holds) {
                            *w &= !(1u64 << bit);
                        }
                    }
                }
            }
            left = bits.words.iter().map(|w| w.count_ones() as u64).sum();
        }
        bits.start();
        Ok(Box::new(ConstScorer::new(bits, boost)))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        super::explain_match(self, reader, doc, "TermSet", || {
            format!("document {doc} is not in the term set")
        })
    }
}

/// A segment's documents as a bitset, walked in order. tantivy's own (`BitSet` walked by
/// `BitSetDocSet`) keeps its count on every insert: `python`, whose completions fill a
/// fifth of PyPI's bitset, took 4.1 ms in the engine with it, 3.3 with this one.
struct Bits {
    words: Vec<u64>,
    len: u32,
    doc: DocId,
}

impl Bits {
    fn new(max_doc: DocId) -> Bits {
        Bits {
            words: vec![0; (max_doc as usize).div_ceil(64)],
            len: 0,
            doc: TERMINATED,
        }
    }

    fn insert(&mut self, doc: DocId) {
        if let Some(w) = self.words.get_mut(doc as usize / 64) {
            *w |= 1 << (doc % 64);
        }
    }

    /// Counts the documents and stands on the first.
    fn start(&mut self) {
        self.len = self.words.iter().map(|w| w.count_ones()).sum();
        self.doc = self.first_from(0);
    }

    /// The first document at or after `from`.
    fn first_from(&self, from: DocId) -> DocId {
        let mut i = from as usize / 64;
        let Some(&w) = self.words.get(i) else {
            return TERMINATED;
        };
        let mut word = w & (u64::MAX << (from % 64));
        loop {
            if word != 0 {
                return (i * 64) as DocId + word.trailing_zeros();
            }
            i += 1;
            match self.words.get(i) {
                Some(&w) => word = w,
                None => return TERMINATED,
            }
        }
    }
}

impl DocSet for Bits {
    fn advance(&mut self) -> DocId {
        if self.doc != TERMINATED {
            self.doc = self.first_from(self.doc + 1);
        }
        self.doc
    }

    fn seek(&mut self, target: DocId) -> DocId {
        if self.doc != TERMINATED && target > self.doc {
            self.doc = self.first_from(target);
        }
        self.doc
    }

    fn doc(&self) -> DocId {
        self.doc
    }

    fn size_hint(&self) -> u32 {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(bits: &mut Bits) -> Vec<DocId> {
        let mut out = Vec::new();
        let mut d = bits.doc();
        while d != TERMINATED {
            out.push(d);
            d = bits.advance();
        }
        out
    }

    #[test]
    fn a_bitset_walks_and_seeks_its_documents_in_order() {
        let mut bits = Bits::new(200);
        for d in [130, 0, 63, 64, 199, 63] {
            bits.insert(d);
        }
        bits.start();
        assert_eq!(bits.size_hint(), 5);
        assert_eq!(walk(&mut bits), [0, 63, 64, 130, 199]);
        bits.doc = 0;
        assert_eq!(bits.seek(65), 130);
        assert_eq!(bits.seek(100), 130);
        assert_eq!(bits.seek(199), 199);
        assert_eq!(bits.advance(), TERMINATED);
        assert_eq!(bits.seek(5), TERMINATED);
        let mut empty = Bits::new(0);
        empty.start();
        assert_eq!(empty.doc(), TERMINATED);
    }

    #[test]
    fn the_union_and_the_intersection_find_what_tantivy_s_queries_find() {
        use tantivy::collector::DocSetCollector;
        use tantivy::query::{BooleanQuery, Occur, TermQuery};
        use tantivy::schema::{Schema, Value, STORED, TEXT};

        let mut schema = Schema::builder();
        let text = schema.add_text_field("text", TEXT | STORED);
        let index = tantivy::Index::create_in_ram(schema.build());
        let mut writer: tantivy::IndexWriter = index.writer(15_000_000).unwrap();
        // Two segments: 300 documents, then 200.
        for (batch, n) in [(0, 300), (1, 200)] {
            for i in 0..n {
                let mut words = vec![format!("w{}", i % 7)];
                if i % 64 == batch {
                    words.push("rare".into());
                }
                if i % 2 == 0 {
                    words.push("even".into());
                }
                let mut doc = tantivy::TantivyDocument::default();
                doc.add_text(text, words.join(" "));
                writer.add_document(doc).unwrap();
            }
            writer.commit().unwrap();
        }
        let searcher = index.reader().unwrap().searcher();
        assert_eq!(searcher.segment_readers().len(), 2);
        let term = |w: &str| Term::from_field_text(text, w);
        // Ours and tantivy's, for `words` joined by `occur`: the documents found.
        let both_ways = |words: &[&str], occur: Occur| {
            let terms: Vec<Term> = words.iter().map(|w| term(w)).collect();
            let set = match occur {
                Occur::Must => TermSet::every(terms.clone()),
                _ => TermSet::any(terms.clone()),
            };
            let ours = searcher.search(&set, &DocSetCollector).unwrap();
            let tantivy = BooleanQuery::new(
                terms
                    .into_iter()
                    .map(|t| -> (Occur, Box<dyn Query>) {
                        (occur, Box::new(TermQuery::new(t, IndexRecordOption::Basic)))
                    })
                    .collect(),
            );
            let theirs = searcher.search(&tantivy, &DocSetCollector).unwrap();
            assert_eq!(ours, theirs, "{words:?} {occur:?}");
            ours
        };
        for words in [
            vec![],
            vec!["absent"],
            vec!["rare"],
            vec!["rare", "absent", "w3"],
            vec!["w1", "w2", "even", "rare"],
        ] {
            let found = !both_ways(&words, Occur::Should).is_empty();
            assert_eq!(found, !words.iter().all(|w| *w == "absent"), "{words:?}");
        }
        // Every term: the rarest read, the others read whole or seeked (`rare` is 32 times
        // rarer than `even`).
        for words in [
            vec!["absent"],
            vec!["rare"],
            vec!["rare", "absent"],
            vec!["w1", "even"],
            vec!["even", "rare"],
            vec!["w3", "rare", "even", "rare"],
            vec!["w1", "w2"],
        ] {
            let found = !both_ways(&words, Occur::Must).is_empty();
            let expected = !words.contains(&"absent") && words != ["w1", "w2"];
            assert_eq!(found, expected, "{words:?}");
        }
        // Groups: one term of each. The rarest group read, the others read whole or seeked
        // (`rare` is 32 times rarer than `even`, 4 times rarer than a `w`); a group none of
        // whose terms is there matches nothing.
        let groups = |groups: &[&[&str]]| {
            let set = TermSet::all_of(
                groups
                    .iter()
                    .map(|g| g.iter().map(|w| term(w)).collect())
                    .collect(),
            );
            let ours = searcher.search(&set, &DocSetCollector).unwrap();
            let tantivy = BooleanQuery::new(
                groups
                    .iter()
                    .map(|g| -> (Occur, Box<dyn Query>) {
                        let any = g
                            .iter()
                            .map(|w| -> (Occur, Box<dyn Query>) {
                                let q = TermQuery::new(term(w), IndexRecordOption::Basic);
                                (Occur::Should, Box::new(q))
                            })
                            .collect();
                        (Occur::Must, Box::new(BooleanQuery::new(any)))
                    })
                    .collect(),
            );
            let theirs = searcher.search(&tantivy, &DocSetCollector).unwrap();
            assert_eq!(ours, theirs, "{groups:?}");
            ours.len()
        };
        assert!(groups(&[&["rare"], &["w1", "w2", "w3"]]) > 0);
        assert!(groups(&[&["rare", "w1"], &["even", "absent"]]) > 0);
        assert!(groups(&[&["w1", "w2"], &["even"], &["rare", "w4"]]) > 0);
        assert!(groups(&[&["rare"], &["w1"], &["rare", "absent"]]) > 0);
        assert_eq!(groups(&[&["rare", "w1"], &["absent"]]), 0);
        assert_eq!(groups(&[&["w1"], &["w2"], &["even"]]), 0);
        // Intersected with another query, the union is seeked.
        let both = BooleanQuery::new(vec![
            (
                Occur::Must,
                Box::new(TermSet::any(vec![term("w1"), term("w2")])) as Box<dyn Query>,
            ),
            (
                Occur::Must,
                Box::new(TermQuery::new(term("rare"), IndexRecordOption::Basic)),
            ),
        ]);
        let found = searcher.search(&both, &DocSetCollector).unwrap();
        assert!(!found.is_empty());
        for addr in &found {
            let doc: tantivy::TantivyDocument = searcher.doc(*addr).unwrap();
            let text = doc
                .get_first(text)
                .and_then(|v| v.as_str())
                .unwrap()
                .to_string();
            assert!(text.contains("rare") && (text.contains("w1") || text.contains("w2")));
        }
    }

    #[test]
    fn one_walk_finds_the_terms_a_lookup_per_term_finds() {
        use tantivy::schema::{Schema, TEXT};

        let mut schema = Schema::builder();
        let text = schema.add_text_field("text", TEXT);
        let index = tantivy::Index::create_in_ram(schema.build());
        let mut writer: tantivy::IndexWriter = index.writer(15_000_000).unwrap();
        // Words that are prefixes of each other, and neighbours in byte order.
        let words = [
            "a", "ab", "abc", "abd", "abde", "b", "ba", "manag", "manage", "managed",
        ];
        for w in words {
            let mut doc = tantivy::TantivyDocument::default();
            doc.add_text(text, w);
            writer.add_document(doc).unwrap();
        }
        writer.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        let inverted = searcher.segment_reader(0).inverted_index(text).unwrap();
        let term = |w: &str| Term::from_field_text(text, w);
        // Present and absent terms, with duplicates, unsorted, past the one-by-one limit.
        let asked = [
            "managed", "abc", "x", "ab", "abcd", "a", "manage", "mana", "b", "abc", "ba", "bb", "",
            "abde", "zz",
        ];
        let terms: Vec<Term> = asked.iter().map(|w| term(w)).collect();
        assert!(terms.len() > LOOKED_UP_ONE_BY_ONE);
        let mut found: Vec<u64> = term_infos(&inverted, &terms)
            .unwrap()
            .iter()
            .map(|i| i.postings_range.start as u64)
            .collect();
        found.sort_unstable();
        let mut expected: Vec<u64> = terms
            .iter()
            .filter_map(|t| inverted.get_term_info(t).unwrap())
            .map(|i| i.postings_range.start as u64)
            .collect();
        expected.sort_unstable();
        expected.dedup();
        assert_eq!(expected.len(), 8);
        assert_eq!(found, expected);
        let present: Vec<Term> = words.iter().map(|w| term(w)).collect();
        assert!(present.len() > LOOKED_UP_ONE_BY_ONE);
        assert_eq!(term_infos(&inverted, &present).unwrap().len(), 10);
    }
}
