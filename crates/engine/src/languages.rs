//! The languages charabia may pick when it detects a text's language, from the index's
//! `localizedAttributes` and a search's `locales`, as Meilisearch applies them:
//!
//! - at indexing, a field's text is cut with the locales of the first rule one of whose
//!   `attributePatterns` matches the field's path (no rule, or a rule with no locales: charabia
//!   detects freely);
//! - at search, the query is cut with the request's `locales`, or else with every locale of the
//!   rules that apply to a searchable attribute;
//! - highlighting cuts each field with the request's `locales`, or else with the field's own.
//!
//! A single locale forces the language; several restrict whatlang's detection to them. The
//! language picks charabia's segmenter and its language-bound normalizers (Persian, Swedish
//! recomposition, Chinese and Japanese): see docs/design/choices-where-the-reference-is-silent.md for what that changes.

use charabia::Language;

use crate::filter::rules::pattern_matches;
use crate::settings::canonical_locale;
use crate::settings::Settings;

/// The charabia language of an accepted locale code (two- or three-letter, or `cmn`).
pub fn language(code: &str) -> Option<Language> {
    Language::from_code(canonical_locale(code))
}

/// The languages of a list of locale codes, each once, in the order given; `None` when none
/// is known (charabia then detects freely).
pub fn languages<S: AsRef<str>>(codes: &[S]) -> Option<Vec<Language>> {
    distinct(codes.iter().filter_map(|c| language(c.as_ref())))
}

/// Each language once, in first-seen order; `None` when there is none.
fn distinct(all: impl Iterator<Item = Language>) -> Option<Vec<Language>> {
    let mut out: Vec<Language> = Vec::new();
    for l in all {
        if !out.contains(&l) {
            out.push(l);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The `localizedAttributes` rules of an index, locales as charabia languages.
#[derive(Debug, Clone, Default)]
pub struct Locales {
    rules: Vec<(Vec<String>, Option<Vec<Language>>)>,
}

impl Locales {
    pub fn from_settings(settings: &Settings) -> Locales {
        let rules = settings
            .localized_attributes
            .iter()
            .flatten()
            .map(|r| (r.attribute_patterns.clone(), languages(&r.locales)))
            .collect();
        Locales { rules }
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The languages of the field at `path`: those of the first rule matching it.
    pub fn of_field(&self, path: &str) -> Option<&[Language]> {
        self.rules
            .iter()
            .find(|(patterns, _)| patterns.iter().any(|p| pattern_matches(p, path)))
            .and_then(|(_, langs)| langs.as_deref())
    }

    /// The languages a query is cut with when the request names none: those of every rule
    /// that applies to a searchable attribute (`searchable`: `None` for all).
    pub fn of_query(&self, searchable: Option<&[String]>) -> Option<Vec<Language>> {
        let applies = |patterns: &[String]| {
            searchable.is_none_or(|attrs| {
                attrs
                    .iter()
                    .any(|a| patterns.iter().any(|p| pattern_matches(p, a)))
            })
        };
        distinct(
            self.rules
                .iter()
                .filter(|(patterns, _)| applies(patterns))
                .flat_map(|(_, langs)| langs.iter().flatten().copied()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_accepted_locale_is_a_charabia_language() {
        for code in crate::settings::locales() {
            assert!(language(code).is_some(), "{code}");
        }
        assert_eq!(language("sv"), Some(Language::Swe));
        assert_eq!(language("cmn"), Some(Language::Cmn));
        assert_eq!(language("zho"), Some(Language::Zho));
        assert_eq!(language("fa"), Some(Language::Pes));
    }

    #[test]
    fn first_matching_rule_decides_a_field() {
        let settings = Settings::from_stored(Some(&json!({
            "searchableAttributes": ["title", "bodyFa"],
            "localizedAttributes": [
                { "attributePatterns": ["*Fa"], "locales": ["pes"] },
                { "attributePatterns": ["body*"], "locales": ["swe", "deu"] },
                { "attributePatterns": ["free"], "locales": [] },
                { "attributePatterns": ["other"], "locales": ["jpn"] },
            ]
        })));
        let l = Locales::from_settings(&settings);
        assert_eq!(l.of_field("bodyFa"), Some(&[Language::Pes][..]));
        assert_eq!(
            l.of_field("bodySv"),
            Some(&[Language::Swe, Language::Deu][..])
        );
        assert_eq!(l.of_field("free"), None);
        assert_eq!(l.of_field("title"), None);
        // The query: the rules of the searchable attributes only (`other` is not one).
        assert_eq!(
            l.of_query(settings.searchable()),
            Some(vec![Language::Pes, Language::Swe, Language::Deu])
        );
        assert_eq!(
            l.of_query(None),
            Some(vec![
                Language::Pes,
                Language::Swe,
                Language::Deu,
                Language::Jpn
            ])
        );
        assert!(Locales::default().of_query(None).is_none());
    }
}
