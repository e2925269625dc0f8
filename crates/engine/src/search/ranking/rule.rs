//! The ranking-rule interface ([`RankingRule`]) and the registry of rules ([`Rule`]).
//!
//! [`Rule`] is the ordered list's element: an enum with one variant per rule module, whose
//! [`RankingRule`] implementation forwards to that module by a `match` (in `dispatch.rs`, so
//! that the rules, which implement the trait, and this file do not depend on each other).
//! The per-document loop thus calls each rule statically (inlined, no vtable), as the single
//! `match` of the former one-file ranking did; a `Vec<Box<dyn RankingRule>>` would add an
//! indirect call per rule per candidate and keep the compiler from folding the rules into the
//! loop.

use serde_json::{Map, Value};

use super::document::Evaluation;
use super::verdict::{Detail, Verdict};

/// One ranking rule. A rule gives each candidate (rank, max) digits in the document's
/// [`Verdict`], compared in rule order (lower cost first), and renders its
/// `_rankingScoreDetails` entry from them.
///
/// Contract:
/// - `rank` MUST push exactly `digits()` digits, every time, each with `1 <= rank <= max`
///   (higher is better); a rule ranking outside the verdict (a sort key) has none.
/// - `rank` MAY narrow the occurrences it read (keep only those best on this rule, so later
///   rules judge the document by them, as Meilisearch's sub-graphs do); it MUST NOT add any,
///   nor empty a kept term's list.
/// - `detail` MUST read only its own digits (`detail.digits`, in the order pushed) and MAY
///   insert nothing (a sort key absent from the search).
pub(crate) trait RankingRule {
    /// How many digits the rule takes in a [`Verdict`].
    fn digits(&self) -> usize;

    /// Ranks one document: pushes its digits into `verdict`, narrowing `doc`'s occurrences.
    fn rank(&self, doc: &mut Evaluation, verdict: &mut Verdict);

    /// Inserts the rule's `_rankingScoreDetails` entry (`order`: its index in the rules).
    fn detail(&self, detail: &Detail, order: usize, out: &mut Map<String, Value>);
}

/// A relevancy rule or a sort key, in ranking-rule order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Words,
    Typo,
    Proximity,
    AttributeRank,
    WordPosition,
    /// The older `attribute` rule: attributeRank then wordPosition, one detail entry.
    Attribute,
    Exactness,
    /// A `sort` entry or a custom `attr:asc|desc` rule: index into the candidate's keys.
    Key {
        slot: usize,
        asc: bool,
    },
    /// `vectorSort`: the similarity to the query vector (semantic search).
    Vector,
}

impl Rule {
    /// The relevancy rule a `rankingRules` entry names (sort keys are parsed apart).
    pub(super) fn relevancy(name: &str) -> Option<Rule> {
        Some(match name {
            "words" => Rule::Words,
            "typo" => Rule::Typo,
            "proximity" => Rule::Proximity,
            "attributeRank" => Rule::AttributeRank,
            "wordPosition" => Rule::WordPosition,
            "attribute" => Rule::Attribute,
            "exactness" => Rule::Exactness,
            _ => return None,
        })
    }
}
