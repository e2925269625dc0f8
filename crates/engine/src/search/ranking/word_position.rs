//! `wordPosition`: documents where the query's words sit near the start of their field
//! (at their query position) first. Per kept term, the cheapest distance cost of its
//! occurrences' bucketed positions, in any field (not only those `attributeRank` found
//! best: Meilisearch's position conditions read the word's positions in every field). It
//! narrows nothing, so `exactness` sees every occurrence too.

use serde_json::{json, Map, Value};

use super::document::Evaluation;
use super::reader::Occ;
use super::rule::RankingRule;
use super::verdict::{ratio, Detail, Verdict};

pub(crate) struct WordPosition;

impl RankingRule for WordPosition {
    fn digits(&self) -> usize {
        1
    }

    fn rank(&self, doc: &mut Evaluation, v: &mut Verdict) {
        let (rank, max) = word_position(doc);
        v.push(rank, max);
    }

    fn detail(&self, detail: &Detail, order: usize, out: &mut Map<String, Value>) {
        let (rank, max) = detail.digits[0];
        out.insert(
            "wordPosition".into(),
            json!({"order": order, "score": ratio(rank, max)}),
        );
    }
}

/// Document position buckets for `wordPosition` (milli's `bucketed_position`).
pub(super) fn bucketed(offset: u32) -> u32 {
    match offset {
        0..16 => offset,
        16..24 => 24,
        _ => offset.next_power_of_two(),
    }
}

/// `wordPosition` cost of a distance between document and query positions.
fn distance_cost(d: u32) -> u32 {
    match d {
        0 => 0,
        1 => 1,
        2..=4 => 2,
        5..=7 => 3,
        8..=11 => 4,
        12..=16 => 5,
        17..=24 => 6,
        25..=64 => 7,
        65..=256 => 8,
        257..=1024 => 9,
        _ => 10,
    }
}

/// The rule's (rank, max) (also the second half of `attribute`).
pub(super) fn word_position(doc: &mut Evaluation) -> (u32, u32) {
    let occ = &*doc.occ;
    let mut cost = 0;
    let mut max = 0;
    for &t in doc.kept {
        let q = doc.terms[t].position;
        let c = |o: &Occ| distance_cost(bucketed(o.offset()).abs_diff(q));
        let best = occ[t].iter().map(c).min().unwrap_or(10);
        cost += best;
        max += 10;
    }
    (max + 1 - cost, max + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_bucket_and_cost() {
        assert_eq!(bucketed(15), 15);
        assert_eq!(bucketed(17), 24);
        assert_eq!(bucketed(40), 64);
        assert_eq!(distance_cost(0), 0);
        assert_eq!(distance_cost(3), 2);
        assert_eq!(distance_cost(2000), 10);
    }
}
