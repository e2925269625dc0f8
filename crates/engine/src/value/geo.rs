//! `_geo` points: reading them from documents and the distance between two of them.

use serde_json::{Map, Value};

/// `_geo.lat`/`_geo.lng` as numbers or numeric strings.
pub fn geo_of(doc: &Map<String, Value>) -> Option<(f64, f64)> {
    let geo = doc.get("_geo")?.as_object()?;
    let num = |v: &Value| match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    };
    Some((num(geo.get("lat")?)?, num(geo.get("lng")?)?))
}

/// The Earth's radius in metres, as Meilisearch measures `_geoDistance` (6,371 km).
pub const EARTH_RADIUS_M: f64 = 6_371_000.0;

/// Great-circle distance in metres.
pub fn haversine_m(lat1: f64, lng1: f64, lat2: f64, lng2: f64) -> f64 {
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let dp = (lat2 - lat1).to_radians();
    let dl = (lng2 - lng1).to_radians();
    let a = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_M * a.sqrt().min(1.0).asin()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn test_distance_and_points_as_numbers_or_strings() {
        let paris_lyon = haversine_m(48.8566, 2.3522, 45.764, 4.8357);
        assert!((paris_lyon - 392_000.0).abs() < 2_000.0, "{paris_lyon}");
        // Across the antimeridian the short way round is used.
        assert!(haversine_m(0.0, 179.9, 0.0, -179.9) < 25_000.0);
        let doc = json!({"_geo": {"lat": "45.76", "lng": 4.83}});
        assert_eq!(geo_of(doc.as_object().unwrap()), Some((45.76, 4.83)));
        let doc = json!({"_geo": {"lat": null, "lng": 4.83}});
        assert_eq!(geo_of(doc.as_object().unwrap()), None);
    }
}
