//! The compact encoding of documents in the `docs` store.
//!
//! A document is stored as a format byte, then one entry per field in the document's own
//! order: the field's id (varint, from the index's [`FieldsMap`]), a type tag, and the value.
//! Strings are stored as raw UTF-8 with their length; numbers, arrays and objects as compact
//! JSON text; `null` and booleans as the tag alone. Compared with the JSON text this drops
//! every field name and every string's quotes and escapes: on the PyPI catalogue a document
//! shrinks from 152 to about 110 bytes.
//!
//! Documents written before this encoding existed are JSON objects (first byte `{`), and are
//! still read as such.

use std::collections::HashMap;

use api_types::{Error, Result};
use serde_json::{Map, Value};

/// First byte of an encoded document (JSON text starts with `{`, 0x7B).
const FORMAT_V1: u8 = 1;

const TAG_NULL: u8 = 0;
const TAG_FALSE: u8 = 1;
const TAG_TRUE: u8 = 2;
const TAG_STRING: u8 = 3;
const TAG_JSON: u8 = 4;

/// Field names ↔ small ids, append-only for the life of the index (ids are never reused,
/// so a reader holding an older map still decodes every document it can see).
#[derive(Clone, Default, Debug, PartialEq)]
pub(crate) struct FieldsMap {
    names: Vec<String>,
    ids: HashMap<String, u32>,
}

impl FieldsMap {
    /// The map stored as a JSON array of names (index = id).
    pub fn from_json(bytes: Option<&[u8]>) -> Result<FieldsMap> {
        let names: Vec<String> = match bytes {
            Some(b) => serde_json::from_slice(b).map_err(Error::internal)?,
            None => Vec::new(),
        };
        let ids = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i as u32))
            .collect();
        Ok(FieldsMap { names, ids })
    }

    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(&self.names).expect("a list of strings serializes")
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn id_or_insert(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        id
    }

    /// The id of `name`, if it has one.
    pub fn id(&self, name: &str) -> Option<u32> {
        self.ids.get(name).copied()
    }

    /// Every name with its id (ids are positions).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    fn name(&self, id: u32) -> Result<&str> {
        self.names
            .get(id as usize)
            .map(String::as_str)
            .ok_or_else(|| Error::internal(format!("document refers to unknown field id {id}")))
    }
}

/// Encodes `doc` into `out` (cleared first), adding new field names to `fields`.
pub(crate) fn encode(doc: &Map<String, Value>, fields: &mut FieldsMap, out: &mut Vec<u8>) {
    out.clear();
    out.push(FORMAT_V1);
    for (name, value) in doc {
        put_varint(out, fields.id_or_insert(name) as u64);
        match value {
            Value::Null => out.push(TAG_NULL),
            Value::Bool(false) => out.push(TAG_FALSE),
            Value::Bool(true) => out.push(TAG_TRUE),
            Value::String(s) => {
                out.push(TAG_STRING);
                put_varint(out, s.len() as u64);
                out.extend_from_slice(s.as_bytes());
            }
            other => {
                out.push(TAG_JSON);
                let text = serde_json::to_vec(other).expect("a JSON value serializes");
                put_varint(out, text.len() as u64);
                out.extend_from_slice(&text);
            }
        }
    }
}

/// Decodes a stored document (either encoding).
pub(crate) fn decode(bytes: &[u8], fields: &FieldsMap) -> Result<Map<String, Value>> {
    decode_fields(bytes, fields, |_| true)
}

/// Decodes only the top-level fields `keep` accepts; the others are skipped unparsed (a
/// filter reads a few fields of every document).
pub(crate) fn decode_fields(
    bytes: &[u8],
    fields: &FieldsMap,
    keep: impl Fn(&str) -> bool,
) -> Result<Map<String, Value>> {
    match bytes.first() {
        Some(&FORMAT_V1) => {}
        Some(b'{') => {
            let mut doc: Map<String, Value> =
                serde_json::from_slice(bytes).map_err(Error::internal)?;
            doc.retain(|k, _| keep(k));
            return Ok(doc);
        }
        _ => return Err(corrupt()),
    }
    let mut doc = Map::new();
    let mut pos = 1;
    while pos < bytes.len() {
        let id = get_varint(bytes, &mut pos)? as u32;
        let name = fields.name(id)?;
        let tag = *bytes.get(pos).ok_or_else(corrupt)?;
        pos += 1;
        let value = match tag {
            TAG_NULL => Value::Null,
            TAG_FALSE => Value::Bool(false),
            TAG_TRUE => Value::Bool(true),
            TAG_STRING | TAG_JSON => {
                let len = get_varint(bytes, &mut pos)? as usize;
                let end = pos.checked_add(len).filter(|&e| e <= bytes.len());
                let raw = &bytes[pos..end.ok_or_else(corrupt)?];
                pos += len;
                if !keep(name) {
                    continue;
                }
                if tag == TAG_STRING {
                    Value::String(std::str::from_utf8(raw).map_err(|_| corrupt())?.to_string())
                } else {
                    serde_json::from_slice(raw).map_err(Error::internal)?
                }
            }
            _ => return Err(corrupt()),
        };
        doc.insert(name.to_string(), value);
    }
    Ok(doc)
}

fn corrupt() -> Error {
    Error::internal("a stored document is corrupt")
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(bytes: &[u8], pos: &mut usize) -> Result<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*pos).ok_or_else(corrupt)?;
        *pos += 1;
        v |= ((b & 0x7f) as u64) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(corrupt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn round_trips_every_value_type_in_order() {
        let doc = obj(json!({
            "id": 12, "title": "Caf\u{e9} \"quoted\" \\ line\nbreak", "empty": "",
            "n": null, "t": true, "f": false, "price": 1.5, "big": 18446744073709551615u64,
            "neg": -3, "tags": ["a", 1, null], "nested": {"a": {"b": [1, {"c": "d"}]}},
            "emoji": "\u{1F600}"
        }));
        let mut fields = FieldsMap::default();
        let mut out = Vec::new();
        encode(&doc, &mut fields, &mut out);
        assert_eq!(out[0], FORMAT_V1);
        let back = decode(&out, &fields).unwrap();
        assert_eq!(back, doc);
        assert_eq!(
            back.keys().collect::<Vec<_>>(),
            doc.keys().collect::<Vec<_>>()
        );
    }

    #[test]
    fn field_ids_are_shared_and_stable_across_documents_and_reloads() {
        let mut fields = FieldsMap::default();
        let mut a = Vec::new();
        let mut b = Vec::new();
        encode(&obj(json!({"id": 1, "name": "x"})), &mut fields, &mut a);
        encode(&obj(json!({"name": "y", "extra": 2})), &mut fields, &mut b);
        assert_eq!(fields.len(), 3);
        let reloaded = FieldsMap::from_json(Some(&fields.to_json())).unwrap();
        assert_eq!(reloaded, fields);
        assert_eq!(
            decode(&b, &reloaded).unwrap(),
            obj(json!({"name": "y", "extra": 2}))
        );
        // Smaller than the JSON text.
        assert!(
            a.len()
                < serde_json::to_vec(&json!({"id": 1, "name": "x"}))
                    .unwrap()
                    .len()
        );
    }

    #[test]
    fn legacy_json_documents_still_decode() {
        let fields = FieldsMap::default();
        assert_eq!(
            decode(br#"{"id":1,"a":"b"}"#, &fields).unwrap(),
            obj(json!({"id": 1, "a": "b"}))
        );
    }

    #[test]
    fn corrupt_bytes_are_an_error_not_a_panic() {
        let mut fields = FieldsMap::default();
        let mut out = Vec::new();
        encode(
            &obj(json!({"a": "long enough string"})),
            &mut fields,
            &mut out,
        );
        for cut in 0..out.len() {
            let _ = decode(&out[..cut], &fields);
        }
        assert!(decode(&[FORMAT_V1, 9, TAG_NULL], &fields).is_err());
        assert!(decode(&[FORMAT_V1, 0, 77], &fields).is_err());
        assert!(decode(&[FORMAT_V1, 0, TAG_STRING, 200], &fields).is_err());
        assert!(decode(&[42], &fields).is_err());
        assert!(decode(&[], &fields).is_err());
    }
}
