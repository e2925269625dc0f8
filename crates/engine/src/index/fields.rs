//! `POST /indexes/{uid}/fields`: every attribute the index has seen, with what its settings
//! make of it (displayed, searchable, sortable, distinct, a ranking rule, filterable, its
//! locales), in name order, filtered and paged.

use api_types::{Error, Result};
use serde::Deserialize;
use serde_json::{json, Value};

use super::Index;
use crate::facets::FacetOrder;
use crate::filter::rules::{self, pattern_matches};
use crate::value::within;

/// The request, as the TypeScript layer validated it.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(rename_all = "camelCase")]
pub struct FieldsQuery {
    pub offset: usize,
    pub limit: usize,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub filter: FieldsFilter,
}

/// Each given condition must hold (`attributePatterns`: one of them matches the name).
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(rename_all = "camelCase")]
pub struct FieldsFilter {
    pub attribute_patterns: Option<Vec<String>>,
    pub displayed: Option<bool>,
    pub searchable: Option<bool>,
    pub sortable: Option<bool>,
    pub distinct: Option<bool>,
    pub ranking_rule: Option<bool>,
    pub filterable: Option<bool>,
}

/// Whether `field` is one of `attrs` (a name, a pattern, or an object holding it).
fn listed(attrs: Option<&[String]>, field: &str) -> bool {
    attrs.is_none_or(|attrs| {
        attrs
            .iter()
            .any(|a| pattern_matches(a, field) || within(field, a))
    })
}

impl Index {
    /// The page of fields `q` asks for: `{"results","offset","limit","total"}`.
    pub fn fields(&self, q: &FieldsQuery) -> Result<Vec<u8>> {
        let rtxn = self.read_txn()?;
        let settings = self.settings(&rtxn)?;
        let filter_rules = rules::rules_of(&settings);
        // The attributes with an id, every nested path the documents held, and the objects
        // holding them.
        let mut names: Vec<String> = Vec::new();
        let fields = self.fields_map.read().unwrap().clone();
        for name in fields.names().iter().chain(fields.nested()) {
            if name == "_vectors" || name.starts_with("_vectors.") {
                continue;
            }
            let mut at = 0;
            while let Some(dot) = name[at..].find('.') {
                names.push(name[..at + dot].to_string());
                at += dot + 1;
            }
            names.push(name.clone());
        }
        names.sort_unstable();
        names.dedup();
        let mut out: Vec<Value> = Vec::new();
        let f = &q.filter;
        for name in &names {
            let displayed = listed(settings.displayed(), name);
            let searchable = listed(settings.searchable(), name);
            let sortable = settings
                .sortable_attributes
                .iter()
                .any(|a| pattern_matches(a, name) || within(name, a));
            let distinct = settings.distinct_attribute.as_deref() == Some(name.as_str());
            let order = settings.ranking_rules().iter().find_map(|r| {
                let (field, dir) = r.rsplit_once(':')?;
                (field == name && (dir == "asc" || dir == "desc")).then_some(dir)
            });
            let filter = rules::features_of(&filter_rules, name);
            let filterable = filter.is_some_and(|(_, any)| any);
            let keep = f
                .attribute_patterns
                .as_ref()
                .is_none_or(|p| p.iter().any(|p| pattern_matches(p, name)))
                && f.displayed.is_none_or(|b| b == displayed)
                && f.searchable.is_none_or(|b| b == searchable)
                && f.sortable.is_none_or(|b| b == sortable)
                && f.distinct.is_none_or(|b| b == distinct)
                && f.ranking_rule.is_none_or(|b| b == order.is_some())
                && f.filterable.is_none_or(|b| b == filterable);
            if !keep {
                continue;
            }
            let mut ranking_rule = json!({"enabled": order.is_some()});
            if let Some(dir) = order {
                ranking_rule["order"] = json!(dir);
            }
            let features = filter.map(|(f, _)| f);
            let sort_by = match settings.facet_order(name) {
                FacetOrder::Alpha => "alpha",
                FacetOrder::Count => "count",
            };
            // Locales as Meilisearch names them (`Eng`).
            let locales: Vec<String> = settings
                .localized_attributes
                .iter()
                .flatten()
                .find(|r| {
                    r.attribute_patterns
                        .iter()
                        .any(|p| pattern_matches(p, name))
                })
                .map(|r| {
                    r.locales
                        .iter()
                        .map(|l| {
                            let mut c = l.chars();
                            c.next().map_or_else(String::new, |first| {
                                first.to_uppercase().chain(c).collect()
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            out.push(json!({
                "name": name,
                "displayed": {"enabled": displayed},
                "searchable": {"enabled": searchable},
                "sortable": {"enabled": sortable},
                "distinct": {"enabled": distinct},
                "rankingRule": ranking_rule,
                "filterable": {
                    "enabled": filterable,
                    "sortBy": sort_by,
                    "facetSearch": features.is_some_and(|f| f.facet_search && filterable && settings.facet_search),
                    "equality": features.is_some_and(|f| f.equality),
                    "comparison": features.is_some_and(|f| f.comparison),
                },
                "localized": {"locales": locales},
            }));
        }
        let total = out.len();
        let results: Vec<Value> = out.into_iter().skip(q.offset).take(q.limit).collect();
        serde_json::to_vec(
            &json!({"results": results, "offset": q.offset, "limit": q.limit, "total": total}),
        )
        .map_err(Error::internal)
    }
}
