//! Documents that dynamic search rules pin at positions of the results. The TypeScript layer
//! lists them, in placing order, for a query its rules match; here they leave the natural
//! order (they are taken out of the allowed set before ranking) and are placed afterwards:
//! each at the position its rule asks, or the next free one when an earlier pin holds it, and
//! at the end when the results are shorter. A pinned document must exist and pass the
//! search's filter; it counts in the total and the facets, and scores 1.

use std::collections::BTreeSet;

use api_types::Result;
use roaring::RoaringBitmap;
use serde::Deserialize;

use super::page::Window;
use super::ranking::Ranked;
use crate::search::SearchContext;

/// One document a rule pins (the wire form the TypeScript layer sends).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PinnedDocument {
    pub id: String,
    pub position: usize,
}

/// The pinned documents of one search, resolved: internal ids with their final positions.
#[derive(Default)]
pub(super) struct Pinned {
    /// (internal id, position), by position.
    placed: Vec<(u32, usize)>,
    pub set: RoaringBitmap,
}

impl Pinned {
    pub fn is_empty(&self) -> bool {
        self.placed.is_empty()
    }

    pub fn len(&self) -> usize {
        self.placed.len()
    }

    /// The page `window` of the natural order (ranked from the first hit, pinned documents
    /// left out) with the pinned documents placed.
    pub fn place(&self, natural: Vec<Ranked>, window: Window) -> Vec<Ranked> {
        let mut all = natural;
        for &(iid, position) in &self.placed {
            let at = position.min(all.len());
            all.insert(at, Ranked::plain(iid));
        }
        all.into_iter()
            .skip(window.offset)
            .take(window.limit)
            .collect()
    }
}

impl SearchContext<'_> {
    /// Resolves `pins` against the index and the filter's `allowed` set: documents that do
    /// not exist or do not pass are dropped, a document pinned twice keeps its first place.
    pub(super) fn pinned(
        &self,
        pins: Option<&[PinnedDocument]>,
        allowed: Option<&RoaringBitmap>,
    ) -> Result<Pinned> {
        let rtxn = &self.rtxn;
        let mut out = Pinned::default();
        let mut taken = BTreeSet::new();
        for pin in pins.unwrap_or_default() {
            let Some(iid) = self.store().internal_id(rtxn, &pin.id)? else {
                continue;
            };
            if allowed.is_some_and(|a| !a.contains(iid)) || !out.set.insert(iid) {
                continue;
            }
            let mut position = pin.position;
            while !taken.insert(position) {
                position += 1;
            }
            out.placed.push((iid, position));
        }
        out.placed.sort_by_key(|&(_, position)| position);
        Ok(out)
    }
}
