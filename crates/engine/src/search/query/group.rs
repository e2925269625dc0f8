//! One part of a query, as the query's terms hold it.

use tantivy::Term;

/// One part of a query: a word (with its alternatives: the prefix completions of the last
/// word) or a quoted phrase.
pub(crate) enum Group {
    /// The word with its prefix completions (`exact`, the word itself first), its synonyms
    /// (word sequences, matched as phrases; as good as the word itself), and its typo
    /// derivations with their typo counts.
    /// `word` is its index in [`Terms::words`], `budget` the typos it may have.
    Word {
        exact: Vec<Term>,
        synonyms: Vec<Vec<Term>>,
        typos: Vec<(Term, u8)>,
        /// The word written as two adjacent words (one typo).
        split: Option<Vec<Term>>,
        word: usize,
        budget: u8,
    },
    /// Words at offsets from the first (stop words leave holes), and the pair term standing
    /// for them when they are two adjacent pair words (see [`text::PairWords`]).
    Phrase(Vec<(usize, Term)>, Option<Term>),
}
