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

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::time::Instant;

use api_types::{Error, Result};
use roaring::RoaringBitmap;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use tantivy::collector::{Collector, Count, FilterCollector, SegmentCollector};
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::Field;
use tantivy::schema::IndexRecordOption;
use tantivy::{DocId, Score, SegmentReader, Term};

use super::{project, retrieve, string_list, text, tv, Index};
use crate::facets::{self, Column, FacetOrder, Item, SortKey as Key};
use crate::filter::eval::within;
use crate::filter::rules;
use crate::format;
use crate::sort::{self, SortKey};
use crate::store::{heed_error, keys};
use crate::tokens;

use super::rank;

mod candidates;
mod query;

use candidates::{iids_of, search_on};
use query::{group_query, prefix_search, typo_list_has, typos_for_length, Group, Reach, Terms};

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

impl Index {
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

/// How long ranking may take (`searchCutoffMs`, 1500 ms by default): past it, a search
/// answers with what it ranked so far.
fn search_cutoff(settings: Option<&Value>) -> std::time::Duration {
    let ms = settings
        .and_then(|s| s["searchCutoffMs"].as_u64())
        .unwrap_or(1500);
    std::time::Duration::from_millis(ms)
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
