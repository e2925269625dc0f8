//! Search and facet search on an [`Index`]: candidates (query ∩ filter), their order (the
//! ranking rules), distinct, facets, and the response JSON.
//!
//! A query is cut into words and phrases with charabia (see [`crate::tokens`]); each word
//! gets its alternatives (prefix completions of the last word, synonyms, typo derivations).
//! Keyword candidates are ranked by the relevancy rules computed per document from the
//! positions tantivy stores (see [`rank`]), level by level while `words` and `typo` lead the
//! rules, so a page usually ranks only the documents keeping every query word without typos.
//! Sort keys and distinct values come from the value columns (see [`crate::facets`]). A
//! placeholder search needs no ranking: internal-id order, or the value index for one sort
//! key.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::time::Instant;

use api_types::{Error, Result};
use roaring::RoaringBitmap;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use tantivy::collector::{Count, FilterCollector};
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::Term;

use super::{project, retrieve, string_list, tv, Index};
use crate::facets::{self, Column, FacetOrder, Item};
use crate::filter::eval::within;
use crate::filter::rules;
use crate::format;
use crate::sort::{self, SortKey};
use crate::store::{heed_error, keys};
use crate::tokens;

mod ranking;
use ranking::{
    self as rank, compare_ranked, ranking_rules, rule_list, score_details, search_cutoff, steps,
    LevelDocs, Ranked,
};

/// Query of `search` (the normalized form the TypeScript layer sends).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchQuery {
    #[serde(default)]
    pub q: Option<String>,
    #[serde(default)]
    pub offset: usize,
    #[serde(default = "super::default_limit")]
    pub limit: usize,
    #[serde(default)]
    pub page: Option<usize>,
    #[serde(default)]
    pub hits_per_page: Option<usize>,
    #[serde(default)]
    pub attributes_to_retrieve: Option<Vec<String>>,
    #[serde(default)]
    pub retrieve_vectors: bool,
    /// A filter (string or array form); errors use `invalid_search_filter`.
    #[serde(default)]
    pub filter: Option<Value>,
    /// The `containsFilter` experimental feature: `CONTAINS` is refused without it.
    #[serde(default)]
    pub contains_filter: bool,
    /// `attr:asc|desc` and `_geoPoint(lat, lng):asc|desc` keys.
    #[serde(default)]
    pub sort: Option<Vec<String>>,
    /// Attribute names or patterns to compute `facetDistribution`/`facetStats` for.
    #[serde(default)]
    pub facets: Option<Vec<String>>,
    /// Overrides the index's `distinctAttribute` (must be filterable).
    #[serde(default)]
    pub distinct: Option<String>,
    #[serde(default)]
    pub attributes_to_highlight: Option<Vec<String>>,
    #[serde(default)]
    pub attributes_to_crop: Option<Vec<String>>,
    #[serde(default = "default_crop_length")]
    pub crop_length: usize,
    #[serde(default = "default_crop_marker")]
    pub crop_marker: String,
    #[serde(default = "default_pre_tag")]
    pub highlight_pre_tag: String,
    #[serde(default = "default_post_tag")]
    pub highlight_post_tag: String,
    #[serde(default)]
    pub show_matches_position: bool,
    /// `last` (default), `all` or `frequency`.
    #[serde(default)]
    pub matching_strategy: Option<String>,
    /// Adds `performanceDetails`: the time each step took.
    #[serde(default)]
    pub show_performance_details: bool,
    /// Restricts the query to these searchable attributes.
    #[serde(default)]
    pub attributes_to_search_on: Option<Vec<String>>,
    #[serde(default)]
    pub show_ranking_score: bool,
    #[serde(default)]
    pub show_ranking_score_details: bool,
    /// Hits scoring below it are left out (and not counted).
    #[serde(default)]
    pub ranking_score_threshold: Option<f64>,
}

fn default_crop_length() -> usize {
    10
}

fn default_crop_marker() -> String {
    "…".to_string()
}

fn default_pre_tag() -> String {
    "<em>".to_string()
}

fn default_post_tag() -> String {
    "</em>".to_string()
}

/// Query of `facet_search`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FacetSearchQuery {
    pub facet_name: String,
    #[serde(default)]
    pub facet_query: Option<String>,
    #[serde(default)]
    pub q: Option<String>,
    #[serde(default)]
    pub filter: Option<Value>,
    #[serde(default)]
    pub contains_filter: bool,
    /// Counts documents once per distinct value when the index has a `distinctAttribute`.
    #[serde(default)]
    pub exhaustive_facet_count: bool,
    #[serde(default)]
    pub matching_strategy: Option<String>,
    #[serde(default)]
    pub attributes_to_search_on: Option<Vec<String>>,
}

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

/// `faceting.maxValuesPerFacet` (default 100).
fn max_values_per_facet(settings: Option<&Value>) -> usize {
    settings
        .and_then(|s| s["faceting"]["maxValuesPerFacet"].as_u64())
        .unwrap_or(100) as usize
}

/// `faceting.sortFacetValuesBy` for `facet` (its own entry, else `*`, else alpha).
fn facet_order(settings: Option<&Value>, facet: &str) -> FacetOrder {
    let by = settings.map(|s| &s["faceting"]["sortFacetValuesBy"]);
    let pick = by
        .and_then(|b| b.get(facet).or_else(|| b.get("*")))
        .and_then(Value::as_str);
    match pick {
        Some("count") => FacetOrder::Count,
        _ => FacetOrder::Alpha,
    }
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

    /// Search: see the module's documentation.
    pub fn search(&self, q: &SearchQuery) -> Result<Vec<u8>> {
        let started = Instant::now();
        let rtxn = self.store.read()?;
        let settings = self.stored_settings(&rtxn)?;
        let settings = settings.as_ref();
        let allowed = self.allowed_ids(
            &rtxn,
            q.filter.as_ref(),
            settings,
            "invalid_search_filter",
            q.contains_filter,
        )?;
        let filtered_at = Instant::now();
        let rules = ranking_rules(settings);
        let sort_keys = match q.sort.as_deref() {
            Some(specs) if !specs.is_empty() => {
                if !rules.iter().any(|r| r == "sort") {
                    return Err(Error::new(
                        "invalid_search_sort",
                        "You must specify where `sort` is listed in the rankingRules setting to use the sort parameter at search time.",
                    ));
                }
                let sortable = string_list(settings, "sortableAttributes").unwrap_or_default();
                sort::parse(specs, &sortable, "invalid_search_sort")?
            }
            _ => Vec::new(),
        };
        let filter_rules = rules::rules_of(settings);
        let distinct = match q.distinct.as_deref() {
            Some(field) => {
                if let Some(m) = rules::distinct_error(&filter_rules, field) {
                    return Err(Error::new("invalid_search_distinct", m));
                }
                Some(field.to_string())
            }
            None => settings
                .and_then(|s| s["distinctAttribute"].as_str())
                .map(str::to_string),
        };
        let facet_names = match &q.facets {
            Some(requested) => Some(self.facet_names(&rtxn, requested, &filter_rules)?),
            None => None,
        };
        let max_total_hits = settings
            .and_then(|s| s["pagination"]["maxTotalHits"].as_u64())
            .unwrap_or(1000) as usize;
        let (offset, limit) = match (q.page, q.hits_per_page) {
            (None, None) => (q.offset, q.limit),
            (page, hpp) => {
                let hpp = hpp.unwrap_or(20);
                let page = page.unwrap_or(1);
                (
                    page.saturating_sub(1).saturating_mul(hpp),
                    if page == 0 { 0 } else { hpp },
                )
            }
        };
        let limit = limit.min(max_total_hits.saturating_sub(offset));
        let query_text = q.q.clone().unwrap_or_default();
        let searcher = self.reader.searcher();
        let prefix = prefix_search(settings);
        let mut terms = self.terms(
            &searcher,
            settings,
            &query_text,
            prefix,
            q.matching_strategy.as_deref(),
        )?;
        let placeholder = terms.is_placeholder();
        let allowed = self.without_negated(&rtxn, &searcher, &terms, allowed)?;
        let (rank_rules, key_specs) =
            rule_list(&rules, &sort_keys, placeholder, terms.drop_order.is_none());
        let search_on = search_on(settings, q.attributes_to_search_on.as_deref())?;
        let threshold = q.ranking_score_threshold.filter(|t| *t > 0.0);
        let mut facet_json = None;
        // The page's ranked hits (scores and keys for the details) and the candidate count.
        let (page, candidates): (Vec<Ranked>, usize) = if placeholder && key_specs.is_empty() {
            // Placeholder search in internal-id order.
            let set = self.allowed_or_all(&rtxn, &allowed)?;
            if let (Some(names), None) = (&facet_names, &distinct) {
                facet_json = Some(self.facet_json(&rtxn, names, &set, settings)?);
            }
            let mut total = set.len() as usize;
            let iids: Vec<u32> = match (&distinct, &allowed) {
                (Some(field), _) => {
                    let column = self.columns(&rtxn, std::slice::from_ref(field))?.remove(0);
                    let order = apply_distinct(&column, set.iter().collect(), |i| i);
                    total = order.len();
                    if let Some(names) = &facet_names {
                        let kept: RoaringBitmap = order.iter().copied().collect();
                        facet_json = Some(self.facet_json(&rtxn, names, &kept, settings)?);
                    }
                    order.into_iter().skip(offset).take(limit).collect()
                }
                (None, Some(allowed)) => allowed.iter().skip(offset).take(limit).collect(),
                (None, None) => {
                    let mut iids = Vec::new();
                    let docs = self.store.docs.iter(&rtxn).map_err(heed_error)?;
                    for item in docs.skip(offset).take(limit) {
                        iids.push(item.map_err(heed_error)?.0);
                    }
                    iids
                }
            };
            (iids.into_iter().map(Ranked::plain).collect(), total)
        } else if let (true, None, [SortKey::Field { name, asc }]) =
            (placeholder, &distinct, key_specs.as_slice())
        {
            // One sort key on a placeholder search: read the page off the value index.
            let set = self.allowed_or_all(&rtxn, &allowed)?;
            let column = self.columns(&rtxn, std::slice::from_ref(name))?.remove(0);
            let iids = facets::sorted_page(&column, *asc, &set, offset.saturating_add(limit));
            if let Some(names) = &facet_names {
                facet_json = Some(self.facet_json(&rtxn, names, &set, settings)?);
            }
            let mut page: Vec<Ranked> = iids.into_iter().skip(offset).map(Ranked::plain).collect();
            if q.show_ranking_score_details {
                let ids: Vec<u32> = page.iter().map(|r| r.iid).collect();
                let keys = self.sort_keys(&rtxn, &key_specs, &ids)?;
                for (r, k) in page.iter_mut().zip(keys.chunks(1)) {
                    r.keys = k.to_vec();
                }
            }
            (page, set.len() as usize)
        } else {
            // Everything is ranked when the whole order matters: distinct, a score threshold,
            // facets over exactly the matching documents.
            let need = offset.saturating_add(limit);
            let whole = distinct.is_some() || threshold.is_some() || facet_names.is_some();
            // Scores count the typos a word may have, splits and concatenations included.
            if q.show_ranking_score || q.show_ranking_score_details {
                self.derive_typos(&searcher, &mut terms)?;
            }
            let (mut ranked, complete) = if placeholder {
                // Sort keys alone order a placeholder search.
                let set = self.allowed_or_all(&rtxn, &allowed)?;
                let ids: Vec<u32> = set.iter().collect();
                let keys = self.sort_keys(&rtxn, &key_specs, &ids)?;
                let mut all: Vec<Ranked> = ids
                    .into_iter()
                    .zip(keys.chunks(key_specs.len().max(1)))
                    .map(|(iid, k)| Ranked {
                        iid,
                        verdict: rank::Verdict::default(),
                        keys: k.to_vec(),
                    })
                    .collect();
                let order = steps(&rank_rules);
                let cmp = |a: &Ranked, b: &Ranked| compare_ranked(&order, a, b);
                if !whole && need > 0 && need < all.len() {
                    all.select_nth_unstable_by(need - 1, cmp);
                    all.truncate(need);
                }
                all.sort_unstable_by(cmp);
                let complete = whole || all.len() == set.len() as usize;
                (all, complete)
            } else {
                self.rank(
                    &rtxn,
                    &searcher,
                    &mut terms,
                    allowed.as_deref(),
                    settings,
                    search_on.as_deref(),
                    &rank_rules,
                    &key_specs,
                    (!whole).then_some(need),
                    started + search_cutoff(settings),
                )?
            };
            if let Some(t) = threshold {
                ranked.retain(|r| r.verdict.score() >= t);
            }
            let ranked = match &distinct {
                Some(field) => {
                    let column = self.columns(&rtxn, std::slice::from_ref(field))?.remove(0);
                    let mut slots: Vec<Option<Ranked>> = ranked.into_iter().map(Some).collect();
                    let order = apply_distinct(&column, (0..slots.len()).collect(), |i| {
                        slots[i].as_ref().map_or(0, |r| r.iid)
                    });
                    order.into_iter().filter_map(|i| slots[i].take()).collect()
                }
                None => ranked,
            };
            if let Some(names) = &facet_names {
                let set: RoaringBitmap = ranked.iter().map(|r| r.iid).collect();
                facet_json = Some(self.facet_json(&rtxn, names, &set, settings)?);
            }
            let total = if complete {
                ranked.len()
            } else if placeholder {
                self.allowed_or_all(&rtxn, &allowed)?.len() as usize
            } else if terms.lower_bound >= max_total_hits as u64 && allowed.is_none() {
                max_total_hits
            } else {
                self.derive_typos(&searcher, &mut terms)?;
                let query = terms.universe_query(Reach::Typos);
                match &allowed {
                    Some(set) => {
                        let set = set.clone();
                        let keep = move |iid: u64| set.contains(iid as u32);
                        searcher
                            .search(
                                query.as_ref(),
                                &FilterCollector::new("iid".to_string(), keep, Count),
                            )
                            .map_err(tv)?
                    }
                    None => searcher.search(query.as_ref(), &Count).map_err(tv)?,
                }
            };
            let page = ranked.into_iter().skip(offset).take(limit).collect();
            (page, total)
        };
        let ranked_at = Instant::now();
        let displayed =
            string_list(settings, "displayedAttributes").filter(|a| !a.iter().any(|f| f == "*"));
        let retrieve_fields = q
            .attributes_to_retrieve
            .as_deref()
            .filter(|a| !a.iter().any(|f| f == "*"));
        let geo_point = sort_keys.iter().find_map(|k| match k {
            SortKey::GeoPoint { lat, lng, .. } => Some((*lat, *lng)),
            _ => None,
        });
        let formatting = q
            .attributes_to_highlight
            .as_ref()
            .is_some_and(|a| !a.is_empty())
            || q.attributes_to_crop.as_ref().is_some_and(|a| !a.is_empty());
        // Highlighting reads the typo derivations.
        if !placeholder && (formatting || q.show_matches_position) {
            self.derive_typos(&searcher, &mut terms)?;
        }
        let words = &terms.words;
        let key_columns = if q.show_ranking_score_details && !key_specs.is_empty() {
            self.columns(&rtxn, &key_paths(&key_specs))?
        } else {
            Vec::new()
        };
        // One tokenizer for every hit's formatting.
        let highlighter = tokens::Analyzer::for_highlighting(settings);
        let hits = highlighter.with(|tokenizer| -> Result<Vec<Value>> {
            let format_options = format::Options {
                words,
                tokenizer,
                highlight: q.attributes_to_highlight.as_deref(),
                crop: q.attributes_to_crop.as_deref(),
                crop_length: q.crop_length,
                crop_marker: &q.crop_marker,
                pre_tag: &q.highlight_pre_tag,
                post_tag: &q.highlight_post_tag,
            };
            let mut hits = Vec::with_capacity(page.len());
            for ranked in &page {
                let iid = ranked.iid;
                if let Some(bytes) = self.store.docs.get(&rtxn, &iid).map_err(heed_error)? {
                    let mut doc = self.decode_doc(bytes)?;
                    if let Some(displayed) = &displayed {
                        doc = project(doc, Some(displayed), true);
                    }
                    let shown = (formatting || q.show_matches_position).then(|| {
                        let mut d = doc.clone();
                        d.remove("_vectors");
                        d
                    });
                    let mut hit = retrieve(doc, retrieve_fields, q.retrieve_vectors);
                    if let Some(shown) = &shown {
                        if formatting {
                            let f = format::formatted(shown, &hit, &format_options);
                            if !f.is_empty() {
                                hit.insert("_formatted".into(), Value::Object(f));
                            }
                        }
                        if q.show_matches_position {
                            hit.insert(
                                "_matchesPosition".into(),
                                format::matches_position(shown, words, tokenizer),
                            );
                        }
                    }
                    if let Some((lat, lng)) = geo_point {
                        if let Some((dlat, dlng)) = sort::geo_of(&hit) {
                            let d = sort::haversine_m(lat, lng, dlat, dlng).round() as u64;
                            hit.insert("_geoDistance".into(), Value::from(d));
                        }
                    }
                    if q.show_ranking_score {
                        hit.insert("_rankingScore".into(), json!(ranked.verdict.score()));
                    }
                    if q.show_ranking_score_details {
                        let details = score_details(ranked, &rank_rules, &key_specs, &key_columns);
                        hit.insert("_rankingScoreDetails".into(), Value::Object(details));
                    }
                    hits.push(Value::Object(hit));
                }
            }
            Ok(hits)
        })?;
        let formatted_at = Instant::now();
        let ms = started.elapsed().as_millis() as u64;
        let mut body = match (q.page, q.hits_per_page) {
            (None, None) => json!({
                "hits": hits, "query": query_text, "processingTimeMs": ms,
                "limit": q.limit, "offset": q.offset,
                "estimatedTotalHits": candidates.min(max_total_hits),
            }),
            (page, hpp) => {
                let hpp = hpp.unwrap_or(20);
                let total = candidates.min(max_total_hits);
                let total_pages = if hpp == 0 { 0 } else { total.div_ceil(hpp) };
                json!({
                    "hits": hits, "query": query_text, "processingTimeMs": ms,
                    "hitsPerPage": hpp, "page": page.unwrap_or(1), "totalPages": total_pages, "totalHits": total,
                })
            }
        };
        if let Some((distribution, stats)) = facet_json {
            body["facetDistribution"] = distribution;
            body["facetStats"] = stats;
        }
        if q.show_performance_details {
            let span = |a: Instant, b: Instant| format!("{:.2?}", b.duration_since(a));
            body["performanceDetails"] = json!({
                "search > filter": span(started, filtered_at),
                "search > keyword search and ranking": span(filtered_at, ranked_at),
                "search > format": span(ranked_at, formatted_at),
                "search": span(started, formatted_at),
            });
        }
        serde_json::to_vec(&body).map_err(Error::internal)
    }

    /// The concrete attributes `facets` names: names must be filterable; `*` and patterns
    /// expand to the filterable attributes present in the index.
    fn facet_names(
        &self,
        rtxn: &heed::RoTxn,
        requested: &[String],
        filter_rules: &[rules::Rule],
    ) -> Result<Vec<String>> {
        let mut out = BTreeSet::new();
        let mut invalid = Vec::new();
        let mut known: Option<Vec<String>> = None;
        for name in requested {
            if name.contains('*') {
                let known = match &mut known {
                    Some(k) => k,
                    None => known.insert(self.known_fields(rtxn, filter_rules)?),
                };
                out.extend(
                    known
                        .iter()
                        .filter(|f| rules::pattern_matches(name, f))
                        .cloned(),
                );
            } else if rules::is_filterable(filter_rules, name) {
                out.insert(name.clone());
            } else {
                invalid.push(name.clone());
            }
        }
        if !invalid.is_empty() {
            return Err(Error::new(
                "invalid_search_facets",
                rules::facets_error(filter_rules, &invalid),
            ));
        }
        Ok(out.into_iter().collect())
    }

    /// The filterable attributes the index's documents hold (top-level fields, and the
    /// nested paths plain rules name).
    fn known_fields(
        &self,
        rtxn: &heed::RoTxn,
        filter_rules: &[rules::Rule],
    ) -> Result<Vec<String>> {
        let mut out: BTreeSet<String> = self
            .field_distribution(rtxn)?
            .into_keys()
            .filter(|f| rules::is_filterable(filter_rules, f))
            .collect();
        for r in filter_rules {
            if let rules::Rule::Field(f) = r {
                if f.contains('.') {
                    out.insert(f.clone());
                }
            }
        }
        out.remove("_geo");
        Ok(out.into_iter().collect())
    }

    /// `facetDistribution` and `facetStats` of `names` over `set`.
    fn facet_json(
        &self,
        rtxn: &heed::RoTxn,
        names: &[String],
        set: &RoaringBitmap,
        settings: Option<&Value>,
    ) -> Result<(Value, Value)> {
        let columns = self.columns(rtxn, names)?;
        let max_values = max_values_per_facet(settings);
        let mut distribution = Map::new();
        let mut stats = Map::new();
        for (name, column) in names.iter().zip(columns) {
            let counts = facets::count(&column, set);
            if let (Some(min), Some(max)) = (counts.min, counts.max) {
                stats.insert(name.clone(), json!({"min": min, "max": max}));
            }
            let order = facet_order(settings, name);
            distribution.insert(
                name.clone(),
                Value::Object(counts.distribution(&column, max_values, order)),
            );
        }
        Ok((Value::Object(distribution), Value::Object(stats)))
    }

    /// `POST /indexes/{uid}/facet-search`: the values of one facet among the documents the
    /// accompanying query and filter match, with their counts.
    pub fn facet_search(&self, q: &FacetSearchQuery) -> Result<Vec<u8>> {
        let started = Instant::now();
        let rtxn = self.store.read()?;
        let settings = self.stored_settings(&rtxn)?;
        let settings = settings.as_ref();
        if settings.is_some_and(|s| s["facetSearch"] == Value::Bool(false)) {
            return Err(Error::new(
                "facet_search_disabled",
                "The facet search is disabled for this index",
            ));
        }
        let filter_rules = rules::rules_of(settings);
        if let Some(m) = rules::facet_search_error(&filter_rules, &q.facet_name) {
            return Err(Error::new("invalid_facet_search_facet_name", m));
        }
        let allowed = self.allowed_ids(
            &rtxn,
            q.filter.as_ref(),
            settings,
            "invalid_search_filter",
            q.contains_filter,
        )?;
        let searcher = self.reader.searcher();
        let text = q.q.as_deref().unwrap_or("");
        let mut terms = self.terms(
            &searcher,
            settings,
            text,
            prefix_search(settings),
            q.matching_strategy.as_deref(),
        )?;
        let allowed = self.without_negated(&rtxn, &searcher, &terms, allowed)?;
        let mut set: RoaringBitmap = if terms.is_placeholder() {
            (*self.allowed_or_all(&rtxn, &allowed)?).clone()
        } else {
            // Every candidate: `words` alone orders them, nothing more is needed.
            let search_on = search_on(settings, q.attributes_to_search_on.as_deref())?;
            let (rules, _) = rule_list(&[], &[], false, terms.drop_order.is_none());
            self.derive_typos(&searcher, &mut terms)?;
            self.rank(
                &rtxn,
                &searcher,
                &mut terms,
                allowed.as_deref(),
                settings,
                search_on.as_deref(),
                &rules,
                &[],
                None,
                started + search_cutoff(settings),
            )?
            .0
            .into_iter()
            .map(|r| r.iid)
            .collect()
        };
        let distinct = settings
            .and_then(|s| s["distinctAttribute"].as_str())
            .map(str::to_string);
        if let (true, Some(field)) = (q.exhaustive_facet_count, distinct) {
            let column = self.columns(&rtxn, &[field])?.remove(0);
            let order: Vec<u32> = set.iter().collect();
            set = apply_distinct(&column, order, |iid| iid)
                .into_iter()
                .collect();
        }
        let column = self
            .columns(&rtxn, std::slice::from_ref(&q.facet_name))?
            .remove(0);
        let typos = facet_query_typos(settings, &q.facet_name, q.facet_query.as_deref());
        let hits = facets::count(&column, &set).search(
            &column,
            q.facet_query.as_deref(),
            typos,
            max_values_per_facet(settings),
            facet_order(settings, &q.facet_name),
        );
        let hits: Vec<Value> = hits
            .into_iter()
            .map(|(value, count)| json!({"value": value, "count": count}))
            .collect();
        let ms = started.elapsed().as_millis() as u64;
        serde_json::to_vec(&json!({
            "facetHits": hits,
            "facetQuery": q.facet_query,
            "processingTimeMs": ms,
        }))
        .map_err(Error::internal)
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

/// How many typos a facet query may hold: by its length in bytes; none when the facet is in
/// `disableOnAttributes` or the query in `disableOnWords`.
fn facet_query_typos(settings: Option<&Value>, facet: &str, query: Option<&str>) -> u8 {
    let Some(query) = query else { return 0 };
    if typo_list_has(settings, "disableOnAttributes", facet)
        || typo_list_has(settings, "disableOnWords", query)
    {
        return 0;
    }
    typos_for_length(settings, query.trim().len())
}

/// Keeps, in `order`, the first document of each distinct value: a kept document removes
/// every later one sharing any of its values; documents without a value are all kept.
fn apply_distinct<T: Copy>(column: &Column, order: Vec<T>, iid_of: impl Fn(T) -> u32) -> Vec<T> {
    let mut seen_numbers: HashSet<u64> = HashSet::new();
    let mut seen_strings = vec![false; column.strings.len()];
    let mut out = Vec::with_capacity(order.len());
    for item in order {
        let values = column.values(iid_of(item));
        let taken = values.iter().any(|v| match *v {
            Item::Num(n) => seen_numbers.contains(&num_bits(n)),
            Item::Str(id) => seen_strings[id as usize],
        });
        if taken {
            continue;
        }
        for v in values {
            match *v {
                Item::Num(n) => {
                    seen_numbers.insert(num_bits(n));
                }
                Item::Str(id) => seen_strings[id as usize] = true,
            }
        }
        out.push(item);
    }
    out
}

fn num_bits(n: f64) -> u64 {
    if n == 0.0 {
        0
    } else {
        n.to_bits()
    }
}
