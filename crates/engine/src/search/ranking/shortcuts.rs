//! Shortcuts of levels without typos (and one-word typo levels) when `words` and `typo` lead
//! the rules: the documents best on the rules after `typo` are looked up first through
//! marker terms indexed for this purpose (a word opening a field, a word in a field, see
//! `text`) or a phrase, and when enough of them are as good as the level allows, nothing
//! else in the level can come before them, so the rest of the level is never ranked.
//!
//! A level led by a quoted phrase has a costly set to rank (every document holding the
//! phrase; reading its positions is the cost): its best documents are first looked up by
//! field weight (see [`Lookup::weight_sets`]), so a page whose phrase sits in a field of the
//! best weight, or opens a lesser field, never ranks the others.

use api_types::Result;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;

use super::document::{self, Context};
use super::levels::{level_bound, Level, LevelWords};
use super::order::Ranked;
use super::reader::{Occ, QueryTerm};
use super::rule::Rule;
use super::shortcut_plan::{Floor, Shortcut};
use super::verdict::Verdict;
use crate::index::tv;
use crate::search::SearchContext;
use crate::search::{Group, Reach, TermSet, Terms};

mod by_weight;
mod in_order;

use in_order::Past;

mod lookup;
use lookup::Lookup;

/// A set of documents holding a level's best ones: when enough of its documents have
/// `typos` on the `typo` rule's digit and zero up to digit `zero_to`, nothing outside it
/// ranks before them. With `at_most`, the digits `[1, zero_to)` (packed as
/// [`Verdict::cost_range`]) may be up to those: the set holds every document of the level
/// within that bound, and those beat every document past it.
struct ShortcutSet {
    query: Box<dyn Query>,
    zero_to: usize,
    typos: u8,
    at_most: Option<u128>,
    /// Its documents hold the query's one word as typed (none of its other forms), so most
    /// of them match a field's start with it (see [`in_order::Past`]).
    as_typed: bool,
    /// With `at_most`: documents (the set's among them) that may be below the bound (a phrase's
    /// words in fields lighter than the set's weight, the second), ranked first; the others
    /// it accepts tie up to `zero_to`, the phrase in a field of that weight (see
    /// [`Lookup::weight_sets`]).
    ahead: Option<(Box<dyn Query>, u32)>,
}

impl ShortcutSet {
    fn exactly(query: Box<dyn Query>, zero_to: usize, typos: u8) -> ShortcutSet {
        ShortcutSet {
            query,
            zero_to,
            typos,
            at_most: None,
            as_typed: false,
            ahead: None,
        }
    }
}

impl SearchContext<'_> {
    /// Ranks a level's shortcut sets in turn (see [`SearchContext::shortcut_sets`]): the best
    /// `want` documents of the level when a set holds enough documents as good as the level
    /// allows, `None` when the whole level must be ranked.
    pub(super) fn rank_shortcuts(
        &self,
        lv: Level,
        words: LevelWords,
        cut: &Shortcut,
        seen: &mut [Vec<u64>],
        want: usize,
    ) -> Result<Option<Vec<Ranked>>> {
        let Level { run, ctx, qt } = lv;
        let LevelWords { terms, kept, reach } = words;
        let sets = self.shortcut_sets(
            terms,
            kept,
            reach,
            ctx.weights,
            cut,
            ctx.search_on.is_some(),
        );
        // The level's size bound, read once a set must be weighed against it.
        let mut level_size: Option<u64> = None;
        for set in sets {
            let docs = self
                .level_docs(run.searcher, set.query.as_ref(), run.allowed)
                .map_err(tv)?;
            // The fewest typos the level has, nothing lost on the next rules.
            let expected = (set.typos as u128) << (16 * (set.zero_to - 2));
            let top = |v: &Verdict| match set.at_most {
                None => v.cost_range(1, set.zero_to) == expected,
                Some(bound) => v.cost_range(1, set.zero_to) <= expected | bound,
            };
            let past = Past::of(run.rules, &set, qt, kept);
            // A set ranked whole that holds more than half of the level costs about as much
            // as the level, which is ranked after it when it fails (PyPI-like levels of three
            // frequent words: `types typescript definitions` on npm holds 7,646 documents,
            // its opening set 7,261 and its set by weight 7,406, neither settling the page):
            // such a set saves at most what it costs, so the level is ranked instead.
            if past.is_none() {
                let size = match level_size {
                    Some(n) => n,
                    None => *level_size.insert(level_bound(run.searcher, qt, kept, reach)?),
                };
                let held: usize = docs.iter().map(|(_, list)| list.len()).sum();
                if (held as u64).saturating_mul(2) > size {
                    continue;
                }
            }
            let (mut best, count) = match past {
                Some(past) => {
                    let ahead = match &set.ahead {
                        Some((q, _)) => self.level_docs(run.searcher, q.as_ref(), run.allowed),
                        None => Ok(Vec::new()),
                    }
                    .map_err(tv)?;
                    self.rank_in_order(lv, (docs, ahead), seen, &top, want, past)?
                }
                None => self.rank_docs(lv, docs, seen, false, &top, Some(want))?,
            };
            if count >= want {
                self.keep_best(run, &mut best, want)?;
                return Ok(Some(best));
            }
        }
        Ok(None)
    }

    /// The [`Floor`] of a level, when its query is one quoted phrase of several words, no
    /// rule but the relevancy ones of [`Floor`] ranks, and every field may match.
    pub(super) fn phrase_floor(
        &self,
        ctx: &Context,
        qt: &[QueryTerm],
        terms: &Terms,
        kept: &[usize],
        reach: Reach,
    ) -> Option<Floor> {
        let ranks = |r: &Rule| {
            matches!(
                r,
                Rule::Words
                    | Rule::Typo
                    | Rule::Proximity
                    | Rule::AttributeRank
                    | Rule::WordPosition
                    | Rule::Attribute
                    | Rule::Exactness
            )
        };
        if ctx.search_on.is_some()
            || qt.len() != 1
            || kept != [0]
            || !terms.has_phrase(kept)
            || !ctx.rules.iter().all(ranks)
        {
            return None;
        }
        let [phrase] = qt[0].derivations.as_slice() else {
            return None;
        };
        let lookup = Lookup::new(self.fields(), terms, kept, reach, ctx.weights)?;
        if terms.positions[kept[0]] != 0 {
            return None;
        }
        let heaviest = ctx.weights.iter().max().copied()?;
        let fid = ctx.weights.iter().position(|w| *w == heaviest)? as u32;
        let lighter: Vec<u32> = (0..ctx.weights.len() as u32)
            .filter(|f| ctx.weights[*f as usize] < heaviest)
            .collect();
        let mut either = vec![(Occur::Should, lookup.opening_markers())];
        if !lighter.is_empty() {
            either.push((Occur::Should, lookup.in_fields(&lighter, false)?));
        }
        // Only the markers: the level's documents, which `inside` splits, hold the phrase.
        let inside: Box<dyn Query> = Box::new(BooleanQuery::new(either));
        let around: Box<dyn Query> = match &terms.groups[kept[0]] {
            // Two pair words: their pair term's documents are exactly the phrase's, far
            // fewer than those holding both words (npm, `"for the"`: reading both was a
            // third of the phrase's ranking, and most documents ranked had no phrase).
            Group::Phrase(_, Some(pair)) => {
                Box::new(TermQuery::new(pair.clone(), IndexRecordOption::Basic))
            }
            _ => {
                let words = phrase.words.iter().map(|(_, t)| t.clone()).collect();
                Box::new(TermSet::every(words))
            }
        };
        let span = phrase.words.iter().map(|(o, _)| o + 1).max().unwrap_or(1);
        let mut occ = vec![vec![Occ {
            pos: (fid << 16) | 1,
            typos: phrase.typos,
            exact: phrase.exact,
            span,
        }]];
        match document::judge(ctx, qt, &mut occ, &Vec::new, u128::MAX) {
            document::Outcome::Ranked(v) => Some(Floor {
                inside,
                around,
                cost: v.cost,
            }),
            _ => None,
        }
    }

    /// The shortcut sets of a level, best first (see [`ShortcutSet`]). One word: documents
    /// where it (as typed, then with its alternatives) opens a field of the best weight, then
    /// those holding it in such a field; in a typo level, the same with its derivations of
    /// fewest typos. Several words: documents where they follow each other from the start of
    /// a field of the best weight; two words then the set by weight and in a row (see
    /// [`Lookup::row_sets`]). A phrase first: the same, its first word opening the
    /// field, then the sets by field weight (see [`Lookup::weight_sets`]). Not with
    /// `attributesToSearchOn` or multi-word synonyms.
    fn shortcut_sets(
        &self,
        terms: &Terms,
        kept: &[usize],
        reach: Reach,
        weights: &[u32],
        cut: &Shortcut,
        search_on: bool,
    ) -> Vec<ShortcutSet> {
        let mut out = Vec::new();
        if search_on {
            return out;
        }
        let Some(lookup) = Lookup::new(self.fields(), terms, kept, reach, weights) else {
            return out;
        };
        // Each kind of set in turn; a kind that cannot be built ends the list.
        let _ = lookup
            .opening_sets(cut, &mut out)
            .and_then(|()| lookup.field_set(cut, weights, &mut out))
            .and_then(|()| lookup.row_sets(cut, weights, &mut out));
        out
    }
}
