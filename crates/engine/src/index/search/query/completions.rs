//! Prefix completions of the query's last word (`prefixSearch`): every indexed word it
//! starts, as Meilisearch takes them. A prefix of [`MARKED_PREFIX_BYTES`] is one indexed term
//! standing for all of its words ([`prefix_marker`]); a longer one, which starts far fewer
//! words, expands to the first [`PREFIX_EXPANSIONS`] of them in byte order. A one-byte prefix
//! (one letter typed) is not marked, as its marker would cost about as much as the words
//! themselves: it takes its [`ONE_BYTE_EXPANSIONS`] most frequent words.

use api_types::{Error, Result};
use tantivy::Term;

use crate::index::text::{prefix_marker, MARKED_PREFIX_BYTES};
use crate::index::{tv, Index};
use crate::settings::Settings;

/// How many words a prefix longer than [`MARKED_PREFIX_BYTES`] expands to, at most: the
/// first in byte order (Meilisearch's bound).
const PREFIX_EXPANSIONS: usize = 1_000;
/// How many words a one-byte prefix expands to (the most frequent).
const ONE_BYTE_EXPANSIONS: usize = 50;
/// How many dictionary entries a one-byte prefix reads per segment, at most.
const ONE_BYTE_SCAN: usize = 50_000;

/// Whether `prefix` is completed by its [`prefix_marker`] term.
pub(crate) fn is_marked(prefix: &str) -> bool {
    MARKED_PREFIX_BYTES.contains(&prefix.len())
}

/// The completions of `prefix` taken from `found` (words with their document frequencies):
/// the most frequent for a one-byte prefix, else the first in byte order.
fn taken(prefix: &str, mut found: Vec<(String, u64)>) -> Vec<(String, u64)> {
    if prefix.len() < *MARKED_PREFIX_BYTES.start() {
        found.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        found.truncate(ONE_BYTE_EXPANSIONS);
    } else {
        found.sort_unstable();
        found.truncate(PREFIX_EXPANSIONS);
    }
    found
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

    /// The indexed words starting with `prefix` (the word itself aside) it is completed
    /// with, in the order [`taken`] gives them, with their document frequencies.
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
            let limit = match prefix.len() < *MARKED_PREFIX_BYTES.start() {
                true => ONE_BYTE_SCAN,
                false => PREFIX_EXPANSIONS,
            };
            let mut read = 0;
            while read < limit && stream.advance() {
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
        let found = freq
            .into_iter()
            .filter_map(|(k, n)| Some((String::from_utf8(k).ok()?, n)))
            .collect();
        Ok(taken(prefix, found))
    }
}

/// The completions of `prefix` one instance holding several instances' words would take:
/// frequencies added per word.
pub(crate) fn merge_completions(
    prefix: &str,
    parts: impl IntoIterator<Item = Vec<(String, u64)>>,
) -> Vec<String> {
    let mut freq: std::collections::HashMap<String, u64> = Default::default();
    for (w, n) in parts.into_iter().flatten() {
        *freq.entry(w).or_default() += n;
    }
    let found = taken(prefix, freq.into_iter().collect());
    found.into_iter().map(|(w, _)| w).collect()
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
