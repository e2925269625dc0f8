//! Prefix completions of the query's last word (`prefixSearch`): the most frequent indexed
//! words it starts.

use api_types::{Error, Result};
use serde_json::Value;
use tantivy::Term;

use crate::index::{tv, Index};

/// How many completions a prefix expands to (the most frequent ones).
const PREFIX_EXPANSIONS: usize = 50;
/// How many dictionary entries a prefix scan reads per segment, at most.
const PREFIX_SCAN: usize = 50_000;

/// Whether the index searches the query's last word as a prefix (`prefixSearch`).
pub(crate) fn prefix_search(settings: Option<&Value>) -> bool {
    settings.is_none_or(|s| s["prefixSearch"].as_str() != Some("disabled"))
}

impl Index {
    /// The most frequent indexed words starting with `prefix` (the word itself aside).
    pub(crate) fn completions(
        &self,
        searcher: &tantivy::Searcher,
        prefix: &str,
    ) -> Result<Vec<Term>> {
        let mut freq: std::collections::HashMap<Vec<u8>, u64> = Default::default();
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(self.fields.words).map_err(tv)?;
            let mut stream = words_from(&inverted, prefix.as_bytes())?;
            let mut read = 0;
            while stream.advance() && read < PREFIX_SCAN {
                let key = stream.key();
                if !key.starts_with(prefix.as_bytes()) {
                    break;
                }
                if key.len() > prefix.len() {
                    *freq.entry(key.to_vec()).or_default() += stream.value().doc_freq as u64;
                }
                read += 1;
            }
        }
        let mut found: Vec<(Vec<u8>, u64)> = freq.into_iter().collect();
        found.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        found.truncate(PREFIX_EXPANSIONS);
        Ok(found
            .into_iter()
            .filter_map(|(k, _)| String::from_utf8(k).ok())
            .map(|w| Term::from_field_text(self.fields.words, &w))
            .collect())
    }
}

/// The indexed words of a segment from `start` on, in byte order.
pub(super) fn words_from<'a>(
    inverted: &'a tantivy::InvertedIndexReader,
    start: &[u8],
) -> Result<tantivy::termdict::TermStreamer<'a>> {
    inverted
        .terms()
        .range()
        .ge(start)
        .into_stream()
        .map_err(|e| Error::internal(e.to_string()))
}
