//! The ordering steps of a search, from the candidates to the page: ranking, the score
//! threshold, distinct, the facet counts over the kept documents, the total, and the page.
//!
//! Three paths, chosen by what the order needs, each keeping its shortcut:
//! - a placeholder search with no sort key pages in internal-id order, straight off the
//!   allowed set (or the document store) without ranking anything;
//! - a placeholder search with one sort key and no distinct reads its page off the value
//!   index of that key;
//! - anything else is ranked, the whole candidate set only when the whole order matters
//!   (distinct, a score threshold, facets over the documents those keep), else just enough
//!   for the page; facets over every match count the query's matches read apart. A keyword
//!   candidate list enters here; a semantic one would be merged with it at the same point.

use std::sync::Arc;
use std::time::Instant;

use api_types::Result;
use roaring::RoaringBitmap;

use super::distinct::{apply_distinct, distinct_ranked};
use super::faceting::FacetCounts;
use super::page::Window;
use super::{compare_ranked, rank, steps, Counted, Ranked, Reach, SearchContext, Terms};
use crate::facets;
use crate::sort::SortKey;
use crate::store::heed_error;

/// What the ordering steps read: the parsed request and the candidates.
#[derive(Clone)]
pub(super) struct Order<'a> {
    /// What the search reads.
    pub ctx: &'a SearchContext<'a>,
    /// The allowed documents (filter, negations); `None` allows every document.
    pub allowed: Option<Arc<RoaringBitmap>>,
    /// The ranking rules in use and the sort keys they read.
    pub rules: &'a [rank::Rule],
    pub key_specs: &'a [SortKey],
    /// Restricts the keyword match to these attributes.
    pub search_on: Option<&'a [String]>,
    pub distinct: Option<&'a str>,
    /// The concrete facets to count, when the request asked for facets.
    pub facet_names: Option<&'a [String]>,
    /// Hits scoring below it are left out (and not counted).
    pub threshold: Option<f64>,
    /// Score details need the sort keys of a page read off the value index.
    pub key_details: bool,
    /// Scores count the typos a word may have.
    pub scores: bool,
    pub window: Window,
    pub max_total_hits: usize,
    /// When the search started: ranking stops at `searchCutoffMs` after it.
    pub started: Instant,
    /// Documents dynamic search rules pin: outside `allowed`, but counted in the facets.
    pub pinned: Option<Arc<RoaringBitmap>>,
    /// Keep the documents the facets were counted over in their counts.
    pub keep_facet_set: bool,
}

/// What the ordering steps found.
pub(super) struct Ordered {
    /// The page's hits, in order, with their scores and keys for the details.
    pub page: Vec<Ranked>,
    /// How many documents matched.
    pub candidates: usize,
    pub facets: Option<FacetCounts>,
}

impl SearchContext<'_> {
    /// The facet counts of the kept documents `set`, with the pinned ones.
    pub(super) fn order_facets(
        &self,
        o: &Order,
        names: &[String],
        set: &RoaringBitmap,
    ) -> Result<FacetCounts> {
        let with_pinned;
        let set = match &o.pinned {
            Some(pinned) => {
                with_pinned = set | pinned.as_ref();
                &with_pinned
            }
            None => set,
        };
        let mut counts = self.facet_counts(names, set)?;
        if o.keep_facet_set {
            counts.over = Some(set.clone());
        }
        Ok(counts)
    }

    /// Orders the candidates of `terms` and keeps the page: see the module's documentation.
    pub(super) fn order(&self, o: &Order, terms: &mut Terms) -> Result<Ordered> {
        let placeholder = terms.is_placeholder();
        if placeholder && o.key_specs.is_empty() {
            return self.id_order(o);
        }
        if let (true, None, [SortKey::Field { name, asc }]) = (placeholder, o.distinct, o.key_specs)
        {
            return self.value_order(o, name, *asc);
        }
        self.ranked_order(o, terms)
    }

    /// Placeholder search in internal-id order.
    fn id_order(&self, o: &Order) -> Result<Ordered> {
        let Window { offset, limit } = o.window;
        let set = self.allowed_or_all(&o.allowed)?;
        let mut facet_counts = None;
        if let (Some(names), None) = (o.facet_names, o.distinct) {
            facet_counts = Some(self.order_facets(o, names, &set)?);
        }
        let mut total = set.len() as usize;
        let iids: Vec<u32> = match (o.distinct, &o.allowed) {
            (Some(field), _) => {
                let column = self.columns(&[field.to_string()])?.remove(0);
                let order = apply_distinct(&column, set.iter().collect(), |i| i);
                total = order.len();
                if let Some(names) = o.facet_names {
                    let kept: RoaringBitmap = order.iter().copied().collect();
                    facet_counts = Some(self.order_facets(o, names, &kept)?);
                }
                order.into_iter().skip(offset).take(limit).collect()
            }
            (None, Some(allowed)) => allowed.iter().skip(offset).take(limit).collect(),
            (None, None) => {
                let mut iids = Vec::new();
                let docs = self.store().docs.iter(&o.ctx.rtxn).map_err(heed_error)?;
                for item in docs.skip(offset).take(limit) {
                    iids.push(item.map_err(heed_error)?.0);
                }
                iids
            }
        };
        Ok(Ordered {
            page: iids.into_iter().map(Ranked::plain).collect(),
            candidates: total,
            facets: facet_counts,
        })
    }

    /// One sort key on a placeholder search: read the page off the value index.
    fn value_order(&self, o: &Order, name: &str, asc: bool) -> Result<Ordered> {
        let set = self.allowed_or_all(&o.allowed)?;
        let column = self.columns(&[name.to_string()])?.remove(0);
        let iids = facets::sorted_page(&column, asc, &set, o.window.end());
        let facet_counts = match o.facet_names {
            Some(names) => Some(self.order_facets(o, names, &set)?),
            None => None,
        };
        let mut page: Vec<Ranked> = iids
            .into_iter()
            .skip(o.window.offset)
            .map(Ranked::plain)
            .collect();
        if o.key_details {
            let ids: Vec<u32> = page.iter().map(|r| r.iid).collect();
            let keys = self.sort_keys(o.key_specs, &ids)?;
            for (r, k) in page.iter_mut().zip(keys.chunks(1)) {
                r.keys = k.to_vec();
            }
        }
        Ok(Ordered {
            page,
            candidates: set.len() as usize,
            facets: facet_counts,
        })
    }

    /// Ranks the candidates, then applies the threshold and distinct, counts facets over what
    /// is kept, and cuts the page.
    fn ranked_order(&self, o: &Order, terms: &mut Terms) -> Result<Ordered> {
        let placeholder = terms.is_placeholder();
        // Facets count every document the query matches. That set is read apart (the query's
        // words with every derivation, within the allowed documents) and the ranking stops at
        // the page, unless the ranking itself decides which documents are kept: distinct, a
        // score threshold, and the attributes it checks per occurrence (`attributesToSearchOn`,
        // attributes without typos).
        let facets_apart = o.facet_names.is_some()
            && o.distinct.is_none()
            && o.threshold.is_none()
            && o.search_on.is_none()
            && o.ctx
                .settings
                .typo_tolerance
                .disable_on_attributes
                .is_empty();
        // Everything is ranked when the whole order matters: distinct, a score threshold,
        // facets over exactly the documents the ranking kept.
        let need = o.window.end();
        let whole = o.distinct.is_some()
            || o.threshold.is_some()
            || (o.facet_names.is_some() && !facets_apart);
        // Scores count the typos a word may have, splits and concatenations included.
        if o.scores {
            self.derive_typos(&o.ctx.searcher, terms)?;
        }
        let (mut ranked, complete) = if placeholder {
            self.rank_by_keys(o, need, whole)?
        } else {
            let ranking = rank::Ranking {
                allowed: o.allowed.as_deref(),
                search_on: o.search_on,
                rules: o.rules,
                key_specs: o.key_specs,
                deadline: o.started + o.ctx.settings.search_cutoff(),
            };
            self.rank(terms, ranking, (!whole).then_some(need))?
        };
        if let Some(t) = o.threshold {
            ranked.retain(|r| r.verdict.score() >= t);
        }
        let ranked = match o.distinct {
            Some(field) => {
                let column = self.columns(&[field.to_string()])?.remove(0);
                distinct_ranked(&column, ranked)
            }
            None => ranked,
        };
        let mut matched = None;
        let facet_counts = match o.facet_names {
            Some(names) if facets_apart && !complete => {
                let set = self.matches(o, terms)?;
                matched = Some(set.len() as usize);
                Some(self.order_facets(o, names, &set)?)
            }
            Some(names) => {
                let set: RoaringBitmap = ranked.iter().map(|r| r.iid).collect();
                Some(self.order_facets(o, names, &set)?)
            }
            None => None,
        };
        let total = match matched {
            _ if complete => ranked.len(),
            Some(n) => n,
            None => self.total(o, terms)?,
        };
        let Window { offset, limit } = o.window;
        Ok(Ordered {
            page: ranked.into_iter().skip(offset).take(limit).collect(),
            candidates: total,
            facets: facet_counts,
        })
    }

    /// Every document the query matches among the allowed ones: its words with all their
    /// derivations, typos included, as the ranking's last level reads them.
    fn matches(&self, o: &Order, terms: &mut Terms) -> Result<Arc<RoaringBitmap>> {
        if terms.is_placeholder() {
            return self.allowed_or_all(&o.allowed);
        }
        self.derive_typos(&o.ctx.searcher, terms)?;
        let query = terms.universe_query(Reach::Typos);
        Ok(Arc::new(self.iids_of(
            &o.ctx.searcher,
            query.as_ref(),
            o.allowed.as_deref(),
        )?))
    }

    /// Sort keys alone order a placeholder search; the ranked list and whether it holds every
    /// candidate.
    fn rank_by_keys(&self, o: &Order, need: usize, whole: bool) -> Result<(Vec<Ranked>, bool)> {
        let set = self.allowed_or_all(&o.allowed)?;
        let ids: Vec<u32> = set.iter().collect();
        let keys = self.sort_keys(o.key_specs, &ids)?;
        let mut all: Vec<Ranked> = ids
            .into_iter()
            .zip(keys.chunks(o.key_specs.len().max(1)))
            .map(|(iid, k)| Ranked {
                keys: k.to_vec(),
                ..Ranked::plain(iid)
            })
            .collect();
        let order = steps(o.rules);
        let cmp = |a: &Ranked, b: &Ranked| compare_ranked(&order, a, b);
        if !whole && need > 0 && need < all.len() {
            all.select_nth_unstable_by(need - 1, cmp);
            all.truncate(need);
        }
        all.sort_unstable_by(cmp);
        let complete = whole || all.len() == set.len() as usize;
        Ok((all, complete))
    }

    /// How many documents match when ranking stopped early: every allowed one for a
    /// placeholder search, else a count of the query's matches, at most `maxTotalHits`.
    fn total(&self, o: &Order, terms: &mut Terms) -> Result<usize> {
        if terms.is_placeholder() {
            return Ok(self.allowed_or_all(&o.allowed)?.len() as usize);
        }
        if terms.lower_bound >= o.max_total_hits as u64 && o.allowed.is_none() {
            return Ok(o.max_total_hits);
        }
        // Under a filter that likely leaves `maxTotalHits` of the matches without typos, those
        // are counted first: when they reach it, the typo derivations are never looked up
        // (PyPI, `python` under `rank >= 0`: ranking 2.9 -> 1.9 ms without that walk of the
        // dictionary). The matches with typos hold these, so the figure is the same.
        let max = o.max_total_hits as u64;
        if let Some(allowed) = o.allowed.as_deref().filter(|_| !terms.derived) {
            let docs = o.ctx.searcher.num_docs().max(1);
            if terms.lower_bound.saturating_mul(allowed.len()) / docs >= 2 * max {
                let exact = terms.universe_query(Reach::Completions);
                let n = self.count_up_to(
                    &o.ctx.searcher,
                    exact.as_ref(),
                    Some(allowed),
                    o.max_total_hits,
                )?;
                if n >= o.max_total_hits {
                    return Ok(o.max_total_hits);
                }
            }
        }
        self.derive_typos(&o.ctx.searcher, terms)?;
        // Ranking read every candidate already (without typo derivations, the same query).
        if let Some((reach, n)) = terms.counted {
            if reach == Reach::Typos || !terms.has_typos() {
                match n {
                    Counted::Exactly(n) => return Ok(n.min(o.max_total_hits)),
                    Counted::AtLeast(n) if n >= o.max_total_hits => return Ok(o.max_total_hits),
                    Counted::AtLeast(_) => {}
                }
            }
        }
        let query = terms.universe_query(Reach::Typos);
        // Past `maxTotalHits` the figure shown is `maxTotalHits`: counting stops there (a
        // phrase of frequent words would otherwise check the positions of every document
        // holding its words).
        self.count_up_to(
            &o.ctx.searcher,
            query.as_ref(),
            o.allowed.as_deref(),
            o.max_total_hits,
        )
    }
}
