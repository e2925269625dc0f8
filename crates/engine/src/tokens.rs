//! Text analysis with charabia: the same tokenizer cuts documents at indexing, queries at
//! search time and values at highlighting.
//!
//! Words are charabia's normalized lemmas (lowercased, diacritics removed for the scripts
//! that have them). Positions follow Meilisearch: +1 from a word to the next, +8 across a
//! hard separator (`. `, `;`, `!`, `?` …), stop words consume a position without being
//! words. The tokenizer is configured by plain lists ([`TextOptions`]): the stop words
//! (matched as written: charabia classifies before lowercasing), separators added to the
//! default ones and separators removed from them, and the dictionary (strings kept whole as one
//! token). The languages charabia may detect are given per call or per analyzer
//! ([`walk_in`], [`Analyzer::in_languages`]): `languages.rs` picks them from the index's
//! `localizedAttributes` and a search's `locales`.
//!
//! A leaf: this module depends on nothing of the index (charabia and fst only). The settings
//! side turns an index's settings into its inputs (`Settings::analyzer`, in
//! `settings/text.rs`; `crates/engine/tests/leaves.rs` keeps it so).

use charabia::{Language, SeparatorKind, TokenKind, Tokenizer, TokenizerBuilder};

/// Words longer than this many bytes are not indexed (Meilisearch's limit).
pub const MAX_WORD_BYTES: usize = 250;

/// What shapes tokenization, owned, from which a [`Tokenizer`] is built.
#[derive(Default)]
pub struct Analyzer {
    stop_words: fst::Set<Vec<u8>>,
    separators: Option<Vec<String>>,
    dictionary: Option<Vec<String>>,
    /// Whether words keep the map from normalized to original bytes (highlighting only).
    char_map: bool,
    /// The languages detection may pick (a query's); `None`: any.
    languages: Option<Vec<Language>>,
}

/// The lists tokenization depends on, borrowed (an index's `stopWords`, `separatorTokens`,
/// `nonSeparatorTokens` and `dictionary`); the default is charabia's own tokenizer.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextOptions<'a> {
    /// Words classified as stop words, matched as written.
    pub stop_words: &'a [String],
    /// Separators added to charabia's default ones.
    pub separators: &'a [String],
    /// Separators removed from charabia's default ones.
    pub non_separators: &'a [String],
    /// Strings kept whole as one token.
    pub dictionary: &'a [String],
}

/// An empty set of stop words, built once (building one, even empty, allocates the set
/// builder's whole cache).
fn no_stop_words() -> fst::Set<Vec<u8>> {
    static EMPTY: std::sync::OnceLock<fst::Set<Vec<u8>>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(fst::Set::default).clone()
}

impl Analyzer {
    /// The analyzer of documents and queries.
    pub fn new(options: TextOptions) -> Analyzer {
        let mut a = Analyzer::without_stop_words(options);
        let mut stop = options.stop_words.to_vec();
        if !stop.is_empty() {
            stop.sort();
            stop.dedup();
            a.stop_words = fst::Set::from_iter(stop.iter()).unwrap_or_default();
        }
        a
    }

    /// The options but stop words.
    fn without_stop_words(options: TextOptions) -> Analyzer {
        let added = options.separators;
        let removed = options.non_separators;
        let separators = (!added.is_empty() || !removed.is_empty()).then(|| {
            let mut all: Vec<String> = charabia::separators::DEFAULT_SEPARATORS
                .iter()
                .map(|s| s.to_string())
                .filter(|s| !removed.contains(s))
                .collect();
            for s in added {
                if !all.contains(s) {
                    all.push(s.clone());
                }
            }
            all
        });
        let dictionary = Some(options.dictionary.to_vec()).filter(|d| !d.is_empty());
        Analyzer {
            stop_words: no_stop_words(),
            separators,
            dictionary,
            char_map: false,
            languages: None,
        }
    }

    /// The same, detection restricted to `languages` (a query's locales).
    pub fn in_languages(mut self, languages: Option<Vec<Language>>) -> Analyzer {
        self.languages = languages;
        self
    }

    /// The same without stop words: the highlighter's (stop words are highlighted).
    pub fn for_highlighting(options: TextOptions) -> Analyzer {
        let mut a = Analyzer::without_stop_words(options);
        a.char_map = true;
        a
    }

    /// Runs `f` with the tokenizer these options describe.
    pub fn with<R>(&self, f: impl FnOnce(&Tokenizer) -> R) -> R {
        let separators: Option<Vec<&str>> = self
            .separators
            .as_ref()
            .map(|s| s.iter().map(String::as_str).collect());
        let dictionary: Option<Vec<&str>> = self
            .dictionary
            .as_ref()
            .map(|s| s.iter().map(String::as_str).collect());
        let mut builder = TokenizerBuilder::new();
        builder.stop_words(&self.stop_words);
        if let Some(s) = &separators {
            builder.separators(s);
        }
        if let Some(d) = &dictionary {
            builder.words_dict(d);
        }
        builder.create_char_map(self.char_map);
        if let Some(l) = &self.languages {
            builder.allow_list(l);
        }
        let tokenizer = builder.build();
        f(&tokenizer)
    }
}

/// A word of a text: its normalized form, its position, its bytes in the text, whether it
/// is a stop word, and how many bytes of the original make each byte of the word (for
/// highlighting a prefix).
#[derive(Debug, Clone)]
pub struct Word {
    pub text: String,
    pub position: u32,
    pub start: usize,
    pub end: usize,
    pub stop: bool,
    char_map: Option<Vec<(u8, u8)>>,
}

impl Word {
    /// How many bytes of the original text the first `normalized` bytes of the word cover.
    pub fn original_bytes(&self, normalized: usize) -> usize {
        match &self.char_map {
            None => normalized.min(self.end - self.start),
            Some(map) => {
                let (mut norm, mut orig) = (0usize, 0usize);
                for (o, n) in map {
                    if norm >= normalized {
                        break;
                    }
                    norm += *n as usize;
                    orig += *o as usize;
                }
                orig
            }
        }
    }
}

/// A separator between words: its bytes in the text and whether it is hard.
#[derive(Debug, Clone, Copy)]
pub struct Separator {
    pub start: usize,
    pub end: usize,
    pub hard: bool,
}

/// One token of a text, as [`walk`] reports it.
pub enum Piece {
    Word(Word),
    Separator(Separator),
}

/// Cuts `text` into words and separators, positions starting at `first` (the position the
/// first word gets).
pub fn walk(tokenizer: &Tokenizer, text: &str, first: u32, f: impl FnMut(Piece)) -> u32 {
    walk_in(tokenizer, text, None, first, f)
}

/// [`walk`], detection restricted to `languages` when given (a field's locales) instead of
/// the tokenizer's own.
pub fn walk_in(
    tokenizer: &Tokenizer,
    text: &str,
    languages: Option<&[Language]>,
    first: u32,
    mut f: impl FnMut(Piece),
) -> u32 {
    let mut last: Option<u32> = None;
    let mut hard = false;
    let tokens = match languages {
        None => tokenizer.tokenize(text),
        Some(l) => tokenizer.tokenize_with_allow_list(text, Some(l)),
    };
    for token in tokens {
        let charabia::Token {
            kind,
            lemma,
            byte_start,
            byte_end,
            char_map,
            ..
        } = token;
        match kind {
            TokenKind::Separator(kind) => {
                hard |= kind == SeparatorKind::Hard;
                f(Piece::Separator(Separator {
                    start: byte_start,
                    end: byte_end,
                    hard: kind == SeparatorKind::Hard,
                }));
            }
            TokenKind::Word | TokenKind::StopWord => {
                let position = match last {
                    None => first,
                    Some(p) => p + if hard { 8 } else { 1 },
                };
                hard = false;
                last = Some(position);
                f(Piece::Word(Word {
                    text: lemma.into_owned(),
                    position,
                    start: byte_start,
                    end: byte_end,
                    stop: kind == TokenKind::StopWord,
                    char_map,
                }));
            }
            TokenKind::Unknown => {}
        }
    }
    last.unwrap_or(first)
}

/// `text` as Meilisearch stores a word of `typoTolerance.disableOnWords`: the lemmas of all its
/// tokens (separators included) by the default tokenizer, joined (`Éclair` is `eclair`).
pub fn normalized(text: &str) -> String {
    let mut builder = TokenizerBuilder::<Vec<u8>>::new();
    builder
        .build()
        .tokenize(text)
        .map(|token| token.lemma().to_string())
        .collect()
}

/// The words and separators of `text`, in order.
pub fn pieces_in(tokenizer: &Tokenizer, text: &str, languages: Option<&[Language]>) -> Vec<Piece> {
    let mut out = Vec::new();
    walk_in(tokenizer, text, languages, 0, |p| out.push(p));
    out
}

/// The words of `text` (stop words included, flagged), positions from 0.
pub fn words(tokenizer: &Tokenizer, text: &str) -> Vec<Word> {
    words_in(tokenizer, text, None)
}

/// [`words`], detection restricted to `languages` when given.
pub fn words_in(tokenizer: &Tokenizer, text: &str, languages: Option<&[Language]>) -> Vec<Word> {
    let mut out = Vec::new();
    walk_in(tokenizer, text, languages, 0, |p| {
        if let Piece::Word(w) = p {
            out.push(w)
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lemmas(options: TextOptions, text: &str) -> Vec<(String, u32, bool)> {
        let a = Analyzer::new(options);
        a.with(|t| {
            words(t, text)
                .into_iter()
                .map(|w| (w.text, w.position, w.stop))
                .collect()
        })
    }

    #[test]
    fn normalizes_and_positions_words() {
        let got = lemmas(TextOptions::default(), "Café au LAIT. Bien-sûr");
        let texts: Vec<_> = got.iter().map(|(t, _, _)| t.as_str()).collect();
        assert_eq!(texts, ["cafe", "au", "lait", "bien", "sur"]);
        let positions: Vec<_> = got.iter().map(|(_, p, _)| *p).collect();
        // `. ` is a hard separator: +8; `-` is soft: +1.
        assert_eq!(positions, [0, 1, 2, 10, 11]);
    }

    #[test]
    fn languages_choose_the_normalizers() {
        let a = Analyzer::new(TextOptions::default());
        let cut = |text: &str, languages: Option<&[Language]>| -> Vec<String> {
            a.with(|t| words_in(t, text, languages))
                .into_iter()
                .map(|w| w.text)
                .collect()
        };
        // Persian folds Arabic kaf; Swedish keeps ö; detection alone does neither.
        assert_eq!(cut("كتاب", None), ["كتاب"]);
        assert_eq!(cut("كتاب", Some(&[Language::Pes])), ["کتاب"]);
        assert_eq!(cut("Kött", None), ["kott"]);
        assert_eq!(cut("Kött", Some(&[Language::Swe])), ["kött"]);
        // Arabic splits the article; a language without a segmenter for the script does not.
        assert_eq!(cut("المكتبة", None), ["ال", "مكتبه"]);
        assert_eq!(cut("المكتبة", Some(&[Language::Jpn])), ["المكتبه"]);
        // An analyzer's own languages (a query's) apply to every text it cuts.
        let q = Analyzer::new(TextOptions::default()).in_languages(Some(vec![Language::Pes]));
        assert_eq!(q.with(|t| words(t, "يك")).remove(0).text, "یک");
    }

    #[test]
    fn prefix_of_a_normalized_word_maps_to_original_bytes() {
        let a = Analyzer::for_highlighting(TextOptions::default());
        let w = a.with(|t| words(t, "Éléphant")).remove(0);
        assert_eq!(w.text, "elephant");
        // "ele" covers "Élé": É and é take two bytes each.
        assert_eq!(w.original_bytes(3), 5);
    }

    #[test]
    fn plain_options_shape_the_tokenizer() {
        let the = ["the".to_string()];
        let dash = ["-".to_string()];
        let options = TextOptions {
            stop_words: &the,
            non_separators: &dash,
            ..TextOptions::default()
        };
        let got = lemmas(options, "the bien-sur");
        assert_eq!(
            got,
            [
                ("the".to_string(), 0, true),
                ("bien-sur".to_string(), 1, false)
            ]
        );
        // The highlighter keeps the separators but not the stop words.
        let words = Analyzer::for_highlighting(options).with(|t| words(t, "the bien-sur"));
        assert!(!words[0].stop);
        assert_eq!(words[1].text, "bien-sur");
    }
}
