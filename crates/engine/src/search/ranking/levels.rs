//! Level-by-level ranking of keyword candidates. While `words` and `typo` lead the rules,
//! candidates come in levels (the query words `words` dropped, then without and with typo
//! derivations), each level's documents all better than the next one's on the leading
//! rules: a page ranks levels in turn and stops once a level completes it, so it usually
//! ranks only the documents keeping every query word without typos. Within a level, the
//! shortcuts (see `shortcuts`) may find its best documents first; otherwise every document
//! of the level is ranked (see `document`), only the best few held (a bounded heap) when no
//! sort key must be read. Past `searchCutoffMs`, the page is completed with unranked
//! candidates in internal-id order.

use std::collections::{BinaryHeap, HashSet};
use std::time::Instant;

use api_types::Result;
use roaring::RoaringBitmap;
use tantivy::DocId;

use super::collector::{Allowed, SegmentDocs};
use super::document::{self, Context};
use super::order::{compare_ranked, steps, ByCost, Ranked};
use super::reader::{QueryTerm, TermReader};
use super::rule::Rule;
use super::rules_of_settings::field_weights;
use super::shortcut_plan::{Floor, Shortcut};
use super::verdict::Verdict;
use crate::filter::eval::within;
use crate::index::tv;
use crate::search::{Counted, Reach, SearchContext, Terms};
use crate::settings::{ProximityPrecision, Settings};
use crate::sort::SortKey;

/// A filter passing fewer than one document in this many is sparse (see [`SearchContext::rank`]).
const SPARSE_FILTER: u64 = 16;

/// A level read first (under a sparse filter, or led by a quoted phrase) with at most this
/// many documents per result still wanted is ranked whole, without the shortcuts.
const FEW_PER_RESULT: usize = 64;

/// A level keeping at least this many groups is read first too: most such levels hold few
/// documents, and ranking them whole costs less than reading the shortcut sets (PyPI,
/// `simple python interface`: 0.95 ms ranking so, 1.9 ms through its three sets). A large
/// one (`python library for`, 20,000 documents) stops the read at the cap.
const MANY_WORDS: usize = 3;

/// What every level of one ranking reads.
/// What [`SearchContext::rank`] ranks by: the allowed documents (`None`: all), the attributes words
/// may match in (`None`: all), the rules and the sort keys they read, and when to stop.
pub(in crate::search) struct Ranking<'a> {
    pub allowed: Option<&'a RoaringBitmap>,
    pub search_on: Option<&'a [String]>,
    pub rules: &'a [Rule],
    pub key_specs: &'a [SortKey],
    pub deadline: Instant,
}

/// One level being ranked: the search's [`Run`], the rules' context for the level, and its
/// query terms (what every step ranking the level's documents reads).
#[derive(Clone, Copy)]
pub(super) struct Level<'a> {
    pub run: &'a Run<'a>,
    pub ctx: &'a Context<'a>,
    pub qt: &'a [QueryTerm],
}

/// The words of one level: the query's terms, the groups the level keeps, and how far their
/// words reach.
#[derive(Clone, Copy)]
pub(super) struct LevelWords<'a> {
    pub terms: &'a Terms,
    pub kept: &'a [usize],
    pub reach: Reach,
}

pub(super) struct Run<'a> {
    pub searcher: &'a tantivy::Searcher,
    pub allowed: Option<&'a Allowed<'a>>,
    pub rules: &'a [Rule],
    pub key_specs: &'a [SortKey],
    pub deadline: Instant,
}

/// The settings the relevancy rules read, per field id, resolved once per search.
struct FieldRules {
    /// The rules without sort keys (those rank outside the verdict).
    relevancy: Vec<Rule>,
    weights: Vec<u32>,
    max_weight: u32,
    /// `attributesToSearchOn`: whether each field may match.
    on: Option<Vec<bool>>,
    /// `typoTolerance.disableOnAttributes`: whether typos may match in each field.
    typos_in: Option<Vec<bool>>,
    by_attribute: bool,
}

impl FieldRules {
    fn of(
        ctx: &SearchContext,
        settings: &Settings,
        search_on: Option<&[String]>,
        rules: &[Rule],
    ) -> FieldRules {
        let relevancy: Vec<Rule> = rules
            .iter()
            .copied()
            .filter(|r| !matches!(r, Rule::Key { .. }))
            .collect();
        let fields = ctx.fields_map().read().unwrap().clone();
        let (weights, max_weight) = field_weights(settings, fields.names());
        let on: Option<Vec<bool>> = search_on.map(|attrs| {
            fields
                .names()
                .iter()
                .map(|n| attrs.iter().any(|a| within(n, a) || within(a, n)))
                .collect()
        });
        let no_typos =
            Some(&settings.typo_tolerance.disable_on_attributes).filter(|a| !a.is_empty());
        let typos_in: Option<Vec<bool>> = no_typos.map(|attrs| {
            fields
                .names()
                .iter()
                .map(|n| !attrs.iter().any(|a| within(n, a)))
                .collect()
        });
        let by_attribute = settings.proximity_precision == ProximityPrecision::ByAttribute;
        FieldRules {
            relevancy,
            weights,
            max_weight,
            on,
            typos_in,
            by_attribute,
        }
    }

    fn context<'a>(&'a self, terms: &'a Terms, max_typos: &'a [u8]) -> Context<'a> {
        Context {
            rules: &self.relevancy,
            drop_order: terms.drop_order.as_deref(),
            weights: &self.weights,
            max_weight: self.max_weight,
            search_on: self.on.as_deref(),
            typos_in: self.typos_in.as_deref(),
            by_attribute: self.by_attribute,
            max_typos,
        }
    }
}

/// The levels of a ranking, in order: (groups dropped by `words`, how far words reach), and
/// whether each drop has a level without typos before one with them (`typo` right after).
fn levels(rules: &[Rule], terms: &Terms) -> (Vec<(usize, Reach)>, bool) {
    let by_words = rules.first() == Some(&Rule::Words);
    let typo_next = if by_words {
        rules.get(1) == Some(&Rule::Typo)
    } else {
        rules.first() == Some(&Rule::Typo)
    };
    let reaches: &[Reach] = if typo_next {
        &[Reach::Completions, Reach::Typos]
    } else {
        &[Reach::Typos]
    };
    // Without `words` first, one level of every candidate (all droppable groups gone).
    let dropped: Vec<usize> = if by_words {
        (0..=terms.droppable()).collect()
    } else {
        vec![terms.droppable()]
    };
    let levels = dropped
        .into_iter()
        .flat_map(|d| reaches.iter().map(move |r| (d, *r)))
        .collect();
    (levels, typo_next)
}

/// At most how many documents a level (`kept` groups, words reaching as far as `reach`)
/// matches: per group the sum of the document frequencies of its derivations within reach
/// (a sequence counts its first word), the least of the groups.
pub(super) fn level_bound(
    searcher: &tantivy::Searcher,
    qt: &[QueryTerm],
    kept: &[usize],
    reach: Reach,
) -> Result<u64> {
    let mut bound = u64::MAX;
    for &i in kept {
        let mut sum = 0u64;
        for d in &qt[i].derivations {
            if d.typos > 0 && reach < Reach::Typos {
                continue;
            }
            if let Some((_, t)) = d.words.first() {
                sum = sum.saturating_add(searcher.doc_freq(t).map_err(tv)?);
            }
        }
        bound = bound.min(sum);
    }
    Ok(bound)
}

/// Where document `doc` sits in a segment's `seen` bitset: its word and bit.
fn seen_bit(doc: DocId) -> (usize, u64) {
    ((doc / 64) as usize, 1u64 << (doc % 64))
}

/// Whether document `doc` (internal id `iid`) of a segment is still to rank: no earlier level
/// ranked it (`seen`, that segment's bitset) and the filter allows it.
pub(super) fn unranked(seen: &[u64], allowed: Option<&Allowed>, doc: DocId, iid: u32) -> bool {
    let (word, bit) = seen_bit(doc);
    let earlier = seen.get(word).is_some_and(|w| w & bit != 0);
    !earlier && allowed.is_none_or(|a| a.contains(iid))
}

impl SearchContext<'_> {
    /// Ranks the keyword candidates (see [`document::rank`]), best first, with whether every
    /// candidate was ranked. With `need`, candidates are ranked level by level while the first
    /// rules allow it (`words` first: documents keeping more query words come first; `typo`
    /// next: those without typos before those with) and ranking stops once a level completes
    /// `need` documents, typo derivations only looked up when a level needs them.
    pub(in crate::search) fn rank(
        &self,
        terms: &mut Terms,
        ranking: Ranking,
        need: Option<usize>,
    ) -> Result<(Vec<Ranked>, bool)> {
        let (searcher, settings) = (&self.searcher, &*self.settings);
        let Ranking {
            allowed,
            search_on,
            rules,
            key_specs,
            deadline,
        } = ranking;
        let tested = allowed.map(Allowed::new);
        let run = Run {
            searcher,
            allowed: tested.as_ref(),
            rules,
            key_specs,
            deadline,
        };
        // A filter no document passes: nothing to rank.
        if allowed.is_some_and(RoaringBitmap::is_empty) {
            return Ok((Vec::new(), true));
        }
        // A filter passing few of the documents: a level's documents are read first, and
        // when few pass, they are ranked without the shortcuts, whose sets would mostly
        // hold documents the filter leaves out.
        let all = searcher.num_docs().max(1);
        let sparse = allowed
            .filter(|a| a.len().saturating_mul(SPARSE_FILTER) < all)
            .map(|a| a.len() as f64 / all as f64);
        let fields = FieldRules::of(self, settings, search_on, rules);
        let (levels, typo_next) = levels(rules, terms);
        // One-word levels without typos take shortcuts: the documents best on the rules
        // after `words` and `typo` are looked up first, and when there are enough of them
        // nothing else can come before them.
        let shortcut = Shortcut::of(rules, fields.by_attribute);
        let mut out: Vec<Ranked> = Vec::new();
        // Per segment: a bitset of the documents an earlier level ranked.
        let mut seen: Vec<Vec<u64>> = vec![Vec::new(); searcher.segment_readers().len()];
        let mut complete = true;
        let mut qterms: Option<(Vec<QueryTerm>, Vec<u8>)> = None;
        let mut timed_out = false;
        for (li, (dropped, reach)) in levels.iter().enumerate() {
            let last_level = li + 1 == levels.len();
            // Past `searchCutoffMs`, the page is what was ranked so far, completed below.
            if Instant::now() >= deadline {
                complete = false;
                timed_out = true;
                break;
            }
            if let Some(n) = need {
                if out.len() >= n {
                    complete = false;
                    break;
                }
            }
            if *reach == Reach::Typos && !terms.derived {
                self.derive_typos(searcher, terms)?;
                qterms = None;
            }
            if *reach == Reach::Typos && typo_next && !terms.has_typos() {
                continue;
            }
            let (qt, max_typos) =
                qterms.get_or_insert_with(|| (terms.query_terms(), terms.max_typos()));
            let kept = terms.kept(*dropped);
            // The level with every droppable group gone matches every candidate of its reach:
            // its count is the total, which the search then need not count again.
            let whole = *dropped == terms.droppable();
            // A level read first, when it holds few documents: ranked whole, without the
            // shortcuts.
            let mut read = None;
            if let Some(n) = need {
                let cap = (n - out.len()).max(1).saturating_mul(FEW_PER_RESULT);
                // Under a sparse filter, when the filter should leave few of the level's
                // documents (a broad word's level, read whole, would cost more than its
                // shortcuts). With a quoted phrase of several words, always: every shortcut
                // set would check the phrase's positions again, and a phrase of frequent
                // words is often rare. With [`MANY_WORDS`] groups or more, always: such a
                // level is often small.
                let first = match sparse {
                    Some(density) => {
                        level_bound(searcher, qt, &kept, *reach)? as f64 * density <= cap as f64
                    }
                    None => false,
                } || (shortcut.is_some()
                    && (terms.has_phrase(&kept) || kept.len() >= MANY_WORDS));
                if first {
                    let query = terms.kept_query(&kept, *reach);
                    read = self
                        .level_docs_up_to(searcher, query.as_ref(), run.allowed, cap)
                        .map_err(tv)?;
                    if whole && read.is_none() {
                        terms.counted = Some((*reach, Counted::AtLeast(cap + 1)));
                    }
                }
            }
            let ctx = fields.context(terms, max_typos);
            let lv = Level {
                run: &run,
                ctx: &ctx,
                qt,
            };
            // Shortcuts (see [`SearchContext::shortcut_sets`]): a small set holding the level's
            // best documents is ranked first; when enough of them are as good as the level allows,
            // nothing else can come before them.
            if let (Some(n), Some(cut), None) = (need, shortcut.as_ref(), &read) {
                let want = n - out.len();
                let words = LevelWords {
                    terms,
                    kept: &kept,
                    reach: *reach,
                };
                let best = self.rank_shortcuts(lv, words, cut, &mut seen, want)?;
                if let Some(best) = best {
                    out.extend(best);
                    return Ok((out, false));
                }
            }
            let k = need.map(|n| n.saturating_sub(out.len()));
            // A quoted phrase's level the shortcuts did not settle: most of its documents
            // may be ranked by internal id (see [`Floor`]).
            let floor = match (k, &shortcut, &read) {
                (Some(_), Some(_), None) if run.key_specs.is_empty() => {
                    self.phrase_floor(&ctx, qt, terms, &kept, *reach)
                }
                _ => None,
            };
            let (level, level_complete, matched) = self.rank_level(
                lv,
                LevelWords {
                    terms,
                    kept: &kept,
                    reach: *reach,
                },
                (read, floor),
                &mut seen,
                k,
                (!last_level, whole),
            )?;
            if let Some(matched) = matched {
                terms.counted = Some((*reach, Counted::Exactly(matched)));
            }
            complete &= level_complete;
            out.extend(level);
        }
        // Degraded mode (Meilisearch's too): candidates not ranked in time follow in
        // internal-id order, so a slow search still answers with matching documents.
        if (timed_out || Instant::now() >= deadline) && fields.on.is_none() {
            self.complete_unranked(searcher, terms, allowed, need, &mut out)?;
        }
        Ok((out, complete))
    }

    /// Ranks every document of one level (`kept` groups, words reaching as far as `reach`)
    /// not ranked before (its documents `read` already, or read here), and keeps its best
    /// `k`: the kept documents, whether none was left out, and (when `count`) how many
    /// allowed documents the level's query matched. With a `floor` (and `k`, nothing read),
    /// those it bounds are ranked only until the page is certain, and not counted.
    fn rank_level(
        &self,
        lv: Level,
        words: LevelWords,
        (read, floor): (Option<SegmentDocs>, Option<Floor>),
        seen: &mut [Vec<u64>],
        k: Option<usize>,
        (mark, count): (bool, bool),
    ) -> Result<(Vec<Ranked>, bool, Option<usize>)> {
        let run = lv.run;
        let LevelWords { terms, kept, reach } = words;
        let (mut level, count, all, matched) = match (read, floor, k) {
            // The level read as its phrase's words anywhere: not counted (the read first,
            // which found more than a page's worth, counted it).
            (None, Some(floor), Some(k)) => {
                let docs = self
                    .level_docs(run.searcher, floor.around.as_ref(), run.allowed)
                    .map_err(tv)?;
                let (level, count, all) = self.rank_above_floor(lv, docs, floor, seen, mark, k)?;
                (level, count, all, None)
            }
            (read, _, _) => {
                let docs = match read {
                    Some(docs) => docs,
                    None => {
                        let query = terms.kept_query(kept, reach);
                        self.level_docs(run.searcher, query.as_ref(), run.allowed)
                            .map_err(tv)?
                    }
                };
                let matched = count.then(|| docs.iter().map(|(_, list)| list.len()).sum());
                let (level, count) = self.rank_docs(lv, docs, seen, mark, &|_| true, k)?;
                (level, count, true, matched)
            }
        };
        let complete = all && !(k.is_some_and(|k| count > k) || Instant::now() >= run.deadline);
        self.keep_best(run, &mut level, k.unwrap_or(usize::MAX))?;
        Ok((level, complete, matched))
    }

    /// Completes `out` up to `need` with the candidates not ranked, in internal-id order.
    fn complete_unranked(
        &self,
        searcher: &tantivy::Searcher,
        terms: &Terms,
        allowed: Option<&RoaringBitmap>,
        need: Option<usize>,
        out: &mut Vec<Ranked>,
    ) -> Result<()> {
        let want = need.unwrap_or(usize::MAX);
        if out.len() >= want {
            return Ok(());
        }
        let mut have: HashSet<u32> = out.iter().map(|r| r.iid).collect();
        let reach = if terms.derived {
            Reach::Typos
        } else {
            Reach::Completions
        };
        let query = terms.universe_query(reach);
        // In internal-id order: a bitmap iterates in order.
        for iid in &self.iids_of(searcher, query.as_ref(), allowed)? {
            if out.len() >= want {
                break;
            }
            if have.insert(iid) {
                out.push(Ranked::plain(iid));
            }
        }
        Ok(())
    }

    /// Ranks `docs` (per segment, in document order), those allowed and not in `seen`;
    /// `mark`: adds them to `seen`.
    pub(super) fn rank_docs(
        &self,
        lv: Level,
        docs: SegmentDocs,
        seen: &mut [Vec<u64>],
        mark: bool,
        accept: &dyn Fn(&Verdict) -> bool,
        k: Option<usize>,
    ) -> Result<(Vec<Ranked>, usize)> {
        let Level { run, ctx, qt } = lv;
        let (searcher, allowed, deadline) = (run.searcher, run.allowed, run.deadline);
        // With `keep` (no sort key to read), only the best `keep` are held, worst on top.
        let keep = k.filter(|_| run.key_specs.is_empty());
        let mut best: BinaryHeap<ByCost> = Default::default();
        let mut accepted = 0usize;
        let mut level: Vec<Ranked> = Vec::new();
        let mut scratch = Vec::new();
        let mut ranked = 0usize;
        for (seg, list) in docs {
            let seen = &mut seen[seg as usize];
            // A segment none of whose documents is left to rank opens no postings (a narrow
            // filter or the earlier levels may leave none, whatever the number of terms).
            if !list
                .iter()
                .any(|&(doc, iid)| unranked(seen, allowed, doc, iid))
            {
                continue;
            }
            let reader = searcher.segment_reader(seg);
            let inverted = reader.inverted_index(self.fields().words).map_err(tv)?;
            let mut readers = qt
                .iter()
                .map(|t| TermReader::open(&inverted, t))
                .collect::<tantivy::Result<Vec<_>>>()
                .map_err(tv)?;
            let lens = self.segment_lens(reader).map_err(tv)?;
            // Allocated only when this level marks documents: a fresh bitset costs the
            // kernel zeroed pages on every search.
            if mark && seen.is_empty() {
                seen.resize(reader.max_doc().div_ceil(64) as usize, 0);
            }
            for (doc, iid) in list {
                ranked += 1;
                if ranked.is_multiple_of(4096) && Instant::now() >= deadline {
                    break;
                }
                if !unranked(seen, allowed, doc, iid) {
                    continue;
                }
                if mark {
                    let (word, bit) = seen_bit(doc);
                    seen[word] |= bit;
                }
                let doc_lens = || lens.values_for_doc(doc).collect::<Vec<u64>>();
                // A full page's worst: a document whose cost passes it stays out.
                let bound = match keep {
                    Some(k) if best.len() >= k => {
                        best.peek().map_or(u128::MAX, |w| w.0.verdict.cost)
                    }
                    _ => u128::MAX,
                };
                let verdict = match document::rank(
                    ctx,
                    qt,
                    &mut readers,
                    doc,
                    &doc_lens,
                    &mut scratch,
                    bound,
                ) {
                    document::Outcome::Missing => continue,
                    // It matches the level (`accept` takes it or not: the page is full
                    // either way, so the count only needs to pass `k`).
                    document::Outcome::Beaten => {
                        accepted += 1;
                        continue;
                    }
                    document::Outcome::Ranked(v) => v,
                };
                if !accept(&verdict) {
                    continue;
                }
                accepted += 1;
                let r = Ranked {
                    verdict,
                    ..Ranked::plain(iid)
                };
                match keep {
                    Some(k) => {
                        if best.len() < k {
                            best.push(ByCost(r));
                        } else if best
                            .peek()
                            .is_some_and(|w| (r.verdict.cost, r.iid) < (w.0.verdict.cost, w.0.iid))
                        {
                            best.pop();
                            best.push(ByCost(r));
                        }
                    }
                    None => level.push(r),
                }
            }
        }
        if keep.is_some() {
            level = best.into_iter().map(|b| b.0).collect();
        }
        Ok((level, accepted))
    }

    /// Orders `level` and keeps its best `k`, reading sort keys when rules need them.
    pub(super) fn keep_best(&self, run: &Run, level: &mut Vec<Ranked>, k: usize) -> Result<()> {
        let (key_specs, rules) = (run.key_specs, run.rules);
        if !key_specs.is_empty() {
            let ids: Vec<u32> = level.iter().map(|r| r.iid).collect();
            let keys = self.sort_keys(key_specs, &ids)?;
            for (r, k) in level.iter_mut().zip(keys.chunks(key_specs.len())) {
                r.keys = k.to_vec();
            }
        }
        let order = steps(rules);
        let cmp = |a: &Ranked, b: &Ranked| compare_ranked(&order, a, b);
        if level.len() > k {
            // Only the page's part needs an order.
            if k == 0 {
                level.clear();
                return Ok(());
            }
            level.select_nth_unstable_by(k - 1, cmp);
            level.truncate(k);
        }
        level.sort_unstable_by(cmp);
        Ok(())
    }
}
