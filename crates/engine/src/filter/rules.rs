//! `filterableAttributes` rules and the validation of a parsed filter against them.
//!
//! A plain string rule (`"genre"`) makes the attribute and everything nested under it
//! (`genre.x`) filterable with every operator. An object rule
//! `{"attributePatterns": [...], "features": {"filter": {"equality", "comparison"}}}` matches
//! its patterns (`*`, `prefix*`, `*suffix`, `*infix*`, exact) and enables equality only unless
//! told otherwise; `filters` is accepted as a spelling of `filter`. The first matching rule
//! decides. Attributes starting with `_` are matched by plain string rules only.

use std::collections::BTreeSet;

use crate::settings::{FilterableAttributeRule, Settings};

use super::{Expr, Filter, Token};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    pub equality: bool,
    pub comparison: bool,
    pub facet_search: bool,
}

impl Features {
    fn filterable(self) -> bool {
        self.equality || self.comparison
    }

    fn allowed_operators(self) -> Vec<&'static str> {
        if !self.filterable() {
            return Vec::new();
        }
        let mut ops = vec!["OR", "AND", "NOT"];
        if self.equality {
            ops.extend(["=", "!=", "IN"]);
        }
        if self.comparison {
            ops.extend(["<", ">", "<=", ">=", "TO"]);
        }
        ops.extend(["IS EMPTY", "IS NULL", "EXISTS"]);
        ops
    }
}

#[derive(Debug, Clone)]
pub enum Rule {
    Field(String),
    Patterns(Vec<String>, Features),
}

impl Rule {
    fn matches(&self, field: &str) -> bool {
        match self {
            Rule::Field(name) => super::eval::within(field, name),
            Rule::Patterns(patterns, _) => {
                !field.starts_with('_') && patterns.iter().any(|p| pattern_matches(p, field))
            }
        }
    }

    fn features(&self) -> Features {
        match self {
            Rule::Field(_) => Features {
                equality: true,
                comparison: true,
                facet_search: true,
            },
            Rule::Patterns(_, f) => *f,
        }
    }
}

/// `*`, `prefix*`, `*suffix`, `*infix*` or an exact name.
pub fn pattern_matches(pattern: &str, field: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    match (pattern.strip_prefix('*'), pattern.strip_suffix('*')) {
        (Some(_), Some(_)) if pattern.len() >= 2 => field.contains(&pattern[1..pattern.len() - 1]),
        (Some(suffix), _) => field.ends_with(suffix),
        (_, Some(prefix)) => field.starts_with(prefix),
        _ => pattern == field,
    }
}

/// What the first rule naming `field` allows (none: not filterable), and whether that is
/// any filter at all.
pub fn features_of(rules: &[Rule], field: &str) -> Option<(Features, bool)> {
    let f = rules.iter().find(|r| r.matches(field))?.features();
    Some((f, f.filterable()))
}

/// The rules of the settings' `filterableAttributes`.
pub fn rules_of(settings: &Settings) -> Vec<Rule> {
    settings
        .filterable_attributes
        .iter()
        .map(|rule| match rule {
            FilterableAttributeRule::Name(name) => Rule::Field(name.clone()),
            FilterableAttributeRule::Pattern(p) => Rule::Patterns(
                p.attribute_patterns.clone(),
                Features {
                    equality: p.features.filter.equality,
                    comparison: p.features.filter.comparison,
                    facet_search: p.features.facet_search,
                },
            ),
        })
        .collect()
}

/// The first rule matching `field`, with its position in the list.
fn matching(rules: &[Rule], field: &str) -> Option<(usize, Features)> {
    rules
        .iter()
        .enumerate()
        .find(|(_, r)| r.matches(field))
        .map(|(i, r)| (i, r.features()))
}

/// Whether `name` is listed as a plain string rule: the only way reserved attributes
/// (`_geo`, `_geojson`) become filterable.
pub fn has_plain_rule(rules: &[Rule], name: &str) -> bool {
    rules
        .iter()
        .any(|r| matches!(r, Rule::Field(f) if f == name))
}

/// Whether `_geo` filters are enabled (a plain `_geo` rule).
/// Whether `_geoRadius` and `_geoBoundingBox` may be used: `_geo` or `_geojson` is filterable.
fn geo_enabled(rules: &[Rule]) -> bool {
    has_plain_rule(rules, "_geo") || has_plain_rule(rules, "_geojson")
}

/// Whether `name` lies above an attribute a plain rule makes filterable (`a` for `a.b`):
/// `facets` takes it, and finds nothing there.
pub fn is_above_plain_rule(rules: &[Rule], name: &str) -> bool {
    rules.iter().any(|r| {
        matches!(r, Rule::Field(f) if f.strip_prefix(name).is_some_and(|rest| rest.starts_with('.')))
    })
}

/// Whether `field` may be filtered on (and so used in `facets` and as `distinct`).
pub fn is_filterable(rules: &[Rule], field: &str) -> bool {
    matching(rules, field).is_some_and(|(_, f)| f.filterable())
}

fn pattern_list(patterns: &BTreeSet<&str>) -> String {
    patterns.iter().copied().collect::<Vec<_>>().join(", ")
}

/// The `invalid_search_facets` message for `name`, a name or pattern of `facets` that matches
/// no filterable attribute (Meilisearch names the first such one only).
pub fn facets_error(rules: &[Rule], name: &str) -> String {
    let patterns = filterable_patterns(rules);
    let tail = if patterns.is_empty() {
        "This index does not have configured filterable attributes.".to_string()
    } else {
        format!(
            "Available filterable attributes patterns are: `{}`.",
            pattern_list(&patterns)
        )
    };
    match matching(rules, name) {
        Some((i, _)) => format!(
            "Invalid facet distribution: Attribute `{name}` matched rule #{i} in filterableAttributes, but this rule does not enable filtering.\nHint: enable filtering in rule #{i} by modifying the features.filter object\nHint: prepend another rule matching `{name}` with appropriate filter features before rule #{i}"
        ),
        None => format!("Invalid facet distribution: Pattern `{name}` is not filterable. {tail}"),
    }
}

/// Why `field` can't be the `distinct` of a search, if it can't.
pub fn distinct_error(rules: &[Rule], field: &str) -> Option<String> {
    if is_filterable(rules, field) {
        return None;
    }
    let patterns = filterable_patterns(rules);
    let tail = match (patterns.is_empty(), matching(rules, field)) {
        (_, Some((i, _))) => format!(
            "Note: this attribute matches rule #{i} in filterableAttributes, but this rule does not enable filtering.\nHint: enable filtering in rule #{i} by adding appropriate filter features.\nHint: prepend another rule matching {field} with filter features before rule #{i}"
        ),
        (true, None) => "This index does not have configured filterable attributes.".to_string(),
        (false, None) => format!(
            "Available filterable attributes patterns are: `{}`.",
            pattern_list(&patterns)
        ),
    };
    Some(format!(
        "Attribute `{field}` is not filterable and thus, cannot be used as distinct attribute. {tail}"
    ))
}

/// Why `field` can't be facet-searched, if it can't.
pub fn facet_search_error(rules: &[Rule], field: &str) -> Option<String> {
    let found = matching(rules, field);
    if found.is_some_and(|(_, f)| f.facet_search) {
        return None;
    }
    let mut patterns = BTreeSet::new();
    for r in rules {
        match r {
            Rule::Field(f) => {
                patterns.insert(f.as_str());
            }
            Rule::Patterns(p, features) if features.facet_search => {
                patterns.extend(p.iter().map(String::as_str));
            }
            Rule::Patterns(..) => {}
        }
    }
    let tail = match (patterns.is_empty(), found) {
        (_, Some((i, _))) => format!(
            "Note: this attribute matches rule #{i} in filterableAttributes, but this rule does not enable facetSearch.\nHint: enable facetSearch in rule #{i} by adding `\"facetSearch\": true` to the rule.\nHint: prepend another rule matching {field} with facetSearch: true before rule #{i}"
        ),
        (true, None) => "This index does not have configured facet-searchable attributes. To make it facet-searchable add it to the `filterableAttributes` index settings.".to_string(),
        (false, None) => format!(
            "Available facet-searchable attributes patterns are: `{}`. To make it facet-searchable add it to the `filterableAttributes` index settings.",
            pattern_list(&patterns)
        ),
    };
    Some(format!(
        "Attribute `{field}` is not facet-searchable. {tail}"
    ))
}

fn filterable_patterns(rules: &[Rule]) -> BTreeSet<&str> {
    let mut out = BTreeSet::new();
    for r in rules {
        match r {
            Rule::Field(f) => {
                out.insert(f.as_str());
            }
            Rule::Patterns(p, features) if features.filterable() => {
                out.extend(p.iter().map(String::as_str));
            }
            Rule::Patterns(..) => {}
        }
    }
    out
}

fn not_filterable(filter: &Filter, rules: &[Rule], token: &Token, attribute: &str) -> String {
    let patterns = filterable_patterns(rules);
    let tail = if patterns.is_empty() {
        " This index does not have configured filterable attributes.".to_string()
    } else {
        let list: Vec<String> = patterns.iter().map(|p| format!("`{p}`")).collect();
        format!(
            " Available filterable attribute patterns are: {}.",
            list.join(", ")
        )
    };
    filter.error_at(
        token,
        &format!("Attribute `{attribute}` is not filterable.{tail}"),
    )
}

/// See [`Filter::validate`].
pub fn validate(filter: &Filter, settings: &Settings) -> Result<(), String> {
    let rules = rules_of(settings);
    // Attributes first, in the order Meilisearch reports them (a stack: last operand first).
    let mut stack = vec![filter.expr()];
    while let Some(e) = stack.pop() {
        match e {
            Expr::And(v) | Expr::Or(v) => stack.extend(v.iter()),
            Expr::Not(inner) => stack.push(inner),
            // `_vectors` conditions need no filterable attribute (see `super::vectors`).
            Expr::Cond { field, op } if super::vectors::is_vector_condition(&field.value, op) => {}
            Expr::Cond { field, .. } | Expr::In { field, .. } | Expr::Foreign { field, .. }
                if !matching(&rules, &field.value).is_some_and(|(_, f)| f.filterable()) =>
            {
                return Err(not_filterable(filter, &rules, field, &field.value));
            }
            _ => {}
        }
    }
    // Then operators and geo arguments, in reading order.
    let mut stack = vec![filter.expr()];
    while let Some(e) = stack.pop() {
        match e {
            Expr::And(v) | Expr::Or(v) => stack.extend(v.iter().rev()),
            Expr::Not(inner) => stack.push(inner),
            Expr::Cond { field, op } if super::vectors::is_vector_condition(&field.value, op) => {}
            Expr::Cond { field, op } => check_operator(&rules, &field.value, op.name())?,
            // `IN` is checked as the `=` conditions it stands for.
            Expr::In { field, .. } | Expr::Foreign { field, .. } => {
                check_operator(&rules, &field.value, "=")?
            }
            Expr::GeoRadius {
                lat,
                lng,
                radius,
                resolution,
            } => {
                check_point(filter, lat, lng)?;
                finite(filter, radius)?;
                if let Some(r) = resolution {
                    let n = finite(filter, r)? as usize;
                    if !(3..=1000).contains(&n) {
                        let msg = format!(
                            "Invalid resolution `{n}`. Resolution must be between 3 and 1000."
                        );
                        return Err(filter.error_at(r, &msg));
                    }
                }
                if !geo_enabled(&rules) {
                    return Err(not_filterable(filter, &rules, lat, "_geo/_geojson"));
                }
            }
            Expr::GeoBoundingBox {
                top_right,
                bottom_left,
            } => {
                let (top, _) = check_point(filter, &top_right[0], &top_right[1])?;
                let (bottom, _) = check_point(filter, &bottom_left[0], &bottom_left[1])?;
                if top < bottom {
                    let msg = format!(
                        "The top latitude `{top}` is below the bottom latitude `{bottom}`."
                    );
                    return Err(filter.error_at(&bottom_left[1], &msg));
                }
                if !geo_enabled(&rules) {
                    return Err(not_filterable(
                        filter,
                        &rules,
                        &top_right[0],
                        "_geo/_geojson",
                    ));
                }
            }
            Expr::GeoPolygon { points } => {
                for p in points {
                    check_point(filter, &p[0], &p[1])?;
                }
                let geojson = has_plain_rule(&rules, "_geojson");
                if !geojson {
                    return Err(not_filterable(filter, &rules, &points[0][0], "_geojson"));
                }
            }
        }
    }
    Ok(())
}

fn check_operator(rules: &[Rule], field: &str, name: &str) -> Result<(), String> {
    let Some((index, features)) = matching(rules, field) else {
        return Ok(());
    };
    let allowed = match name {
        "<" | ">" | "<=" | ">=" | "TO" => features.comparison,
        "=" | "!=" => features.equality,
        _ => features.filterable(),
    };
    if allowed {
        return Ok(());
    }
    let family = match name {
        "=" | "!=" | "IN" => "equality",
        "<" | ">" | "<=" | ">=" | "TO" => "comparison",
        _ => "the appropriate filter operators",
    };
    Err(format!(
        "Filter operator `{name}` is not allowed for the attribute `{field}`.\n  - Note: allowed operators: {}.\n  - Note: field `{field}` matched rule #{index} in `filterableAttributes`\n  - Hint: enable {family} in rule #{index} by modifying the features.filter object\n  - Hint: prepend another rule matching `{field}` with appropriate filter features before rule #{index}",
        features.allowed_operators().join(", ")
    ))
}

fn finite(filter: &Filter, t: &Token) -> Result<f64, String> {
    match t.value.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(filter.error_at(t, "Non finite floats are not supported")),
        Err(e) => Err(filter.error_at(t, &e.to_string())),
    }
}

/// Latitude and longitude of a geo rule, range-checked.
fn check_point(filter: &Filter, lat: &Token, lng: &Token) -> Result<(f64, f64), String> {
    let (la, lo) = (finite(filter, lat)?, finite(filter, lng)?);
    if !(-90.0..=90.0).contains(&la) {
        let msg =
            format!("Bad latitude `{la}`. Latitude must be contained between -90 and 90 degrees.");
        return Err(filter.error_at(lat, &msg));
    }
    if !(-180.0..=180.0).contains(&lo) {
        let normalized = (lo + 180.0).rem_euclid(360.0) - 180.0;
        let msg = format!("Bad longitude `{lo}`. Longitude must be contained between -180 and 180 degrees. Hint: try using `{normalized}` instead.");
        return Err(filter.error_at(lng, &msg));
    }
    Ok((la, lo))
}
