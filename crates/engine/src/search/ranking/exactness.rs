//! `exactness`: documents matching the query as typed first. Two digits: the match kind
//! (3: a field is exactly the query, 2: a field starts with it, 1: neither), then how many
//! kept terms occur as typed (not as a completion, synonym or typo).

use serde_json::{json, Map, Value};

use super::document::Evaluation;
use super::reader::{Occ, QueryTerm};
use super::rule::RankingRule;
use super::verdict::{merged, ratio, Detail, Verdict};
use super::word_position::bucketed;
use crate::index::text;

pub(crate) struct Exactness;

impl RankingRule for Exactness {
    fn digits(&self) -> usize {
        2
    }

    fn rank(&self, doc: &mut Evaluation, v: &mut Verdict) {
        let (kind, words, max) = exactness(doc.terms, doc.kept, doc.occ, doc.lens);
        v.push(kind, 3);
        v.push(words + 1, max + 1);
    }

    fn detail(&self, detail: &Detail, order: usize, out: &mut Map<String, Value>) {
        let (kind, _) = detail.digits[0];
        // Terms as typed and kept terms, each plus one.
        let (words, max) = detail.digits[1];
        let mut m = Map::new();
        m.insert("order".into(), json!(order));
        let name = match kind {
            3 => "exactMatch",
            2 => "matchesStart",
            _ => "noExactMatch",
        };
        m.insert("matchType".into(), json!(name));
        if kind == 1 {
            m.insert("matchingWords".into(), json!(words - 1));
            m.insert("maxMatchingWords".into(), json!(max - 1));
            m.insert("score".into(), json!(merged([(1, 3), (words, max)])));
        } else {
            m.insert("score".into(), json!(ratio(kind, 3)));
        }
        out.insert("exactness".into(), Value::Object(m));
    }
}

/// The least cost (both digits packed, as [`Verdict::cost_range`] gives them) a document with
/// `kept` kept terms has when it is no exact match: it may match the start with every term
/// as typed; with `typed` false no term occurs as typed, so it matches neither.
pub(super) fn floor_without_exact_match(typed: bool, kept: u32) -> u128 {
    // Each digit's cost is its maximum less its rank (see `Exactness::rank`).
    let (kind, words) = if typed { (2, kept) } else { (1, 0) };
    (((3 - kind) as u128) << 16) | (kept - words) as u128
}

/// (kind: 3 exact match, 2 matches start, 1 neither; terms present as typed; kept terms).
///
/// As Meilisearch judges it: the kept terms must be the query's first ones, each as typed
/// at its (bucketed) query position in some field, not necessarily the same one; then a
/// field holding every term as typed (anywhere in it) makes the match a start, and an exact
/// match when that field has as many words as the query.
fn exactness(
    terms: &[QueryTerm],
    kept: &[usize],
    occ: &[Vec<Occ>],
    lens: &dyn Fn() -> Vec<u64>,
) -> (u32, u32, u32) {
    let words = kept
        .iter()
        .filter(|t| occ[**t].iter().any(|o| o.exact))
        .count() as u32;
    let max = kept.len() as u32;
    let mut kind = 1;
    // The kept terms must be the query's first ones, without a hole.
    let prefix = kept.iter().enumerate().all(|(i, t)| i == *t);
    let placed = |t: usize| {
        let q = bucketed(terms[t].position);
        occ[t].iter().any(|o| o.exact && bucketed(o.offset()) == q)
    };
    if prefix && words == max && kept.iter().all(|t| placed(*t)) {
        // The fields holding every term as typed.
        let fields_of = |t: usize| -> Vec<u32> {
            let mut f: Vec<u32> = occ[t]
                .iter()
                .filter(|o| o.exact)
                .map(|o| o.field())
                .collect();
            f.sort_unstable();
            f.dedup();
            f
        };
        let mut common = fields_of(kept[0]);
        for &t in &kept[1..] {
            let f = fields_of(t);
            common.retain(|x| f.contains(x));
        }
        if !common.is_empty() {
            kind = 2;
            let query_words: u32 = kept.iter().map(|t| terms[*t].word_count).sum();
            if lens()
                .iter()
                .map(|l| text::field_and_length(*l))
                .any(|(field, len)| common.contains(&field) && len == query_words)
            {
                kind = 3;
            }
        }
    }
    (kind, words, max)
}

#[cfg(test)]
mod tests {
    use super::super::order::Ranked;
    use super::super::rule::Rule;
    use super::super::verdict::{score_details, verdict};

    #[test]
    fn exactness_details_shape() {
        // Neither an exact match nor a start, one term of two as typed, at rule 4.
        let ranked = Ranked {
            verdict: verdict(&[(1, 1), (1, 1), (1, 1), (1, 1), (1, 3), (2, 3)]),
            ..Ranked::plain(0)
        };
        let rules = [
            Rule::Words,
            Rule::Typo,
            Rule::Proximity,
            Rule::AttributeRank,
            Rule::Exactness,
        ];
        let details = score_details(&ranked, &rules, &[], &[]);
        let v = &details["exactness"];
        assert_eq!(v["order"], 4);
        assert_eq!(v["matchType"], "noExactMatch");
        assert_eq!(v["matchingWords"], 1);
        // merge((1,3),(2,3)) = 2/9
        assert!((v["score"].as_f64().unwrap() - 2.0 / 9.0).abs() < 1e-12);
    }
}
