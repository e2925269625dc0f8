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

use std::cmp::Ordering;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use api_types::{Error, Result};
use roaring::RoaringBitmap;
use serde_json::{json, Map, Value};
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::Field;
use tantivy::schema::IndexRecordOption;
use tantivy::{DocId, Score, SegmentReader, Term};

use super::{string_list, text, tv, Index};
use crate::facets::{self, Column, Item, SortKey as Key};
use crate::filter::eval::within;
use crate::sort::{self, SortKey};
use crate::store::{heed_error, keys};
use crate::tokens;

use super::rank;

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

/// A ranked candidate: its verdict on the relevancy rules and its sort keys.
struct Ranked {
    iid: u32,
    verdict: rank::Verdict,
    keys: Vec<Key>,
}

impl Ranked {
    /// A document of a placeholder search: nothing ranks it.
    fn plain(iid: u32) -> Ranked {
        Ranked {
            iid,
            verdict: rank::Verdict::default(),
            keys: Vec::new(),
        }
    }
}

/// A candidate ordered by its verdict then internal id (better is smaller), for keeping the
/// best few of a level without holding all of it.
struct ByCost(Ranked);

impl PartialEq for ByCost {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for ByCost {}

impl PartialOrd for ByCost {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ByCost {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.0.verdict.cost, self.0.iid).cmp(&(other.0.verdict.cost, other.0.iid))
    }
}

/// One step of comparing candidates: a run of relevancy rules (their verdict digits) or a
/// sort key.
enum Step {
    Digits(usize, usize),
    Key { slot: usize, asc: bool },
}

/// The comparison steps of `rules`: consecutive relevancy rules compare as one number.
fn steps(rules: &[rank::Rule]) -> Vec<Step> {
    let mut out = Vec::new();
    let mut digit = 0;
    for r in rules {
        match r {
            rank::Rule::Key { slot, asc } => out.push(Step::Key {
                slot: *slot,
                asc: *asc,
            }),
            rule => {
                let next = digit + rank::digits(rule);
                match out.last_mut() {
                    Some(Step::Digits(_, to)) => *to = next,
                    _ => out.push(Step::Digits(digit, next)),
                }
                digit = next;
            }
        }
    }
    out
}

/// Better first: verdicts and sort keys in rule order, then internal id.
fn compare_ranked(steps: &[Step], a: &Ranked, b: &Ranked) -> Ordering {
    if let [Step::Digits(0, _)] = steps {
        // Relevancy alone: unused digits are zero, the whole cost compares.
        return (a.verdict.cost, a.iid).cmp(&(b.verdict.cost, b.iid));
    }
    for step in steps {
        let o = match step {
            Step::Digits(from, to) => a
                .verdict
                .cost_range(*from, *to)
                .cmp(&b.verdict.cost_range(*from, *to)),
            Step::Key { slot, asc } => facets::compare_keys(&a.keys[*slot], &b.keys[*slot], *asc),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.iid.cmp(&b.iid)
}

/// The ranking rules as applied to a query: `words` only for a keyword query that may drop
/// words (inserted before the first relevancy rule when missing), relevancy rules only for
/// keyword queries, `sort` expanded into its keys, custom `attr:asc|desc` rules as keys;
/// repeated rules count once. Returns the rules and the sort keys they index.
fn rule_list(
    names: &[String],
    sort_keys: &[SortKey],
    placeholder: bool,
    all_words: bool,
) -> (Vec<rank::Rule>, Vec<SortKey>) {
    use rank::Rule;
    let mut rules: Vec<Rule> = Vec::new();
    let mut keys: Vec<SortKey> = Vec::new();
    let push = |rules: &mut Vec<Rule>, r: Rule| {
        let dup = rules.contains(&r)
            || (r == Rule::Attribute
                && rules
                    .iter()
                    .any(|x| matches!(x, Rule::AttributeRank | Rule::WordPosition)))
            || (matches!(r, Rule::AttributeRank | Rule::WordPosition)
                && rules.contains(&Rule::Attribute));
        if !dup {
            rules.push(r);
        }
    };
    for name in names {
        let relevancy = match name.as_str() {
            "words" => Some(Rule::Words),
            "typo" => Some(Rule::Typo),
            "proximity" => Some(Rule::Proximity),
            "attributeRank" => Some(Rule::AttributeRank),
            "wordPosition" => Some(Rule::WordPosition),
            "attribute" => Some(Rule::Attribute),
            "exactness" => Some(Rule::Exactness),
            _ => None,
        };
        if let Some(r) = relevancy {
            if placeholder || (r == Rule::Words && all_words) {
                continue;
            }
            if r != Rule::Words && !all_words && !rules.contains(&Rule::Words) {
                push(&mut rules, Rule::Words);
            }
            push(&mut rules, r);
            continue;
        }
        if name == "sort" {
            for key in sort_keys {
                // A field a custom rule already sorts on is not sorted again.
                if let SortKey::Field { name: f, .. } = key {
                    if keys
                        .iter()
                        .any(|k| matches!(k, SortKey::Field { name, .. } if name == f))
                    {
                        continue;
                    }
                }
                rules.push(Rule::Key {
                    slot: keys.len(),
                    asc: direction(key),
                });
                keys.push(key.clone());
            }
            continue;
        }
        if let Some((field, dir)) = name.rsplit_once(':') {
            if dir == "asc" || dir == "desc" {
                if keys
                    .iter()
                    .any(|k| matches!(k, SortKey::Field { name, .. } if name == field))
                {
                    continue;
                }
                rules.push(Rule::Key {
                    slot: keys.len(),
                    asc: dir == "asc",
                });
                keys.push(SortKey::Field {
                    name: field.to_string(),
                    asc: dir == "asc",
                });
            }
        }
    }
    if !placeholder && !all_words && !rules.contains(&Rule::Words) {
        rules.insert(0, Rule::Words);
    }
    (rules, keys)
}

/// Per field id: its weight for `attributeRank` (the index of the first `searchableAttributes`
/// entry holding it; 0 for all with `*`), and the largest weight.
fn field_weights(settings: Option<&Value>, names: &[String]) -> (Vec<u32>, u32) {
    let Some(searchable) = super::searchable_of(settings) else {
        return (vec![0; names.len()], 0);
    };
    let weights = names
        .iter()
        .map(|n| {
            searchable
                .iter()
                .position(|a| within(n, a))
                .unwrap_or(searchable.len().saturating_sub(1)) as u32
        })
        .collect();
    (weights, searchable.len().saturating_sub(1) as u32)
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

/// `_rankingScoreDetails` of a hit: an entry per rule, in rule order.
fn score_details(
    ranked: &Ranked,
    rules: &[rank::Rule],
    specs: &[SortKey],
    columns: &[Arc<Column>],
) -> Map<String, Value> {
    let mut out = Map::new();
    let scores = ranked.verdict.scores(rules);
    let mut s = 0;
    for (order, r) in rules.iter().enumerate() {
        match r {
            rank::Rule::Key { slot, .. } => {
                let Some(spec) = specs.get(*slot) else {
                    continue;
                };
                let column = columns.get(*slot);
                let key = ranked.keys.get(*slot);
                match spec {
                    SortKey::Field { name, asc } => {
                        let value = match (key, column) {
                            (Some(Key::Num(n)), _) => json!(n),
                            (Some(Key::Str(rank)), Some(c)) => c
                                .values(ranked.iid)
                                .iter()
                                .find_map(|i| match i {
                                    Item::Str(id) if c.strings[*id as usize].rank == *rank => {
                                        Some(json!(&*c.strings[*id as usize].normalized))
                                    }
                                    _ => None,
                                })
                                .unwrap_or(Value::Null),
                            _ => Value::Null,
                        };
                        let dir = if *asc { "asc" } else { "desc" };
                        out.insert(
                            format!("{name}:{dir}"),
                            json!({"order": order, "value": value}),
                        );
                    }
                    SortKey::GeoPoint { lat, lng, asc } => {
                        let dir = if *asc { "asc" } else { "desc" };
                        let point = column.and_then(|c| match c.values(ranked.iid) {
                            [Item::Num(a), Item::Num(b), ..] => Some((*a, *b)),
                            _ => None,
                        });
                        let entry = match point {
                            Some((a, b)) => json!({
                                "order": order,
                                "value": {"lat": a, "lng": b},
                                "distance": sort::haversine_m(*lat, *lng, a, b),
                            }),
                            None => json!({"order": order, "value": null}),
                        };
                        out.insert(format!("_geoPoint({lat}, {lng}):{dir}"), entry);
                    }
                }
            }
            _ => {
                if let Some(score) = scores.get(s) {
                    let (key, v) = rank::detail(score, order);
                    out.insert(key.to_string(), v);
                }
                s += 1;
            }
        }
    }
    out
}

/// Collects, per segment, the documents matching a query with their internal ids, in
/// document order.
struct LevelDocs;

struct LevelDocsSegment {
    segment: u32,
    iids: tantivy::columnar::Column<u64>,
    out: Vec<(DocId, u32)>,
}

impl Collector for LevelDocs {
    type Fruit = Vec<(u32, Vec<(DocId, u32)>)>;
    type Child = LevelDocsSegment;

    fn for_segment(
        &self,
        segment: u32,
        reader: &SegmentReader,
    ) -> tantivy::Result<LevelDocsSegment> {
        Ok(LevelDocsSegment {
            segment,
            iids: reader.fast_fields().u64("iid")?,
            out: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<(u32, Vec<(DocId, u32)>)>) -> tantivy::Result<Self::Fruit> {
        Ok(fruits)
    }
}

impl SegmentCollector for LevelDocsSegment {
    type Fruit = (u32, Vec<(DocId, u32)>);

    fn collect(&mut self, doc: DocId, _: Score) {
        if let Some(v) = self.iids.first(doc) {
            self.out.push((doc, v as u32));
        }
    }

    fn harvest(self) -> Self::Fruit {
        (self.segment, self.out)
    }
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

/// Shortcuts of one-word levels (see [`Index::rank`]): digit ends (exclusive) that must be
/// zero for documents found through first-word markers (and whether `exactness` follows), or
/// through field words.
struct Shortcut {
    opening: Option<(usize, bool)>,
    field: Option<usize>,
    /// `proximity` right after `typo`: the digits zero for words in a row.
    in_a_row: Option<usize>,
}

/// A set of documents holding a level's best ones: when enough of its documents have
/// `typos` on the `typo` rule's digit and zero up to digit `zero_to`, nothing outside it
/// ranks before them.
struct ShortcutSet {
    query: Box<dyn Query>,
    zero_to: usize,
    typos: u8,
}

/// The most first-word marker terms a one-word level looks up (fields × alternatives).
const MAX_MARKERS: usize = 2_000;

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

    /// Each candidate's keys for `specs`, `specs.len()` per candidate.
    fn sort_keys(&self, rtxn: &heed::RoTxn, specs: &[SortKey], iids: &[u32]) -> Result<Vec<Key>> {
        if specs.is_empty() {
            return Ok(Vec::new());
        }
        let columns = self.columns(rtxn, &key_paths(specs))?;
        let mut keys = Vec::with_capacity(iids.len() * specs.len());
        for &iid in iids {
            for (spec, column) in specs.iter().zip(&columns) {
                keys.push(match spec {
                    SortKey::Field { asc, .. } => column.sort_key(iid, *asc),
                    SortKey::GeoPoint { lat, lng, .. } => match column.values(iid) {
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

    /// Ranks the keyword candidates (see [`rank`]), best first, with whether every candidate
    /// was ranked. With `need`, candidates are ranked level by level while the first rules
    /// allow it (`words` first: documents keeping more query words come first; `typo` next:
    /// those without typos before those with) and ranking stops once a level completes
    /// `need` documents, typo derivations only looked up when a level needs them.
    #[allow(clippy::too_many_arguments)]
    fn rank(
        &self,
        rtxn: &heed::RoTxn,
        searcher: &tantivy::Searcher,
        terms: &mut Terms,
        allowed: Option<&RoaringBitmap>,
        settings: Option<&Value>,
        search_on: Option<&[String]>,
        rules: &[rank::Rule],
        key_specs: &[SortKey],
        need: Option<usize>,
        deadline: Instant,
    ) -> Result<(Vec<Ranked>, bool)> {
        let relevancy: Vec<rank::Rule> = rules
            .iter()
            .copied()
            .filter(|r| !matches!(r, rank::Rule::Key { .. }))
            .collect();
        let fields = self.fields_map.read().unwrap().clone();
        let (weights, max_weight) = field_weights(settings, fields.names());
        let on: Option<Vec<bool>> = search_on.map(|attrs| {
            fields
                .names()
                .iter()
                .map(|n| attrs.iter().any(|a| within(n, a) || within(a, n)))
                .collect()
        });
        let no_typos = string_list(
            settings.and_then(|s| s.get("typoTolerance")),
            "disableOnAttributes",
        )
        .filter(|a| !a.is_empty());
        let typos_in: Option<Vec<bool>> = no_typos.map(|attrs| {
            fields
                .names()
                .iter()
                .map(|n| !attrs.iter().any(|a| within(n, a)))
                .collect()
        });
        let by_attribute =
            settings.is_some_and(|s| s["proximityPrecision"].as_str() == Some("byAttribute"));
        // Levels: (groups dropped by `words`, how far words reach).
        let by_words = rules.first() == Some(&rank::Rule::Words);
        let typo_next = if by_words {
            rules.get(1) == Some(&rank::Rule::Typo)
        } else {
            rules.first() == Some(&rank::Rule::Typo)
        };
        let reaches: &[Reach] = if typo_next {
            &[Reach::Completions, Reach::Typos]
        } else {
            &[Reach::Typos]
        };
        // Without `words` first, one level of every candidate (all droppable groups gone).
        let dropped: Vec<usize> = if by_words {
            (0..=terms.droppable()).collect()
        } else {
            vec![terms.droppable()]
        };
        let levels: Vec<(usize, Reach)> = dropped
            .into_iter()
            .flat_map(|d| reaches.iter().map(move |r| (d, *r)))
            .collect();
        // One-word levels without typos take shortcuts: the documents best on the rules
        // after `words` and `typo` are looked up first, and when there are enough of them
        // nothing else can come before them. `shortcut.opening`: the digits zero for a word
        // opening a field of the best weight (`attributeRank` and `wordPosition` both met,
        // no sort key before), and whether `exactness` follows; `shortcut.field`: the digits
        // zero for a word in a field of the best weight (`attributeRank` met).
        let shortcut = {
            let mut digit = 0;
            let mut found = (false, false);
            let mut opening = None;
            let mut field = None;
            for (i, r) in rules.iter().enumerate() {
                match (i, r) {
                    (0, rank::Rule::Words) | (1, rank::Rule::Typo) | (_, rank::Rule::Proximity) => {
                    }
                    (_, rank::Rule::AttributeRank) => found.0 = true,
                    (_, rank::Rule::WordPosition) => found.1 = true,
                    (_, rank::Rule::Attribute) => found = (true, true),
                    _ => break,
                }
                if found.0 && field.is_none() {
                    field = Some(digit + 1);
                }
                digit += rank::digits(r);
                if found == (true, true) {
                    let exact_next = rules.get(i + 1) == Some(&rank::Rule::Exactness);
                    opening = Some((digit, exact_next));
                    break;
                }
            }
            // With `byAttribute`, words in one field are as close as words in a row.
            let in_a_row =
                (rules.get(2) == Some(&rank::Rule::Proximity) && !by_attribute).then_some(3);
            (by_words && typo_next).then_some(Shortcut {
                opening,
                field,
                in_a_row,
            })
        };
        let mut out: Vec<Ranked> = Vec::new();
        // Per segment: a bitset of the documents an earlier level ranked.
        let mut seen: Vec<Vec<u64>> = vec![Vec::new(); searcher.segment_readers().len()];
        let mut complete = true;
        let mut qterms: Option<(Vec<rank::QueryTerm>, Vec<u8>)> = None;
        let mut timed_out = false;
        for (li, (dropped, reach)) in levels.iter().enumerate() {
            let last_level = li + 1 == levels.len();
            // Past `searchCutoffMs`, the page is what was ranked so far, completed below.
            if Instant::now() >= deadline {
                complete = false;
                timed_out = true;
                break;
            }
            if let Some(n) = need {
                if out.len() >= n {
                    complete = false;
                    break;
                }
            }
            if *reach == Reach::Typos && !terms.derived {
                self.derive_typos(searcher, terms)?;
                qterms = None;
            }
            if *reach == Reach::Typos && reaches.len() == 2 && !terms.has_typos() {
                continue;
            }
            let (qt, max_typos) =
                qterms.get_or_insert_with(|| (terms.query_terms(), terms.max_typos()));
            let ctx = rank::Context {
                rules: &relevancy,
                drop_order: terms.drop_order.as_deref(),
                weights: &weights,
                max_weight,
                search_on: on.as_deref(),
                typos_in: typos_in.as_deref(),
                by_attribute,
                max_typos,
            };
            let kept = terms.kept(*dropped);
            // Shortcuts (see [`Index::shortcut_sets`]): a small set holding the level's best
            // documents is ranked first; when enough of them are as good as the level allows,
            // nothing else can come before them.
            if let (Some(n), Some(cut)) = (need, shortcut.as_ref()) {
                let sets = self.shortcut_sets(terms, &kept, *reach, &weights, cut, on.is_some());
                for set in sets {
                    let docs = searcher
                        .search(set.query.as_ref(), &LevelDocs)
                        .map_err(tv)?;
                    // The fewest typos the level has, nothing lost on the next rules.
                    let expected = (set.typos as u128) << (16 * (set.zero_to - 2));
                    let top = |v: &rank::Verdict| v.cost_range(1, set.zero_to) == expected;
                    let (mut best, count) = self.rank_docs(
                        searcher,
                        &ctx,
                        qt,
                        docs,
                        allowed,
                        &mut seen,
                        false,
                        deadline,
                        &top,
                        key_specs.is_empty().then_some(n - out.len()),
                    )?;
                    if count >= n - out.len() {
                        self.keep_best(rtxn, key_specs, rules, &mut best, n - out.len())?;
                        out.extend(best);
                        return Ok((out, false));
                    }
                }
            }
            let query = terms.kept_query(&kept, *reach);
            let docs = searcher.search(query.as_ref(), &LevelDocs).map_err(tv)?;
            let k = need.map(|n| n.saturating_sub(out.len()));
            let (mut level, count) = self.rank_docs(
                searcher,
                &ctx,
                qt,
                docs,
                allowed,
                &mut seen,
                !last_level,
                deadline,
                &|_| true,
                k.filter(|_| key_specs.is_empty()),
            )?;
            if k.is_some_and(|k| count > k) || Instant::now() >= deadline {
                complete = false;
            }
            self.keep_best(rtxn, key_specs, rules, &mut level, k.unwrap_or(usize::MAX))?;
            out.extend(level);
        }
        // Degraded mode (Meilisearch's too): candidates not ranked in time follow in
        // internal-id order, so a slow search still answers with matching documents.
        if (timed_out || Instant::now() >= deadline) && on.is_none() {
            let want = need.unwrap_or(usize::MAX);
            if out.len() < want {
                let mut have: HashSet<u32> = out.iter().map(|r| r.iid).collect();
                let reach = if terms.derived {
                    Reach::Typos
                } else {
                    Reach::Completions
                };
                let query = terms.universe_query(reach);
                let mut rest = iids_of(searcher, query.as_ref())?;
                rest.retain(|iid| allowed.is_none_or(|a| a.contains(*iid)));
                rest.sort_unstable();
                for iid in rest {
                    if out.len() >= want {
                        break;
                    }
                    if have.insert(iid) {
                        out.push(Ranked::plain(iid));
                    }
                }
            }
        }
        Ok((out, complete))
    }

    /// The shortcut sets of a level, best first (see [`ShortcutSet`]). One word: documents
    /// where it (as typed, then with its alternatives) opens a field of the best weight, then
    /// those holding it in such a field; in a typo level, the same with its derivations of
    /// fewest typos. Several words: documents where they follow each other from the start of
    /// a field of the best weight. Not with `attributesToSearchOn` or multi-word synonyms.
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
        let Group::Word {
            exact,
            synonyms,
            typos,
            split,
            ..
        } = &terms.groups[kept[0]]
        else {
            return out;
        };
        // A split costs one typo and is no single word to look up.
        if reach == Reach::Typos && split.is_some() {
            return out;
        }
        if search_on || synonyms.iter().any(|s| s.len() != 1) {
            return out;
        }
        // Fields of the best weight some field has.
        let best = weights.iter().min().copied().unwrap_or(0);
        let fids: Vec<u32> = (0..weights.len() as u32)
            .filter(|f| weights[*f as usize] == best)
            .collect();
        let text_of = |t: &Term| t.value().as_str().map(str::to_string);
        // The alternatives looked up, and the typos they cost.
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
                let fewest = typos.iter().map(|(_, n)| *n).min().unwrap_or(0);
                (
                    typos
                        .iter()
                        .filter(|(_, n)| *n == fewest)
                        .filter_map(|(t, _)| text_of(t))
                        .collect(),
                    fewest,
                )
            }
            Reach::Typos => return out,
        };
        if words.is_empty() || fids.len() * words.len() > MAX_MARKERS {
            return out;
        }
        let set =
            |words: &[String], field: Field, term: fn(u32, &str) -> String| -> Box<dyn Query> {
                Box::new(BooleanQuery::new(
                    fids.iter()
                        .flat_map(|f| words.iter().map(move |w| term(*f, w)))
                        .map(|m| -> (Occur, Box<dyn Query>) {
                            let t = Term::from_field_text(field, &m);
                            (
                                Occur::Should,
                                Box::new(TermQuery::new(t, IndexRecordOption::Basic)),
                            )
                        })
                        .collect(),
                ))
            };
        let opening = |words: &[String]| -> Box<dyn Query> {
            let first = set(words, self.fields.words, text::first_word_marker);
            if kept.len() == 1 {
                return first;
            }
            let mut parts = vec![(Occur::Must, first)];
            for &k in &kept[1..] {
                parts.push((Occur::Must, group_query(&terms.groups[k], reach)));
            }
            Box::new(BooleanQuery::new(parts))
        };
        // Several words must follow each other in the query.
        let adjacent = kept
            .windows(2)
            .all(|w| terms.positions[w[1]] == terms.positions[w[0]] + terms.spans[w[0]]);
        if let Some((zero_to, exact_next)) = cut.opening {
            if terms.positions[kept[0]] == 0 && adjacent {
                // With `exactness` next, documents opening a field with the word as typed
                // come before those opening it with a completion or synonym.
                if exact_next && kept.len() == 1 && typo == 0 && words.len() > 1 {
                    out.push(ShortcutSet {
                        query: opening(&words[..1]),
                        zero_to,
                        typos: typo,
                    });
                }
                out.push(ShortcutSet {
                    query: opening(&words),
                    zero_to,
                    typos: typo,
                });
            }
        }
        // Every word in a field of the best weight; useless when every field has the same
        // weight.
        let weighted = weights.iter().any(|w| *w != best);
        if let (Some(zero_to), true) = (cut.field, weighted) {
            let mut parts = vec![(
                Occur::Must,
                set(&words, self.fields.field_words, text::field_word),
            )];
            for &k in &kept[1..] {
                let Group::Word {
                    exact, synonyms, ..
                } = &terms.groups[k]
                else {
                    return out;
                };
                let alts: Vec<String> = exact
                    .iter()
                    .chain(synonyms.iter().flatten())
                    .filter_map(text_of)
                    .collect();
                if synonyms.iter().any(|s| s.len() != 1) || fids.len() * alts.len() > MAX_MARKERS {
                    return out;
                }
                parts.push((
                    Occur::Must,
                    set(&alts, self.fields.field_words, text::field_word),
                ));
            }
            let query: Box<dyn Query> = if parts.len() == 1 {
                parts.remove(0).1
            } else {
                Box::new(BooleanQuery::new(parts))
            };
            out.push(ShortcutSet {
                query,
                zero_to,
                typos: typo,
            });
        }
        // Two words in a row, as a phrase (the second with its completions), `proximity`
        // right after `typo`. (Three words at proximity 0 need not form one phrase: each
        // pair may be adjacent in a different place.)
        if let (Some(zero_to), 2, true) = (cut.in_a_row, kept.len(), adjacent) {
            let mut fixed: Vec<(usize, Term)> = Vec::new();
            let mut last: Vec<Term> = Vec::new();
            for (n, &k) in kept.iter().enumerate() {
                let Group::Word {
                    exact, synonyms, ..
                } = &terms.groups[k]
                else {
                    return out;
                };
                if !synonyms.is_empty() || (n + 1 < kept.len() && exact.len() != 1) {
                    return out;
                }
                let offset = (terms.positions[k] - terms.positions[kept[0]]) as usize;
                if n + 1 < kept.len() {
                    fixed.push((offset, exact[0].clone()));
                } else {
                    last = exact.clone();
                    fixed.push((offset, exact[0].clone()));
                }
            }
            let (offset, _) = fixed.pop().expect("two words or more");
            let phrases: Vec<(Occur, Box<dyn Query>)> = last
                .into_iter()
                .map(|t| -> (Occur, Box<dyn Query>) {
                    let mut words = fixed.clone();
                    words.push((offset, t));
                    (
                        Occur::Should,
                        Box::new(tantivy::query::PhraseQuery::new_with_offset(words)),
                    )
                })
                .collect();
            out.push(ShortcutSet {
                query: Box::new(BooleanQuery::new(phrases)),
                zero_to,
                typos: typo,
            });
        }
        out
    }

    /// Ranks `docs` (per segment, in document order), those allowed and not in `seen`;
    /// `mark`: adds them to `seen`.
    #[allow(clippy::too_many_arguments)]
    fn rank_docs(
        &self,
        searcher: &tantivy::Searcher,
        ctx: &rank::Context,
        qt: &[rank::QueryTerm],
        docs: Vec<(u32, Vec<(DocId, u32)>)>,
        allowed: Option<&RoaringBitmap>,
        seen: &mut [Vec<u64>],
        mark: bool,
        deadline: Instant,
        accept: &dyn Fn(&rank::Verdict) -> bool,
        keep: Option<usize>,
    ) -> Result<(Vec<Ranked>, usize)> {
        // With `keep` (no sort key to read), only the best `keep` are held, worst on top.
        let mut best: std::collections::BinaryHeap<ByCost> = Default::default();
        let mut accepted = 0usize;
        let mut level: Vec<Ranked> = Vec::new();
        let mut scratch = Vec::new();
        let mut ranked = 0usize;
        for (seg, list) in docs {
            let reader = searcher.segment_reader(seg);
            let inverted = reader.inverted_index(self.fields.words).map_err(tv)?;
            let mut readers = qt
                .iter()
                .map(|t| rank::TermReader::open(&inverted, t))
                .collect::<tantivy::Result<Vec<_>>>()
                .map_err(tv)?;
            let lens = reader.fast_fields().u64("lens").map_err(tv)?;
            // Allocated only when this level marks documents: a fresh bitset costs the
            // kernel zeroed pages on every search.
            let seen = &mut seen[seg as usize];
            if mark && seen.is_empty() {
                seen.resize(reader.max_doc().div_ceil(64) as usize, 0);
            }
            for (doc, iid) in list {
                ranked += 1;
                if ranked.is_multiple_of(4096) && Instant::now() >= deadline {
                    break;
                }
                let (word, bit) = ((doc / 64) as usize, 1u64 << (doc % 64));
                let earlier = seen.get(word).is_some_and(|w| w & bit != 0);
                if earlier || allowed.is_some_and(|a| !a.contains(iid)) {
                    continue;
                }
                if mark {
                    seen[word] |= bit;
                }
                let doc_lens = || lens.values_for_doc(doc).collect::<Vec<u64>>();
                let Some(verdict) = rank::rank(ctx, qt, &mut readers, doc, &doc_lens, &mut scratch)
                else {
                    continue;
                };
                if !accept(&verdict) {
                    continue;
                }
                accepted += 1;
                let r = Ranked {
                    iid,
                    verdict,
                    keys: Vec::new(),
                };
                match keep {
                    Some(k) => {
                        if best.len() < k {
                            best.push(ByCost(r));
                        } else if best
                            .peek()
                            .is_some_and(|w| (r.verdict.cost, r.iid) < (w.0.verdict.cost, w.0.iid))
                        {
                            best.pop();
                            best.push(ByCost(r));
                        }
                    }
                    None => level.push(r),
                }
            }
        }
        if keep.is_some() {
            level = best.into_iter().map(|b| b.0).collect();
        }
        Ok((level, accepted))
    }

    /// Orders `level` and keeps its best `k`, reading sort keys when rules need them.
    fn keep_best(
        &self,
        rtxn: &heed::RoTxn,
        key_specs: &[SortKey],
        rules: &[rank::Rule],
        level: &mut Vec<Ranked>,
        k: usize,
    ) -> Result<()> {
        if !key_specs.is_empty() {
            let ids: Vec<u32> = level.iter().map(|r| r.iid).collect();
            let keys = self.sort_keys(rtxn, key_specs, &ids)?;
            for (r, k) in level.iter_mut().zip(keys.chunks(key_specs.len())) {
                r.keys = k.to_vec();
            }
        }
        let order = steps(rules);
        let cmp = |a: &Ranked, b: &Ranked| compare_ranked(&order, a, b);
        if level.len() > k {
            // Only the page's part needs an order.
            if k == 0 {
                level.clear();
                return Ok(());
            }
            level.select_nth_unstable_by(k - 1, cmp);
            level.truncate(k);
        }
        level.sort_unstable_by(cmp);
        Ok(())
    }
}

/// How long ranking may take (`searchCutoffMs`, 1500 ms by default): past it, a search
/// answers with what it ranked so far.
fn search_cutoff(settings: Option<&Value>) -> std::time::Duration {
    let ms = settings
        .and_then(|s| s["searchCutoffMs"].as_u64())
        .unwrap_or(1500);
    std::time::Duration::from_millis(ms)
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
