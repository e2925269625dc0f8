//! The distinct step: of the documents sharing a value of the distinct attribute, only the
//! first in the search's order stays. The attribute is the request's `distinct` (it must be
//! filterable) or else the index's `distinctAttribute`; its values come from the value columns.

use std::collections::HashSet;

use api_types::{Code, Error, Result};

use super::Ranked;
use crate::facets::{Column, Item};
use crate::filter::rules;
use crate::settings::Settings;

/// The attribute a search is distinct on: the request's `distinct` when given (checked
/// against the filterable attributes), else the index's `distinctAttribute`.
pub(super) fn distinct_field(
    asked: Option<&str>,
    settings: &Settings,
    filter_rules: &[rules::Rule],
) -> Result<Option<String>> {
    match asked {
        Some(field) => {
            if let Some(m) = rules::distinct_error(filter_rules, field) {
                return Err(Error::new(Code::InvalidSearchDistinct, m));
            }
            Ok(Some(field.to_string()))
        }
        None => Ok(settings.distinct_attribute().map(str::to_string)),
    }
}

/// `ranked` without the documents an earlier one shares a value of `column` with.
pub(super) fn distinct_ranked(column: &Column, ranked: Vec<Ranked>) -> Vec<Ranked> {
    let mut slots: Vec<Option<Ranked>> = ranked.into_iter().map(Some).collect();
    let order = apply_distinct(column, (0..slots.len()).collect(), |i| {
        slots[i].as_ref().map_or(0, |r| r.iid)
    });
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// Keeps, in `order`, the first document of each distinct value: a kept document removes
/// every later one sharing any of its values; documents without a value are all kept.
pub(super) fn apply_distinct<T: Copy>(
    column: &Column,
    order: Vec<T>,
    iid_of: impl Fn(T) -> u32,
) -> Vec<T> {
    let mut seen_numbers: HashSet<u64> = HashSet::new();
    let mut seen_strings = vec![false; column.strings.len()];
    let mut out = Vec::with_capacity(order.len());
    for item in order {
        let values = column.values(iid_of(item));
        let taken = values.iter().any(|v| match *v {
            Item::Num(n) => seen_numbers.contains(&num_bits(n)),
            Item::Str(id) => seen_strings[id as usize],
        });
        if taken {
            continue;
        }
        for v in values {
            match *v {
                Item::Num(n) => {
                    seen_numbers.insert(num_bits(n));
                }
                Item::Str(id) => seen_strings[id as usize] = true,
            }
        }
        out.push(item);
    }
    out
}

/// A number's identity for distinct (`0.0` and `-0.0` are one value).
pub(super) fn num_bits(n: f64) -> u64 {
    if n == 0.0 {
        0
    } else {
        n.to_bits()
    }
}
