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
//!
//! The steps, one module each: [`derivations`] (a search over the network settles its
//! words first), the local queries ([`local`]) while the remotes are asked, [`merge`], and
//! [`respond`] (each query prints its own hits; totals, facets and the body).

use std::time::Instant;

use api_types::{Error, Result};
use serde::Deserialize;
use serde_json::{json, Map};

use super::faceting::FacetCounts;
use super::page::{Ask, Window};
use super::query::Pins;
use super::remote::{self, Peers, Remote, RemoteHit};
use super::SearchQuery;
use crate::index::Index;

mod derivations;
mod local;
mod merge;
mod respond;

use merge::{remote_distinct_values, Candidate, Source};

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
/// `received`: when the request reached the server, which `processingTimeMs` counts from.
pub fn federated_search_json(
    indexes: &[&Index],
    request_json: &str,
    received: Instant,
    peers: &dyn Peers,
) -> Result<Vec<u8>> {
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
    federated_search(&queries, (&wire.remotes, peers), &wire.federation, received)
}

/// Runs a federated search and returns the response body: the queries of `remotes` are asked
/// through `peers`; `started`: when its request arrived.
pub fn federated_search(
    queries: &[FederatedQuery],
    (remotes, peers): (&[Remote], &dyn Peers),
    federation: &Federation,
    started: Instant,
) -> Result<Vec<u8>> {
    let ask = Ask {
        offset: federation.offset.unwrap_or(0),
        limit: federation.limit.unwrap_or(20),
        page: federation.page,
        hits_per_page: federation.hits_per_page,
    };
    // Each index's `maxTotalHits` bounds its own query; the merged list is not cut again.
    let window = Window::asked(ask, usize::MAX);
    let end = window.end();
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
        true => derivations::pin_derivations(queries, (remotes, peers), timeout)?,
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
                    None => remote::ask(peers, r, (end, timeout), facets_of, pinned.as_deref()),
                })
            })
            .collect();

        let contexts = queries
            .iter()
            .map(|fq| fq.index.search_context())
            .collect::<Result<Vec<_>>>()?;
        let pinned = pinning.then_some(&pins);
        let mut local = local::run(queries, federation, &contexts, pinned, started, end)?;

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
                    local.lists.push(
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
                    local.lists.push(Vec::new());
                }
            }
        }
        let searched_at = Instant::now();
        let (merged, dropped) = merge::merge(&local.lists, queries, end);
        let page: Vec<(usize, usize)> = merged
            .into_iter()
            .skip(window.offset)
            .take(window.limit)
            .collect();
        let merged_at = Instant::now();
        respond::Answer {
            queries,
            remotes,
            federation,
            contexts: &contexts,
            local,
            page,
            dropped,
            remote_total,
            remote_facets,
            remote_errors,
            ask,
            timings: [started, searched_at, merged_at],
        }
        .write()
    })
}

/// What each query's words would derive from here: the answer to another instance's
/// [`remote::Asking::Candidates`] request, `{"candidates":[...]}` in query order.
pub fn derivation_candidates_json(indexes: &[&Index], request_json: &str) -> Result<Vec<u8>> {
    let wire: WireRequest = serde_json::from_str(request_json).map_err(Error::internal)?;
    let mut out = Vec::with_capacity(wire.queries.len());
    for (q, index) in wire.queries.iter().zip(indexes) {
        let text = q.query.q.as_deref().unwrap_or("");
        let how = (
            q.query.matching_strategy.as_deref(),
            q.query.locales.as_deref(),
        );
        out.push(index.search_context()?.query_candidates(text, how)?);
    }
    serde_json::to_vec(&json!({ "candidates": out })).map_err(Error::internal)
}
