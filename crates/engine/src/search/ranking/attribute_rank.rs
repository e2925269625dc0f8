//! `attributeRank`: documents matching in more important fields first. Per kept term, the
//! best weight (its `searchableAttributes` index) of the fields it occurs in, counted once
//! per term (a phrase is one term, as in Meilisearch's field graph, whose cost is the weight
//! times the term's query-term ids: one for a phrase). It narrows nothing: as in
//! Meilisearch, whose field conditions keep the whole term for the next rule, `wordPosition`
//! and `exactness` see the term's occurrences in every field, not only in the best one.

use serde_json::{json, Map, Value};

use super::document::Evaluation;
use super::reader::Occ;
use super::rule::RankingRule;
use super::verdict::{ratio, Detail, Verdict};

pub(crate) struct AttributeRank;

impl RankingRule for AttributeRank {
    fn digits(&self) -> usize {
        1
    }

    fn rank(&self, doc: &mut Evaluation, v: &mut Verdict) {
        let (rank, max) = attribute_rank(doc);
        v.push(rank, max);
    }

    fn detail(&self, detail: &Detail, order: usize, out: &mut Map<String, Value>) {
        let (rank, max) = detail.digits[0];
        out.insert(
            "attributeRank".into(),
            json!({"order": order, "score": ratio(rank, max)}),
        );
    }
}

/// The rule's (rank, max) (also the first half of `attribute`).
pub(super) fn attribute_rank(doc: &mut Evaluation) -> (u32, u32) {
    let ctx = doc.ctx;
    let weight = |o: &Occ| ctx.weights.get(o.field() as usize).copied().unwrap_or(0);
    let occ = &*doc.occ;
    let mut cost = 0;
    let mut max = 0;
    for &t in doc.kept {
        let best = occ[t].iter().map(weight).min().unwrap_or(0);
        cost += best;
        max += ctx.max_weight;
    }
    (max + 1 - cost.min(max), max + 1)
}
