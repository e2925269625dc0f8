//! Tests of [`super`] (`typos`).

use super::*;
use crate::index::segments::Segments;

/// tantivy's own automaton stream, as the walk read the dictionary before
/// [`walk_dictionary`]: what it must find, in the same order.
struct Reference<'a> {
    dfa: &'a levenshtein_automata::DFA,
    prefix: bool,
}

impl tantivy_fst::Automaton for Reference<'_> {
    type State = u32;
    fn start(&self) -> u32 {
        self.dfa.initial_state()
    }
    fn is_match(&self, state: &u32) -> bool {
        matches!(
            self.dfa.distance(*state),
            levenshtein_automata::Distance::Exact(_)
        )
    }
    fn can_match(&self, state: &u32) -> bool {
        *state != levenshtein_automata::SINK_STATE
            && !(self.prefix
                && self.dfa.distance(*state) == levenshtein_automata::Distance::Exact(0))
    }
    fn accept(&self, state: &u32, byte: u8) -> u32 {
        self.dfa.transition(*state, byte)
    }
}

/// Walked down the FST, the dictionary gives what tantivy's streams give: every word (the
/// FST opened from the terms file holds the same keys), the words a Levenshtein
/// automaton accepts under a first letter, one or several bytes long, in order, and the
/// words under a prefix.
#[test]
fn the_dictionary_walked_down_its_fst_finds_what_tantivys_streams_find() -> tantivy::Result<()> {
    use tantivy::schema::{Schema, TEXT};
    let mut schema = Schema::builder();
    let field = schema.add_text_field(crate::index::open::WORDS_FIELD, TEXT);
    let index = tantivy::Index::create_in_ram(schema.build());
    let mut writer: tantivy::IndexWriter = index.writer_with_num_threads(1, 15_000_000)?;
    let stems = [
        "pyth", "pytho", "django", "dajngo", "mult", "smal", "éco", "中文", "zz",
    ];
    let tails = [
        "", "on", "n", "ons", "x", "ango", "i", "l", "nz", "é", "onic", "3",
    ];
    let mut vocabulary = Vec::new();
    for (i, s) in stems.iter().enumerate() {
        for (j, t) in tails.iter().enumerate() {
            vocabulary.push(format!("{s}{t}"));
            vocabulary.push(format!(
                "{s}{t}{}",
                (b'a' + ((i * 7 + j) % 26) as u8) as char
            ));
        }
    }
    for chunk in vocabulary.chunks(5) {
        let mut doc = tantivy::TantivyDocument::new();
        doc.add_text(field, chunk.join(" "));
        writer.add_document(doc)?;
    }
    writer.commit()?;
    let searcher = index.reader()?.searcher();
    let reader = searcher.segment_reader(0);
    let inverted = reader.inverted_index(field)?;
    let words = Segments::default().words(&index, reader)?;

    let mut all = Vec::new();
    let mut stream = inverted.terms().stream()?;
    while stream.advance() {
        all.push(stream.key().to_vec());
    }
    let mut walked = Vec::new();
    words_below(&words, b"", |k| {
        walked.push(k.to_vec());
        true
    });
    assert!(all.len() > 150, "{}", all.len());
    assert_eq!(walked, all);

    let mut checked = 0;
    for word in [
        "python", "pythonx", "dxango", "django", "mulxi", "smalx", "écol", "中x", "zz", "q",
    ] {
        for (budget, prefix) in [(1, false), (1, true), (2, false), (2, true)] {
            let dfa = if prefix {
                lev_builder(budget).build_prefix_dfa(word)
            } else {
                lev_builder(budget).build_dfa(word)
            };
            let first = word.chars().next().unwrap();
            let mut bytes = [0u8; 4];
            let first_bytes = first.encode_utf8(&mut bytes).as_bytes();
            let high = char::from_u32(first as u32 + 1).unwrap().to_string();
            let mut expected = Vec::new();
            let mut stream = inverted
                .terms()
                .search(Reference { dfa: &dfa, prefix })
                .ge(first_bytes)
                .lt(high.as_bytes())
                .into_stream()?;
            while stream.advance() {
                expected.push(stream.key().to_vec());
            }
            let mut found = Vec::new();
            walk_dictionary(&words, &dfa, prefix, first_bytes, |k| {
                found.push(k.to_vec());
                true
            });
            assert_eq!(found, expected, "{word} {budget} {prefix}");
            checked += found.len();
            // Stopped by its visitor, the walk gives the same words up to there.
            let mut taken = Vec::new();
            walk_dictionary(&words, &dfa, prefix, first_bytes, |k| {
                taken.push(k.to_vec());
                taken.len() < 3
            });
            assert_eq!(taken, expected[..expected.len().min(3)], "{word}");
        }
        let mut below = Vec::new();
        words_below(&words, word.as_bytes(), |k| {
            below.push(k.to_vec());
            true
        });
        let expected: Vec<Vec<u8>> = all
            .iter()
            .filter(|k| k.starts_with(word.as_bytes()))
            .cloned()
            .collect();
        assert_eq!(below, expected, "{word}");
    }
    assert!(checked > 300, "{checked}");
    Ok(())
}

/// A segment without any word has an empty dictionary.
#[test]
fn a_segment_without_words_has_an_empty_dictionary() -> tantivy::Result<()> {
    use tantivy::schema::{Schema, FAST, TEXT};
    let mut schema = Schema::builder();
    schema.add_text_field(crate::index::open::WORDS_FIELD, TEXT);
    let n = schema.add_u64_field("n", FAST);
    let index = tantivy::Index::create_in_ram(schema.build());
    let mut writer: tantivy::IndexWriter = index.writer_with_num_threads(1, 15_000_000)?;
    let mut doc = tantivy::TantivyDocument::new();
    doc.add_u64(n, 1);
    writer.add_document(doc)?;
    writer.commit()?;
    let searcher = index.reader()?.searcher();
    let words = Segments::default().words(&index, searcher.segment_reader(0))?;
    let mut walked = 0;
    words_below(&words, b"", |_| {
        walked += 1;
        true
    });
    assert_eq!(walked, 0);
    Ok(())
}
