//! Derivations pinned across the instances of a network. What a query's words match besides
//! themselves (the last word's completions, typo derivations, a split into two words) is read
//! from the dictionary, and each instance of a sharded index holds only its shard's words: left
//! alone, each would choose from its own. So a search over the network first asks every shard
//! for its [`QueryCandidates`] (the words it would choose from, with their frequencies), makes
//! the choice one index holding every word would make ([`Pins::merge`]), and sends it along
//! with the search: every shard then matches the same words.

use api_types::Result;
use serde::{Deserialize, Serialize};

use super::completions::{is_marked, merge_completions};
use super::group::Group;
use super::typos::{best_split, select_typos, TypoCandidates};
use crate::search::SearchContext;

/// At most this many completions per instance go into a merge (the most frequent).
pub(crate) const COMPLETION_CANDIDATES: usize = 10_000;

/// Completions with their document frequencies.
type Completions = Vec<(String, u64)>;

/// What one instance would derive one query word from.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WordCandidates {
    pub word: String,
    pub budget: u8,
    pub prefix: bool,
    pub typos: TypoCandidates,
    /// Per split point (a byte offset): how many documents hold the two halves side by side.
    pub splits: Vec<(usize, u64)>,
}

/// What one instance would derive a query's words from.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryCandidates {
    /// The last word, when it is completed, with its completions and their frequencies.
    pub completions: Option<(String, Completions)>,
    pub words: Vec<WordCandidates>,
}

/// The derivations of one word, chosen for every instance.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WordPins {
    pub word: String,
    pub typos: Vec<(String, u8)>,
    /// Where the word splits into two (a byte offset).
    pub split: Option<usize>,
}

/// The derivations of a query's words, chosen once for every instance of a network.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pins {
    pub completions: Option<(String, Vec<String>)>,
    pub words: Vec<WordPins>,
}

impl Pins {
    /// The choice one instance holding every instance's words would make.
    pub fn merge(parts: Vec<QueryCandidates>) -> Pins {
        let mut completions: Option<(String, Vec<Completions>)> = None;
        let mut words: Vec<(WordCandidates, Vec<TypoCandidates>)> = Vec::new();
        for part in parts {
            if let Some((prefix, found)) = part.completions {
                completions
                    .get_or_insert_with(|| (prefix, Vec::new()))
                    .1
                    .push(found);
            }
            for w in part.words {
                match words.iter_mut().find(|(c, _)| c.word == w.word) {
                    Some((c, typos)) => {
                        typos.push(w.typos);
                        for (i, n) in w.splits {
                            match c.splits.iter_mut().find(|s| s.0 == i) {
                                Some(s) => s.1 += n,
                                None => c.splits.push((i, n)),
                            }
                        }
                    }
                    None => {
                        let typos = vec![w.typos.clone()];
                        words.push((w, typos));
                    }
                }
            }
        }
        Pins {
            completions: completions.map(|(p, parts)| (p, merge_completions(parts))),
            words: words
                .into_iter()
                .map(|(mut c, typos)| {
                    c.splits.sort_unstable_by_key(|s| s.0);
                    WordPins {
                        typos: select_typos(&TypoCandidates::union(typos), c.budget, c.prefix),
                        split: best_split(&c.splits),
                        word: c.word,
                    }
                })
                .collect(),
        }
    }

    /// The pinned derivations of `word`.
    pub(crate) fn word(&self, word: &str) -> Option<&WordPins> {
        self.words.iter().find(|w| w.word == word)
    }

    /// The pinned completions of `prefix`.
    pub(crate) fn completions_of(&self, prefix: &str) -> Option<&[String]> {
        match &self.completions {
            Some((p, words)) if p == prefix => Some(words),
            _ => None,
        }
    }
}

impl SearchContext<'_> {
    /// What this index would derive the words of `text` from (see [`Pins`]).
    pub fn query_candidates(
        &self,
        text: &str,
        (matching_strategy, locales): (Option<&str>, Option<&[String]>),
    ) -> Result<QueryCandidates> {
        let terms = self.terms(text, (matching_strategy, locales), None)?;
        let mut out = QueryCandidates::default();
        for g in &terms.groups {
            let Group::Word { word, budget, .. } = g else {
                continue;
            };
            let qw = &terms.words[*word];
            // A marked prefix is one term on every instance: nothing to choose.
            if qw.prefix && !is_marked(&qw.word) {
                let found =
                    self.completion_candidates(&self.searcher, &qw.word, COMPLETION_CANDIDATES)?;
                out.completions = Some((qw.word.clone(), found));
            }
            out.words.push(WordCandidates {
                word: qw.word.clone(),
                budget: *budget,
                prefix: qw.prefix,
                typos: (*self.typo_candidates(&self.searcher, &qw.word, *budget, qw.prefix)?)
                    .clone(),
                splits: self.split_candidates(&self.searcher, &qw.word)?,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typos(one: &[&str]) -> TypoCandidates {
        TypoCandidates {
            one: one.iter().map(|s| s.to_string()).collect(),
            ..TypoCandidates::default()
        }
    }

    #[test]
    fn merged_choices_are_those_of_one_dictionary() {
        let a = QueryCandidates {
            completions: Some((
                "appl".into(),
                vec![("applz".into(), 5), ("apply".into(), 1)],
            )),
            words: vec![WordCandidates {
                word: "helloworld".into(),
                budget: 1,
                prefix: false,
                typos: typos(&["hellowarld"]),
                splits: vec![(5, 3), (6, 1)],
            }],
        };
        let b = QueryCandidates {
            completions: Some((
                "appl".into(),
                vec![("apply".into(), 9), ("applaud".into(), 2)],
            )),
            words: vec![WordCandidates {
                word: "helloworld".into(),
                budget: 1,
                prefix: false,
                typos: typos(&["hallowarld", "hellowarld"]),
                splits: vec![(5, 0), (6, 4)],
            }],
        };
        let p = Pins::merge(vec![a, b]);
        // Frequencies added per word, most frequent first.
        assert_eq!(
            p.completions_of("appl").unwrap(),
            ["apply", "applz", "applaud"]
        );
        let w = p.word("helloworld").unwrap();
        assert_eq!(
            w.typos,
            vec![("hallowarld".to_string(), 1), ("hellowarld".to_string(), 1)]
        );
        // The first instance alone splits at 5; together the pair at 6 is more frequent.
        assert_eq!(w.split, Some(6));
        assert_eq!(best_split(&[(1, 0)]), None);
        assert_eq!(best_split(&[(1, 2), (3, 2)]), Some(1));
    }
}
