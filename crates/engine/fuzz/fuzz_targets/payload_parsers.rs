//! Fuzzes the document payload parsers (JSON, NDJSON, CSV with two delimiters): every input
//! either converts to canonical NDJSON, one JSON object per line and as many lines as the
//! reported count, or is refused with an error code of the table. Any panic is a finding.
//!
//!   cd crates/engine/fuzz && cargo fuzz run payload_parsers -- -max_total_time=600
#![no_main]

use engine::payload::{to_ndjson, Format};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn check(data: &[u8], format: Format, delimiter: Option<&str>) {
    let mut out = Vec::new();
    match to_ndjson(data, format, delimiter, &mut out) {
        Ok(count) => {
            let text = std::str::from_utf8(&out).expect("staged NDJSON is UTF-8");
            let mut lines = 0u64;
            for line in text.lines() {
                let doc: Value = serde_json::from_str(line).expect("each staged line is JSON");
                assert!(doc.is_object(), "a staged line is not an object: {line}");
                lines += 1;
            }
            assert_eq!(lines, count, "count disagrees with the staged lines");
        }
        Err(e) => {
            assert_ne!(
                e.code, api_types::Code::Internal,
                "a payload answered an internal error: {e:?}"
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    check(data, Format::Json, None);
    check(data, Format::Ndjson, None);
    check(data, Format::Csv, None);
    check(data, Format::Csv, Some(";"));
});
