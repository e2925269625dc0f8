//! The order of ranked candidates: a [`Ranked`] candidate (its verdict and sort keys) and
//! the comparison [`Step`]s a rule list gives, consecutive relevancy rules compared as one
//! number (their verdict digits), sort keys one by one, the internal id last.

use std::cmp::Ordering;

use super::rule::{RankingRule, Rule};
use super::verdict::Verdict;
use crate::facets::{self, SortKey as Key};

/// A ranked candidate: its verdict on the relevancy rules, its sort keys, and in a semantic
/// search its similarity to the query vector.
#[derive(Debug, Clone)]
pub(crate) struct Ranked {
    pub iid: u32,
    pub verdict: Verdict,
    pub keys: Vec<Key>,
    /// Found by semantic search (ranked by `vectorSort`), with the similarity of its nearest
    /// embedding (`None`: it has none).
    pub semantic: bool,
    pub similarity: Option<f32>,
}

impl Ranked {
    /// A document of a placeholder search: nothing ranks it.
    pub fn plain(iid: u32) -> Ranked {
        Ranked {
            iid,
            verdict: Verdict::default(),
            keys: Vec::new(),
            semantic: false,
            similarity: None,
        }
    }

    /// A document of a semantic search.
    pub fn semantic(iid: u32, similarity: Option<f32>) -> Ranked {
        Ranked {
            semantic: true,
            similarity,
            ..Ranked::plain(iid)
        }
    }

    /// `_rankingScore`: the similarity in a semantic search (0 without an embedding), else
    /// the relevancy rules' merged score.
    pub fn score(&self) -> f64 {
        match self.semantic {
            true => self.similarity.map_or(0.0, |s| s as f64),
            false => self.verdict.score(),
        }
    }
}

/// A candidate ordered by its verdict then internal id (better is smaller), for keeping the
/// best few of a level without holding all of it.
pub(super) struct ByCost(pub Ranked);

impl PartialEq for ByCost {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for ByCost {}

impl PartialOrd for ByCost {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ByCost {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.0.verdict.cost, self.0.iid).cmp(&(other.0.verdict.cost, other.0.iid))
    }
}

/// One step of comparing candidates: a run of relevancy rules (their verdict digits) or a
/// sort key.
pub(crate) enum Step {
    Digits(usize, usize),
    Key {
        slot: usize,
        asc: bool,
    },
    /// Higher similarity first, documents without one last.
    Similarity,
}

/// The comparison steps of `rules`: consecutive relevancy rules compare as one number.
pub(crate) fn steps(rules: &[Rule]) -> Vec<Step> {
    let mut out = Vec::new();
    let mut digit = 0;
    for r in rules {
        match r {
            Rule::Key { slot, asc } => out.push(Step::Key {
                slot: *slot,
                asc: *asc,
            }),
            Rule::Vector => out.push(Step::Similarity),
            rule => {
                let next = digit + rule.digits();
                match out.last_mut() {
                    Some(Step::Digits(_, to)) => *to = next,
                    _ => out.push(Step::Digits(digit, next)),
                }
                digit = next;
            }
        }
    }
    out
}

/// Better first: verdicts and sort keys in rule order, then internal id.
pub(crate) fn compare_ranked(steps: &[Step], a: &Ranked, b: &Ranked) -> Ordering {
    if let [Step::Digits(0, _)] = steps {
        // Relevancy alone: unused digits are zero, the whole cost compares.
        return (a.verdict.cost, a.iid).cmp(&(b.verdict.cost, b.iid));
    }
    for step in steps {
        let o = match step {
            Step::Digits(from, to) => a
                .verdict
                .cost_range(*from, *to)
                .cmp(&b.verdict.cost_range(*from, *to)),
            Step::Key { slot, asc } => facets::compare_keys(&a.keys[*slot], &b.keys[*slot], *asc),
            Step::Similarity => match (a.similarity, b.similarity) {
                (Some(x), Some(y)) => y.total_cmp(&x),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            },
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.iid.cmp(&b.iid)
}
