//! Validation against `filterableAttributes` rules, and the fields a filter reads.

use serde_json::json;

use super::{parse, settings};
use crate::settings::Settings;

#[test]
fn test_validation_against_filterable_attributes() {
    let s = settings(json!(["genre", "b", "nested"]));
    assert!(parse("genre = x AND nested.deep = 1").validate(&s).is_ok());
    assert_eq!(
        parse("x = 1").validate(&s).unwrap_err(),
        "Attribute `x` is not filterable. Available filterable attribute patterns are: `b`, `genre`, `nested`.\n1:2 x = 1"
    );
    assert_eq!(
        parse("  x = 1").validate(&Settings::default()).unwrap_err(),
        "Attribute `x` is not filterable. This index does not have configured filterable attributes.\n3:4   x = 1"
    );
    let patterns = settings(json!([
        {"attributePatterns": ["price_*"], "features": {"filter": {"equality": true, "comparison": false}}},
        {"attributePatterns": ["*_at"], "features": {"filters": {"equality": false, "comparison": true}}},
        {"attributePatterns": ["off"], "features": {"filter": {"equality": false, "comparison": false}}},
    ]));
    assert!(parse("price_usd = 1").validate(&patterns).is_ok());
    assert!(parse("created_at > 1").validate(&patterns).is_ok());
    let e = parse("price_usd > 1").validate(&patterns).unwrap_err();
    assert!(
        e.starts_with("Filter operator `>` is not allowed for the attribute `price_usd`.\n  - Note: allowed operators: OR, AND, NOT, =, !=, IN, IS EMPTY, IS NULL, EXISTS.\n  - Note: field `price_usd` matched rule #0"),
        "{e}"
    );
    let e = parse("created_at IN [1]").validate(&patterns).unwrap_err();
    assert!(e.starts_with("Filter operator `=` is not allowed"), "{e}");
    let e = parse("off = 1").validate(&patterns).unwrap_err();
    assert!(e.starts_with("Attribute `off` is not filterable. Available filterable attribute patterns are: `*_at`, `price_*`."), "{e}");
    // Geo needs a plain `_geo` rule.
    let e = parse("_geoRadius(1, 2, 3)").validate(&s).unwrap_err();
    assert!(
        e.starts_with("Attribute `_geo/_geojson` is not filterable."),
        "{e}"
    );
    assert!(e.ends_with("\n12:13 _geoRadius(1, 2, 3)"), "{e}");
    let geo = settings(json!(["_geo"]));
    assert!(parse("_geoRadius(1, 2, 3)").validate(&geo).is_ok());
    assert_eq!(
        parse("_geoRadius(91, 2, 3)").validate(&geo).unwrap_err(),
        "Bad latitude `91`. Latitude must be contained between -90 and 90 degrees.\n12:14 _geoRadius(91, 2, 3)"
    );
    let e = parse("_geoBoundingBox([1, 200], [0, 0])")
        .validate(&geo)
        .unwrap_err();
    assert!(e.contains("Hint: try using `-160` instead."), "{e}");
    let e = parse("_geoBoundingBox([0, 1], [1, 0])")
        .validate(&geo)
        .unwrap_err();
    assert!(
        e.starts_with("The top latitude `0` is below the bottom latitude `1`."),
        "{e}"
    );
    // The last operand is reported first, as Meilisearch does.
    let e = parse("a = 1 AND b2 = 2").validate(&s).unwrap_err();
    assert!(e.starts_with("Attribute `b2`"), "{e}");
}

#[test]
fn test_reads_only_the_fields_it_needs() {
    let f = parse("a.b = 1 OR (c EXISTS AND NOT _geoRadius(1, 2, 3))");
    for name in ["a", "a.b", "c", "_geo"] {
        assert!(f.reads_field(name), "{name}");
    }
    for name in ["b", "ab", "a.b.c", "cc", "d"] {
        assert!(!f.reads_field(name), "{name}");
    }
}
