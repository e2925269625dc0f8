//! Document payloads: JSON, NDJSON and CSV request bodies turned into canonical NDJSON.
//!
//! The HTTP layer hands the raw body to [`stage_documents`] before answering 202. It checks
//! that the body is documents, writes one compact JSON object per line to the task's payload
//! file and fsyncs it, so the task can be acknowledged durably and indexed later by
//! [`crate::Index::apply_batch`] without parsing the original format again.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;

use api_types::{Code, Error, Result};
use serde::de::{DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The content type of a documents payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Ndjson,
    Csv,
}

impl Format {
    pub fn parse(s: &str) -> Result<Format> {
        match s {
            "json" => Ok(Format::Json),
            "ndjson" => Ok(Format::Ndjson),
            "csv" => Ok(Format::Csv),
            other => Err(Error::internal(format!("unknown payload format `{other}`"))),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Ndjson => "ndjson",
            Format::Csv => "csv",
        }
    }
}

/// A staged payload file as it was written: what reading it back must find.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StagedCheck {
    /// Its length in bytes.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes: u64,
    /// The CRC-32 of its bytes.
    pub crc32: u32,
}

/// Parses `payload`, writes it as canonical NDJSON to `dest` (fsynced, with its directory) and
/// returns the number of documents and what the file must be found to hold when its task runs.
pub fn stage_documents(
    payload: &[u8],
    format: Format,
    csv_delimiter: Option<&str>,
    dest: &Path,
) -> Result<(u64, StagedCheck)> {
    if let Some(parent) = dest.parent() {
        fs::create_dir_all(parent).map_err(io_error)?;
    }
    let file = File::create(dest).map_err(io_error)?;
    let mut out = Checked {
        out: BufWriter::with_capacity(1 << 20, file),
        bytes: 0,
        crc: crc32fast::Hasher::new(),
    };
    let count = to_ndjson(payload, format, csv_delimiter, &mut out)?;
    let check = StagedCheck {
        bytes: out.bytes,
        crc32: out.crc.finalize(),
    };
    let file = out.out.into_inner().map_err(|e| io_error(e.into_error()))?;
    file.sync_all().map_err(io_error)?;
    if let Some(parent) = dest.parent() {
        if let Ok(dir) = File::open(parent) {
            let _ = dir.sync_all();
        }
    }
    Ok((count, check))
}

/// A writer that counts and checksums what passes through it.
struct Checked<W> {
    out: W,
    bytes: u64,
    crc: crc32fast::Hasher,
}

impl<W: Write> Write for Checked<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.bytes += n as u64;
        self.crc.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Checks that a staged payload file is still what was staged: not missing, not cut short,
/// not changed (its task fails with `invalid_store_file` rather than indexing part of it).
pub fn verify_staged(path: &Path, check: &StagedCheck) -> Result<()> {
    let bytes = fs::read(path).map_err(|e| missing_or_io(path, e))?;
    let damaged = |what: String| {
        Error::new(
            Code::InvalidStoreFile,
            format!(
                "The payload file of this task `{}` is damaged: {what}. Its documents were not indexed: send them again.",
                path.display()
            ),
        )
    };
    if bytes.len() as u64 != check.bytes {
        return Err(damaged(format!(
            "it holds {} bytes where {} were written",
            bytes.len(),
            check.bytes
        )));
    }
    if crc32fast::hash(&bytes) != check.crc32 {
        return Err(damaged("its bytes do not match their checksum".into()));
    }
    Ok(())
}

fn missing_or_io(path: &Path, e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::NotFound {
        Error::new(
            Code::TaskFileNotFound,
            format!(
                "The payload file of this task is missing: {}",
                path.display()
            ),
        )
    } else {
        io_error(e)
    }
}

/// Converts a payload to canonical NDJSON, one document object per line, written to `out`;
/// returns the number of documents. Anything that is not documents is an error.
pub fn to_ndjson(
    payload: &[u8],
    format: Format,
    csv_delimiter: Option<&str>,
    out: &mut impl Write,
) -> Result<u64> {
    let delimiter = match csv_delimiter {
        None => b',',
        Some(d) if d.len() == 1 && d.is_ascii() => d.as_bytes()[0],
        Some(_) => {
            return Err(Error::new(
                Code::InvalidDocumentCsvDelimiter,
                "Invalid value in parameter `csvDelimiter`: expected a string of one character, but found the following string of 0 or more characters",
            ))
        }
    };
    if payload.iter().all(u8::is_ascii_whitespace) {
        return Err(Error::new(
            Code::MissingPayload,
            format!("A {} payload is missing.", format.name()),
        ));
    }
    match format {
        Format::Json => write_json(payload, out),
        Format::Ndjson => write_ndjson(payload, out),
        Format::Csv => write_csv(payload, delimiter, out),
    }
}

/// Reads a staged NDJSON file back, one document at a time.
pub fn read_staged(path: &Path, mut f: impl FnMut(Map<String, Value>) -> Result<()>) -> Result<()> {
    let bytes = fs::read(path).map_err(|e| missing_or_io(path, e))?;
    for line in bytes.split(|&b| b == b'\n') {
        if line.is_empty() {
            continue;
        }
        let doc: Map<String, Value> = serde_json::from_slice(line)
            .map_err(|e| Error::internal(format!("corrupted payload file: {e}")))?;
        f(doc)?;
    }
    Ok(())
}

pub(crate) use api_types::io_error;

fn malformed(format: Format, detail: impl std::fmt::Display) -> Error {
    let detail = truncate_middle(&detail.to_string(), 200);
    Error::new(
        Code::MalformedPayload,
        format!(
            "The `{}` payload provided is malformed. `{detail}`.",
            format.name()
        ),
    )
}

fn truncate_middle(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max / 2).collect();
    let tail: String = s
        .chars()
        .rev()
        .take(max / 2)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("{head}...{tail}")
}

/// Meilisearch's opening of every error of a JSON payload of documents.
macro_rules! serialize {
    () => {
        "Couldn't serialize document value"
    };
}
const NOT_DOCUMENTS: &str = concat!(
    serialize!(),
    ": data are neither an object nor a list of objects"
);

fn write_doc(out: &mut impl Write, doc: &Map<String, Value>) -> Result<()> {
    serde_json::to_writer(&mut *out, doc).map_err(|e| Error::internal(e.to_string()))?;
    out.write_all(b"\n").map_err(io_error)
}

/// A JSON body: one object, or an array of objects, streamed element by element.
fn write_json(payload: &[u8], out: &mut impl Write) -> Result<u64> {
    let first = payload.iter().find(|b| !b.is_ascii_whitespace()).copied();
    let mut de = serde_json::Deserializer::from_slice(payload);
    let count = match first {
        Some(b'{') => {
            let doc: Map<String, Value> =
                serde::Deserialize::deserialize(&mut de).map_err(json_error)?;
            write_doc(out, &doc)?;
            1
        }
        Some(b'[') => {
            let mut sink = ArraySink {
                out,
                count: 0,
                error: None,
            };
            match (&mut de).deserialize_seq(&mut sink) {
                Ok(()) => sink.count,
                Err(e) => return Err(sink.error.take().unwrap_or_else(|| json_error(e))),
            }
        }
        _ => {
            // Either not JSON at all, or a JSON value that is not documents.
            return match serde_json::from_slice::<serde::de::IgnoredAny>(payload) {
                Ok(_) => Err(malformed(Format::Json, NOT_DOCUMENTS)),
                Err(e) => Err(json_error(e)),
            };
        }
    };
    de.end().map_err(json_error)?;
    Ok(count)
}

/// A JSON payload that is not documents, or not JSON: Meilisearch's words for both start with
/// "Couldn't serialize document value".
fn json_error(e: serde_json::Error) -> Error {
    if e.classify() == serde_json::error::Category::Data {
        malformed(Format::Json, NOT_DOCUMENTS)
    } else {
        malformed(Format::Json, format!(concat!(serialize!(), ": {}"), e))
    }
}

struct ArraySink<'a, W: Write> {
    out: &'a mut W,
    count: u64,
    error: Option<Error>,
}

impl<'de, W: Write> Visitor<'de> for &mut ArraySink<'_, W> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(doc) = seq.next_element::<Map<String, Value>>()? {
            if let Err(e) = write_doc(self.out, &doc) {
                self.error = Some(e);
                return Err(serde::de::Error::custom("write failed"));
            }
            self.count += 1;
        }
        Ok(())
    }
}

impl<'de, W: Write> DeserializeSeed<'de> for &mut ArraySink<'_, W> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

/// NDJSON: one object per non-blank line.
fn write_ndjson(payload: &[u8], out: &mut impl Write) -> Result<u64> {
    let mut count = 0;
    let stream = serde_json::Deserializer::from_slice(payload).into_iter::<Value>();
    for value in stream {
        match value {
            Ok(Value::Object(doc)) => {
                write_doc(out, &doc)?;
                count += 1;
            }
            Ok(_) => return Err(malformed(Format::Ndjson, NOT_DOCUMENTS)),
            Err(e) => return Err(malformed(Format::Ndjson, e)),
        }
    }
    Ok(count)
}

#[derive(Clone, Copy)]
enum CsvType {
    String,
    Number,
    Boolean,
}

/// CSV: a header row (with optional `:number`, `:boolean`, `:string` types), then one document per row.
fn write_csv(payload: &[u8], delimiter: u8, out: &mut impl Write) -> Result<u64> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(true)
        .flexible(false)
        .from_reader(payload);
    let headers = reader
        .headers()
        .map_err(|e| malformed(Format::Csv, e))?
        .clone();
    let columns: Vec<(String, CsvType)> = headers
        .iter()
        .map(|h| match h.rsplit_once(':') {
            Some((name, "number")) => (name.to_string(), CsvType::Number),
            Some((name, "boolean")) => (name.to_string(), CsvType::Boolean),
            Some((name, "string")) => (name.to_string(), CsvType::String),
            _ => (h.to_string(), CsvType::String),
        })
        .collect();
    let mut count = 0;
    for (row, record) in reader.records().enumerate() {
        let record = record.map_err(|e| malformed(Format::Csv, e))?;
        let mut doc = Map::with_capacity(columns.len());
        for ((name, ty), cell) in columns.iter().zip(record.iter()) {
            let value = if cell.is_empty() {
                Value::Null
            } else {
                match ty {
                    CsvType::String => Value::String(cell.to_string()),
                    CsvType::Number => parse_csv_number(cell.trim()).ok_or_else(|| {
                        malformed(Format::Csv, format!("Error parsing number {cell:?} at line {}: invalid float literal", row + 2))
                    })?,
                    CsvType::Boolean => match cell.trim() {
                        "true" => Value::Bool(true),
                        "false" => Value::Bool(false),
                        _ => {
                            return Err(malformed(
                                Format::Csv,
                                format!("Error parsing boolean {cell:?} at line {}: provided string was not `true` or `false`", row + 2),
                            ))
                        }
                    },
                }
            };
            doc.insert(name.clone(), value);
        }
        write_doc(out, &doc)?;
        count += 1;
    }
    Ok(count)
}

fn parse_csv_number(s: &str) -> Option<Value> {
    if let Ok(i) = s.parse::<i64>() {
        return Some(Value::from(i));
    }
    let f: f64 = s.parse().ok()?;
    serde_json::Number::from_f64(f).map(Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(payload: &str, format: Format) -> Result<(u64, String)> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.ndjson");
        let (n, _) = stage_documents(payload.as_bytes(), format, None, &path)?;
        Ok((n, fs::read_to_string(&path).unwrap()))
    }

    #[test]
    fn json_object_and_array() {
        assert_eq!(
            stage(r#"{"id":1}"#, Format::Json).unwrap(),
            (1, "{\"id\":1}\n".into())
        );
        assert_eq!(
            stage(r#" [ {"id":1,"a":"x"}, {"id":2} ] "#, Format::Json)
                .unwrap()
                .0,
            2
        );
        assert_eq!(stage("[]", Format::Json).unwrap().0, 0);
    }

    #[test]
    fn json_errors() {
        assert_eq!(
            stage("", Format::Json).unwrap_err().code,
            Code::MissingPayload
        );
        assert_eq!(
            stage("  \n", Format::Ndjson).unwrap_err().message,
            "A ndjson payload is missing."
        );
        let e = stage("[1,2]", Format::Json).unwrap_err();
        assert_eq!(e.code, Code::MalformedPayload);
        assert!(
            e.message
                .contains("neither an object nor a list of objects"),
            "{}",
            e.message
        );
        assert_eq!(
            stage("{\"id\":", Format::Json).unwrap_err().code,
            Code::MalformedPayload
        );
        assert_eq!(
            stage("\"str\"", Format::Json).unwrap_err().code,
            Code::MalformedPayload
        );
        assert_eq!(
            stage("[{\"id\":1}] x", Format::Json).unwrap_err().code,
            Code::MalformedPayload
        );
    }

    #[test]
    fn deep_nesting_is_malformed_not_a_crash() {
        let deep = format!(
            "{{\"id\":1,\"a\":{}{}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert_eq!(
            stage(&deep, Format::Json).unwrap_err().code,
            Code::MalformedPayload
        );
    }

    #[test]
    fn ndjson() {
        let (n, out) = stage("{\"id\":1}\n\n{\"id\": 2}\n", Format::Ndjson).unwrap();
        assert_eq!(n, 2);
        assert_eq!(out, "{\"id\":1}\n{\"id\":2}\n");
        assert_eq!(
            stage("{\"id\":1}\n[1]", Format::Ndjson).unwrap_err().code,
            Code::MalformedPayload
        );
    }

    #[test]
    fn csv_typed_headers() {
        let (n, out) = stage(
            "id:number,name,ok:boolean,price:number\n1,a,true,1.5\n2,,false,\n",
            Format::Csv,
        )
        .unwrap();
        assert_eq!(n, 2);
        assert_eq!(out, "{\"id\":1,\"name\":\"a\",\"ok\":true,\"price\":1.5}\n{\"id\":2,\"name\":null,\"ok\":false,\"price\":null}\n");
        assert_eq!(
            stage("id:number\nabc\n", Format::Csv).unwrap_err().code,
            Code::MalformedPayload
        );
        assert_eq!(
            stage("id,a\n1\n", Format::Csv).unwrap_err().code,
            Code::MalformedPayload
        );
    }

    #[test]
    fn csv_delimiter() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.ndjson");
        assert_eq!(
            stage_documents(b"id;name\n1;x\n", Format::Csv, Some(";"), &path)
                .unwrap()
                .0,
            1
        );
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "{\"id\":\"1\",\"name\":\"x\"}\n"
        );
        let e = stage_documents(b"id\n1\n", Format::Csv, Some("ab"), &path).unwrap_err();
        assert_eq!(e.code, Code::InvalidDocumentCsvDelimiter);
    }

    #[test]
    fn a_staged_file_cut_short_or_changed_fails_its_check() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.ndjson");
        let (n, check) = stage_documents(
            br#"[{"id":1},{"id":2},{"id":3}]"#,
            Format::Json,
            None,
            &path,
        )
        .unwrap();
        assert_eq!(n, 3);
        assert_eq!(check.bytes, fs::metadata(&path).unwrap().len());
        verify_staged(&path, &check).unwrap();

        let whole = fs::read(&path).unwrap();
        // Cut at a line end: what is left still parses, as two documents.
        fs::write(&path, &whole[..whole.len() - 9]).unwrap();
        let e = verify_staged(&path, &check).unwrap_err();
        assert_eq!(e.code, Code::InvalidStoreFile);
        assert!(
            e.message.contains("holds 18 bytes where 27"),
            "{}",
            e.message
        );

        let mut changed = whole.clone();
        changed[7] = b'7';
        fs::write(&path, &changed).unwrap();
        let e = verify_staged(&path, &check).unwrap_err();
        assert!(e.message.contains("checksum"), "{}", e.message);

        fs::remove_file(&path).unwrap();
        assert_eq!(
            verify_staged(&path, &check).unwrap_err().code,
            Code::TaskFileNotFound
        );
    }
}
