//! The filter language of Quarry (Meilisearch's `filter` parameter, string form): its syntax
//! tree ([`Expr`], [`Op`], [`Token`]) and the parser ([`parse`]) that turns one filter string
//! into it with Meilisearch's error messages and positions ([`locate`]).
//!
//! A leaf of the engine, as Meilisearch keeps its `filter-parser` crate: it depends on nothing
//! (std only) and knows nothing of indexes or settings. The engine's `filter` module adds the
//! array form, validation against `filterableAttributes` and evaluation.

mod parser;

pub use parser::{locate, parse, MAX_DEPTH};

/// A value of the filter: its unescaped text and where it sits in its source string.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// The value, quotes removed and escapes resolved.
    pub value: String,
    /// Which string of the filter (array filters have several) holds it.
    pub src: usize,
    /// Byte range in that string.
    pub start: usize,
    pub end: usize,
}

/// The operation of a condition on one attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Eq(Token),
    Ne(Token),
    Gt(Token),
    Ge(Token),
    Lt(Token),
    Le(Token),
    Between(Token, Token),
    Exists,
    Null,
    Empty,
    /// The value, then the `CONTAINS` keyword (for the feature-gate error's position).
    Contains(Token, Token),
    StartsWith(Token),
}

impl Op {
    /// The operator as Meilisearch names it in errors.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Eq(_) => "=",
            Op::Ne(_) => "!=",
            Op::Gt(_) => ">",
            Op::Ge(_) => ">=",
            Op::Lt(_) => "<",
            Op::Le(_) => "<=",
            Op::Between(..) => "TO",
            Op::Exists => "EXISTS",
            Op::Null => "IS NULL",
            Op::Empty => "IS EMPTY",
            Op::Contains(..) => "CONTAINS",
            Op::StartsWith(_) => "STARTS WITH",
        }
    }
}

/// A parsed filter expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
    Cond {
        field: Token,
        op: Op,
    },
    In {
        field: Token,
        values: Vec<Token>,
    },
    GeoRadius {
        lat: Token,
        lng: Token,
        radius: Token,
        resolution: Option<Token>,
    },
    GeoBoundingBox {
        top_right: [Token; 2],
        bottom_left: [Token; 2],
    },
    GeoPolygon {
        points: Vec<[Token; 2]>,
    },
    /// `_foreign(field, inner)`: the documents whose `field` holds the id of a document of the
    /// index the `foreignKeys` setting links it to, one that `inner` selects there.
    Foreign {
        field: Token,
        inner: Box<Expr>,
    },
}

#[cfg(test)]
mod tests;
