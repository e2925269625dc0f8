//! The normal form of strings (see the [module doc](super)).

use std::borrow::Cow;

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// The form strings are grouped, compared, sorted and filtered in: trimmed, compatibility
/// decomposed (NFKD) and lowercased, so `ﬁ` equals `fi` and `É` equals `É` however it was
/// typed. Accents stay: `élan` and `elan` are two values. Borrowed when `s` is already in
/// that form (plain lowercase ASCII without surrounding spaces), which is the common case.
pub fn normalize(s: &str) -> Cow<'_, str> {
    let trimmed = s.trim();
    if trimmed.is_ascii() {
        if trimmed.bytes().any(|b| b.is_ascii_uppercase()) {
            return Cow::Owned(trimmed.to_ascii_lowercase());
        }
        return Cow::Borrowed(trimmed);
    }
    // Lowercasing the whole string, not char by char: a final `Σ` becomes `ς`, as in
    // Meilisearch (so `ΟΔΟΣ` and `οδοσ` are two values).
    let decomposed: String = trimmed.nfkd().collect();
    Cow::Owned(decomposed.to_lowercase())
}

/// The looser form facet search matches in: [`normalize`] without diacritics (`élan` → `elan`).
pub fn search_form(s: &str) -> String {
    let n = normalize(s);
    if n.is_ascii() {
        return n.into_owned();
    }
    n.chars().filter(|c| !is_combining_mark(*c)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_normalizes_case_and_compatibility_forms() {
        assert_eq!(normalize("  Élan Vital "), "e\u{301}lan vital");
        assert_eq!(normalize("E\u{301}LAN"), normalize("élan"));
        assert_eq!(normalize("ﬁne"), "fine");
        assert_eq!(normalize("①"), "1");
        assert_eq!(normalize("\u{a0}f"), "f");
        assert_eq!(normalize("x\u{3000}"), "x");
        assert_eq!(normalize("ΟΔΟΣ"), "οδος");
        assert_eq!(normalize("οδοσ"), "οδοσ");
        assert_eq!(search_form("ÅNGSTRÖM"), "angstrom");
        assert_eq!(search_form("Straße"), "straße");
    }

    #[test]
    fn test_borrows_what_is_already_normal() {
        assert!(matches!(normalize("drama"), Cow::Borrowed("drama")));
        assert!(matches!(normalize(" drama "), Cow::Borrowed("drama")));
        assert!(matches!(normalize("Drama"), Cow::Owned(_)));
    }
}
