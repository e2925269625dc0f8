//! Federated search: several queries, on one index or several, answered as one ranked list
//! (`POST /multi-search` with `federation`). Each query runs steps 1 to 6 of a search (see
//! the module above) with the federation's window; its hits are compared by their score runs
//! in Meilisearch's merge order, the same document of the same index is kept once, the
//! window is cut, and each query's printer prints its hits, `_federation` added.
//!
//! The merge order (the spec's seven rules): the hits' runs are compared in turn: two
//! relevancy runs by their score times the query's weight, two sort keys (or two geo
//! distances) in the same direction by their values; when a pair cannot be compared (a score
//! against a sort key, opposite directions) the hit with more runs left wins; then the
//! global ranking scores times the weights; then the lower query position.
//!
//! Queries sent to other instances (see [`super::remote`]) are asked while the local ones
//! run; their hits take their places in the same merge.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use api_types::{Error, Result};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::distinct::num_bits;
use super::faceting::{FacetCounts, FacetStats};
use super::page::{Ask, Pagination, Window};
use super::printer::{facets_json, Printer};
use super::query::{Pins, QueryCandidates};
use super::ranking::{rule_runs, Ranked, Run};
use super::remote::{self, Group, Remote, RemoteHit};
use super::{key_paths, SearchQuery};
use crate::facets::{Column, Item};
use crate::index::Index;
use crate::sort::{self, SortKey};
use crate::value::{self, Key};

/// One query of a federated search, on its index.
pub struct FederatedQuery<'a> {
    pub index: &'a Index,
    pub index_uid: String,
    pub query: SearchQuery,
    /// `federationOptions.weight`: multiplies the query's scores.
    pub weight: f64,
    /// The query's position in the request (`queriesPosition`; ties go to the lower).
    pub position: usize,
    /// The network's name for this instance, when the query named it as its remote.
    pub remote: Option<String>,
}

/// The `federation` object, as the TypeScript layer validated it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Federation {
    #[serde(default)]
    pub offset: Option<usize>,
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub page: Option<usize>,
    #[serde(default)]
    pub hits_per_page: Option<usize>,
    /// Index uids in the order given, with the facets asked of each.
    #[serde(default)]
    pub facets_by_index: Option<Vec<(String, Vec<String>)>>,
    #[serde(default)]
    pub merge_facets: Option<MergeFacets>,
    /// Keeps the first hit of each value of this attribute, across every index.
    #[serde(default)]
    pub distinct: Option<String>,
    /// Adds `performanceDetails`: the time of each step.
    #[serde(default)]
    pub show_performance_details: bool,
    /// Adds each hit's runs to `_federation` (`_runs`), for the instance that asked.
    #[serde(default)]
    pub show_runs: bool,
    /// How long a remote may take to answer.
    #[serde(default)]
    pub remote_timeout_ms: Option<u64>,
    /// A search over the network: the response reads as one search's (`query` after `hits`).
    #[serde(default)]
    pub query: Option<String>,
    /// The queries at one position are the same query over the shards of one index: their
    /// words derive to what one index holding every shard would choose.
    #[serde(default)]
    pub pin_derivations: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MergeFacets {
    #[serde(default)]
    pub max_values_per_facet: Option<usize>,
}

/// One value of the federation's distinct attribute, comparable across indexes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum DistinctValue {
    Num(u64),
    Str(String),
}

/// Where a hit comes from: a local query's result, or a remote's answer (already printed).
enum Source {
    Local(Ranked),
    Remote(Map<String, Value>),
}

struct Candidate {
    source: Source,
    /// The query's position in the request.
    position: usize,
    distinct: Vec<DistinctValue>,
    groups: Vec<Group>,
    /// The global ranking score times the query's weight (`weightedRankingScore`).
    weighted: f64,
}

/// The merge order of two hits (`Less`: `a` comes first), query positions aside.
fn compare(a: &Candidate, b: &Candidate) -> Ordering {
    let n = a.groups.len().max(b.groups.len());
    for i in 0..n {
        let by_groups_left = || {
            (b.groups.len() - i.min(b.groups.len())).cmp(&(a.groups.len() - i.min(a.groups.len())))
        };
        let step = match (a.groups.get(i), b.groups.get(i)) {
            (Some(Group::Relevance(x)), Some(Group::Relevance(y))) => y.total_cmp(x),
            (Some(Group::Sort { asc, key: x }), Some(Group::Sort { asc: asc_b, key: y }))
                if asc == asc_b =>
            {
                value::compare(x, y, *asc)
            }
            (
                Some(Group::Geo { asc, distance: x }),
                Some(Group::Geo {
                    asc: asc_b,
                    distance: y,
                }),
            ) if asc == asc_b => value::compare::<String>(&Key::Num(*x), &Key::Num(*y), *asc),
            _ => return by_groups_left().then_with(|| b.weighted.total_cmp(&a.weighted)),
        };
        if step != Ordering::Equal {
            return step;
        }
    }
    b.weighted.total_cmp(&a.weighted)
}

/// The merge order with ties broken by the lower query position.
fn merge_order(a: &Candidate, b: &Candidate) -> Ordering {
    compare(a, b).then(a.position.cmp(&b.position))
}

/// The value a hit's sort key reads: its number, or its string's normal form.
fn key_value(ranked: &Ranked, asc: bool, column: Option<&Arc<Column>>) -> Key<String> {
    let Some(c) = column else { return Key::Missing };
    // Read from the column: a placeholder search sorted by the value index keeps no keys.
    match c.sort_key(ranked.iid, asc) {
        Key::Num(n) => Key::Num(n),
        Key::Str(rank) => c
            .string_with_rank(ranked.iid, rank)
            .map_or(Key::Missing, |v| Key::Str(v.to_string())),
        Key::Missing => Key::Missing,
    }
}

/// The values of the distinct attribute a hit holds.
fn distinct_values(ranked: &Ranked, column: &Column) -> Vec<DistinctValue> {
    column
        .values(ranked.iid)
        .iter()
        .map(|v| match *v {
            Item::Num(n) => DistinctValue::Num(num_bits(n)),
            Item::Str(id) => DistinctValue::Str(column.strings[id as usize].normalized.to_string()),
        })
        .collect()
}

fn groups_of(
    ranked: &Ranked,
    rules: &[super::ranking::Rule],
    specs: &[SortKey],
    columns: &[Arc<Column>],
    weight: f64,
) -> Vec<Group> {
    rule_runs(&ranked.verdict, rules)
        .into_iter()
        .filter_map(|run| match run {
            Run::Relevance(score) => Some(Group::Relevance(score * weight)),
            Run::Vector => Some(Group::Relevance(
                ranked.similarity.map_or(0.0, |s| s as f64) * weight,
            )),
            Run::Key { slot, asc } => match specs.get(slot)? {
                SortKey::Field { .. } => Some(Group::Sort {
                    asc,
                    key: key_value(ranked, asc, columns.get(slot)),
                }),
                SortKey::GeoPoint { lat, lng, .. } => {
                    let distance = columns
                        .get(slot)
                        .and_then(|c| c.point(ranked.iid))
                        .map_or(f64::INFINITY, |(a, b)| sort::haversine_m(*lat, *lng, a, b));
                    Some(Group::Geo { asc, distance })
                }
            },
        })
        .collect()
}

/// The kinds of a query's runs, to refuse queries whose orders cannot be merged.
fn directions(rules: &[super::ranking::Rule]) -> Vec<Option<bool>> {
    let mut out: Vec<Option<bool>> = Vec::new();
    for rule in rules {
        match *rule {
            super::ranking::Rule::Key { asc, .. } => out.push(Some(asc)),
            _ => {
                if out.last() != Some(&None) {
                    out.push(None)
                }
            }
        }
    }
    out
}

/// One query as the TypeScript layer sends it (see `docs/native-contract.md`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireQuery {
    index_uid: String,
    weight: f64,
    query: SearchQuery,
    #[serde(default)]
    position: Option<usize>,
    #[serde(default)]
    remote: Option<String>,
}

#[derive(Deserialize)]
struct WireRequest {
    queries: Vec<WireQuery>,
    #[serde(default)]
    remotes: Vec<Remote>,
    federation: Federation,
}

/// [`federated_search`] on the request's JSON text: `indexes[i]` is the index of local query
/// `i`; the queries of `remotes` are asked of other instances.
pub fn federated_search_json(indexes: &[&Index], request_json: &str) -> Result<Vec<u8>> {
    let wire: WireRequest = serde_json::from_str(request_json).map_err(Error::internal)?;
    if wire.queries.len() != indexes.len() {
        return Err(Error::internal(
            "a federated search needs one index per query",
        ));
    }
    let queries: Vec<FederatedQuery> = wire
        .queries
        .into_iter()
        .zip(indexes)
        .enumerate()
        .map(|(i, (q, index))| FederatedQuery {
            index,
            index_uid: q.index_uid,
            query: q.query,
            weight: q.weight,
            position: q.position.unwrap_or(i),
            remote: q.remote,
        })
        .collect();
    federated_search(&queries, &wire.remotes, &wire.federation)
}

/// Runs a federated search and returns the response body.
pub fn federated_search(
    queries: &[FederatedQuery],
    remotes: &[Remote],
    federation: &Federation,
) -> Result<Vec<u8>> {
    let started = Instant::now();
    let ask = Ask {
        offset: federation.offset.unwrap_or(0),
        limit: federation.limit.unwrap_or(20),
        page: federation.page,
        hits_per_page: federation.hits_per_page,
    };
    // Each index's `maxTotalHits` bounds its own query; the merged list is not cut again.
    let window = Window::asked(ask, usize::MAX);
    let (offset, limit, end) = (window.offset, window.limit, window.end());
    let timeout = std::time::Duration::from_millis(federation.remote_timeout_ms.unwrap_or(30_000));
    let facets_of = |uid: &str| {
        federation
            .facets_by_index
            .iter()
            .flatten()
            .find(|(u, _)| u == uid)
            .map(|(_, f)| f.clone())
    };
    // A search over the network first settles what the words derive to (`query::pins`).
    // (Without remotes every query runs here, on one dictionary: nothing to settle.)
    let pinning = federation.pin_derivations && !remotes.is_empty();
    let (pins, unreachable) = match pinning {
        true => pin_derivations(queries, remotes, timeout)?,
        false => Default::default(),
    };
    std::thread::scope(|scope| -> Result<Vec<u8>> {
        // The remotes are asked while the local queries run.
        let asks: Vec<_> = remotes
            .iter()
            .map(|r| {
                let facets_of = &facets_of;
                let failed = unreachable.get(&r.name).cloned();
                let pinned: Option<Vec<Pins>> = pins
                    .answered
                    .contains(&r.name)
                    .then(|| r.queries.iter().map(|q| pins.of(q.position)).collect());
                scope.spawn(move || match failed {
                    Some(e) => Err(e),
                    None => remote::ask(r, end, facets_of, pinned.as_deref(), timeout),
                })
            })
            .collect();

        // Each query's typed result, with what its printer needs.
        let mut txns = Vec::with_capacity(queries.len());
        for fq in queries {
            let rtxn = fq.index.store.read()?;
            let settings = fq.index.stored_settings(&rtxn)?;
            txns.push((rtxn, settings));
        }
        let mut results = Vec::with_capacity(queries.len());
        let mut candidates: Vec<Vec<Candidate>> = Vec::with_capacity(queries.len());
        let mut semantic = false;
        let mut shapes: Vec<Vec<Option<bool>>> = Vec::with_capacity(queries.len());
        for (qi, fq) in queries.iter().enumerate() {
            let (rtxn, settings) = &txns[qi];
            let mut q = fq.query.clone();
            q.offset = 0;
            q.limit = end;
            q.page = None;
            q.hits_per_page = None;
            q.show_ranking_score = true;
            if pinning {
                q.pins = Some(pins.of(fq.position));
            }
            // `facetsByIndex` is counted on the first query of each index it names.
            q.facets = match queries[..qi].iter().any(|p| p.index_uid == fq.index_uid) {
                true => None,
                false => federation
                    .facets_by_index
                    .iter()
                    .flatten()
                    .find(|(uid, _)| *uid == fq.index_uid)
                    .map(|(_, facets)| facets.clone()),
            };
            let mut result = fq
                .index
                .search_result(rtxn, settings.as_ref(), &q, started)
                .map_err(|e| Error {
                    message: format!("Inside `.queries[{qi}]`: {}", e.message),
                    ..e
                })?;
            let shape = directions(&result.rules);
            for (pj, other) in shapes.iter().enumerate() {
                let clash = shape
                    .iter()
                    .zip(other)
                    .any(|(a, b)| matches!((a, b), (Some(x), Some(y)) if x != y));
                if clash {
                    return Err(Error::new(
                    "invalid_multi_search_query_ranking_rules",
                    format!("Inside `.queries[{qi}]`: The results of queries #{pj} and #{qi} are incompatible: \n  - cannot compare two sort rules in opposite directions"),
                ));
                }
            }
            shapes.push(shape);
            semantic |= result.semantic_hits.is_some();
            let columns = match result.key_specs.is_empty() {
                true => Vec::new(),
                false => fq.index.columns(rtxn, &key_paths(&result.key_specs))?,
            };
            let distinct_column = match &federation.distinct {
                Some(field) => {
                    let rules = crate::filter::rules::rules_of(settings.as_ref());
                    super::distinct::distinct_field(Some(field), settings.as_ref(), &rules)
                        .map_err(|e| {
                            Error::new(
                                "invalid_multi_search_distinct",
                                format!(
                                    "Inside `.federation.distinct` (index `{}`): {}",
                                    fq.index_uid, e.message
                                ),
                            )
                        })?;
                    Some(
                        fq.index
                            .columns(rtxn, std::slice::from_ref(field))?
                            .remove(0),
                    )
                }
                None => None,
            };
            let hits = std::mem::take(&mut result.hits);
            candidates.push(
                hits.into_iter()
                    .map(|ranked| Candidate {
                        position: fq.position,
                        distinct: distinct_column
                            .as_ref()
                            .map(|c| distinct_values(&ranked, c))
                            .unwrap_or_default(),
                        groups: groups_of(
                            &ranked,
                            &result.rules,
                            &result.key_specs,
                            &columns,
                            fq.weight,
                        ),
                        weighted: ranked.score() * fq.weight,
                        source: Source::Local(ranked),
                    })
                    .collect(),
            );
            results.push(result);
        }

        // The remotes' answers: each a list of its own, in its merged order.
        let mut remote_errors = Map::new();
        let mut remote_total = 0usize;
        let mut remote_facets: Vec<(String, FacetCounts)> = Vec::new();
        for (r, handle) in remotes.iter().zip(asks) {
            let answer = handle
                .join()
                .unwrap_or_else(|_| Err(Error::internal("a remote request panicked")));
            match answer {
                Ok(answer) => {
                    remote_total += answer.total;
                    remote_facets.extend(answer.facets);
                    candidates.push(
                        answer
                            .hits
                            .into_iter()
                            .map(|h: RemoteHit| Candidate {
                                distinct: federation
                                    .distinct
                                    .as_deref()
                                    .map(|f| remote_distinct_values(&h.hit, f))
                                    .unwrap_or_default(),
                                position: h.position,
                                groups: h.groups,
                                weighted: h.weighted,
                                source: Source::Remote(h.hit),
                            })
                            .collect(),
                    );
                }
                Err(e) => {
                    remote_errors.insert(r.name.clone(), e.body());
                    candidates.push(Vec::new());
                }
            }
        }
        let searched_at = Instant::now();
        // The merge: each query's list keeps its own order; the best head goes next.
        let mut heads = vec![0usize; candidates.len()];
        let mut seen: HashSet<(&str, u32)> = HashSet::new();
        let mut seen_values: HashSet<DistinctValue> = HashSet::new();
        // Hits left out as duplicates or by `distinct`: they do not count in the totals.
        let mut dropped = 0usize;
        let mut merged: Vec<(usize, usize)> = Vec::new();
        while merged.len() < end {
            let mut best: Option<usize> = None;
            for (qi, list) in candidates.iter().enumerate() {
                let Some(c) = list.get(heads[qi]) else {
                    continue;
                };
                best = match best {
                    Some(b) if merge_order(c, &candidates[b][heads[b]]) != Ordering::Less => {
                        Some(b)
                    }
                    _ => Some(qi),
                };
            }
            let Some(qi) = best else { break };
            let j = heads[qi];
            heads[qi] += 1;
            let c = &candidates[qi][j];
            // The same document of the same index is kept once (a remote deduplicates its own).
            let duplicate = match &c.source {
                Source::Local(ranked) => !seen.insert((queries[qi].index_uid.as_str(), ranked.iid)),
                Source::Remote(_) => false,
            };
            if duplicate || c.distinct.iter().any(|v| seen_values.contains(v)) {
                dropped += 1;
                continue;
            }
            seen_values.extend(c.distinct.iter().cloned());
            merged.push((qi, j));
        }
        let page: Vec<(usize, usize)> = merged.into_iter().skip(offset).take(limit).collect();

        let merged_at = Instant::now();
        // Printing: each query prints its own hits, then they take their merged places.
        let mut printed: HashMap<(usize, u32), Map<String, Value>> = HashMap::new();
        for (qi, fq) in queries.iter().enumerate() {
            let mine: Vec<Ranked> = page
                .iter()
                .filter(|(q, _)| *q == qi)
                .filter_map(|(_, j)| match &candidates[qi][*j].source {
                    Source::Local(ranked) => Some(ranked.clone()),
                    Source::Remote(_) => None,
                })
                .collect();
            if mine.is_empty() {
                continue;
            }
            let (rtxn, settings) = &txns[qi];
            results[qi].hits = mine;
            Printer::new(fq.index, rtxn, settings.as_ref(), &fq.query).each_hit(
                &results[qi],
                |ranked, hit| {
                    printed.insert((qi, ranked.iid), hit);
                    Ok(())
                },
            )?;
        }
        let mut out = Vec::with_capacity(4096);
        out.extend_from_slice(b"{\"hits\":[");
        let mut first = true;
        let mut semantic_hits = 0usize;
        for (qi, j) in &page {
            let c = &candidates[*qi][*j];
            let mut federation_entry = Map::new();
            let hit = match &c.source {
                Source::Local(ranked) => {
                    let Some(mut hit) = printed.remove(&(*qi, ranked.iid)) else {
                        continue;
                    };
                    semantic_hits += ranked.semantic as usize;
                    let score = hit.shift_remove("_rankingScore");
                    let details = hit.shift_remove("_rankingScoreDetails");
                    federation_entry.insert("indexUid".into(), json!(queries[*qi].index_uid));
                    federation_entry.insert("queriesPosition".into(), json!(c.position));
                    federation_entry.insert("weightedRankingScore".into(), json!(c.weighted));
                    if let Some(name) = &queries[*qi].remote {
                        federation_entry.insert("remote".into(), json!(name));
                    }
                    hit.insert("_federation".into(), Value::Null);
                    if let Some(s) = score {
                        hit.insert("_rankingScore".into(), s);
                    }
                    if let Some(d) = details {
                        hit.insert("_rankingScoreDetails".into(), d);
                    }
                    hit
                }
                Source::Remote(hit) => {
                    let hit = hit.clone();
                    let uid = hit
                        .get("_federation")
                        .and_then(|f| f.get("indexUid"))
                        .cloned()
                        .unwrap_or(Value::Null);
                    federation_entry.insert("indexUid".into(), uid);
                    federation_entry.insert("queriesPosition".into(), json!(c.position));
                    federation_entry.insert("weightedRankingScore".into(), json!(c.weighted));
                    let name = &remotes[*qi - queries.len()].name;
                    federation_entry.insert("remote".into(), json!(name));
                    hit
                }
            };
            let mut hit = hit;
            if federation.show_runs {
                let runs: Vec<Value> = c.groups.iter().map(Group::to_json).collect();
                federation_entry.insert("_runs".into(), Value::Array(runs));
            }
            hit.insert("_federation".into(), Value::Object(federation_entry));
            if !std::mem::take(&mut first) {
                out.push(b',');
            }
            serde_json::to_writer(&mut out, &hit).map_err(Error::internal)?;
        }
        out.extend_from_slice(b"],");
        if let Some(q) = &federation.query {
            out.extend_from_slice(b"\"query\":");
            serde_json::to_writer(&mut out, q).map_err(Error::internal)?;
            out.push(b',');
        }
        let printed_at = Instant::now();

        // The totals: each query's matches, less the hits the merge left out (exact when every
        // match fits in the window; beyond it, a document two queries of one index match counts
        // twice).
        let total: usize = results
            .iter()
            .map(|r| r.candidates.min(r.max_total_hits))
            .sum::<usize>()
            .saturating_add(remote_total)
            .saturating_sub(dropped);
        // A search over the network reads as one search: its total is bounded as one index's
        // is (the index's settings are the same on every instance).
        let total = match (
            &federation.query,
            results.iter().map(|r| r.max_total_hits).min(),
        ) {
            (Some(_), Some(bound)) => total.min(bound),
            _ => total,
        };
        let mut body = Map::new();
        body.insert(
            "processingTimeMs".into(),
            (started.elapsed().as_millis() as u64).into(),
        );
        Pagination::asked(ask, total).write(&mut body);
        if let Some(by_index) = &federation.facets_by_index {
            // In the order `facetsByIndex` names the indexes; one no query uses is left out.
            let per_index: Vec<(&String, FacetCounts)> = by_index
                .iter()
                .filter_map(|(uid, _)| {
                    let local = queries
                        .iter()
                        .position(|q| &q.index_uid == uid)
                        .and_then(|qi| results[qi].facets.take());
                    let mut parts: Vec<(&String, FacetCounts)> =
                        local.map(|f| (uid, f)).into_iter().collect();
                    for (_, f) in remote_facets.iter_mut().filter(|(u, _)| u == uid) {
                        parts.push((uid, std::mem::take(f)));
                    }
                    match parts.len() {
                        0 => None,
                        1 => parts.pop(),
                        // The same index on several instances: its counts add up.
                        _ => Some((uid, merge_facets(parts, None))),
                    }
                })
                .collect();
            match &federation.merge_facets {
                Some(m) => {
                    let (distribution, stats) =
                        facets_json(merge_facets(per_index, m.max_values_per_facet));
                    body.insert("facetDistribution".into(), distribution);
                    body.insert("facetStats".into(), stats);
                }
                None if !per_index.is_empty() => {
                    let by_uid: Map<String, Value> = per_index
                        .into_iter()
                        .map(|(uid, facets)| {
                            let (distribution, stats) = facets_json(facets);
                            (
                                uid.clone(),
                                json!({"distribution": distribution, "stats": stats}),
                            )
                        })
                        .collect();
                    body.insert("facetsByIndex".into(), Value::Object(by_uid));
                }
                None => {}
            }
        }
        if semantic {
            body.insert("semanticHitCount".into(), semantic_hits.into());
        }
        if !remotes.is_empty() || queries.iter().any(|q| q.remote.is_some()) {
            body.insert("remoteErrors".into(), Value::Object(remote_errors));
        }
        if federation.show_performance_details {
            let span = |a: Instant, b: Instant| format!("{:.2?}", b.duration_since(a));
            let done = Instant::now();
            body.insert(
                "performanceDetails".into(),
                json!({
                    "search > execute local search": span(started, searched_at),
                    "search > merge results": span(searched_at, merged_at),
                    "search > hydrate documents": span(merged_at, printed_at),
                    "search > merge facets": span(printed_at, done),
                    "search": span(started, done),
                }),
            );
        }
        let rest = serde_json::to_vec(&body).map_err(Error::internal)?;
        out.extend_from_slice(&rest[1..]);
        Ok(out)
    })
}

/// The derivations chosen per query position, and which remotes took part.
#[derive(Default)]
struct Pinned {
    by_position: HashMap<usize, Pins>,
    answered: HashSet<String>,
}

impl Pinned {
    fn of(&self, position: usize) -> Pins {
        self.by_position.get(&position).cloned().unwrap_or_default()
    }
}

/// Asks every instance (the local queries here, the remotes in parallel) what its words
/// derive from, and merges the answers per query position. A remote that fails is left out,
/// its error kept for `remoteErrors`.
fn pin_derivations(
    queries: &[FederatedQuery],
    remotes: &[Remote],
    timeout: std::time::Duration,
) -> Result<(Pinned, HashMap<String, Error>)> {
    std::thread::scope(|scope| {
        let asks: Vec<_> = remotes
            .iter()
            .map(|r| scope.spawn(move || remote::ask_candidates(r, timeout)))
            .collect();
        let mut found: HashMap<usize, Vec<QueryCandidates>> = HashMap::new();
        for fq in queries {
            let text = fq.query.q.as_deref().unwrap_or("");
            let c = fq
                .index
                .query_candidates(text, fq.query.matching_strategy.as_deref())?;
            found.entry(fq.position).or_default().push(c);
        }
        let mut pinned = Pinned::default();
        let mut failed = HashMap::new();
        for (r, handle) in remotes.iter().zip(asks) {
            match handle
                .join()
                .unwrap_or_else(|_| Err(Error::internal("a remote request panicked")))
            {
                Ok(Some(list)) => {
                    pinned.answered.insert(r.name.clone());
                    for (q, c) in r.queries.iter().zip(list) {
                        found.entry(q.position).or_default().push(c);
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    failed.insert(r.name.clone(), e);
                }
            }
        }
        pinned.by_position = found
            .into_iter()
            .map(|(p, parts)| (p, Pins::merge(parts)))
            .collect();
        Ok((pinned, failed))
    })
}

/// What each query's words would derive from here: the answer to another instance's
/// [`remote::CANDIDATES_HEADER`] request, `{"candidates":[...]}` in query order.
pub fn derivation_candidates_json(indexes: &[&Index], request_json: &str) -> Result<Vec<u8>> {
    let wire: WireRequest = serde_json::from_str(request_json).map_err(Error::internal)?;
    let mut out = Vec::with_capacity(wire.queries.len());
    for (q, index) in wire.queries.iter().zip(indexes) {
        let text = q.query.q.as_deref().unwrap_or("");
        out.push(index.query_candidates(text, q.query.matching_strategy.as_deref())?);
    }
    serde_json::to_vec(&json!({ "candidates": out })).map_err(Error::internal)
}

/// The values of the federation's distinct attribute in a remote's hit.
fn remote_distinct_values(hit: &Map<String, Value>, field: &str) -> Vec<DistinctValue> {
    let one = |v: &Value| match v {
        Value::Number(n) => n.as_f64().map(|n| DistinctValue::Num(num_bits(n))),
        Value::String(s) => Some(DistinctValue::Str(s.to_lowercase())),
        _ => None,
    };
    match hit.get(field) {
        Some(Value::Array(values)) => values.iter().filter_map(one).collect(),
        Some(v) => one(v).into_iter().collect(),
        None => Vec::new(),
    }
}

/// `mergeFacets`: counts summed per value across indexes (values in order of their text),
/// stats the smallest minimum and the largest maximum; at most `max_values` per facet.
fn merge_facets(per_index: Vec<(&String, FacetCounts)>, max_values: Option<usize>) -> FacetCounts {
    let mut counts: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut stats: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for (_, facets) in per_index {
        for (name, values) in facets.distribution {
            let entry = counts.entry(name).or_default();
            for (v, n) in values.as_object().into_iter().flatten() {
                *entry.entry(v.clone()).or_default() += n.as_u64().unwrap_or(0);
            }
        }
        for s in facets.stats {
            let e = stats.entry(s.name).or_insert((s.min, s.max));
            e.0 = e.0.min(s.min);
            e.1 = e.1.max(s.max);
        }
    }
    let distribution = counts
        .into_iter()
        .map(|(name, values)| {
            let values: Map<String, Value> = values
                .into_iter()
                .take(max_values.unwrap_or(usize::MAX))
                .map(|(v, n)| (v, n.into()))
                .collect();
            (name, Value::Object(values))
        })
        .collect();
    let stats = stats
        .into_iter()
        .map(|(name, (min, max))| FacetStats { name, min, max })
        .collect();
    FacetCounts {
        distribution,
        stats,
    }
}
