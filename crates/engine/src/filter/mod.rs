//! Filters: the `filter` of search, document fetches and delete-by-filter.
//!
//! The grammar lives in its own crate, `filter-parser` (`crates/filter-parser`), a leaf that
//! knows nothing of the index: the filter language (string form) into an [`Expr`] of
//! [`Token`]s, with Meilisearch's syntax errors and positions. This module re-exports its
//! syntax tree and adds the rest, each step in its own file:
//! - here: [`Filter::from_json`], the array form (outer array AND, inner arrays OR, every
//!   string parsed as a filter by `filter_parser::parse`), and the errors about one token;
//! - [`rules`]: validation against `filterableAttributes` (plain names, pattern objects and
//!   their `equality`/`comparison` features, `_geo`) and the geo arguments;
//! - [`eval`]: whether one document matches, straight from its JSON; [`bitmap`]: the same
//!   answer from value columns.
//!
//! Design choice: evaluation reads each candidate document rather than per-value bitmaps.
//! It is exact by construction (the document is the truth) and needs no index to keep in
//! step with settings changes; bitmaps per filterable field are the later, faster path.
//! Validation is separate from parsing because syntax is checked when a delete-by-filter task
//! is enqueued while filterability is checked when it runs (as Meilisearch does).

pub mod bitmap;
pub mod eval;
pub mod rule_condition;
pub mod rules;
pub mod vectors;

use api_types::Code;
use serde_json::{Map, Value};

pub use filter_parser::{Expr, Op, Token};

/// A whole filter: the expression and the strings it came from (for error positions).
#[derive(Debug, Clone)]
pub struct Filter {
    sources: Vec<String>,
    expr: Expr,
    /// Every attribute path the filter reads (`_geo` for the geo rules), deduplicated.
    paths: Vec<String>,
    /// The expression compiled for evaluation.
    node: eval::Node,
    /// Whether errors quote the filter as [`render`] writes it rather than as sent (search
    /// requests, as Meilisearch does there).
    rendered: bool,
    /// The code of the request's filter errors (`invalid_search_filter` unless
    /// [`parse_request`] says otherwise), for those found while it is evaluated.
    code: Code,
}

impl Filter {
    /// Parses the `filter` parameter: a string, or an array of strings and arrays of strings.
    /// `Ok(None)` when there is nothing to filter (null, blank strings, empty arrays). The error
    /// is the client-facing message.
    pub fn from_json(value: &Value) -> Result<Option<Filter>, String> {
        check_length(value)?;
        let mut sources = Vec::new();
        let expr = match value {
            Value::Null => None,
            Value::String(s) => parse_one(s, &mut sources)?,
            Value::Array(items) => {
                let mut ands = Vec::new();
                for item in items {
                    let e = match item {
                        Value::String(s) => parse_one(s, &mut sources)?,
                        Value::Array(inner) => {
                            let mut ors = Vec::new();
                            for v in inner {
                                let Value::String(s) = v else {
                                    return Err(bad_shape(&["String"], v));
                                };
                                ors.extend(parse_one(s, &mut sources)?);
                            }
                            combine(ors, Expr::Or)
                        }
                        other => return Err(bad_shape(&["String", "[String]"], other)),
                    };
                    ands.extend(e);
                }
                combine(ands, Expr::And)
            }
            other => return Err(bad_shape(&["String", "Array"], other)),
        };
        let filter = expr.map(|expr| Filter::of(sources, expr));
        if let Some(f) = &filter {
            f.check_vectors()?;
        }
        Ok(filter)
    }

    /// The code of this filter's errors.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The conditions of the filter (what `AND`, `OR` and `NOT` combine), in reading order.
    fn leaves(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        let mut stack = vec![&self.expr];
        while let Some(e) = stack.pop() {
            match e {
                Expr::And(v) | Expr::Or(v) => stack.extend(v.iter().rev()),
                Expr::Not(inner) => stack.push(inner),
                leaf => out.push(leaf),
            }
        }
        out
    }

    /// The `_vectors` conditions, in reading order (see [`vectors`]).
    pub fn vector_conditions(&self) -> Vec<vectors::VectorCondition> {
        let mut out = Vec::new();
        for e in self.leaves() {
            if let Expr::Cond { field, op } = e {
                if !vectors::is_vector_condition(&field.value, op) {
                    continue;
                }
                if let Ok((embedder, kind)) = vectors::read(&field.value) {
                    out.push(vectors::VectorCondition {
                        field: field.clone(),
                        embedder,
                        kind,
                    });
                }
            }
        }
        out
    }

    /// The syntax of the `_vectors` conditions: an embedder, then a known suffix or none.
    fn check_vectors(&self) -> Result<(), String> {
        for e in self.leaves() {
            let Expr::Cond { field, op } = e else {
                continue;
            };
            if !vectors::is_vector_condition(&field.value, op) {
                continue;
            }
            vectors::read(&field.value).map_err(|(m, start, end)| {
                // Unquoted, the field's text is its value: point into it.
                let at = match field.end - field.start == field.value.len() {
                    true => Token {
                        start: field.start + start,
                        end: field.start + end,
                        ..field.clone()
                    },
                    false => field.clone(),
                };
                self.error_at(&at, &m)
            })?;
        }
        Ok(())
    }

    /// Replaces each `_vectors` condition by the documents `docs` says it selects (its
    /// embedder unknown, or its fragment: the error message, positioned here).
    pub fn resolve_vectors(
        &mut self,
        docs: &dyn Fn(&vectors::VectorCondition) -> Result<roaring::RoaringBitmap, String>,
    ) -> Result<(), String> {
        let mut resolved = std::collections::HashMap::new();
        for c in self.vector_conditions() {
            if resolved.contains_key(&c.field.value) {
                continue;
            }
            let set = docs(&c).map_err(|m| self.error_at(&c.field, &m))?;
            resolved.insert(c.field.value.clone(), std::sync::Arc::new(set));
        }
        self.node.resolve_vectors(&resolved);
        Ok(())
    }

    fn of(sources: Vec<String>, expr: Expr) -> Filter {
        let paths = paths_of(&expr);
        let node = eval::compile(&expr);
        Filter {
            sources,
            expr,
            paths,
            node,
            rendered: false,
            code: Code::InvalidSearchFilter,
        }
    }

    /// The `_foreign(field, inner)` conditions, in reading order, and whether each holds
    /// another one (which Meilisearch refuses).
    pub fn foreign(&self) -> Vec<(&Token, &Expr, bool)> {
        let mut out = Vec::new();
        let mut stack = vec![&self.expr];
        while let Some(e) = stack.pop() {
            match e {
                Expr::And(v) | Expr::Or(v) => stack.extend(v.iter().rev()),
                Expr::Not(inner) => stack.push(inner),
                Expr::Foreign { field, inner } => {
                    let nested = !Filter::of(Vec::new(), (**inner).clone())
                        .foreign()
                        .is_empty();
                    out.push((field, &**inner, nested));
                }
                _ => {}
            }
        }
        out
    }

    /// The filter `inner` (a `_foreign` condition's expression, from [`Filter::foreign`]),
    /// its errors pointing into this filter's strings.
    pub fn sub_filter(&self, inner: &Expr) -> Filter {
        Filter::of(self.sources.clone(), inner.clone())
    }

    /// Replaces the `_foreign` conditions, in reading order, by `field IN [ids]`: `lists[i]`
    /// the ids of the foreign documents the i-th one selects.
    fn resolve_foreign(&mut self, lists: &[Vec<String>]) -> Result<(), String> {
        fn walk(e: &mut Expr, lists: &[Vec<String>], next: &mut usize) -> Result<(), String> {
            match e {
                Expr::And(v) | Expr::Or(v) => {
                    for item in v {
                        walk(item, lists, next)?;
                    }
                }
                Expr::Not(inner) => walk(inner, lists, next)?,
                Expr::Foreign { field, .. } => {
                    let ids = lists
                        .get(*next)
                        .ok_or("a `_foreign` condition was left unresolved")?;
                    *next += 1;
                    let at = |value: &String| Token {
                        value: value.clone(),
                        src: field.src,
                        start: field.end,
                        end: field.end,
                    };
                    *e = Expr::In {
                        field: field.clone(),
                        values: ids.iter().map(at).collect(),
                    };
                }
                _ => {}
            }
            Ok(())
        }
        let mut next = 0;
        walk(&mut self.expr, lists, &mut next)?;
        *self = Filter::of(std::mem::take(&mut self.sources), self.expr.clone());
        Ok(())
    }

    pub fn expr(&self) -> &Expr {
        &self.expr
    }

    /// Checks every attribute against the settings' `filterableAttributes`
    /// and the geo arguments. The error is the client-facing message.
    pub fn validate(&self, settings: &crate::settings::Settings) -> Result<(), String> {
        rules::validate(self, settings)
    }

    /// Binds what the filter reads to the settings it was validated against: `_geoRadius` and
    /// `_geoBoundingBox` read `_geo` points, `_geojson` shapes, or both, as each is filterable.
    pub fn bind_geo(&mut self, settings: &crate::settings::Settings) {
        let r = rules::rules_of(settings);
        let shapes = rules::has_plain_rule(&r, "_geojson");
        self.node
            .bind_geo(rules::has_plain_rule(&r, "_geo"), shapes);
        if shapes && self.node.reads_shapes() && !self.paths.iter().any(|p| p == "_geojson") {
            self.paths.push("_geojson".to_string());
        }
    }

    /// Refuses `CONTAINS` unless the `containsFilter` experimental feature is on; the error
    /// (code `feature_not_enabled`) points at the first `CONTAINS` keyword.
    pub fn check_contains(&self, enabled: bool) -> Result<(), String> {
        if enabled {
            return Ok(());
        }
        for e in self.leaves() {
            if let Expr::Cond {
                op: Op::Contains(_, keyword),
                ..
            } = e
            {
                return Err(self.error_at(
                    keyword,
                    "Using `CONTAINS` in a filter requires enabling the `contains filter` experimental feature. See https://github.com/orgs/meilisearch/discussions/763",
                ));
            }
        }
        Ok(())
    }

    /// Whether the top-level field `name` can matter to the filter (the others need not be
    /// decoded): it is an attribute of the filter or the head of a dotted one.
    pub fn reads_field(&self, name: &str) -> bool {
        self.paths.iter().any(|path| eval::within(path, name))
    }

    /// Every attribute path the filter reads (`_geo` for the geo rules).
    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    /// Whether value columns can answer the whole filter (see [`bitmap`]).
    pub fn columns_can_answer(&self) -> bool {
        bitmap::supported(&self.node)
    }

    /// The documents of `universe` passing the filter, read from `columns` (one per path).
    pub fn evaluate(
        &self,
        columns: &std::collections::HashMap<String, std::sync::Arc<crate::facets::Column>>,
        universe: &roaring::RoaringBitmap,
    ) -> roaring::RoaringBitmap {
        bitmap::evaluate(&self.node, columns, universe)
    }

    /// The positions of `docs` passing the filter, read document by document and, when
    /// columns can answer it, from columns built over them too; `Err` names a disagreement.
    /// For the tests and the fuzz target: the two paths must never differ.
    #[doc(hidden)]
    pub fn evaluate_both_ways(&self, docs: &[Value]) -> Result<Vec<u32>, String> {
        let by_document: Vec<u32> = docs
            .iter()
            .enumerate()
            .filter(|(_, d)| d.as_object().is_some_and(|o| self.matches(o)))
            .map(|(i, _)| i as u32)
            .collect();
        if self.columns_can_answer() {
            let columns = self
                .paths
                .iter()
                .map(|p| {
                    let mut b = crate::facets::ColumnBuilder::new(p);
                    for (i, d) in docs.iter().enumerate() {
                        if let Some(o) = d.as_object() {
                            b.push(i as u32, o);
                        }
                    }
                    (p.clone(), std::sync::Arc::new(b.finish()))
                })
                .collect();
            let universe: roaring::RoaringBitmap = (0..docs.len() as u32).collect();
            let by_columns: Vec<u32> = self.evaluate(&columns, &universe).iter().collect();
            if by_columns != by_document {
                return Err(format!(
                    "columns {by_columns:?} and documents {by_document:?} disagree"
                ));
            }
        }
        Ok(by_document)
    }

    /// Whether `doc` passes the filter.
    pub fn matches(&self, doc: &Map<String, Value>) -> bool {
        eval::matches(&self.node, doc, None)
    }

    /// [`Filter::matches`] for document `iid` (which resolved `_vectors` conditions read).
    pub fn matches_at(&self, iid: u32, doc: &Map<String, Value>) -> bool {
        eval::matches(&self.node, doc, Some(iid))
    }

    /// `message\nstart:end source` for an error about one token.
    pub fn error_at(&self, token: &Token, message: &str) -> String {
        if self.rendered {
            let mut out = Rendered::default();
            out.expr(&self.expr, token);
            if let Some((start, end)) = out.at {
                return format!(
                    "{message}\n{}",
                    filter_parser::locate(&out.text, start, end)
                );
            }
        }
        let src = &self.sources[token.src];
        format!(
            "{message}\n{}",
            filter_parser::locate(src, token.start, token.end)
        )
    }

    /// Makes errors about attributes and values quote the filter in its written-out form
    /// (`("a" = "1") AND ("x" = "1")`), as Meilisearch's search does.
    pub fn quote_rendered(&mut self) {
        self.rendered = true;
    }
}

/// A filter written out the way Meilisearch's search quotes it in errors: attributes and
/// values in double quotes, each operand of `AND`/`OR` and `NOT`'s in parentheses, negated
/// operators as `NOT (…)`, geo rules with their arguments as sent; `at` is where the token
/// sought was written.
#[derive(Default)]
struct Rendered {
    text: String,
    at: Option<(usize, usize)>,
}

impl Rendered {
    fn token(&mut self, t: &Token, sought: &Token, quoted: bool) {
        if quoted {
            self.text.push('"');
        }
        let start = self.text.len();
        if quoted {
            self.text
                .push_str(&t.value.replace('\\', "\\\\").replace('"', "\\\""));
        } else {
            self.text.push_str(&t.value);
        }
        if self.at.is_none() && t == sought {
            self.at = Some((start, self.text.len()));
        }
        if quoted {
            self.text.push('"');
        }
    }

    fn point(&mut self, p: &[Token; 2], sought: &Token) {
        self.text.push('[');
        self.token(&p[0], sought, false);
        self.text.push_str(", ");
        self.token(&p[1], sought, false);
        self.text.push(']');
    }

    fn expr(&mut self, e: &Expr, sought: &Token) {
        match e {
            Expr::And(items) | Expr::Or(items) => {
                let join = if matches!(e, Expr::And(_)) {
                    " AND "
                } else {
                    " OR "
                };
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.text.push_str(join);
                    }
                    self.text.push('(');
                    self.expr(item, sought);
                    self.text.push(')');
                }
            }
            Expr::Not(inner) => {
                self.text.push_str("NOT (");
                self.expr(inner, sought);
                self.text.push(')');
            }
            Expr::Cond { field, op } => {
                self.token(field, sought, true);
                match op {
                    Op::Eq(v) | Op::Ne(v) | Op::Gt(v) | Op::Ge(v) | Op::Lt(v) | Op::Le(v) => {
                        self.text.push(' ');
                        self.text.push_str(op.name());
                        self.text.push(' ');
                        self.token(v, sought, true);
                    }
                    Op::Between(low, high) => {
                        self.text.push(' ');
                        self.token(low, sought, true);
                        self.text.push_str(" TO ");
                        self.token(high, sought, true);
                    }
                    Op::Exists | Op::Null | Op::Empty => {
                        self.text.push(' ');
                        self.text.push_str(op.name());
                    }
                    Op::Contains(v, _) | Op::StartsWith(v) => {
                        self.text.push(' ');
                        self.text.push_str(op.name());
                        self.text.push(' ');
                        self.token(v, sought, true);
                    }
                }
            }
            Expr::In { field, values } => {
                self.token(field, sought, true);
                self.text.push_str(" IN [");
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        self.text.push_str(", ");
                    }
                    self.token(v, sought, true);
                }
                self.text.push(']');
            }
            Expr::GeoRadius {
                lat,
                lng,
                radius,
                resolution,
            } => {
                self.text.push_str("_geoRadius(");
                for (i, t) in [Some(lat), Some(lng), Some(radius), resolution.as_ref()]
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    if i > 0 {
                        self.text.push_str(", ");
                    }
                    self.token(t, sought, false);
                }
                self.text.push(')');
            }
            Expr::GeoBoundingBox {
                top_right,
                bottom_left,
            } => {
                self.text.push_str("_geoBoundingBox(");
                self.point(top_right, sought);
                self.text.push_str(", ");
                self.point(bottom_left, sought);
                self.text.push(')');
            }
            Expr::Foreign { field, inner } => {
                self.text.push_str("_foreign(");
                self.token(field, sought, true);
                self.text.push_str(", ");
                self.expr(inner, sought);
                self.text.push(')');
            }
            Expr::GeoPolygon { points } => {
                self.text.push_str("_geoPolygon(");
                for (i, p) in points.iter().enumerate() {
                    if i > 0 {
                        self.text.push_str(", ");
                    }
                    self.point(p, sought);
                }
                self.text.push(')');
            }
        }
    }
}

/// Parses a request's filter (string or array form) and applies the `CONTAINS` feature gate:
/// syntax errors carry `code`, `CONTAINS` without the `containsFilter` feature is
/// `feature_not_enabled`. Filterability ([`Filter::validate`]) is the caller's next step.
pub fn parse_request(
    value: &Value,
    code: Code,
    contains_enabled: bool,
    foreign_ids: Option<&[Vec<String>]>,
) -> api_types::Result<Option<Filter>> {
    use api_types::Error;
    let mut filter = Filter::from_json(value).map_err(|m| Error::new(code, m))?;
    if let Some(f) = &mut filter {
        f.code = code;
    }
    if let (Some(f), Some(lists)) = (&mut filter, foreign_ids) {
        f.resolve_foreign(lists).map_err(|m| Error::new(code, m))?;
    }
    if let Some(f) = &filter {
        f.check_contains(contains_enabled)
            .map_err(|m| Error::new(Code::FeatureNotEnabled, m))?;
        // `_foreign` conditions are resolved on their foreign indexes before the engine sees
        // the filter, where a request supports them; elsewhere they are refused.
        if let Some((field, _, _)) = f.foreign().first() {
            return Err(Error::new(
                code,
                f.error_at(
                    field,
                    "Filter condition `_foreign` is not supported for this endpoint.",
                ),
            ));
        }
    }
    Ok(filter)
}

/// The `_foreign` conditions of a request's filter, for the caller to resolve them on their
/// foreign indexes: each one's field and whether it holds another `_foreign`. Syntax errors
/// carry `code`; a `_foreign` without the `foreignKeys` feature (`foreign_enabled`) is
/// `feature_not_enabled`, pointing at its field.
pub fn foreign_conditions(
    value: &Value,
    code: Code,
    foreign_enabled: bool,
) -> api_types::Result<Vec<(String, bool)>> {
    use api_types::Error;
    let Some(f) = Filter::from_json(value).map_err(|m| Error::new(code, m))? else {
        return Ok(Vec::new());
    };
    let found = f.foreign();
    if let (Some((field, _, _)), false) = (found.first(), foreign_enabled) {
        return Err(Error::new(
            Code::FeatureNotEnabled,
            f.error_at(field, "using a foreign filter requires enabling the `foreign_keys` experimental feature. See https://github.com/orgs/meilisearch/discussions/873"),
        ));
    }
    Ok(found
        .into_iter()
        .map(|(field, _, nested)| (field.value.clone(), nested))
        .collect())
}

/// Checks the filter of a deletion by filter or of an edition without an index, when its task
/// is enqueued: `filter_json` is the JSON text of its string or array form. `null` is no filter
/// and one that parses to nothing (blank, `[]`, `[""]`) an empty one, both refused; syntax
/// errors are `invalid_document_filter`, naming `index` when given (an edition's, as Meilisearch
/// reports them); `CONTAINS` without the `containsFilter` feature is `feature_not_enabled`.
/// Filterability is checked when the task runs, against the settings.
pub fn check_document_filter(
    filter_json: &str,
    contains_enabled: bool,
    index: Option<&str>,
) -> api_types::Result<()> {
    use api_types::Error;
    let value: Value = serde_json::from_str(filter_json).map_err(Error::internal)?;
    let code = Code::InvalidDocumentFilter;
    let named = |m: String| match index {
        Some(uid) => Error::new(code, format!("Index `{uid}`: {m}")),
        None => Error::new(code, m),
    };
    if value.is_null() {
        return Err(named(bad_shape(&["String", "Array"], &value)));
    }
    if Filter::from_json(&value).map_err(named)?.is_none() {
        return Err(Error::new(code, "Sending an empty filter is forbidden."));
    }
    // The checks every request's filter gets: `CONTAINS`, and a `_foreign` refused here.
    let filter = parse_request(&value, code, contains_enabled, None)?;
    // Deletions and editions evaluate their filter inside their batch, where the vector
    // graphs are being written: `_vectors` conditions are not read there.
    if let Some(c) = filter
        .as_ref()
        .and_then(|f| f.vector_conditions().into_iter().next())
    {
        let f = filter.as_ref().expect("a condition came from it");
        return Err(named(f.error_at(
            &c.field,
            "Filter condition `_vectors` is not supported for this endpoint.",
        )));
    }
    Ok(())
}

/// Checks a search's filter without an index, as Meilisearch parses it before it looks the
/// index up: the same checks as [`check_document_filter`], with `invalid_search_filter`.
pub fn check_search_filter(filter_json: &str, contains_enabled: bool) -> api_types::Result<()> {
    let value: Value = serde_json::from_str(filter_json).map_err(api_types::Error::internal)?;
    parse_request(&value, Code::InvalidSearchFilter, contains_enabled, None).map(drop)
}

fn paths_of(expr: &Expr) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        let path = match e {
            Expr::And(v) | Expr::Or(v) => {
                stack.extend(v.iter());
                continue;
            }
            Expr::Not(inner) => {
                stack.push(inner);
                continue;
            }
            Expr::Cond { field, op } if vectors::is_vector_condition(&field.value, op) => {
                continue;
            }
            Expr::Cond { field, .. } | Expr::In { field, .. } | Expr::Foreign { field, .. } => {
                field.value.as_str()
            }
            Expr::GeoRadius { .. } | Expr::GeoBoundingBox { .. } => "_geo",
            Expr::GeoPolygon { .. } => "_geojson",
        };
        if seen.insert(path) {
            out.push(path.to_string());
        }
    }
    out
}

/// Bytes a filter may hold, its strings summed (Meilisearch has no bound: a 100,000-value
/// `IN` list takes it minutes). A megabyte still holds `IN` lists of tens of thousands of ids.
pub const MAX_FILTER_BYTES: usize = 1 << 20;

fn check_length(value: &Value) -> Result<(), String> {
    fn bytes(v: &Value) -> usize {
        match v {
            Value::String(s) => s.len(),
            Value::Array(items) => items.iter().map(bytes).sum(),
            _ => 0,
        }
    }
    let n = bytes(value);
    if n > MAX_FILTER_BYTES {
        return Err(format!(
            "The filter is {n} bytes long; a filter may hold at most {MAX_FILTER_BYTES} bytes."
        ));
    }
    Ok(())
}

fn parse_one(s: &str, sources: &mut Vec<String>) -> Result<Option<Expr>, String> {
    let e = filter_parser::parse(s, sources.len())?;
    if e.is_some() {
        sources.push(s.to_string());
    }
    Ok(e)
}

fn combine(mut items: Vec<Expr>, wrap: fn(Vec<Expr>) -> Expr) -> Option<Expr> {
    match items.len() {
        0 => None,
        1 => items.pop(),
        _ => Some(wrap(items)),
    }
}

fn bad_shape(expected: &[&str], found: &Value) -> String {
    format!(
        "Invalid syntax for the filter parameter: `expected {}, found: {}`.",
        expected.join(", "),
        found
    )
}

#[cfg(test)]
mod tests;
