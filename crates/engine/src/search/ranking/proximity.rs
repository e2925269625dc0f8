//! `proximity`: documents where consecutive query words are closer first. Per pair of kept
//! terms that follow each other in the query, the cheapest distance between their
//! occurrences (0 adjacent … 3 far or in different fields); with `proximityPrecision:
//! byAttribute`, 0 when they share a field, else 3.

use serde_json::{json, Map, Value};

use super::document::Evaluation;
use super::reader::Occ;
use super::rule::RankingRule;
use super::verdict::{ratio, Detail, Verdict};

pub(crate) struct Proximity;

impl RankingRule for Proximity {
    fn digits(&self) -> usize {
        1
    }

    fn rank(&self, doc: &mut Evaluation, v: &mut Verdict) {
        let (terms, occ) = (doc.terms, &*doc.occ);
        let mut cost = 0;
        let mut pairs = 0;
        for w in doc.kept.windows(2) {
            let (a, b) = (&terms[w[0]], &terms[w[1]]);
            if b.position != a.position + a.span {
                continue;
            }
            pairs += 1;
            cost += if doc.ctx.by_attribute {
                let share = occ[w[0]]
                    .iter()
                    .any(|a| occ[w[1]].iter().any(|b| a.field() == b.field()));
                if share {
                    0
                } else {
                    3
                }
            } else {
                best_pair(&occ[w[0]], &occ[w[1]])
            };
        }
        let max = 1 + 3 * pairs;
        v.push(max - cost, max);
    }

    fn detail(&self, detail: &Detail, order: usize, out: &mut Map<String, Value>) {
        let (rank, max) = detail.digits[0];
        out.insert(
            "proximity".into(),
            json!({"order": order, "score": ratio(rank, max)}),
        );
    }
}

/// `proximity` cost of `b` following `a` (`a` ends at `a_last`): 0 adjacent, 1 one word
/// between or swapped, 2 two between or swapped with one between, else 3.
fn pair_cost(a_last: u32, b: u32) -> u32 {
    if a_last >> 16 != b >> 16 {
        return 3;
    }
    if b > a_last {
        (b - a_last - 1).min(3)
    } else if b == a_last {
        // Two query words in one document word: a concatenation (2-gram), which
        // Meilisearch counts one apart.
        1
    } else {
        (a_last - b).min(3)
    }
}

/// The cheapest proximity between occurrences of two consecutive terms.
fn best_pair(a: &[Occ], b: &[Occ]) -> u32 {
    let mut best = 3;
    for x in a {
        let last = x.last();
        // The closest occurrences of `b` around `last` are the only candidates.
        let i = b.partition_point(|y| y.pos <= last);
        for y in b[i.saturating_sub(3)..(i + 3).min(b.len())].iter() {
            best = best.min(pair_cost(last, y.pos));
            if best == 0 {
                return 0;
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proximity_costs() {
        let p = |f: u32, x: u32| (f << 16) | x;
        assert_eq!(pair_cost(p(0, 3), p(0, 4)), 0);
        assert_eq!(pair_cost(p(0, 3), p(0, 3)), 1);
        assert_eq!(pair_cost(p(0, 3), p(0, 5)), 1);
        assert_eq!(pair_cost(p(0, 3), p(0, 2)), 1);
        assert_eq!(pair_cost(p(0, 3), p(0, 6)), 2);
        assert_eq!(pair_cost(p(0, 3), p(0, 1)), 2);
        assert_eq!(pair_cost(p(0, 3), p(0, 9)), 3);
        assert_eq!(pair_cost(p(0, 3), p(1, 4)), 3);
    }
}
