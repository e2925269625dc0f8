//! The shortcut sets of a phrase level by field weight (see [`Lookup::weight_sets`]).

use tantivy::query::{BooleanQuery, Occur, Query};

use crate::search::{Group, TermSet};

use super::{Lookup, Shortcut, ShortcutSet};

impl Lookup<'_> {
    /// Sets by field weight inside `within` (the level; any set holding every document of
    /// the level best on the rules before `attributeRank` and `wordPosition` would do).
    ///
    /// One group: for each weight `w` past the best, the documents where it sits in a field
    /// weighing less than `w`, or whose first word opens a field; every document of the
    /// level below `w` on `attributeRank` (the group's best weight), or at `w` with its words
    /// at their query positions, is among them, and all of those rank before every other.
    /// Then, but for the largest weight, those where it sits in a field weighing at most `w`.
    ///
    /// Several groups (`attributeRank` sums their best weights): the documents where one of
    /// them sits in a field of the best weight, which hold every document below the sum
    /// where none does.
    pub(super) fn weight_sets(
        &self,
        cut: &Shortcut,
        weights: &[u32],
        within: &dyn Query,
        out: &mut Vec<ShortcutSet>,
    ) {
        let (Some(field_to), true) = (cut.field, self.weighted) else {
            return;
        };
        let mut levels: Vec<u32> = weights.to_vec();
        levels.sort_unstable();
        levels.dedup();
        let heaviest = levels.last().copied().unwrap_or(0);
        let attribute = field_to - 1;
        if self.kept.len() > 1 {
            // Below n × the next weight on `attributeRank`, some group sits in a field of the
            // best weight.
            let n = self.kept.len() as u32;
            let bound = n * levels[1] - 1;
            let mut any = Vec::new();
            for t in 0..self.kept.len() {
                let Some(markers) = self.term_markers(t, &self.fids) else {
                    return;
                };
                any.push((Occur::Should, markers));
            }
            let any: Box<dyn Query> = Box::new(BooleanQuery::new(any));
            out.push(ShortcutSet {
                query: Box::new(BooleanQuery::new(vec![
                    (Occur::Must, within.box_clone()),
                    (Occur::Must, any),
                ])),
                zero_to: field_to,
                typos: self.typo,
                at_most: Some(bound as u128),
                as_typed: false,
                ahead: None,
            });
            return;
        }
        let Some((zero_to, _)) = cut.opening else {
            return;
        };
        if self.terms.positions[self.kept[0]] != 0 {
            return;
        }
        for &w in levels.iter().skip(1) {
            let fids = |heavier: bool| -> Vec<u32> {
                (0..weights.len() as u32)
                    .filter(|f| weights[*f as usize] < w || (heavier && weights[*f as usize] == w))
                    .collect()
            };
            let Some(lighter) = self.in_fields(&fids(false), false) else {
                return;
            };
            // The set's documents in a lighter field are ranked first; the others it accepts
            // hold the phrase as typed at the start of a field of weight `w`, so they tie up to
            // `zero_to`.
            out.push(ShortcutSet {
                query: self.lighter_or_opening(within, lighter.box_clone()),
                zero_to,
                typos: self.typo,
                at_most: Some((w as u128) << (16 * (zero_to - 1 - attribute))),
                as_typed: true,
                ahead: Some((lighter, w)),
            });
            if w == heaviest {
                return;
            }
            let Some(inside) = self.in_fields(&fids(true), false) else {
                return;
            };
            out.push(ShortcutSet {
                query: Box::new(BooleanQuery::new(vec![
                    (Occur::Must, within.box_clone()),
                    (Occur::Must, inside),
                ])),
                zero_to: field_to,
                typos: self.typo,
                at_most: Some((w as u128) << (16 * (field_to - 1 - attribute))),
                as_typed: false,
                ahead: None,
            });
        }
    }

    /// The documents of the level `within` where its group sits in a lighter field
    /// (`lighter`: only markers, the level's documents already hold the phrase) or whose
    /// first word opens a field. When the query is that one phrase, its positions are not
    /// read: the set is those of `lighter` and those where its first word opens a field
    /// holding its other words (two pair words: the level's, their pair term's), and ranking
    /// leaves out a document without the phrase (no other term can be kept). A frequent
    /// phrase ("python bindings") would have every document holding both words checked; the
    /// ranking in internal-id order (see `Past`) checks a few hundred.
    fn lighter_or_opening(&self, within: &dyn Query, lighter: Box<dyn Query>) -> Box<dyn Query> {
        let either = |opening: Box<dyn Query>| -> Box<dyn Query> {
            Box::new(BooleanQuery::new(vec![
                (Occur::Should, lighter),
                (Occur::Should, opening),
            ]))
        };
        match &self.terms.groups[self.kept[0]] {
            // Two pair words: the level is their pair term's documents, far fewer than its
            // second word's (PyPI, `"library for"`: reading `for` was half of the phrase's
            // ranking).
            Group::Phrase(_, Some(_)) if self.terms.groups.len() == 1 => {
                either(Box::new(BooleanQuery::new(vec![
                    (Occur::Must, within.box_clone()),
                    (Occur::Must, self.opening_markers()),
                ])))
            }
            Group::Phrase(words, None) if self.terms.groups.len() == 1 => {
                let mut groups = vec![self.opening_terms()];
                groups.extend(words[1..].iter().map(|(_, t)| vec![t.clone()]));
                either(Box::new(TermSet::all_of(groups)))
            }
            _ => Box::new(BooleanQuery::new(vec![
                (Occur::Must, within.box_clone()),
                (Occur::Must, either(self.opening_markers())),
            ])),
        }
    }
}
