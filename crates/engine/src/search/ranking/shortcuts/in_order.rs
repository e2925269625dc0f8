//! Ranking a shortcut set a page at a time: when the documents the set accepts tie on every
//! rule but one short order known beforehand (a sort key, or `exactness` closing the rules),
//! they are ranked in that order, a few at a time, until the page is certain; a frequent
//! word ranks a page's worth of its documents, not all of them. A phrase's level no set
//! settles is ranked by internal id the same way, down to its [`Floor`].

use std::time::Instant;

use api_types::Result;
use roaring::RoaringBitmap;
use tantivy::postings::SegmentPostings;
use tantivy::schema::IndexRecordOption;
use tantivy::{DocId, DocSet, Term};

use super::super::collector::SegmentDocs;
use super::super::document::Context;
use super::super::exactness;
use super::super::levels::{unranked, Level, Run};
use super::super::order::{steps, Ranked, Step};
use super::super::reader::QueryTerm;
use super::super::rule::Rule;
use super::super::verdict::Verdict;
use super::{Floor, ShortcutSet};
use crate::facets::compare_keys;
use crate::index::tv;
use crate::search::SearchContext;

/// How many documents [`SearchContext::rank_in_order`] ranks first, at least.
const STEP: usize = 64;

/// What orders the documents a set accepts once the digits they share are equal.
pub(super) enum Past {
    /// A sort key (its slot and direction), then the internal id.
    Key { slot: usize, asc: bool },
    /// `exactness`, the last rule (its two digits from `digit`), then the internal id.
    /// `words`: the query words a field must have for an exact match (only a document with
    /// a field of that many words can be one; `None`: no document can, its terms not typed);
    /// `floor`: the best exactness cost (the two digits packed) of any other document;
    /// `weighing`: the least weight of a field where the terms may all be (an exact match
    /// needs such a field).
    /// `typed`: with a set of one word's completions or synonyms (no term as typed), the
    /// word's terms as typed: a document holding none of them costs `floor` exactly, so
    /// those holding one are ranked first.
    Exactness {
        digit: usize,
        words: Option<u32>,
        floor: u128,
        weighing: u32,
        typed: Option<Vec<Term>>,
    },
}

impl Past {
    /// The order past the digits every document `set` accepts shares (all up to `zero_to`,
    /// none merely bounded), when it is one of [`Past`]'s; `kept`: the level's kept terms.
    pub(super) fn of(
        rules: &[Rule],
        set: &ShortcutSet,
        qt: &[QueryTerm],
        kept: &[usize],
    ) -> Option<Past> {
        if set.at_most.is_some() && set.ahead.is_none() {
            return None;
        }
        match steps(rules).as_slice() {
            [Step::Digits(0, to), Step::Key { slot, asc }, ..] if *to == set.zero_to => {
                Some(Past::Key {
                    slot: *slot,
                    asc: *asc,
                })
            }
            // A set of typo derivations holds no term as typed; the other sets of one word
            // ranked so hold it as typed (their documents mostly match a field's start, so
            // the page is soon certain).
            [Step::Digits(0, to)]
                if rules.last() == Some(&Rule::Exactness)
                    && *to == set.zero_to + 2
                    && (set.typos > 0 || set.as_typed) =>
            {
                let typed = set.typos == 0;
                Some(Past::Exactness {
                    digit: set.zero_to,
                    words: typed.then(|| kept.iter().map(|t| qt[*t].word_count).sum()),
                    floor: exactness::floor_without_exact_match(typed, kept.len() as u32),
                    weighing: set.ahead.as_ref().map_or(0, |(_, w)| *w),
                    typed: None,
                })
            }
            // A set of one word's completions (a short prefix's are thousands of documents
            // on npm: `rea`) or synonyms: its documents without the word as typed anywhere
            // match neither exactly nor at the start with it, all at one cost.
            [Step::Digits(0, to)]
                if rules.last() == Some(&Rule::Exactness)
                    && *to == set.zero_to + 2
                    && set.typos == 0
                    && set.at_most.is_none()
                    && kept.len() == 1 =>
            {
                let typed = qt[kept[0]]
                    .derivations
                    .iter()
                    .filter(|d| d.exact)
                    .flat_map(|d| d.words.iter().map(|(_, t)| t.clone()))
                    .collect();
                Some(Past::Exactness {
                    digit: set.zero_to,
                    words: None,
                    floor: exactness::floor_without_exact_match(false, 1),
                    weighing: 0,
                    typed: Some(typed),
                })
            }
            _ => None,
        }
    }
}

/// A set's candidates: segment, document, internal id.
type Candidate = (u32, DocId, u32);

/// How [`SearchContext::rank_by_id`] ranks: chunks of at least `step` documents (adding them to
/// `seen` when `mark`), those `accept` takes counted, until `want` of them `precede` every document
/// left.
struct ById<'a> {
    want: usize,
    mark: bool,
    step: usize,
    accept: &'a dyn Fn(&Verdict) -> bool,
    precedes: &'a dyn Fn(&Ranked, u32) -> bool,
}

impl SearchContext<'_> {
    /// Ranks a shortcut set's documents in the order `past` names: chunks of at least
    /// [`STEP`] documents, each twice the last (with a sort key, those of one key value together;
    /// with `exactness`, the documents that may be exact matches first, then the rest by
    /// internal id) until `want` accepted documents come before every document left.
    /// Returns the best `want` ranked and how many were accepted.
    pub(super) fn rank_in_order(
        &self,
        lv: Level,
        (docs, ahead): (SegmentDocs, SegmentDocs),
        seen: &mut [Vec<u64>],
        accept: &dyn Fn(&Verdict) -> bool,
        want: usize,
        past: Past,
    ) -> Result<(Vec<Ranked>, usize)> {
        let (run, ctx) = (lv.run, lv.ctx);
        let (first, candidates) = split_off(docs, &ahead, seen, run);
        let (mut out, mut accepted) = self.rank_part(lv, first, seen, accept, want, false)?;
        // Chunks double: a set whose page comes late is ranked in few calls.
        let mut step = want.max(STEP);
        match past {
            Past::Key { slot, asc } => {
                let ids: Vec<u32> = candidates.iter().map(|c| c.2).collect();
                let keys = self.sort_keys(std::slice::from_ref(&run.key_specs[slot]), &ids)?;
                let cmp = |a: &usize, b: &usize| {
                    compare_keys(&keys[*a], &keys[*b], asc)
                        .then(candidates[*a].2.cmp(&candidates[*b].2))
                };
                let same = |a: usize, b: usize| compare_keys(&keys[a], &keys[b], asc).is_eq();
                // Ordered chunk by chunk: a page is usually settled by the first chunk or two
                // of a set of thousands, so the rest is never sorted (npm, `react` sorted by
                // downloads: sorting the whole set was half of the ranking).
                let mut order: Vec<usize> = (0..candidates.len()).collect();
                let mut start = 0;
                while start < order.len() && accepted < want {
                    let mut end = (start + step).min(order.len());
                    if end < order.len() {
                        order[start..].select_nth_unstable_by(end - start - 1, cmp);
                    }
                    order[start..end].sort_unstable_by(cmp);
                    // The documents of the chunk's last key value join it, in order.
                    let last = order[end - 1];
                    let mut tied = end;
                    for i in end..order.len() {
                        if same(last, order[i]) {
                            order.swap(i, tied);
                            tied += 1;
                        }
                    }
                    order[end..tied].sort_unstable_by(cmp);
                    end = tied;
                    let part = order[start..end].iter().map(|&i| candidates[i]).collect();
                    let (ranked, n) = self.rank_part(lv, part, seen, accept, want, false)?;
                    out.extend(ranked);
                    accepted += n;
                    start = end;
                    step *= 2;
                }
            }
            Past::Exactness {
                digit,
                words,
                floor,
                weighing,
                typed,
            } => {
                // Only a document with a field of `words` words, or holding a term as
                // `typed`, can beat `floor`: those are ranked first, wherever their internal
                // ids fall.
                let mut rest = candidates;
                let mut first = Vec::new();
                if let Some(words) = words {
                    (first, rest) = self.split_by_field_of(run, ctx, rest, words, weighing)?;
                }
                if let Some(typed) = typed {
                    (first, rest) = self.split_by_terms(run, rest, &typed)?;
                }
                if !first.is_empty() {
                    let (ranked, n) = self.rank_part(lv, first, seen, accept, want, false)?;
                    out.extend(ranked);
                    accepted += n;
                }
                // Every document left is no exact match and comes after `frontier` by id:
                // a ranked one beating `floor`, or tying it with a smaller id, precedes it.
                let precedes = |r: &Ranked, frontier: u32| {
                    let e = r.verdict.cost_range(digit, digit + 2);
                    e < floor || (e == floor && r.iid <= frontier)
                };
                let by = ById {
                    want,
                    mark: false,
                    step,
                    accept,
                    precedes: &precedes,
                };
                let (n, _) = self.rank_by_id(lv, rest, seen, by, &mut out)?;
                accepted += n;
            }
        }
        Ok((out, accepted))
    }

    /// Ranks `rest` by internal id, a chunk at a time (at least `step` documents, each chunk
    /// twice the last: the first few of many are read), into `out`, until `want` of those
    /// ranked `precede` (a ranked document, the largest id ranked) every document left.
    /// Returns how many were accepted, and whether all of `rest` was ranked.
    fn rank_by_id(
        &self,
        lv: Level,
        mut rest: Vec<Candidate>,
        seen: &mut [Vec<u64>],
        by: ById,
        out: &mut Vec<Ranked>,
    ) -> Result<(usize, bool)> {
        let run = lv.run;
        let ById {
            want,
            mark,
            mut step,
            accept,
            precedes,
        } = by;
        let mut accepted = 0;
        let mut left = &mut rest[..];
        while !left.is_empty() {
            if Instant::now() >= run.deadline {
                return Ok((accepted, false));
            }
            let end = step.min(left.len());
            if end < left.len() {
                left.select_nth_unstable_by_key(end - 1, |c| c.2);
            }
            let (chunk, after) = left.split_at_mut(end);
            let frontier = chunk.iter().map(|c| c.2).max().unwrap_or(0);
            let (ranked, n) = self.rank_part(lv, chunk.to_vec(), seen, accept, want, mark)?;
            out.extend(ranked);
            accepted += n;
            left = after;
            if !left.is_empty() && out.iter().filter(|r| precedes(r, frontier)).count() >= want {
                return Ok((accepted, false));
            }
            step *= 2;
        }
        Ok((accepted, true))
    }

    /// Ranks a level of one quoted phrase that no shortcut set settled (see [`Floor`]):
    /// `docs`, its documents (those `seen` or not allowed left out). Those `floor.inside`
    /// holds are ranked first, all of them; the others, which cost at least `floor.cost`,
    /// by internal id until `want` ranked ones come before every one left. Returns those
    /// ranked (the best `want` of each part), how many were accepted, and whether all were
    /// ranked; `mark`: adds those ranked to `seen`.
    pub(in super::super) fn rank_above_floor(
        &self,
        lv: Level,
        docs: SegmentDocs,
        floor: Floor,
        seen: &mut [Vec<u64>],
        mark: bool,
        want: usize,
    ) -> Result<(Vec<Ranked>, usize, bool)> {
        let run = lv.run;
        let inside = self
            .level_docs(run.searcher, floor.inside.as_ref(), run.allowed)
            .map_err(tv)?;
        let (first, rest) = split_off(docs, &inside, seen, run);
        let all = |_: &Verdict| true;
        let (mut out, mut accepted) = self.rank_part(lv, first, seen, &all, want, mark)?;
        let cost = floor.cost;
        let precedes = |r: &Ranked, frontier: u32| {
            r.verdict.cost < cost || (r.verdict.cost == cost && r.iid <= frontier)
        };
        let by = ById {
            want,
            mark,
            step: want.max(STEP),
            accept: &all,
            precedes: &precedes,
        };
        let (n, complete) = self.rank_by_id(lv, rest, seen, by, &mut out)?;
        accepted += n;
        Ok((out, accepted, complete))
    }

    /// Ranks `part` of a set (see [`SearchContext::rank_docs`]), its documents grouped by segment
    /// in document order (the ranking reads each segment's postings forward).
    fn rank_part(
        &self,
        lv: Level,
        mut part: Vec<Candidate>,
        seen: &mut [Vec<u64>],
        accept: &dyn Fn(&Verdict) -> bool,
        want: usize,
        mark: bool,
    ) -> Result<(Vec<Ranked>, usize)> {
        part.sort_unstable();
        self.rank_docs(lv, by_segment(part), seen, mark, accept, Some(want))
    }

    /// The candidates with a field of `words` words (see `lens`) weighing at least
    /// `weighing`, and the others.
    fn split_by_field_of(
        &self,
        run: &Run,
        ctx: &Context,
        candidates: Vec<Candidate>,
        words: u32,
        weighing: u32,
    ) -> Result<(Vec<Candidate>, Vec<Candidate>)> {
        let (mut with, mut without) = (Vec::new(), Vec::with_capacity(candidates.len()));
        // Per segment, its candidates against the bitmaps of the fields that count: one
        // intersection, then a walk alongside it (a bitmap lookup per candidate and field
        // was a seventh of a frequent phrase's search on npm).
        for run_of in candidates.chunk_by(|a, b| a.0 == b.0) {
            let reader = run.searcher.segment_reader(run_of[0].0);
            let lengths = self.segment_lengths(reader).map_err(tv)?;
            let docs = RoaringBitmap::from_sorted_iter(run_of.iter().map(|c| c.1))
                .unwrap_or_else(|_| run_of.iter().map(|c| c.1).collect());
            let mut exact = RoaringBitmap::new();
            for f in lengths.fields() {
                if ctx.weights.get(f as usize).is_none_or(|w| *w >= weighing) {
                    if let Some(of) = lengths.docs_of(f, words) {
                        exact |= &docs & of;
                    }
                }
            }
            for &c in run_of {
                match exact.contains(c.1) {
                    true => with.push(c),
                    false => without.push(c),
                }
            }
        }
        Ok((with, without))
    }

    /// The candidates holding one of `terms`, and the others (both in the order given,
    /// document order within a segment).
    fn split_by_terms(
        &self,
        run: &Run,
        candidates: Vec<Candidate>,
        terms: &[Term],
    ) -> Result<(Vec<Candidate>, Vec<Candidate>)> {
        let (mut with, mut without) = (Vec::new(), Vec::with_capacity(candidates.len()));
        let mut open: Option<(u32, Vec<SegmentPostings>)> = None;
        for c in candidates {
            if open.as_ref().is_none_or(|(s, _)| *s != c.0) {
                let reader = run.searcher.segment_reader(c.0);
                let mut postings = Vec::new();
                for t in terms {
                    let inverted = reader.inverted_index(t.field()).map_err(tv)?;
                    postings.extend(
                        inverted
                            .read_postings(t, IndexRecordOption::Basic)
                            .map_err(api_types::io_error)?,
                    );
                }
                open = Some((c.0, postings));
            }
            let Some((_, postings)) = open.as_mut() else {
                continue;
            };
            let holds = postings.iter_mut().any(|p| {
                if p.doc() < c.1 {
                    p.seek(c.1);
                }
                p.doc() == c.1
            });
            match holds {
                true => with.push(c),
                false => without.push(c),
            }
        }
        Ok((with, without))
    }
}

/// The candidates of `docs` not ranked before (see [`unranked`]): those `part` holds, and
/// the others (both in document order, as [`SearchContext::level_docs`] reads them).
fn split_off(
    docs: SegmentDocs,
    part: &SegmentDocs,
    seen: &[Vec<u64>],
    run: &Run,
) -> (Vec<Candidate>, Vec<Candidate>) {
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    for (seg, list) in docs {
        let part = part
            .iter()
            .find(|(s, _)| *s == seg)
            .map_or(&[][..], |(_, l)| &l[..]);
        let seen = &seen[seg as usize];
        // Both in document order: `part` is walked alongside.
        let mut at = 0;
        for (doc, iid) in list {
            while part.get(at).is_some_and(|(d, _)| *d < doc) {
                at += 1;
            }
            if !unranked(seen, run.allowed, doc, iid) {
                continue;
            }
            match part.get(at).is_some_and(|(d, _)| *d == doc) {
                true => inside.push((seg, doc, iid)),
                false => outside.push((seg, doc, iid)),
            }
        }
    }
    (inside, outside)
}

/// Candidates in (segment, document) order, grouped by segment.
fn by_segment(part: Vec<Candidate>) -> Vec<(u32, Vec<(DocId, u32)>)> {
    let mut out: Vec<(u32, Vec<(DocId, u32)>)> = Vec::new();
    for (seg, doc, iid) in part {
        match out.last_mut() {
            Some((s, list)) if *s == seg => list.push((doc, iid)),
            _ => out.push((seg, vec![(doc, iid)])),
        }
    }
    out
}
