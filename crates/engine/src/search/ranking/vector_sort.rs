//! `vectorSort`: the rule of semantic search, ordering by the similarity of each document's
//! nearest embedding to the query vector (documents without one last). It takes no digit in
//! the verdict (a similarity is a float the candidate carries, see [`super::Ranked`]); the
//! ordering steps compare it, and its `_rankingScoreDetails` entry shows it.

use serde_json::{json, Map, Value};

use super::document::Evaluation;
use super::rule::RankingRule;
use super::verdict::{Detail, Verdict};

pub(crate) struct VectorSort;

impl RankingRule for VectorSort {
    fn digits(&self) -> usize {
        0
    }

    fn rank(&self, _: &mut Evaluation, _: &mut Verdict) {}

    fn detail(&self, detail: &Detail, order: usize, out: &mut Map<String, Value>) {
        out.insert(
            "vectorSort".into(),
            json!({ "order": order, "similarity": detail.ranked.similarity.map(f64::from) }),
        );
    }
}
