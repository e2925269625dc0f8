//! A document's verdict on the relevancy rules: (rank, max) digits packed into one integer,
//! so one comparison orders two documents on every rule at once. Scores and
//! `_rankingScoreDetails` are read back from the digits: the global score merges them like
//! digits of a mixed-radix number (Meilisearch's `score_details`), and each rule renders its
//! own entry from its own digits (see [`RankingRule::detail`]).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::order::Ranked;
use super::rule::{RankingRule, Rule};
use crate::facets::Column;
use crate::sort::SortKey;

/// Digits of a verdict: at most 8 (rank, max) pairs (words, typo, proximity, attributeRank,
/// wordPosition, two for exactness; the legacy `attribute` takes two).
const DIGITS: usize = 8;

/// A document's verdict on every relevancy rule, as digits: each a cost (max − rank, lower is
/// better) packed 16 bits apiece into `cost` in rule order, so one integer comparison orders
/// two documents on all the rules at once; `max` keeps each digit's maximum for the scores.
#[derive(Clone, Copy, Debug, Default)]
pub struct Verdict {
    pub cost: u128,
    max: [u16; DIGITS],
    len: u8,
}

impl Verdict {
    /// Appends a rule's digit: `rank` out of `max` (higher is better).
    pub(super) fn push(&mut self, rank: u32, max: u32) {
        let i = self.len as usize;
        if i >= DIGITS {
            return;
        }
        let max = max.clamp(1, u16::MAX as u32);
        let cost = max - rank.clamp(1, max);
        self.cost |= (cost as u128) << (16 * (DIGITS - 1 - i));
        self.max[i] = max as u16;
        self.len += 1;
    }

    fn digit(&self, i: usize) -> (u32, u32) {
        let cost = ((self.cost >> (16 * (DIGITS - 1 - i))) & 0xFFFF) as u32;
        let max = self.max[i] as u32;
        (max - cost, max)
    }

    /// The digits of rules `[from, to)` (by digit index), packed as in `cost`, to compare on
    /// some rules only (when sort keys come between).
    pub fn cost_range(&self, from: usize, to: usize) -> u128 {
        if from >= to {
            return 0;
        }
        let width = 16 * (to - from);
        let shifted = self.cost >> (16 * (DIGITS - to));
        if width >= 128 {
            shifted
        } else {
            shifted & ((1u128 << width) - 1)
        }
    }

    /// The global ranking score: every digit merged (see [`merged`]).
    pub fn score(&self) -> f64 {
        merged((0..self.len as usize).map(|i| self.digit(i)))
    }

    /// Every digit as (rank, max), in rule order; (0, 0) past the last one pushed (a
    /// document nothing ranked).
    fn digits(&self) -> [(u32, u32); DIGITS] {
        std::array::from_fn(|i| self.digit(i))
    }
}

/// (rank, max) pairs merged like digits of a mixed-radix number (Meilisearch's score merge);
/// past ~30 digits of precision the score no longer changes.
pub(super) fn merged(pairs: impl IntoIterator<Item = (u32, u32)>) -> f64 {
    let (mut rank, mut max) = (1u128, 1u128);
    for (r, m) in pairs {
        if max.saturating_mul(m as u128) > (1u128 << 100) {
            break;
        }
        rank = (rank - 1) * m as u128 + r as u128;
        max *= m as u128;
    }
    rank as f64 / max as f64
}

/// `r` over `m` as a score (a zero maximum counts as one).
pub(super) fn ratio(r: u32, m: u32) -> f64 {
    r as f64 / m.max(1) as f64
}

/// What a rule renders its `_rankingScoreDetails` entry from.
pub(crate) struct Detail<'a> {
    /// The rule's own digits, (rank, max) in the order it pushed them.
    pub digits: &'a [(u32, u32)],
    /// The hit: its internal id and sort keys.
    pub ranked: &'a Ranked,
    /// The sort keys of the search and the columns they read (for the sort rule).
    pub specs: &'a [SortKey],
    pub columns: &'a [Arc<Column>],
}

/// `_rankingScoreDetails` of a hit: an entry per rule, in rule order.
pub(in crate::search) fn score_details(
    ranked: &Ranked,
    rules: &[Rule],
    specs: &[SortKey],
    columns: &[Arc<Column>],
) -> Map<String, Value> {
    let mut out = Map::new();
    let digits = ranked.verdict.digits();
    let mut d = 0;
    for (order, rule) in rules.iter().enumerate() {
        let n = rule.digits();
        if d + n > DIGITS {
            break;
        }
        let detail = Detail {
            digits: &digits[d..d + n],
            ranked,
            specs,
            columns,
        };
        rule.detail(&detail, order, &mut out);
        d += n;
    }
    out
}

/// A hit's rules as federated search compares them: each run of consecutive relevancy rules
/// becomes one score (its digits merged), sort keys and `vectorSort` stay apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::search) enum Run {
    Relevance(f64),
    Key { slot: usize, asc: bool },
    Vector,
}

pub(in crate::search) fn rule_runs(verdict: &Verdict, rules: &[Rule]) -> Vec<Run> {
    let digits = verdict.digits();
    let mut out = Vec::new();
    let mut run: Vec<(u32, u32)> = Vec::new();
    let mut d = 0;
    let flush = |run: &mut Vec<(u32, u32)>, out: &mut Vec<Run>| {
        if !run.is_empty() {
            out.push(Run::Relevance(merged(run.drain(..))));
        }
    };
    for rule in rules {
        match *rule {
            Rule::Key { slot, asc } => {
                flush(&mut run, &mut out);
                out.push(Run::Key { slot, asc });
            }
            Rule::Vector => {
                flush(&mut run, &mut out);
                out.push(Run::Vector);
            }
            _ => {
                let n = rule.digits();
                if d + n > DIGITS {
                    break;
                }
                run.extend_from_slice(&digits[d..d + n]);
                d += n;
            }
        }
    }
    flush(&mut run, &mut out);
    out
}

#[cfg(test)]
pub(super) fn verdict(digits: &[(u32, u32)]) -> Verdict {
    let mut v = Verdict::default();
    for (r, m) in digits {
        v.push(*r, *m);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_merge_like_mixed_radix_digits() {
        // words 3/3 then typo 3/3: a perfect score.
        assert_eq!(verdict(&[(3, 3), (3, 3)]).score(), 1.0);
        // words 2/3, typo 3/3: (2-1)/3 + (3-1)/9 + 1/9 = 2/3
        let s = verdict(&[(2, 3), (3, 3)]).score();
        assert!((s - 2.0 / 3.0).abs() < 1e-12, "{s}");
        // Scores and costs keep the rule order: a better first rule always wins.
        let a = verdict(&[(3, 3), (1, 3)]);
        let b = verdict(&[(2, 3), (3, 3)]);
        assert!(a.score() > b.score());
        assert!(a.cost < b.cost);
        // Details read the digits back.
        let ranked = Ranked::plain(0);
        let ranked = Ranked {
            verdict: a,
            ..ranked
        };
        let details = score_details(&ranked, &[Rule::Words, Rule::Typo], &[], &[]);
        assert_eq!(details["words"]["matchingWords"], 3);
        assert_eq!(details["words"]["maxMatchingWords"], 3);
        assert_eq!(details["typo"]["typoCount"], 2);
        assert_eq!(details["typo"]["maxTypoCount"], 2);
    }

    #[test]
    fn cost_ranges_compare_some_rules_only() {
        let v = verdict(&[(3, 3), (1, 3), (2, 2)]);
        assert_eq!(v.cost_range(0, 1), 0);
        assert_eq!(v.cost_range(1, 2), 2);
        assert_eq!(v.cost_range(1, 3), 2 << 16);
    }
}
