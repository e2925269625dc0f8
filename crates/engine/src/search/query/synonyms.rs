//! Synonyms, as the `synonyms` setting maps them: a key of one, two or three words adds
//! its values to the query words it matches, as alternatives as good as the words themselves.

use tantivy::Term;

use super::group::Group;
use super::parse::plain_words;
use crate::search::format;
use crate::settings::Settings;
use crate::tokens;

/// Adds to `groups` (at query `positions`) the synonyms their words have, and the synonym
/// words to `words` for highlighting.
pub(super) fn add_synonyms(
    analyzer: &tokens::Analyzer,
    settings: &Settings,
    groups: &mut [Group],
    positions: &[u32],
    words: &mut [format::QueryWord],
    term: impl Fn(&str) -> Term,
) {
    // Synonyms, as the `synonyms` setting maps them (keys compared as their normalized
    // words, tokenized once per query). A key of two or three words matches as many
    // consecutive query words; each of them then also matches the synonyms.
    let map = &settings.synonyms;
    if !map.is_empty() {
        // Keys and values as normalized words, with one tokenizer.
        let keys: Vec<(Vec<String>, Vec<Vec<String>>)> = analyzer.with(|tk| {
            map.iter()
                .map(|(k, v)| {
                    let values = v.iter().take(50).map(|v| plain_words(tk, v)).collect();
                    (plain_words(tk, k), values)
                })
                .collect()
        });
        let word_of = |g: &Group| match g {
            Group::Word { word, .. } => Some(*word),
            Group::Phrase(..) => None,
        };
        for start in 0..groups.len() {
            for len in 1..=3 {
                let end = start + len;
                if end > groups.len() {
                    break;
                }
                let Some(run): Option<Vec<usize>> =
                    groups[start..end].iter().map(word_of).collect()
                else {
                    break;
                };
                let consecutive = (start + 1..end).all(|i| positions[i] == positions[i - 1] + 1);
                if !consecutive {
                    break;
                }
                let typed: Vec<String> = run.iter().map(|w| words[*w].word.clone()).collect();
                for (_, values) in keys.iter().filter(|(k, _)| *k == typed) {
                    for seq in values {
                        if seq.is_empty() || *seq == typed {
                            continue;
                        }
                        for g in &mut groups[start..end] {
                            if let Group::Word { synonyms, word, .. } = g {
                                words[*word].synonyms.extend(seq.iter().cloned());
                                synonyms.push(seq.iter().map(|x| term(x)).collect());
                            }
                        }
                    }
                }
            }
        }
    }
}
