//! The relevancy ranking rules, evaluated per document from the positions tantivy stores.
//!
//! Meilisearch sorts buckets of documents rule by rule (bucket sort); each rule gives a
//! document a rank out of a maximum, the rules compared in order. Here every candidate a
//! page needs gets its ranks computed at once from its occurrences of the query's terms
//! (positions are `field << 16 | position`, see `text`), then candidates are sorted on those
//! ranks: the same total order, without a bitmap per rule. Each rule narrows, as Meilisearch's
//! sub-graphs do, the occurrences the later rules look at: after `typo` only the derivations
//! with the fewest typos count, after `attributeRank` only occurrences in the best field,
//! after `wordPosition` only the best-placed ones.
//!
//! Scores follow Meilisearch's `score_details`: a rule's rank over its maximum, rules merged
//! like digits of a mixed-radix number, so scores order documents exactly as the rules do.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde_json::{json, Map, Value};
use tantivy::postings::{Postings, SegmentPostings};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocId, DocSet, Term, TERMINATED};

/// A relevancy rule or a sort key, in ranking-rule order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Words,
    Typo,
    Proximity,
    AttributeRank,
    WordPosition,
    /// The older `attribute` rule: attributeRank then wordPosition, one detail entry.
    Attribute,
    Exactness,
    /// A `sort` entry or a custom `attr:asc|desc` rule: index into the candidate's keys.
    Key {
        slot: usize,
        asc: bool,
    },
}

/// One way a query term occurs: a word (or a sequence of words at offsets, for phrases and
/// multi-word synonyms) with its typo cost and whether it is the word as typed.
pub struct Derivation {
    pub words: Vec<(u32, Term)>,
    pub typos: u8,
    pub exact: bool,
}

/// A positive part of the query, as the rules see it.
pub struct QueryTerm {
    pub derivations: Vec<Derivation>,
    /// Position in the query (stop words count, as in documents).
    pub position: u32,
    /// Words it stands for (a phrase's length; 1 for a word).
    pub word_count: u32,
    /// Positions it spans in the query (a phrase's, stop words included).
    pub span: u32,
}

/// What the rules need besides the terms.
pub struct Context<'a> {
    pub rules: &'a [Rule],
    /// Terms in the order `words` drops them (never-dropped ones absent); `None`: `all`.
    pub drop_order: Option<&'a [usize]>,
    /// Per field id: its weight (index of its `searchableAttributes` entry).
    pub weights: &'a [u32],
    /// The largest weight.
    pub max_weight: u32,
    /// Per field id: whether `attributesToSearchOn` lets it match (`None`: all do).
    pub search_on: Option<&'a [bool]>,
    /// Per field id: whether typo derivations may match there (`typoTolerance`'s
    /// `disableOnAttributes`; `None`: everywhere).
    pub typos_in: Option<&'a [bool]>,
    /// `proximityPrecision: byAttribute`: words are close when they share a field.
    pub by_attribute: bool,
    /// Per term: the most typos one of its derivations has.
    pub max_typos: &'a [u8],
}

/// One occurrence of a term in a document.
#[derive(Clone, Copy, Debug)]
pub struct Occ {
    pos: u32,
    typos: u8,
    exact: bool,
    /// Positions it covers (phrases, multi-word synonyms).
    span: u32,
}

impl Occ {
    fn field(&self) -> u32 {
        self.pos >> 16
    }
    fn offset(&self) -> u32 {
        self.pos & 0xFFFF
    }
    fn last(&self) -> u32 {
        self.pos + self.span.saturating_sub(1)
    }
}

/// A rule's verdict on a document.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Score {
    Words {
        matching: u32,
        max: u32,
    },
    Typo {
        typos: u32,
        max: u32,
    },
    Proximity {
        rank: u32,
        max: u32,
    },
    AttributeRank {
        rank: u32,
        max: u32,
    },
    WordPosition {
        rank: u32,
        max: u32,
    },
    Attribute {
        attr: (u32, u32),
        position: (u32, u32),
    },
    /// `kind`: 3 exact match, 2 matches start, 1 neither; `words` terms present as typed.
    Exactness {
        kind: u32,
        words: u32,
        max: u32,
    },
}

/// (rank, max) pairs merged like digits of a mixed-radix number (Meilisearch's score merge);
/// past ~30 digits of precision the score no longer changes.
fn merged(pairs: impl IntoIterator<Item = (u32, u32)>) -> f64 {
    let (mut rank, mut max) = (1u128, 1u128);
    for (r, m) in pairs {
        if max.saturating_mul(m as u128) > (1u128 << 100) {
            break;
        }
        rank = (rank - 1) * m as u128 + r as u128;
        max *= m as u128;
    }
    rank as f64 / max as f64
}

/// `_rankingScoreDetails` entries of one verdict (key, value).
pub fn detail(score: &Score, order: usize) -> (&'static str, Value) {
    let ratio = |r: u32, m: u32| r as f64 / m.max(1) as f64;
    match *score {
        Score::Words { matching, max } => (
            "words",
            json!({"order": order, "matchingWords": matching, "maxMatchingWords": max, "score": ratio(matching, max)}),
        ),
        Score::Typo { typos, max } => (
            "typo",
            json!({"order": order, "typoCount": typos, "maxTypoCount": max, "score": ratio(max + 1 - typos, max + 1)}),
        ),
        Score::Proximity { rank, max } => (
            "proximity",
            json!({"order": order, "score": ratio(rank, max)}),
        ),
        Score::AttributeRank { rank, max } => (
            "attributeRank",
            json!({"order": order, "score": ratio(rank, max)}),
        ),
        Score::WordPosition { rank, max } => (
            "wordPosition",
            json!({"order": order, "score": ratio(rank, max)}),
        ),
        Score::Attribute { attr, position } => (
            "attribute",
            json!({
                "order": order,
                "attributeRankingOrderScore": ratio(attr.0, attr.1),
                "queryWordDistanceScore": ratio(position.0, position.1),
                "score": merged([attr, position]),
            }),
        ),
        Score::Exactness { kind, words, max } => {
            let mut m = Map::new();
            m.insert("order".into(), json!(order));
            let name = match kind {
                3 => "exactMatch",
                2 => "matchesStart",
                _ => "noExactMatch",
            };
            m.insert("matchType".into(), json!(name));
            if kind == 1 {
                m.insert("matchingWords".into(), json!(words));
                m.insert("maxMatchingWords".into(), json!(max));
                m.insert(
                    "score".into(),
                    json!(merged([(1, 3), (words + 1, max + 1)])),
                );
            } else {
                m.insert("score".into(), json!(ratio(kind, 3)));
            }
            ("exactness", Value::Object(m))
        }
    }
}

/// Document position buckets for `wordPosition` (milli's `bucketed_position`).
fn bucketed(offset: u32) -> u32 {
    match offset {
        0..16 => offset,
        16..24 => 24,
        _ => offset.next_power_of_two(),
    }
}

/// `wordPosition` cost of a distance between document and query positions.
fn distance_cost(d: u32) -> u32 {
    match d {
        0 => 0,
        1 => 1,
        2..=4 => 2,
        5..=7 => 3,
        8..=11 => 4,
        12..=16 => 5,
        17..=24 => 6,
        25..=64 => 7,
        65..=256 => 8,
        257..=1024 => 9,
        _ => 10,
    }
}

/// `proximity` cost of `b` following `a` (`a` ends at `a_last`): 0 adjacent, 1 one word
/// between or swapped, 2 two between or swapped with one between, else 3.
fn pair_cost(a_last: u32, b: u32) -> u32 {
    if a_last >> 16 != b >> 16 {
        return 3;
    }
    if b > a_last {
        (b - a_last - 1).min(3)
    } else if b == a_last {
        // Two query words in one document word: a concatenation (2-gram), which
        // Meilisearch counts one apart.
        1
    } else {
        (a_last - b).min(3)
    }
}

/// A phrase or multi-word synonym: its words' postings at their offsets, typo cost, whether
/// it is as typed, positions spanned.
type Sequence = (Vec<(u32, SegmentPostings)>, u8, bool, u32);

/// Reads, segment by segment, the occurrences of every term in chosen documents.
pub struct TermReader {
    singles: Vec<(SegmentPostings, u8, bool)>,
    heap: BinaryHeap<Reverse<(DocId, usize)>>,
    sequences: Vec<Sequence>,
    buf: Vec<u32>,
}

impl TermReader {
    pub fn open(
        inverted: &tantivy::InvertedIndexReader,
        term: &QueryTerm,
    ) -> tantivy::Result<TermReader> {
        let mut singles = Vec::new();
        let mut sequences = Vec::new();
        for d in &term.derivations {
            if d.words.len() == 1 && d.words[0].0 == 0 {
                if let Some(p) = inverted
                    .read_postings(&d.words[0].1, IndexRecordOption::WithFreqsAndPositions)?
                {
                    singles.push((p, d.typos, d.exact));
                }
            } else {
                let mut parts = Vec::new();
                for (off, t) in &d.words {
                    match inverted.read_postings(t, IndexRecordOption::WithFreqsAndPositions)? {
                        Some(p) => parts.push((*off, p)),
                        None => {
                            parts.clear();
                            break;
                        }
                    }
                }
                if !parts.is_empty() {
                    let span = d.words.iter().map(|(o, _)| o + 1).max().unwrap_or(1);
                    sequences.push((parts, d.typos, d.exact, span));
                }
            }
        }
        let heap = singles
            .iter()
            .enumerate()
            .filter(|(_, (p, _, _))| p.doc() != TERMINATED && singles.len() > 1)
            .map(|(i, (p, _, _))| Reverse((p.doc(), i)))
            .collect();
        Ok(TermReader {
            singles,
            heap,
            sequences,
            buf: Vec::new(),
        })
    }

    /// The term's occurrences in `doc` (documents asked in increasing order).
    fn read(&mut self, doc: DocId, out: &mut Vec<Occ>) {
        if self.singles.len() == 1 {
            // One word: no merging needed.
            let (p, typos, exact) = &mut self.singles[0];
            if p.doc() < doc {
                p.seek(doc);
            }
            if p.doc() == doc {
                read_positions(p, *typos, *exact, &mut self.buf, out);
            }
        }
        while let Some(&Reverse((d, i))) = self.heap.peek() {
            if d > doc {
                break;
            }
            self.heap.pop();
            let (p, typos, exact) = &mut self.singles[i];
            if d < doc && p.seek(doc) != doc {
                if p.doc() != TERMINATED {
                    self.heap.push(Reverse((p.doc(), i)));
                }
                continue;
            }
            read_positions(p, *typos, *exact, &mut self.buf, out);
            if p.advance() != TERMINATED {
                self.heap.push(Reverse((p.doc(), i)));
            }
        }
        for (parts, typos, exact, span) in &mut self.sequences {
            if parts.iter_mut().any(|(_, p)| p.seek(doc) != doc) {
                continue;
            }
            let mut lists: Vec<(u32, Vec<u32>)> = Vec::with_capacity(parts.len());
            for (off, p) in parts.iter_mut() {
                let mut v = Vec::new();
                p.positions(&mut v);
                lists.push((*off, v));
            }
            let (first_off, first) = &lists[0];
            for &p0 in first {
                let Some(start) = p0.checked_sub(*first_off) else {
                    continue;
                };
                let all = lists[1..]
                    .iter()
                    .all(|(off, v)| v.binary_search(&(start + off)).is_ok());
                // A sequence stays inside one field.
                if all && (start >> 16) == ((start + *span - 1) >> 16) {
                    out.push(Occ {
                        pos: start,
                        typos: *typos,
                        exact: *exact,
                        span: *span,
                    });
                }
            }
        }
    }
}

/// Digits of a verdict: at most 8 (rank, max) pairs (words, typo, proximity, attributeRank,
/// wordPosition, two for exactness; the legacy `attribute` takes two).
const DIGITS: usize = 8;

/// A document's verdict on every relevancy rule, as digits: each a cost (max − rank, lower is
/// better) packed 16 bits apiece into `cost` in rule order, so one integer comparison orders
/// two documents on all the rules at once; `max` keeps each digit's maximum for the scores.
#[derive(Clone, Copy, Debug, Default)]
pub struct Verdict {
    pub cost: u128,
    max: [u16; DIGITS],
    len: u8,
}

impl Verdict {
    fn push(&mut self, rank: u32, max: u32) {
        let i = self.len as usize;
        if i >= DIGITS {
            return;
        }
        let max = max.clamp(1, u16::MAX as u32);
        let cost = max - rank.clamp(1, max);
        self.cost |= (cost as u128) << (16 * (DIGITS - 1 - i));
        self.max[i] = max as u16;
        self.len += 1;
    }

    fn digit(&self, i: usize) -> (u32, u32) {
        let cost = ((self.cost >> (16 * (DIGITS - 1 - i))) & 0xFFFF) as u32;
        let max = self.max[i] as u32;
        (max - cost, max)
    }

    /// The digits of rules `[from, to)` (by digit index), packed as in `cost`, to compare on
    /// some rules only (when sort keys come between).
    pub fn cost_range(&self, from: usize, to: usize) -> u128 {
        if from >= to {
            return 0;
        }
        let width = 16 * (to - from);
        let shifted = self.cost >> (16 * (DIGITS - to));
        if width >= 128 {
            shifted
        } else {
            shifted & ((1u128 << width) - 1)
        }
    }

    /// The global ranking score (see [`global_score`]).
    pub fn score(&self) -> f64 {
        merged((0..self.len as usize).map(|i| self.digit(i)))
    }

    /// The verdict as one [`Score`] per relevancy rule of `rules`.
    pub fn scores(&self, rules: &[Rule]) -> Vec<Score> {
        let mut out = Vec::new();
        let mut d = 0;
        for r in rules {
            let mut next = || {
                let x = self.digit(d);
                d += 1;
                x
            };
            out.push(match r {
                Rule::Words => {
                    let (matching, max) = next();
                    Score::Words { matching, max }
                }
                Rule::Typo => {
                    let (rank, max) = next();
                    Score::Typo {
                        typos: max - rank,
                        max: max - 1,
                    }
                }
                Rule::Proximity => {
                    let (rank, max) = next();
                    Score::Proximity { rank, max }
                }
                Rule::AttributeRank => {
                    let (rank, max) = next();
                    Score::AttributeRank { rank, max }
                }
                Rule::WordPosition => {
                    let (rank, max) = next();
                    Score::WordPosition { rank, max }
                }
                Rule::Attribute => {
                    let attr = next();
                    let position = next();
                    Score::Attribute { attr, position }
                }
                Rule::Exactness => {
                    let (kind, _) = next();
                    let (words, max) = next();
                    Score::Exactness {
                        kind,
                        words: words - 1,
                        max: max - 1,
                    }
                }
                Rule::Key { .. } => continue,
            });
        }
        out
    }
}

/// How many digits a rule takes in a [`Verdict`].
pub fn digits(rule: &Rule) -> usize {
    match rule {
        Rule::Attribute | Rule::Exactness => 2,
        Rule::Key { .. } => 0,
        _ => 1,
    }
}

/// Appends the occurrences of one word in the document `postings` is on.
fn read_positions(
    postings: &mut SegmentPostings,
    typos: u8,
    exact: bool,
    buf: &mut Vec<u32>,
    out: &mut Vec<Occ>,
) {
    buf.clear();
    postings.positions(buf);
    out.extend(buf.iter().map(|&pos| Occ {
        pos,
        typos,
        exact,
        span: 1,
    }));
}

/// Ranks one document: its verdict on the relevancy rules of `ctx.rules` (sort keys skipped),
/// `None` when a term the strategy requires is missing (after `attributesToSearchOn`).
pub fn rank(
    ctx: &Context,
    terms: &[QueryTerm],
    readers: &mut [TermReader],
    doc: DocId,
    lens: &dyn Fn() -> Vec<u64>,
    scratch: &mut Vec<Vec<Occ>>,
) -> Option<Verdict> {
    let n = terms.len();
    scratch.resize_with(n, Vec::new);
    for (t, r) in readers.iter_mut().enumerate() {
        let occ = &mut scratch[t];
        occ.clear();
        r.read(doc, occ);
        if let Some(on) = ctx.search_on {
            occ.retain(|o| on.get(o.field() as usize).copied().unwrap_or(false));
        }
        if let Some(ok) = ctx.typos_in {
            occ.retain(|o| o.typos == 0 || ok.get(o.field() as usize).copied().unwrap_or(true));
        }
        if occ.len() > 1 {
            occ.sort_unstable_by_key(|o| o.pos);
        }
    }
    let occ = scratch;
    // `words`: drop terms in order until every remaining one is present.
    let mut kept_mask: u32 = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
    if let Some(order) = ctx.drop_order {
        let mut dropped = 0;
        while (0..n).any(|t| kept_mask & (1 << t) != 0 && occ[t].is_empty()) {
            let &t = order.get(dropped)?;
            kept_mask &= !(1 << t);
            dropped += 1;
        }
    } else if occ.iter().any(Vec::is_empty) {
        return None;
    }
    let mut kept_buf = [0usize; 32];
    let mut k = 0;
    for t in 0..n.min(32) {
        if kept_mask & (1 << t) != 0 {
            kept_buf[k] = t;
            k += 1;
        }
    }
    let kept = &kept_buf[..k];
    if kept.is_empty() {
        return None;
    }
    let mut v = Verdict::default();
    for rule in ctx.rules {
        match rule {
            Rule::Words => {
                let max: u32 = terms.iter().map(|t| t.word_count).sum();
                let matching: u32 = kept.iter().map(|t| terms[*t].word_count).sum();
                v.push(matching, max);
            }
            Rule::Typo => {
                let mut typos = 0;
                let mut max = 0;
                for &t in kept {
                    let best = occ[t].iter().map(|o| o.typos).min().unwrap_or(0);
                    if occ[t].iter().any(|o| o.typos != best) {
                        occ[t].retain(|o| o.typos == best);
                    }
                    typos += best as u32;
                    max += ctx.max_typos[t] as u32;
                }
                v.push(max + 1 - typos.min(max), max + 1);
            }
            Rule::Proximity => {
                let mut cost = 0;
                let mut pairs = 0;
                for w in kept.windows(2) {
                    let (a, b) = (&terms[w[0]], &terms[w[1]]);
                    if b.position != a.position + a.span {
                        continue;
                    }
                    pairs += 1;
                    cost += if ctx.by_attribute {
                        let share = occ[w[0]]
                            .iter()
                            .any(|a| occ[w[1]].iter().any(|b| a.field() == b.field()));
                        if share {
                            0
                        } else {
                            3
                        }
                    } else {
                        best_pair(&occ[w[0]], &occ[w[1]])
                    };
                }
                let max = 1 + 3 * pairs;
                v.push(max - cost, max);
            }
            Rule::AttributeRank => {
                let (rank, max) = attribute_rank(ctx, terms, kept, occ);
                v.push(rank, max);
            }
            Rule::WordPosition => {
                let (rank, max) = word_position(terms, kept, occ);
                v.push(rank, max);
            }
            Rule::Attribute => {
                let (rank, max) = attribute_rank(ctx, terms, kept, occ);
                v.push(rank, max);
                let (rank, max) = word_position(terms, kept, occ);
                v.push(rank, max);
            }
            Rule::Exactness => {
                let (kind, words, max) = exactness(terms, kept, occ, lens);
                v.push(kind, 3);
                v.push(words + 1, max + 1);
            }
            Rule::Key { .. } => {}
        }
    }
    Some(v)
}

/// The cheapest proximity between occurrences of two consecutive terms.
fn best_pair(a: &[Occ], b: &[Occ]) -> u32 {
    let mut best = 3;
    for x in a {
        let last = x.last();
        // The closest occurrences of `b` around `last` are the only candidates.
        let i = b.partition_point(|y| y.pos <= last);
        for y in b[i.saturating_sub(3)..(i + 3).min(b.len())].iter() {
            best = best.min(pair_cost(last, y.pos));
            if best == 0 {
                return 0;
            }
        }
    }
    best
}

fn attribute_rank(
    ctx: &Context,
    terms: &[QueryTerm],
    kept: &[usize],
    occ: &mut [Vec<Occ>],
) -> (u32, u32) {
    let weight = |o: &Occ| ctx.weights.get(o.field() as usize).copied().unwrap_or(0);
    let mut cost = 0;
    let mut max = 0;
    for &t in kept {
        let best = occ[t].iter().map(weight).min().unwrap_or(0);
        if occ[t].iter().any(|o| weight(o) != best) {
            occ[t].retain(|o| weight(o) == best);
        }
        cost += best * terms[t].word_count;
        max += ctx.max_weight * terms[t].word_count;
    }
    (max + 1 - cost.min(max), max + 1)
}

fn word_position(terms: &[QueryTerm], kept: &[usize], occ: &mut [Vec<Occ>]) -> (u32, u32) {
    let mut cost = 0;
    let mut max = 0;
    for &t in kept {
        let q = terms[t].position;
        let c = |o: &Occ| distance_cost(bucketed(o.offset()).abs_diff(q));
        let best = occ[t].iter().map(c).min().unwrap_or(10);
        if occ[t].iter().any(|o| c(o) != best) {
            occ[t].retain(|o| c(o) == best);
        }
        cost += best;
        max += 10;
    }
    (max + 1 - cost, max + 1)
}

/// (kind: 3 exact match, 2 matches start, 1 neither; terms present as typed; kept terms).
fn exactness(
    terms: &[QueryTerm],
    kept: &[usize],
    occ: &[Vec<Occ>],
    lens: &dyn Fn() -> Vec<u64>,
) -> (u32, u32, u32) {
    let words = kept
        .iter()
        .filter(|t| occ[**t].iter().any(|o| o.exact))
        .count() as u32;
    let max = kept.len() as u32;
    let mut kind = 1;
    // The kept terms must be the query's first ones, without a hole.
    let prefix = kept.iter().enumerate().all(|(i, t)| i == *t);
    if prefix && words == max {
        // Every term as typed at its query position, in one field.
        let fields_of = |t: usize| -> Vec<u32> {
            let mut f: Vec<u32> = occ[t]
                .iter()
                .filter(|o| o.exact && bucketed(o.offset()) == terms[t].position)
                .map(|o| o.field())
                .collect();
            f.dedup();
            f
        };
        let mut common = fields_of(kept[0]);
        for &t in &kept[1..] {
            let f = fields_of(t);
            common.retain(|x| f.contains(x));
        }
        if !common.is_empty() {
            kind = 2;
            let query_words: u32 = kept.iter().map(|t| terms[*t].word_count).sum();
            if lens()
                .iter()
                .any(|l| common.contains(&((l >> 16) as u32)) && (l & 0xFFFF) as u32 == query_words)
            {
                kind = 3;
            }
        }
    }
    (kind, words, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(digits: &[(u32, u32)]) -> Verdict {
        let mut v = Verdict::default();
        for (r, m) in digits {
            v.push(*r, *m);
        }
        v
    }

    #[test]
    fn scores_merge_like_mixed_radix_digits() {
        // words 3/3 then typo 3/3: a perfect score.
        assert_eq!(verdict(&[(3, 3), (3, 3)]).score(), 1.0);
        // words 2/3, typo 3/3: (2-1)/3 + (3-1)/9 + 1/9 = 2/3
        let s = verdict(&[(2, 3), (3, 3)]).score();
        assert!((s - 2.0 / 3.0).abs() < 1e-12, "{s}");
        // Scores and costs keep the rule order: a better first rule always wins.
        let a = verdict(&[(3, 3), (1, 3)]);
        let b = verdict(&[(2, 3), (3, 3)]);
        assert!(a.score() > b.score());
        assert!(a.cost < b.cost);
        // Details read the digits back.
        let scores = a.scores(&[Rule::Words, Rule::Typo]);
        assert_eq!(
            scores[0],
            Score::Words {
                matching: 3,
                max: 3
            }
        );
        assert_eq!(scores[1], Score::Typo { typos: 2, max: 2 });
    }

    #[test]
    fn cost_ranges_compare_some_rules_only() {
        let v = verdict(&[(3, 3), (1, 3), (2, 2)]);
        assert_eq!(v.cost_range(0, 1), 0);
        assert_eq!(v.cost_range(1, 2), 2);
        assert_eq!(v.cost_range(1, 3), 2 << 16);
    }

    #[test]
    fn proximity_costs() {
        let p = |f: u32, x: u32| (f << 16) | x;
        assert_eq!(pair_cost(p(0, 3), p(0, 4)), 0);
        assert_eq!(pair_cost(p(0, 3), p(0, 3)), 1);
        assert_eq!(pair_cost(p(0, 3), p(0, 5)), 1);
        assert_eq!(pair_cost(p(0, 3), p(0, 2)), 1);
        assert_eq!(pair_cost(p(0, 3), p(0, 6)), 2);
        assert_eq!(pair_cost(p(0, 3), p(0, 1)), 2);
        assert_eq!(pair_cost(p(0, 3), p(0, 9)), 3);
        assert_eq!(pair_cost(p(0, 3), p(1, 4)), 3);
    }

    #[test]
    fn positions_bucket_and_cost() {
        assert_eq!(bucketed(15), 15);
        assert_eq!(bucketed(17), 24);
        assert_eq!(bucketed(40), 64);
        assert_eq!(distance_cost(0), 0);
        assert_eq!(distance_cost(3), 2);
        assert_eq!(distance_cost(2000), 10);
    }

    #[test]
    fn exactness_details_shape() {
        let (key, v) = detail(
            &Score::Exactness {
                kind: 1,
                words: 1,
                max: 2,
            },
            4,
        );
        assert_eq!(key, "exactness");
        assert_eq!(v["matchType"], "noExactMatch");
        assert_eq!(v["matchingWords"], 1);
        // merge((1,3),(2,3)) = 2/9
        assert!((v["score"].as_f64().unwrap() - 2.0 / 9.0).abs() < 1e-12);
    }
}
