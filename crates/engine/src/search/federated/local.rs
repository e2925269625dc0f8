//! The local queries of a federated search: each runs steps 1 to 6 of a search with the
//! federation's window, and its hits become candidates of the merge (their runs, distinct
//! values and weighted score).

use std::time::Instant;

use api_types::{Code, Error, Result};

use super::super::key_paths;
use super::super::printer::SearchResult;
use super::derivations::Pinned;
use super::merge::{directions, distinct_values, groups_of, incompatibility, Candidate, Source};
use super::{FederatedQuery, Federation};
use crate::search::SearchContext;

/// The local queries' typed results and candidate lists (in query order).
pub(super) struct Local {
    pub results: Vec<SearchResult>,
    pub lists: Vec<Vec<Candidate>>,
    /// Whether any query searched semantically (`semanticHitCount` is then shown).
    pub semantic: bool,
}

/// Runs every local query in its context (`contexts[i]` is query `i`'s), keeping the first
/// `end` hits of each.
pub(super) fn run(
    queries: &[FederatedQuery],
    federation: &Federation,
    contexts: &[SearchContext],
    pinned: Option<&Pinned>,
    started: Instant,
    end: usize,
) -> Result<Local> {
    let mut results = Vec::with_capacity(queries.len());
    let mut lists: Vec<Vec<Candidate>> = Vec::with_capacity(queries.len());
    let mut semantic = false;
    let mut shapes: Vec<Option<Vec<super::merge::RunKind>>> = Vec::with_capacity(queries.len());
    for (qi, fq) in queries.iter().enumerate() {
        let settings = &contexts[qi].settings;
        let mut q = fq.query.clone();
        q.offset = 0;
        q.limit = end;
        q.page = None;
        q.hits_per_page = None;
        q.show_ranking_score = true;
        if let Some(pins) = pinned {
            q.pins = Some(pins.of(fq.position));
        }
        // `facetsByIndex` is counted over the documents every query of an index kept (after
        // its own distinct), once: each query keeps its set, the first one counts their union
        // (below).
        q.facets = federation
            .facets_by_index
            .iter()
            .flatten()
            .find(|(uid, _)| *uid == fq.index_uid)
            .map(|(_, facets)| facets.clone());
        q.keep_facet_set = q.facets.is_some()
            && queries
                .iter()
                .filter(|p| p.index_uid == fq.index_uid)
                .count()
                > 1;
        let mut result = contexts[qi].search_result(&q, started).map_err(|e| Error {
            message: format!("Inside `.queries[{qi}]`: {}", e.message),
            ..e
        })?;
        // Semantic runs are left out of the check (their order is the vectors', which
        // Quarry's rule list does not spell as Meilisearch's canonical one does).
        let shape = match result.semantic_hits {
            Some(_) => None,
            None => Some(directions(&result.rules, &result.key_specs)),
        };
        shapes.push(shape);
        semantic |= result.semantic_hits.is_some();
        let columns = match result.key_specs.is_empty() {
            true => Vec::new(),
            false => contexts[qi].columns(&key_paths(&result.key_specs))?,
        };
        let distinct_column = match &federation.distinct {
            Some(field) => {
                let rules = crate::filter::rules::rules_of(settings.as_ref());
                super::super::distinct::distinct_field(Some(field), settings.as_ref(), &rules)
                    .map_err(|e| {
                        Error::new(
                            Code::InvalidMultiSearchDistinct,
                            format!(
                                "Inside `.federation.distinct` (index `{}`): {}",
                                fq.index_uid, e.message
                            ),
                        )
                    })?;
                Some(contexts[qi].columns(std::slice::from_ref(field))?.remove(0))
            }
            None => None,
        };
        let hits = std::mem::take(&mut result.hits);
        lists.push(
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
    check_compatible(queries, &shapes)?;
    count_facets_once(queries, contexts, &mut results)?;
    Ok(Local {
        results,
        lists,
        semantic,
    })
}

/// Refuses queries whose orders cannot be merged, as Meilisearch does: taken index by index
/// (by name), then in query order, each is compared with the one before it.
fn check_compatible(
    queries: &[FederatedQuery],
    shapes: &[Option<Vec<super::merge::RunKind>>],
) -> Result<()> {
    let mut order: Vec<usize> = (0..queries.len()).collect();
    order.sort_by(|&a, &b| {
        (&queries[a].index_uid, queries[a].position)
            .cmp(&(&queries[b].index_uid, queries[b].position))
    });
    let mut previous: Option<usize> = None;
    for qi in order {
        let Some(current) = &shapes[qi] else { continue };
        if let Some(pj) = previous {
            if let Some(reason) = shapes[pj]
                .as_ref()
                .and_then(|p| incompatibility(p, current))
            {
                let (pj, qi) = (queries[pj].position, queries[qi].position);
                return Err(Error::new(
                    Code::InvalidMultiSearchQueryRankingRules,
                    format!("Inside `.queries[{qi}]`: The results of queries #{pj} and #{qi} are incompatible: \n  - {reason}"),
                ));
            }
        }
        previous = Some(qi);
    }
    Ok(())
}

/// Leaves the facet counts of each index on its first query, counted over the union of the
/// documents its queries kept (a document two queries found counts once), as Meilisearch
/// counts `facetsByIndex`.
fn count_facets_once(
    queries: &[FederatedQuery],
    contexts: &[SearchContext],
    results: &mut [SearchResult],
) -> Result<()> {
    for (qi, fq) in queries.iter().enumerate() {
        if queries[..qi].iter().any(|p| p.index_uid == fq.index_uid) {
            continue;
        }
        let Some(first) = results[qi].facets.as_mut() else {
            continue;
        };
        let Some(mut union) = first.over.take() else {
            continue;
        };
        let names: Vec<String> = first.distribution.keys().cloned().collect();
        for (qj, other) in queries.iter().enumerate().skip(qi + 1) {
            if other.index_uid != fq.index_uid {
                continue;
            }
            if let Some(set) = results[qj].facets.take().and_then(|f| f.over) {
                union |= set;
            }
        }
        results[qi].facets = Some(contexts[qi].facet_counts(&names, &union)?);
    }
    Ok(())
}
