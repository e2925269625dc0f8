//! The filter grammar, parsed by hand with Meilisearch's diagnostics.
//!
//! ```text
//! filter     = expression EOF
//! expression = or
//! or         = and ("OR" and)*
//! and        = not ("AND" not)*
//! not        = "NOT" not | primary
//! primary    = "(" expression ")" | geo | value "IN" list | value "NOT" "IN" list
//!            | value ("=" | "!=" | ">" | ">=" | "<" | "<=") value
//!            | value "IS" ["NOT"] ("NULL" | "EMPTY") | value ["NOT"] "EXISTS"
//!            | value value "TO" value | value ["NOT"] ("CONTAINS" | "STARTS WITH") value
//! geo        = "_geoRadius(" float "," float "," float ["," float] ")"
//!            | "_geoBoundingBox([" float "," float "],[" float "," float "])"
//!            | "_geoPolygon(" "[" float "," float "]" ("," "[" float "," float "]")+ [","] ")"
//! list       = "[" [value ("," value)* [","]] "]"
//! value      = 'single quoted' | "double quoted" | word    (word: alphanumerics, `_`, `-`, `.`)
//! ```
//!
//! Keywords are uppercase only and must be quoted to be used as values. Each rule either fails
//! *softly* (the next alternative is tried) or *hard* (the whole parse stops with that error):
//! once a rule has seen its keyword (`IN`, an operator, `(`, `_geoRadius`...) its errors are
//! hard. This reproduces the positions Meilisearch reports (`start:end filter` on the second
//! line of the message, 1-based character columns). Recursion is bounded by [`MAX_DEPTH`],
//! counted as Meilisearch counts it, so deep nesting is an error and never a stack overflow.

use crate::{Expr, Op, Token};

/// Nesting bound of the parser (each parenthesis costs four levels, each `NOT` one).
pub const MAX_DEPTH: usize = 150;

#[derive(Debug, Clone)]
enum Kind {
    ExpectedValue { keyword: bool },
    MalformedValue,
    MissingClosingDelimiter(char),
    InvalidPrimary,
    ExpectedEof,
    Incomplete,
    GeoRadius,
    GeoRadiusArgumentCount(usize),
    GeoBoundingBox,
    GeoPolygon,
    GeoPolygonNotEnoughPoints(usize),
    GeoCoordinatesNotPair(usize),
    ReservedGeo(&'static str),
    MisusedGeoRadius,
    MisusedGeoBoundingBox,
    InOpeningBracket,
    InClosingBracket,
    InExpectedValue,
    DepthLimitReached,
    Foreign,
}

#[derive(Debug, Clone)]
struct PErr {
    hard: bool,
    kind: Kind,
    start: usize,
    end: usize,
}

type PResult<T> = std::result::Result<(T, usize), PErr>;

/// `start:end source`, with 1-based character columns.
pub fn locate(src: &str, start: usize, end: usize) -> String {
    let col = src[..start].chars().count() + 1;
    let width = src[start..end].chars().count();
    format!("{}:{} {}", col, col + width, src)
}

const OPERATIONS: &str = "`=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, `NOT EXISTS`, `IS NULL`, `IS NOT NULL`, `IS EMPTY`, `IS NOT EMPTY`, `CONTAINS`, `NOT CONTAINS`, `STARTS WITH`, `NOT STARTS WITH`, `_geoRadius`, `_geoBoundingBox` or `_geoPolygon`";

const RESERVED_GEO_HINT: &str = "Use the `_geoRadius(latitude, longitude, distance)` or `_geoBoundingBox([latitude, longitude], [latitude, longitude])` built-in rules to filter on `_geo` coordinates.";

fn describe(kind: &Kind, fragment: &str) -> String {
    let f = fragment.escape_debug().to_string();
    match kind {
        Kind::ExpectedValue { .. } if fragment.trim().is_empty() => {
            "Was expecting a value but instead got nothing.".into()
        }
        Kind::ExpectedValue { keyword: true } => format!(
            "Was expecting a value but instead got `{f}`, which is a reserved keyword. To use `{f}` as a field name or a value, surround it by quotes."
        ),
        Kind::ExpectedValue { keyword: false } => {
            format!("Was expecting a value but instead got `{f}`.")
        }
        Kind::MalformedValue => format!("Malformed value: `{f}`."),
        Kind::MissingClosingDelimiter(c) => format!(
            "Expression `{f}` is missing the following closing delimiter: `{c}`."
        ),
        Kind::InvalidPrimary if fragment.trim().is_empty() => {
            format!("Was expecting an operation {OPERATIONS} but instead got nothing.")
        }
        Kind::InvalidPrimary => format!("Was expecting an operation {OPERATIONS} at `{f}`."),
        Kind::ExpectedEof => format!(
            "Found unexpected characters at the end of the filter: `{f}`. You probably forgot an `OR` or an `AND` rule."
        ),
        Kind::Incomplete => {
            "The filter is incomplete and requires Unknown additional bytes to be parsed.".into()
        }
        Kind::GeoRadius => "The `_geoRadius` filter must be in the form: `_geoRadius(latitude, longitude, radius, optionalResolution)`.".into(),
        Kind::GeoRadiusArgumentCount(n) => {
            format!("Was expecting 3 or 4 arguments for `_geoRadius`, but instead found {n}.")
        }
        Kind::GeoBoundingBox => "The `_geoBoundingBox` filter expects two pairs of arguments: `_geoBoundingBox([latitude, longitude], [latitude, longitude])`.".into(),
        Kind::GeoPolygon => "The `_geoPolygon` filter doesn't match the expected format: `_geoPolygon([latitude, longitude], [latitude, longitude])`.".into(),
        Kind::GeoPolygonNotEnoughPoints(n) => format!(
            "The `_geoPolygon` filter expects at least 3 points but only {n} were specified"
        ),
        Kind::GeoCoordinatesNotPair(n) => {
            format!("Was expecting 2 coordinates but instead found {n}.")
        }
        Kind::ReservedGeo(name) => format!(
            "`{name}` is a reserved keyword and thus can't be used as a filter expression. {RESERVED_GEO_HINT}"
        ),
        Kind::MisusedGeoRadius => {
            "The `_geoRadius` filter is an operation and can't be used as a value.".into()
        }
        Kind::MisusedGeoBoundingBox => {
            "The `_geoBoundingBox` filter is an operation and can't be used as a value.".into()
        }
        Kind::InOpeningBracket => "Expected `[` after `IN` keyword.".into(),
        Kind::InClosingBracket => {
            "Expected matching `]` after the list of field names given to `IN[`".into()
        }
        Kind::InExpectedValue => format!(
            "Expected only comma-separated field names inside `IN[..]` but instead found `{f}`."
        ),
        Kind::Foreign => format!(
            "Was expecting a field name and an condition inside `_foreign(..)` filter but instead found `{f}`."
        ),
        Kind::DepthLimitReached => "The filter exceeded the maximum depth limit. Try rewriting the filter so that it contains fewer nested conditions.".into(),
    }
}

/// Parses one filter string; `None` when it is blank. `src_id` tags the tokens so that later
/// errors can point into the right string of an array filter.
pub fn parse(src: &str, src_id: usize) -> Result<Option<Expr>, String> {
    if src.trim().is_empty() {
        return Ok(None);
    }
    let p = Parser { s: src, src_id };
    let result = p.or(0, 0).and_then(|(expr, pos)| {
        // Trailing blanks after a geo rule are tolerated (Meilisearch rejects them).
        let pos = p.skip_ws(pos);
        if pos < src.len() {
            Err(p.err(false, Kind::ExpectedEof, pos, src.len()))
        } else {
            Ok(expr)
        }
    });
    result.map(Some).map_err(|e| {
        format!(
            "{}\n{}",
            describe(&e.kind, &src[e.start..e.end]),
            locate(src, e.start, e.end)
        )
    })
}

fn is_value_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.')
}

fn is_syntax_char(c: char) -> bool {
    c.is_whitespace() || matches!(c, '(' | ')' | '=' | '<' | '>' | '!')
}

fn is_keyword(w: &str) -> bool {
    matches!(
        w,
        "AND"
            | "OR"
            | "IN"
            | "NOT"
            | "TO"
            | "EXISTS"
            | "IS"
            | "NULL"
            | "EMPTY"
            | "CONTAINS"
            | "STARTS"
            | "WITH"
            | "_geoRadius"
            | "_geoBoundingBox"
    )
}

struct Parser<'a> {
    s: &'a str,
    src_id: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, hard: bool, kind: Kind, start: usize, end: usize) -> PErr {
        PErr {
            hard,
            kind,
            start,
            end,
        }
    }

    /// An error whose context runs from `start` to the end of the input (nom's habit).
    fn err_rest(&self, hard: bool, kind: Kind, start: usize) -> PErr {
        self.err(hard, kind, start, self.s.len())
    }

    fn skip_ws(&self, pos: usize) -> usize {
        let rest = &self.s[pos..];
        pos + (rest.len() - rest.trim_start().len())
    }

    fn word(&self, pos: usize) -> &'a str {
        let rest = &self.s[pos..];
        let n = rest
            .char_indices()
            .find(|(_, c)| !is_value_char(*c))
            .map_or(rest.len(), |(i, _)| i);
        &rest[..n]
    }

    /// `pos` after the exact word `w` (surrounding blanks skipped), if it is there.
    fn keyword(&self, pos: usize, w: &str) -> Option<usize> {
        let p = self.skip_ws(pos);
        (self.word(p) == w).then(|| self.skip_ws(p + w.len()))
    }

    /// `pos` after the literal `t` (a prefix match, no blanks skipped).
    fn tag(&self, pos: usize, t: &str) -> Option<usize> {
        self.s[pos..].starts_with(t).then_some(pos + t.len())
    }

    /// `a WS+ b WS+ c...`: the words of a multi-word operator as literal tags.
    fn tags(&self, pos: usize, parts: &[&str]) -> Option<usize> {
        let mut p = pos;
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                let q = self.skip_ws(p);
                if q == p {
                    return None;
                }
                p = q;
            }
            p = self.tag(p, part)?;
        }
        Some(p)
    }

    fn token(&self, value: String, start: usize, end: usize) -> Token {
        Token {
            value,
            src: self.src_id,
            start,
            end,
        }
    }

    /// `_foreign(field, expression)` (the `foreignKeys` feature), from after its name: once the
    /// name is read, any failure is hard, reported from where it happened to the input's end.
    fn foreign(&self, pos: usize, depth: usize) -> PResult<Expr> {
        let fail = |at: usize| self.err_rest(true, Kind::Foreign, at);
        let Some(p) = self.tag(pos, "(") else {
            return Err(fail(pos));
        };
        let (field, q) = self.value(p).map_err(|e| fail(e.start))?;
        let q = self.skip_ws(q);
        let Some(q) = self.tag(q, ",") else {
            return Err(fail(q));
        };
        let (inner, r) = self.or(q, depth).map_err(|e| fail(e.start))?;
        let r = self.skip_ws(r);
        let Some(r) = self.tag(r, ")") else {
            return Err(fail(r));
        };
        let inner = Box::new(inner);
        Ok((Expr::Foreign { field, inner }, self.skip_ws(r)))
    }

    fn or(&self, pos: usize, depth: usize) -> PResult<Expr> {
        if depth > MAX_DEPTH {
            return Err(self.err_rest(false, Kind::DepthLimitReached, pos));
        }
        let (first, mut pos) = self.and(pos, depth + 1)?;
        let mut items = vec![first];
        while let Some(p) = self.keyword(pos, "OR") {
            let (e, p) = self.and(p, depth + 1).map_err(cut)?;
            items.push(e);
            pos = p;
        }
        Ok((flatten(items, true), pos))
    }

    fn and(&self, pos: usize, depth: usize) -> PResult<Expr> {
        if depth > MAX_DEPTH {
            return Err(self.err_rest(false, Kind::DepthLimitReached, pos));
        }
        let (first, mut pos) = self.not(pos, depth + 1)?;
        let mut items = vec![first];
        while let Some(p) = self.keyword(pos, "AND") {
            let (e, p) = self.not(p, depth + 1).map_err(cut)?;
            items.push(e);
            pos = p;
        }
        Ok((flatten(items, false), pos))
    }

    fn not(&self, pos: usize, depth: usize) -> PResult<Expr> {
        if depth > MAX_DEPTH {
            return Err(self.err_rest(false, Kind::DepthLimitReached, pos));
        }
        if let Some(p) = self.keyword(pos, "NOT") {
            let (e, p) = self.not(p, depth + 1).map_err(cut)?;
            let e = match e {
                Expr::Not(inner) => *inner,
                other => Expr::Not(Box::new(other)),
            };
            return Ok((e, p));
        }
        self.primary(pos, depth + 1)
    }

    fn primary(&self, pos: usize, depth: usize) -> PResult<Expr> {
        if depth > MAX_DEPTH {
            return Err(self.err_rest(false, Kind::DepthLimitReached, pos));
        }
        let p = self.skip_ws(pos);
        if self.s[p..].starts_with('(') {
            let (e, q) = self.or(p + 1, depth + 1).map_err(cut)?;
            let q = self.skip_ws(q);
            if !self.s[q..].starts_with(')') {
                return Err(self.err_rest(true, Kind::MissingClosingDelimiter(')'), pos));
            }
            return Ok((e, self.skip_ws(q + 1)));
        }
        match self.word(p) {
            "_geoRadius" => return self.geo_radius(p + "_geoRadius".len()),
            "_geoBoundingBox" => return self.geo_bounding_box(p + "_geoBoundingBox".len()),
            "_geoPolygon" => return self.geo_polygon(p + "_geoPolygon".len()),
            "_foreign" => return self.foreign(p + "_foreign".len(), depth),
            _ => {}
        }
        let (field, q) = match self.value(pos) {
            Ok(v) => v,
            Err(e) if e.hard => return Err(e),
            Err(e) => {
                // A reserved keyword where a field was expected gets its own message.
                if matches!(e.kind, Kind::ExpectedValue { keyword: true }) {
                    return Err(PErr { hard: true, ..e });
                }
                return Err(self.err_rest(false, Kind::InvalidPrimary, pos));
            }
        };
        if let Some(r) = self.keyword(q, "IN") {
            let (values, r) = self.in_list(r)?;
            return Ok((Expr::In { field, values }, r));
        }
        if self.word(q) == "NOT" {
            if let Some(r) = self.keyword(q + 3, "IN") {
                let (values, r) = self.in_list(r)?;
                return Ok((Expr::Not(Box::new(Expr::In { field, values })), r));
            }
        }
        for (op, len) in [
            ("<=", 2),
            (">=", 2),
            ("!=", 2),
            ("<", 1),
            (">", 1),
            ("=", 1),
        ] {
            if self.s[q..].starts_with(op) {
                let (v, r) = self.value(q + len).map_err(cut)?;
                let op = match op {
                    "<=" => Op::Le(v),
                    ">=" => Op::Ge(v),
                    "!=" => Op::Ne(v),
                    "<" => Op::Lt(v),
                    ">" => Op::Gt(v),
                    _ => Op::Eq(v),
                };
                return Ok((Expr::Cond { field, op }, r));
            }
        }
        let simple: [(&[&str], Op, bool); 6] = [
            (&["IS", "NULL"], Op::Null, false),
            (&["IS", "NOT", "NULL"], Op::Null, true),
            (&["IS", "EMPTY"], Op::Empty, false),
            (&["IS", "NOT", "EMPTY"], Op::Empty, true),
            (&["EXISTS"], Op::Exists, false),
            (&["NOT", "EXISTS"], Op::Exists, true),
        ];
        for (parts, op, negated) in simple {
            if let Some(r) = self.tags(q, parts) {
                return Ok((cond(field, op, negated), r));
            }
        }
        // `field from TO to`
        match self.value(q) {
            Ok((from, r)) => {
                let after_to = self.tag(r, "TO").filter(|&t| self.skip_ws(t) > t);
                if let Some(t) = after_to {
                    let (to, r) = self.value(t).map_err(cut)?;
                    let op = Op::Between(from, to);
                    return Ok((Expr::Cond { field, op }, r));
                }
            }
            Err(e) if e.hard => return Err(e),
            Err(_) => {}
        }
        let with_value: [(&[&str], bool, bool); 4] = [
            (&["CONTAINS"], false, false),
            (&["NOT", "CONTAINS"], false, true),
            (&["STARTS WITH"], true, false),
            (&["NOT", "STARTS WITH"], true, true),
        ];
        for (parts, starts, negated) in with_value {
            if let Some(r) = self.tags(q, parts) {
                let keyword = self.token("CONTAINS".into(), r - "CONTAINS".len(), r);
                let (v, r) = self.value(r).map_err(cut)?;
                let op = if starts {
                    Op::StartsWith(v)
                } else {
                    Op::Contains(v, keyword)
                };
                return Ok((cond(field, op, negated), r));
            }
        }
        Err(self.err_rest(false, Kind::InvalidPrimary, pos))
    }

    /// After `IN`: `[ values ]`; every error is hard.
    fn in_list(&self, pos: usize) -> PResult<Vec<Token>> {
        if !self.s[pos..].starts_with('[') {
            return Err(self.err_rest(true, Kind::InOpeningBracket, pos));
        }
        let mut values = Vec::new();
        let mut p = pos + 1;
        match self.value(p) {
            Ok((v, q)) => {
                values.push(v);
                p = q;
                while let Some(c) = self.tag(self.skip_ws(p), ",") {
                    match self.value(self.skip_ws(c)) {
                        Ok((v, q)) => {
                            values.push(v);
                            p = q;
                        }
                        Err(e) if e.hard => return Err(e),
                        Err(_) => break,
                    }
                }
                if let Some(c) = self.tag(self.skip_ws(p), ",") {
                    p = self.skip_ws(c);
                }
            }
            Err(e) if e.hard => return Err(e),
            Err(_) => {}
        }
        let close = self.skip_ws(p);
        if self.s[close..].starts_with(']') {
            return Ok((values, self.skip_ws(close + 1)));
        }
        if p == self.s.len() {
            Err(self.err_rest(true, Kind::InClosingBracket, p))
        } else {
            Err(self.err_rest(true, Kind::InExpectedValue, p))
        }
    }

    /// A value: optional leading blanks, a quoted string or a word, trailing blanks.
    fn value(&self, pos: usize) -> PResult<Token> {
        let p = self.skip_ws(pos);
        let rest = &self.s[p..];
        for name in ["_geoPoint", "_geoDistance"] {
            if rest.starts_with(name) {
                return Err(self.err_rest(true, Kind::ReservedGeo(name), p));
            }
        }
        match self.word(p) {
            "_geo" => return Err(self.err_rest(true, Kind::ReservedGeo("_geo"), p)),
            "_geoRadius" => return Err(self.err_rest(true, Kind::MisusedGeoRadius, p)),
            "_geoBoundingBox" => return Err(self.err_rest(true, Kind::MisusedGeoBoundingBox, p)),
            _ => {}
        }
        let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"');
        if let Some(q) = quote {
            let body = p + 1;
            let mut chars = self.s[body..].char_indices();
            let mut close = None;
            while let Some((i, c)) = chars.next() {
                if c == q {
                    close = Some(body + i);
                    break;
                }
                if c == '\\' && chars.next().is_none() {
                    return Err(self.err_rest(true, Kind::MalformedValue, body));
                }
            }
            let Some(close) = close else {
                return Err(self.err_rest(true, Kind::MissingClosingDelimiter(q), p));
            };
            let raw = &self.s[body..close];
            let value = match unescape(raw) {
                Ok(v) => v,
                Err(true) => return Err(self.err(true, Kind::Incomplete, 0, self.s.len())),
                Err(false) => return Err(self.err(false, Kind::MalformedValue, body, close)),
            };
            let tok = self.token(value, body, close);
            return Ok((tok, self.skip_ws(close + 1)));
        }
        let w = self.word(p);
        if w.is_empty() || is_keyword(w) {
            let n = rest.find(is_syntax_char).unwrap_or(rest.len());
            let kind = Kind::ExpectedValue {
                keyword: !w.is_empty(),
            };
            return Err(self.err(false, kind, p, p + n));
        }
        let tok = self.token(w.to_string(), p, p + w.len());
        Ok((tok, self.skip_ws(p + w.len())))
    }

    /// A float as nom's `recognize_float` sees it, surrounded by optional blanks.
    fn float(&self, pos: usize) -> Option<(Token, usize)> {
        let p = self.skip_ws(pos);
        let b = self.s.as_bytes();
        let mut i = p;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let digits = |mut i: usize| {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            i
        };
        let int_end = digits(i);
        let mut end = int_end;
        if end < b.len() && b[end] == b'.' {
            end = digits(end + 1);
        }
        if end == i || (int_end == i && end == i + 1) {
            return None;
        }
        if end < b.len() && (b[end] == b'e' || b[end] == b'E') {
            let mut e = end + 1;
            if e < b.len() && (b[e] == b'+' || b[e] == b'-') {
                e += 1;
            }
            let de = digits(e);
            if de > e {
                end = de;
            }
        }
        let tok = self.token(self.s[p..end].to_string(), p, end);
        Some((tok, self.skip_ws(end)))
    }

    /// `float ("," float)*`; on failure, the position where it failed.
    fn floats(&self, pos: usize) -> Result<(Vec<Token>, usize), usize> {
        let Some((first, mut p)) = self.float(pos) else {
            return Err(self.skip_ws(pos));
        };
        let mut out = vec![first];
        while let Some(c) = self.tag(p, ",") {
            match self.float(c) {
                Some((t, q)) => {
                    out.push(t);
                    p = q;
                }
                None => break,
            }
        }
        Ok((out, p))
    }

    /// `[floats] ("," [floats])*`, each pair surrounded by optional blanks.
    fn pairs(&self, pos: usize) -> Result<(Vec<Vec<Token>>, usize), usize> {
        let one = |pos: usize| -> Result<(Vec<Token>, usize), usize> {
            let p = self.skip_ws(pos);
            let p = self.tag(p, "[").ok_or(p)?;
            let (v, q) = self.floats(p)?;
            let q = self.tag(q, "]").ok_or(q)?;
            Ok((v, self.skip_ws(q)))
        };
        let (first, mut p) = one(pos)?;
        let mut out = vec![first];
        while let Some(c) = self.tag(p, ",") {
            match one(c) {
                Ok((v, q)) => {
                    out.push(v);
                    p = q;
                }
                Err(_) => break,
            }
        }
        Ok((out, p))
    }

    fn geo_radius(&self, pos: usize) -> PResult<Expr> {
        let hard = |at: usize| self.err_rest(true, Kind::GeoRadius, at);
        let p = self.tag(pos, "(").ok_or_else(|| hard(pos))?;
        let (args, q) = self.floats(p).map_err(hard)?;
        let q = self.tag(q, ")").ok_or_else(|| hard(q))?;
        if !(3..=4).contains(&args.len()) {
            return Err(self.err_rest(true, Kind::GeoRadiusArgumentCount(args.len()), q));
        }
        let mut args = args.into_iter();
        let (lat, lng, radius) = (
            args.next().unwrap(),
            args.next().unwrap(),
            args.next().unwrap(),
        );
        let resolution = args.next();
        let e = Expr::GeoRadius {
            lat,
            lng,
            radius,
            resolution,
        };
        Ok((e, q))
    }

    fn geo_bounding_box(&self, pos: usize) -> PResult<Expr> {
        let hard = |at: usize| self.err_rest(true, Kind::GeoBoundingBox, at);
        let p = self.tag(pos, "(").ok_or_else(|| hard(pos))?;
        let (args, q) = self.pairs(p).map_err(hard)?;
        let q = self.tag(q, ")").ok_or_else(|| hard(q))?;
        if args.len() != 2 {
            return Err(hard(q));
        }
        self.check_pairs(&args)?;
        let mut it = args.into_iter().map(pair);
        let e = Expr::GeoBoundingBox {
            top_right: it.next().unwrap(),
            bottom_left: it.next().unwrap(),
        };
        Ok((e, q))
    }

    fn geo_polygon(&self, pos: usize) -> PResult<Expr> {
        let hard = |at: usize| self.err_rest(true, Kind::GeoPolygon, at);
        let p = self.tag(pos, "(").ok_or_else(|| hard(pos))?;
        let (args, mut q) = self.pairs(p).map_err(hard)?;
        if let Some(c) = self.tag(self.skip_ws(q), ",") {
            q = self.skip_ws(c);
        }
        let q = self.tag(q, ")").ok_or_else(|| hard(q))?;
        if args.len() < 3 {
            let (s, e) = args
                .last()
                .and_then(|a| a.last())
                .map_or((q, self.s.len()), |t| (t.start, t.end));
            return Err(self.err(true, Kind::GeoPolygonNotEnoughPoints(args.len()), s, e));
        }
        self.check_pairs(&args)?;
        let points = args.into_iter().map(pair).collect();
        Ok((Expr::GeoPolygon { points }, q))
    }

    fn check_pairs(&self, args: &[Vec<Token>]) -> Result<(), PErr> {
        match args.iter().find(|a| a.len() != 2) {
            Some(bad) => {
                let t = &bad[0];
                let kind = Kind::GeoCoordinatesNotPair(bad.len());
                Err(self.err(true, kind, t.start, t.end))
            }
            None => Ok(()),
        }
    }
}

fn pair(v: Vec<Token>) -> [Token; 2] {
    let mut it = v.into_iter();
    [it.next().unwrap(), it.next().unwrap()]
}

fn cond(field: Token, op: Op, negated: bool) -> Expr {
    let e = Expr::Cond { field, op };
    if negated {
        Expr::Not(Box::new(e))
    } else {
        e
    }
}

fn flatten(mut items: Vec<Expr>, or: bool) -> Expr {
    if items.len() == 1 {
        items.pop().unwrap()
    } else if or {
        Expr::Or(items)
    } else {
        Expr::And(items)
    }
}

/// Soft errors become hard: the rule saw its keyword, so no other alternative applies.
fn cut(e: PErr) -> PErr {
    PErr { hard: true, ..e }
}

/// Backslash escapes of a quoted value. `Err(true)`: the escape is cut short; `Err(false)`:
/// an unknown escape.
fn unescape(raw: &str) -> Result<String, bool> {
    if !raw.contains('\\') {
        return Ok(raw.to_string());
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            return Err(true);
        };
        match e {
            '\\' | '\'' | '"' | '/' => out.push(e),
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0' => out.push('\0'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'x' | 'u' => {
                let braced = e == 'u' && chars.peek() == Some(&'{');
                if braced {
                    chars.next();
                }
                let want = if e == 'x' { 2 } else { 4 };
                let mut hex = String::new();
                while let Some(&h) = chars.peek() {
                    if braced && h == '}' {
                        chars.next();
                        break;
                    }
                    if !h.is_ascii_hexdigit() || (!braced && hex.len() == want) {
                        break;
                    }
                    hex.push(h);
                    chars.next();
                }
                if hex.is_empty() || (!braced && hex.len() < want) {
                    return Err(true);
                }
                let code = u32::from_str_radix(&hex, 16).map_err(|_| false)?;
                out.push(char::from_u32(code).ok_or(false)?);
            }
            _ => return Err(false),
        }
    }
    Ok(out)
}
