//! Sort keys of candidates: for each `sort` entry or custom `attr:asc|desc` rule, the value
//! the candidate sorts on, read from the value columns (a distance for a geo point).

use api_types::Result;

use crate::facets::{Item, SortKey as Key};
use crate::search::key_paths;
use crate::search::SearchContext;
use crate::sort::{self, SortKey};

impl SearchContext<'_> {
    /// Each candidate's keys for `specs`, `specs.len()` per candidate.
    pub(crate) fn sort_keys(&self, specs: &[SortKey], iids: &[u32]) -> Result<Vec<Key>> {
        if specs.is_empty() {
            return Ok(Vec::new());
        }
        let columns = self.columns(&key_paths(specs))?;
        let mut keys = Vec::with_capacity(iids.len() * specs.len());
        for &iid in iids {
            for (spec, column) in specs.iter().zip(&columns) {
                keys.push(match spec {
                    SortKey::Field { asc, .. } => column.sort_key(iid, *asc),
                    SortKey::GeoPoint { lat, lng, .. } => match column.values(iid) {
                        [Item::Num(dlat), Item::Num(dlng), ..] => {
                            Key::Num(sort::haversine_m(*lat, *lng, *dlat, *dlng))
                        }
                        _ => Key::Missing,
                    },
                });
            }
        }
        Ok(keys)
    }
}
