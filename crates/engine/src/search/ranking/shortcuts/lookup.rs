//! Looking up the documents a shortcut names: the marker terms (a word opening a field, a
//! word in a field) and the sets of a level's candidates they select.

use tantivy::query::{BooleanQuery, Occur, Query};
use tantivy::schema::Field;
use tantivy::Term;

use super::{Shortcut, ShortcutSet};
use crate::index::{text, Fields};
use crate::search::{group_query, Group, Reach, TermSet, Terms};

/// The most first-word marker terms a one-word level looks up (fields × alternatives).
pub(super) const MAX_MARKERS: usize = 2_000;

/// One level's shortcut lookup: its kept groups, how far words reach, and the alternatives
/// of the first word looked up through markers in the fields of the best weight.
pub(super) struct Lookup<'a> {
    /// The tantivy fields the sets' terms are in.
    pub(super) fields: &'a Fields,
    pub(super) terms: &'a Terms,
    pub(super) kept: &'a [usize],
    pub(super) reach: Reach,
    /// Fields of the best weight some field has.
    pub(super) fids: Vec<u32>,
    /// Every field id (first-word markers: `wordPosition` reads every field).
    pub(super) all_fids: Vec<u32>,
    /// Whether some field weighs less than the best.
    pub(super) weighted: bool,
    /// The first word's alternatives looked up, and the typos they cost.
    pub(super) words: Vec<String>,
    pub(super) typo: u8,
}

/// The marker terms (`term` of a field id and a word) of `words` in the fields `fids`.
pub(super) fn marker_terms(
    fids: &[u32],
    words: &[String],
    field: Field,
    term: fn(u32, &str) -> String,
) -> Vec<Term> {
    fids.iter()
        .flat_map(|f| words.iter().map(move |w| term(*f, w)))
        .map(|m| Term::from_field_text(field, &m))
        .collect()
}

pub(super) fn text_of(t: &Term) -> Option<String> {
    t.value().as_str().map(str::to_string)
}

impl<'a> Lookup<'a> {
    /// The first word's alternatives; `None` when no shortcut applies to the level.
    pub(super) fn new(
        fields: &'a Fields,
        terms: &'a Terms,
        kept: &'a [usize],
        reach: Reach,
        weights: &[u32],
    ) -> Option<Lookup<'a>> {
        let (exact, synonyms, typos, split) = match &terms.groups[kept[0]] {
            Group::Word {
                exact,
                synonyms,
                typos,
                split,
                ..
            } => (exact, synonyms, typos, split),
            // A phrase: its first word opens a field, the phrase itself is looked up too.
            Group::Phrase(words, _) if reach == Reach::Completions && words[0].0 == 0 => {
                return Lookup::with_words(
                    fields,
                    terms,
                    kept,
                    reach,
                    weights,
                    vec![text_of(&words[0].1)?],
                    0,
                );
            }
            Group::Phrase(..) => return None,
        };
        if synonyms.iter().any(|s| s.len() != 1) {
            return None;
        }
        let (words, typo): (Vec<String>, u8) = match reach {
            Reach::Completions => (
                exact
                    .iter()
                    .chain(synonyms.iter().flatten())
                    .filter_map(text_of)
                    .collect(),
                0,
            ),
            Reach::Typos if kept.len() == 1 => {
                // A split costs one typo: every document where it opens a field, or sits in a
                // field, has its first half there too, so that half is looked up as a word.
                let split_first = match split {
                    Some(halves) => Some(text_of(halves.first()?)?),
                    None => None,
                };
                let fewest = typos
                    .iter()
                    .map(|(_, n)| *n)
                    .chain(split_first.as_ref().map(|_| 1))
                    .min()
                    .unwrap_or(0);
                let mut words: Vec<String> = typos
                    .iter()
                    .filter(|(_, n)| *n == fewest)
                    .filter_map(|(t, _)| text_of(t))
                    .collect();
                if let (Some(w), 1) = (split_first, fewest) {
                    if !words.contains(&w) {
                        words.push(w);
                    }
                }
                (words, fewest)
            }
            Reach::Typos => return None,
        };
        Lookup::with_words(fields, terms, kept, reach, weights, words, typo)
    }

    pub(super) fn with_words(
        fields: &'a Fields,
        terms: &'a Terms,
        kept: &'a [usize],
        reach: Reach,
        weights: &[u32],
        words: Vec<String>,
        typo: u8,
    ) -> Option<Lookup<'a>> {
        let best = weights.iter().min().copied().unwrap_or(0);
        let fids: Vec<u32> = (0..weights.len() as u32)
            .filter(|f| weights[*f as usize] == best)
            .collect();
        let all_fids: Vec<u32> = (0..weights.len() as u32).collect();
        if words.is_empty() || all_fids.len() * words.len() > MAX_MARKERS {
            return None;
        }
        Some(Lookup {
            fields,
            terms,
            kept,
            reach,
            weighted: fids.len() < all_fids.len(),
            fids,
            all_fids,
            words,
            typo,
        })
    }

    /// Documents holding one of `words` as a marker term of one of the fields `fids`.
    pub(super) fn markers(
        &self,
        fids: &[u32],
        words: &[String],
        field: Field,
        term: fn(u32, &str) -> String,
    ) -> Box<dyn Query> {
        Box::new(TermSet::any(marker_terms(fids, words, field, term)))
    }

    /// The marker terms of the first word (one of `words`) opening a field, any field.
    pub(super) fn opening_terms(&self) -> Vec<Term> {
        let words = self.fields.words;
        marker_terms(&self.all_fids, &self.words, words, text::first_word_marker)
    }

    /// Documents where the first word (one of `words`) opens a field, any field.
    pub(super) fn opening_markers(&self) -> Box<dyn Query> {
        Box::new(TermSet::any(self.opening_terms()))
    }

    /// Several words must follow each other in the query.
    pub(super) fn adjacent(&self) -> bool {
        let terms = self.terms;
        self.kept
            .windows(2)
            .all(|w| terms.positions[w[1]] == terms.positions[w[0]] + terms.spans[w[0]])
    }

    /// Documents where the first word (one of `words`) opens a field, any field (as
    /// `wordPosition` reads every field), holding one of the first word's alternatives in a
    /// field of the best weight (`attributeRank`) and the other kept words. A phrase first:
    /// its first word opens the field, its words are in a field of the best weight, and it
    /// is there.
    pub(super) fn opening(&self, words: &[String]) -> Box<dyn Query> {
        let first = self.markers(
            &self.all_fids,
            words,
            self.fields.words,
            text::first_word_marker,
        );
        let phrase = matches!(self.terms.groups[self.kept[0]], Group::Phrase(..));
        if self.kept.len() == 1 && !self.weighted && !phrase {
            return first;
        }
        let mut parts = vec![(Occur::Must, first)];
        if self.weighted {
            if let Some(best) = self.term_markers(0, &self.fids) {
                parts.push((Occur::Must, best));
            }
        }
        let rest = if phrase { self.kept } else { &self.kept[1..] };
        for &k in rest {
            parts.push((Occur::Must, group_query(&self.terms.groups[k], self.reach)));
        }
        Box::new(BooleanQuery::new(parts))
    }

    /// Documents holding the `n`th kept group in one of the fields `fids`, through the
    /// field-words markers (a phrase: each of its words there); `None` when the group has
    /// multi-word synonyms or too many alternatives.
    pub(super) fn term_markers(&self, n: usize, fids: &[u32]) -> Option<Box<dyn Query>> {
        let field_words = self.fields.field_words;
        let alts: Vec<String> = match &self.terms.groups[self.kept[n]] {
            Group::Phrase(words, _) => {
                let each: Vec<(Occur, Box<dyn Query>)> = words
                    .iter()
                    .filter_map(|(_, t)| text_of(t))
                    .map(|w| {
                        (
                            Occur::Must,
                            self.markers(fids, &[w], field_words, text::field_word),
                        )
                    })
                    .collect();
                return Some(Box::new(BooleanQuery::new(each)));
            }
            Group::Word { .. } if n == 0 => self.words.clone(),
            Group::Word {
                exact, synonyms, ..
            } => {
                if synonyms.iter().any(|s| s.len() != 1) {
                    return None;
                }
                exact
                    .iter()
                    .chain(synonyms.iter().flatten())
                    .filter_map(text_of)
                    .collect()
            }
        };
        if fids.len() * alts.len() > MAX_MARKERS {
            return None;
        }
        Some(self.markers(fids, &alts, field_words, text::field_word))
    }

    /// The words opening a field (`attributeRank` and `wordPosition` met).
    pub(super) fn opening_sets(&self, cut: &Shortcut, out: &mut Vec<ShortcutSet>) -> Option<()> {
        let Some((zero_to, exact_next)) = cut.opening else {
            return Some(());
        };
        if self.terms.positions[self.kept[0]] != 0 || !self.adjacent() {
            return Some(());
        }
        let (words, typo) = (&self.words, self.typo);
        // With `exactness` next, documents opening a field with the word as typed
        // come before those opening it with a completion or synonym.
        let one = self.kept.len() == 1 && typo == 0;
        if exact_next && one && words.len() > 1 {
            out.push(ShortcutSet {
                as_typed: true,
                ..ShortcutSet::exactly(self.opening(&words[..1]), zero_to, typo)
            });
        }
        out.push(ShortcutSet {
            as_typed: one && words.len() == 1,
            ..ShortcutSet::exactly(self.opening(words), zero_to, typo)
        });
        Some(())
    }

    /// Every word in a field of the best weight; useless when every field has the same
    /// weight. `None` when a later word cannot be looked up so (no further set then).
    pub(super) fn field_set(
        &self,
        cut: &Shortcut,
        weights: &[u32],
        out: &mut Vec<ShortcutSet>,
    ) -> Option<()> {
        let best = weights.iter().min().copied().unwrap_or(0);
        let weighted = weights.iter().any(|w| *w != best);
        let (Some(zero_to), true) = (cut.field, weighted) else {
            return Some(());
        };
        let query = self.in_fields(&self.fids, true)?;
        out.push(ShortcutSet::exactly(query, zero_to, self.typo));
        Some(())
    }

    /// Documents holding every kept group in one of the fields `fids` (a phrase: its words,
    /// and with `phrases` the phrase anywhere); `None` when a group cannot be looked up so.
    pub(super) fn in_fields(&self, fids: &[u32], phrases: bool) -> Option<Box<dyn Query>> {
        let mut parts = Vec::new();
        for n in 0..self.kept.len() {
            parts.push((Occur::Must, self.term_markers(n, fids)?));
            let group = &self.terms.groups[self.kept[n]];
            if phrases && matches!(group, Group::Phrase(..)) {
                parts.push((Occur::Must, group_query(group, self.reach)));
            }
        }
        Some(if parts.len() == 1 {
            parts.remove(0).1
        } else {
            Box::new(BooleanQuery::new(parts))
        })
    }

    /// A phrase first: the sets by field weight (see [`Lookup::weight_sets`]). Two words: the
    /// set by weight inside the level, then in a row (see [`Lookup::in_a_row`]); three or
    /// more, with `proximity` right after `typo`, the set by weight (PyPI: `python library
    /// for` ranked 20,040 documents in 9 ms, its set by weight 1,223 in 2). The set by
    /// weight holds the level's documents with a word in a field of the best weight, not
    /// only those with the words in a row: ranking checks the row (`proximity`, before
    /// `attributeRank`), while reading the row would check the phrase of every completion of
    /// the second word. Two frequent words ("library for") are in a row in tens of thousands
    /// of documents, but in a name in a few thousand.
    pub(super) fn row_sets(
        &self,
        cut: &Shortcut,
        weights: &[u32],
        out: &mut Vec<ShortcutSet>,
    ) -> Option<()> {
        let phrase = matches!(self.terms.groups[self.kept[0]], Group::Phrase(..));
        let row = if phrase { None } else { self.in_a_row(cut) };
        let many = !phrase && self.kept.len() > 2 && cut.in_a_row.is_some() && self.adjacent();
        if phrase || row.is_some() || many {
            let level = self.terms.kept_query(self.kept, self.reach);
            self.weight_sets(cut, weights, level.as_ref(), out);
        }
        if let Some((query, zero_to)) = row {
            out.push(ShortcutSet::exactly(query, zero_to, self.typo));
        }
        Some(())
    }

    /// Two words in a row, as a phrase (the second with its completions), `proximity`
    /// right after `typo`. (Three words at proximity 0 need not form one phrase: each
    /// pair may be adjacent in a different place.)
    pub(super) fn in_a_row(&self, cut: &Shortcut) -> Option<(Box<dyn Query>, usize)> {
        let (Some(zero_to), 2, true) = (cut.in_a_row, self.kept.len(), self.adjacent()) else {
            return None;
        };
        let terms = self.terms;
        let mut fixed: Vec<(usize, Term)> = Vec::new();
        let mut last: Vec<Term> = Vec::new();
        for (n, &k) in self.kept.iter().enumerate() {
            let Group::Word {
                exact, synonyms, ..
            } = &terms.groups[k]
            else {
                return None;
            };
            if !synonyms.is_empty() || (n + 1 < self.kept.len() && exact.len() != 1) {
                return None;
            }
            let offset = (terms.positions[k] - terms.positions[self.kept[0]]) as usize;
            if n + 1 < self.kept.len() {
                fixed.push((offset, exact[0].clone()));
            } else {
                last = exact.clone();
                fixed.push((offset, exact[0].clone()));
            }
        }
        let (offset, _) = fixed.pop().expect("two words or more");
        // Two pair words in a row read their pair term: one posting list instead of both
        // words' positions in every document holding both (npm `for the`: 5,314 documents,
        // read in 1.3 ms as a phrase).
        let field_words = self.fields.field_words;
        let phrases: Vec<(Occur, Box<dyn Query>)> = last
            .into_iter()
            .map(|t| -> (Occur, Box<dyn Query>) {
                let mut words = fixed.clone();
                words.push((offset, t));
                (Occur::Should, terms.phrase(field_words, &words))
            })
            .collect();
        Some((Box::new(BooleanQuery::new(phrases)), zero_to))
    }
}
