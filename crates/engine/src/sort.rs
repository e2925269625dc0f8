//! The `sort` parameter: parsing and sortability checks, and the sort of `/documents`, which
//! reads documents rather than value columns.
//!
//! The order itself is [`crate::value`]'s, the same the search's `sort` reads from value
//! columns: numbers, then strings by their normal form, then documents without a usable
//! value, whatever the direction; an array sorts at its best element; equal keys fall
//! through to the next key, and finally to the internal id (insertion order).

use std::cmp::Ordering;

use api_types::{Code, Error, Result};
use serde_json::{Map, Value};

pub use crate::value::compare;
pub use crate::value::geo::{geo_of, haversine_m};
use crate::value::{self, Key, Scalar};

/// One entry of the `sort` parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum SortKey {
    Field { name: String, asc: bool },
    GeoPoint { lat: f64, lng: f64, asc: bool },
}

/// Parses and checks `sort` against the index's `sortableAttributes`. `code` is the error
/// code of the calling route (`invalid_search_sort`, `invalid_document_sort`).
pub fn parse(specs: &[String], sortable: &[String], code: Code) -> Result<Vec<SortKey>> {
    let keys = parse_syntax(specs, code)?;
    check(&keys, sortable, code)?;
    Ok(keys)
}

/// Reads `sort`'s expressions, every one before any is checked against the settings (as
/// Meilisearch reads the request before the index).
pub fn parse_syntax(specs: &[String], code: Code) -> Result<Vec<SortKey>> {
    specs.iter().map(|s| parse_one(s, code)).collect()
}

/// Checks each key against `sortableAttributes` (`_geoPoint` needs `_geo`).
pub fn check(keys: &[SortKey], sortable: &[String], code: Code) -> Result<()> {
    for key in keys {
        match key {
            SortKey::Field { name, .. } => check_sortable(name, sortable, code)?,
            SortKey::GeoPoint { .. } => check_sortable("_geo", sortable, code)?,
        }
    }
    Ok(())
}

fn parse_one(spec: &str, code: Code) -> Result<SortKey> {
    let syntax = || {
        Error::new(
            code,
            format!(
                "Invalid syntax for the sort parameter: expected expression ending by `:asc` or `:desc`, found `{spec}`."
            ),
        )
    };
    let (target, dir) = spec.rsplit_once(':').ok_or_else(syntax)?;
    let asc = match dir {
        "asc" => true,
        "desc" => false,
        _ => return Err(syntax()),
    };
    // The attribute is taken as written (spaces kept, even an empty one), as Meilisearch
    // takes it; only `_geoPoint(…)` with its parentheses closing the target is a geo point.
    if let Some(args) = target
        .strip_prefix("_geoPoint(")
        .and_then(|r| r.strip_suffix(')'))
    {
        let (lat, lng) = geo_point(args).ok_or_else(|| geo_syntax_error(code, target))?;
        check_geo_point(lat, lng, code)?;
        return Ok(SortKey::GeoPoint { lat, lng, asc });
    }
    if matches!(
        target,
        "_geo" | "_geoDistance" | "_geoRadius" | "_geoBoundingBox"
    ) {
        return Err(Error::new(
            code,
            format!(
                "`{target}` is a reserved keyword and thus can't be used as a sort expression. Use the _geoPoint(latitude, longitude) built-in rule to sort on _geo field coordinates."
            ),
        ));
    }
    Ok(SortKey::Field {
        name: target.to_string(),
        asc,
    })
}

/// The two numbers of `_geoPoint(lat, lng)`'s arguments, each as Rust reads a float (`+1`,
/// `1e1`, `inf` and `NaN` included, as Meilisearch reads them); `None` unless there are two.
fn geo_point(args: &str) -> Option<(f64, f64)> {
    let mut parts = args.split(',');
    let (lat, lng) = (parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    Some((lat.trim().parse().ok()?, lng.trim().parse().ok()?))
}

fn geo_syntax_error(code: Code, target: &str) -> Error {
    Error::new(
        code,
        format!("Invalid syntax for the geo parameter: expected expression formated like `_geoPoint(latitude, longitude)` and ending by `:asc` or `:desc`, found `{target}`."),
    )
}

/// A geo point's coordinates in range, with Meilisearch's words (and its hint for a longitude).
fn check_geo_point(lat: f64, lng: f64, code: Code) -> Result<()> {
    if !(-90.0..=90.0).contains(&lat) {
        return Err(Error::new(
            code,
            format!("Bad latitude `{lat}`. Latitude must be contained between -90 and 90 degrees."),
        ));
    }
    if !(-180.0..=180.0).contains(&lng) {
        let hint = (lng + 180.0).rem_euclid(360.0) - 180.0;
        return Err(Error::new(
            code,
            format!("Bad longitude `{lng}`. Longitude must be contained between -180 and 180 degrees. Hint: try using `{hint}` instead."),
        ));
    }
    Ok(())
}

/// A field is sortable when it, or an object it is nested in, is listed.
fn check_sortable(field: &str, sortable: &[String], code: Code) -> Result<()> {
    let ok = sortable.iter().any(|s| value::within(field, s));
    if ok {
        return Ok(());
    }
    let message = if sortable.is_empty() {
        format!(
            "Attribute `{field}` is not sortable. This index does not have configured sortable attributes."
        )
    } else {
        let mut names: Vec<&str> = sortable.iter().map(String::as_str).collect();
        names.sort_unstable();
        format!(
            "Attribute `{field}` is not sortable. Available sortable attributes are: `{}`.",
            names.join(", ")
        )
    };
    Err(Error::new(code, message))
}

/// The sort value of one document for one key: strings by their normal form.
pub type SortValue = Key<String>;

/// The document's value for `key`: its best value when it holds several.
pub fn value_of(doc: &Map<String, Value>, key: &SortKey) -> SortValue {
    match key {
        SortKey::Field { name, asc } => {
            let mut keys = Vec::new();
            let _ = value::each_scalar::<()>(&value::values_at(doc, name), |s| {
                keys.push(match s {
                    Scalar::Num(n) => Key::Num(n),
                    Scalar::Str(s) => Key::Str(value::normalize(s).into_owned()),
                });
                std::ops::ControlFlow::Continue(())
            });
            value::best(keys, *asc)
        }
        SortKey::GeoPoint { lat, lng, .. } => geo_of(doc)
            .map(|(dlat, dlng)| Key::Num(haversine_m(*lat, *lng, dlat, dlng)))
            .unwrap_or(Key::Missing),
    }
}

fn direction(key: &SortKey) -> bool {
    match key {
        SortKey::Field { asc, .. } | SortKey::GeoPoint { asc, .. } => *asc,
    }
}

/// Sorts `(internal id, document)` pairs by `keys`, ties by internal id.
pub fn sort_documents(docs: &mut [(u32, Map<String, Value>)], keys: &[SortKey]) {
    let mut keyed: Vec<(Vec<SortValue>, usize)> = docs
        .iter()
        .enumerate()
        .map(|(i, (_, d))| (keys.iter().map(|k| value_of(d, k)).collect(), i))
        .collect();
    keyed.sort_by(|(a, ia), (b, ib)| {
        for (k, key) in keys.iter().enumerate() {
            let o = compare(&a[k], &b[k], direction(key));
            if o != Ordering::Equal {
                return o;
            }
        }
        docs[*ia].0.cmp(&docs[*ib].0)
    });
    let order: Vec<usize> = keyed.into_iter().map(|(_, i)| i).collect();
    let mut taken: Vec<Option<(u32, Map<String, Value>)>> =
        docs.iter_mut().map(|d| Some(std::mem::take(d))).collect();
    for (slot, i) in docs.iter_mut().zip(order) {
        *slot = taken[i].take().expect("each index once");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn docs(values: Vec<Value>) -> Vec<(u32, Map<String, Value>)> {
        values
            .into_iter()
            .enumerate()
            .map(|(i, v)| (i as u32, v.as_object().unwrap().clone()))
            .collect()
    }

    fn ids(d: &[(u32, Map<String, Value>)]) -> Vec<u32> {
        d.iter().map(|(i, _)| *i).collect()
    }

    fn keys(specs: &[&str], sortable: &[&str]) -> Vec<SortKey> {
        let specs: Vec<String> = specs.iter().map(|s| s.to_string()).collect();
        let sortable: Vec<String> = sortable.iter().map(|s| s.to_string()).collect();
        parse(&specs, &sortable, Code::InvalidDocumentSort).unwrap()
    }

    #[test]
    fn numbers_then_strings_then_missing_in_both_directions() {
        let mut d = docs(vec![
            json!({"v": "b"}),
            json!({"v": 10}),
            json!({}),
            json!({"v": "A"}),
            json!({"v": 2}),
            json!({"v": null}),
            json!({"v": true}),
        ]);
        sort_documents(&mut d, &keys(&["v:asc"], &["v"]));
        assert_eq!(ids(&d), vec![4, 1, 3, 0, 6, 2, 5]);
        d.sort_by_key(|(i, _)| *i);
        sort_documents(&mut d, &keys(&["v:desc"], &["v"]));
        assert_eq!(ids(&d), vec![1, 4, 6, 0, 3, 2, 5]);
    }

    /// The documents' sort and the value columns' sort keys give one order: values that
    /// trimming, compatibility forms, accents and a final sigma used to set apart.
    #[test]
    fn test_documents_sort_as_value_columns_do() {
        let values = vec![
            json!("b"),
            json!(" c"),
            json!("ﬁg"),
            json!("Élan"),
            json!("d"),
            json!("g"),
            json!(10),
            json!(null),
            json!(true),
            json!("e\u{301}lan"),
            json!("οδοσ"),
            json!("ΟΔΟΣ"),
            json!("  "),
            json!(["z", "a2"]),
            json!("①"),
            json!("1"),
            json!("Ａbc"),
            json!("\u{a0}f"),
        ];
        let raw: Vec<Value> = values.into_iter().map(|v| json!({ "v": v })).collect();
        let mut column = crate::facets::ColumnBuilder::new("v");
        for (i, d) in raw.iter().enumerate() {
            column.push(i as u32, d.as_object().unwrap());
        }
        let column = column.finish();
        for asc in [true, false] {
            let mut d = docs(raw.clone());
            let dir = if asc { "v:asc" } else { "v:desc" };
            sort_documents(&mut d, &keys(&[dir], &["v"]));
            let mut want: Vec<u32> = (0..raw.len() as u32).collect();
            want.sort_by(|a, b| {
                let (ka, kb) = (column.sort_key(*a, asc), column.sort_key(*b, asc));
                compare(&ka, &kb, asc).then(a.cmp(b))
            });
            assert_eq!(ids(&d), want, "{dir}");
        }
        let mut d = docs(raw);
        sort_documents(&mut d, &keys(&["v:asc"], &["v"]));
        // Meilisearch's order for the same values.
        assert_eq!(
            ids(&d),
            [6, 12, 14, 15, 13, 16, 0, 1, 4, 3, 9, 17, 2, 5, 8, 11, 10, 7]
        );
    }

    #[test]
    fn several_keys_and_arrays_and_nested_fields() {
        let mut d = docs(vec![
            json!({"t": "Orders", "id": 1}),
            json!({"t": "Orders", "id": 2}),
            json!({"t": "Payments", "id": 3}),
        ]);
        sort_documents(&mut d, &keys(&["t:asc", "id:desc"], &["id", "t"]));
        assert_eq!(ids(&d), vec![1, 0, 2]);

        let mut d = docs(vec![
            json!({"a": [5, 1]}),
            json!({"a": [3]}),
            json!({"a": {"b": 0}}),
        ]);
        sort_documents(&mut d, &keys(&["a:asc"], &["a"]));
        assert_eq!(ids(&d), vec![0, 1, 2]);
        sort_documents(&mut d, &keys(&["a:desc"], &["a"]));
        assert_eq!(ids(&d), vec![0, 1, 2]);

        let mut d = docs(vec![
            json!({"p": {"n": 3}}),
            json!({"p.n": 1}),
            json!({"p": [{"n": 2}]}),
        ]);
        sort_documents(&mut d, &keys(&["p.n:asc"], &["p"]));
        assert_eq!(ids(&d), vec![1, 2, 0]);
    }

    #[test]
    fn geo_point_sorts_by_distance_and_puts_documents_without_geo_last() {
        let mut d = docs(vec![
            json!({"_geo": {"lat": 48.85, "lng": 2.35}}),
            json!({}),
            json!({"_geo": {"lat": "45.76", "lng": "4.83"}}),
        ]);
        sort_documents(&mut d, &keys(&["_geoPoint(45.7, 4.8):asc"], &["_geo"]));
        assert_eq!(ids(&d), vec![2, 0, 1]);
    }

    #[test]
    fn errors_name_the_attribute_and_the_allowed_ones() {
        let s = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let e = parse(&s(&["title:asc"]), &[], Code::InvalidDocumentSort).unwrap_err();
        assert_eq!(e.code, Code::InvalidDocumentSort);
        assert_eq!(
            e.message,
            "Attribute `title` is not sortable. This index does not have configured sortable attributes."
        );
        let e = parse(
            &s(&["title:asc"]),
            &s(&["z", "id"]),
            Code::InvalidSearchSort,
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "Attribute `title` is not sortable. Available sortable attributes are: `id, z`."
        );
        for bad in ["title", "title:up", "_geoPoint(1,2)"] {
            let e = parse(&s(&[bad]), &s(&["title"]), Code::InvalidDocumentSort).unwrap_err();
            assert!(
                e.message
                    .starts_with("Invalid syntax for the sort parameter"),
                "{bad}"
            );
        }
        assert!(parse(
            &s(&["_geoPoint(91, 0):asc"]),
            &s(&["_geo"]),
            Code::InvalidSearchSort
        )
        .is_err());
        assert!(parse(&s(&["_geo:asc"]), &s(&["_geo"]), Code::InvalidSearchSort).is_err());
        // An attribute is taken as written: spaces and an empty name are names.
        for (spec, name) in [
            ("a b:asc", "a b"),
            (" a:asc", " a"),
            (":asc", ""),
            ("_geoPoint(1,2) :asc", "_geoPoint(1,2) "),
        ] {
            let e = parse(&s(&[spec]), &s(&["z"]), Code::InvalidSearchSort).unwrap_err();
            assert_eq!(
                e.message,
                format!(
                    "Attribute `{name}` is not sortable. Available sortable attributes are: `z`."
                )
            );
        }
        let geo = |spec: &str| {
            parse(&s(&[spec]), &s(&["_geo"]), Code::InvalidSearchSort).map_err(|e| e.message)
        };
        assert_eq!(
            geo("_geoPoint(1):asc").unwrap_err(),
            "Invalid syntax for the geo parameter: expected expression formated like `_geoPoint(latitude, longitude)` and ending by `:asc` or `:desc`, found `_geoPoint(1)`."
        );
        for bad in [
            "_geoPoint(a,b):asc",
            "_geoPoint(1,2,3):asc",
            "_geoPoint():asc",
            "_geoPoint(0x1,2):asc",
        ] {
            assert!(geo(bad).unwrap_err().contains("found `_geoPoint("), "{bad}");
        }
        assert_eq!(
            geo("_geoPoint(100.5,0):asc").unwrap_err(),
            "Bad latitude `100.5`. Latitude must be contained between -90 and 90 degrees."
        );
        assert_eq!(
            geo("_geoPoint(nan,1):asc").unwrap_err(),
            "Bad latitude `NaN`. Latitude must be contained between -90 and 90 degrees."
        );
        for (spec, lng, hint) in [
            ("_geoPoint(0,200):asc", "200", "-160"),
            ("_geoPoint(0,-500):asc", "-500", "-140"),
            ("_geoPoint(0,180.5):asc", "180.5", "-179.5"),
            ("_geoPoint(1,-inf):asc", "-inf", "NaN"),
        ] {
            assert_eq!(
                geo(spec).unwrap_err(),
                format!("Bad longitude `{lng}`. Longitude must be contained between -180 and 180 degrees. Hint: try using `{hint}` instead.")
            );
        }
        for good in [
            "_geoPoint( 1 , 2 ):asc",
            "_geoPoint(+1,2):asc",
            "_geoPoint(1e1,2):desc",
            "_geoPoint(-90.0,180):asc",
        ] {
            assert!(geo(good).is_ok(), "{good}");
        }
        assert!(parse(
            &s(&["_geoPoint(1, 2):asc"]),
            &s(&["id"]),
            Code::InvalidSearchSort
        )
        .is_err());
    }
}
