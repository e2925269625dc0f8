//! The merge of a federated search: each query's hits (local, or a remote's answer) keep
//! their own order, and the best head of all the lists goes next, by the merge order the
//! module above describes; the same document of the same index is kept once, and
//! `distinct` keeps the first hit of each value across every index.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::super::distinct::num_bits;
use super::super::ranking::{self, rule_runs, Ranked, Run};
use super::super::remote::Group;
use super::FederatedQuery;
use crate::facets::{Column, Item};
use crate::sort::{self, SortKey};
use crate::value::{self, Key};

/// One value of the federation's distinct attribute, comparable across indexes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum DistinctValue {
    Num(u64),
    Str(String),
}

/// Where a hit comes from: a local query's result, or a remote's answer (already printed).
pub(super) enum Source {
    Local(Ranked),
    Remote(Map<String, Value>),
}

pub(super) struct Candidate {
    pub source: Source,
    /// The query's position in the request.
    pub position: usize,
    pub distinct: Vec<DistinctValue>,
    pub groups: Vec<Group>,
    /// The global ranking score times the query's weight (`weightedRankingScore`).
    pub weighted: f64,
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
pub(super) fn distinct_values(ranked: &Ranked, column: &Column) -> Vec<DistinctValue> {
    column
        .values(ranked.iid)
        .iter()
        .map(|v| match *v {
            Item::Num(n) => DistinctValue::Num(num_bits(n)),
            Item::Str(id) => DistinctValue::Str(column.strings[id as usize].normalized.to_string()),
        })
        .collect()
}

pub(super) fn groups_of(
    ranked: &Ranked,
    rules: &[ranking::Rule],
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

/// What one run of a query's ranking orders by, as Meilisearch compares federated queries:
/// relevancy (consecutive relevancy rules are one run), a sort, or a geo sort, each with its
/// direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RunKind {
    Relevancy,
    Sort { asc: bool },
    Geo { asc: bool },
}

/// The kinds of a query's runs, to refuse queries whose orders cannot be merged.
pub(super) fn directions(rules: &[ranking::Rule], keys: &[SortKey]) -> Vec<RunKind> {
    let mut out: Vec<RunKind> = Vec::new();
    for rule in rules {
        match *rule {
            ranking::Rule::Key { slot, asc } => out.push(match keys.get(slot) {
                Some(SortKey::GeoPoint { .. }) => RunKind::Geo { asc },
                _ => RunKind::Sort { asc },
            }),
            _ => {
                if out.last() != Some(&RunKind::Relevancy) {
                    out.push(RunKind::Relevancy)
                }
            }
        }
    }
    out
}

/// Why two queries' runs cannot be merged (Meilisearch's reasons): the first pair of runs, in
/// order, whose kinds differ.
pub(super) fn incompatibility(previous: &[RunKind], current: &[RunKind]) -> Option<&'static str> {
    use RunKind::*;
    let (a, b) = previous.iter().zip(current).find(|(a, b)| a != b)?;
    Some(match (a, b) {
        (Relevancy, Sort { .. }) | (Sort { .. }, Relevancy) => {
            "cannot compare a relevancy rule with a sort rule"
        }
        (Relevancy, Geo { .. }) | (Geo { .. }, Relevancy) => {
            "cannot compare a relevancy rule with a geosort rule"
        }
        (Sort { .. }, Sort { .. }) => "cannot compare two sort rules in opposite directions",
        (Geo { .. }, Geo { .. }) => "cannot compare two geosort rules in opposite directions",
        _ => "cannot compare a sort rule with a geosort rule",
    })
}

/// The values of the federation's distinct attribute in a remote's hit.
pub(super) fn remote_distinct_values(hit: &Map<String, Value>, field: &str) -> Vec<DistinctValue> {
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

/// The merged order, as (list, index in the list), up to `end` hits, and how many hits the
/// merge left out as duplicates or by `distinct` (they do not count in the totals).
pub(super) fn merge(
    lists: &[Vec<Candidate>],
    queries: &[FederatedQuery],
    end: usize,
) -> (Vec<(usize, usize)>, usize) {
    let mut heads = vec![0usize; lists.len()];
    let mut seen: HashSet<(&str, u32)> = HashSet::new();
    let mut seen_values: HashSet<DistinctValue> = HashSet::new();
    let mut dropped = 0usize;
    let mut merged: Vec<(usize, usize)> = Vec::new();
    while merged.len() < end {
        let mut best: Option<usize> = None;
        for (qi, list) in lists.iter().enumerate() {
            let Some(c) = list.get(heads[qi]) else {
                continue;
            };
            best = match best {
                Some(b) if merge_order(c, &lists[b][heads[b]]) != Ordering::Less => Some(b),
                _ => Some(qi),
            };
        }
        let Some(qi) = best else { break };
        let j = heads[qi];
        heads[qi] += 1;
        let c = &lists[qi][j];
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
    (merged, dropped)
}

#[cfg(test)]
mod tests {
    use super::RunKind::*;
    use super::*;

    #[test]
    fn incompatible_runs_give_meilisearchs_reasons() {
        let (r, sa, sd, ga, gd) = (
            Relevancy,
            Sort { asc: true },
            Sort { asc: false },
            Geo { asc: true },
            Geo { asc: false },
        );
        assert_eq!(incompatibility(&[r, sa, r], &[r]), None);
        assert_eq!(incompatibility(&[sa], &[]), None);
        assert_eq!(
            incompatibility(&[r, sa], &[sa]),
            Some("cannot compare a relevancy rule with a sort rule")
        );
        assert_eq!(
            incompatibility(&[ga], &[r]),
            Some("cannot compare a relevancy rule with a geosort rule")
        );
        assert_eq!(
            incompatibility(&[sa], &[sd]),
            Some("cannot compare two sort rules in opposite directions")
        );
        assert_eq!(
            incompatibility(&[gd], &[ga]),
            Some("cannot compare two geosort rules in opposite directions")
        );
        assert_eq!(
            incompatibility(&[ga], &[sa]),
            Some("cannot compare a sort rule with a geosort rule")
        );
    }
}
