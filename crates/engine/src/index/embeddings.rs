//! The read side of vectors for documents: `_vectors` as `retrieveVectors` shows it, and the
//! embedding counts of the index's statistics.

use api_types::Result;
use roaring::RoaringBitmap;
use serde_json::{json, Map, Value};

use super::update::user_vectors;
use super::Index;
use crate::settings::Settings;
use crate::store::Store;
use crate::vectors::{registry, Registry, Space};

/// What one request needs to print `_vectors`: the configured embedders, in settings order,
/// with their vector space (none before any vector was written) and the documents holding
/// the user's own embeddings.
pub(crate) struct VectorsView {
    embedders: Vec<Shown>,
}

/// One configured embedder: its name, whether its source generates embeddings, and its
/// vector space with the documents holding the user's own embeddings.
type Shown = (String, bool, Option<(Space, RoaringBitmap)>);

/// `numberOfEmbeddings` and `numberOfEmbeddedDocuments`.
pub(super) fn embedding_counts(store: &Store, rtxn: &heed::RoTxn) -> Result<(u64, u64)> {
    Registry::load(store, rtxn)?.counts(&store.vectors, rtxn)
}

impl VectorsView {
    /// The view of the embedders `settings` configures, as `rtxn` holds their vectors.
    pub(crate) fn load(store: &Store, rtxn: &heed::RoTxn, settings: &Settings) -> Result<Self> {
        let registry = Registry::load(store, rtxn)?;
        let mut embedders = Vec::new();
        for (name, config) in registry::configs(settings)? {
            let space = match registry.get(&name) {
                Some(e) => Some((e.space(), user_vectors(store, rtxn, e.id)?)),
                None => None,
            };
            embedders.push((name, config.generates(), space));
        }
        Ok(VectorsView { embedders })
    }

    /// `_vectors` of document `iid`: the entries stored with the document (embedders that are
    /// not configured), then `{embeddings, regenerate}` for each configured embedder.
    pub(crate) fn of(
        &self,
        index: &Index,
        rtxn: &heed::RoTxn,
        iid: u32,
        stored: Option<&Value>,
    ) -> Result<Value> {
        let mut out = match stored {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        };
        for (name, generates, space) in &self.embedders {
            let (embeddings, user) = match space {
                Some((space, user)) => (
                    index.store.vectors.embeddings(rtxn, *space, iid)?,
                    user.contains(iid),
                ),
                None => (Vec::new(), false),
            };
            out.insert(
                name.clone(),
                json!({ "embeddings": embeddings, "regenerate": *generates && !user }),
            );
        }
        Ok(Value::Object(out))
    }
}
