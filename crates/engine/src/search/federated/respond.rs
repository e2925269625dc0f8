//! The response of a federated search: each query prints its own hits of the page, which
//! take their merged places with `_federation`; then the totals, the facets (by index, or
//! merged), `remoteErrors` and the timings.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use api_types::{Error, Result};
use serde_json::{json, Map, Value};

use super::super::faceting::{FacetCounts, FacetStats};
use super::super::page::{Ask, Pagination};
use super::super::printer::{facets_json, Printer};
use super::super::ranking::Ranked;
use super::super::remote::{Group, Remote};
use super::local::Local;
use super::merge::Source;
use super::{FederatedQuery, Federation};
use crate::search::SearchContext;

/// Everything the response is written from.
pub(super) struct Answer<'a, 't> {
    pub queries: &'a [FederatedQuery<'a>],
    pub remotes: &'a [Remote],
    pub federation: &'a Federation,
    pub contexts: &'t [SearchContext<'t>],
    pub local: Local,
    /// The page of the merged order, as (list, index in the list).
    pub page: Vec<(usize, usize)>,
    /// Hits the merge left out (duplicates, `distinct`).
    pub dropped: usize,
    pub remote_total: usize,
    pub remote_facets: Vec<(String, FacetCounts)>,
    pub remote_errors: Map<String, Value>,
    pub ask: Ask,
    /// When the search started, the searches ended, and the merge ended.
    pub timings: [Instant; 3],
}

impl Answer<'_, '_> {
    pub fn write(mut self) -> Result<Vec<u8>> {
        let [started, searched_at, merged_at] = self.timings;
        // Printing: each query prints its own hits, then they take their merged places.
        let mut printed: HashMap<(usize, u32), Map<String, Value>> = HashMap::new();
        for (qi, fq) in self.queries.iter().enumerate() {
            let mine: Vec<Ranked> = self
                .page
                .iter()
                .filter(|(q, _)| *q == qi)
                .filter_map(|(_, j)| match &self.local.lists[qi][*j].source {
                    Source::Local(ranked) => Some(ranked.clone()),
                    Source::Remote(_) => None,
                })
                .collect();
            if mine.is_empty() {
                continue;
            }
            let (rtxn, settings) = (&self.contexts[qi].rtxn, &self.contexts[qi].settings);
            self.local.results[qi].hits = mine;
            Printer::new(fq.index, rtxn, settings.as_ref(), &fq.query).each_hit(
                &self.local.results[qi],
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
        for (qi, j) in &self.page {
            let c = &self.local.lists[*qi][*j];
            let mut federation_entry = Map::new();
            let hit = match &c.source {
                Source::Local(ranked) => {
                    let Some(mut hit) = printed.remove(&(*qi, ranked.iid)) else {
                        continue;
                    };
                    semantic_hits += ranked.semantic as usize;
                    let score = hit.shift_remove("_rankingScore");
                    let details = hit.shift_remove("_rankingScoreDetails");
                    federation_entry.insert("indexUid".into(), json!(self.queries[*qi].index_uid));
                    federation_entry.insert("queriesPosition".into(), json!(c.position));
                    federation_entry.insert("weightedRankingScore".into(), json!(c.weighted));
                    if let Some(name) = &self.queries[*qi].remote {
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
                    let name = &self.remotes[*qi - self.queries.len()].name;
                    federation_entry.insert("remote".into(), json!(name));
                    hit
                }
            };
            let mut hit = hit;
            if self.federation.show_runs {
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
        if let Some(q) = &self.federation.query {
            out.extend_from_slice(b"\"query\":");
            serde_json::to_writer(&mut out, q).map_err(Error::internal)?;
            out.push(b',');
        }
        let printed_at = Instant::now();

        // The totals: each query's matches, less the hits the merge left out (exact when every
        // match fits in the window; beyond it, a document two queries of one index match counts
        // twice).
        let total: usize = self
            .local
            .results
            .iter()
            .map(|r| r.candidates.min(r.max_total_hits))
            .sum::<usize>()
            .saturating_add(self.remote_total)
            .saturating_sub(self.dropped);
        // A search over the network reads as one search: its total is bounded as one index's
        // is (the index's settings are the same on every instance).
        let total = match (
            &self.federation.query,
            self.local.results.iter().map(|r| r.max_total_hits).min(),
        ) {
            (Some(_), Some(bound)) => total.min(bound),
            _ => total,
        };
        let mut body = Map::new();
        // When a query retrieves vectors: the query vector of each such query that has one,
        // by its position, as Meilisearch shows them.
        if self.queries.iter().any(|q| q.query.retrieve_vectors) {
            let vectors: Map<String, Value> = self
                .queries
                .iter()
                .zip(&self.local.results)
                .filter_map(|(fq, r)| {
                    let v = r.query_vector.as_ref()?;
                    Some((fq.position.to_string(), json!(v)))
                })
                .collect();
            body.insert("queryVectors".into(), Value::Object(vectors));
        }
        body.insert(
            "processingTimeMs".into(),
            (started.elapsed().as_millis() as u64).into(),
        );
        Pagination::asked(self.ask, total).write(&mut body);
        if let Some(by_index) = &self.federation.facets_by_index {
            // In the order `facetsByIndex` names the indexes; one no query uses is left out.
            let per_index: Vec<(&String, FacetCounts)> = by_index
                .iter()
                .filter_map(|(uid, _)| {
                    let local = self
                        .queries
                        .iter()
                        .position(|q| &q.index_uid == uid)
                        .and_then(|qi| self.local.results[qi].facets.take());
                    let mut parts: Vec<(&String, FacetCounts)> =
                        local.map(|f| (uid, f)).into_iter().collect();
                    for (_, f) in self.remote_facets.iter_mut().filter(|(u, _)| u == uid) {
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
            match &self.federation.merge_facets {
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
        if self.local.semantic {
            body.insert("semanticHitCount".into(), semantic_hits.into());
        }
        if !self.remotes.is_empty() || self.queries.iter().any(|q| q.remote.is_some()) {
            body.insert(
                "remoteErrors".into(),
                Value::Object(std::mem::take(&mut self.remote_errors)),
            );
        }
        if self.federation.show_performance_details {
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
        over: None,
    }
}
