//! Prefix completions of the query's last word (`prefixSearch`). A prefix of
//! [`MARKED_PREFIX_BYTES`] is one indexed term standing for every word it starts
//! ([`prefix_marker`]), as Meilisearch's prefix databases take them all. Any other prefix
//! expands to its [`PREFIX_EXPANSIONS`] most frequent words: one or two bytes, whose markers
//! would hold nearly every word's positions again, and a prefix over 4 bytes, a whole word
//! typed more often than not, where a union of every word it starts (Meilisearch takes the
//! first 1,000 in byte order) would make the commonest one-word queries slow.

use api_types::{Error, Result};
use tantivy::Term;

use crate::index::text::{prefix_marker, MARKED_PREFIX_BYTES};
use crate::index::{tv, Index};
use crate::settings::Settings;

/// How many completions an unmarked prefix expands to (the most frequent ones).
const PREFIX_EXPANSIONS: usize = 50;
/// How many dictionary entries an unmarked prefix scan reads per segment, at most.
const PREFIX_SCAN: usize = 50_000;

/// Whether `prefix` is completed by its [`prefix_marker`] term.
pub(crate) fn is_marked(prefix: &str) -> bool {
    MARKED_PREFIX_BYTES.contains(&prefix.len())
}

/// Completions in the order they are taken: most frequent first, then in byte order.
fn sort_completions(found: &mut [(String, u64)]) {
    found.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
}

/// Whether the index searches the query's last word as a prefix (`prefixSearch`).
pub(crate) fn prefix_search(settings: &Settings) -> bool {
    settings.prefix_search()
}

impl Index {
    /// The terms standing for the indexed words `prefix` starts (the word itself aside).
    pub(crate) fn completions(
        &self,
        searcher: &tantivy::Searcher,
        prefix: &str,
    ) -> Result<Vec<Term>> {
        if is_marked(prefix) {
            let marker = prefix_marker(prefix);
            return Ok(vec![Term::from_field_text(self.fields.words, &marker)]);
        }
        Ok(self
            .completion_candidates(searcher, prefix)?
            .into_iter()
            .take(PREFIX_EXPANSIONS)
            .map(|(w, _)| Term::from_field_text(self.fields.words, &w))
            .collect())
    }

    /// Every indexed word starting with `prefix` (the word itself aside) with its document
    /// frequency, most frequent first (then in byte order).
    pub(crate) fn completion_candidates(
        &self,
        searcher: &tantivy::Searcher,
        prefix: &str,
    ) -> Result<Vec<(String, u64)>> {
        let mut freq: std::collections::HashMap<Vec<u8>, u64> = Default::default();
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(self.fields.words).map_err(tv)?;
            let mut stream = words_from(&inverted, prefix.as_bytes())?;
            let mut read = 0;
            while read < PREFIX_SCAN && stream.advance() {
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
        let mut found: Vec<(String, u64)> = freq
            .into_iter()
            .filter_map(|(k, n)| Some((String::from_utf8(k).ok()?, n)))
            .collect();
        sort_completions(&mut found);
        Ok(found)
    }
}

/// The completions one instance holding several instances' words would take: frequencies
/// added per word.
pub(crate) fn merge_completions(
    parts: impl IntoIterator<Item = Vec<(String, u64)>>,
) -> Vec<String> {
    let mut freq: std::collections::HashMap<String, u64> = Default::default();
    for (w, n) in parts.into_iter().flatten() {
        *freq.entry(w).or_default() += n;
    }
    let mut found: Vec<(String, u64)> = freq.into_iter().collect();
    sort_completions(&mut found);
    found
        .into_iter()
        .take(PREFIX_EXPANSIONS)
        .map(|(w, _)| w)
        .collect()
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
