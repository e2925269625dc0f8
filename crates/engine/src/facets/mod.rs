//! Value columns: for one attribute, the scalars every document holds there, built in one
//! pass over the stored documents and cached per index generation. Facet distribution and
//! stats, facet search, the `sort` parameter, distinct and filters read these instead of
//! decoding documents.
//!
//! Numbers are kept as `f64`; strings (and booleans, as `"true"`/`"false"`) by an id into
//! the column's string table, which holds each normalized form ([`crate::value::normalize`])
//! once with the spelling of the first document (lowest internal id) that has it, and the
//! rank of the normalized form in byte order, so that sorting compares integers and agrees
//! with [`crate::value::compare`] on the normal forms themselves.
//!
//! - [`column`]: building a column, a document's values and sort key.
//! - [`index`]: the inverted view ([`ValueIndex`]), the numbers as dense ids ([`NumberIds`])
//!   and the single-key sorted page.
//! - [`distribution`]: facet counts, stats and facet search.

pub mod column;
pub mod distribution;
pub mod index;

pub use column::{Column, ColumnBuilder, Item, StrEntry};
pub use distribution::{count, number_key, prefix_distance, Counts, FacetOrder};
pub use index::{documents_of, sorted_page, DenseSet, NumberIds, ValueIndex};

pub use crate::value::compare as compare_keys;
pub use crate::value::{normalize, search_form};

/// A document's value for one sort criterion, read from a column: strings by their rank.
pub type SortKey = crate::value::Key<u32>;
