//! The query text cut with charabia into parts: words and `"quoted phrases"`, each maybe
//! negated by a leading `-`, with their query positions and stop-word marks.

use crate::tokens;

/// The normalized words of `text`, stop words and separators dropped.
pub(crate) fn plain_words(tokenizer: &charabia::Tokenizer, text: &str) -> Vec<String> {
    tokens::words(tokenizer, text)
        .into_iter()
        .filter(|w| !w.stop)
        .map(|w| w.text)
        .collect()
}

/// A part of a query: a word, or a quoted phrase; `-` before it negates it.
pub(crate) struct Part {
    pub(crate) words: Vec<tokens::Word>,
    pub(crate) phrase: bool,
    pub(crate) negative: bool,
}

/// A query cut into parts, and whether it ends with a word (not a space, a quote or other
/// separator: then its last word is a prefix).
pub(crate) struct Parsed {
    pub(crate) parts: Vec<Part>,
    pub(crate) ends_with_word: bool,
}

/// Cuts a query into words and `"quoted phrases"` with charabia, each maybe negated by a `-`
/// that starts the query or follows a space. An unclosed quote runs to the end. Positions
/// are the words' query positions (stop words count; +8 across hard separators).
pub(crate) fn parse_query(tokenizer: &charabia::Tokenizer, text: &str) -> Parsed {
    let mut parts: Vec<Part> = Vec::new();
    let mut phrase: Option<Part> = None;
    let mut negative_next = false;
    let mut after_space = true;
    let mut ends_with_word = false;
    tokens::walk(tokenizer, text, 0, |piece| match piece {
        tokens::Piece::Separator(sep) => {
            ends_with_word = false;
            for c in text[sep.start..sep.end].chars() {
                if c == '"' {
                    match phrase.take() {
                        Some(p) => parts.push(p),
                        None => {
                            phrase = Some(Part {
                                words: Vec::new(),
                                phrase: true,
                                negative: negative_next,
                            })
                        }
                    }
                    negative_next = false;
                } else {
                    negative_next = c == '-' && after_space && phrase.is_none();
                }
                after_space = c.is_whitespace();
            }
        }
        tokens::Piece::Word(w) => {
            ends_with_word = true;
            after_space = false;
            match &mut phrase {
                Some(p) => p.words.push(w),
                None => parts.push(Part {
                    words: vec![w],
                    phrase: false,
                    negative: std::mem::take(&mut negative_next),
                }),
            }
        }
    });
    if let Some(p) = phrase {
        parts.push(p);
        ends_with_word = false;
    }
    Parsed {
        parts,
        ends_with_word,
    }
}
