//! The sort rule: a `sort` entry or a custom `attr:asc|desc` rule, ordering by one sort key
//! of the candidate (read by `sort_keys`, compared by the ordering steps). It takes no
//! digit in the verdict; its `_rankingScoreDetails` entry shows the value it sorted on (the
//! distance, for a geo point).

use serde_json::{json, Map, Value};

use super::document::Evaluation;
use super::rule::RankingRule;
use super::verdict::{Detail, Verdict};
use crate::facets::SortKey as Key;
use crate::sort::{self, SortKey};

/// The sort key in slot `slot` of the candidate's keys (its direction is the ordering
/// steps' business, see `order`).
pub(crate) struct SortRule {
    pub slot: usize,
}

impl RankingRule for SortRule {
    fn digits(&self) -> usize {
        0
    }

    fn rank(&self, _: &mut Evaluation, _: &mut Verdict) {}

    fn detail(&self, detail: &Detail, order: usize, out: &mut Map<String, Value>) {
        let Some(spec) = detail.specs.get(self.slot) else {
            return;
        };
        let ranked = detail.ranked;
        let column = detail.columns.get(self.slot);
        let key = ranked.keys.get(self.slot);
        match spec {
            SortKey::Field { name, asc } => {
                let value = match (key, column) {
                    (Some(Key::Num(n)), _) => json!(n),
                    (Some(Key::Str(rank)), Some(c)) => c
                        .string_with_rank(ranked.iid, *rank)
                        .map_or(Value::Null, |v| json!(v)),
                    _ => Value::Null,
                };
                let dir = if *asc { "asc" } else { "desc" };
                out.insert(
                    format!("{name}:{dir}"),
                    json!({"order": order, "value": value}),
                );
            }
            SortKey::GeoPoint { lat, lng, asc } => {
                let dir = if *asc { "asc" } else { "desc" };
                let point = column.and_then(|c| c.point(ranked.iid));
                let entry = match point {
                    Some((a, b)) => json!({
                        "order": order,
                        "value": {"lat": a, "lng": b},
                        "distance": sort::haversine_m(*lat, *lng, a, b),
                    }),
                    None => json!({"order": order, "value": null}),
                };
                out.insert(format!("_geoPoint({lat}, {lng}):{dir}"), entry);
            }
        }
    }
}
