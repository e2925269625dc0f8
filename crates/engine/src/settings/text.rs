//! How the settings configure text analysis. The tokenizer ([`crate::tokens`]) takes plain
//! lists and knows nothing of the settings; this is where an index's settings become them.

use super::{LocalizedAttributeRule, Settings};
use crate::tokens::{Analyzer, TextOptions};

impl Settings {
    /// The lists tokenization depends on: `stopWords`, `separatorTokens`,
    /// `nonSeparatorTokens` and `dictionary`.
    fn text_options(&self) -> TextOptions<'_> {
        TextOptions {
            stop_words: &self.stop_words,
            separators: &self.separator_tokens,
            non_separators: &self.non_separator_tokens,
            dictionary: &self.dictionary,
        }
    }

    /// The analyzer that cuts this index's documents and queries.
    pub(crate) fn analyzer(&self) -> Analyzer {
        Analyzer::new(self.text_options())
    }

    /// The highlighter's analyzer: the same without stop words (they are highlighted).
    pub(crate) fn highlighter(&self) -> Analyzer {
        Analyzer::for_highlighting(self.text_options())
    }

    /// The settings tokenization depends on, each list sorted, and the `localizedAttributes`
    /// rules: a change of it means reindexing.
    pub(crate) fn text_settings(&self) -> ([Vec<String>; 4], Vec<LocalizedAttributeRule>) {
        let lists = [
            &self.stop_words,
            &self.separator_tokens,
            &self.non_separator_tokens,
            &self.dictionary,
        ]
        .map(|list| {
            let mut list = list.clone();
            list.sort();
            list
        });
        let rules = self.localized_attributes.clone().unwrap_or_default();
        (lists, rules)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::tokens::words;

    fn lemmas(settings: Value, text: &str) -> Vec<(String, u32, bool)> {
        let a = Settings::from_stored(Some(&settings)).analyzer();
        a.with(|t| {
            words(t, text)
                .into_iter()
                .map(|w| (w.text, w.position, w.stop))
                .collect()
        })
    }

    #[test]
    fn stop_words_are_case_sensitive_and_keep_their_position() {
        let got = lemmas(json!({"stopWords": ["the"]}), "the cat The dog");
        assert_eq!(
            got,
            [
                ("the".to_string(), 0, true),
                ("cat".to_string(), 1, false),
                ("the".to_string(), 2, false),
                ("dog".to_string(), 3, false)
            ]
        );
    }

    #[test]
    fn separator_settings_and_dictionary() {
        let got = lemmas(json!({"nonSeparatorTokens": ["-"]}), "bien-sur");
        assert_eq!(got[0].0, "bien-sur");
        let got = lemmas(json!({"separatorTokens": ["x"]}), "axb");
        let texts: Vec<_> = got.iter().map(|(t, _, _)| t.as_str()).collect();
        assert_eq!(texts, ["a", "b"]);
        let got = lemmas(json!({"dictionary": ["J. R. R."]}), "J. R. R. Tolkien");
        assert_eq!(got[0].0, "j. r. r.");
        assert_eq!(got[1].0, "tolkien");
    }
}
