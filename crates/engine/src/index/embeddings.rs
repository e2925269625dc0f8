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

impl Index {
    /// The documents `rtxn` sees that a `_vectors` filter condition selects (see
    /// [`crate::filter::vectors`]); `Ok(Err(message))` when it names an embedder or fragment
    /// the settings do not have (Meilisearch's messages).
    pub(crate) fn vector_filter_docs(
        &self,
        rtxn: &heed::RoTxn,
        cond: &crate::filter::vectors::VectorCondition,
    ) -> Result<std::result::Result<RoaringBitmap, String>> {
        use crate::filter::vectors::VectorKind;
        let settings = self.settings(rtxn)?;
        let store = self.store();
        let configs = registry::configs(&settings)?;
        let registry = Registry::load(store, rtxn)?;
        let names: Vec<&String> = match &cond.embedder {
            Some(name) => match configs.iter().find(|(n, _)| n == name) {
                Some((n, _)) => vec![n],
                None => {
                    let mut available: Vec<String> =
                        configs.iter().map(|(n, _)| format!("`{n}`")).collect();
                    available.sort();
                    return Ok(Err(match available.is_empty() {
                        true => format!("The embedder `{name}` does not exist. This index does not have any configured embedders."),
                        false => format!("The embedder `{name}` does not exist. Available embedders are: {}.", available.join(", ")),
                    }));
                }
            },
            None => configs.iter().map(|(n, _)| n).collect(),
        };
        let mut out = RoaringBitmap::new();
        for name in names {
            let config = &configs.iter().find(|(n, _)| n == name).expect("listed").1;
            let indexing = match &config.source {
                embedders::Source::Composite { indexing, .. } => indexing.as_ref(),
                _ => config,
            };
            if let VectorKind::Fragment(fragment) = &cond.kind {
                let known: Vec<&String> = indexing
                    .fragments()
                    .map(|f| f.indexing.keys().collect())
                    .unwrap_or_default();
                if !known.contains(&fragment) {
                    return Ok(Err(match known.is_empty() {
                        true => format!("The fragment `{fragment}` does not exist on embedder `{name}`. This embedder does not have any configured fragments."),
                        false => format!(
                            "The fragment `{fragment}` does not exist on embedder `{name}`. Available fragments on this embedder are: {}.",
                            known.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
                        ),
                    }));
                }
            }
            let Some(entry) = registry.get(name) else {
                continue;
            };
            let (_, with_vectors) = store.vectors.counts(rtxn, entry.space())?;
            let user = user_vectors(store, rtxn, entry.id)?;
            out |= match &cond.kind {
                VectorKind::Any => with_vectors,
                VectorKind::UserProvided => user,
                VectorKind::Regenerate => with_vectors - user,
                VectorKind::DocumentTemplate if indexing.fragments().is_some() => {
                    RoaringBitmap::new()
                }
                VectorKind::DocumentTemplate => with_vectors - user,
                VectorKind::Fragment(fragment) => {
                    // Which fragments a document's embeddings came from is not stored: the
                    // documents are rendered again (the fragments they render now are those
                    // they were embedded from: a change to either embeds them again).
                    let fragments = indexing.fragments().expect("checked above");
                    let one = embedders::Fragments {
                        indexing: fragments
                            .indexing
                            .iter()
                            .filter(|(n, _)| *n == fragment)
                            .map(|(n, v)| (n.clone(), v.clone()))
                            .collect(),
                        search: Default::default(),
                    };
                    let render = embedders::fragment::IndexingFragments::new(&one)?;
                    let fields = self.fields_map().read().unwrap().clone();
                    let mut found = RoaringBitmap::new();
                    for iid in &(with_vectors - user) {
                        let Some(bytes) = store
                            .docs
                            .get(rtxn, &iid)
                            .map_err(crate::store::heed_error)?
                        else {
                            continue;
                        };
                        let doc = crate::codec::decode(bytes, &fields)?;
                        if !render.render(&doc).is_empty() {
                            found.insert(iid);
                        }
                    }
                    found
                }
            };
        }
        Ok(Ok(out))
    }
}
