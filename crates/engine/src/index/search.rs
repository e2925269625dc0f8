//! Search and facet search on an [`Index`]: candidates (query ∩ filter), their order (the
//! ranking rules), distinct, facets, and the response JSON.
//!
//! Two paths. A search asking for nothing but relevance order (no `sort`, no `distinct`, no
//! `facets`, no custom ranking rules) takes the fast path: tantivy collects only the page.
//! Any of those needs the whole candidate set: tantivy hands every match's internal id and
//! score, the value columns (see [`crate::facets`]) give sort keys, distinct values and facet
//! counts, and the page is selected from the ordered candidates.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::time::Instant;

use api_types::{Error, Result};
use roaring::RoaringBitmap;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use tantivy::collector::{Collector, Count, FilterCollector, SegmentCollector, TopDocs};
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, DocId, Score, SegmentReader, Term};

use super::{project, retrieve, string_list, tv, Index};
use crate::facets::{self, Column, FacetOrder, Item, SortKey as Key};
use crate::filter::eval::within;
use crate::filter::rules;
use crate::format;
use crate::sort::{self, SortKey};
use crate::store::{heed_error, keys};

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

/// Every candidate with its BM25 score; those holding every part; those matching without
/// typos (`None`: the query has no typo derivations, so all of them).
type KeywordCandidates = (Vec<(u32, f32)>, RoaringBitmap, Option<RoaringBitmap>);

/// One step of the order: the ranking rules as the interim keyword engine applies them.
enum Criterion {
    /// Documents holding every query word before the others (the `words` rule).
    Words,
    /// Documents matching without typos before those needing them (the `typo` rule).
    Typo,
    /// BM25, standing in for the relevance rules after `words` until the relevance engine.
    Score,
    /// A `sort` key or a custom `attr:asc|desc` rule: index into the candidate's keys.
    Key { slot: usize, asc: bool },
}

/// A candidate with what ranks it.
struct Candidate {
    iid: u32,
    all_words: bool,
    /// Matches without typo derivations.
    exact: bool,
    score: f32,
}

const DEFAULT_RULES: [&str; 7] = [
    "words",
    "typo",
    "proximity",
    "attributeRank",
    "sort",
    "wordPosition",
    "exactness",
];

fn ranking_rules(settings: Option<&Value>) -> Vec<String> {
    string_list(settings, "rankingRules")
        .unwrap_or_else(|| DEFAULT_RULES.iter().map(|s| s.to_string()).collect())
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

/// Collects the internal id and score of every matching document (scores are only computed
/// when `.0` asks for them).
struct IidScores(bool);

struct IidScoresSegment {
    iids: tantivy::columnar::Column<u64>,
    out: Vec<(u32, f32)>,
}

impl Collector for IidScores {
    type Fruit = Vec<(u32, f32)>;
    type Child = IidScoresSegment;

    fn for_segment(&self, _: u32, reader: &SegmentReader) -> tantivy::Result<IidScoresSegment> {
        Ok(IidScoresSegment {
            iids: reader.fast_fields().u64("iid")?,
            out: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        self.0
    }

    fn merge_fruits(&self, fruits: Vec<Vec<(u32, f32)>>) -> tantivy::Result<Vec<(u32, f32)>> {
        Ok(fruits.into_iter().flatten().collect())
    }
}

impl SegmentCollector for IidScoresSegment {
    type Fruit = Vec<(u32, f32)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        if let Some(v) = self.iids.first(doc) {
            self.out.push((v as u32, score));
        }
    }

    fn harvest(self) -> Vec<(u32, f32)> {
        self.out
    }
}

/// The internal ids of the documents matching `query`, unscored.
fn ids_of(searcher: &tantivy::Searcher, query: &dyn Query) -> Result<RoaringBitmap> {
    Ok(searcher
        .search(query, &IidScores(false))
        .map_err(tv)?
        .into_iter()
        .map(|(iid, _)| iid)
        .collect())
}

/// One part of a query: a word (with its alternatives: the prefix completions of the last
/// word) or a quoted phrase.
enum Group {
    /// The word with its prefix completions (`exact`), its synonyms (word sequences, matched
    /// as phrases; as good as the word itself), and its typo derivations.
    /// `word` is its index in [`Terms::words`], `budget` the typos it may have.
    Word {
        exact: Vec<Term>,
        synonyms: Vec<Vec<Term>>,
        typos: Vec<Term>,
        word: usize,
        budget: u8,
    },
    Phrase(Vec<Term>),
}

/// How much a typo derivation weighs against the word itself: documents holding the word
/// as typed should rank first (Meilisearch's `typo` rule), BM25 cannot know that alone.
const TYPO_BOOST: f32 = 0.3;

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

/// Which documents a query's candidates are (`matchingStrategy`): those holding every part
/// (`all`), or those holding one key part, the others only ranking: the first part (`last`,
/// which drops parts from the end) or the rarest (`frequency`, which drops frequent ones first).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Strategy {
    All,
    Key(usize),
}

/// The query as tantivy terms, with a lower bound of how many live documents are candidates.
struct Terms {
    groups: Vec<Group>,
    negatives: Vec<Group>,
    strategy: Strategy,
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
            .any(|g| matches!(g, Group::Word { typos, .. } if !typos.is_empty()))
    }

    /// Whether the last word has prefix completions.
    fn has_completions(&self) -> bool {
        self.groups
            .iter()
            .any(|g| matches!(g, Group::Word { exact, .. } if exact.len() > 1))
    }

    /// Documents holding every part.
    fn all_query(&self, reach: Reach) -> Box<dyn Query> {
        groups_query(&self.groups, Occur::Must, reach)
    }

    /// The candidates (see [`Strategy`]), words reaching as far as `reach`.
    fn universe_query(&self, reach: Reach) -> Box<dyn Query> {
        match self.strategy {
            Strategy::All => groups_query(&self.groups, Occur::Must, reach),
            Strategy::Key(k) if self.groups.len() == 1 => group_query(&self.groups[k], reach),
            Strategy::Key(k) => Box::new(BooleanQuery::new(
                self.groups
                    .iter()
                    .enumerate()
                    .map(|(i, g)| {
                        (
                            if i == k { Occur::Must } else { Occur::Should },
                            group_query(g, reach),
                        )
                    })
                    .collect(),
            )),
        }
    }
}

/// How many completions a prefix expands to (the most frequent ones).
const PREFIX_EXPANSIONS: usize = 50;
/// How many dictionary entries a prefix scan reads per segment, at most.
const PREFIX_SCAN: usize = 50_000;

/// How far a word reaches: the word as typed, plus its prefix completions, plus its typo
/// derivations. Levels of a page follow these (Meilisearch ranks typos after exact words and
/// exact words before completions, its `typo` and `exactness` rules).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Reach {
    Exact,
    Completions,
    Typos,
}

/// A part of the query as a query: the word (with its alternatives up to `reach`), or the
/// phrase.
fn group_query(group: &Group, reach: Reach) -> Box<dyn Query> {
    let term = |t: &Term| -> Box<dyn Query> {
        Box::new(TermQuery::new(t.clone(), IndexRecordOption::WithFreqs))
    };
    let no_typos: &[Term] = &[];
    match group {
        Group::Word {
            exact,
            synonyms,
            typos: t,
            ..
        } => {
            let typos = if reach >= Reach::Typos {
                t.as_slice()
            } else {
                no_typos
            };
            let exact = if reach >= Reach::Completions {
                exact.as_slice()
            } else {
                &exact[..1]
            };
            if exact.len() == 1 && typos.is_empty() && synonyms.is_empty() {
                return term(&exact[0]);
            }
            let synonym = |seq: &Vec<Term>| -> (Occur, Box<dyn Query>) {
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
                    .chain(synonyms.iter().map(synonym))
                    .chain(typos.iter().map(|t| -> (Occur, Box<dyn Query>) {
                        (
                            Occur::Should,
                            Box::new(tantivy::query::BoostQuery::new(term(t), TYPO_BOOST)),
                        )
                    }))
                    .collect(),
            ))
        }
        Group::Phrase(g) if g.len() == 1 => term(&g[0]),
        Group::Phrase(g) => Box::new(tantivy::query::PhraseQuery::new(g.clone())),
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

/// Whether the query's last word is searched as a prefix: unless a space or a closing quote
/// follows it or the index's `prefixSearch` is `disabled`.
fn last_word_is_prefix(settings: Option<&Value>, text: &str) -> bool {
    !text.ends_with(char::is_whitespace)
        && !text.ends_with('"')
        && settings.is_none_or(|s| s["prefixSearch"].as_str() != Some("disabled"))
}

/// The words of tokens, stop-word flags dropped.
fn plain(tokens: Vec<(String, bool)>) -> Vec<String> {
    tokens.into_iter().map(|(w, _)| w).collect()
}

/// A piece of the query text: words, or a quoted phrase; `-` before it negates it.
struct Piece<'a> {
    text: &'a str,
    phrase: bool,
    negative: bool,
}

/// Splits a query into words and `"quoted phrases"`, each maybe negated by a leading `-`.
/// An unclosed quote runs to the end.
fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let negative =
            bytes[i] == b'-' && i + 1 < bytes.len() && !bytes[i + 1].is_ascii_whitespace();
        if negative {
            i += 1;
        }
        if bytes[i] == b'"' {
            let start = i + 1;
            let end = text[start..].find('"').map_or(text.len(), |e| start + e);
            out.push(Piece {
                text: &text[start..end],
                phrase: true,
                negative,
            });
            i = (end + 1).min(text.len());
        } else {
            let start = i;
            while i < bytes.len() && !bytes[i].is_ascii_whitespace() && bytes[i] != b'"' {
                i += 1;
            }
            out.push(Piece {
                text: &text[start..i],
                phrase: false,
                negative,
            });
        }
    }
    out
}

impl Index {
    fn terms(
        &self,
        searcher: &tantivy::Searcher,
        settings: Option<&Value>,
        text: &str,
        prefix: bool,
        strategy: Option<&str>,
    ) -> Result<Terms> {
        let mut tokenizer = self
            .tantivy
            .tokenizer_for_field(self.fields.words)
            .map_err(tv)?;
        // Each token lowercased, with whether its text as typed is a stop word (Meilisearch
        // matches stop words before lowercasing).
        let stop_words = string_list(settings, "stopWords").unwrap_or_default();
        let mut tokens_of = |s: &str| -> Vec<(String, bool)> {
            let mut stream = tokenizer.token_stream(s);
            let mut out = Vec::new();
            while let Some(tok) = stream.next() {
                let typed = &s[tok.offset_from..tok.offset_to];
                out.push((tok.text.clone(), stop_words.iter().any(|w| w == typed)));
            }
            out
        };

        let term = |w: &str| Term::from_field_text(self.fields.words, w);
        let mut groups: Vec<Group> = Vec::new();
        let mut negatives: Vec<Group> = Vec::new();
        let mut words: Vec<format::QueryWord> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        let mut counted = 0;
        let all_pieces = pieces(text);
        let last_piece = all_pieces.len().saturating_sub(1);
        for (pi, piece) in all_pieces.into_iter().enumerate() {
            let typed = tokens_of(piece.text);
            let last_token = typed.len().saturating_sub(1);
            // Stop words leave the query, except its very last token.
            let kept: Vec<String> = typed
                .into_iter()
                .enumerate()
                .filter(|(ti, (_, stop))| {
                    !stop || piece.phrase || (pi == last_piece && *ti == last_token)
                })
                .map(|(_, (w, _))| w)
                .collect();
            let toks = kept;
            if toks.is_empty() || counted >= MAX_QUERY_WORDS {
                continue;
            }
            if piece.negative {
                // A negated word is a one-word phrase: matched exactly.
                let negated = if piece.phrase { &toks[..] } else { &toks[..1] };
                negatives.push(Group::Phrase(negated.iter().map(|w| term(w)).collect()));
                continue;
            }
            if piece.phrase {
                counted += toks.len();
                words.extend(toks.iter().map(|w| format::QueryWord {
                    word: w.clone(),
                    prefix: false,
                    typos: Vec::new(),
                }));
                groups.push(Group::Phrase(toks.iter().map(|w| term(w)).collect()));
                continue;
            }
            for w in toks {
                if counted >= MAX_QUERY_WORDS || seen.contains(&w) {
                    continue;
                }
                counted += 1;
                seen.push(w.clone());
                groups.push(Group::Word {
                    exact: vec![term(&w)],
                    synonyms: Vec::new(),
                    typos: Vec::new(),
                    word: words.len(),
                    budget: typo_budget(settings, &w),
                });
                words.push(format::QueryWord {
                    word: w,
                    prefix: false,
                    typos: Vec::new(),
                });
            }
        }
        // The last part is a prefix when it is a word ending the query.
        if prefix {
            if let Some(Group::Word { exact, word, .. }) = groups.last_mut() {
                let w = &mut words[*word];
                exact.extend(self.completions(searcher, &w.word)?);
                w.prefix = true;
            }
        }
        // Synonyms of single words, as the `synonyms` setting maps them (keys compared as
        // their lowercased tokens, tokenized once per query).
        if let Some(map) = settings.and_then(|s| s["synonyms"].as_object()) {
            let keys: Vec<(Vec<String>, &Value)> =
                map.iter().map(|(k, v)| (plain(tokens_of(k)), v)).collect();
            for g in groups.iter_mut() {
                let Group::Word { synonyms, word, .. } = g else {
                    continue;
                };
                let qw = &mut words[*word];
                for (_, values) in keys.iter().filter(|(k, _)| *k == [qw.word.as_str()]) {
                    for v in values.as_array().into_iter().flatten().take(50) {
                        let Some(v) = v.as_str() else { continue };
                        let seq = plain(tokens_of(v));
                        if seq.is_empty() || seq == [qw.word.as_str()] {
                            continue;
                        }
                        qw.typos.extend(seq.iter().cloned());
                        synonyms.push(seq.iter().map(|x| term(x)).collect());
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
        let strategy = match strategy {
            Some("all") => Strategy::All,
            Some("frequency") => Strategy::Key(
                (0..groups.len())
                    .min_by_key(|i| (frequency[*i], *i))
                    .unwrap_or(0),
            ),
            _ => Strategy::Key(0),
        };
        let lower_bound = match strategy {
            Strategy::Key(k) if !groups.is_empty() => frequency[k].saturating_sub(deleted),
            _ => 0,
        };
        Ok(Terms {
            groups,
            negatives,
            strategy,
            lower_bound,
            words,
            derived: false,
        })
    }

    /// `attributesToSearchOn`: keeps the candidates whose text in `attrs` satisfies the
    /// matching strategy (reading those attributes of each candidate), and recomputes which
    /// hold every part there.
    fn keep_matching_in(
        &self,
        rtxn: &heed::RoTxn,
        terms: &Terms,
        attrs: &[String],
        cands: &mut Vec<Candidate>,
    ) -> Result<()> {
        let fields = self.fields_map.read().unwrap().clone();
        let mut tokenizer = self
            .tantivy
            .tokenizer_for_field(self.fields.words)
            .map_err(tv)?;
        let reads = |name: &str| attrs.iter().any(|a| within(a, name) || within(name, a));
        let text_of = |t: &Term| t.value().as_str().map(str::to_string);
        let mut kept = Vec::with_capacity(cands.len());
        for mut c in cands.drain(..) {
            let Some(bytes) = self.store.docs.get(rtxn, &c.iid).map_err(heed_error)? else {
                continue;
            };
            let doc = crate::codec::decode_fields(bytes, &fields, reads)?;
            let mut text = String::new();
            for a in attrs {
                for v in crate::filter::eval::values_at(&doc, a) {
                    super::collect_text(v, &mut text);
                }
            }
            let mut words = HashSet::new();
            let mut stream = tokenizer.token_stream(&text);
            while let Some(tok) = stream.next() {
                words.insert(tok.text.clone());
            }
            let matched: Vec<bool> = terms
                .groups
                .iter()
                .map(|g| match g {
                    Group::Word {
                        exact,
                        synonyms,
                        typos,
                        ..
                    } => {
                        exact
                            .iter()
                            .chain(typos)
                            .filter_map(text_of)
                            .any(|w| words.contains(&w))
                            || synonyms.iter().any(|seq| {
                                seq.iter().filter_map(text_of).all(|w| words.contains(&w))
                            })
                    }
                    Group::Phrase(p) => p.iter().filter_map(text_of).all(|w| words.contains(&w)),
                })
                .collect();
            let keep = match terms.strategy {
                Strategy::All => matched.iter().all(|m| *m),
                Strategy::Key(k) => matched.get(k).copied().unwrap_or(false),
            };
            if keep {
                c.all_words = matched.iter().all(|m| *m);
                kept.push(c);
            }
        }
        *cands = kept;
        Ok(())
    }

    /// Looks up the typo derivations of every word with a budget (once): the fast path only
    /// needs them when the exact words leave the page short or the count must be walked.
    fn derive_typos(&self, searcher: &tantivy::Searcher, terms: &mut Terms) -> Result<()> {
        if terms.derived {
            return Ok(());
        }
        terms.derived = true;
        for g in terms.groups.iter_mut() {
            if let Group::Word {
                typos,
                word,
                budget,
                ..
            } = g
            {
                let qw = &mut terms.words[*word];
                if *budget > 0 {
                    *typos = self.typo_derivations(searcher, &qw.word, *budget, qw.prefix)?;
                    qw.typos.extend(
                        typos
                            .iter()
                            .filter_map(|t| t.value().as_str().map(str::to_string)),
                    );
                }
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
        let query = groups_query(&terms.negatives, Occur::Should, Reach::Exact);
        let excluded = ids_of(searcher, query.as_ref())?;
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
    ) -> Result<Vec<Term>> {
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
        Ok(one
            .into_iter()
            .chain(two)
            .filter_map(|k| String::from_utf8(k).ok())
            .map(|w| Term::from_field_text(self.fields.words, &w))
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

    /// Every candidate of `terms` with its score, those holding every part, and those that
    /// match without typos.
    fn keyword_candidates(
        &self,
        searcher: &tantivy::Searcher,
        terms: &Terms,
        allowed: Option<&RoaringBitmap>,
    ) -> Result<KeywordCandidates> {
        let universe = terms.universe_query(Reach::Typos);
        let mut scored = searcher
            .search(universe.as_ref(), &IidScores(true))
            .map_err(tv)?;
        if let Some(allowed) = allowed {
            scored.retain(|(iid, _)| allowed.contains(*iid));
        }
        let all_words = if terms.groups.len() == 1 || terms.strategy == Strategy::All {
            scored.iter().map(|(iid, _)| *iid).collect()
        } else {
            ids_of(searcher, terms.all_query(Reach::Typos).as_ref())?
        };
        let exact = if terms.has_typos() {
            Some(ids_of(
                searcher,
                terms.universe_query(Reach::Completions).as_ref(),
            )?)
        } else {
            None
        };
        Ok((scored, all_words, exact))
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
        let prefix = last_word_is_prefix(settings, &query_text);
        let mut terms = self.terms(
            &searcher,
            settings,
            &query_text,
            prefix,
            q.matching_strategy.as_deref(),
        )?;
        let placeholder = terms.is_placeholder();
        let allowed = self.without_negated(&rtxn, &searcher, &terms, allowed)?;

        // The order's criteria, from the ranking rules.
        let mut criteria = Vec::new();
        let mut key_specs: Vec<SortKey> = Vec::new();
        for rule in &rules {
            match rule.as_str() {
                "words" if !placeholder => criteria.push(Criterion::Words),
                "typo" if !placeholder => criteria.push(Criterion::Typo),
                "sort" => {
                    for key in &sort_keys {
                        criteria.push(Criterion::Key {
                            slot: key_specs.len(),
                            asc: direction(key),
                        });
                        key_specs.push(key.clone());
                    }
                }
                custom => {
                    if let Some((field, dir)) = custom.rsplit_once(':') {
                        if dir == "asc" || dir == "desc" {
                            criteria.push(Criterion::Key {
                                slot: key_specs.len(),
                                asc: dir == "asc",
                            });
                            key_specs.push(SortKey::Field {
                                name: field.to_string(),
                                asc: dir == "asc",
                            });
                        }
                    }
                }
            }
        }
        // BM25 stands in for the relevance rules after `words` (typo, proximity, attribute,
        // exactness) but only breaks the ties `sort` and custom rules leave: it separates
        // documents those rules would tie, and the sort would not get its say.
        if !placeholder {
            criteria.push(Criterion::Score);
        }

        let search_on = search_on(settings, q.attributes_to_search_on.as_deref())?;
        // A placeholder search in id order needs no ranking even with facets: they are
        // counted over the allowed set directly.
        let fast = key_specs.is_empty()
            && distinct.is_none()
            && (placeholder || (facet_names.is_none() && search_on.is_none()));
        let mut facet_json = None;
        let (iids, candidates) = if fast && placeholder {
            if let Some(names) = &facet_names {
                let set = self.allowed_or_all(&rtxn, &allowed)?;
                facet_json = Some(self.facet_json(&rtxn, names, &set, settings)?);
            }
            match &allowed {
                Some(allowed) => (
                    allowed.iter().skip(offset).take(limit).collect(),
                    allowed.len() as usize,
                ),
                None => {
                    let count = self.store.docs.len(&rtxn).map_err(heed_error)? as usize;
                    let mut iids = Vec::new();
                    for item in self
                        .store
                        .docs
                        .iter(&rtxn)
                        .map_err(heed_error)?
                        .skip(offset)
                        .take(limit)
                    {
                        iids.push(item.map_err(heed_error)?.0);
                    }
                    (iids, count)
                }
            }
        } else if fast {
            self.keyword_page(
                &searcher,
                &mut terms,
                offset,
                limit,
                max_total_hits,
                allowed,
            )?
        } else if let (true, None, [SortKey::Field { name, asc }]) =
            (placeholder, &distinct, key_specs.as_slice())
        {
            // One sort key on a placeholder search: read the page off the value index.
            let set = self.allowed_or_all(&rtxn, &allowed)?;
            let column = self.columns(&rtxn, std::slice::from_ref(name))?.remove(0);
            let page = facets::sorted_page(&column, *asc, &set, offset.saturating_add(limit));
            if let Some(names) = &facet_names {
                facet_json = Some(self.facet_json(&rtxn, names, &set, settings)?);
            }
            (page.into_iter().skip(offset).collect(), set.len() as usize)
        } else {
            // The whole candidate set, ranked.
            let cands: Vec<Candidate> = if placeholder {
                self.allowed_or_all(&rtxn, &allowed)?
                    .iter()
                    .map(|iid| Candidate {
                        iid,
                        all_words: true,
                        exact: true,
                        score: 0.0,
                    })
                    .collect()
            } else {
                self.derive_typos(&searcher, &mut terms)?;
                let (scored, all_words, exact) =
                    self.keyword_candidates(&searcher, &terms, allowed.as_deref())?;
                let mut cands: Vec<Candidate> = scored
                    .into_iter()
                    .map(|(iid, score)| Candidate {
                        iid,
                        all_words: all_words.contains(iid),
                        exact: exact.as_ref().is_none_or(|e| e.contains(iid)),
                        score,
                    })
                    .collect();
                if let Some(attrs) = &search_on {
                    self.keep_matching_in(&rtxn, &terms, attrs, &mut cands)?;
                }
                cands
            };
            let keys = self.sort_keys(&rtxn, &key_specs, &cands)?;
            let width = key_specs.len();
            let cmp = |a: &usize, b: &usize| -> Ordering {
                let (ca, cb) = (&cands[*a], &cands[*b]);
                for c in &criteria {
                    let o = match c {
                        Criterion::Words => cb.all_words.cmp(&ca.all_words),
                        Criterion::Typo => cb.exact.cmp(&ca.exact),
                        Criterion::Score => cb.score.total_cmp(&ca.score),
                        Criterion::Key { slot, asc } => facets::compare_keys(
                            &keys[a * width + slot],
                            &keys[b * width + slot],
                            *asc,
                        ),
                    };
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                ca.iid.cmp(&cb.iid)
            };
            let mut order: Vec<usize> = (0..cands.len()).collect();
            let (ranked, kept): (Vec<usize>, Option<RoaringBitmap>) = match &distinct {
                Some(field) => {
                    order.sort_unstable_by(cmp);
                    let column = self.columns(&rtxn, std::slice::from_ref(field))?.remove(0);
                    let ranked = apply_distinct(&column, order, |i| cands[i].iid);
                    let kept = ranked.iter().map(|i| cands[*i].iid).collect();
                    (ranked, Some(kept))
                }
                None => {
                    let need = (offset + limit).min(order.len());
                    if need > 0 && need < order.len() {
                        order.select_nth_unstable_by(need - 1, cmp);
                        order.truncate(need);
                    }
                    order.sort_unstable_by(cmp);
                    (order, None)
                }
            };
            if let Some(names) = &facet_names {
                let set = match kept {
                    Some(k) => k,
                    None => cands.iter().map(|c| c.iid).collect(),
                };
                facet_json = Some(self.facet_json(&rtxn, names, &set, settings)?);
            }
            let total = match &distinct {
                Some(_) => ranked.len(),
                None => cands.len(),
            };
            let page = ranked
                .into_iter()
                .skip(offset)
                .take(limit)
                .map(|i| cands[i].iid)
                .collect();
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
        let format_options = format::Options {
            words,
            highlight: q.attributes_to_highlight.as_deref(),
            crop: q.attributes_to_crop.as_deref(),
            crop_length: q.crop_length,
            crop_marker: &q.crop_marker,
            pre_tag: &q.highlight_pre_tag,
            post_tag: &q.highlight_post_tag,
        };
        let mut hits = Vec::with_capacity(iids.len());
        for iid in iids {
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
                            format::matches_position(shown, words),
                        );
                    }
                }
                if let Some((lat, lng)) = geo_point {
                    if let Some((dlat, dlng)) = sort::geo_of(&hit) {
                        let d = sort::haversine_m(lat, lng, dlat, dlng).round() as u64;
                        hit.insert("_geoDistance".into(), Value::from(d));
                    }
                }
                hits.push(Value::Object(hit));
            }
        }
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

    /// Each candidate's keys for `specs`, `specs.len()` per candidate.
    fn sort_keys(
        &self,
        rtxn: &heed::RoTxn,
        specs: &[SortKey],
        cands: &[Candidate],
    ) -> Result<Vec<Key>> {
        if specs.is_empty() {
            return Ok(Vec::new());
        }
        let paths: Vec<String> = specs
            .iter()
            .map(|s| match s {
                SortKey::Field { name, .. } => name.clone(),
                SortKey::GeoPoint { .. } => "_geo".to_string(),
            })
            .collect();
        let columns = self.columns(rtxn, &paths)?;
        let mut keys = Vec::with_capacity(cands.len() * specs.len());
        for c in cands {
            for (spec, column) in specs.iter().zip(&columns) {
                keys.push(match spec {
                    SortKey::Field { asc, .. } => column.sort_key(c.iid, *asc),
                    SortKey::GeoPoint { lat, lng, .. } => match column.values(c.iid) {
                        [Item::Num(dlat), Item::Num(dlng), ..] => {
                            Key::Num(sort::haversine_m(*lat, *lng, *dlat, *dlng))
                        }
                        _ => Key::Missing,
                    },
                });
            }
        }
        Ok(keys)
    }

    /// Keyword search on the fast path: documents holding every word first, then those
    /// holding some of them, each group by BM25. Returns the page's internal ids and the
    /// candidate count capped at `max` (`maxTotalHits`).
    fn keyword_page(
        &self,
        searcher: &tantivy::Searcher,
        terms: &mut Terms,
        offset: usize,
        limit: usize,
        max: usize,
        allowed: Option<Arc<RoaringBitmap>>,
    ) -> Result<(Vec<u32>, usize)> {
        let lower_bound = terms.lower_bound;
        let several = terms.groups.len() > 1;
        let fetch = (offset + limit).min(max).max(1);
        // With a filter, only documents of `allowed` are collected (by their `iid` column).
        fn run<C: Collector>(
            searcher: &tantivy::Searcher,
            query: &dyn Query,
            collector: C,
            allowed: &Option<Arc<RoaringBitmap>>,
        ) -> Result<C::Fruit> {
            match allowed {
                Some(set) => {
                    let set = set.clone();
                    let keep = move |iid: u64| set.contains(iid as u32);
                    let filtered = FilterCollector::new("iid".to_string(), keep, collector);
                    searcher.search(query, &filtered).map_err(tv)
                }
                None => searcher.search(query, &collector).map_err(tv),
            }
        }
        let top_of = |query: &dyn Query, n: usize| -> Result<Vec<DocAddress>> {
            let top = TopDocs::with_limit(n).order_by_score();
            Ok(run(searcher, query, top, &allowed)?
                .into_iter()
                .map(|(_, addr)| addr)
                .collect())
        };
        // The page fills level by level, each a superset of the one before, as the `words`
        // then `typo` rules order them: every word without typos, every word with typos, then
        // the strategy's candidates without and with typos. Most pages are full after the
        // first level, and typo derivations are only looked up when a level with them is
        // reached or the count must be walked. An intersection, driven by the rarest word, is
        // cheap even when one word is in most documents.
        let mut top: Vec<DocAddress> = Vec::new();
        let mut seen: HashSet<DocAddress> = HashSet::new();
        let mut fill = |query: Box<dyn Query>, top: &mut Vec<DocAddress>| -> Result<()> {
            if top.len() >= fetch {
                return Ok(());
            }
            for a in top_of(query.as_ref(), fetch + seen.len())? {
                if top.len() >= fetch {
                    break;
                }
                if seen.insert(a) {
                    top.push(a);
                }
            }
            Ok(())
        };
        let count_walks = lower_bound < max as u64 || allowed.is_some();
        let completions = terms.has_completions();
        if several {
            fill(terms.all_query(Reach::Exact), &mut top)?;
            if completions {
                fill(terms.all_query(Reach::Completions), &mut top)?;
            }
            if top.len() < fetch {
                self.derive_typos(searcher, terms)?;
                if terms.has_typos() {
                    fill(terms.all_query(Reach::Typos), &mut top)?;
                }
            }
        }
        if !several || terms.strategy != Strategy::All {
            fill(terms.universe_query(Reach::Exact), &mut top)?;
            if completions {
                fill(terms.universe_query(Reach::Completions), &mut top)?;
            }
            if top.len() < fetch || count_walks {
                self.derive_typos(searcher, terms)?;
                if terms.has_typos() {
                    fill(terms.universe_query(Reach::Typos), &mut top)?;
                }
            }
        }
        // The count is capped at `max`: when the key word alone reaches it, the candidates are
        // never walked.
        let count = if count_walks {
            self.derive_typos(searcher, terms)?;
            run(
                searcher,
                terms.universe_query(Reach::Typos).as_ref(),
                Count,
                &allowed,
            )?
        } else {
            max
        };
        let mut iids = Vec::new();
        let mut columns = std::collections::HashMap::new();
        for addr in top.into_iter().skip(offset).take(limit) {
            let column = match columns.entry(addr.segment_ord) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => e.insert(
                    searcher
                        .segment_reader(addr.segment_ord)
                        .fast_fields()
                        .u64("iid")
                        .map_err(tv)?,
                ),
            };
            if let Some(v) = column.first(addr.doc_id) {
                iids.push(v as u32);
            }
        }
        Ok((iids, count))
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
            last_word_is_prefix(settings, text),
            q.matching_strategy.as_deref(),
        )?;
        let allowed = self.without_negated(&rtxn, &searcher, &terms, allowed)?;
        self.derive_typos(&searcher, &mut terms)?;
        let mut set: RoaringBitmap = if terms.is_placeholder() {
            (*self.allowed_or_all(&rtxn, &allowed)?).clone()
        } else {
            let mut cands: Vec<Candidate> = self
                .keyword_candidates(&searcher, &terms, allowed.as_deref())?
                .0
                .into_iter()
                .map(|(iid, score)| Candidate {
                    iid,
                    all_words: true,
                    exact: true,
                    score,
                })
                .collect();
            if let Some(attrs) = search_on(settings, q.attributes_to_search_on.as_deref())? {
                self.keep_matching_in(&rtxn, &terms, &attrs, &mut cands)?;
            }
            cands.into_iter().map(|c| c.iid).collect()
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

fn direction(key: &SortKey) -> bool {
    match key {
        SortKey::Field { asc, .. } | SortKey::GeoPoint { asc, .. } => *asc,
    }
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
