//! The facets step of a search: which attributes `facets` names, and their value counts
//! (`facetDistribution`) and numeric ranges (`facetStats`) over the documents a search kept.
//! The counting itself is the value columns' (see [`crate::facets`]); this step reads the
//! `faceting` settings (how many values, in which order) and checks the names against the
//! filterable attributes. Facet search reuses the same settings readers.

use std::collections::BTreeSet;

use api_types::{Code, Error, Result};
use roaring::RoaringBitmap;
use serde_json::{Map, Value};

use crate::facets;
use crate::filter::rules;
use crate::search::SearchContext;

/// The facet counts of a search, in the order of the requested names.
#[derive(Debug, Clone, Default)]
pub(crate) struct FacetCounts {
    /// `facetDistribution`: per facet, its values with their counts, in the facet's order.
    pub distribution: Map<String, Value>,
    /// `facetStats`: the facets holding numbers, with their smallest and largest.
    pub stats: Vec<FacetStats>,
    /// The documents counted, when the query asked to keep them (`keep_facet_set`).
    pub over: Option<RoaringBitmap>,
}

/// The range of a facet's numbers among the kept documents.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FacetStats {
    pub name: String,
    pub min: f64,
    pub max: f64,
}

/// A filterable `_geo` is faceted as Meilisearch does: `_geo` itself (no values, an object)
/// and the numbers of its parts.
const GEO: &str = "_geo";
const GEO_PARTS: [&str; 2] = ["_geo.lat", "_geo.lng"];

/// Whether `facets` expands attribute `name` to the paths below it: not a reserved attribute
/// (`_geojson` is faceted as itself, `_geo` by its two coordinates).
fn expands(name: &str) -> bool {
    !name.starts_with('_')
}

impl SearchContext<'_> {
    /// The concrete attributes `facets` names, as Meilisearch expands them: a filterable name
    /// brings itself and every path its documents' objects hold below it (`_geo` its two
    /// coordinates); a pattern (`*` among them) every filterable attribute or path below one
    /// that it matches; a name above a filterable attribute (`a` when `a.b` is) is taken and
    /// brings nothing. A name or pattern that brings nothing otherwise is refused.
    pub(super) fn facet_names(
        &self,
        requested: &[String],
        filter_rules: &[rules::Rule],
    ) -> Result<Vec<String>> {
        let mut out = BTreeSet::new();
        let mut known: Option<Vec<String>> = None;
        for name in requested {
            let found = if name.contains('*') {
                let known = match &mut known {
                    Some(k) => k,
                    None => known.insert(self.known_fields(filter_rules)?),
                };
                let mut any = false;
                for f in known.iter().filter(|f| rules::pattern_matches(name, f)) {
                    any = true;
                    out.insert(f.clone());
                }
                any
            } else if rules::is_filterable(filter_rules, name) {
                out.insert(name.clone());
                out.extend(self.paths_below(name)?);
                true
            } else {
                rules::is_above_plain_rule(filter_rules, name)
            };
            if !found {
                return Err(Error::new(
                    Code::InvalidSearchFacets,
                    rules::facets_error(filter_rules, name),
                ));
            }
        }
        Ok(out.into_iter().collect())
    }

    /// The paths below attribute `name` that its documents' objects hold, dotted from the
    /// top (`_geo`: its two coordinates).
    fn paths_below(&self, name: &str) -> Result<Vec<String>> {
        if name == GEO {
            return Ok(GEO_PARTS.map(String::from).to_vec());
        }
        if !expands(name) {
            return Ok(Vec::new());
        }
        let columns = self.columns(&[name.to_string()])?;
        Ok(columns
            .iter()
            .flat_map(|c| c.nested.iter().map(|p| format!("{name}.{p}")))
            .collect())
    }

    /// The filterable attributes the index's documents hold, with every filterable path below
    /// them that their objects hold: what a pattern of `facets` is matched against.
    fn known_fields(&self, filter_rules: &[rules::Rule]) -> Result<Vec<String>> {
        let tops = self.filterable_fields(filter_rules)?;
        let mut out: BTreeSet<String> = tops.iter().cloned().collect();
        // One pass over the documents builds every column not cached.
        let objects: Vec<String> = tops.iter().filter(|t| expands(t)).cloned().collect();
        for (top, column) in objects.iter().zip(self.columns(&objects)?) {
            let below = column.nested.iter().map(|p| format!("{top}.{p}"));
            out.extend(below.filter(|b| rules::is_filterable(filter_rules, b)));
        }
        Ok(out.into_iter().collect())
    }

    /// The filterable attributes the index's documents hold: top-level fields, and the nested
    /// paths plain rules name.
    fn filterable_fields(&self, filter_rules: &[rules::Rule]) -> Result<Vec<String>> {
        let rtxn = &self.rtxn;
        let mut out: BTreeSet<String> = self
            .index()
            .field_distribution(rtxn)?
            .into_keys()
            .filter(|f| rules::is_filterable(filter_rules, f))
            .collect();
        for r in filter_rules {
            if let rules::Rule::Field(f) = r {
                if f.contains('.') {
                    out.insert(f.clone());
                }
            }
        }
        if out.contains(GEO) {
            out.extend(GEO_PARTS.map(String::from));
        }
        Ok(out.into_iter().collect())
    }

    /// Builds the value columns searches read, so that the first filter, sort or facet count
    /// after the index opens does not: every filterable attribute the documents hold, the
    /// sortable ones and the distinct attribute, in one pass over the documents, with their
    /// value index and numbers' ids. The column cache keeps what its budget allows.
    pub(crate) fn prepare_columns(&self) -> Result<()> {
        let settings = &self.settings;
        let mut names: BTreeSet<String> = self
            .filterable_fields(&rules::rules_of(settings))?
            .into_iter()
            .collect();
        names.extend(
            settings
                .sortable_attributes
                .iter()
                .filter(|a| !a.contains('*'))
                .cloned(),
        );
        names.extend(settings.distinct_attribute().map(str::to_string));
        let names: Vec<String> = names.into_iter().collect();
        for column in self.columns(&names)? {
            let _ = column.number_ids();
        }
        Ok(())
    }

    /// `facetDistribution` and `facetStats` of `names` over `set`.
    pub(super) fn facet_counts(
        &self,
        names: &[String],
        set: &RoaringBitmap,
    ) -> Result<FacetCounts> {
        let settings = &*self.settings;
        let columns = self.columns(names)?;
        let max_values = settings.max_values_per_facet();
        let mut distribution = Map::new();
        let mut stats = Vec::new();
        for (name, column) in names.iter().zip(columns) {
            if name == GEO {
                // A point is no facet value: its parts are.
                distribution.insert(name.clone(), Value::Object(Map::new()));
                continue;
            }
            let counts = facets::count(&column, set);
            if let (Some(min), Some(max)) = (counts.min, counts.max) {
                stats.push(FacetStats {
                    name: name.clone(),
                    min,
                    max,
                });
            }
            let order = settings.facet_order(name);
            distribution.insert(
                name.clone(),
                Value::Object(counts.distribution(&column, max_values, order)),
            );
        }
        Ok(FacetCounts {
            distribution,
            stats,
            over: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use api_types::Code;
    use serde_json::json;

    use crate::index::{BatchOp, Index, Method};
    use crate::store::keys;
    use crate::{stage_documents, Format};

    /// `facets` expands as Meilisearch does: an object attribute to every path its documents
    /// hold below it (objects too, with no values), a pattern to the filterable paths it
    /// matches, `_geo` to its coordinates (numbers, even written as strings); a name above a
    /// filterable attribute is taken and brings nothing; an unknown name is refused. A later
    /// batch's new paths are found too.
    #[test]
    fn facets_expand_objects_patterns_and_geo_as_meilisearch_does() {
        let tmp = tempfile::tempdir().unwrap();
        let index = Index::open(tmp.path().join("idx")).unwrap();
        let add = |task_uid: u64, docs: serde_json::Value| {
            let file = tmp.path().join(format!("docs{task_uid}"));
            stage_documents(docs.to_string().as_bytes(), Format::Json, None, &file).unwrap();
            index
                .apply_batch(vec![BatchOp::add_documents(
                    task_uid,
                    file,
                    Method::Replace,
                    None,
                )])
                .unwrap();
        };
        let patch =
            json!({"filterableAttributes": ["obj", "_geo", "_geojson", "deep.inner.val", "x"]});
        index
            .apply_batch(vec![BatchOp::UpdateSettings { task_uid: 1, patch }])
            .unwrap();
        add(
            2,
            json!([
                {"id": 1, "obj": {"a": "x", "b": {"c": 1}}, "_geo": {"lat": 48.85, "lng": 2.35}, "deep": {"inner": {"val": "q"}}, "x": 5},
                {"id": 2, "obj": [{"a": "y"}, {"b": {"c": 2}}], "_geo": {"lat": "45.76", "lng": "4.83"}, "x": 7,
                 "_geojson": {"type": "Point", "coordinates": [4.83, 45.76]}},
            ]),
        );
        let search = |facets: serde_json::Value| -> serde_json::Value {
            let q: crate::SearchQuery =
                serde_json::from_value(json!({"q": "", "facets": facets, "limit": 0})).unwrap();
            match index.search(&q) {
                Ok(bytes) => serde_json::from_slice(&bytes).unwrap(),
                Err(e) => json!({"error": e.code}),
            }
        };
        let distribution = |facets| search(facets)["facetDistribution"].clone();
        assert_eq!(
            distribution(json!(["obj"])),
            json!({"obj": {}, "obj.a": {"x": 1, "y": 1}, "obj.b": {}, "obj.b.c": {"1": 1, "2": 1}})
        );
        assert_eq!(
            distribution(json!(["obj.b"])),
            json!({"obj.b": {}, "obj.b.c": {"1": 1, "2": 1}})
        );
        assert_eq!(
            distribution(json!(["obj.*"])),
            json!({"obj.a": {"x": 1, "y": 1}, "obj.b": {}, "obj.b.c": {"1": 1, "2": 1}})
        );
        assert_eq!(distribution(json!(["deep"])), json!({}));
        assert_eq!(
            search(json!(["_geo.lat"]))["facetStats"],
            json!({"_geo.lat": {"min": 45.76, "max": 48.85}})
        );
        assert_eq!(
            distribution(json!(["_geo"])),
            json!({"_geo": {}, "_geo.lat": {"45.76": 1, "48.85": 1}, "_geo.lng": {"2.35": 1, "4.83": 1}})
        );
        let every = distribution(json!(["*"]));
        let names: Vec<&String> = every.as_object().unwrap().keys().collect();
        assert!(
            names.iter().all(|n| !n.starts_with("_geojson.")),
            "{names:?}"
        );
        assert!(names.contains(&&"obj.b.c".to_string()), "{names:?}");
        assert_eq!(
            search(json!(["nope"]))["error"],
            json!(Code::InvalidSearchFacets)
        );
        assert_eq!(
            search(json!(["ob"]))["error"],
            json!(Code::InvalidSearchFacets)
        );
        add(3, json!([{"id": 3, "obj": {"later": true}}]));
        assert_eq!(
            distribution(json!(["obj.later"])),
            json!({"obj.later": {"true": 1}})
        );
        assert_eq!(
            distribution(json!(["obj"]))["obj.later"],
            json!({"true": 1})
        );
    }

    /// After `prepare_columns`, the columns of the filterable attributes the documents hold
    /// (by name and by pattern), the sortable ones and the distinct one are cached for the
    /// current generation; an attribute no rule names is not.
    #[test]
    fn prepared_columns_are_those_searches_read() {
        let tmp = tempfile::tempdir().unwrap();
        let index = Index::open(tmp.path().join("idx")).unwrap();
        let docs = json!([
            {"id": 1, "kind": "a", "n": 3, "tag": "x", "nested": {"x": 1}, "other": "o", "d": 1},
            {"id": 2, "kind": "b", "n": 1, "tags": ["y"], "d": 2},
        ]);
        let file = tmp.path().join("docs");
        stage_documents(docs.to_string().as_bytes(), Format::Json, None, &file).unwrap();
        let patch = json!({"filterableAttributes": ["kind", "nested.x",
                {"attributePatterns": ["tag*"]}, "missing"],
            "sortableAttributes": ["n"], "distinctAttribute": "d"});
        index
            .apply_batch(vec![
                BatchOp::UpdateSettings { task_uid: 1, patch },
                BatchOp::add_documents(2, file, Method::Replace, None),
            ])
            .unwrap();
        index.prepare_columns().unwrap();
        let rtxn = index.store().read().unwrap();
        let generation = index.store().get_u64(&rtxn, keys::GENERATION).unwrap();
        let mut cache = index.column_cache().lock().unwrap();
        for name in ["kind", "nested.x", "tag", "tags", "n", "d"] {
            assert!(cache.get(generation, name).is_some(), "{name} is prepared");
        }
        for name in ["other", "missing", "id"] {
            assert!(cache.get(generation, name).is_none(), "{name} is not");
        }
    }
}
