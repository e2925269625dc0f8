//! Primary keys and document ids: inference from the first document, extraction and validation.

use api_types::{Code, Error, Result};
use serde_json::{Map, Value};

/// Guesses the primary key from the first document: the one top-level field whose lowercased
/// name ends with `id`.
pub fn infer_primary_key(first: &Map<String, Value>) -> Result<String> {
    let mut candidates: Vec<&String> = first
        .keys()
        .filter(|k| k.to_lowercase().ends_with("id"))
        .collect();
    candidates.sort();
    match candidates.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(Error::new(
            Code::IndexPrimaryKeyNoCandidateFound,
            "The primary key inference failed as the engine did not find any field ending with `id` in its name. Please specify the primary key manually using the `primaryKey` query parameter.",
        )),
        [a, b, ..] => Err(Error::new(
            Code::IndexPrimaryKeyMultipleCandidatesFound,
            format!(
                "The primary key inference failed as the engine found {} fields ending with `id` in their names: '{a}' and '{b}'. Please specify the primary key manually using the `primaryKey` query parameter.",
                candidates.len()
            ),
        )),
    }
}

/// Extracts and validates the external id of `doc` under `primary_key` (dots are a nested path).
pub fn document_id(doc: &Map<String, Value>, primary_key: &str) -> Result<String> {
    let mut found: Vec<&Value> = Vec::new();
    collect_path(doc, primary_key, &mut found);
    match found.as_slice() {
        [] => Err(Error::new(
            Code::MissingDocumentId,
            format!(
                "Document doesn't have a `{primary_key}` attribute: `{}`.",
                short_json(doc)
            ),
        )),
        [value] => validate_id(value),
        _ => Err(Error::new(
            Code::InvalidDocumentId,
            format!(
                "Document have too many `{primary_key}` attributes: `{}`.",
                short_json(doc)
            ),
        )),
    }
}

/// Every value reachable at `path` in `doc`, where `a.b` may be a key with a dot or a nested key.
fn collect_path<'a>(doc: &'a Map<String, Value>, path: &str, out: &mut Vec<&'a Value>) {
    if let Some(v) = doc.get(path) {
        out.push(v);
    }
    for (i, _) in path.match_indices('.') {
        let (head, tail) = (&path[..i], &path[i + 1..]);
        if let Some(Value::Object(inner)) = doc.get(head) {
            collect_path(inner, tail, out);
        }
    }
}

/// The longest document id, in bytes (LMDB's key limit).
pub const MAX_ID_BYTES: usize = 511;

/// Validates one id value: an integer, or 1–511 bytes of `A-Za-z0-9-_`.
pub fn validate_id(value: &Value) -> Result<String> {
    match value {
        Value::Number(n) if n.is_i64() || n.is_u64() => Ok(n.to_string()),
        Value::String(s) if is_valid_id_string(s) => Ok(s.clone()),
        other => Err(invalid_id(&other.to_string())),
    }
}

/// Validates an id given as text (path parameters, deletion lists).
pub fn is_valid_id_string(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_ID_BYTES
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

pub fn invalid_id(shown: &str) -> Error {
    Error::new(
        Code::InvalidDocumentId,
        format!(
            "Document identifier `{shown}` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes."
        ),
    )
}

fn short_json(doc: &Map<String, Value>) -> String {
    let s = serde_json::to_string(doc).unwrap_or_default();
    if s.len() > 200 {
        let mut end = 200;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    } else {
        s
    }
}

/// Which reserved geo fields documents are checked for: `_geo` when it is filterable or
/// sortable, `_geojson` when it is filterable.
#[derive(Debug, Clone, Copy)]
pub struct GeoChecks {
    pub geo: bool,
    pub geojson: bool,
}

impl GeoChecks {
    /// Checks `doc` (whose external id under `primary_key` is `id`).
    pub fn check(&self, doc: &Map<String, Value>, primary_key: &str, id: String) -> Result<()> {
        if !self.geo && !self.geojson {
            return Ok(());
        }
        // Meilisearch prints the id as JSON: `"11"` or `11`.
        let shown = match doc.get(primary_key) {
            Some(Value::Number(n)) => n.to_string(),
            _ => Value::String(id).to_string(),
        };
        if self.geo {
            validate_geo(doc, &shown)?;
        }
        match doc.get("_geojson") {
            Some(g) if self.geojson && !g.is_null() && !crate::geojson::is_valid(g) => {
                Err(Error::new(
                    Code::InvalidDocumentGeojsonField,
                    format!("The `_geojson` field in the document with the id: `{shown}` is not a valid GeoJSON object (Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon, GeometryCollection, Feature or FeatureCollection): `{g}`."),
                ))
            }
            _ => Ok(()),
        }
    }
}

/// Checks a document's `_geo` (when `_geo` is filterable or sortable): `null`, or an object with
/// exactly `lat` and `lng`, each a finite number or a string holding one. `shown_id` is the
/// document's id as JSON (`"11"` or `11`), as Meilisearch prints it.
pub fn validate_geo(doc: &Map<String, Value>, shown_id: &str) -> Result<()> {
    let geo_error = |m: String| Error::new(Code::InvalidDocumentGeoField, m);
    let object = match doc.get("_geo") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Object(o)) => o,
        Some(other) => {
            return Err(geo_error(format!(
                "The `_geo` field in the document with the id: `{shown_id}` is not an object. Was expecting an object with the `_geo.lat` and `_geo.lng` fields but instead got `{other}`."
            )))
        }
    };
    let (lat, lng) = match (object.get("lat"), object.get("lng")) {
        (Some(lat), Some(lng)) => (lat, lng),
        (Some(_), None) => {
            return Err(geo_error(format!(
                "Could not find longitude in the document with the id: `{shown_id}`. Was expecting a `_geo.lng` field."
            )))
        }
        (None, Some(_)) => {
            return Err(geo_error(format!(
                "Could not find latitude in the document with the id: `{shown_id}`. Was expecting a `_geo.lat` field."
            )))
        }
        (None, None) => {
            return Err(geo_error(format!(
                "Could not find latitude nor longitude in the document with the id: `{shown_id}`. Was expecting `_geo.lat` and `_geo.lng` fields."
            )))
        }
    };
    let extra: Map<String, Value> = object
        .iter()
        .filter(|(k, _)| *k != "lat" && *k != "lng")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !extra.is_empty() {
        return Err(geo_error(format!(
            "The `_geo` field in the document with the id: `{shown_id}` contains the following unexpected fields: `{}`.",
            Value::Object(extra)
        )));
    }
    let finite = |v: &Value| match v {
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite()),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        _ => None,
    };
    match (finite(lat), finite(lng)) {
        (Some(_), Some(_)) => Ok(()),
        (None, None) => Err(geo_error(format!(
            "Could not parse latitude nor longitude in the document with the id: `{shown_id}`. Was expecting finite numbers but instead got `{lat}` and `{lng}`."
        ))),
        (None, _) => Err(geo_error(format!(
            "Could not parse latitude in the document with the id: `{shown_id}`. Was expecting a finite number but instead got `{lat}`."
        ))),
        (_, None) => Err(geo_error(format!(
            "Could not parse longitude in the document with the id: `{shown_id}`. Was expecting a finite number but instead got `{lng}`."
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn inference() {
        assert_eq!(
            infer_primary_key(&obj(json!({"title":"a","bookId":1}))).unwrap(),
            "bookId"
        );
        assert_eq!(
            infer_primary_key(&obj(json!({"title":"a"})))
                .unwrap_err()
                .code,
            Code::IndexPrimaryKeyNoCandidateFound
        );
        let e = infer_primary_key(&obj(json!({"uid":1,"id":2,"x":3}))).unwrap_err();
        assert_eq!(e.code, Code::IndexPrimaryKeyMultipleCandidatesFound);
        assert!(e.message.contains("'id' and 'uid'"), "{}", e.message);
        // "contains" is not "ends with"
        assert!(infer_primary_key(&obj(json!({"identity":1}))).is_err());
    }

    #[test]
    fn ids() {
        assert_eq!(document_id(&obj(json!({"id":12})), "id").unwrap(), "12");
        assert_eq!(
            document_id(&obj(json!({"id":"a-b_C9"})), "id").unwrap(),
            "a-b_C9"
        );
        assert_eq!(
            document_id(&obj(json!({"id":1.5})), "id").unwrap_err().code,
            Code::InvalidDocumentId
        );
        assert_eq!(
            document_id(&obj(json!({"id":"a b"})), "id")
                .unwrap_err()
                .code,
            Code::InvalidDocumentId
        );
        assert_eq!(
            document_id(&obj(json!({"id":""})), "id").unwrap_err().code,
            Code::InvalidDocumentId
        );
        assert_eq!(
            document_id(&obj(json!({"id":"x".repeat(512)})), "id")
                .unwrap_err()
                .code,
            Code::InvalidDocumentId
        );
        assert!(document_id(&obj(json!({"id":"x".repeat(511)})), "id").is_ok());
        assert_eq!(
            document_id(&obj(json!({"name":1})), "id").unwrap_err().code,
            Code::MissingDocumentId
        );
        assert_eq!(
            document_id(&obj(json!({"a":{"b":"x"}})), "a.b").unwrap(),
            "x"
        );
        assert_eq!(
            document_id(&obj(json!({"a":{"b":"x"},"a.b":"y"})), "a.b")
                .unwrap_err()
                .code,
            Code::InvalidDocumentId
        );
    }
}

/// The shard a document belongs to: of `shards`, the one whose name hashed with the
/// document's id scores highest (rendezvous hashing, 64-bit FNV-1a). Stable across versions
/// and machines, and adding a shard moves only the documents the new shard wins.
pub fn shard_of<'a>(id: &str, shards: &'a [String]) -> Option<&'a str> {
    fn fnv1a(parts: &[&[u8]]) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for part in parts {
            for b in *part {
                h ^= *b as u64;
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        // A final mix: FNV's low bits alone spread poorly over a few shards.
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^ (h >> 33)
    }
    shards
        .iter()
        .map(|s| (fnv1a(&[s.as_bytes(), &[0xff], id.as_bytes()]), s))
        .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(a.1)))
        .map(|(_, s)| s.as_str())
}

#[cfg(test)]
mod shard_tests {
    use super::shard_of;

    #[test]
    fn shards_split_evenly_and_stably() {
        let shards: Vec<String> = ["s1", "s2", "s3"].iter().map(|s| s.to_string()).collect();
        let mut counts = [0usize; 3];
        for i in 0..30_000 {
            let s = shard_of(&i.to_string(), &shards).unwrap();
            counts[shards.iter().position(|x| x == s).unwrap()] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
        // The order shards are listed in does not matter.
        let reversed: Vec<String> = shards.iter().rev().cloned().collect();
        for i in 0..1000 {
            let id = format!("doc-{i}");
            assert_eq!(shard_of(&id, &shards), shard_of(&id, &reversed));
        }
        // A fourth shard takes documents only for itself.
        let mut more = shards.clone();
        more.push("s4".into());
        for i in 0..1000 {
            let id = i.to_string();
            let after = shard_of(&id, &more).unwrap();
            assert!(after == "s4" || Some(after) == shard_of(&id, &shards));
        }
        assert_eq!(shard_of("x", &[]), None);
    }
}
