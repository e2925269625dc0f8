//! Hit formatting: `_formatted` (highlight and crop), `_matchesPosition`.
//!
//! Matching re-tokenizes each string the way the index does (charabia with the index's
//! separators and dictionary; stop words are words here, as in Meilisearch's highlighter) and
//! looks for the query's words among the normalized words: a whole-word match wraps the
//! token, a match of the last word as a prefix wraps only the original characters the query
//! word covers (`<em>Pri</em>nce`, `<em>Élé</em>phant` for `ele`). Offsets in
//! `_matchesPosition` are UTF-8 bytes on the original value.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use charabia::{Language, Tokenizer};

use crate::languages::Locales;
use crate::tokens;

/// One query word.
#[derive(Debug, Clone)]
pub struct QueryWord {
    pub word: String,
    pub prefix: bool,
    /// Indexed words within the typo budget of `word`: matched whole.
    pub typos: Vec<String>,
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
    pub words: &'a [QueryWord],
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

/// A match in a string: byte start, byte length, which query word.
#[derive(Debug, Clone, Copy)]
struct Hit {
    start: usize,
    len: usize,
    word: usize,
    /// Index of the matched token among the string's words.
    token: usize,
}

fn find_matches(
    tokenizer: &Tokenizer,
    (text, languages): (&str, Option<&[Language]>),
    words: &[QueryWord],
) -> (Vec<(usize, usize)>, Vec<Hit>) {
    let tokens = tokens::words_in(tokenizer, text, languages);
    let spans = tokens.iter().map(|w| (w.start, w.end)).collect();
    let mut hits = Vec::new();
    if words.is_empty() {
        return (spans, hits);
    }
    for (t, token) in tokens.iter().enumerate() {
        let lemma = token.text.as_str();
        for (w, q) in words.iter().enumerate() {
            if lemma == q.word || q.typos.iter().any(|x| x == lemma) {
                hits.push(Hit {
                    start: token.start,
                    len: token.end - token.start,
                    word: w,
                    token: t,
                });
                break;
            }
            if q.prefix && lemma.starts_with(q.word.as_str()) {
                hits.push(Hit {
                    start: token.start,
                    len: token.original_bytes(q.word.len()),
                    word: w,
                    token: t,
                });
                break;
            }
        }
    }
    (spans, hits)
}

/// Whether the dotted `path` is selected by `list` (`*`, the path, or an ancestor of it).
fn selected(list: Option<&[String]>, path: &str) -> Option<Option<usize>> {
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
            // An explicit length wins over a bare name.
            if found.is_none() || len.is_some() {
                found = Some(len);
            }
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
    let (spans, hits) = find_matches(o.tokenizer, (text, o.languages.of(path)), o.words);
    let (from, to, cut_left, cut_right) = match crop {
        Some(length) => crop_window(text, &spans, &hits, length),
        None => (0, text.len(), false, false),
    };
    let mut out = String::new();
    if cut_left {
        out.push_str(o.crop_marker);
    }
    let mut pos = from;
    if highlight {
        for h in hits
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

/// The byte window of a crop to `length` words and whether text was cut on each side. The
/// interval of matches holding the most distinct query words within `length` words is kept
/// (earliest on ties), then words are added alternately left and right.
fn crop_window(
    text: &str,
    spans: &[(usize, usize)],
    hits: &[Hit],
    length: usize,
) -> (usize, usize, bool, bool) {
    if spans.is_empty() || length == 0 {
        return (0, 0, !text.is_empty(), false);
    }
    if hits.is_empty() {
        let last = length.min(spans.len()) - 1;
        return (0, spans[last].1, false, last + 1 < spans.len());
    }
    let mut best = (0usize, usize::MAX, 0usize, 0usize); // (distinct words, MAX - gaps, i, j)
    for i in 0..hits.len() {
        for j in i..hits.len() {
            if hits[j].token - hits[i].token + 1 > length {
                break;
            }
            let mut seen: Vec<usize> = hits[i..=j].iter().map(|h| h.word).collect();
            seen.sort_unstable();
            seen.dedup();
            let gaps: usize = hits[i..=j]
                .windows(2)
                .map(|w| (w[1].token - w[0].token).saturating_sub(1).min(7))
                .sum();
            let score = (seen.len(), usize::MAX - gaps);
            if score > (best.0, best.1) {
                best = (score.0, score.1, i, j);
            }
        }
    }
    let (mut first, mut last) = (hits[best.2].token, hits[best.3].token);
    let mut room = length.saturating_sub(last - first + 1);
    let mut left_turn = true;
    while room > 0 && (first > 0 || last + 1 < spans.len()) {
        if (left_turn && first > 0) || last + 1 >= spans.len() {
            first -= 1;
        } else {
            last += 1;
        }
        room -= 1;
        left_turn = !left_turn;
    }
    let from = spans[first].0;
    let to = spans[last].1;
    (from, to, first > 0, last + 1 < spans.len())
}

/// The `_formatted` object of a hit: every field of `retrieved`, plus the highlighted and
/// cropped fields of `displayed`; numbers become strings.
pub fn formatted(
    displayed: &Map<String, Value>,
    retrieved: &Map<String, Value>,
    o: &Options,
) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, v) in displayed {
        let wanted = retrieved.contains_key(k)
            || selected(o.highlight, k).is_some()
            || selected(o.crop, k).is_some()
            || has_selected_child(o, k);
        if wanted {
            out.insert(k.clone(), format_value(v, k, o));
        }
    }
    out
}

fn has_selected_child(o: &Options, key: &str) -> bool {
    let prefix = format!("{key}.");
    [o.highlight, o.crop]
        .into_iter()
        .flatten()
        .flatten()
        .any(|a| a.starts_with(&prefix))
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
            let highlight = selected(o.highlight, path).is_some();
            if highlight {
                Value::String(format_text((&s, path), o, None, true))
            } else {
                Value::String(s)
            }
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
    words: &[QueryWord],
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
    words: &[QueryWord],
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
    let (_, hits) = find_matches(cut.0, (&text, cut.1.of(path)), words);
    for h in hits {
        let mut entry = serde_json::json!({"start": h.start, "length": h.len});
        if !indices.is_empty() {
            entry["indices"] = Value::from(indices.clone());
        }
        out.entry(path.to_string()).or_default().push(entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A query's words as the engine would search them: normalized, deduplicated, the last one
    /// a prefix when `last_is_prefix` and no space follows it.
    fn query_words(text: &str, last_is_prefix: bool) -> Vec<QueryWord> {
        let mut out: Vec<QueryWord> = Vec::new();
        let words = tokens::words(&TOKENIZER, text);
        for w in words {
            if !out.iter().any(|q| q.word == w.text) {
                out.push(QueryWord {
                    word: w.text,
                    prefix: false,
                    typos: Vec::new(),
                });
            }
        }
        if last_is_prefix && !text.ends_with(char::is_whitespace) {
            if let Some(last) = out.last_mut() {
                last.prefix = true;
            }
        }
        out
    }

    /// The highlighter's tokenizer with default settings (char maps on).
    static TOKENIZER: std::sync::LazyLock<Tokenizer<'static>> = std::sync::LazyLock::new(|| {
        let mut builder = charabia::TokenizerBuilder::default();
        builder.create_char_map(true);
        builder.into_tokenizer()
    });

    fn opts<'a>(words: &'a [QueryWord]) -> Options<'a, 'static> {
        Options {
            words,
            tokenizer: &TOKENIZER,
            languages: FieldLanguages::default(),
            highlight: None,
            crop: None,
            crop_length: 10,
            crop_marker: "…",
            pre_tag: "<em>",
            post_tag: "</em>",
        }
    }

    const COMMENT: &str = "A french book about a prince that walks on little cute planets";

    #[test]
    fn crop_keeps_words_around_the_match_left_first() {
        let words = query_words("prince", true);
        let o = opts(&words);
        assert_eq!(
            format_text((COMMENT, "comment"), &o, Some(6), false),
            "…book about a prince that walks…"
        );
        assert_eq!(
            format_text((COMMENT, "comment"), &o, Some(6), true),
            "…book about a <em>prince</em> that walks…"
        );
        // No match: the first words.
        let none = query_words("zebra", false);
        assert_eq!(
            format_text((COMMENT, "comment"), &opts(&none), Some(3), false),
            "A french book…"
        );
    }

    #[test]
    fn prefix_matches_wrap_only_the_typed_part() {
        let words = query_words("the pri", true);
        let o = opts(&words);
        assert_eq!(
            format_text(("The Prince, the princess", "t"), &o, None, true),
            "<em>The</em> <em>Pri</em>nce, <em>the</em> <em>pri</em>ncess"
        );
        let whole = query_words("pri ", true);
        assert_eq!(
            format_text(("Prince", "t"), &opts(&whole), None, true),
            "Prince"
        );
    }

    #[test]
    fn formatted_turns_numbers_into_strings_and_adds_selected_fields() {
        let words = query_words("prince", true);
        let hl = vec!["title".to_string()];
        let mut o = opts(&words);
        o.highlight = Some(&hl);
        let displayed = json!({"id": 456, "title": "Le Petit Prince", "isNull": null, "isTrue": true, "n": {"x": 1}});
        let displayed = displayed.as_object().unwrap();
        let retrieved = json!({"id": 456, "isNull": null, "isTrue": true, "n": {"x": 1}});
        let f = formatted(displayed, retrieved.as_object().unwrap(), &o);
        assert_eq!(
            Value::Object(f),
            json!({"id": "456", "title": "Le Petit <em>Prince</em>", "isNull": null, "isTrue": true, "n": {"x": "1"}})
        );
    }

    #[test]
    fn match_positions_are_bytes_with_array_indices() {
        let words = query_words("élan fan", true);
        let doc = json!({"t": "un élan", "g": ["x", "Fantasy"], "n": 5});
        let m = matches_position(
            doc.as_object().unwrap(),
            &words,
            (&TOKENIZER, FieldLanguages::default()),
        );
        assert_eq!(
            m,
            json!({"g": [{"start": 0, "length": 3, "indices": [1]}], "t": [{"start": 3, "length": 5}]})
        );
    }
}
