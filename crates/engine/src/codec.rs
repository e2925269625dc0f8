//! The compact encoding of documents in the `docs` store.
//!
//! A document is stored as a format byte, then one entry per field in the document's own
//! order: the field's id (varint, from the index's [`FieldsMap`]), a type tag, and the value.
//! Strings are stored as raw UTF-8 with their length; numbers, arrays and objects as compact
//! JSON text; `null` and booleans as the tag alone. Compared with the JSON text this drops
//! every field name and every string's quotes and escapes: on the PyPI catalogue a document
//! shrinks from 152 to about 110 bytes.
//!
//! Once an index has a dictionary (trained on its first documents, see [`compress`]), that
//! encoding is stored compressed with it behind its own format byte: on PyPI, about 68 bytes
//! a document. Documents written before either existed are read as they were: JSON objects
//! (first byte `{`), or the encoding uncompressed.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use api_types::{Error, Result};
use serde_json::{Map, Value};

mod compress;

pub(crate) use compress::{Dictionary, TRAINING_SAMPLES};

/// First byte of an encoded document (JSON text starts with `{`, 0x7B).
const FORMAT_V1: u8 = 1;
/// First byte of an encoded document compressed with the index's dictionary: a zstd frame
/// of the whole `FORMAT_V1` encoding follows (since frames carry zstd's content checksum,
/// bytes changed in the store fail to decompress instead of decoding to another document).
const FORMAT_ZSTD: u8 = 2;
/// First byte of an uncompressed document with its checksum: the CRC-32 (little-endian) of
/// the whole `FORMAT_V1` encoding that follows it. LMDB checksums nothing: this is what finds
/// a value changed in place on a page whose structure is intact.
const FORMAT_CHECKED: u8 = 3;

const TAG_NULL: u8 = 0;
const TAG_FALSE: u8 = 1;
const TAG_TRUE: u8 = 2;
const TAG_STRING: u8 = 3;
const TAG_JSON: u8 = 4;

/// What reading a stored document takes: field names ↔ small ids, append-only for the life
/// of the index (ids are never reused, so a reader holding an older map still decodes every
/// document it can see), and the dictionary, written once.
#[derive(Clone, Default, Debug, PartialEq)]
pub(crate) struct FieldsMap {
    names: Vec<String>,
    ids: HashMap<String, u32>,
    dictionary: Option<Arc<Dictionary>>,
    /// Every path below a top-level attribute that the documents have held (`a.b`, `a.b.c`;
    /// through arrays, `cast.name`), without an id: what Meilisearch's fields map lists beside
    /// the top-level names (`POST /fields`, and whether `attributesToHighlight` names a field
    /// the index has). Append-only, up to [`MAX_NESTED_PATHS`].
    nested: BTreeSet<String>,
}

/// The most nested paths an index records (Meilisearch refuses a document past 65,535 fields).
const MAX_NESTED_PATHS: usize = u16::MAX as usize;

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
        Ok(FieldsMap {
            names,
            ids,
            dictionary: None,
            nested: BTreeSet::new(),
        })
    }

    /// The map with the stored nested paths (a JSON array), if any.
    pub fn with_nested(mut self, bytes: Option<&[u8]>) -> Result<FieldsMap> {
        if let Some(b) = bytes {
            self.nested = serde_json::from_slice(b).map_err(Error::internal)?;
        }
        Ok(self)
    }

    /// The nested paths to store, when there are any.
    pub fn nested_to_json(&self) -> Option<Vec<u8>> {
        (!self.nested.is_empty())
            .then(|| serde_json::to_vec(&self.nested).expect("a list of strings serializes"))
    }

    /// Every path below a top-level attribute the documents have held (see the field).
    pub fn nested(&self) -> impl Iterator<Item = &String> {
        self.nested.iter()
    }

    /// Records the paths below `path` in `value` (`path` is reused as a buffer).
    fn note_nested(&mut self, path: &mut String, value: &Value) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    if self.nested.len() >= MAX_NESTED_PATHS {
                        return;
                    }
                    let len = path.len();
                    path.push('.');
                    path.push_str(k);
                    if !self.nested.contains(path.as_str()) {
                        self.nested.insert(path.clone());
                    }
                    self.note_nested(path, v);
                    path.truncate(len);
                }
            }
            Value::Array(items) => {
                for v in items {
                    self.note_nested(path, v);
                }
            }
            _ => {}
        }
    }

    /// The map with the stored dictionary, if there is one.
    pub fn with_dictionary(mut self, bytes: Option<&[u8]>) -> Result<FieldsMap> {
        self.dictionary = bytes.map(Dictionary::load).transpose()?.map(Arc::new);
        Ok(self)
    }

    /// The dictionary documents are compressed with from now on.
    pub fn dictionary(&self) -> Option<&Dictionary> {
        self.dictionary.as_deref()
    }

    pub fn set_dictionary(&mut self, dictionary: Dictionary) {
        self.dictionary = Some(Arc::new(dictionary));
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

/// Encodes `doc` into `out` (cleared first; what a dictionary is trained on), adding new
/// field names to `fields`, then into `packed` what to store: `out` compressed with `fields`'
/// dictionary when there is one, else `out` behind its checksum. Returns `packed`.
pub(crate) fn encode<'a>(
    doc: &Map<String, Value>,
    fields: &mut FieldsMap,
    out: &mut Vec<u8>,
    packed: &'a mut Vec<u8>,
) -> Result<&'a [u8]> {
    encode_plain(doc, fields, out);
    packed.clear();
    match fields.dictionary() {
        Some(dictionary) => {
            packed.push(FORMAT_ZSTD);
            dictionary.compress(out, packed)?;
        }
        None => {
            packed.push(FORMAT_CHECKED);
            packed.extend_from_slice(&crc32fast::hash(out).to_le_bytes());
            packed.extend_from_slice(out);
        }
    }
    Ok(packed)
}

/// Encodes `doc` into `out` (cleared first) uncompressed, adding new field names to `fields`.
fn encode_plain(doc: &Map<String, Value>, fields: &mut FieldsMap, out: &mut Vec<u8>) {
    out.clear();
    out.push(FORMAT_V1);
    let mut path = String::new();
    for (name, value) in doc {
        if matches!(value, Value::Object(_) | Value::Array(_)) && name != "_vectors" {
            path.clear();
            path.push_str(name);
            fields.note_nested(&mut path, value);
        }
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

/// The uncompressed encoding of a stored document (what a dictionary is trained on), or
/// `None` when it is stored compressed, as JSON, or does not match its checksum.
pub(crate) fn plain_of(bytes: &[u8]) -> Option<&[u8]> {
    match bytes.first() {
        Some(&FORMAT_V1) => Some(bytes),
        Some(&FORMAT_CHECKED) => checked(bytes).ok(),
        _ => None,
    }
}

/// The `FORMAT_V1` encoding behind a `FORMAT_CHECKED` document, once its checksum matches.
fn checked(bytes: &[u8]) -> Result<&[u8]> {
    let (Some(sum), Some(plain)) = (bytes.get(1..5), bytes.get(5..)) else {
        return Err(corrupt());
    };
    if sum != crc32fast::hash(plain).to_le_bytes() || plain.first() != Some(&FORMAT_V1) {
        return Err(corrupt());
    }
    Ok(plain)
}

/// Decodes a stored document (any encoding).
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
        Some(&FORMAT_CHECKED) => return decode_fields(checked(bytes)?, fields, keep),
        Some(&FORMAT_ZSTD) => {
            let dictionary = fields.dictionary().ok_or_else(corrupt)?;
            return dictionary.decompress(&bytes[1..], |plain| match plain.first() {
                Some(&FORMAT_V1) => decode_fields(plain, fields, keep),
                _ => Err(corrupt()),
            });
        }
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

/// A stored document that does not decode, or does not match its checksum: its store is
/// damaged (Meilisearch's `invalid_store_file`).
fn corrupt() -> Error {
    Error::new(
        api_types::Code::InvalidStoreFile,
        "The database file is in an invalid state: a stored document does not match its checksum or does not decode.",
    )
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
        encode_plain(&doc, &mut fields, &mut out);
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
        encode_plain(&obj(json!({"id": 1, "name": "x"})), &mut fields, &mut a);
        encode_plain(&obj(json!({"name": "y", "extra": 2})), &mut fields, &mut b);
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
        encode_plain(
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

    #[test]
    fn with_a_dictionary_documents_are_stored_compressed_and_older_ones_still_read() {
        let mut fields = FieldsMap::default();
        let doc = |i: usize| {
            obj(json!({"id": i, "name": format!("package-{i}"),
                "summary": format!("A library for {} things", ["parsing", "testing"][i % 2])}))
        };
        let (mut out, mut packed) = (Vec::new(), Vec::new());
        let plain = encode(&doc(0), &mut fields, &mut out, &mut packed)
            .unwrap()
            .to_vec();
        assert_eq!(plain[0], FORMAT_CHECKED);
        assert_eq!(plain_of(&plain), Some(&out[..]));
        let samples: Vec<Vec<u8>> = (0..TRAINING_SAMPLES)
            .map(|i| {
                let mut s = Vec::new();
                encode_plain(&doc(i), &mut fields, &mut s);
                s
            })
            .collect();
        fields.set_dictionary(Dictionary::train(&samples).unwrap());
        let stored = encode(&doc(7), &mut fields, &mut out, &mut packed)
            .unwrap()
            .to_vec();
        assert_eq!(stored[0], FORMAT_ZSTD);
        assert!(
            stored.len() < out.len(),
            "{} from {}",
            stored.len(),
            out.len()
        );
        // A reader loads the map and the dictionary from what the index stores.
        let dictionary = fields.dictionary().unwrap().bytes().to_vec();
        let reloaded = FieldsMap::from_json(Some(&fields.to_json()))
            .unwrap()
            .with_dictionary(Some(&dictionary))
            .unwrap();
        assert_eq!(reloaded, fields);
        assert_eq!(decode(&stored, &reloaded).unwrap(), doc(7));
        assert_eq!(decode(&plain, &reloaded).unwrap(), doc(0));
        assert_eq!(
            decode_fields(&stored, &reloaded, |n| n == "name").unwrap(),
            obj(json!({"name": "package-7"}))
        );
        // Without its dictionary, a compressed document is an error, not a panic.
        let bare = FieldsMap::from_json(Some(&fields.to_json())).unwrap();
        assert!(decode(&stored, &bare).is_err());
        for cut in 0..stored.len() {
            let _ = decode(&stored[..cut], &reloaded);
        }
        // Documents stored uncompressed before (no checksum) still read.
        assert_eq!(
            decode(plain_of(&plain).unwrap(), &reloaded).unwrap(),
            doc(0)
        );
        // Any byte changed in a stored document, compressed or not, is found: the read fails
        // with `invalid_store_file`, never giving another document.
        for bytes in [&stored, &plain] {
            for at in 0..bytes.len() {
                for flip in [0x01, 0x80, 0xff] {
                    let mut damaged = bytes.to_vec();
                    damaged[at] ^= flip;
                    let e = decode(&damaged, &reloaded).expect_err("a changed byte is found");
                    assert_eq!(e.code, api_types::Code::InvalidStoreFile, "byte {at}");
                }
            }
        }
    }
}
