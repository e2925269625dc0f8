//! The query as the rules see it ([`QueryTerm`]s and their [`Derivation`]s), and the
//! [`TermReader`] that reads, segment by segment, a term's occurrences in chosen documents
//! from the positions tantivy stores (`field << 16 | position`, see `text`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use tantivy::postings::{Postings, SegmentPostings};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocId, DocSet, Term, TERMINATED};

/// One way a query term occurs: a word (or a sequence of words at offsets, for phrases and
/// multi-word synonyms) with its typo cost and whether it is the word as typed.
pub struct Derivation {
    pub words: Vec<(u32, Term)>,
    pub typos: u8,
    pub exact: bool,
}

/// A positive part of the query, as the rules see it.
pub struct QueryTerm {
    pub derivations: Vec<Derivation>,
    /// Position in the query (stop words count, as in documents).
    pub position: u32,
    /// Words it stands for (a phrase's length; 1 for a word).
    pub word_count: u32,
    /// Positions it spans in the query (a phrase's, stop words included).
    pub span: u32,
}

/// One occurrence of a term in a document.
#[derive(Clone, Copy, Debug)]
pub struct Occ {
    pub(super) pos: u32,
    pub(super) typos: u8,
    pub(super) exact: bool,
    /// Positions it covers (phrases, multi-word synonyms).
    pub(super) span: u32,
}

impl Occ {
    pub(super) fn field(&self) -> u32 {
        self.pos >> 16
    }
    pub(super) fn offset(&self) -> u32 {
        self.pos & 0xFFFF
    }
    pub(super) fn last(&self) -> u32 {
        self.pos + self.span.saturating_sub(1)
    }
}

/// A phrase or multi-word synonym: its words' postings at their offsets, typo cost, whether
/// it is as typed, positions spanned.
type Sequence = (Vec<(u32, SegmentPostings)>, u8, bool, u32);

/// Reads, segment by segment, the occurrences of every term in chosen documents.
pub struct TermReader {
    singles: Vec<(SegmentPostings, u8, bool)>,
    heap: BinaryHeap<Reverse<(DocId, usize)>>,
    sequences: Vec<Sequence>,
    buf: Vec<u32>,
    /// Per part of a sequence: its positions in the document being read.
    lists: Vec<Vec<u32>>,
}

impl TermReader {
    pub fn open(
        inverted: &tantivy::InvertedIndexReader,
        term: &QueryTerm,
    ) -> tantivy::Result<TermReader> {
        let single = |d: &Derivation| d.words.len() == 1 && d.words[0].0 == 0;
        // Postings are large (their decoded blocks inline): a vector growing one by one
        // copied them over and over (a few percent of a mistyped word's search).
        let mut singles = Vec::with_capacity(term.derivations.iter().filter(|d| single(d)).count());
        let mut sequences = Vec::new();
        for d in &term.derivations {
            if single(d) {
                if let Some(p) = inverted
                    .read_postings(&d.words[0].1, IndexRecordOption::WithFreqsAndPositions)?
                {
                    singles.push((p, d.typos, d.exact));
                }
            } else {
                let mut parts = Vec::new();
                for (off, t) in &d.words {
                    match inverted.read_postings(t, IndexRecordOption::WithFreqsAndPositions)? {
                        Some(p) => parts.push((*off, p)),
                        None => {
                            parts.clear();
                            break;
                        }
                    }
                }
                if !parts.is_empty() {
                    let span = d.words.iter().map(|(o, _)| o + 1).max().unwrap_or(1);
                    sequences.push((parts, d.typos, d.exact, span));
                }
            }
        }
        let heap = singles
            .iter()
            .enumerate()
            .filter(|(_, (p, _, _))| p.doc() != TERMINATED && singles.len() > 1)
            .map(|(i, (p, _, _))| Reverse((p.doc(), i)))
            .collect();
        Ok(TermReader {
            singles,
            heap,
            sequences,
            buf: Vec::new(),
            lists: Vec::new(),
        })
    }

    /// The term's occurrences in `doc` (documents asked in increasing order).
    pub(super) fn read(&mut self, doc: DocId, out: &mut Vec<Occ>) {
        if self.singles.len() == 1 {
            // One word: no merging needed.
            let (p, typos, exact) = &mut self.singles[0];
            if p.doc() < doc {
                p.seek(doc);
            }
            if p.doc() == doc {
                read_positions(p, *typos, *exact, &mut self.buf, out);
            }
        }
        while let Some(&Reverse((d, i))) = self.heap.peek() {
            if d > doc {
                break;
            }
            self.heap.pop();
            let (p, typos, exact) = &mut self.singles[i];
            if d < doc && p.seek(doc) != doc {
                if p.doc() != TERMINATED {
                    self.heap.push(Reverse((p.doc(), i)));
                }
                continue;
            }
            read_positions(p, *typos, *exact, &mut self.buf, out);
            if p.advance() != TERMINATED {
                self.heap.push(Reverse((p.doc(), i)));
            }
        }
        for (parts, typos, exact, span) in &mut self.sequences {
            // A part may stand past `doc` already (an earlier document's check stopped at it):
            // postings never seek backwards.
            let at = |p: &mut SegmentPostings| match p.doc() < doc {
                true => p.seek(doc),
                false => p.doc(),
            };
            if parts.iter_mut().any(|(_, p)| at(p) != doc) {
                continue;
            }
            // The parts' positions, reusing the lists of earlier documents.
            let lists = &mut self.lists;
            if lists.len() < parts.len() {
                lists.resize_with(parts.len(), Vec::new);
            }
            for ((_, p), v) in parts.iter_mut().zip(lists.iter_mut()) {
                v.clear();
                p.positions(v);
            }
            let first_off = parts[0].0;
            for &p0 in &lists[0] {
                let Some(start) = p0.checked_sub(first_off) else {
                    continue;
                };
                let all = parts[1..]
                    .iter()
                    .zip(&lists[1..])
                    .all(|((off, _), v)| v.binary_search(&(start + off)).is_ok());
                // A sequence stays inside one field.
                if all && (start >> 16) == ((start + *span - 1) >> 16) {
                    out.push(Occ {
                        pos: start,
                        typos: *typos,
                        exact: *exact,
                        span: *span,
                    });
                }
            }
        }
    }
}

/// Appends the occurrences of one word in the document `postings` is on.
fn read_positions(
    postings: &mut SegmentPostings,
    typos: u8,
    exact: bool,
    buf: &mut Vec<u32>,
    out: &mut Vec<Occ>,
) {
    buf.clear();
    postings.positions(buf);
    out.extend(buf.iter().map(|&pos| Occ {
        pos,
        typos,
        exact,
        span: 1,
    }));
}
