//! Which embedders an index has vectors for, and where: each configured embedder gets a
//! one-byte id (its graphs' prefix in [`super::store`]), the dimensions its vectors have,
//! whether they are binary quantized, and how many graphs it uses. Stored as one JSON meta
//! value (`vectors`) next to the settings, written in the batch's transaction.

use std::collections::BTreeMap;

use api_types::{Code, Error, Result};
use embedders::EmbedderConfig;
use heed::{RoTxn, RwTxn};
use roaring::RoaringBitmap;
use serde::{Deserialize, Serialize};

use super::store::{Space, VectorStore};
use crate::settings::Settings;
use crate::store::Store;

const KEY: &str = "vectors";

/// The vector space of one embedder.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub id: u8,
    pub dimensions: usize,
    pub quantized: bool,
    pub graphs: usize,
}

impl Entry {
    pub fn space(&self) -> Space {
        Space {
            id: self.id,
            quantized: self.quantized,
            graphs: self.graphs,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Registry {
    entries: BTreeMap<String, Entry>,
}

/// The embedders of `settings`, typed, in name order.
pub fn configs(settings: &Settings) -> Result<Vec<(String, EmbedderConfig)>> {
    let map = &settings.embedders;
    let mut out = Vec::with_capacity(map.len());
    for (name, config) in map {
        out.push((name.clone(), EmbedderConfig::read(name, config)?));
    }
    Ok(out)
}

impl Registry {
    pub fn load(store: &Store, txn: &RoTxn) -> Result<Registry> {
        match store.get_meta(txn, KEY)? {
            Some(bytes) => serde_json::from_slice(bytes).map_err(Error::internal),
            None => Ok(Registry::default()),
        }
    }

    pub fn save(&self, store: &Store, wtxn: &mut RwTxn) -> Result<()> {
        store.put_meta(
            wtxn,
            KEY,
            &serde_json::to_vec(self).map_err(Error::internal)?,
        )
    }

    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.get(name)
    }

    pub fn entries(&self) -> impl Iterator<Item = (&String, &Entry)> {
        self.entries.iter()
    }

    /// Forgets `name` (its graphs must have been cleared).
    pub fn remove(&mut self, name: &str) {
        self.entries.remove(name);
    }

    /// The entry of `name`, created with a free id when it has none yet.
    pub fn entry(&mut self, name: &str, dimensions: usize, quantized: bool) -> Result<&mut Entry> {
        if !self.entries.contains_key(name) {
            let used: Vec<u8> = self.entries.values().map(|e| e.id).collect();
            let id = (0..=u8::MAX).find(|i| !used.contains(i)).ok_or_else(|| {
                Error::new(
                    Code::InvalidSettingsEmbedders,
                    "An index can have at most 256 embedders.",
                )
            })?;
            self.entries.insert(
                name.to_string(),
                Entry {
                    id,
                    dimensions,
                    quantized,
                    graphs: 0,
                },
            );
        }
        Ok(self.entries.get_mut(name).expect("inserted above"))
    }

    /// Brings the stored vectors in line with the embedders of `settings` after a settings
    /// update: an embedder removed, or whose source or dimensions changed, loses its vectors;
    /// one switched to `binaryQuantized` has them quantized (irreversibly).
    pub fn sync(
        &mut self,
        vectors: &VectorStore,
        wtxn: &mut RwTxn,
        before: &[(String, EmbedderConfig)],
        after: &[(String, EmbedderConfig)],
    ) -> Result<()> {
        let names: Vec<String> = self.entries.keys().cloned().collect();
        for name in names {
            let entry = self.entries[&name];
            let old = before.iter().find(|(n, _)| *n == name).map(|(_, c)| c);
            let new = after.iter().find(|(n, _)| *n == name).map(|(_, c)| c);
            let keep = match (old, new) {
                (_, None) => false,
                (Some(o), Some(n)) => {
                    std::mem::discriminant(&o.source) == std::mem::discriminant(&n.source)
                        && n.dimensions.is_none_or(|d| d == entry.dimensions)
                }
                (None, Some(n)) => n.dimensions.is_none_or(|d| d == entry.dimensions),
            };
            if !keep {
                vectors.clear(wtxn, entry.space())?;
                self.entries.remove(&name);
                continue;
            }
            if new.is_some_and(|n| n.binary_quantized) && !entry.quantized {
                let mut space = entry.space();
                vectors.quantize(wtxn, &mut space, entry.dimensions)?;
                self.entries.get_mut(&name).unwrap().quantized = true;
            }
        }
        Ok(())
    }

    /// `numberOfEmbeddings` and `numberOfEmbeddedDocuments` over every embedder.
    pub fn counts(&self, vectors: &VectorStore, rtxn: &RoTxn) -> Result<(u64, u64)> {
        let mut total = 0;
        let mut docs = RoaringBitmap::new();
        for entry in self.entries.values() {
            let (n, d) = vectors.counts(rtxn, entry.space())?;
            total += n;
            docs |= d;
        }
        Ok((total, docs.len()))
    }
}
