//! Search and facet search on an [`Index`], as a pipeline of small steps. One search walks
//! through them in this order ([`Index::search`] calls them one after the other):
//!
//! 1. **Parse the request** ([`wire`] holds its shape and defaults): the filter becomes the
//!    allowed set of internal ids, then [`request`] checks sort, distinct and facets against
//!    the settings and [`page`] turns offset/limit or page/hitsPerPage into a window.
//! 2. **Candidates**: the query is cut into words and phrases with charabia (see
//!    [`crate::tokens`]); each word gets its alternatives (prefix completions of the last
//!    word, synonyms, typo derivations); negated words leave the allowed set.
//! 3. **Ranking** ([`collect`]): keyword candidates are ranked by the relevancy rules
//!    computed per document from the positions tantivy stores (see [`rank`]), level by level
//!    while `words` and `typo` lead the rules, so a page usually ranks only the documents
//!    keeping every query word without typos. Sort keys come from the value columns (see
//!    [`crate::facets`]). A placeholder search needs no ranking: internal-id order, or the
//!    value index for one sort key.
//! 4. **Distinct** ([`distinct`]): the first document of each value of the distinct
//!    attribute stays.
//! 5. **Page** ([`page`]): the window of the ordered hits, and the total.
//! 6. **Facets** ([`faceting`]): value counts and numeric ranges over the kept documents.
//! 7. **Print** ([`printer`], with [`format`] for highlight and crop): the typed result
//!    (internal ids with their verdicts, totals, facet counts, timings) becomes the response
//!    bytes.
//!
//! The steps before printing build no JSON, so a semantic candidate list can be merged with
//! the keyword one before ranking, and federated search can merge typed hits by score before
//! printing. Facet search ([`facet_search`]) runs steps 1 and 2 and counts one facet's values
//! over every candidate.

use std::sync::Arc;
use std::time::Instant;

use api_types::{Error, Result};
use roaring::RoaringBitmap;
use serde_json::Value;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::Term;

use super::{tv, Index};
use crate::facets::{self, Column};
use crate::filter::eval::within;
use crate::sort::SortKey;
use crate::store::{heed_error, keys};
use crate::tokens;

mod ranking;
use ranking::{
    self as rank, compare_ranked, ranking_rules, rule_list, score_details, search_cutoff, steps,
    LevelDocs, Ranked,
};

mod collect;
mod distinct;
mod facet_search;
mod faceting;
pub(crate) mod format;
mod page;
mod printer;
mod request;
mod wire;

use collect::Order;
use printer::{Printer, SearchResult, Timings};
pub use wire::{FacetSearchQuery, SearchQuery};

/// The columns sort keys read.
fn key_paths(specs: &[SortKey]) -> Vec<String> {
    specs
        .iter()
        .map(|s| match s {
            SortKey::Field { name, .. } => name.clone(),
            SortKey::GeoPoint { .. } => "_geo".to_string(),
        })
        .collect()
}

/// The internal ids of the documents matching `query`, in no particular order.
fn iids_of(searcher: &tantivy::Searcher, query: &dyn Query) -> Result<Vec<u32>> {
    Ok(searcher
        .search(query, &LevelDocs)
        .map_err(tv)?
        .into_iter()
        .flat_map(|(_, list)| list.into_iter().map(|(_, iid)| iid))
        .collect())
}

/// One part of a query: a word (with its alternatives: the prefix completions of the last
/// word) or a quoted phrase.
enum Group {
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
    /// Words at offsets from the first (stop words leave holes).
    Phrase(Vec<(usize, Term)>),
}

/// At most this many derivations per word: with one typo, then with two (Meilisearch's caps).
const ONE_TYPO_CAP: usize = 150;
const TWO_TYPO_CAP: usize = 50;
/// How many dictionary entries a derivation walk visits per segment, at most: a prefix
/// automaton accepts every continuation of every near prefix (`asynchronou…` has thousands).
const TYPO_SCAN: usize = 4_000;

/// A Levenshtein automaton for tantivy's term dictionary.
struct Lev<'a>(&'a levenshtein_automata::DFA);

impl tantivy_fst::Automaton for Lev<'_> {
    type State = u32;

    fn start(&self) -> u32 {
        self.0.initial_state()
    }

    fn is_match(&self, state: &u32) -> bool {
        matches!(
            self.0.distance(*state),
            levenshtein_automata::Distance::Exact(_)
        )
    }

    fn can_match(&self, state: &u32) -> bool {
        *state != levenshtein_automata::SINK_STATE
    }

    fn accept(&self, state: &u32, byte: u8) -> u32 {
        self.0.transition(*state, byte)
    }
}

/// Builders are costly (the 2-typo one especially): built once.
fn lev_builder(typos: u8) -> &'static levenshtein_automata::LevenshteinAutomatonBuilder {
    use std::sync::OnceLock;
    static ONE: OnceLock<levenshtein_automata::LevenshteinAutomatonBuilder> = OnceLock::new();
    static TWO: OnceLock<levenshtein_automata::LevenshteinAutomatonBuilder> = OnceLock::new();
    let cell = if typos >= 2 { &TWO } else { &ONE };
    cell.get_or_init(|| levenshtein_automata::LevenshteinAutomatonBuilder::new(typos.min(2), true))
}

/// A value inside `typoTolerance`.
fn typo_setting<'a>(settings: Option<&'a Value>, path: &[&str]) -> Option<&'a Value> {
    let mut v = settings?.get("typoTolerance")?;
    for p in path {
        v = v.get(p)?;
    }
    Some(v)
}

/// Whether `typoTolerance.<list>` holds `needle` (words compare lowercased, attributes as
/// written).
fn typo_list_has(settings: Option<&Value>, list: &str, needle: &str) -> bool {
    let fold = list == "disableOnWords";
    typo_setting(settings, &[list])
        .and_then(Value::as_array)
        .is_some_and(|a| {
            a.iter().filter_map(Value::as_str).any(|w| {
                if fold {
                    w.to_lowercase() == needle.to_lowercase()
                } else {
                    w == needle
                }
            })
        })
}

/// 0, 1 or 2 typos for a word of `len` against `minWordSizeForTypos` (5 and 9 by default);
/// none when typos are off.
fn typos_for_length(settings: Option<&Value>, len: usize) -> u8 {
    if typo_setting(settings, &["enabled"]) == Some(&Value::Bool(false)) {
        return 0;
    }
    let size = |name: &str, default: u64| {
        typo_setting(settings, &["minWordSizeForTypos", name])
            .and_then(Value::as_u64)
            .unwrap_or(default) as usize
    };
    if len >= size("twoTypos", 9) {
        2
    } else if len >= size("oneTypo", 5) {
        1
    } else {
        0
    }
}

/// How many typos `word` may have under `typoTolerance` (see the search reference, 3.5):
/// by its length in characters; none in `disableOnWords`, nor for numbers when
/// `disableOnNumbers` is on.
fn typo_budget(settings: Option<&Value>, word: &str) -> u8 {
    let numeric = word
        .chars()
        .all(|c| c.is_ascii_digit() || c.is_ascii_punctuation());
    if typo_list_has(settings, "disableOnWords", word)
        || (numeric && typo_setting(settings, &["disableOnNumbers"]) == Some(&Value::Bool(true)))
    {
        return 0;
    }
    typos_for_length(settings, word.chars().count())
}

/// How many words of a query count (Meilisearch reads the first 10).
const MAX_QUERY_WORDS: usize = 10;

/// The query as tantivy terms, with a lower bound of how many live documents are candidates.
struct Terms {
    groups: Vec<Group>,
    /// Per group: its position in the query and how many positions it spans.
    positions: Vec<u32>,
    spans: Vec<u32>,
    negatives: Vec<Group>,
    /// The order `matchingStrategy` drops groups in (the others are never dropped); `None`
    /// for `all`.
    drop_order: Option<Vec<usize>>,
    lower_bound: u64,
    /// The positive words for highlighting.
    words: Vec<format::QueryWord>,
    /// Whether the typo derivations were looked up (see [`Index::derive_typos`]).
    derived: bool,
}

impl Terms {
    fn is_placeholder(&self) -> bool {
        self.groups.is_empty()
    }

    /// Whether some word has typo derivations.
    fn has_typos(&self) -> bool {
        self.groups
            .iter()
            .any(|g| matches!(g, Group::Word { typos, split, .. } if !typos.is_empty() || split.is_some()))
    }

    /// The groups left after `words` dropped the first `dropped` of its order.
    fn kept(&self, dropped: usize) -> Vec<usize> {
        let gone = self
            .drop_order
            .as_deref()
            .map_or(&[][..], |o| &o[..dropped]);
        (0..self.groups.len())
            .filter(|i| !gone.contains(i))
            .collect()
    }

    /// How many groups `words` may drop.
    fn droppable(&self) -> usize {
        self.drop_order.as_ref().map_or(0, Vec::len)
    }

    /// Documents holding every group of `kept`, words reaching as far as `reach`.
    fn kept_query(&self, kept: &[usize], reach: Reach) -> Box<dyn Query> {
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
    fn universe_query(&self, reach: Reach) -> Box<dyn Query> {
        self.kept_query(&self.kept(self.droppable()), reach)
    }

    /// As tantivy-free terms for the ranking rules.
    fn query_terms(&self) -> Vec<rank::QueryTerm> {
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
                    Group::Phrase(words) => (
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
    /// whether or not the index holds such derivations; more when a split or concatenation
    /// costs more).
    fn max_typos(&self) -> Vec<u8> {
        self.groups
            .iter()
            .map(|g| match g {
                Group::Word {
                    budget,
                    split,
                    typos,
                    ..
                } => typos
                    .iter()
                    .map(|(_, n)| *n)
                    .chain([*budget, split.is_some() as u8])
                    .max()
                    .unwrap_or(0),
                Group::Phrase(_) => 0,
            })
            .collect()
    }
}

/// How many completions a prefix expands to (the most frequent ones).
const PREFIX_EXPANSIONS: usize = 50;
/// How many dictionary entries a prefix scan reads per segment, at most.
const PREFIX_SCAN: usize = 50_000;

/// How far a word reaches: without typos (the word, its prefix completions, its synonyms),
/// or with its typo derivations too. With `typo` ranked right after `words`, documents a
/// level reaches without typos come before those needing them.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Reach {
    Completions,
    Typos,
}

/// A part of the query as a query: the word (with its alternatives up to `reach`), or the
/// phrase.
fn group_query(group: &Group, reach: Reach) -> Box<dyn Query> {
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
            if exact.len() == 1 && typos.is_empty() && synonyms.is_empty() && split.is_none() {
                return term(&exact[0]);
            }
            let sequence = |seq: &Vec<Term>| -> (Occur, Box<dyn Query>) {
                if seq.len() == 1 {
                    (Occur::Should, term(&seq[0]))
                } else {
                    (
                        Occur::Should,
                        Box::new(tantivy::query::PhraseQuery::new(seq.clone())),
                    )
                }
            };
            Box::new(BooleanQuery::new(
                exact
                    .iter()
                    .map(|t| (Occur::Should, term(t)))
                    .chain(synonyms.iter().map(sequence))
                    .chain(typos.iter().map(|(t, _)| (Occur::Should, term(t))))
                    .chain(split.map(sequence))
                    .collect(),
            ))
        }
        Group::Phrase(g) if g.len() == 1 => term(&g[0].1),
        Group::Phrase(g) => Box::new(tantivy::query::PhraseQuery::new_with_offset(g.clone())),
    }
}

/// Documents holding any part (`Should`) or every part (`Must`), words reaching as far as
/// `reach`.
fn groups_query(groups: &[Group], occur: Occur, reach: Reach) -> Box<dyn Query> {
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

/// Whether the index searches the query's last word as a prefix (`prefixSearch`).
fn prefix_search(settings: Option<&Value>) -> bool {
    settings.is_none_or(|s| s["prefixSearch"].as_str() != Some("disabled"))
}

/// The normalized words of `text`, stop words and separators dropped.
fn plain_words(tokenizer: &charabia::Tokenizer, text: &str) -> Vec<String> {
    tokens::words(tokenizer, text)
        .into_iter()
        .filter(|w| !w.stop)
        .map(|w| w.text)
        .collect()
}

/// A part of a query: a word, or a quoted phrase; `-` before it negates it.
struct Part {
    words: Vec<tokens::Word>,
    phrase: bool,
    negative: bool,
}

/// A query cut into parts, and whether it ends with a word (not a space, a quote or other
/// separator: then its last word is a prefix).
struct Parsed {
    parts: Vec<Part>,
    ends_with_word: bool,
}

/// Cuts a query into words and `"quoted phrases"` with charabia, each maybe negated by a `-`
/// that starts the query or follows a space. An unclosed quote runs to the end. Positions
/// are the words' query positions (stop words count; +8 across hard separators).
fn parse_query(tokenizer: &charabia::Tokenizer, text: &str) -> Parsed {
    let mut parts: Vec<Part> = Vec::new();
    let mut phrase: Option<Part> = None;
    let mut negative_next = false;
    let mut after_space = true;
    let mut ends_with_word = false;
    tokens::walk(tokenizer, text, 0, |piece| match piece {
        tokens::Piece::Separator(sep) => {
            ends_with_word = false;
            for c in text[sep.start..sep.end].chars() {
                if c == '"' {
                    match phrase.take() {
                        Some(p) => parts.push(p),
                        None => {
                            phrase = Some(Part {
                                words: Vec::new(),
                                phrase: true,
                                negative: negative_next,
                            })
                        }
                    }
                    negative_next = false;
                } else {
                    negative_next = c == '-' && after_space && phrase.is_none();
                }
                after_space = c.is_whitespace();
            }
        }
        tokens::Piece::Word(w) => {
            ends_with_word = true;
            after_space = false;
            match &mut phrase {
                Some(p) => p.words.push(w),
                None => parts.push(Part {
                    words: vec![w],
                    phrase: false,
                    negative: std::mem::take(&mut negative_next),
                }),
            }
        }
    });
    if let Some(p) = phrase {
        parts.push(p);
        ends_with_word = false;
    }
    Parsed {
        parts,
        ends_with_word,
    }
}

impl Index {
    fn terms(
        &self,
        searcher: &tantivy::Searcher,
        settings: Option<&Value>,
        text: &str,
        prefix_search: bool,
        strategy: Option<&str>,
    ) -> Result<Terms> {
        let analyzer = tokens::Analyzer::from_settings(settings);
        let parsed = analyzer.with(|tk| parse_query(tk, text));
        let term = |w: &str| Term::from_field_text(self.fields.words, w);
        let mut groups: Vec<Group> = Vec::new();
        let mut positions: Vec<u32> = Vec::new();
        let mut spans: Vec<u32> = Vec::new();
        let mut negatives: Vec<Group> = Vec::new();
        let mut words: Vec<format::QueryWord> = Vec::new();
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
                    negatives.push(Group::Phrase(kept));
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
                words.extend(
                    part.words
                        .iter()
                        .filter(|w| !w.stop)
                        .map(|w| format::QueryWord {
                            word: w.text.clone(),
                            prefix: false,
                            typos: Vec::new(),
                        }),
                );
                let last = part.words.last().map_or(first, |w| w.position);
                positions.push(first);
                spans.push(last - first + 1);
                groups.push(Group::Phrase(kept));
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
                budget: typo_budget(settings, &w.text),
            });
            words.push(format::QueryWord {
                word: w.text.clone(),
                prefix: false,
                typos: Vec::new(),
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
                    exact.extend(self.completions(searcher, &w.word)?);
                    w.prefix = true;
                }
            }
        }
        // Synonyms, as the `synonyms` setting maps them (keys compared as their normalized
        // words, tokenized once per query). A key of two or three words matches as many
        // consecutive query words; each of them then also matches the synonyms.
        if let Some(map) = settings.and_then(|s| s["synonyms"].as_object()) {
            // Keys and values as normalized words, with one tokenizer.
            let keys: Vec<(Vec<String>, Vec<Vec<String>>)> = analyzer.with(|tk| {
                map.iter()
                    .map(|(k, v)| {
                        let values = v
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_str)
                            .take(50)
                            .map(|v| plain_words(tk, v))
                            .collect();
                        (plain_words(tk, k), values)
                    })
                    .collect()
            });
            let word_of = |g: &Group| match g {
                Group::Word { word, .. } => Some(*word),
                Group::Phrase(_) => None,
            };
            for start in 0..groups.len() {
                for len in 1..=3 {
                    let end = start + len;
                    if end > groups.len() {
                        break;
                    }
                    let Some(run): Option<Vec<usize>> =
                        groups[start..end].iter().map(word_of).collect()
                    else {
                        break;
                    };
                    let consecutive =
                        (start + 1..end).all(|i| positions[i] == positions[i - 1] + 1);
                    if !consecutive {
                        break;
                    }
                    let typed: Vec<String> = run.iter().map(|w| words[*w].word.clone()).collect();
                    for (_, values) in keys.iter().filter(|(k, _)| *k == typed) {
                        for seq in values {
                            if seq.is_empty() || *seq == typed {
                                continue;
                            }
                            for g in &mut groups[start..end] {
                                if let Group::Word { synonyms, word, .. } = g {
                                    words[*word].typos.extend(seq.iter().cloned());
                                    synonyms.push(seq.iter().map(|x| term(x)).collect());
                                }
                            }
                        }
                    }
                }
            }
        }
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
                Group::Phrase(_) => 0,
            };
            frequency.push(f);
        }
        let has_phrase = groups.iter().any(|g| matches!(g, Group::Phrase(_)));
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
            derived: false,
        })
    }

    /// Looks up the typo derivations of every word with a budget (once): the fast path only
    /// needs them when the exact words leave the page short or the count must be walked.
    fn derive_typos(&self, searcher: &tantivy::Searcher, terms: &mut Terms) -> Result<()> {
        if terms.derived {
            return Ok(());
        }
        terms.derived = true;
        let exists = |w: &str| -> Result<u64> {
            searcher
                .doc_freq(&Term::from_field_text(self.fields.words, w))
                .map_err(tv)
        };
        // Two or three query words written as one: the concatenation matches each of them,
        // at one typo each (Meilisearch's n-grams cost n). Not with the prefix word.
        let mut ngrams: Vec<(usize, Term)> = Vec::new();
        for start in 0..terms.groups.len() {
            let mut joined = String::new();
            for end in start..(start + 3).min(terms.groups.len()) {
                let Group::Word { word, .. } = &terms.groups[end] else {
                    break;
                };
                let qw = &terms.words[*word];
                if qw.prefix
                    || (end > start && terms.positions[end] != terms.positions[end - 1] + 1)
                {
                    break;
                }
                joined.push_str(&qw.word);
                if end > start && exists(&joined)? > 0 {
                    let t = Term::from_field_text(self.fields.words, &joined);
                    ngrams.extend((start..=end).map(|i| (i, t.clone())));
                }
            }
        }
        for (gi, g) in terms.groups.iter_mut().enumerate() {
            if let Group::Word {
                typos,
                word,
                budget,
                split,
                ..
            } = g
            {
                let qw = &mut terms.words[*word];
                if *budget > 0 {
                    *typos = self.typo_derivations(searcher, &qw.word, *budget, qw.prefix)?;
                }
                typos.extend(
                    ngrams
                        .iter()
                        .filter(|(i, _)| *i == gi)
                        .map(|(_, t)| (t.clone(), 1)),
                );
                // One word written as two: the split whose rarer half is most frequent, at
                // one typo, even where typos are off.
                if !qw.prefix {
                    let mut best: Option<(u64, usize)> = None;
                    for (i, _) in qw.word.char_indices().skip(1) {
                        let f = exists(&qw.word[..i])?.min(exists(&qw.word[i..])?);
                        if f > 0 && best.is_none_or(|(b, _)| f > b) {
                            best = Some((f, i));
                        }
                    }
                    if let Some((_, i)) = best {
                        let halves = [&qw.word[..i], &qw.word[i..]];
                        *split = Some(
                            halves
                                .iter()
                                .map(|h| Term::from_field_text(self.fields.words, h))
                                .collect(),
                        );
                        qw.typos.extend(halves.iter().map(|h| h.to_string()));
                    }
                }
                qw.typos.extend(
                    typos
                        .iter()
                        .filter_map(|(t, _)| t.value().as_str().map(str::to_string)),
                );
            }
        }
        Ok(())
    }

    /// `allowed` (all documents when `None`) without those holding a negated part of the
    /// query (`-word`, `-"a phrase"`), as a filter would remove them.
    fn without_negated(
        &self,
        rtxn: &heed::RoTxn,
        searcher: &tantivy::Searcher,
        terms: &Terms,
        allowed: Option<Arc<RoaringBitmap>>,
    ) -> Result<Option<Arc<RoaringBitmap>>> {
        if terms.negatives.is_empty() {
            return Ok(allowed);
        }
        let query = groups_query(&terms.negatives, Occur::Should, Reach::Completions);
        let excluded: RoaringBitmap = iids_of(searcher, query.as_ref())?.into_iter().collect();
        let base = self.allowed_or_all(rtxn, &allowed)?;
        Ok(Some(Arc::new(base.as_ref() - &excluded)))
    }

    /// The documents a filter let through, or all of them.
    fn allowed_or_all(
        &self,
        rtxn: &heed::RoTxn,
        allowed: &Option<Arc<RoaringBitmap>>,
    ) -> Result<Arc<RoaringBitmap>> {
        match allowed {
            Some(a) => Ok(a.clone()),
            None => self.all_ids(rtxn),
        }
    }

    /// Indexed words within `budget` typos of `word` (Damerau-Levenshtein; of a prefix of
    /// them when `prefix`), the word itself aside. A derivation keeps the first letter, except
    /// that with a 2-typo budget a first-letter change alone (distance 1) counts as 2 typos.
    fn typo_derivations(
        &self,
        searcher: &tantivy::Searcher,
        word: &str,
        budget: u8,
        prefix: bool,
    ) -> Result<Vec<(Term, u8)>> {
        let builder = lev_builder(budget);
        let check = if prefix {
            builder.build_prefix_dfa(word)
        } else {
            builder.build_dfa(word)
        };
        let Some(first) = word.chars().next() else {
            return Ok(Vec::new());
        };
        let rest = &word[first.len_utf8()..];
        let mut one: Vec<Vec<u8>> = Vec::new();
        let mut two: Vec<Vec<u8>> = Vec::new();
        // Derivations keep the first letter: the automaton only walks the part of the
        // dictionary starting with it, which is where nearly all of the cost would go.
        let low = first.to_string();
        let high = char::from_u32(first as u32 + 1).map(|c| c.to_string());
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(self.fields.words).map_err(tv)?;
            let mut builder = inverted.terms().search(Lev(&check)).ge(low.as_bytes());
            if let Some(high) = &high {
                builder = builder.lt(high.as_bytes());
            }
            let mut stream = builder
                .into_stream()
                .map_err(|e| Error::internal(e.to_string()))?;
            let mut visited = 0;
            while visited < TYPO_SCAN && stream.advance() {
                visited += 1;
                let key = stream.key();
                let Ok(text) = std::str::from_utf8(key) else {
                    continue;
                };
                if text == word || (prefix && text.starts_with(word)) {
                    continue;
                }
                let distance = match check.eval(key) {
                    levenshtein_automata::Distance::Exact(d) => d,
                    levenshtein_automata::Distance::AtLeast(_) => continue,
                };
                let list = match distance {
                    1 if one.len() < ONE_TYPO_CAP => &mut one,
                    2 if two.len() < TWO_TYPO_CAP => &mut two,
                    _ => continue,
                };
                if !list.iter().any(|k| k == key) {
                    list.push(key.to_vec());
                }
                if one.len() >= ONE_TYPO_CAP && (budget < 2 || two.len() >= TWO_TYPO_CAP) {
                    break;
                }
            }
            // With two typos to spend, one edit on the first letter costs both: a different
            // first letter, a letter added before it, the first letter dropped, or the first
            // two swapped. Few enough to look up one by one.
            if budget >= 2 && two.len() < TWO_TYPO_CAP {
                let mut variants: Vec<String> = Vec::new();
                for c in ('a'..='z').chain('0'..='9') {
                    if c != first {
                        variants.push(format!("{c}{rest}"));
                        variants.push(format!("{c}{word}"));
                    }
                }
                variants.push(rest.to_string());
                let mut chars = rest.chars();
                if let Some(second) = chars.next() {
                    variants.push(format!("{second}{first}{}", chars.as_str()));
                }
                for v in variants {
                    if v.is_empty() || two.len() >= TWO_TYPO_CAP {
                        continue;
                    }
                    if prefix {
                        let mut stream = inverted
                            .terms()
                            .range()
                            .ge(v.as_bytes())
                            .into_stream()
                            .map_err(|e| Error::internal(e.to_string()))?;
                        let mut taken = 0;
                        while taken < 10 && two.len() < TWO_TYPO_CAP && stream.advance() {
                            let key = stream.key();
                            if !key.starts_with(v.as_bytes()) {
                                break;
                            }
                            if !two.iter().any(|k| k == key) && !one.iter().any(|k| k == key) {
                                two.push(key.to_vec());
                            }
                            taken += 1;
                        }
                    } else if inverted
                        .terms()
                        .get(v.as_bytes())
                        .map_err(|e| Error::internal(e.to_string()))?
                        .is_some()
                        && !two.iter().any(|k| k.as_slice() == v.as_bytes())
                    {
                        two.push(v.into_bytes());
                    }
                }
            }
        }
        let term = |k: Vec<u8>, n: u8| {
            String::from_utf8(k)
                .ok()
                .map(|w| (Term::from_field_text(self.fields.words, &w), n))
        };
        Ok(one
            .into_iter()
            .filter_map(|k| term(k, 1))
            .chain(two.into_iter().filter_map(|k| term(k, 2)))
            .collect())
    }

    /// The most frequent indexed words starting with `prefix` (the word itself aside).
    fn completions(&self, searcher: &tantivy::Searcher, prefix: &str) -> Result<Vec<Term>> {
        let mut freq: std::collections::HashMap<Vec<u8>, u64> = Default::default();
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(self.fields.words).map_err(tv)?;
            let mut stream = inverted
                .terms()
                .range()
                .ge(prefix.as_bytes())
                .into_stream()
                .map_err(|e| Error::internal(e.to_string()))?;
            let mut read = 0;
            while stream.advance() && read < PREFIX_SCAN {
                let key = stream.key();
                if !key.starts_with(prefix.as_bytes()) {
                    break;
                }
                if key.len() > prefix.len() {
                    *freq.entry(key.to_vec()).or_default() += stream.value().doc_freq as u64;
                }
                read += 1;
            }
        }
        let mut found: Vec<(Vec<u8>, u64)> = freq.into_iter().collect();
        found.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        found.truncate(PREFIX_EXPANSIONS);
        Ok(found
            .into_iter()
            .filter_map(|(k, _)| String::from_utf8(k).ok())
            .map(|w| Term::from_field_text(self.fields.words, &w))
            .collect())
    }

    /// Every internal id, cached per generation.
    pub(super) fn all_ids(&self, rtxn: &heed::RoTxn) -> Result<Arc<RoaringBitmap>> {
        let generation = self.store.get_u64(rtxn, keys::GENERATION)?;
        if let Some(all) = self.columns.lock().unwrap().all_at(generation) {
            return Ok(all);
        }
        let mut all = RoaringBitmap::new();
        for item in self.store.docs.iter(rtxn).map_err(heed_error)? {
            all.insert(item.map_err(heed_error)?.0);
        }
        let all = Arc::new(all);
        self.columns
            .lock()
            .unwrap()
            .put_all(generation, all.clone());
        Ok(all)
    }

    /// The value columns of `paths` at `rtxn`'s generation, built in one pass for those not
    /// cached yet.
    pub(super) fn columns(&self, rtxn: &heed::RoTxn, paths: &[String]) -> Result<Vec<Arc<Column>>> {
        let generation = self.store.get_u64(rtxn, keys::GENERATION)?;
        let mut found: Vec<Option<Arc<Column>>> = {
            let cache = self.columns.lock().unwrap();
            paths.iter().map(|p| cache.get(generation, p)).collect()
        };
        let missing: Vec<usize> = (0..paths.len()).filter(|i| found[*i].is_none()).collect();
        if !missing.is_empty() {
            let mut builders: Vec<facets::ColumnBuilder> = missing
                .iter()
                .map(|i| facets::ColumnBuilder::new(&paths[*i]))
                .collect();
            let fields = self.fields_map.read().unwrap().clone();
            for item in self.store.docs.iter(rtxn).map_err(heed_error)? {
                let (iid, bytes) = item.map_err(heed_error)?;
                let doc = crate::codec::decode_fields(bytes, &fields, |name| {
                    builders.iter().any(|b| b.reads(name))
                })?;
                for b in &mut builders {
                    b.push(iid, &doc);
                }
            }
            let mut cache = self.columns.lock().unwrap();
            for (i, b) in missing.into_iter().zip(builders) {
                let column = Arc::new(b.finish());
                cache.put(generation, &paths[i], column.clone());
                found[i] = Some(column);
            }
        }
        Ok(found.into_iter().map(|c| c.expect("built above")).collect())
    }

    /// Search: see the module's documentation. Each step below is one module.
    pub fn search(&self, q: &SearchQuery) -> Result<Vec<u8>> {
        let started = Instant::now();
        let rtxn = self.store.read()?;
        let settings = self.stored_settings(&rtxn)?;
        let settings = settings.as_ref();
        // Parse the request: the filter first, then the parameters checked against settings
        // (in this order, which decides the error a request with several mistakes gets).
        let allowed = self.filtered(&rtxn, settings, q.filter.as_ref(), q.contains_filter)?;
        let filtered_at = Instant::now();
        let request = self.parse_request(&rtxn, settings, q)?;
        // Candidates: the query's words, and the allowed set without the negated words.
        let query_text = q.q.clone().unwrap_or_default();
        let searcher = self.reader.searcher();
        let (mut terms, allowed) = self.keyword_candidates(
            &rtxn,
            &searcher,
            settings,
            &query_text,
            q.matching_strategy.as_deref(),
            allowed,
        )?;
        let placeholder = terms.is_placeholder();
        let (rank_rules, key_specs) = rule_list(
            &request.rules,
            &request.sort_keys,
            placeholder,
            terms.drop_order.is_none(),
        );
        let search_on = search_on(settings, q.attributes_to_search_on.as_deref())?;
        // Ranking, distinct, facets and the page.
        let ordered = self.order(
            &Order {
                rtxn: &rtxn,
                searcher: &searcher,
                settings,
                allowed,
                rules: &rank_rules,
                key_specs: &key_specs,
                search_on: search_on.as_deref(),
                distinct: request.distinct.as_deref(),
                facet_names: request.facet_names.as_deref(),
                threshold: q.ranking_score_threshold.filter(|t| *t > 0.0),
                key_details: q.show_ranking_score_details,
                scores: q.show_ranking_score || q.show_ranking_score_details,
                window: request.window,
                max_total_hits: request.max_total_hits,
                started,
            },
            &mut terms,
        )?;
        let ranked_at = Instant::now();
        // Highlighting reads the typo derivations.
        if !placeholder && (printer::formatting(q) || q.show_matches_position) {
            self.derive_typos(&searcher, &mut terms)?;
        }
        let result = SearchResult {
            hits: ordered.page,
            candidates: ordered.candidates,
            max_total_hits: request.max_total_hits,
            facets: ordered.facets,
            query: query_text,
            words: std::mem::take(&mut terms.words),
            rules: rank_rules,
            key_specs,
            geo_point: request.geo_point(),
            timings: Timings {
                started,
                filtered: filtered_at,
                ranked: ranked_at,
            },
        };
        Printer::new(self, &rtxn, settings, q).print(result)
    }
}

/// `attributesToSearchOn`, checked against `searchableAttributes`: `None` when absent, empty,
/// or `*`.
fn search_on(settings: Option<&Value>, asked: Option<&[String]>) -> Result<Option<Vec<String>>> {
    let Some(asked) = asked.filter(|a| !a.is_empty() && !a.iter().any(|x| x == "*")) else {
        return Ok(None);
    };
    if let Some(searchable) = super::searchable_of(settings) {
        for attr in asked {
            let ok = searchable.iter().any(|s| within(attr, s));
            if !ok {
                return Err(Error::new(
                    "invalid_search_attributes_to_search_on",
                    format!(
                        "Attribute `{attr}` is not searchable. Available searchable attributes are: `{}`.",
                        searchable.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(Some(asked.to_vec()))
}
