//! The query side of search: what a query text becomes before any document is looked at.
//!
//! The text is cut into parts ([`parse`]): words and quoted phrases, `-` negating one, only
//! the first ten counting, stop words dropped except a last word being typed. Each positive
//! part becomes a [`Group`] ([`terms`]): a phrase matches as itself; a word matches through
//! its alternatives: its prefix completions when it ends the query ([`completions`]), its
//! synonyms, and, looked up only when a search needs them, its typo derivations, the
//! concatenations of it with its neighbours and its split into two words ([`typos`]).
//! A [`Reach`] says how far a word's alternatives go: without typos
//! ([`Reach::Completions`]) or with them ([`Reach::Typos`]), so ranking can take the
//! documents reachable without typos first. Negated parts become groups the candidates
//! lose (see [`super::candidates`]).

mod completions;
mod group;
mod parse;
mod pins;
mod repeated;
mod synonyms;
mod term_set;
mod terms;
mod typos;

pub(crate) use completions::prefix_search;
pub(crate) use group::Group;
pub use pins::{Pins, QueryCandidates};
pub(crate) use term_set::TermSet;
pub(crate) use terms::{group_query, groups_query, Counted, Reach, Terms};
pub(crate) use typos::TypoCandidates;

use tantivy::query::{Explanation, Weight};
use tantivy::{DocId, DocSet, SegmentReader};

/// `Weight::explain` for the engine's own queries, which score every document alike: named
/// `name` when `doc` matches, the error `missing` says otherwise.
fn explain_match(
    weight: &dyn Weight,
    reader: &SegmentReader,
    doc: DocId,
    name: &'static str,
    missing: impl FnOnce() -> String,
) -> tantivy::Result<Explanation> {
    let mut scorer = weight.scorer(reader, 1.0)?;
    if scorer.seek(doc) == doc {
        Ok(Explanation::new(name, 1.0))
    } else {
        Err(tantivy::TantivyError::InvalidArgument(missing()))
    }
}
