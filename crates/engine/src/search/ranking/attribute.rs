//! `attribute`, the older rule: `attributeRank` then `wordPosition` as two digits, shown as
//! one `_rankingScoreDetails` entry.

use serde_json::{json, Map, Value};

use super::attribute_rank::attribute_rank;
use super::document::Evaluation;
use super::rule::RankingRule;
use super::verdict::{merged, ratio, Detail, Verdict};
use super::word_position::word_position;

pub(crate) struct Attribute;

impl RankingRule for Attribute {
    fn digits(&self) -> usize {
        2
    }

    fn rank(&self, doc: &mut Evaluation, v: &mut Verdict) {
        let (rank, max) = attribute_rank(doc);
        v.push(rank, max);
        let (rank, max) = word_position(doc);
        v.push(rank, max);
    }

    fn detail(&self, detail: &Detail, order: usize, out: &mut Map<String, Value>) {
        let (attr, position) = (detail.digits[0], detail.digits[1]);
        out.insert(
            "attribute".into(),
            json!({
                "order": order,
                "attributeRankingOrderScore": ratio(attr.0, attr.1),
                "queryWordDistanceScore": ratio(position.0, position.1),
                "score": merged([attr, position]),
            }),
        );
    }
}
