//! A search over the network first settles what its words derive to: every instance says
//! what they derive from there, and the merged choice is pinned on every query
//! (`query::pins`), so shards answer as one index would.

use std::collections::{HashMap, HashSet};

use api_types::{Error, Result};

use super::super::query::{Pins, QueryCandidates};
use super::super::remote::{self, Peers, Remote};
use super::FederatedQuery;

/// The derivations chosen per query position, and which remotes took part.
#[derive(Default)]
pub(super) struct Pinned {
    pub by_position: HashMap<usize, Pins>,
    pub answered: HashSet<String>,
}

impl Pinned {
    pub fn of(&self, position: usize) -> Pins {
        self.by_position.get(&position).cloned().unwrap_or_default()
    }
}

/// Asks every instance (the local queries here, the remotes in parallel) what its words
/// derive from, and merges the answers per query position. A remote that fails is left out,
/// its error kept for `remoteErrors`.
pub(super) fn pin_derivations(
    queries: &[FederatedQuery],
    (remotes, peers): (&[Remote], &dyn Peers),
    timeout: std::time::Duration,
) -> Result<(Pinned, HashMap<String, Error>)> {
    std::thread::scope(|scope| {
        let asks: Vec<_> = remotes
            .iter()
            .map(|r| scope.spawn(move || remote::ask_candidates(peers, r, timeout)))
            .collect();
        let mut found: HashMap<usize, Vec<QueryCandidates>> = HashMap::new();
        for fq in queries {
            let text = fq.query.q.as_deref().unwrap_or("");
            let c = fq.index.search_context()?.query_candidates(
                text,
                (
                    fq.query.matching_strategy.as_deref(),
                    fq.query.locales.as_deref(),
                ),
            )?;
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
