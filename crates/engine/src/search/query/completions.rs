//! Prefix completions of the query's last word (`prefixSearch`). A prefix of
//! [`MARKED_PREFIX_BYTES`] is one indexed term standing for every word it starts
//! ([`prefix_marker`]), as Meilisearch's prefix databases take them all. Any other prefix
//! expands to its [`PREFIX_EXPANSIONS`] most frequent words: one or two bytes, whose markers
//! would hold nearly every word's positions again, and a prefix over 4 bytes, a whole word
//! typed more often than not, where a union of every word it starts (Meilisearch takes the
//! first 1,000 in byte order) would make the commonest one-word queries slow.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use api_types::{Error, Result};
use tantivy::Term;

use crate::index::text::{prefix_marker, MARKED_PREFIX_BYTES};
use crate::index::tv;
use crate::search::SearchContext;
use crate::settings::Settings;

/// How many completions an unmarked prefix expands to (the most frequent ones).
const PREFIX_EXPANSIONS: usize = 50;
/// How many dictionary entries an unmarked prefix scan reads per segment, at most.
const PREFIX_SCAN: usize = 50_000;

/// Whether `prefix` is completed by its [`prefix_marker`] term.
pub(crate) fn is_marked(prefix: &str) -> bool {
    MARKED_PREFIX_BYTES.contains(&prefix.len())
}

/// The order completions are taken in: most frequent first, then in byte order.
fn completion_order(a: (&[u8], u64), b: (&[u8], u64)) -> Ordering {
    b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0))
}

/// Sorts completions in the order they are taken ([`completion_order`]).
fn sort_completions(found: &mut [(String, u64)]) {
    found.sort_unstable_by(|a, b| completion_order((a.0.as_bytes(), a.1), (b.0.as_bytes(), b.1)));
}

/// Whether the index searches the query's last word as a prefix (`prefixSearch`).
pub(crate) fn prefix_search(settings: &Settings) -> bool {
    settings.prefix_search()
}

impl SearchContext<'_> {
    /// The terms standing for the indexed words `prefix` starts (the word itself aside).
    pub(crate) fn completions(
        &self,
        searcher: &tantivy::Searcher,
        prefix: &str,
    ) -> Result<Vec<Term>> {
        if is_marked(prefix) {
            let marker = prefix_marker(prefix);
            return Ok(vec![Term::from_field_text(self.fields().words, &marker)]);
        }
        Ok(self
            .completion_candidates(searcher, prefix, PREFIX_EXPANSIONS)?
            .into_iter()
            .map(|(w, _)| Term::from_field_text(self.fields().words, &w))
            .collect())
    }

    /// The `keep` indexed words starting with `prefix` (the word itself aside) that come
    /// first by [`completion_order`], with their document frequencies, in that order.
    pub(crate) fn completion_candidates(
        &self,
        searcher: &tantivy::Searcher,
        prefix: &str,
        keep: usize,
    ) -> Result<Vec<(String, u64)>> {
        let segments = searcher.segment_readers();
        let mut found: Vec<Taken> = match segments {
            // One segment lists each word once: only the best `keep` so far are kept, so a
            // short prefix starting tens of thousands of words costs no map and no sort of
            // them all.
            [segment] => {
                let inverted = segment.inverted_index(self.fields().words).map_err(tv)?;
                let mut best = Best::new(keep);
                each_completion(&inverted, prefix, |word, n| best.offer(word, n))?;
                best.0.into_vec()
            }
            // Several segments may list one word each: its frequencies are added first.
            _ => {
                let mut freq: std::collections::HashMap<Vec<u8>, u64> = Default::default();
                for segment in segments {
                    let inverted = segment.inverted_index(self.fields().words).map_err(tv)?;
                    each_completion(&inverted, prefix, |word, n| {
                        *freq.entry(word.to_vec()).or_default() += n
                    })?;
                }
                freq.into_iter().map(|(w, n)| Taken(w, n)).collect()
            }
        };
        if found.len() > keep {
            found.select_nth_unstable(keep);
            found.truncate(keep);
        }
        found.sort_unstable();
        Ok(found
            .into_iter()
            .filter_map(|Taken(k, n)| Some((String::from_utf8(k).ok()?, n)))
            .collect())
    }
}

/// Calls `f` with each word of a segment that `prefix` starts (the word itself aside) and
/// its document frequency, in byte order, reading at most [`PREFIX_SCAN`] entries.
fn each_completion(
    inverted: &tantivy::InvertedIndexReader,
    prefix: &str,
    mut f: impl FnMut(&[u8], u64),
) -> Result<()> {
    let mut stream = words_from(inverted, prefix.as_bytes())?;
    let mut read = 0;
    while read < PREFIX_SCAN && stream.advance() {
        let key = stream.key();
        if !key.starts_with(prefix.as_bytes()) {
            break;
        }
        if key.len() > prefix.len() {
            f(key, stream.value().doc_freq as u64);
        }
        read += 1;
    }
    Ok(())
}

/// A word and its frequency, ordered as [`completion_order`] takes them: the greatest is
/// the one taken last.
#[derive(PartialEq, Eq)]
struct Taken(Vec<u8>, u64);

impl Ord for Taken {
    fn cmp(&self, other: &Self) -> Ordering {
        completion_order((&self.0, self.1), (&other.0, other.1))
    }
}

impl PartialOrd for Taken {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The best `keep` words offered: a heap whose top is the one of them taken last.
struct Best(BinaryHeap<Taken>, usize);

impl Best {
    fn new(keep: usize) -> Best {
        Best(BinaryHeap::new(), keep)
    }

    fn offer(&mut self, word: &[u8], n: u64) {
        if self.0.len() < self.1 {
            self.0.push(Taken(word.to_vec(), n));
            return;
        }
        let Some(mut last) = self.0.peek_mut() else {
            return;
        };
        if completion_order((word, n), (&last.0, last.1)).is_lt() {
            last.0.clear();
            last.0.extend_from_slice(word);
            last.1 = n;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heap_keeps_the_completions_taken_first_ties_in_byte_order() {
        // Offered in byte order, as a segment lists them; 4 kept of 6.
        let mut best = Best::new(4);
        for (w, n) in [
            ("qa", 1),
            ("qb", 2),
            ("qc", 1),
            ("qd", 3),
            ("qe", 2),
            ("qf", 1),
        ] {
            best.offer(w.as_bytes(), n);
        }
        let mut kept: Vec<(String, u64)> = best
            .0
            .into_iter()
            .map(|t| (String::from_utf8(t.0).unwrap(), t.1))
            .collect();
        sort_completions(&mut kept);
        let expected = [("qd", 3), ("qb", 2), ("qe", 2), ("qa", 1)];
        assert_eq!(kept, expected.map(|(w, n)| (w.to_string(), n)));
    }
}
