//! Semantic and hybrid search: which kind of search a request runs (Meilisearch's table,
//! `search-semantics.md` §10.1), the semantic ordering of the candidates by the similarity
//! of their nearest embedding, and the merge of a keyword and a semantic list.
//!
//! - Semantic ordering: `vectorSort` takes the place of the first relevancy rule, sort keys
//!   keep theirs ([`super::ranking::semantic_rule_list`]). The nearest documents come from the
//!   embedder's graphs, restricted to the allowed set; every allowed document is a
//!   candidate, those without an embedding last (similarity `null`, score 0).
//! - Hybrid: both lists are computed for the page's end; when every keyword hit of a full
//!   page scores at least 0.45 once weighted by `1 − semanticRatio`, the semantic list is not
//!   used. Otherwise the lists merge head to head, group by group in each side's rule order:
//!   a run of relevancy rules (or the similarity) is one score weighted by its side's share
//!   (keyword `1 − ratio`, semantic `ratio`), a sort key compares as the sort does; the hit
//!   with more groups wins a tie of the rest, the semantic one an exact tie. A document is
//!   shown once, from the side that placed it first, with that side's score and details.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use api_types::{Code, Error, Result};
use embedders::{Distribution, EmbedderConfig};
use roaring::RoaringBitmap;
use serde::Deserialize;

use super::collect::{Order, Ordered};
use super::distinct::distinct_ranked;
use super::page::Window;
use super::ranking::{rule_runs, Rule, Run};
use super::{compare_ranked, steps, Ranked};
use crate::facets;
use crate::index::cache::{TableLookup, VectorTables};
use crate::search::SearchContext;
use crate::store::keys;
use crate::vectors::table::GraphTables;
use crate::vectors::{registry, Registry, Space};

/// `hybrid` of a search request.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(rename_all = "camelCase")]
pub struct Hybrid {
    pub embedder: String,
    #[serde(default = "default_ratio")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub semantic_ratio: f64,
}

fn default_ratio() -> f64 {
    0.5
}

/// A semantic side of a search: the query vector and where to look for it.
pub(super) struct Semantic {
    /// The embedder's graphs (none before any vector was written).
    pub space: Option<Space>,
    pub vector: Vec<f32>,
    pub distribution: Option<Distribution>,
}

/// Which search a request runs.
pub(super) enum Mode {
    /// Keyword search; `semantic_hits` is Some(0) when the request asked for a hybrid search
    /// that could not use its semantic side (`semanticHitCount: 0` in the response).
    Keyword {
        semantic_hits: Option<usize>,
    },
    Semantic(Semantic),
    Hybrid(Semantic, f64),
}

impl SearchContext<'_> {
    /// The kind of search `q` asks for (§10.1), with its query vector.
    pub(super) fn search_mode(
        &self,
        q: &str,
        vector: Option<&[f32]>,
        hybrid: Option<&Hybrid>,
        media: Option<&serde_json::Value>,
    ) -> Result<Mode> {
        let rtxn = &self.rtxn;
        let settings = &*self.settings;
        let Some(hybrid) = hybrid else {
            if vector.is_some() || media.is_some() {
                return Err(missing_hybrid());
            }
            return Ok(Mode::Keyword {
                semantic_hits: None,
            });
        };
        let ratio = hybrid.semantic_ratio;
        let blank = q.trim().is_empty();
        // A search that embeds nothing (keywords only, or a placeholder without a vector)
        // does not look its embedder up, as Meilisearch does not: a missing one is no error.
        if media.is_none() && vector.is_none() && (ratio == 0.0 || blank) {
            return Ok(Mode::Keyword {
                semantic_hits: None,
            });
        }
        let Some(config) = registry::configs(settings)?
            .into_iter()
            .find(|(n, _)| *n == hybrid.embedder)
            .map(|(_, c)| c)
        else {
            return Err(Error::new(
                Code::InvalidSearchEmbedder,
                format!("Cannot find embedder with name `{}`.", hybrid.embedder),
            ));
        };
        let entry = Registry::load(self.store(), rtxn)?
            .get(&hybrid.embedder)
            .copied();
        if let Some(v) = vector {
            let expected = config.dimensions.or(entry.map(|e| e.dimensions));
            if let Some(d) = expected.filter(|d| *d != v.len()) {
                return Err(Error::new(
                    Code::InvalidVectorDimensions,
                    format!(
                        "Invalid vector dimensions: expected: `{d}`, found: `{}`.",
                        v.len()
                    ),
                ));
            }
        }
        if ratio == 0.0 || (blank && vector.is_none() && media.is_none()) {
            return Ok(Mode::Keyword {
                semantic_hits: None,
            });
        }
        let semantic_only = ratio == 1.0 || blank;
        let text = (!blank).then_some(q);
        let vector = match vector {
            Some(v) => Some(v.to_vec()),
            None => match self.embed_query(&hybrid.embedder, &config, text, media) {
                Ok(v) => v,
                Err(e) if semantic_only => return Err(e),
                // A hybrid search whose query cannot be embedded (a failing source, `media`
                // that renders no search fragment) answers with its keywords, as Meilisearch's.
                Err(_) => None,
            },
        };
        let Some(vector) = vector else {
            return Ok(Mode::Keyword {
                semantic_hits: Some(0),
            });
        };
        let semantic = Semantic {
            space: entry.map(|e| e.space()),
            vector,
            distribution: config.distribution,
        };
        Ok(match semantic_only {
            true => Mode::Semantic(semantic),
            false => Mode::Hybrid(semantic, ratio),
        })
    }

    /// The query's embedding by the embedder's source (its text, or the search fragment its
    /// text and `media` render); None for `userProvided` (queries give their `vector`).
    fn embed_query(
        &self,
        name: &str,
        config: &EmbedderConfig,
        q: Option<&str>,
        media: Option<&serde_json::Value>,
    ) -> Result<Option<Vec<f32>>> {
        if !config.generates() {
            if media.is_some() {
                return Err(embedders::fragment::media_without_fragments("userProvided"));
            }
            return Ok(None);
        }
        crate::vectors::embed_query(name, config, q, media).map(Some)
    }

    /// The vector graphs' tables at the context's generation when they are built. The first
    /// search of a generation starts their build on a thread of its own and, like every search
    /// until it ends, is answered by hannoy's reader (the same hits, only slower).
    fn graph_tables(&self) -> Result<Option<Arc<Option<GraphTables>>>> {
        let rtxn = &self.rtxn;
        let generation = self.store().get_u64(rtxn, keys::GENERATION)?;
        match self.vector_tables().lock().unwrap().lookup(generation) {
            TableLookup::Ready(t) => return Ok(Some(t)),
            TableLookup::Busy => return Ok(None),
            TableLookup::Build => {}
        }
        let finish = move |tables: &Mutex<VectorTables>, built: Option<GraphTables>| {
            tables.lock().unwrap().finish(generation, built)
        };
        let txn = match self.store().static_read() {
            // A commit since the context's snapshot makes this generation's table useless: none
            // is kept.
            Ok(txn) if self.store().get_u64(&txn, keys::GENERATION).ok() == Some(generation) => txn,
            _ => {
                finish(self.vector_tables(), None);
                return Ok(None);
            }
        };
        let cache = self.vector_tables().clone();
        let vectors = self.store().vectors;
        let started = std::thread::Builder::new()
            .name("quarry-vector-table".into())
            .spawn(move || finish(&cache, vectors.tables(txn).ok()));
        if started.is_err() {
            finish(self.vector_tables(), None);
        }
        Ok(None)
    }

    /// Orders the allowed documents by similarity to the query vector: see the module's
    /// documentation.
    pub(super) fn semantic_order(&self, o: &Order, s: &Semantic) -> Result<Ordered> {
        let set = self.allowed_or_all(&o.allowed)?;
        let steps = steps(o.rules);
        // Keys before the similarity, distinct and a threshold need every candidate ranked.
        let keys_first = !matches!(steps.first(), Some(super::ranking::Step::Similarity))
            && !o.key_specs.is_empty();
        let whole = keys_first || o.distinct.is_some() || o.threshold.is_some();
        let need = match whole {
            true => set.len() as usize,
            false => o.window.end().min(set.len() as usize),
        };
        let nearest = match s.space {
            Some(space) if need > 0 => {
                let candidates = o.allowed.as_deref();
                let tables = self.graph_tables()?;
                self.store().vectors.nearest(
                    &o.ctx.rtxn,
                    tables.as_deref().and_then(Option::as_ref),
                    space,
                    &s.vector,
                    candidates,
                    need,
                )?
            }
            _ => Vec::new(),
        };
        let mut seen: HashSet<u32> = HashSet::with_capacity(nearest.len());
        let mut ranked: Vec<Ranked> = Vec::with_capacity(need);
        for (iid, similarity) in nearest {
            seen.insert(iid);
            let similarity = match s.distribution {
                Some(d) => corrected(similarity, d),
                None => similarity,
            };
            ranked.push(Ranked::semantic(iid, Some(similarity)));
        }
        // Documents without an embedding come last, in internal-id order.
        if ranked.len() < need {
            for iid in set.iter() {
                if ranked.len() >= need {
                    break;
                }
                if !seen.contains(&iid) {
                    ranked.push(Ranked::semantic(iid, None));
                }
            }
        }
        if !o.key_specs.is_empty() {
            let ids: Vec<u32> = ranked.iter().map(|r| r.iid).collect();
            let keys = self.sort_keys(o.key_specs, &ids)?;
            for (r, k) in ranked.iter_mut().zip(keys.chunks(o.key_specs.len())) {
                r.keys = k.to_vec();
            }
            ranked.sort_by(|a, b| compare_ranked(&steps, a, b));
        }
        let mut total = set.len() as usize;
        if let Some(t) = o.threshold {
            ranked.retain(|r| r.score() >= t);
            total = ranked.len();
        }
        if let Some(field) = o.distinct {
            let column = self.columns(&[field.to_string()])?.remove(0);
            ranked = distinct_ranked(&column, ranked);
            total = ranked.len();
        }
        let facets = match o.facet_names {
            Some(names) => {
                let kept: Arc<RoaringBitmap> = match whole {
                    true => Arc::new(ranked.iter().map(|r| r.iid).collect()),
                    false => set.clone(),
                };
                Some(self.order_facets(o, names, &kept)?)
            }
            None => None,
        };
        let Window { offset, limit } = o.window;
        Ok(Ordered {
            page: ranked.into_iter().skip(offset).take(limit).collect(),
            candidates: total,
            facets,
        })
    }
}

/// A similarity moved by the embedder's `distribution`: its mean to 0.5, its sigma to 0.4.
fn corrected(similarity: f32, d: Distribution) -> f32 {
    let s = 0.5 + (0.4 / d.sigma) * (similarity as f64 - d.mean);
    s.clamp(f64::EPSILON, 1.0) as f32
}

/// Whether a full keyword page is good enough that the semantic side is not used (§10.3).
pub(super) fn keyword_suffices(keyword: &Ordered, window: Window, ratio: f64) -> bool {
    keyword.page.len() >= window.end()
        && keyword
            .page
            .iter()
            .all(|r| r.score() * (1.0 - ratio) >= 0.45)
}

/// The two lists of a hybrid search, each with the rules that ordered it.
pub(super) struct Sides<'a> {
    pub keyword: Ordered,
    pub keyword_rules: &'a [Rule],
    pub semantic: Ordered,
    pub semantic_rules: &'a [Rule],
}

/// Merges a keyword and a semantic list, both ordered for the window's end, into the page
/// (a document once; with `distinct`, the first document of each value across both lists);
/// returns it with how many of its hits came from the semantic list.
pub(super) fn merge(
    sides: Sides,
    ratio: f64,
    window: Window,
    distinct: Option<&facets::Column>,
) -> (Ordered, usize) {
    let Sides {
        keyword,
        keyword_rules,
        semantic,
        semantic_rules,
    } = sides;
    let end = window.end();
    let mut kw = keyword.page.into_iter().peekable();
    let mut sem = semantic.page.into_iter().peekable();
    let mut seen: HashSet<u32> = HashSet::new();
    let mut merged: Vec<Ranked> = Vec::with_capacity(2 * end);
    loop {
        let take_semantic = match (kw.peek(), sem.peek()) {
            (None, None) => break,
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (Some(k), Some(s)) => {
                let s = parts(s, semantic_rules, ratio);
                let k = parts(k, keyword_rules, 1.0 - ratio);
                compare_parts(&s, &k) != Ordering::Less
            }
        };
        let next = match take_semantic {
            true => sem.next(),
            false => kw.next(),
        }
        .expect("peeked");
        if seen.insert(next.iid) {
            merged.push(next);
        }
    }
    if let Some(column) = distinct {
        merged = distinct_ranked(column, merged);
    }
    let page: Vec<Ranked> = merged
        .into_iter()
        .skip(window.offset)
        .take(window.limit)
        .collect();
    let semantic_hits = page.iter().filter(|r| r.semantic).count();
    (
        Ordered {
            page,
            candidates: keyword.candidates.max(semantic.candidates),
            facets: semantic.facets.or(keyword.facets),
        },
        semantic_hits,
    )
}

/// One group of a hit's order as the merge compares it: a run of relevancy rules (or the
/// similarity) as one score times its side's weight, or a sort key.
enum Part<'a> {
    Score(f64),
    Key {
        key: Option<&'a facets::SortKey>,
        asc: bool,
    },
}

fn parts<'a>(r: &'a Ranked, rules: &[Rule], weight: f64) -> Vec<Part<'a>> {
    rule_runs(&r.verdict, rules)
        .into_iter()
        .map(|run| match run {
            Run::Relevance(score) => Part::Score(score * weight),
            Run::Vector => Part::Score(r.similarity.map_or(0.0, |s| s as f64) * weight),
            Run::Key { slot, asc } => Part::Key {
                key: r.keys.get(slot),
                asc,
            },
        })
        .collect()
}

/// Meilisearch's hybrid comparison (`Greater`: `a` is better): group by group, weighted
/// scores equal within f64's epsilon and equal sort keys go on to the next group; a score
/// against a sort key wins unless it is 0; the hit with more groups wins a tie of the rest.
fn compare_parts(a: &[Part], b: &[Part]) -> Ordering {
    for i in 0..a.len().max(b.len()) {
        match (a.get(i), b.get(i)) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(Part::Score(x)), Some(Part::Score(y))) => {
                if (x - y).abs() > f64::EPSILON {
                    return x.total_cmp(y);
                }
            }
            (Some(Part::Key { key: x, asc }), Some(Part::Key { key: y, .. })) => {
                if let (Some(x), Some(y)) = (x, y) {
                    // The key that sorts first is the better one.
                    let o = facets::compare_keys(*x, *y, *asc).reverse();
                    if o != Ordering::Equal {
                        return o;
                    }
                }
            }
            (Some(Part::Score(x)), Some(Part::Key { .. })) => {
                return match *x == 0.0 {
                    true => Ordering::Less,
                    false => Ordering::Greater,
                }
            }
            (Some(Part::Key { .. }), Some(Part::Score(y))) => {
                return match *y == 0.0 {
                    true => Ordering::Greater,
                    false => Ordering::Less,
                }
            }
        }
    }
    Ordering::Equal
}

/// Both `media` and `vector` in one query (checked after the filter's syntax, as Meilisearch
/// checks it).
pub(super) fn media_and_vector() -> Error {
    Error::new(
        Code::InvalidSearchMediaAndVector,
        "Invalid request: both `media` and `vector` parameters are present.",
    )
}

/// A query vector or media without `hybrid` (checked after the filter's syntax and before
/// the other parameters, as Meilisearch checks it).
pub(super) fn missing_hybrid() -> Error {
    Error::new(
        Code::MissingSearchHybrid,
        "Invalid request: missing `hybrid` parameter when `vector` or `media` are present.",
    )
}
