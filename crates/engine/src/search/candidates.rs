//! What narrows the candidate set before ranking: the ids a tantivy query matches, the
//! documents a filter let through (computed by [`allowed_ids`](super::filtering::allowed_ids)) or
//! all of them, less those holding a negated part of the query, and the `attributesToSearchOn`
//! check that restricts which fields count.

use std::sync::Arc;

use api_types::{Code, Error, Result};
use roaring::RoaringBitmap;
use tantivy::query::{EnableScoring, Occur, Query};

use super::query::{groups_query, Reach, Terms};
use super::ranking::Allowed;
use super::SearchContext;
use crate::filter::eval::within;
use crate::index::cache::worth_updating;
use crate::index::{tv, Index};
use crate::settings::Settings;
use crate::store::{heed_error, keys};

impl SearchContext<'_> {
    /// The internal ids of the documents matching `query` among `allowed` (every one when `None`).
    pub(crate) fn iids_of(
        &self,
        searcher: &tantivy::Searcher,
        query: &dyn Query,
        allowed: Option<&RoaringBitmap>,
    ) -> Result<RoaringBitmap> {
        let allowed = allowed.map(Allowed::new);
        Ok(self
            .level_docs(searcher, query, allowed.as_ref())
            .map_err(tv)?
            .iter()
            .flat_map(|(_, list)| list.iter().map(|&(_, iid)| iid))
            .collect())
    }

    /// How many documents `query` matches among `allowed` (every one when `None`), counted up
    /// to `cap`: the count stops once it reaches it.
    pub(crate) fn count_up_to(
        &self,
        searcher: &tantivy::Searcher,
        query: &dyn Query,
        allowed: Option<&RoaringBitmap>,
        cap: usize,
    ) -> Result<usize> {
        let allowed = allowed.map(Allowed::new);
        let mut n = 0usize;
        if cap == 0 {
            return Ok(0);
        }
        let weight = query
            .weight(EnableScoring::disabled_from_searcher(searcher))
            .map_err(tv)?;
        for reader in searcher.segment_readers() {
            let mut scorer = weight.scorer(reader, 1.0).map_err(tv)?;
            let whole = self
                .each_kept(reader, scorer.as_mut(), allowed.as_ref(), |_, _| {
                    n += 1;
                    n < cap
                })
                .map_err(tv)?;
            if !whole {
                return Ok(cap);
            }
        }
        Ok(n)
    }

    /// `allowed` (all documents when `None`) without those holding a negated part of the
    /// query (`-word`, `-"a phrase"`), as a filter would remove them.
    pub(crate) fn without_negated(
        &self,
        searcher: &tantivy::Searcher,
        terms: &Terms,
        allowed: Option<Arc<RoaringBitmap>>,
    ) -> Result<Option<Arc<RoaringBitmap>>> {
        if terms.negatives.is_empty() {
            return Ok(allowed);
        }
        let query = groups_query(&terms.negatives, Occur::Should, Reach::Completions);
        let excluded = self.iids_of(searcher, query.as_ref(), None)?;
        let base = self.allowed_or_all(&allowed)?;
        Ok(Some(Arc::new(base.as_ref() - &excluded)))
    }

    /// The documents a filter let through, or all of them.
    #[inline]
    pub(crate) fn allowed_or_all(
        &self,
        allowed: &Option<Arc<RoaringBitmap>>,
    ) -> Result<Arc<RoaringBitmap>> {
        let rtxn = &self.rtxn;
        allowed_or_all(self.index(), rtxn, allowed)
    }
}

/// The documents a filter let through, or all of them.
pub(crate) fn allowed_or_all(
    index: &Index,
    rtxn: &heed::RoTxn,
    allowed: &Option<Arc<RoaringBitmap>>,
) -> Result<Arc<RoaringBitmap>> {
    match allowed {
        Some(a) => Ok(a.clone()),
        None => all_ids(index, rtxn),
    }
}

/// Every internal id, cached per generation (derived from an older generation's when the
/// ids changed since are known and few).
pub(crate) fn all_ids(index: &Index, rtxn: &heed::RoTxn) -> Result<Arc<RoaringBitmap>> {
    let generation = index.store().get_u64(rtxn, keys::GENERATION)?;
    let older = {
        let cache = index.column_cache().lock().unwrap();
        if let Some(all) = cache.all_at(generation) {
            return Ok(all);
        }
        cache
            .older_all(generation)
            .and_then(|(g, all)| Some((all, cache.changed_since(g, generation)?)))
    };
    let all = match older {
        // An older generation's set, with the ids changed since looked up one by one.
        Some((older, changed)) if worth_updating(&changed, older.len()) => {
            let mut all = &*older - &changed;
            for iid in &changed {
                if index
                    .store()
                    .docs
                    .get(rtxn, &iid)
                    .map_err(heed_error)?
                    .is_some()
                {
                    all.insert(iid);
                }
            }
            all
        }
        _ => {
            let mut all = RoaringBitmap::new();
            for item in index.store().docs.iter(rtxn).map_err(heed_error)? {
                all.insert(item.map_err(heed_error)?.0);
            }
            all
        }
    };
    let all = Arc::new(all);
    index
        .column_cache()
        .lock()
        .unwrap()
        .put_all(generation, all.clone());
    Ok(all)
}

/// `attributesToSearchOn`, checked against `searchableAttributes`: `None` when absent, empty,
/// or holding `*` (the other names are checked all the same). A pattern (`t*`, `*line`, `obj.*`)
/// stands for the searchable fields it matches, as in Meilisearch, and is refused when it matches
/// none. `fields` gives the index's field names, for the patterns and for the refusal's list.
pub(crate) fn search_on(
    settings: &Settings,
    asked: Option<&[String]>,
    fields: impl Fn() -> Vec<String>,
) -> Result<Option<Vec<String>>> {
    let Some(asked) = asked.filter(|a| !a.is_empty()) else {
        return Ok(None);
    };
    let every = asked.iter().any(|x| x == "*");
    let asked: Vec<&String> = asked.iter().filter(|x| *x != "*").collect();
    let searchable = settings.searchable();
    let mut names: Option<Vec<String>> = None;
    let mut out = Vec::with_capacity(asked.len());
    for attr in asked {
        let ok = if attr.contains('*') {
            let names = names.get_or_insert_with(|| searchable_fields(searchable, fields()));
            let before = out.len();
            out.extend(
                names
                    .iter()
                    .filter(|n| crate::filter::rules::pattern_matches(attr, n))
                    .cloned(),
            );
            out.len() > before
        } else {
            out.push((*attr).clone());
            searchable.is_none_or(|s| s.iter().any(|s| within(attr, s)))
        };
        if !ok {
            let names = names.get_or_insert_with(|| searchable_fields(searchable, fields()));
            return Err(Error::new(
                Code::InvalidSearchAttributesToSearchOn,
                format!(
                    "Attribute `{attr}` is not searchable. Available searchable attributes are: `{}`.",
                    names.join(", ")
                ),
            ));
        }
    }
    Ok((!every).then_some(out))
}

/// The index's fields that `searchable` covers (every one when `None`), the objects holding
/// nested ones included, in name order (what Meilisearch lists when it refuses an attribute to
/// search on).
fn searchable_fields(searchable: Option<&[String]>, fields: Vec<String>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in fields {
        let mut at = 0;
        while let Some(dot) = name[at..].find('.') {
            names.push(name[..at + dot].to_string());
            at += dot + 1;
        }
        names.push(name);
    }
    if let Some(searchable) = searchable {
        names.retain(|n| searchable.iter().any(|s| within(n, s)));
    }
    names.sort_unstable();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::search_on;
    use crate::settings::Settings;

    fn on(searchable: &[&str], asked: &[&str]) -> Result<Option<Vec<String>>, String> {
        let settings = Settings {
            searchable_attributes: searchable.iter().map(|s| s.to_string()).collect(),
            ..Settings::default()
        };
        let fields = || {
            ["title", "tagline", "obj.a", "obj.b.c"]
                .map(String::from)
                .to_vec()
        };
        let asked: Vec<String> = asked.iter().map(|s| s.to_string()).collect();
        search_on(&settings, Some(&asked), fields).map_err(|e| e.message)
    }

    /// Patterns stand for the searchable fields they match (objects holding nested fields
    /// included), names are kept as asked, and what matches nothing searchable is refused with
    /// the fields that are.
    #[test]
    fn attributes_to_search_on_take_patterns_of_searchable_fields() {
        let both = ["title", "obj", "tagline"];
        assert_eq!(
            on(&both, &["t*"]).unwrap(),
            Some(vec!["tagline".into(), "title".into()])
        );
        assert_eq!(on(&both, &["*line"]).unwrap(), Some(vec!["tagline".into()]));
        assert_eq!(
            on(&both, &["obj.*", "title"]).unwrap(),
            Some(vec![
                "obj.a".into(),
                "obj.b".into(),
                "obj.b.c".into(),
                "title".into()
            ])
        );
        assert_eq!(on(&["*"], &["ti*"]).unwrap(), Some(vec!["title".into()]));
        assert_eq!(on(&both, &["*"]).unwrap(), None);
        assert_eq!(on(&both, &["title", "*"]).unwrap(), None);
        assert!(on(&["title"], &["*", "year"])
            .unwrap_err()
            .contains("`year` is not searchable"));
        let refused = "Attribute `zzz*` is not searchable. Available searchable attributes are: `obj, obj.a, obj.b, obj.b.c, tagline, title`.";
        assert_eq!(on(&both, &["zzz*"]).unwrap_err(), refused);
        assert!(on(&["title"], &["tag*"])
            .unwrap_err()
            .contains("`tag*` is not searchable"));
        assert!(on(&["title"], &["tagline"])
            .unwrap_err()
            .contains("`tagline` is not searchable"));
    }
}
