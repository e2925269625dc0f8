//! Tests of [`super`] (`format`).

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
                synonyms: Vec::new(),
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
    with_phrases(words, &[])
}

fn with_phrases<'a>(words: &'a [QueryWord], phrases: &'a [QueryPhrase]) -> Options<'a, 'static> {
    Options {
        matching: Matching { words, phrases },
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

/// Settled on Meilisearch 1.50: without a match, a text of exactly `cropLength` words is cut
/// after its last word when separators follow it, and left whole when none do.
#[test]
fn crop_without_a_match_cuts_the_separators_after_the_last_word() {
    let none = query_words("zebra", false);
    let o = opts(&none);
    for (text, length, expected) in [
        (
            "broken snow island city river york love.",
            7,
            "broken snow island city river york love…",
        ),
        (
            "broken snow island city river york love. ",
            7,
            "broken snow island city river york love…",
        ),
        (
            "broken snow island city river york love...",
            7,
            "broken snow island city river york love…",
        ),
        ("Hello, world: this is it.", 5, "Hello, world: this is it…"),
        (
            "broken snow island city river york love",
            7,
            "broken snow island city river york love",
        ),
        (
            "broken snow island city river york love.",
            8,
            "broken snow island city river york love.",
        ),
        (
            "broken snow island city river york love war.",
            7,
            "broken snow island city river york love…",
        ),
    ] {
        assert_eq!(
            format_text((text, "t"), &o, Some(length), false),
            expected,
            "{text} {length}"
        );
    }
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
    let retrieve = ["id", "isNull", "isTrue", "n"].map(String::from);
    let paths = formatted_paths(Some(&retrieve), &o).unwrap();
    assert_eq!(paths, ["id", "isNull", "isTrue", "n", "title"]);
    let mut base = displayed.as_object().unwrap().clone();
    base.retain(|k, _| paths.contains(k));
    let f = formatted(&base, &o);
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
        Matching {
            words: &words,
            phrases: &[],
        },
        (&TOKENIZER, FieldLanguages::default()),
    );
    assert_eq!(
        m,
        json!({"g": [{"start": 0, "length": 3, "indices": [1]}], "t": [{"start": 3, "length": 5}]})
    );
}

#[test]
fn a_match_with_typos_wraps_as_many_characters_as_the_query_word() {
    let words = vec![QueryWord {
        word: "tasto".into(),
        prefix: false,
        typos: vec!["taisto".into()],
        synonyms: Vec::new(),
    }];
    let o = opts(&words);
    assert_eq!(
        format_text(("Taisto Kasurinen", "t"), &o, None, true),
        "<em>Taist</em>o Kasurinen"
    );
    // A query word longer than the indexed one wraps it whole.
    let longer = vec![QueryWord {
        word: "taistoo".into(),
        prefix: false,
        typos: vec!["taisto".into()],
        synonyms: Vec::new(),
    }];
    assert_eq!(
        format_text(("Taisto", "t"), &opts(&longer), None, true),
        "<em>Taisto</em>"
    );
}

#[test]
fn a_phrase_is_wrapped_whole_and_its_words_nowhere_else() {
    let words = query_words("zebra", false);
    let phrases = vec![QueryPhrase {
        words: vec!["boxing".into(), "match".into()],
        at: 0,
    }];
    let o = with_phrases(&words, &phrases);
    let text = "A zebra. The match was boxing, a boxing match!";
    assert_eq!(
        format_text((text, "t"), &o, None, true),
        "A <em>zebra</em>. The match was boxing, a <em>boxing match</em>!"
    );
    let m = matches_position(
        json!({"t": text}).as_object().unwrap(),
        Matching {
            words: &words,
            phrases: &phrases,
        },
        (&TOKENIZER, FieldLanguages::default()),
    );
    assert_eq!(
        m,
        json!({"t": [{"start": 2, "length": 5}, {"start": 33, "length": 12}]})
    );
}

#[test]
fn crop_grows_away_from_a_hard_separator() {
    let phrases = vec![QueryPhrase {
        words: vec!["boxing".into(), "match".into()],
        at: 0,
    }];
    let o = with_phrases(&[], &phrases);
    let text = "While racing to a boxing match, Ariel meets a boxer.";
    assert_eq!(
        format_text((text, "t"), &o, Some(4), true),
        "…to a <em>boxing match</em>…"
    );
    let soft = "While a boxing match starts to";
    assert_eq!(
        format_text((soft, "t"), &o, Some(4), true),
        "…a <em>boxing match</em> starts…"
    );
}
