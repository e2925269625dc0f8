//! Prefix completions of the query's last word (`prefixSearch`): every indexed word it
//! starts, as Meilisearch takes them. A prefix of at most [`MARKED_PREFIX_BYTES`] is one
//! indexed term standing for all of its words ([`prefix_marker`]); a longer one, which starts
//! far fewer words, expands to the first [`PREFIX_EXPANSIONS`] of them in byte order.

use api_types::{Error, Result};
use tantivy::Term;

use crate::index::text::{prefix_marker, MARKED_PREFIX_BYTES};
use crate::index::{tv, Index};
use crate::settings::Settings;

/// How many words a prefix longer than [`MARKED_PREFIX_BYTES`] expands to, at most: the
/// first in byte order (Meilisearch's bound).
const PREFIX_EXPANSIONS: usize = 1_000;

/// Whether `prefix` is completed by its [`prefix_marker`] term.
pub(crate) fn is_marked(prefix: &str) -> bool {
    prefix.len() <= MARKED_PREFIX_BYTES
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
            .map(|(w, _)| Term::from_field_text(self.fields.words, &w))
            .collect())
    }

    /// The first [`PREFIX_EXPANSIONS`] indexed words starting with `prefix` (the word itself
    /// aside) in byte order, with their document frequencies.
    pub(crate) fn completion_candidates(
        &self,
        searcher: &tantivy::Searcher,
        prefix: &str,
    ) -> Result<Vec<(String, u64)>> {
        let mut freq: std::collections::HashMap<Vec<u8>, u64> = Default::default();
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(self.fields.words).map_err(tv)?;
            let mut stream = words_from(&inverted, prefix.as_bytes())?;
            // The union's first words in byte order are among each segment's first.
            let mut read = 0;
            while read < PREFIX_EXPANSIONS && stream.advance() {
                let key = stream.key();
                if !key.starts_with(prefix.as_bytes()) {
                    break;
                }
                if key.len() > prefix.len() {
                    *freq.entry(key.to_vec()).or_default() += stream.value().doc_freq as u64;
                    read += 1;
                }
            }
        }
        let mut found: Vec<(String, u64)> = freq
            .into_iter()
            .filter_map(|(k, n)| Some((String::from_utf8(k).ok()?, n)))
            .collect();
        found.sort_unstable();
        found.truncate(PREFIX_EXPANSIONS);
        Ok(found)
    }
}

/// The completions one instance holding several instances' words would take: the first of
/// their union in byte order.
pub(crate) fn merge_completions(
    parts: impl IntoIterator<Item = Vec<(String, u64)>>,
) -> Vec<String> {
    let all: std::collections::BTreeSet<String> =
        parts.into_iter().flatten().map(|(w, _)| w).collect();
    all.into_iter().take(PREFIX_EXPANSIONS).collect()
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
