//! Ranking one document: its occurrences of the query's terms are read, filtered by
//! `attributesToSearchOn` and `disableOnAttributes`, `words` keeps the terms it can, then
//! every relevancy rule pushes its digits in order, each narrowing the occurrences the later
//! rules see. This is the per-candidate hot loop: no allocation past the reused scratch
//! lists, and rules called through [`Rule`]'s static dispatch.

use tantivy::DocId;

use super::reader::{Occ, QueryTerm, TermReader};
use super::rule::{RankingRule, Rule};
use super::verdict::Verdict;
use super::words;

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

/// One document under evaluation: what a [`RankingRule`] reads and narrows.
pub(crate) struct Evaluation<'a> {
    pub ctx: &'a Context<'a>,
    pub terms: &'a [QueryTerm],
    /// The terms `words` kept, in query order.
    pub kept: &'a [usize],
    /// Per term: its occurrences in the document, by position.
    pub occ: &'a mut [Vec<Occ>],
    /// The document's field lengths (`field << 16 | words`), read only when asked.
    pub lens: &'a dyn Fn() -> Vec<u64>,
}

/// What ranking one document found.
pub enum Outcome {
    /// A term the strategy requires is missing (after `attributesToSearchOn`).
    Missing,
    /// Its verdict's cost passed the bound on a rule: it can only end worse than that.
    Beaten,
    Ranked(Verdict),
}

/// Ranks one document: its verdict on the relevancy rules of `ctx.rules` (sort keys skipped).
/// `bound`: the cost past which the verdict is of no use (the worst one a full page keeps);
/// as each rule only adds cost on lesser digits, the rules after the one that passes it are
/// not run.
pub fn rank(
    ctx: &Context,
    terms: &[QueryTerm],
    readers: &mut [TermReader],
    doc: DocId,
    lens: &dyn Fn() -> Vec<u64>,
    scratch: &mut Vec<Vec<Occ>>,
    bound: u128,
) -> Outcome {
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
    judge(ctx, terms, scratch, lens, bound)
}

/// The verdict of occurrences already read (`occ`, per term, by position), as [`rank`] gives
/// it: also the verdict of a document imagined, to bound those left unread.
pub fn judge(
    ctx: &Context,
    terms: &[QueryTerm],
    occ: &mut [Vec<Occ>],
    lens: &dyn Fn() -> Vec<u64>,
    bound: u128,
) -> Outcome {
    let mut kept_buf = [0usize; 32];
    let Some(k) = words::keep(ctx, occ, &mut kept_buf) else {
        return Outcome::Missing;
    };
    let mut doc = Evaluation {
        ctx,
        terms,
        kept: &kept_buf[..k],
        occ,
        lens,
    };
    let mut v = Verdict::default();
    for rule in ctx.rules {
        rule.rank(&mut doc, &mut v);
        if v.cost > bound {
            return Outcome::Beaten;
        }
    }
    Outcome::Ranked(v)
}
