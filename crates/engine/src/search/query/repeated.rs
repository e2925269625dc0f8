//! A quoted phrase that repeats a word (`"python python"`) can only be in documents holding
//! that word at least as many times. tantivy's phrase query reads the positions of every
//! document holding its words, and a repeated word's documents are all of them: on PyPI that
//! phrase read the positions of 172k documents for 23 matches. [`AtLeast`] walks the word's
//! postings with their frequencies (no positions), so the phrase, intersected with it,
//! checks positions only where the word is frequent enough.

use tantivy::postings::{Postings, SegmentPostings};
use tantivy::query::{EmptyScorer, EnableScoring, Explanation, Query, Scorer, Weight};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocId, DocSet, Score, SegmentReader, Term, TERMINATED};

/// Documents holding `term` at least `times` times.
#[derive(Clone, Debug)]
pub(crate) struct AtLeast {
    term: Term,
    times: u32,
}

impl AtLeast {
    pub(crate) fn new(term: Term, times: u32) -> AtLeast {
        AtLeast { term, times }
    }
}

impl Query for AtLeast {
    fn weight(&self, _: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(self.clone()))
    }

    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a Term, bool)) {
        visitor(&self.term, false);
    }
}

impl Weight for AtLeast {
    fn scorer(&self, reader: &SegmentReader, _: Score) -> tantivy::Result<Box<dyn Scorer>> {
        let inverted = reader.inverted_index(self.term.field())?;
        let Some(postings) = inverted.read_postings(&self.term, IndexRecordOption::WithFreqs)?
        else {
            return Ok(Box::new(EmptyScorer));
        };
        let mut scorer = AtLeastScorer {
            postings,
            times: self.times,
        };
        scorer.settle();
        Ok(Box::new(scorer))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        super::explain_match(self, reader, doc, "AtLeast", || {
            format!(
                "document {doc} holds the term fewer than {} times",
                self.times
            )
        })
    }
}

struct AtLeastScorer {
    postings: SegmentPostings,
    times: u32,
}

impl AtLeastScorer {
    /// Moves on from the current document to the first holding the term often enough.
    fn settle(&mut self) -> DocId {
        let mut doc = self.postings.doc();
        while doc != TERMINATED && self.postings.term_freq() < self.times {
            doc = self.postings.advance();
        }
        doc
    }
}

impl DocSet for AtLeastScorer {
    fn advance(&mut self) -> DocId {
        self.postings.advance();
        self.settle()
    }

    fn seek(&mut self, target: DocId) -> DocId {
        self.postings.seek(target);
        self.settle()
    }

    fn doc(&self) -> DocId {
        self.postings.doc()
    }

    fn size_hint(&self) -> u32 {
        self.postings.size_hint()
    }
}

impl Scorer for AtLeastScorer {
    fn score(&mut self) -> Score {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use tantivy::collector::DocSetCollector;
    use tantivy::query::{BooleanQuery, Occur, PhraseQuery};
    use tantivy::schema::{Schema, TEXT};
    use tantivy::{doc, DocAddress, Index};

    use super::*;

    #[test]
    fn only_documents_holding_the_word_often_enough() {
        let mut schema = Schema::builder();
        let f = schema.add_text_field("t", TEXT);
        let index = Index::create_in_ram(schema.build());
        let mut writer: tantivy::IndexWriter = index.writer(15_000_000).unwrap();
        let texts = [
            "python",               // 0: once
            "python tools python",  // 1: twice, not in a row
            "python python",        // 2: the phrase
            "other words",          // 3: never
            "python python python", // 4: three times, the phrase twice
        ];
        for t in texts {
            writer.add_document(doc!(f => t)).unwrap();
        }
        writer.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        let python = Term::from_field_text(f, "python");
        let docs = |q: &dyn Query| -> Vec<u32> {
            let mut d: Vec<u32> = searcher
                .search(q, &DocSetCollector)
                .unwrap()
                .into_iter()
                .map(|a: DocAddress| a.doc_id)
                .collect();
            d.sort_unstable();
            d
        };
        assert_eq!(docs(&AtLeast::new(python.clone(), 2)), vec![1, 2, 4]);
        assert_eq!(docs(&AtLeast::new(python.clone(), 3)), vec![4]);
        assert_eq!(docs(&AtLeast::new(python.clone(), 1)), vec![0, 1, 2, 4]);
        let phrase = PhraseQuery::new(vec![python.clone(), python.clone()]);
        let both = BooleanQuery::new(vec![
            (
                Occur::Must,
                Box::new(AtLeast::new(python.clone(), 2)) as Box<dyn Query>,
            ),
            (Occur::Must, Box::new(phrase.clone())),
        ]);
        assert_eq!(docs(&both), docs(&phrase));
        assert_eq!(docs(&both), vec![2, 4]);
    }
}
