//! `typo`: documents matching with fewer typos first. Per kept term, the fewest typos of
//! its occurrences (only those occurrences stay for the later rules); the digit is the typos
//! saved out of the terms' typo budgets.

use serde_json::{json, Map, Value};

use super::document::Evaluation;
use super::rule::RankingRule;
use super::verdict::{ratio, Detail, Verdict};

pub(crate) struct Typo;

impl RankingRule for Typo {
    fn digits(&self) -> usize {
        1
    }

    fn rank(&self, doc: &mut Evaluation, v: &mut Verdict) {
        let occ = &mut *doc.occ;
        let mut typos = 0;
        let mut max = 0;
        for &t in doc.kept {
            let best = occ[t].iter().map(|o| o.typos).min().unwrap_or(0);
            if occ[t].iter().any(|o| o.typos != best) {
                occ[t].retain(|o| o.typos == best);
            }
            typos += best as u32;
            max += doc.ctx.max_typos[t] as u32;
        }
        v.push(max + 1 - typos.min(max), max + 1);
    }

    fn detail(&self, detail: &Detail, order: usize, out: &mut Map<String, Value>) {
        let (rank, digit_max) = detail.digits[0];
        // Wrapping: a document nothing ranked (degraded mode) has a zero digit.
        let typos = digit_max.wrapping_sub(rank);
        let max = digit_max.wrapping_sub(1);
        out.insert(
            "typo".into(),
            json!({"order": order, "typoCount": typos, "maxTypoCount": max, "score": ratio(max.wrapping_add(1).wrapping_sub(typos), max.wrapping_add(1))}),
        );
    }
}
