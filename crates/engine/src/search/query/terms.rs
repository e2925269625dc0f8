//! The query as tantivy terms: one [`Group`] per word or phrase (the first
//! `MAX_QUERY_WORDS`), the order `matchingStrategy` drops them in, and the tantivy queries
//! built from them at a [`Reach`].

use std::sync::Arc;

use api_types::Result;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::Term;

use super::group::Group;
use super::parse::parse_query;
use super::repeated::AtLeast;
use super::synonyms::add_synonyms;
use super::term_set::TermSet;
use crate::index::text::{self, PairWords};
use crate::index::tv;
use crate::languages::{self, Locales};
use crate::search::format;
use crate::search::rank;
use crate::search::SearchContext;

/// How many words of a query count (Meilisearch reads the first 10).
const MAX_QUERY_WORDS: usize = 10;

/// The query as tantivy terms, with a lower bound of how many live documents are candidates.
pub(crate) struct Terms {
    pub(crate) groups: Vec<Group>,
    /// Per group: its position in the query and how many positions it spans.
    pub(crate) positions: Vec<u32>,
    pub(crate) spans: Vec<u32>,
    pub(crate) negatives: Vec<Group>,
    /// The order `matchingStrategy` drops groups in (the others are never dropped); `None`
    /// for `all`.
    pub(crate) drop_order: Option<Vec<usize>>,
    pub(crate) lower_bound: u64,
    /// The positive words for highlighting.
    pub(crate) words: Vec<format::QueryWord>,
    /// The positive phrases for highlighting, each its words in order (stop words included):
    /// highlighted whole where they occur, their words nowhere else.
    pub(crate) phrases: Vec<format::QueryPhrase>,
    /// Whether the typo derivations were looked up (see [`SearchContext::derive_typos`]).
    pub(crate) derived: bool,
    /// Derivations chosen for every instance of a network (see [`super::pins`]).
    pub(crate) pins: Option<super::Pins>,
    /// How many allowed documents the candidates' query matched at a reach, when ranking
    /// read them (so the total needs no second count).
    pub(crate) counted: Option<(Reach, Counted)>,
    /// The index's pair words, read with the searcher (see [`Terms::pair_of`]).
    pub(crate) pairs: Arc<PairWords>,
}

/// A count ranking made of the candidates: all of them, or a bound it stopped at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Counted {
    Exactly(usize),
    AtLeast(usize),
}

impl Terms {
    pub(crate) fn is_placeholder(&self) -> bool {
        self.groups.is_empty()
    }

    /// Whether some word has typo derivations.
    pub(crate) fn has_typos(&self) -> bool {
        self.groups
            .iter()
            .any(|g| matches!(g, Group::Word { typos, split, .. } if !typos.is_empty() || split.is_some()))
    }

    /// The groups left after `words` dropped the first `dropped` of its order.
    pub(crate) fn kept(&self, dropped: usize) -> Vec<usize> {
        let gone = self
            .drop_order
            .as_deref()
            .map_or(&[][..], |o| &o[..dropped]);
        (0..self.groups.len())
            .filter(|i| !gone.contains(i))
            .collect()
    }

    /// How many groups `words` may drop.
    pub(crate) fn droppable(&self) -> usize {
        self.drop_order.as_ref().map_or(0, Vec::len)
    }

    /// The documents holding `words` in a row (offsets from the first): through their pair
    /// term when they are two adjacent pair words (see [`pair_of`]).
    pub(crate) fn phrase(&self, field_words: Field, words: &[(usize, Term)]) -> Box<dyn Query> {
        pair_or_phrase(pair_of(field_words, &self.pairs, words).as_ref(), words)
    }

    /// Whether some group of `kept` is a quoted phrase of several words.
    pub(crate) fn has_phrase(&self, kept: &[usize]) -> bool {
        kept.iter()
            .any(|&i| matches!(&self.groups[i], Group::Phrase(words, _) if words.len() > 1))
    }

    /// Documents holding every group of `kept`, words reaching as far as `reach`.
    pub(crate) fn kept_query(&self, kept: &[usize], reach: Reach) -> Box<dyn Query> {
        if kept.len() == 1 {
            return group_query(&self.groups[kept[0]], reach);
        }
        Box::new(BooleanQuery::new(
            kept.iter()
                .map(|i| (Occur::Must, group_query(&self.groups[*i], reach)))
                .collect(),
        ))
    }

    /// The candidates: documents holding every group `words` never drops.
    pub(crate) fn universe_query(&self, reach: Reach) -> Box<dyn Query> {
        self.kept_query(&self.kept(self.droppable()), reach)
    }

    /// As tantivy-free terms for the ranking rules.
    pub(crate) fn query_terms(&self) -> Vec<rank::QueryTerm> {
        self.groups
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let one = |t: &Term| vec![(0u32, t.clone())];
                let (derivations, word_count) = match g {
                    Group::Word {
                        exact,
                        synonyms,
                        typos,
                        split,
                        ..
                    } => {
                        let mut d: Vec<rank::Derivation> = Vec::new();
                        for (j, t) in exact.iter().enumerate() {
                            d.push(rank::Derivation {
                                words: one(t),
                                typos: 0,
                                exact: j == 0,
                            });
                        }
                        for seq in synonyms {
                            d.push(rank::Derivation {
                                words: seq
                                    .iter()
                                    .enumerate()
                                    .map(|(k, t)| (k as u32, t.clone()))
                                    .collect(),
                                typos: 0,
                                exact: false,
                            });
                        }
                        for (t, n) in typos {
                            d.push(rank::Derivation {
                                words: one(t),
                                typos: *n,
                                exact: false,
                            });
                        }
                        if let Some(halves) = split {
                            d.push(rank::Derivation {
                                words: vec![(0, halves[0].clone()), (1, halves[1].clone())],
                                typos: 1,
                                exact: false,
                            });
                        }
                        (d, 1)
                    }
                    Group::Phrase(words, _) => (
                        vec![rank::Derivation {
                            words: words.iter().map(|(o, t)| (*o as u32, t.clone())).collect(),
                            typos: 0,
                            exact: true,
                        }],
                        words.len() as u32,
                    ),
                };
                rank::QueryTerm {
                    derivations,
                    position: self.positions[i],
                    word_count,
                    span: self.spans[i],
                }
            })
            .collect()
    }

    /// Per group: the most typos it may have (its budget, as in Meilisearch's typo graph,
    /// whether or not the index holds such derivations; more when a concatenation costs
    /// more). A word always may cost one: a split into two words counts as a typo, and
    /// Meilisearch counts it even for a word too short for typos, whether or not the index
    /// holds the halves (`red`: `maxTypoCount` 1).
    pub(crate) fn max_typos(&self) -> Vec<u8> {
        self.groups
            .iter()
            .map(|g| match g {
                Group::Word { budget, typos, .. } => typos
                    .iter()
                    .map(|(_, n)| *n)
                    .chain([*budget, 1])
                    .max()
                    .unwrap_or(1),
                Group::Phrase(..) => 0,
            })
            .collect()
    }
}

/// How far a word reaches: without typos (the word, its prefix completions, its synonyms),
/// or with its typo derivations too. With `typo` ranked right after `words`, documents a
/// level reaches without typos come before those needing them.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Reach {
    Completions,
    Typos,
}

/// A part of the query as a query: the word (with its alternatives up to `reach`), or the
/// phrase.
pub(crate) fn group_query(group: &Group, reach: Reach) -> Box<dyn Query> {
    let term = |t: &Term| -> Box<dyn Query> {
        Box::new(TermQuery::new(t.clone(), IndexRecordOption::WithFreqs))
    };
    let no_typos: &[(Term, u8)] = &[];
    match group {
        Group::Word {
            exact,
            synonyms,
            typos: t,
            split,
            ..
        } => {
            let with_typos = reach >= Reach::Typos;
            let typos = if with_typos { t.as_slice() } else { no_typos };
            let split = split.as_ref().filter(|_| with_typos);
            // The single terms (the word, one-word synonyms, typo derivations) as one union;
            // multi-word synonyms and the split as phrases beside it.
            let mut singles: Vec<Term> = exact.clone();
            let mut sequences: Vec<&Vec<Term>> = Vec::new();
            for seq in synonyms.iter().chain(split) {
                match seq.as_slice() {
                    [one] => singles.push(one.clone()),
                    _ => sequences.push(seq),
                }
            }
            singles.extend(typos.iter().map(|(t, _)| t.clone()));
            let any: Box<dyn Query> = match singles.len() {
                1 => term(&singles[0]),
                _ => Box::new(TermSet::any(singles)),
            };
            if sequences.is_empty() {
                return any;
            }
            Box::new(BooleanQuery::new(
                std::iter::once((Occur::Should, any))
                    .chain(sequences.into_iter().map(|seq| -> (Occur, Box<dyn Query>) {
                        (
                            Occur::Should,
                            Box::new(tantivy::query::PhraseQuery::new(seq.clone())),
                        )
                    }))
                    .collect(),
            ))
        }
        Group::Phrase(g, _) if g.len() == 1 => term(&g[0].1),
        Group::Phrase(g, pair) => pair_or_phrase(pair.as_ref(), g),
    }
}

/// The documents holding the phrase `words`: its `pair` term's (see [`pair_of`]), else the
/// phrase checked position by position.
fn pair_or_phrase(pair: Option<&Term>, words: &[(usize, Term)]) -> Box<dyn Query> {
    match pair {
        Some(pair) => Box::new(TermQuery::new(pair.clone(), IndexRecordOption::Basic)),
        None => phrase_query(words),
    }
}

/// The term standing for the phrase `words` when it is two adjacent pair words: it holds
/// the same documents as the phrase, in one posting list.
fn pair_of(field_words: Field, pairs: &PairWords, words: &[(usize, Term)]) -> Option<Term> {
    let [(0, a), (1, b)] = words else {
        return None;
    };
    let (a, b) = (a.value(), b.value());
    let (a, b) = (a.as_str()?, b.as_str()?);
    (pairs.contains(a) && pairs.contains(b))
        .then(|| Term::from_field_text(field_words, &text::pair_term(a, b)))
}

/// A quoted phrase of several words; one repeating a word also asks for that word as many
/// times (see [`AtLeast`]), so only the documents holding it often enough are checked.
fn phrase_query(words: &[(usize, Term)]) -> Box<dyn Query> {
    let phrase = Box::new(tantivy::query::PhraseQuery::new_with_offset(words.to_vec()));
    let mut parts: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for (i, (_, t)) in words.iter().enumerate() {
        let times = words.iter().filter(|(_, u)| u == t).count();
        let first = words.iter().position(|(_, u)| u == t) == Some(i);
        if times > 1 && first {
            parts.push((Occur::Must, Box::new(AtLeast::new(t.clone(), times as u32))));
        }
    }
    if parts.is_empty() {
        return phrase;
    }
    parts.push((Occur::Must, phrase));
    Box::new(BooleanQuery::new(parts))
}

/// Documents holding any part (`Should`) or every part (`Must`), words reaching as far as
/// `reach`.
pub(crate) fn groups_query(groups: &[Group], occur: Occur, reach: Reach) -> Box<dyn Query> {
    if groups.len() == 1 {
        return group_query(&groups[0], reach);
    }
    Box::new(BooleanQuery::new(
        groups
            .iter()
            .map(|g| (occur, group_query(g, reach)))
            .collect(),
    ))
}

impl SearchContext<'_> {
    /// The words of `text`, cut in the request's `locales`, or else in the languages of the
    /// `localizedAttributes` of the searchable attributes.
    pub(crate) fn terms(
        &self,
        text: &str,
        (strategy, locales): (Option<&str>, Option<&[String]>),
        pins: Option<&super::Pins>,
    ) -> Result<Terms> {
        let (searcher, settings, pairs) = (&self.searcher, &*self.settings, &self.pairs);
        let prefix_search = super::prefix_search(settings);
        let languages = match locales {
            Some(codes) => languages::languages(codes),
            None if settings.localized_attributes.is_none() => None,
            None => Locales::from_settings(settings).of_query(settings.searchable()),
        };
        let analyzer = settings.analyzer().in_languages(languages);
        let parsed = analyzer.with(|tk| parse_query(tk, text));
        let term = |w: &str| Term::from_field_text(self.fields().words, w);
        let pair = |kept: &[(usize, Term)]| pair_of(self.fields().field_words, pairs, kept);
        let mut groups: Vec<Group> = Vec::new();
        let mut positions: Vec<u32> = Vec::new();
        let mut spans: Vec<u32> = Vec::new();
        let mut negatives: Vec<Group> = Vec::new();
        let mut words: Vec<format::QueryWord> = Vec::new();
        let mut phrases: Vec<format::QueryPhrase> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        let last_part = parsed.parts.len().saturating_sub(1);
        for (pi, part) in parsed.parts.iter().enumerate() {
            if groups.len() >= MAX_QUERY_WORDS {
                break;
            }
            if part.negative {
                // A negated word or phrase is matched exactly.
                let kept: Vec<(usize, Term)> = part
                    .words
                    .iter()
                    .filter(|w| !w.stop)
                    .map(|w| {
                        (
                            (w.position - part.words[0].position) as usize,
                            term(&w.text),
                        )
                    })
                    .collect();
                if !kept.is_empty() {
                    let pair = pair(&kept);
                    negatives.push(Group::Phrase(kept, pair));
                }
                continue;
            }
            if part.phrase {
                let first = match part.words.first() {
                    Some(w) => w.position,
                    None => continue,
                };
                let kept: Vec<(usize, Term)> = part
                    .words
                    .iter()
                    .filter(|w| !w.stop)
                    .map(|w| ((w.position - first) as usize, term(&w.text)))
                    .collect();
                // A phrase of stop words only is dropped.
                if kept.is_empty() {
                    continue;
                }
                phrases.push(format::QueryPhrase {
                    words: part.words.iter().map(|w| w.text.clone()).collect(),
                    at: words.len(),
                });
                let last = part.words.last().map_or(first, |w| w.position);
                positions.push(first);
                spans.push(last - first + 1);
                let pair = pair(&kept);
                groups.push(Group::Phrase(kept, pair));
                continue;
            }
            let w = &part.words[0];
            // Stop words leave the query, except its very last token.
            if w.stop && !(pi == last_part && parsed.ends_with_word) {
                continue;
            }
            if seen.contains(&w.text) {
                continue;
            }
            seen.push(w.text.clone());
            positions.push(w.position);
            spans.push(1);
            groups.push(Group::Word {
                exact: vec![term(&w.text)],
                synonyms: Vec::new(),
                typos: Vec::new(),
                split: None,
                word: words.len(),
                budget: settings.typo_budget(&w.text),
            });
            words.push(format::QueryWord {
                word: w.text.clone(),
                prefix: false,
                typos: Vec::new(),
                synonyms: Vec::new(),
            });
        }
        // The last part is a prefix when it is a word ending the query.
        let ends_with_it = parsed
            .parts
            .last()
            .is_some_and(|p| !p.phrase && !p.negative && parsed.ends_with_word);
        if prefix_search && ends_with_it {
            if let Some(Group::Word { exact, word, .. }) = groups.last_mut() {
                let w = &mut words[*word];
                if parsed
                    .parts
                    .last()
                    .is_some_and(|p| p.words[0].text == w.word)
                {
                    match pins.and_then(|p| p.completions_of(&w.word)) {
                        Some(words) => exact.extend(words.iter().map(|c| term(c))),
                        None => exact.extend(self.completions(searcher, &w.word)?),
                    }
                    w.prefix = true;
                }
            }
        }
        add_synonyms(
            &analyzer,
            settings,
            &mut groups,
            &positions,
            &mut words,
            term,
        );
        // The union has at least as many live documents as its largest term; deleted
        // documents not yet merged away still count in a term's frequency.
        let deleted: u64 = searcher
            .segment_readers()
            .iter()
            .map(|r| r.num_deleted_docs() as u64)
            .sum();
        let mut frequency = Vec::with_capacity(groups.len());
        for g in &groups {
            let f = match g {
                Group::Word { exact, .. } => {
                    let mut best = 0u64;
                    for t in exact {
                        best = best.max(searcher.doc_freq(t).map_err(tv)?);
                    }
                    best
                }
                // A phrase is rarer than its rarest word; 0 keeps the bound safe.
                Group::Phrase(..) => 0,
            };
            frequency.push(f);
        }
        let has_phrase = groups.iter().any(|g| matches!(g, Group::Phrase(..)));
        let droppable: Vec<usize> = (0..groups.len())
            .filter(|i| matches!(groups[*i], Group::Word { .. }))
            .collect();
        // The order `words` drops parts in; the last one standing is never dropped unless a
        // phrase is there to hold the query.
        let drop_order = match strategy {
            Some("all") => None,
            Some("frequency") => {
                let mut order = droppable.clone();
                order.sort_by_key(|i| (std::cmp::Reverse(frequency[*i]), *i));
                if !has_phrase {
                    order.pop();
                }
                Some(order)
            }
            _ => {
                let mut order: Vec<usize> = droppable.iter().rev().copied().collect();
                if !has_phrase {
                    order.retain(|i| *i != 0);
                }
                Some(order)
            }
        };
        // Every candidate holds the parts never dropped: at least as many as the most
        // frequent of them when there is one word.
        let lower_bound = match &drop_order {
            Some(order) if !groups.is_empty() && !has_phrase => (0..groups.len())
                .filter(|i| !order.contains(i))
                .map(|i| frequency[i])
                .min()
                .unwrap_or(0)
                .saturating_sub(deleted),
            _ => 0,
        };
        Ok(Terms {
            groups,
            positions,
            spans,
            negatives,
            drop_order,
            lower_bound,
            words,
            phrases,
            derived: false,
            pins: pins.cloned(),
            counted: None,
            pairs: pairs.clone(),
        })
    }
}
