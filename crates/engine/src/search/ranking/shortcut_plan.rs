//! What a level may skip: the shortcuts the ranking rules allow ([`Shortcut`]), and the floor
//! of a quoted phrase's level ([`Floor`]). Ranking them is `shortcuts.rs`'s.

use tantivy::query::Query;

use super::rule::{RankingRule, Rule};

/// Shortcuts of one-word levels (see [`SearchContext::rank`](crate::search::SearchContext::rank)):
/// digit ends (exclusive) that must be zero for documents found through first-word markers (and
/// whether `exactness` follows), or through field words.
pub(super) struct Shortcut {
    pub opening: Option<(usize, bool)>,
    pub field: Option<usize>,
    /// `proximity` right after `typo`: the digits zero for words in a row.
    pub in_a_row: Option<usize>,
}

impl Shortcut {
    /// The shortcuts `rules` allow: only with `words` then `typo` first. `opening`: the
    /// digits zero for a word opening a field of the best weight (`attributeRank` and
    /// `wordPosition` both met, no sort key before), and whether `exactness` follows;
    /// `field`: the digits zero for a word in a field of the best weight (`attributeRank`
    /// met).
    pub(super) fn of(rules: &[Rule], by_attribute: bool) -> Option<Shortcut> {
        if rules.first() != Some(&Rule::Words) || rules.get(1) != Some(&Rule::Typo) {
            return None;
        }
        let mut digit = 0;
        let mut found = (false, false);
        let mut opening = None;
        let mut field = None;
        for (i, r) in rules.iter().enumerate() {
            match (i, r) {
                (0, Rule::Words) | (1, Rule::Typo) | (_, Rule::Proximity) => {}
                (_, Rule::AttributeRank) => found.0 = true,
                (_, Rule::WordPosition) => found.1 = true,
                (_, Rule::Attribute) => found = (true, true),
                _ => break,
            }
            if found.0 && field.is_none() {
                field = Some(digit + 1);
            }
            digit += r.digits();
            if found == (true, true) {
                let exact_next = rules.get(i + 1) == Some(&Rule::Exactness);
                opening = Some((digit, exact_next));
                break;
            }
        }
        // With `byAttribute`, words in one field are as close as words in a row.
        let in_a_row = (rules.get(2) == Some(&Rule::Proximity) && !by_attribute).then_some(3);
        Some(Shortcut {
            opening,
            field,
            in_a_row,
        })
    }
}

/// A level of one quoted phrase opening the query, when no shortcut set settled its page:
/// outside `inside` (documents where the phrase's first word opens a field, or its words
/// sit in fields weighing less than the heaviest), a document holds the phrase only in fields
/// of the heaviest weight and never at a field's start, so on every rule it is at best a
/// document holding it once at the second position of such a field, whose verdict's cost is
/// `cost`: `words`, `typo` and `proximity` are the same for every document of the level,
/// `attributeRank` (or `attribute`) counts the heaviest weight, `wordPosition` a distance of
/// one, and `exactness` finds no match at the start. The others can then be ranked by
/// internal id until enough come before that (see
/// [`SearchContext::rank_above_floor`](crate::search::SearchContext::rank_above_floor)). The level
/// is then read as `around`: the documents of the phrase's pair term when it is two pair words,
/// else those holding every word of the phrase anywhere. Ranking a document checks the phrase (one
/// without it is left out), so only the documents ranked have their positions read, not all the
/// level's.
pub(super) struct Floor {
    pub inside: Box<dyn Query>,
    pub around: Box<dyn Query>,
    pub cost: u128,
}
