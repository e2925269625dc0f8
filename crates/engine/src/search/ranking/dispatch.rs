//! [`Rule`]'s [`RankingRule`] implementation: a `match` forwarding to each rule's module (see
//! `rule.rs` for why a `match` rather than trait objects).

use serde_json::{Map, Value};

use super::document::Evaluation;
use super::rule::{RankingRule, Rule};
use super::verdict::{Detail, Verdict};
use super::{
    attribute, attribute_rank, exactness, proximity, sort, typo, vector_sort, word_position, words,
};

/// Runs `$body` with `$r` bound to the module implementation of `$rule`.
macro_rules! dispatch {
    ($rule:expr, $r:ident => $body:expr) => {
        match *$rule {
            Rule::Words => {
                let $r = words::Words;
                $body
            }
            Rule::Typo => {
                let $r = typo::Typo;
                $body
            }
            Rule::Proximity => {
                let $r = proximity::Proximity;
                $body
            }
            Rule::AttributeRank => {
                let $r = attribute_rank::AttributeRank;
                $body
            }
            Rule::WordPosition => {
                let $r = word_position::WordPosition;
                $body
            }
            Rule::Attribute => {
                let $r = attribute::Attribute;
                $body
            }
            Rule::Exactness => {
                let $r = exactness::Exactness;
                $body
            }
            Rule::Key { slot, .. } => {
                let $r = sort::SortRule { slot };
                $body
            }
            Rule::Vector => {
                let $r = vector_sort::VectorSort;
                $body
            }
        }
    };
}

impl RankingRule for Rule {
    #[inline]
    fn digits(&self) -> usize {
        dispatch!(self, r => r.digits())
    }

    #[inline]
    fn rank(&self, doc: &mut Evaluation, verdict: &mut Verdict) {
        dispatch!(self, r => r.rank(doc, verdict))
    }

    fn detail(&self, detail: &Detail, order: usize, out: &mut Map<String, Value>) {
        dispatch!(self, r => r.detail(detail, order, out))
    }
}
