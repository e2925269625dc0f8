//! What tantivy holds of a document's text: one field of listed tokens whose positions are
//! `field_id << 16 | position in the field` (milli's layout), so the ranking rules can read
//! from the postings which attribute a word is in and where; and, per field of at most
//! [`COUNTED_FIELD_WORDS`] words, its word count (`field_id << 16 | count`) for `exactness`.
//!
//! Each leaf path of the document (`a.b.c`; arrays flattened into their path) is a field,
//! identified by the index's [`FieldsMap`]. Within a field, each further value of an array
//! starts 8 positions after the previous one, so words of different values never look close.
//! Stop words take a position but are not indexed; words over 250 bytes and positions past
//! 65,535 are dropped. The first word of each field is also indexed with a marker (see
//! [`first_word_marker`]), and every word with its short prefixes (see [`prefix_marker`]).
//! Two adjacent words of the index's [`PairWords`] are also indexed as one term, documents
//! only (see [`pair_term`]), so a quoted phrase of two frequent words reads one posting list.
//!
//! [`Fields::tantivy_doc`] puts it together with the document's internal id. The words go to
//! tantivy as one string listing each token with its position ([`TokenList`]), which the
//! field's tokenizer ([`Listed`]) reads back: tantivy keeps a pre-tokenized text as JSON,
//! written and parsed again for every document, which cost a third of indexing.

use api_types::{Error, Result};
use charabia::Tokenizer;
use serde_json::{Map, Value};
use tantivy::tokenizer::Token;
use tantivy::TantivyDocument;

use super::cores::on_cores;
use super::Fields;
use crate::codec::FieldsMap;
use crate::filter::eval::within;
use crate::languages::Locales;
use crate::store::{keys, Store};
use crate::tokens::{self, Piece, MAX_WORD_BYTES};

/// Fields with at most this many words have their word count stored.
pub const COUNTED_FIELD_WORDS: u32 = 30;

/// The name of the fast field holding the short fields' word counts ([`field_length`]).
pub const LENGTHS_FIELD: &str = "lens";

/// A short field's word count as stored: `field_id << 16 | count`.
fn field_length(fid: u32, count: u32) -> u64 {
    ((fid as u64) << 16) | count as u64
}

/// The field id and word count of a stored field length (see [`field_length`]).
pub fn field_and_length(stored: u64) -> (u32, u32) {
    ((stored >> 16) as u32, (stored & 0xFFFF) as u32)
}

/// The most positions a field holds.
const MAX_POSITION: u32 = u16::MAX as u32;

/// The term marking `word` as the first word of field `fid`: the documents where a one-word
/// query scores best on `attributeRank` and `wordPosition` are those holding it for a field
/// of the best weight, so frequent words rank a small set first (see `Index::rank`). It sorts
/// before every word in the dictionary and never matches a query word.
pub fn first_word_marker(fid: u32, word: &str) -> String {
    let mut out = String::new();
    write_first_word_marker(&mut out, &fid.to_string(), word);
    out
}

/// Writes [`first_word_marker`] of the field whose id is written `fid`.
fn write_first_word_marker(out: &mut String, fid: &str, word: &str) {
    out.push('\u{1}');
    out.push_str(fid);
    out.push('\u{1}');
    out.push_str(word);
}

/// Prefixes of these many bytes are indexed as terms of their own (Meilisearch's prefix
/// databases stop at 4 bytes; one or two bytes would hold nearly every word's positions again).
pub const MARKED_PREFIX_BYTES: std::ops::RangeInclusive<usize> = 3..=4;

/// The term standing for every word that starts with `prefix` (and is longer), at the
/// positions of those words: a query's last word of [`MARKED_PREFIX_BYTES`] is
/// completed by this one term instead of a union of every word it starts. It sorts before
/// every word and never matches a query word; it is indexed as a word is (also in the
/// [`field_word`] and [`first_word_marker`] forms), so the ranking shortcuts read it as one.
pub fn prefix_marker(prefix: &str) -> String {
    let mut out = String::new();
    write_prefix_marker(&mut out, prefix);
    out
}

fn write_prefix_marker(out: &mut String, prefix: &str) {
    out.push('\u{2}');
    out.push_str(prefix);
}

/// The prefixes of `word` that get a [`prefix_marker`]: those of [`MARKED_PREFIX_BYTES`],
/// shorter than the word, ending on a character boundary.
pub fn marked_prefixes(word: &str) -> impl Iterator<Item = &str> {
    word.char_indices()
        .skip(1)
        .map(|(i, _)| i)
        .take_while(|i| i <= MARKED_PREFIX_BYTES.end())
        .filter(|i| MARKED_PREFIX_BYTES.contains(i))
        .map(move |i| &word[..i])
}

/// The term of `word` in the field-words field: the word as found in field `fid` (documents
/// only, no positions), so `attributeRank`'s best documents are read without positions.
pub fn field_word(fid: u32, word: &str) -> String {
    let mut out = String::new();
    write_field_word(&mut out, &fid.to_string(), word);
    out
}

/// Writes [`field_word`] of the field whose id is written `fid`.
fn write_field_word(out: &mut String, fid: &str, word: &str) {
    out.push_str(fid);
    out.push('\u{1}');
    out.push_str(word);
}

/// The frequent words of an index, chosen once (see [`PairWords::choose`]): wherever two of
/// them are adjacent in a field, the pair is also indexed as a term of its own in the
/// field-words field ([`pair_term`]). Every document of an index is indexed with the same
/// set, so the pair term holds exactly the documents where the phrase of the two words is
/// found; which words are in the set only decides which phrases read it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PairWords(std::collections::HashSet<String>);

/// The index's documents when its [`PairWords`] are chosen: a batch that would take it to
/// this many chooses them before it writes a document (an index smaller than this has none).
pub const PAIR_WORDS_AT: u64 = 10_000;

/// How many documents the choice reads: stored ones, and as many drawn evenly from the
/// payload of the batch choosing.
pub const PAIR_WORDS_SAMPLE: usize = 20_000;

/// A pair word is in at least this share of the documents read (in thousandths)...
const PAIR_WORD_PER_MILLE: usize = 3;

/// ... and there are at most this many (the most frequent).
const MAX_PAIR_WORDS: usize = 1_000;

impl PairWords {
    pub fn from_words(words: Vec<String>) -> PairWords {
        PairWords(words.into_iter().collect())
    }

    /// The index's pair words as `txn` holds them; `None` until they are chosen.
    pub fn stored(store: &Store, txn: &heed::RoTxn) -> Result<Option<PairWords>> {
        let Some(bytes) = store.get_meta(txn, keys::PAIR_WORDS)? else {
            return Ok(None);
        };
        let words: Vec<String> = serde_json::from_slice(bytes).map_err(Error::internal)?;
        Ok(Some(PairWords::from_words(words)))
    }

    /// The words, sorted.
    pub fn words(&self) -> Vec<String> {
        let mut words: Vec<String> = self.0.iter().cloned().collect();
        words.sort();
        words
    }

    pub fn contains(&self, word: &str) -> bool {
        self.0.contains(word)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The words in at least [`PAIR_WORD_PER_MILLE`] thousandths of `docs` (at least two
    /// documents), the [`MAX_PAIR_WORDS`] most frequent of them, cut as the index cuts them
    /// (on every core).
    pub fn choose(
        docs: &[Map<String, Value>],
        searchable: Option<&[String]>,
        analyzer: &tokens::Analyzer,
        locales: &Locales,
    ) -> PairWords {
        let counted = on_cores(docs, 256, |chunk| {
            analyzer.with(|tokenizer| {
                let mut freq: std::collections::HashMap<String, usize> = Default::default();
                let mut seen: std::collections::HashSet<String> = Default::default();
                for doc in chunk {
                    searchable_leaves(doc, searchable, |p, leaf| {
                        let text = leaf_text(leaf);
                        let languages = locales.of_field(p);
                        tokens::walk_in(tokenizer, &text, languages, 0, |piece| {
                            let Piece::Word(w) = piece else { return };
                            if !w.stop && w.text.len() <= MAX_WORD_BYTES {
                                seen.insert(w.text);
                            }
                        });
                    });
                    for w in seen.drain() {
                        *freq.entry(w).or_default() += 1;
                    }
                }
                freq
            })
        });
        let mut freq = std::collections::HashMap::<String, usize>::new();
        for part in counted {
            for (w, n) in part {
                *freq.entry(w).or_default() += n;
            }
        }
        let least = (docs.len() * PAIR_WORD_PER_MILLE).div_ceil(1000).max(2);
        let mut frequent: Vec<(String, usize)> =
            freq.into_iter().filter(|(_, n)| *n >= least).collect();
        frequent.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        frequent.truncate(MAX_PAIR_WORDS);
        PairWords(frequent.into_iter().map(|(w, _)| w).collect())
    }
}

/// The term of two adjacent [`PairWords`] `a` then `b`, in the field-words field. It sorts
/// before every word and never matches a query word.
pub fn pair_term(a: &str, b: &str) -> String {
    let mut out = String::new();
    write_pair_term(&mut out, a, b);
    out
}

fn write_pair_term(out: &mut String, a: &str, b: &str) {
    out.push('\u{3}');
    out.push_str(a);
    out.push('\u{3}');
    out.push_str(b);
}

/// The name the words fields' tokenizer ([`Listed`]) is registered under.
pub const LISTED_TOKENIZER: &str = "listed";

/// Tokens and their positions, written one after another into one string that [`Listed`]
/// reads back: each is its position (8 hex digits), its length in bytes (4 hex digits), then
/// its text.
#[derive(Default)]
struct TokenList {
    /// The tokens' texts, back to back.
    texts: String,
    /// Per token: its position and where its text is in `texts`.
    tokens: Vec<(u32, u32, u32)>,
}

impl TokenList {
    /// Adds the token `write` writes, at `position`.
    fn push(&mut self, position: u32, write: impl FnOnce(&mut String)) {
        let start = self.texts.len() as u32;
        write(&mut self.texts);
        self.tokens.push((position, start, self.texts.len() as u32));
    }

    /// The listed string, the tokens in position order (tantivy records each term's
    /// positions in the order they come).
    fn encode(mut self) -> String {
        self.tokens.sort_by_key(|t| t.0);
        let mut out = String::with_capacity(self.texts.len() + 12 * self.tokens.len());
        for (position, start, end) in self.tokens {
            push_hex(&mut out, position, 8);
            push_hex(&mut out, end - start, 4);
            out.push_str(&self.texts[start as usize..end as usize]);
        }
        out
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Writes the `width` low hex digits of `n`.
fn push_hex(out: &mut String, n: u32, width: u32) {
    for i in (0..width).rev() {
        out.push(HEX[((n >> (4 * i)) & 0xf) as usize] as char);
    }
}

/// Reads `width` hex digits from the start of `text`.
fn read_hex(text: &str, width: usize) -> Option<u32> {
    let digits = text.get(..width)?;
    u32::from_str_radix(digits, 16).ok()
}

/// The tokenizer of the words fields: reads back the tokens a [`TokenList`] wrote.
#[derive(Clone, Default)]
pub struct Listed {
    token: Token,
}

/// The tokens of one listed string.
pub struct ListedStream<'a> {
    rest: &'a str,
    token: &'a mut Token,
}

impl tantivy::tokenizer::Tokenizer for Listed {
    type TokenStream<'a> = ListedStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> ListedStream<'a> {
        self.token.reset();
        ListedStream {
            rest: text,
            token: &mut self.token,
        }
    }
}

impl tantivy::tokenizer::TokenStream for ListedStream<'_> {
    fn advance(&mut self) -> bool {
        let (Some(position), Some(len)) = (
            read_hex(self.rest, 8),
            self.rest.get(8..).and_then(|r| read_hex(r, 4)),
        ) else {
            return false;
        };
        let Some(text) = self.rest.get(12..12 + len as usize) else {
            return false;
        };
        self.token.position = position as usize;
        self.token.text.clear();
        self.token.text.push_str(text);
        self.rest = &self.rest[12 + len as usize..];
        true
    }

    fn token(&self) -> &Token {
        self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

/// How documents are cut into words: the index's tokenizer, each field's languages, and the
/// index's [`PairWords`].
#[derive(Clone, Copy)]
pub struct Cutter<'a, 't> {
    pub tokenizer: &'a Tokenizer<'t>,
    pub locales: &'a Locales,
    pub pairs: &'a PairWords,
}

/// The text of one document, ready for tantivy.
pub struct DocText {
    /// The words with their positions, listed (see [`TokenList`]).
    pub words: String,
    /// [`field_word`] terms, listed.
    pub field_words: String,
    pub lens: Vec<u64>,
}

/// Calls `f` with each leaf (path, value) of `value` found under `path`, arrays flattened.
fn leaves<'a>(path: &mut String, value: &'a Value, f: &mut impl FnMut(&str, &'a Value)) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
                leaves(path, v, f);
                path.truncate(len);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| leaves(path, v, f)),
        Value::Null => {}
        leaf => f(path, leaf),
    }
}

/// The text of a leaf value: a string as it is, a number or boolean as JSON writes it.
fn leaf_text(leaf: &Value) -> std::borrow::Cow<'_, str> {
    match leaf {
        Value::String(s) => std::borrow::Cow::Borrowed(s.as_str()),
        other => std::borrow::Cow::Owned(other.to_string()),
    }
}

/// Calls `f` with each searchable leaf (path, value) of `doc`.
fn searchable_leaves<'a>(
    doc: &'a Map<String, Value>,
    searchable: Option<&[String]>,
    mut f: impl FnMut(&str, &'a Value),
) {
    let mut path = String::new();
    for (k, v) in doc {
        // Vectors and geo positions are never searched as words (as on Meilisearch).
        if k == "_vectors" || k == "_geo" || k == "_geojson" {
            continue;
        }
        path.clear();
        path.push_str(k);
        leaves(&mut path, v, &mut |p, leaf| {
            if searchable.is_none_or(|s| s.iter().any(|a| within(p, a))) {
                f(p, leaf);
            }
        });
    }
}

/// Gives every searchable leaf path of `doc` a field id (before [`doc_text`], which may run
/// on several threads at once).
pub fn assign_fields(
    doc: &Map<String, Value>,
    searchable: Option<&[String]>,
    fields: &mut FieldsMap,
) {
    searchable_leaves(doc, searchable, |p, _| {
        fields.id_or_insert(p);
    });
}

/// Calls `f` with every name [`crate::codec::encode`] and [`assign_fields`] would give an id:
/// the top-level attributes and the searchable leaf paths.
pub fn field_names(
    doc: &Map<String, Value>,
    searchable: Option<&[String]>,
    mut f: impl FnMut(&str),
) {
    for k in doc.keys() {
        f(k);
    }
    searchable_leaves(doc, searchable, |p, _| f(p));
}

/// The searchable text of `doc` (`searchable`: the searchable attributes, `None` for all);
/// its paths have ids (see [`assign_fields`]). Each field is cut in the languages
/// `localizedAttributes` gives it (`locales`).
pub fn doc_text(
    doc: &Map<String, Value>,
    searchable: Option<&[String]>,
    fields: &FieldsMap,
    cut: Cutter,
) -> DocText {
    // Per field: the next free position and the word count, in first-seen order.
    let mut state: Vec<(u32, u32, u32)> = Vec::new();
    let mut tokens = TokenList::default();
    let mut field_words = TokenList::default();
    let mut marker = String::new();
    // The last pair word read (at `pair_at`, in the same field value).
    let mut pair_word = String::new();
    searchable_leaves(doc, searchable, |p, leaf| {
        let Some(fid) = fields.id(p) else { return };
        if fid > u16::MAX as u32 {
            return;
        }
        let slot = match state.iter().position(|(f, _, _)| *f == fid) {
            Some(i) => i,
            None => {
                state.push((fid, 0, 0));
                state.len() - 1
            }
        };
        let text = leaf_text(leaf);
        let fid_text = fid.to_string();
        let first = state[slot].1;
        let mut count = 0;
        let mut any = false;
        let languages = cut.locales.of_field(p);
        let mut pair_at: Option<u32> = None;
        let last = tokens::walk_in(cut.tokenizer, &text, languages, first, |piece| {
            let Piece::Word(w) = piece else { return };
            any = true;
            if w.stop || w.text.len() > MAX_WORD_BYTES || w.position > MAX_POSITION {
                return;
            }
            count += 1;
            let position = (fid << 16) | w.position;
            if cut.pairs.contains(&w.text) {
                if pair_at.is_some_and(|at| at + 1 == w.position) {
                    let n = field_words.tokens.len() as u32;
                    field_words.push(n, |out| write_pair_term(out, &pair_word, &w.text));
                }
                pair_at = Some(w.position);
                pair_word.clear();
                pair_word.push_str(&w.text);
            }
            // The word and the markers of its short prefixes, each as a word of its own:
            // with its positions, by field, and as a field's first word.
            let mut add = |word: &str| {
                let n = field_words.tokens.len() as u32;
                field_words.push(n, |out| write_field_word(out, &fid_text, word));
                if w.position == 0 {
                    tokens.push(position, |out| {
                        write_first_word_marker(out, &fid_text, word)
                    });
                }
                tokens.push(position, |out| out.push_str(word));
            };
            for p in marked_prefixes(&w.text) {
                marker.clear();
                write_prefix_marker(&mut marker, p);
                add(&marker);
            }
            add(&w.text);
        });
        if any {
            state[slot].1 = last + 8;
        }
        state[slot].2 += count;
    });
    let lens = state
        .iter()
        .filter(|(_, _, count)| *count <= COUNTED_FIELD_WORDS)
        .map(|(fid, _, count)| field_length(*fid, *count))
        .collect();
    DocText {
        words: tokens.encode(),
        field_words: field_words.encode(),
        lens,
    }
}

impl Fields {
    /// The tantivy document of `doc`: the words of its searchable attributes (`None`: all)
    /// and the word counts of its short fields (see the module's documentation).
    pub(super) fn tantivy_doc(
        &self,
        iid: u32,
        doc: &Map<String, Value>,
        searchable: Option<&[String]>,
        fields: &FieldsMap,
        cut: Cutter,
    ) -> TantivyDocument {
        let text = doc_text(doc, searchable, fields, cut);
        let mut tdoc = TantivyDocument::default();
        tdoc.add_u64(self.iid, iid as u64);
        tdoc.add_text(self.words, &text.words);
        tdoc.add_text(self.field_words, &text.field_words);
        for len in text.lens {
            tdoc.add_u64(self.lens, len);
        }
        tdoc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_up_to_four_bytes_shorter_than_the_word_on_character_boundaries_are_marked() {
        fn marked(w: &str) -> Vec<&str> {
            marked_prefixes(w).collect()
        }
        assert_eq!(marked("darwin"), ["dar", "darw"]);
        assert_eq!(marked("darw"), ["dar"]);
        assert_eq!(marked("dar"), Vec::<&str>::new());
        // `北` is 3 bytes, so `北京` (6) has one; `é` is 2, so `éee` (4) has one, `ée`.
        assert_eq!(marked("北京"), ["北"]);
        assert_eq!(marked("éee"), ["ée"]);
    }

    #[test]
    fn listed_tokens_read_back_in_position_order_whatever_their_text() {
        use tantivy::tokenizer::{TokenStream, Tokenizer as _};
        let mut list = TokenList::default();
        list.push(7 << 16, |out| out.push_str("北京"));
        list.push(3, |out| write_first_word_marker(out, "12", "0042abcd"));
        list.push(3, |out| out.push_str(""));
        list.push(u32::MAX, |out| write_prefix_marker(out, "dar"));
        let listed = list.encode();
        let mut tokenizer = Listed::default();
        let mut stream = tokenizer.token_stream(&listed);
        let mut read = Vec::new();
        while stream.advance() {
            read.push((stream.token().position, stream.token().text.clone()));
        }
        assert_eq!(
            read,
            [
                (3, first_word_marker(12, "0042abcd")),
                (3, String::new()),
                (7 << 16, "北京".to_string()),
                (u32::MAX as usize, prefix_marker("dar")),
            ]
        );
        assert_eq!(first_word_marker(12, "a"), "\u{1}12\u{1}a");
        assert_eq!(field_word(0, "a"), "0\u{1}a");
    }
}
