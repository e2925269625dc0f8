//! The leaves of the engine stay leaves: the filter grammar (`crates/filter-parser`) depends
//! on no crate, and the tokenizer (`src/tokens.rs`) names nothing else of the engine (the
//! settings side configures it: `src/settings/text.rs`).

use std::path::Path;

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_tokenizer_names_nothing_of_the_engine() {
    let source = read("src/tokens.rs");
    // Any path into the crate (settings, index, store, facets, filter, languages...).
    let found: Vec<(usize, &str)> = source
        .lines()
        .enumerate()
        .filter(|(_, line)| line.contains("crate::") || line.contains("super::super"))
        .map(|(i, line)| (i + 1, line.trim()))
        .collect();
    assert!(
        found.is_empty(),
        "src/tokens.rs must take plain inputs, not the engine's types: {found:?}"
    );
}

#[test]
fn the_filter_grammar_depends_on_no_crate() {
    let manifest = read("../filter-parser/Cargo.toml");
    let mut section = "";
    let mut found = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if section.contains("dependencies") && !line.is_empty() && !line.starts_with('#') {
            found.push(format!("{section} {line}"));
        }
    }
    assert!(
        found.is_empty(),
        "crates/filter-parser must stay std-only: {found:?}"
    );
    // Guards the reading itself: the manifest is the grammar's.
    assert!(manifest.contains("name = \"filter-parser\""), "{manifest}");
}
