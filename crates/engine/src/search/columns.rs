//! The value columns (sort, distinct, facets, filters) of a generation, built from the
//! documents once and cached per generation (see [`crate::index::cache::ColumnCache`]).

use std::sync::Arc;

use api_types::Result;
use roaring::RoaringBitmap;

use crate::facets::{self, Column};
use crate::index::cache::worth_updating;
use crate::index::{cores, Index};
use crate::store::{heed_error, keys};

/// How many documents a column build hands a core to decode at a time.
const COLUMN_CHUNK: usize = 16_384;

/// The value columns of `paths` at `rtxn`'s generation. Those not cached are derived from
/// an older generation's column when the documents changed since are known and few
/// (decoding only those), else built in one pass over every document.
pub(crate) fn columns(
    index: &Index,
    rtxn: &heed::RoTxn,
    paths: &[String],
) -> Result<Vec<Arc<Column>>> {
    let generation = index.store().get_u64(rtxn, keys::GENERATION)?;
    let (mut found, older) = {
        let mut cache = index.column_cache().lock().unwrap();
        let found: Vec<Option<Arc<Column>>> =
            paths.iter().map(|p| cache.get(generation, p)).collect();
        // (the generation it was built at, the column, the ids changed since)
        let older: Vec<Option<(u64, Arc<Column>, RoaringBitmap)>> = paths
            .iter()
            .zip(&found)
            .map(|(p, f)| {
                let (g, column) = cache.older(generation, p).filter(|_| f.is_none())?;
                Some((g, column, cache.changed_since(g, generation)?))
            })
            .collect();
        (found, older)
    };
    if found.iter().all(Option::is_some) {
        return Ok(found.into_iter().flatten().collect());
    }
    let fields = index.fields_map().read().unwrap().clone();
    let count = index.store().docs.len(rtxn).map_err(heed_error)?;
    let mut built: Vec<(usize, Column)> = Vec::new();
    // Derived: few documents changed since an older column was built.
    let mut derivable: Vec<usize> = (0..paths.len())
        .filter(|i| {
            older[*i]
                .as_ref()
                .is_some_and(|(_, _, ids)| worth_updating(ids, count))
        })
        .collect();
    while let Some(&first) = derivable.first() {
        // The paths whose columns are as old as `first`'s share one decoding.
        let (g, _, ids) = older[first].as_ref().unwrap();
        let (same, rest): (Vec<usize>, Vec<usize>) = derivable
            .iter()
            .partition(|i| older[**i].as_ref().unwrap().0 == *g);
        let keep = |name: &str| same.iter().any(|i| crate::value::within(&paths[*i], name));
        let mut changed = Vec::with_capacity(ids.len() as usize);
        for iid in ids {
            let doc = match index.store().docs.get(rtxn, &iid).map_err(heed_error)? {
                Some(bytes) => Some(crate::codec::decode_fields(bytes, &fields, keep)?),
                None => None,
            };
            changed.push((iid, doc));
        }
        for i in &same {
            let base = &older[*i].as_ref().unwrap().1;
            built.push((
                *i,
                facets::ColumnBuilder::updated(&paths[*i], base, ids, &changed),
            ));
        }
        derivable = rest;
    }
    // Built afresh, in one pass over every document.
    let missing: Vec<usize> = (0..paths.len())
        .filter(|i| found[*i].is_none() && !built.iter().any(|(b, _)| b == i))
        .collect();
    if !missing.is_empty() {
        let mut builders: Vec<facets::ColumnBuilder> = missing
            .iter()
            .map(|i| facets::ColumnBuilder::new(&paths[*i]))
            .collect();
        // Documents are decoded (decompressed, most of the pass's time) on every core, a
        // chunk at a time, while this thread hands them to the builders in internal-id
        // order.
        let docs = index
            .store()
            .docs
            .iter(rtxn)
            .map_err(heed_error)?
            .collect::<heed::Result<Vec<(u32, &[u8])>>>()
            .map_err(heed_error)?;
        // Only the top-level fields that can hold a built column's values are decoded.
        let keep = |name: &str| {
            missing
                .iter()
                .any(|i| crate::value::within(&paths[*i], name))
        };
        cores::pipelined(
            &docs,
            COLUMN_CHUNK,
            |chunk| {
                chunk
                    .iter()
                    .map(|(_, bytes)| crate::codec::decode_fields(bytes, &fields, keep))
                    .collect::<Result<Vec<_>>>()
            },
            |decoded, chunk| {
                for (doc, (iid, _)) in decoded?.iter().zip(chunk) {
                    for b in &mut builders {
                        b.push(*iid, doc);
                    }
                }
                Ok(())
            },
        )?;
        built.extend(
            missing
                .into_iter()
                .zip(builders.into_iter().map(|b| b.finish())),
        );
    }
    let mut cache = index.column_cache().lock().unwrap();
    for (i, column) in built {
        let column = Arc::new(column);
        cache.put(generation, &paths[i], column.clone());
        found[i] = Some(column);
    }
    Ok(found.into_iter().map(|c| c.expect("built above")).collect())
}
