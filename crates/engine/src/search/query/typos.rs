//! Typo derivations: the `typoTolerance` readers (how many typos a word may have), the
//! Levenshtein walk of tantivy's term dictionary, and the derivations added once a search
//! needs them (typos, two or three query words written as one, one word written as two).

use std::sync::Arc;

use api_types::Result;
use tantivy::Term;

use super::group::Group;
use super::terms::Terms;
use crate::index::segments::Words;
use crate::index::tv;
use crate::search::SearchContext;

/// At most this many derivations per word: with one typo, then with two (Meilisearch's caps).
const ONE_TYPO_CAP: usize = 150;
const TWO_TYPO_CAP: usize = 50;
/// How many dictionary entries a derivation walk visits per segment, at most: a prefix
/// automaton accepts every continuation of every near prefix (`asynchronou…` has thousands).
const TYPO_SCAN: usize = 4_000;

/// Walks the words of `words` starting with the bytes `first` that a Levenshtein automaton
/// accepts, in byte order, handing each to `visit` until it answers false. `prefix`: `dfa` is
/// a prefix automaton, and the walk leaves out the words starting with the query word as
/// typed.
fn walk_dictionary(
    words: &Words,
    dfa: &levenshtein_automata::DFA,
    prefix: bool,
    first: &[u8],
    visit: impl FnMut(&[u8]) -> bool,
) {
    use levenshtein_automata::{Distance, SINK_STATE};
    let step = |state: u32, byte: u8| {
        let next = dfa.transition(state, byte);
        (next != SINK_STATE).then_some(next)
    };
    // A prefix automaton's distance is that of the target's closest prefix, so once a path
    // spells the query word, every word below it is at distance 0: the word's completions,
    // which are no typo derivation. The walk does not go down there (on PyPI, `package` has
    // hundreds of them).
    let below = |state: u32| !(prefix && dfa.distance(state) == Distance::Exact(0));
    let accept = |state: u32| matches!(dfa.distance(state), Distance::Exact(_));
    walk_words(
        words,
        first,
        dfa.initial_state(),
        step,
        below,
        accept,
        visit,
    );
}

/// Walks the words of `words` starting with the bytes `start`, in byte order, under an
/// automaton: `step` gives the state after a byte (`None`: no word below can be accepted),
/// `below` whether the walk goes down from a state, `accept` whether a word ending in a
/// state is one. Each accepted word goes to `visit` until it answers false.
///
/// The walk goes down the FST itself rather than through tantivy's automaton stream, which
/// decodes every child node before asking the automaton whether the child can match: in a
/// Levenshtein walk most children cannot, and on PyPI's dictionary the stream took 3 to 4
/// times as long for the same words (one typo, `dxango`: 120 against 32 µs; two typos,
/// `smalx`: 1,100 against 420 µs).
fn walk_words<S: Copy>(
    words: &Words,
    start: &[u8],
    initial: S,
    step: impl Fn(S, u8) -> Option<S>,
    below: impl Fn(S) -> bool,
    accept: impl Fn(S) -> bool,
    mut visit: impl FnMut(&[u8]) -> bool,
) {
    let mut node = words.root();
    let mut state = initial;
    for (k, &b) in start.iter().enumerate() {
        let Some(i) = node.find_input(b) else {
            return;
        };
        let Some(next) = step(state, b) else {
            return;
        };
        state = next;
        node = words.node(node.transition_addr(i));
        if k + 1 < start.len() && !below(state) {
            return;
        }
    }
    let mut key = start.to_vec();
    if (node.is_final() && accept(state) && !visit(&key)) || !below(state) {
        return;
    }
    // Per level below `start`: the node, its next transition, the automaton's state there.
    let mut stack = vec![(node, 0usize, state)];
    while let Some(top) = stack.last_mut() {
        if top.1 >= top.0.len() {
            stack.pop();
            key.pop();
            continue;
        }
        let t = top.0.transition(top.1);
        top.1 += 1;
        let Some(next) = step(top.2, t.inp) else {
            continue;
        };
        let child = words.node(t.addr);
        key.push(t.inp);
        if child.is_final() && accept(next) && !visit(&key) {
            return;
        }
        if below(next) {
            stack.push((child, 0, next));
        } else {
            key.pop();
        }
    }
}

/// Walks every word of `words` starting with the bytes `start`, in byte order, handing each
/// to `visit` until it answers false.
fn words_below(words: &Words, start: &[u8], visit: impl FnMut(&[u8]) -> bool) {
    walk_words(words, start, (), |_, _| Some(()), |_| true, |_| true, visit);
}

/// Builders are costly (the 2-typo one especially): built once.
fn lev_builder(typos: u8) -> &'static levenshtein_automata::LevenshteinAutomatonBuilder {
    use std::sync::OnceLock;
    static ONE: OnceLock<levenshtein_automata::LevenshteinAutomatonBuilder> = OnceLock::new();
    static TWO: OnceLock<levenshtein_automata::LevenshteinAutomatonBuilder> = OnceLock::new();
    let cell = if typos >= 2 { &TWO } else { &ONE };
    cell.get_or_init(|| levenshtein_automata::LevenshteinAutomatonBuilder::new(typos.min(2), true))
}

impl SearchContext<'_> {
    /// Looks up the typo derivations of every word with a budget (once): the fast path only
    /// needs them when the exact words leave the page short or the count must be walked.
    pub(crate) fn derive_typos(
        &self,
        searcher: &tantivy::Searcher,
        terms: &mut Terms,
    ) -> Result<()> {
        if terms.derived {
            return Ok(());
        }
        terms.derived = true;
        let exists = |w: &str| -> Result<u64> {
            searcher
                .doc_freq(&Term::from_field_text(self.fields().words, w))
                .map_err(tv)
        };
        // Two or three query words written as one: the concatenation matches each of them,
        // at one typo each (Meilisearch's n-grams cost n). With the prefix word, the
        // concatenation is a prefix too (`shortcut badge` finds `ShortcutBadger`), as in
        // Meilisearch: the joined word and its most frequent completions.
        let mut ngrams: Vec<(usize, Term)> = Vec::new();
        for start in 0..terms.groups.len() {
            let mut joined = String::new();
            for end in start..(start + 3).min(terms.groups.len()) {
                let Group::Word { word, .. } = &terms.groups[end] else {
                    break;
                };
                let qw = &terms.words[*word];
                if end > start && terms.positions[end] != terms.positions[end - 1] + 1 {
                    break;
                }
                joined.push_str(&qw.word);
                if end > start {
                    let mut found = Vec::new();
                    if exists(&joined)? > 0 {
                        found.push(Term::from_field_text(self.fields().words, &joined));
                    }
                    if qw.prefix {
                        found.extend(self.completions(searcher, &joined)?);
                    }
                    for t in found {
                        ngrams.extend((start..=end).map(|i| (i, t.clone())));
                    }
                }
                if qw.prefix {
                    break;
                }
            }
        }
        for (gi, g) in terms.groups.iter_mut().enumerate() {
            if let Group::Word {
                typos,
                word,
                budget,
                split,
                ..
            } = g
            {
                let qw = &mut terms.words[*word];
                let pinned = terms.pins.as_ref().and_then(|p| p.word(&qw.word));
                if let Some(p) = pinned {
                    *typos = p
                        .typos
                        .iter()
                        .map(|(w, n)| (Term::from_field_text(self.fields().words, w), *n))
                        .collect();
                } else if *budget > 0 {
                    *typos = self.typo_derivations(searcher, &qw.word, *budget, qw.prefix)?;
                }
                typos.extend(
                    ngrams
                        .iter()
                        .filter(|(i, _)| *i == gi)
                        .map(|(_, t)| (t.clone(), 1)),
                );
                // One word written as two: the split whose halves stand side by side in the
                // most documents, at one typo, even where typos are off. The last word splits
                // too, into two whole words (as in Meilisearch: `appframe` finds `app-frame`,
                // `appfra` finds no `app frame`).
                let best = match pinned {
                    Some(p) => p.split,
                    None => self.best_split_of(searcher, &qw.word)?,
                };
                if let Some(i) = best {
                    let halves = [&qw.word[..i], &qw.word[i..]];
                    *split = Some(
                        halves
                            .iter()
                            .map(|h| Term::from_field_text(self.fields().words, h))
                            .collect(),
                    );
                    qw.typos.extend(halves.iter().map(|h| h.to_string()));
                }
                qw.typos.extend(
                    typos
                        .iter()
                        .filter_map(|(t, _)| t.value().as_str().map(str::to_string)),
                );
            }
        }
        Ok(())
    }

    /// Indexed words within `budget` typos of `word` (Damerau-Levenshtein; of a prefix of
    /// them when `prefix`), the word itself aside. A derivation keeps the first letter, except
    /// that with a 2-typo budget a first-letter change alone (distance 1) counts as 2 typos.
    fn typo_derivations(
        &self,
        searcher: &tantivy::Searcher,
        word: &str,
        budget: u8,
        prefix: bool,
    ) -> Result<Vec<(Term, u8)>> {
        let found = self.typo_candidates(searcher, word, budget, prefix)?;
        Ok(select_typos(&found, budget, prefix)
            .into_iter()
            .map(|(w, n)| (Term::from_field_text(self.fields().words, &w), n))
            .collect())
    }

    /// Per split point of `word` (a byte offset) where both halves are indexed: how many
    /// documents hold the halves side by side, in that order.
    pub(super) fn split_candidates(
        &self,
        searcher: &tantivy::Searcher,
        word: &str,
    ) -> Result<Vec<(usize, u64)>> {
        let mut out = Vec::new();
        for (i, bound) in self.split_bounds(searcher, word)? {
            if bound > 0 {
                out.push((i, self.pair_count(searcher, word, i)?));
            }
        }
        Ok(out)
    }

    /// The split [`best_split`] takes from [`Self::split_candidates`], counting side-by-side
    /// halves only while a split could still beat the best count so far (its rarer half
    /// bounds it). Recent words' splits are kept for the searcher's generation.
    pub(super) fn best_split_of(
        &self,
        searcher: &tantivy::Searcher,
        word: &str,
    ) -> Result<Option<usize>> {
        let generation = searcher.generation().generation_id();
        if let Some(split) = self
            .word_cache()
            .lock()
            .unwrap()
            .splits
            .get(generation, word)
        {
            return Ok(split);
        }
        let split = self.count_best_split(searcher, word)?;
        self.word_cache()
            .lock()
            .unwrap()
            .splits
            .put(generation, word.into(), split);
        Ok(split)
    }

    fn count_best_split(&self, searcher: &tantivy::Searcher, word: &str) -> Result<Option<usize>> {
        let mut bounds = self.split_bounds(searcher, word)?;
        // Most promising first (a stable sort: equal bounds stay in word order).
        bounds.sort_by_key(|b| std::cmp::Reverse(b.1));
        let mut counted: Vec<(usize, u64)> = Vec::new();
        let mut most = 0;
        for (i, bound) in bounds {
            if bound == 0 || bound < most {
                break;
            }
            let n = self.pair_count(searcher, word, i)?;
            most = most.max(n);
            counted.push((i, n));
        }
        counted.sort_unstable_by_key(|s| s.0);
        Ok(best_split(&counted))
    }

    /// Per split point: the document frequency of the rarer half (a bound of the pair's).
    fn split_bounds(&self, searcher: &tantivy::Searcher, word: &str) -> Result<Vec<(usize, u64)>> {
        let freq = |w: &str| -> Result<u64> {
            searcher
                .doc_freq(&Term::from_field_text(self.fields().words, w))
                .map_err(tv)
        };
        word.char_indices()
            .skip(1)
            .map(|(i, _)| Ok((i, freq(&word[..i])?.min(freq(&word[i..])?))))
            .collect()
    }

    /// How many live documents hold `word` split at `i` as two adjacent words.
    fn pair_count(&self, searcher: &tantivy::Searcher, word: &str, i: usize) -> Result<u64> {
        let halves =
            [&word[..i], &word[i..]].map(|h| Term::from_field_text(self.fields().words, h));
        let phrase = tantivy::query::PhraseQuery::new(halves.to_vec());
        Ok(searcher
            .search(&phrase, &tantivy::collector::Count)
            .map_err(tv)? as u64)
    }

    /// What [`select_typos`] chooses from, the same whatever the segments: each list in byte
    /// order, as if the dictionary were one (and the union of several instances' lists is the
    /// list of one holding all their words). Recent words' walks are kept for the searcher's
    /// generation.
    pub(super) fn typo_candidates(
        &self,
        searcher: &tantivy::Searcher,
        word: &str,
        budget: u8,
        prefix: bool,
    ) -> Result<Arc<TypoCandidates>> {
        if budget == 0 {
            return Ok(Arc::default());
        }
        let generation = searcher.generation().generation_id();
        let key = (Box::<str>::from(word), budget, prefix);
        if let Some(found) = self
            .word_cache()
            .lock()
            .unwrap()
            .walks
            .get(generation, &key)
        {
            return Ok(found);
        }
        let found = Arc::new(self.walk_typos(searcher, word, budget, prefix)?);
        self.word_cache()
            .lock()
            .unwrap()
            .walks
            .put(generation, key, found.clone());
        Ok(found)
    }

    fn walk_typos(
        &self,
        searcher: &tantivy::Searcher,
        word: &str,
        budget: u8,
        prefix: bool,
    ) -> Result<TypoCandidates> {
        let mut out = TypoCandidates::default();
        let builder = lev_builder(budget);
        let check = if prefix {
            builder.build_prefix_dfa(word)
        } else {
            builder.build_dfa(word)
        };
        let Some(first) = word.chars().next() else {
            return Ok(out);
        };
        let rest = &word[first.len_utf8()..];
        // With two typos to spend, one edit on the first letter costs both: a different
        // first letter, a letter added before it, the first letter dropped, or the first
        // two swapped. Few enough to look up one by one.
        let mut variants: Vec<String> = Vec::new();
        if budget >= 2 {
            for c in ('a'..='z').chain('0'..='9') {
                if c != first {
                    variants.push(format!("{c}{rest}"));
                    variants.push(format!("{c}{word}"));
                }
            }
            variants.push(rest.to_string());
            let mut chars = rest.chars();
            if let Some(second) = chars.next() {
                variants.push(format!("{second}{first}{}", chars.as_str()));
            }
            variants.retain(|v| !v.is_empty());
        }
        out.variants = vec![Vec::new(); variants.len()];
        // Derivations keep the first letter: the automaton only walks the part of the
        // dictionary starting with it, which is where nearly all of the cost would go.
        let mut first_bytes = [0u8; 4];
        let first_bytes = first.encode_utf8(&mut first_bytes).as_bytes();
        for segment in searcher.segment_readers() {
            let words = self.segment_words(segment)?;
            let (mut one, mut two) = (0, 0);
            let mut visited = 0;
            walk_dictionary(&words, &check, prefix, first_bytes, |key| {
                visited += 1;
                let Ok(text) = std::str::from_utf8(key) else {
                    return visited < TYPO_SCAN;
                };
                if text == word || (prefix && text.starts_with(word)) {
                    return visited < TYPO_SCAN;
                }
                match check.eval(key) {
                    levenshtein_automata::Distance::Exact(1) if one < ONE_TYPO_CAP => {
                        out.one.push(text.to_string());
                        one += 1;
                    }
                    levenshtein_automata::Distance::Exact(2) if two < TWO_TYPO_CAP => {
                        out.two.push(text.to_string());
                        two += 1;
                    }
                    _ => {}
                }
                let full = one >= ONE_TYPO_CAP && (budget < 2 || two >= TWO_TYPO_CAP);
                visited < TYPO_SCAN && !full
            });
            for (v, found) in variants.iter().zip(out.variants.iter_mut()) {
                if prefix {
                    let mut taken = 0;
                    words_below(&words, v.as_bytes(), |key| {
                        if let Ok(text) = std::str::from_utf8(key) {
                            found.push(text.to_string());
                        }
                        taken += 1;
                        taken < VARIANT_COMPLETIONS
                    });
                } else if words.get(v.as_bytes()).is_some() {
                    found.push(v.clone());
                }
            }
        }
        out.normalize();
        Ok(out)
    }
}

/// How many completions of each first-letter variant a prefix word may take.
const VARIANT_COMPLETIONS: usize = 10;

/// The words a typo walk found for one query word (see [`SearchContext::typo_candidates`]): in byte
/// order, without repeats, at most what the selection can take.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TypoCandidates {
    /// At one typo, then at two.
    pub one: Vec<String>,
    pub two: Vec<String>,
    /// Per first-letter variant (in their fixed order): the words it finds.
    pub variants: Vec<Vec<String>>,
}

impl TypoCandidates {
    /// Sorted, without repeats, cut to what the selection can use.
    pub(crate) fn normalize(&mut self) {
        let tidy = |list: &mut Vec<String>, cap: usize| {
            list.sort_unstable();
            list.dedup();
            list.truncate(cap);
        };
        tidy(&mut self.one, ONE_TYPO_CAP);
        tidy(&mut self.two, TWO_TYPO_CAP);
        for v in &mut self.variants {
            tidy(v, VARIANT_COMPLETIONS.max(1));
        }
    }

    /// The candidates of several instances as one holding all their words would find them.
    pub(crate) fn union(parts: impl IntoIterator<Item = TypoCandidates>) -> TypoCandidates {
        let mut out = TypoCandidates::default();
        for p in parts {
            out.one.extend(p.one);
            out.two.extend(p.two);
            if out.variants.len() < p.variants.len() {
                out.variants.resize(p.variants.len(), Vec::new());
            }
            for (o, v) in out.variants.iter_mut().zip(p.variants) {
                o.extend(v);
            }
        }
        out.normalize();
        out
    }
}

/// The derivations of one word with their typo counts: the one-typo words, then the two-typo
/// ones, then the first-letter variants' (two typos) while there is room.
pub(crate) fn select_typos(c: &TypoCandidates, budget: u8, prefix: bool) -> Vec<(String, u8)> {
    let one: Vec<String> = c.one.iter().take(ONE_TYPO_CAP).cloned().collect();
    let mut two: Vec<String> = c.two.iter().take(TWO_TYPO_CAP).cloned().collect();
    if budget >= 2 {
        for found in &c.variants {
            let per_variant = if prefix { VARIANT_COMPLETIONS } else { 1 };
            for w in found.iter().take(per_variant) {
                if two.len() >= TWO_TYPO_CAP {
                    break;
                }
                if !two.contains(w) && !one.contains(w) {
                    two.push(w.clone());
                }
            }
        }
    }
    one.into_iter()
        .map(|w| (w, 1))
        .chain(two.into_iter().map(|w| (w, 2)))
        .collect()
}

/// The split whose halves stand side by side in the most documents (the first of equals), as
/// Meilisearch chooses it; none when no document holds them so.
pub(crate) fn best_split(splits: &[(usize, u64)]) -> Option<usize> {
    let mut best: Option<(u64, usize)> = None;
    for &(i, f) in splits {
        if f > 0 && best.is_none_or(|(b, _)| f > b) {
            best = Some((f, i));
        }
    }
    best.map(|(_, i)| i)
}

#[cfg(test)]
mod tests;
