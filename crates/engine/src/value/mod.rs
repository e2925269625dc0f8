//! Values: the one normalization and the one order every part of the engine uses for the
//! scalars documents hold. Filters, facet distribution and facet search, the `sort` search
//! parameter (read from value columns) and the sort of `/documents` (read from documents)
//! all come here, so they cannot disagree.
//!
//! The rules are Meilisearch's (milli's facet values), checked against a running Meilisearch:
//! - A string is compared in its normal form ([`normalize`]): trimmed of Unicode white space,
//!   compatibility decomposed (NFKD, so `ﬁ` is `fi` and `①` is `1`) and lowercased. Accents
//!   stay (as combining marks, so `élan` sorts right after `elan`); `ß` is not `ss`.
//!   Booleans are the strings `"true"` and `"false"`.
//! - For one sort key, documents fall in three groups whatever the direction ([`Key`],
//!   [`compare`]): numbers first (by value), then strings (by the bytes of their normal
//!   form), then documents without a usable value (missing, `null`, objects). A document with
//!   several values (arrays) sorts at its best one, the first in that order; equal keys fall
//!   through to the next key and finally to the internal id.
//! - A dotted path `a.b` reaches `{"a.b":..}`, `{"a":{"b":..}}` and objects inside arrays
//!   ([`path`]).
//!
//! This module is a leaf: it imports nothing else of the engine, and everything that reads
//! values imports it.

pub mod geo;
mod normalize;
mod order;
pub mod path;

pub use normalize::{normalize, search_form};
pub use order::{best, compare, Key};
pub use path::{each_scalar, values_at, within, Scalar};
