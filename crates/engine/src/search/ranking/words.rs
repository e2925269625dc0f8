//! `words`: documents holding more of the query's words first. Terms are dropped in the
//! order `matchingStrategy` gives until every remaining one occurs; the rule's digit is the
//! words kept out of the query's words (a phrase counts its words).

use serde_json::{json, Map, Value};

use super::document::{Context, Evaluation};
use super::reader::Occ;
use super::rule::RankingRule;
use super::verdict::{ratio, Detail, Verdict};

pub(crate) struct Words;

impl RankingRule for Words {
    fn digits(&self) -> usize {
        1
    }

    fn rank(&self, doc: &mut Evaluation, v: &mut Verdict) {
        let terms = doc.terms;
        let max: u32 = terms.iter().map(|t| t.word_count).sum();
        let matching: u32 = doc.kept.iter().map(|t| terms[*t].word_count).sum();
        v.push(matching, max);
    }

    fn detail(&self, detail: &Detail, order: usize, out: &mut Map<String, Value>) {
        let (matching, max) = detail.digits[0];
        out.insert(
            "words".into(),
            json!({"order": order, "matchingWords": matching, "maxMatchingWords": max, "score": ratio(matching, max)}),
        );
    }
}

/// The terms a document keeps, into `kept` (their count), before any rule runs: drop terms
/// in order until every remaining one is present. `None` when a term that cannot be
/// dropped is missing, or none is left.
pub(super) fn keep(ctx: &Context, occ: &[Vec<Occ>], kept: &mut [usize; 32]) -> Option<usize> {
    let n = occ.len();
    let mut kept_mask: u32 = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
    if let Some(order) = ctx.drop_order {
        let mut dropped = 0;
        while (0..n).any(|t| kept_mask & (1 << t) != 0 && occ[t].is_empty()) {
            let &t = order.get(dropped)?;
            kept_mask &= !(1 << t);
            dropped += 1;
        }
    } else if occ.iter().any(Vec::is_empty) {
        return None;
    }
    let mut k = 0;
    for t in 0..n.min(32) {
        if kept_mask & (1 << t) != 0 {
            kept[k] = t;
            k += 1;
        }
    }
    (k > 0).then_some(k)
}
