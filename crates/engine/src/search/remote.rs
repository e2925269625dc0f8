//! The remote part of a federated search: the queries a federation sends to another instance
//! (`federationOptions.remote`, or every shard with `useNetwork`), as one federated
//! multi-search per instance, and its answer read back as hits the merge can place among the
//! local ones. The engine sends nothing itself: it says what to ask, and the caller's
//! [`Peers`] sends it (the binding, through the one outbound client).
//!
//! A Quarry instance asked for [`Asking::Hits`] adds each hit's score runs
//! (`_federation._runs`), so hits from several instances merge exactly as hits of one would.
//! Before a search over the network, each instance is asked ([`Asking::Candidates`]) what its
//! words derive from, and the search then carries the derivations chosen for all
//! (`federation.quarryPins`, see `query::pins`).
//! Another server's hits merge by their weighted global score. A remote that cannot be
//! reached, refuses the key, times out or answers something else does not fail the search: its
//! error goes to `remoteErrors` under its name.

use std::time::Duration;

use api_types::{Error, Result};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::faceting::{FacetCounts, FacetStats};
use super::query::{Pins, QueryCandidates};
use crate::value::Key;

/// What a federation asks of another instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asking {
    /// Its hits, with each hit's runs when it is a Quarry instance.
    Hits,
    /// What its queries' words derive from, instead of searching (see `query::pins`).
    Candidates,
}

/// How a federation reaches the other instances: sends `request` (a federated multi-search
/// body) to `remote` and returns its JSON answer, or the error `remoteErrors` shows.
pub trait Peers: Sync {
    fn multi_search(
        &self,
        remote: &Remote,
        asking: Asking,
        request: &Value,
        timeout: Duration,
    ) -> Result<Value>;
}

/// One instance and the queries it answers, as the TypeScript layer sends them.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remote {
    /// The name the network gives it (`_federation.remote`, the key of `remoteErrors`).
    pub name: String,
    /// Its base URL.
    pub url: String,
    /// Its `searchApiKey`.
    #[serde(default)]
    pub api_key: Option<String>,
    pub queries: Vec<RemoteQuery>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteQuery {
    /// The query's position in the request (`queriesPosition`).
    pub position: usize,
    pub index_uid: String,
    pub weight: f64,
    /// The query as the client wrote it, `federationOptions` left out.
    pub body: Map<String, Value>,
}

/// A hit's runs, as the merge compares them (see `federated`).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Group {
    Relevance(f64),
    Sort { asc: bool, key: Key<String> },
    Geo { asc: bool, distance: f64 },
}

impl Group {
    /// The run as `_federation._runs` carries it.
    pub(super) fn to_json(&self) -> Value {
        match self {
            Group::Relevance(s) => json!(s),
            Group::Sort { asc, key } => {
                let value = match key {
                    Key::Num(n) => json!(n),
                    Key::Str(s) => json!(s),
                    Key::Missing => Value::Null,
                };
                json!({"asc": asc, "value": value})
            }
            // An unknown distance (no point) is written as null.
            Group::Geo { asc, distance } => json!({"asc": asc, "distance": distance}),
        }
    }

    fn from_json(v: &Value) -> Option<Group> {
        if let Some(s) = v.as_f64() {
            return Some(Group::Relevance(s));
        }
        let o = v.as_object()?;
        let asc = o.get("asc")?.as_bool()?;
        if let Some(d) = o.get("distance") {
            let distance = d.as_f64().unwrap_or(f64::INFINITY);
            return Some(Group::Geo { asc, distance });
        }
        let key = match o.get("value")? {
            Value::Number(n) => Key::Num(n.as_f64()?),
            Value::String(s) => Key::Str(s.clone()),
            _ => Key::Missing,
        };
        Some(Group::Sort { asc, key })
    }
}

/// One hit of a remote, ready to merge.
pub(super) struct RemoteHit {
    pub position: usize,
    pub groups: Vec<Group>,
    pub weighted: f64,
    pub hit: Map<String, Value>,
}

/// What one remote answered.
#[derive(Default)]
pub(super) struct Answer {
    pub hits: Vec<RemoteHit>,
    pub total: usize,
    /// Per index uid, its facet counts.
    pub facets: Vec<(String, FacetCounts)>,
}

/// The federated multi-search `remote` answers: its queries, the first `end` hits, the
/// facets `facets_of` names for an index, and the derivations pinned for each query.
fn request(
    remote: &Remote,
    end: usize,
    facets_of: &dyn Fn(&str) -> Option<Vec<String>>,
    pins: Option<&[Pins]>,
) -> Value {
    let mut facets_by_index = Map::new();
    let queries: Vec<Value> = remote
        .queries
        .iter()
        .map(|q| {
            if let Some(f) = facets_of(&q.index_uid) {
                facets_by_index.insert(q.index_uid.clone(), json!(f));
            }
            let mut body = q.body.clone();
            body.insert("indexUid".into(), json!(q.index_uid));
            body.insert("federationOptions".into(), json!({"weight": q.weight}));
            // The remote answers from its own documents: no second hop.
            body.insert("useNetwork".into(), json!(false));
            Value::Object(body)
        })
        .collect();
    let mut federation = json!({"offset": 0, "limit": end});
    if !facets_by_index.is_empty() {
        federation["facetsByIndex"] = Value::Object(facets_by_index);
    }
    if let Some(pins) = pins {
        federation["quarryPins"] = json!(pins);
    }
    json!({"federation": federation, "queries": queries})
}

/// Asks `remote` for the first `end` hits of its queries (with the facets `facets_of` names
/// for an index, and `pins` when given), within `timeout`.
pub(super) fn ask(
    peers: &dyn Peers,
    remote: &Remote,
    (end, timeout): (usize, Duration),
    facets_of: &dyn Fn(&str) -> Option<Vec<String>>,
    pins: Option<&[Pins]>,
) -> Result<Answer> {
    let request = request(remote, end, facets_of, pins);
    let body = peers.multi_search(remote, Asking::Hits, &request, timeout)?;
    read_answer(remote, &body)
        .ok_or_else(|| Error::remote_bad_response(body.to_string().as_bytes()))
}

/// Asks `remote` what its queries' words derive from; `None` when it is not a Quarry
/// instance (it searched instead).
pub(super) fn ask_candidates(
    peers: &dyn Peers,
    remote: &Remote,
    timeout: Duration,
) -> Result<Option<Vec<QueryCandidates>>> {
    let request = request(remote, 0, &|_| None, None);
    let body = peers.multi_search(remote, Asking::Candidates, &request, timeout)?;
    let Some(found) = body.get("candidates") else {
        return Ok(None);
    };
    let found: Vec<QueryCandidates> = serde_json::from_value(found.clone())
        .map_err(|_| Error::remote_bad_response(body.to_string().as_bytes()))?;
    if found.len() != remote.queries.len() {
        return Err(Error::remote_bad_response(body.to_string().as_bytes()));
    }
    Ok(Some(found))
}

/// Reads a federated answer; `None` when it is not one.
fn read_answer(remote: &Remote, body: &Value) -> Option<Answer> {
    let hits = body.get("hits")?.as_array()?;
    let mut out = Answer {
        total: body
            .get("estimatedTotalHits")
            .or_else(|| body.get("totalHits"))
            .and_then(Value::as_u64)
            .unwrap_or(hits.len() as u64) as usize,
        ..Answer::default()
    };
    for hit in hits {
        let mut hit = hit.as_object()?.clone();
        let fed = hit.get_mut("_federation")?.as_object_mut()?;
        let local_position = fed.get("queriesPosition")?.as_u64()? as usize;
        let weighted = fed.get("weightedRankingScore")?.as_f64()?;
        let runs = fed.shift_remove("_runs");
        let groups = match runs.as_ref().and_then(Value::as_array) {
            Some(runs) => runs
                .iter()
                .map(Group::from_json)
                .collect::<Option<Vec<_>>>()?,
            // Another server: its hits merge by their weighted global score.
            None => vec![Group::Relevance(weighted)],
        };
        out.hits.push(RemoteHit {
            position: remote.queries.get(local_position)?.position,
            groups,
            weighted,
            hit,
        });
    }
    if let Some(by_index) = body.get("facetsByIndex").and_then(Value::as_object) {
        for (uid, f) in by_index {
            let distribution = f
                .get("distribution")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let stats = f
                .get("stats")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(name, s)| {
                    Some(FacetStats {
                        name: name.clone(),
                        min: s.get("min")?.as_f64()?,
                        max: s.get("max")?.as_f64()?,
                    })
                })
                .collect();
            out.facets.push((
                uid.clone(),
                FacetCounts {
                    distribution,
                    stats,
                    over: None,
                },
            ));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_round_trip() {
        for g in [
            Group::Relevance(0.75),
            Group::Sort {
                asc: false,
                key: Key::Num(3.5),
            },
            Group::Sort {
                asc: true,
                key: Key::Str("b".into()),
            },
            Group::Sort {
                asc: true,
                key: Key::Missing,
            },
            Group::Geo {
                asc: true,
                distance: 12.0,
            },
            Group::Geo {
                asc: true,
                distance: f64::INFINITY,
            },
        ] {
            assert_eq!(Group::from_json(&g.to_json()), Some(g));
        }
    }

    #[test]
    fn answers_map_positions_and_fall_back_to_the_weighted_score() {
        let remote = Remote {
            name: "b".into(),
            url: "http://127.0.0.1:1".into(),
            api_key: None,
            queries: vec![RemoteQuery {
                position: 4,
                index_uid: "i".into(),
                weight: 0.5,
                body: Map::new(),
            }],
        };
        let body = json!({"hits": [
            {"id": 1, "_federation": {"indexUid": "i", "queriesPosition": 0, "weightedRankingScore": 0.4, "_runs": [0.4]}},
            {"id": 2, "_federation": {"indexUid": "i", "queriesPosition": 0, "weightedRankingScore": 0.3}}
        ], "estimatedTotalHits": 9, "facetsByIndex": {"i": {"distribution": {"g": {"x": 2}}, "stats": {"n": {"min": 1.0, "max": 2.0}}}}});
        let a = read_answer(&remote, &body).unwrap();
        assert_eq!(a.total, 9);
        assert_eq!(a.hits[0].position, 4);
        assert_eq!(a.hits[1].groups, vec![Group::Relevance(0.3)]);
        assert!(!a.hits[0].hit["_federation"]
            .as_object()
            .unwrap()
            .contains_key("_runs"));
        assert_eq!(a.facets[0].1.stats[0].max, 2.0);
        // Not a federated answer.
        assert!(read_answer(&remote, &json!({"results": []})).is_none());
        let bad = json!({"hits": [{"id": 1, "_federation": {"indexUid": "i", "queriesPosition": 7, "weightedRankingScore": 0.4}}]});
        assert!(read_answer(&remote, &bad).is_none());
    }
}
