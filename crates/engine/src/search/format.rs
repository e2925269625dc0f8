//! Hit formatting: `_formatted` (highlight and crop), `_matchesPosition`.
//!
//! Matching re-tokenizes each string the way the index does (charabia with the index's
//! separators and dictionary; stop words are words here, as in Meilisearch's highlighter) and
//! looks for the query's words among the normalized words: a whole-word match wraps the
//! token, a match of the last word as a prefix wraps only the original characters the query
//! word covers (`<em>Pri</em>nce`, `<em>Élé</em>phant` for `ele`), and a match with typos
//! wraps as many characters as the query word has (`<em>Taist</em>o` for `tasto`). A quoted
//! phrase is wrapped whole where its words follow each other, and its words are highlighted
//! nowhere else. Offsets in `_matchesPosition` are UTF-8 bytes on the original value.
//!
//! Cropping keeps the run of matches that holds the most query words within the crop length
//! (then the closest, then the most in query order), and widens it a word at a time to each
//! side, never across a hard separator (`.`, `,`, `;` …) while the other side has a soft one.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use charabia::{Language, Tokenizer};

use crate::languages::Locales;
use crate::tokens::{self, Piece};

/// One query word.
#[derive(Debug, Clone)]
pub struct QueryWord {
    pub word: String,
    pub prefix: bool,
    /// Indexed words within the typo budget of `word`: highlighted as far as `word` is long.
    pub typos: Vec<String>,
    /// Words of its synonyms: highlighted whole.
    pub synonyms: Vec<String>,
}

/// One quoted phrase of the query: its words in order (stop words included), and where it
/// stands among the query's words (just before `words[at]`).
#[derive(Debug, Clone)]
pub struct QueryPhrase {
    pub words: Vec<String>,
    pub at: usize,
}

/// What the query matches in a text: its words and its phrases.
#[derive(Debug, Clone, Copy)]
pub struct Matching<'a> {
    pub words: &'a [QueryWord],
    pub phrases: &'a [QueryPhrase],
}

/// The languages each field is cut in: the request's `locales`, or else the field's own
/// (`localizedAttributes`), as at indexing.
#[derive(Clone, Copy, Default)]
pub struct FieldLanguages<'a> {
    pub request: Option<&'a [Language]>,
    pub locales: Option<&'a Locales>,
}

impl<'a> FieldLanguages<'a> {
    fn of(&self, path: &str) -> Option<&'a [Language]> {
        self.request.or_else(|| self.locales?.of_field(path))
    }
}

/// What to do with the hit.
pub struct Options<'a, 't> {
    pub matching: Matching<'a>,
    /// How the index cuts text into words (stop words aside).
    pub tokenizer: &'a Tokenizer<'t>,
    pub languages: FieldLanguages<'a>,
    /// Attributes to highlight (`*` for all displayed ones).
    pub highlight: Option<&'a [String]>,
    /// Attributes to crop, each maybe `attr:length`.
    pub crop: Option<&'a [String]>,
    pub crop_length: usize,
    pub crop_marker: &'a str,
    pub pre_tag: &'a str,
    pub post_tag: &'a str,
}

/// A match in a string: byte start, byte length, what of the query it matched, and the
/// words it covers.
#[derive(Debug, Clone, Copy)]
struct Hit {
    start: usize,
    len: usize,
    /// Which query word (`< words.len()`) or phrase (`words.len() + p`).
    of: usize,
    /// How many query words it stands for (a phrase: its words).
    weight: usize,
    /// Where the matched word or phrase stands in the query, for the order of matches.
    order: (usize, usize),
    /// Indices of its first and last words among the string's words.
    token: usize,
    last: usize,
}

/// A string cut for formatting: its words and separators, where each word is among them,
/// and the query's matches.
struct Cut {
    /// Byte span of each piece and, for a separator, whether it is hard.
    pieces: Vec<(usize, usize, Option<bool>)>,
    /// The piece index of each word.
    words: Vec<usize>,
    hits: Vec<Hit>,
}

/// How many bytes of `word`'s original text its first `chars` normalized characters cover.
fn original_chars(word: &tokens::Word, chars: usize) -> usize {
    let bytes = word
        .text
        .char_indices()
        .nth(chars)
        .map_or(word.text.len(), |(b, _)| b);
    word.original_bytes(bytes)
}

fn find_matches(
    tokenizer: &Tokenizer,
    (text, languages): (&str, Option<&[Language]>),
    m: Matching,
) -> Cut {
    let mut pieces = Vec::new();
    let mut tokens: Vec<tokens::Word> = Vec::new();
    let mut words = Vec::new();
    for piece in tokens::pieces_in(tokenizer, text, languages) {
        match piece {
            Piece::Word(w) => {
                words.push(pieces.len());
                pieces.push((w.start, w.end, None));
                tokens.push(w);
            }
            Piece::Separator(s) => pieces.push((s.start, s.end, Some(s.hard))),
        }
    }
    let mut hits = Vec::new();
    if m.words.is_empty() && m.phrases.is_empty() {
        return Cut {
            pieces,
            words,
            hits,
        };
    }
    let mut t = 0;
    'tokens: while t < tokens.len() {
        // A phrase wins over its words where it matches whole.
        for (p, phrase) in m.phrases.iter().enumerate() {
            let n = phrase.words.len();
            if n > 0
                && t + n <= tokens.len()
                && phrase
                    .words
                    .iter()
                    .zip(&tokens[t..t + n])
                    .all(|(q, w)| *q == w.text)
            {
                let end = tokens[t + n - 1].end;
                hits.push(Hit {
                    start: tokens[t].start,
                    len: end - tokens[t].start,
                    of: m.words.len() + p,
                    weight: n,
                    order: (phrase.at, 0),
                    token: t,
                    last: t + n - 1,
                });
                t += n;
                continue 'tokens;
            }
        }
        let token = &tokens[t];
        let lemma = token.text.as_str();
        for (w, q) in m.words.iter().enumerate() {
            let len = if lemma == q.word || q.synonyms.iter().any(|x| x == lemma) {
                Some(token.end - token.start)
            } else if q.typos.iter().any(|x| x == lemma) {
                // As many characters as the query word has, at most the whole word.
                Some(original_chars(token, q.word.chars().count()))
            } else if q.prefix && lemma.starts_with(q.word.as_str()) {
                Some(token.original_bytes(q.word.len()))
            } else {
                None
            };
            if let Some(len) = len {
                hits.push(Hit {
                    start: token.start,
                    len,
                    of: w,
                    weight: 1,
                    order: (w, 1),
                    token: t,
                    last: t,
                });
                break;
            }
        }
        t += 1;
    }
    Cut {
        pieces,
        words,
        hits,
    }
}

/// Whether the dotted `path` is selected by `list` (`*`, the path, or an ancestor of it).
pub(super) fn selected(list: Option<&[String]>, path: &str) -> Option<Option<usize>> {
    let list = list?;
    let mut found: Option<Option<usize>> = None;
    for item in list {
        let (name, len) = match item.rsplit_once(':') {
            Some((n, l)) => match l.parse::<usize>() {
                Ok(l) => (n, Some(l)),
                Err(_) => (item.as_str(), None),
            },
            None => (item.as_str(), None),
        };
        let hit = name == "*" || crate::filter::eval::within(path, name);
        if hit {
            // The last attribute naming the path decides its length (as on Meilisearch).
            found = Some(len);
        }
    }
    found
}

/// Formats one string: crop (keeping `length` words around the best matches), then highlight.
fn format_text(
    (text, path): (&str, &str),
    o: &Options,
    crop: Option<usize>,
    highlight: bool,
) -> String {
    let cut = find_matches(o.tokenizer, (text, o.languages.of(path)), o.matching);
    let (from, to, cut_left, cut_right) = match crop {
        Some(length) => crop_window(text, &cut, length),
        None => (0, text.len(), false, false),
    };
    let mut out = String::new();
    if cut_left {
        out.push_str(o.crop_marker);
    }
    let mut pos = from;
    if highlight {
        for h in cut
            .hits
            .iter()
            .filter(|h| h.start >= from && h.start + h.len <= to)
        {
            out.push_str(&text[pos..h.start]);
            out.push_str(o.pre_tag);
            out.push_str(&text[h.start..h.start + h.len]);
            out.push_str(o.post_tag);
            pos = h.start + h.len;
        }
    }
    out.push_str(&text[pos..to]);
    if cut_right {
        out.push_str(o.crop_marker);
    }
    out
}

/// How good a run of matches is for a crop: the query words it holds, then how close its
/// matches are (gaps counted up to 7 words), then how many follow the query's order.
fn run_score(hits: &[Hit]) -> (usize, i64, i64) {
    let mut seen: Vec<(usize, usize)> = hits.iter().map(|h| (h.of, h.weight)).collect();
    seen.sort_unstable();
    seen.dedup();
    let words = seen.iter().map(|(_, w)| w).sum();
    let mut distance = 0i64;
    let mut order = 0i64;
    for h in hits {
        // A phrase's words are adjacent and in order.
        let inner = (h.last - h.token) as i64;
        distance -= inner;
        order += inner;
    }
    for pair in hits.windows(2) {
        distance -= (pair[1].token.saturating_sub(pair[0].last)).min(7) as i64;
        if pair[0].order < pair[1].order {
            order += 1;
        }
    }
    (words, distance, order)
}

/// The first and last matches of the best run that fits in `length` words: each longest run
/// that fits, from left to right, the first best kept.
fn best_run(hits: &[Hit], length: usize) -> (usize, usize) {
    let mut best: Option<((usize, i64, i64), usize, usize)> = None;
    let mut consider = |i: usize, j: usize| {
        let score = run_score(&hits[i..=j]);
        if best.as_ref().is_none_or(|(b, _, _)| score > *b) {
            best = Some((score, i, j));
        }
    };
    let mut first = 0;
    for (next, hit) in hits.iter().enumerate() {
        if hit.last + 1 > hits[first].token + length {
            if next > 0 && first < next {
                consider(first, next - 1);
            }
            // Drop matches from the left until this one fits with room to spare.
            while first + 1 < hits.len() {
                first += 1;
                if hit.last < hits[first].token || hit.last + 1 < hits[first].token + length {
                    break;
                }
            }
        }
    }
    let last = hits.len() - 1;
    if first < last || (first == last && hits[first].last - hits[first].token + 1 < length) {
        consider(first, last);
    }
    best.map_or((0, 0), |(_, i, j)| (i, j))
}

/// The byte window of a crop to `length` words and whether text was cut on each side.
fn crop_window(text: &str, cut: &Cut, length: usize) -> (usize, usize, bool, bool) {
    let (pieces, words, hits) = (&cut.pieces, &cut.words, &cut.hits);
    // A crop of no words leaves the text whole (as on Meilisearch).
    if words.is_empty() || length == 0 {
        return (0, text.len(), false, false);
    }
    // The pieces kept, first and last: a run of words (and the separators widening crossed).
    let (lo, hi) = if hits.is_empty() {
        // Without a match, the first `length` words; a text of exactly that many words that
        // goes on with separators is cut after its last word, as Meilisearch 1.50 cuts it
        // (`… york love…` for `… york love.`).
        match words.get(length - 1) {
            Some(&last) if last + 1 < pieces.len() => (0, last),
            _ => (0, pieces.len() - 1),
        }
    } else {
        let (i, j) = best_run(hits, length);
        let (first, last) = (hits[i].token, hits[j].last);
        if last - first + 1 >= length {
            (words[first], words[first + length - 1])
        } else {
            widen(pieces, words, (first, last), length)
        }
    };
    // A crop reaching an end of the text keeps the separators there (`"Hello"`, `Bye!`).
    let from = if lo == 0 { 0 } else { pieces[lo].0 };
    let to = if hi + 1 == pieces.len() {
        text.len()
    } else {
        pieces[hi].1
    };
    (from, to, lo > 0, hi + 1 < pieces.len())
}

/// Widens the words `first..=last` to `length` words, returning the first and last pieces
/// kept: a word on each side in turn (left first); separators are crossed on both sides when
/// alike, else on the soft side first, so the crop does not reach across a sentence's end
/// while it can grow the other way.
fn widen(
    pieces: &[(usize, usize, Option<bool>)],
    words: &[usize],
    (first, last): (usize, usize),
    length: usize,
) -> (usize, usize) {
    let (mut lo, mut hi) = (words[first], words[last]);
    let mut count = last - first + 1;
    while count < length {
        let back = lo.checked_sub(1).map(|i| pieces[i].2);
        let fwd = pieces.get(hi + 1).map(|p| p.2);
        match (back, fwd) {
            (None, None) => break,
            (Some(Some(b)), Some(Some(f))) => {
                if b == f {
                    lo -= 1;
                    if count + 1 < length {
                        hi += 1;
                    }
                } else if b {
                    hi += 1;
                } else {
                    lo -= 1;
                }
            }
            (Some(None), Some(None)) => {
                lo -= 1;
                count += 1;
                if count < length {
                    hi += 1;
                    count += 1;
                }
            }
            (Some(kind), None) | (Some(kind @ None), Some(Some(_))) => {
                lo -= 1;
                count += usize::from(kind.is_none());
            }
            (None, Some(kind)) | (Some(Some(_)), Some(kind @ None)) => {
                hi += 1;
                count += usize::from(kind.is_none());
            }
        }
    }
    (lo, hi)
}

/// The paths `_formatted` holds: those retrieved, highlighted and cropped (`None`: every
/// displayed field, when one of them is `*` or nothing narrows what is retrieved).
pub fn formatted_paths(retrieve: Option<&[String]>, o: &Options) -> Option<Vec<String>> {
    let mut paths: Vec<String> = retrieve?.to_vec();
    for item in [o.highlight, o.crop].into_iter().flatten().flatten() {
        let name = match item.rsplit_once(':') {
            Some((n, l)) if l.parse::<usize>().is_ok() => n,
            _ => item.as_str(),
        };
        paths.push(name.to_string());
    }
    (!paths.iter().any(|p| p == "*")).then_some(paths)
}

/// The `_formatted` object of a hit: every field of `base` (the displayed fields at the
/// [`formatted_paths`]), highlighted and cropped as asked; numbers become strings.
pub fn formatted(base: &Map<String, Value>, o: &Options) -> Map<String, Value> {
    base.iter()
        .map(|(k, v)| (k.clone(), format_value(v, k, o)))
        .collect()
}

fn format_value(v: &Value, path: &str, o: &Options) -> Value {
    match v {
        Value::String(s) => {
            let crop = selected(o.crop, path).map(|l| l.unwrap_or(o.crop_length));
            let highlight = selected(o.highlight, path).is_some();
            if crop.is_none() && !highlight {
                return v.clone();
            }
            Value::String(format_text((s, path), o, crop, highlight))
        }
        Value::Number(n) => {
            let s = n.to_string();
            let crop = selected(o.crop, path).map(|l| l.unwrap_or(o.crop_length));
            let highlight = selected(o.highlight, path).is_some();
            if crop.is_none() && !highlight {
                return Value::String(s);
            }
            Value::String(format_text((&s, path), o, crop, highlight))
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|i| format_value(i, path, o)).collect())
        }
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), format_value(v, &format!("{path}.{k}"), o)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `_matchesPosition` over every displayed field, on the original values.
pub fn matches_position(
    displayed: &Map<String, Value>,
    words: Matching,
    (tokenizer, languages): (&Tokenizer, FieldLanguages),
) -> Value {
    let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (k, v) in displayed {
        let cut = (tokenizer, languages);
        collect_positions(v, k, &mut Vec::new(), words, cut, &mut out);
    }
    serde_json::to_value(out).expect("a map of arrays serializes")
}

fn collect_positions(
    v: &Value,
    path: &str,
    indices: &mut Vec<usize>,
    words: Matching,
    cut: (&Tokenizer, FieldLanguages),
    out: &mut BTreeMap<String, Vec<Value>>,
) {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                indices.push(i);
                collect_positions(item, path, indices, words, cut, out);
                indices.pop();
            }
            return;
        }
        Value::Object(m) => {
            for (k, inner) in m {
                collect_positions(inner, &format!("{path}.{k}"), indices, words, cut, out);
            }
            return;
        }
        _ => return,
    };
    let found = find_matches(cut.0, (&text, cut.1.of(path)), words);
    for h in found.hits {
        let mut entry = serde_json::json!({"start": h.start, "length": h.len});
        if !indices.is_empty() {
            entry["indices"] = Value::from(indices.clone());
        }
        out.entry(path.to_string()).or_default().push(entry);
    }
}

#[cfg(test)]
mod tests;
