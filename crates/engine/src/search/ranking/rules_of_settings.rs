//! The ranking rules a search applies, from the settings' `rankingRules` and the query
//! (`sort`, matching strategy), and what else the rules read from the typed settings: field
//! weights (the time budget is [`Settings::search_cutoff`]).

use super::rule::Rule;
use crate::filter::eval::within;
use crate::settings::Settings;
use crate::sort::SortKey;

/// The ranking rules as applied to a query: `words` only for a keyword query that may drop
/// words (inserted before the first relevancy rule when missing), relevancy rules only for
/// keyword queries, `sort` expanded into its keys, custom `attr:asc|desc` rules as keys;
/// repeated rules count once. Returns the rules and the sort keys they index.
pub(crate) fn rule_list(
    names: &[String],
    sort_keys: &[SortKey],
    placeholder: bool,
    all_words: bool,
) -> (Vec<Rule>, Vec<SortKey>) {
    let mut rules: Vec<Rule> = Vec::new();
    let mut keys: Vec<SortKey> = Vec::new();
    let push = |rules: &mut Vec<Rule>, r: Rule| {
        let dup = rules.contains(&r)
            || (r == Rule::Attribute
                && rules
                    .iter()
                    .any(|x| matches!(x, Rule::AttributeRank | Rule::WordPosition)))
            || (matches!(r, Rule::AttributeRank | Rule::WordPosition)
                && rules.contains(&Rule::Attribute));
        if !dup {
            rules.push(r);
        }
    };
    for name in names {
        if let Some(r) = Rule::relevancy(name) {
            if placeholder || (r == Rule::Words && all_words) {
                continue;
            }
            if r != Rule::Words && !all_words && !rules.contains(&Rule::Words) {
                push(&mut rules, Rule::Words);
            }
            push(&mut rules, r);
            continue;
        }
        if name == "sort" {
            for key in sort_keys {
                // A field a custom rule already sorts on is not sorted again.
                if let SortKey::Field { name: f, .. } = key {
                    if keys
                        .iter()
                        .any(|k| matches!(k, SortKey::Field { name, .. } if name == f))
                    {
                        continue;
                    }
                }
                rules.push(Rule::Key {
                    slot: keys.len(),
                    asc: direction(key),
                });
                keys.push(key.clone());
            }
            continue;
        }
        if let Some((field, dir)) = name.rsplit_once(':') {
            if dir == "asc" || dir == "desc" {
                if keys
                    .iter()
                    .any(|k| matches!(k, SortKey::Field { name, .. } if name == field))
                {
                    continue;
                }
                rules.push(Rule::Key {
                    slot: keys.len(),
                    asc: dir == "asc",
                });
                keys.push(SortKey::Field {
                    name: field.to_string(),
                    asc: dir == "asc",
                });
            }
        }
    }
    if !placeholder && !all_words && !rules.contains(&Rule::Words) {
        rules.insert(0, Rule::Words);
    }
    (rules, keys)
}

/// The rules of a semantic search: `vectorSort` in place of the first relevancy rule (last
/// when there is none), sort keys where they are.
pub(crate) fn semantic_rule_list(
    names: &[String],
    sort_keys: &[SortKey],
) -> (Vec<Rule>, Vec<SortKey>) {
    let (mut rules, keys) = rule_list(names, sort_keys, true, true);
    let at = match names.iter().position(|n| Rule::relevancy(n).is_some()) {
        Some(first) => rule_list(&names[..first], sort_keys, true, true).0.len(),
        None => rules.len(),
    };
    rules.insert(at, Rule::Vector);
    (rules, keys)
}

/// Per field id: its weight for `attributeRank` (the index of the first `searchableAttributes`
/// entry holding it; 0 for all with `*`), and the largest weight.
pub(super) fn field_weights(settings: &Settings, names: &[String]) -> (Vec<u32>, u32) {
    let Some(searchable) = settings.searchable() else {
        return (vec![0; names.len()], 0);
    };
    let weights = names
        .iter()
        .map(|n| {
            searchable
                .iter()
                .position(|a| within(n, a))
                .unwrap_or(searchable.len().saturating_sub(1)) as u32
        })
        .collect();
    (weights, searchable.len().saturating_sub(1) as u32)
}

/// Whether a sort key sorts ascending.
pub(super) fn direction(key: &SortKey) -> bool {
    match key {
        SortKey::Field { asc, .. } | SortKey::GeoPoint { asc, .. } => *asc,
    }
}
