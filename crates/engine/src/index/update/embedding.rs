//! The embeddings a batch writes: each document's ([`Batch::write_vectors`]: those it gives,
//! or generated), dropped with it ([`Batch::delete_vectors`], [`Batch::clear_vectors`]); and
//! the generated ones: what a source must embed, computed before anything of the op is
//! written, so a source that fails (a remote API down, a model missing) fails its task with
//! nothing half-written (see [`super::vectors`] for what a document gets).
//!
//! - A document addition ([`Batch::embed_payload`]) embeds the template text of the documents
//!   that give no embedding for a generating embedder: new documents, and existing ones whose
//!   rendered text changed (a stable hash of the last embedded text is kept per document and
//!   embedder) unless their embeddings are the user's.
//! - A settings update ([`Batch::plan_embedders`], [`Batch::embed_stored`]) checks the new
//!   embedders (templates, the binary-quantization rule, composite halves), embeds every stored
//!   document for a new source or one whose model or template changed, and only then changes
//!   the stored vectors ([`Batch::apply_embedders`]).

use std::collections::HashMap;
use std::hash::Hash;
use std::path::Path;

use api_types::{Code, Error, Result};
use embedders::{DocumentTemplate, EmbedderConfig, Embedding};
use roaring::RoaringBitmap;
use serde_json::{Map, Value};

use super::batch::Batch;
use super::vectors::{user_vectors, Embedded, Embedders, Generated};
use super::Method;
use crate::codec;
use crate::docid;
use crate::payload;
use crate::settings::Settings;
use crate::store::{heed_error, text_hash, text_key};
use crate::vectors::{parse, registry};

/// Texts embedded per call to a source (the source splits them into its own batches).
const EMBED_CHUNK: usize = 256;

/// What a source embeds for one document: its template's text, or the fragments it renders
/// (none is a document without embeddings for that source).
pub(super) enum Input {
    Text(String),
    Fragments(Vec<Value>),
}

impl Input {
    /// The stable hash kept per document and embedder: an unchanged input is not embedded
    /// again.
    fn hash(&self) -> u64 {
        match self {
            Input::Text(t) => text_hash(t),
            Input::Fragments(f) => text_hash(&Value::Array(f.clone()).to_string()),
        }
    }
}

/// What turns documents into one source's inputs: its template (a composite's indexing
/// embedder's), rendered over the searchable fields and cut to the byte limit, or its indexing
/// fragments. Built once per embedder and op.
enum Renderer {
    Template(DocumentTemplate, Option<Vec<String>>),
    Fragments(embedders::fragment::IndexingFragments),
}

impl Renderer {
    fn new(settings: &Settings, config: &EmbedderConfig) -> Result<Renderer> {
        let config = match &config.source {
            embedders::Source::Composite { indexing, .. } => indexing.as_ref(),
            _ => config,
        };
        if let Some(fragments) = config.fragments() {
            return Ok(Renderer::Fragments(
                embedders::fragment::IndexingFragments::new(fragments)?,
            ));
        }
        let template = DocumentTemplate::new(
            config.document_template.as_deref(),
            config.document_template_max_bytes,
        )?;
        Ok(Renderer::Template(
            template,
            settings.searchable().map(<[String]>::to_vec),
        ))
    }

    fn input(&self, doc: &Map<String, Value>) -> Result<Input> {
        match self {
            Renderer::Fragments(f) => Ok(Input::Fragments(f.render(doc))),
            Renderer::Template(template, searchable) => {
                let mut doc = doc.clone();
                doc.remove("_vectors");
                let text = template.render(&doc, &|field| {
                    searchable.as_ref().is_none_or(|s| {
                        s.iter()
                            .any(|a| a == field || field.starts_with(&format!("{a}.")))
                    })
                })?;
                Ok(Input::Text(text))
            }
        }
    }
}

impl Batch<'_, '_> {
    /// Embeds `queued` (the last input of a key wins) with `config`'s source: a text is one
    /// embedding, fragments one each.
    fn embed_inputs<K: Hash + Eq + Clone>(
        &self,
        name: &str,
        config: &EmbedderConfig,
        queued: Vec<(K, Input)>,
    ) -> Result<Embedded<K>> {
        let mut last: HashMap<K, usize> = HashMap::with_capacity(queued.len());
        for (i, (k, _)) in queued.iter().enumerate() {
            last.insert(k.clone(), i);
        }
        let queued: Vec<(K, Input)> = queued
            .into_iter()
            .enumerate()
            .filter(|(i, (k, _))| last[k] == *i)
            .map(|(_, q)| q)
            .collect();
        let embedder = crate::vectors::embedder(name, config)?;
        // Every piece to embed, with the rank of the key it belongs to.
        let mut texts: Vec<(usize, &str)> = Vec::new();
        let mut fragments: Vec<(usize, Value)> = Vec::new();
        for (i, (_, input)) in queued.iter().enumerate() {
            match input {
                Input::Text(t) => texts.push((i, t.as_str())),
                Input::Fragments(f) => fragments.extend(f.iter().map(|v| (i, v.clone()))),
            }
        }
        self.set_progress(|p| {
            p.step = "embedding documents";
            p.total = (texts.len() + fragments.len()) as u64;
            p.done = 0;
        });
        let mut vectors: Vec<Vec<Embedding>> = vec![Vec::new(); queued.len()];
        let mut dims = config.dimensions.unwrap_or(0);
        let mut take = |owner: &[usize], found: Vec<Embedding>| -> Result<()> {
            if found.len() != owner.len() {
                return Err(Error::new(
                    Code::VectorEmbeddingError,
                    format!("Error while generating embeddings: embedder `{name}` returned {} embeddings for {} inputs.", found.len(), owner.len()),
                ));
            }
            for (i, v) in owner.iter().zip(found) {
                if dims == 0 {
                    dims = v.len();
                }
                if v.len() != dims {
                    return Err(Error::new(
                        Code::VectorEmbeddingError,
                        format!("Error while generating embeddings: embedder `{name}` returned an embedding of {} dimensions, expected {dims}.", v.len()),
                    ));
                }
                vectors[*i].push(v);
            }
            Ok(())
        };
        for chunk in texts.chunks(EMBED_CHUNK) {
            let owner: Vec<usize> = chunk.iter().map(|(i, _)| *i).collect();
            let batch: Vec<&str> = chunk.iter().map(|(_, t)| *t).collect();
            take(&owner, embedder.embed(&batch)?)?;
            self.set_progress(|p| p.done += chunk.len() as u64);
        }
        for chunk in fragments.chunks(EMBED_CHUNK) {
            let owner: Vec<usize> = chunk.iter().map(|(i, _)| *i).collect();
            let batch: Vec<Value> = chunk.iter().map(|(_, v)| v.clone()).collect();
            take(&owner, embedder.embed_fragments(&batch)?)?;
            self.set_progress(|p| p.done += chunk.len() as u64);
        }
        let out = queued
            .into_iter()
            .zip(vectors)
            .map(|((k, input), v)| (k, (v, input.hash())))
            .collect();
        Ok((dims, out))
    }

    /// Before an addition writes anything: embeds what its documents need (see the module's
    /// documentation), keyed by external id.
    pub(super) fn embed_payload(
        &self,
        (settings, embedders): (&Settings, &Embedders),
        (file, method, pk): (&Path, Method, &str),
        keeps: &dyn Fn(&str) -> bool,
    ) -> Result<Generated<String>> {
        let (store, txn, state) = (&self.index.store, &self.txn, &self.state);
        let generating: Vec<&(String, EmbedderConfig)> = embedders
            .list
            .iter()
            .filter(|(_, c)| c.generates())
            .collect();
        let mut generated = Generated::new();
        if generating.is_empty() {
            return Ok(generated);
        }
        // Per generating embedder: its id, and the documents holding the user's embeddings.
        let mut known: Vec<Option<(u8, RoaringBitmap)>> = Vec::new();
        for (name, _) in &generating {
            known.push(match state.vectors.registry.get(name) {
                Some(e) => Some((e.id, user_vectors(store, txn, e.id)?)),
                None => None,
            });
        }
        let renderers: Vec<Renderer> = generating
            .iter()
            .map(|(_, c)| Renderer::new(settings, c))
            .collect::<Result<_>>()?;
        let mut queued: Vec<Vec<(String, Input)>> = Vec::new();
        queued.resize_with(generating.len(), Vec::new);
        payload::read_staged(file, |doc| {
            let ext = docid::document_id(&doc, pk)?;
            if !keeps(&ext) {
                return Ok(());
            }
            let existing = store.internal_id(txn, &ext)?;
            let full = match (existing, method) {
                (Some(iid), Method::Update) => {
                    match store.docs.get(txn, &iid).map_err(heed_error)? {
                        Some(bytes) => {
                            let mut merged = codec::decode(bytes, &state.fields)?;
                            merged.extend(doc);
                            merged
                        }
                        None => doc,
                    }
                }
                _ => doc,
            };
            for (i, (name, _)) in generating.iter().enumerate() {
                let supplied = parse::supplied(&full, name, &ext)?;
                if supplied.as_ref().is_some_and(|s| s.embeddings.is_some()) {
                    continue;
                }
                let regenerate = supplied.as_ref().is_some_and(|s| s.regenerate);
                let input = renderers[i].input(&full)?;
                if let (Some(iid), false, Some((id, user))) = (existing, regenerate, &known[i]) {
                    // The user's own embeddings stay; an unchanged text is not embedded again.
                    if user.contains(iid) {
                        continue;
                    }
                    let stored = store
                        .texts
                        .get(txn, &text_key(*id, iid))
                        .map_err(heed_error)?;
                    if stored == Some(input.hash()) {
                        continue;
                    }
                }
                queued[i].push((ext.clone(), input));
            }
            Ok(())
        })?;
        for ((name, config), inputs) in generating.into_iter().zip(queued) {
            if !inputs.is_empty() {
                generated.insert(name.clone(), self.embed_inputs(name, config, inputs)?);
            }
        }
        Ok(generated)
    }

    /// Writes the generated embeddings of document `iid` (one, or one per fragment it
    /// rendered: maybe none), with the hash of its input.
    pub(super) fn put_generated(
        &mut self,
        (name, config, dims): (&str, &EmbedderConfig, usize),
        (iid, vectors, hash): (u32, &[Embedding], u64),
    ) -> Result<()> {
        if dims == 0 {
            // Nothing was ever embedded and no dimensions are configured: nothing to write.
            return Ok(());
        }
        let (store, txn, state) = (&self.index.store, &mut self.txn, &mut self.state);
        // A source whose vectors changed length (another model) starts a new space.
        if let Some(old) = state.vectors.registry.get(name).copied() {
            if old.dimensions != dims {
                store.vectors.clear(txn, old.space())?;
                store.forget_texts(txn, old.id)?;
                state.vectors.user.insert(old.id, RoaringBitmap::new());
                state.vectors.registry.remove(name);
            }
        }
        let id = state.vectors.put(
            (store, txn),
            (name, dims, config.binary_quantized),
            iid,
            vectors,
        )?;
        store
            .texts
            .put(txn, &text_key(id, iid), &hash)
            .map_err(heed_error)?;
        state.vectors.user(store, txn, id)?.remove(iid);
        Ok(())
    }

    /// A settings update changing the embedders, before anything is written: checks the new
    /// ones and returns those whose source must embed the stored documents (new sources, and
    /// those whose source, model, template or dimensions changed).
    pub(super) fn plan_embedders(
        &self,
        before: &[(String, EmbedderConfig)],
        after: &[(String, EmbedderConfig)],
    ) -> Result<Vec<String>> {
        for (name, config) in after {
            if let Some(t) = &config.document_template {
                embedders::template::validate_setting(name, t)?;
            }
            if let Some(f) = config.fragments() {
                embedders::fragment::check(
                    f,
                    config.document_template.as_deref(),
                    config.dimensions,
                )?;
            }
            let old = before.iter().find(|(n, _)| n == name).map(|(_, c)| c);
            if old != Some(config) {
                embedders::rest_template::check_config(config)?;
            }
            let was_quantized = old.is_some_and(|o| o.binary_quantized)
                || self
                    .state
                    .vectors
                    .registry
                    .get(name)
                    .is_some_and(|e| e.quantized);
            if was_quantized && !config.binary_quantized {
                return Err(Error::new(
                    Code::InvalidSettingsEmbedders,
                    format!("`.embedders.{name}.binaryQuantized`: Cannot disable the binary quantization.\n - Note: Binary quantization is a lossy operation that cannot be reverted.\n - Hint: Add a new embedder that is non-quantized and regenerate the vectors."),
                ));
            }
            if old != Some(config) {
                crate::vectors::check_composite(name, config)?;
            }
        }
        let embeds_the_same = |old: &EmbedderConfig, new: &EmbedderConfig| {
            old.source == new.source
                && old.document_template == new.document_template
                && old.document_template_max_bytes == new.document_template_max_bytes
                && old.dimensions == new.dimensions
        };
        Ok(after
            .iter()
            .filter(|(_, new)| new.generates())
            .filter(|(name, new)| {
                !before
                    .iter()
                    .any(|(n, old)| n == name && embeds_the_same(old, new))
            })
            .map(|(name, _)| name.clone())
            .collect())
    }

    /// Embeds every stored document for each of `names` under `settings`, except those
    /// holding the user's own embeddings; writes nothing.
    pub(super) fn embed_stored(
        &self,
        settings: &Settings,
        names: &[String],
    ) -> Result<Generated<u32>> {
        let mut generated = Generated::new();
        if names.is_empty() {
            return Ok(generated);
        }
        let (store, txn, state) = (&self.index.store, &self.txn, &self.state);
        let configs = registry::configs(settings)?;
        for name in names {
            let Some((_, config)) = configs.iter().find(|(n, _)| n == name) else {
                continue;
            };
            let user = match state.vectors.registry.get(name) {
                Some(e) => user_vectors(store, txn, e.id)?,
                None => RoaringBitmap::new(),
            };
            let renderer = Renderer::new(settings, config)?;
            let mut queued: Vec<(u32, Input)> = Vec::new();
            for item in store.docs.iter(txn).map_err(heed_error)? {
                let (iid, bytes) = item.map_err(heed_error)?;
                if user.contains(iid) {
                    continue;
                }
                let doc = codec::decode(bytes, &state.fields)?;
                queued.push((iid, renderer.input(&doc)?));
            }
            if !queued.is_empty() {
                generated.insert(name.clone(), self.embed_inputs(name, config, queued)?);
            }
        }
        Ok(generated)
    }

    /// The settings update's changes to the stored vectors, once everything it needed was
    /// computed: the registry follows the new embedders (dropping or quantizing), then the
    /// stored documents' new embeddings are written.
    pub(super) fn apply_embedders(
        &mut self,
        before: &[(String, EmbedderConfig)],
        after: &[(String, EmbedderConfig)],
        generated: Generated<u32>,
    ) -> Result<()> {
        let (store, txn, state) = (&self.index.store, &mut self.txn, &mut self.state);
        let ids_before: Vec<u8> = state
            .vectors
            .registry
            .entries()
            .map(|(_, e)| e.id)
            .collect();
        state
            .vectors
            .registry
            .sync(&store.vectors, txn, before, after)?;
        for id in ids_before {
            if !state.vectors.registry.entries().any(|(_, e)| e.id == id) {
                state.vectors.user.insert(id, RoaringBitmap::new());
                store.forget_texts(txn, id)?;
            }
        }
        state.vectors.touched = true;
        for (name, (dims, found)) in generated {
            let Some((_, config)) = after.iter().find(|(n, _)| *n == name) else {
                continue;
            };
            for (iid, (vectors, hash)) in found {
                self.put_generated((&name, config, dims), (iid, &vectors, hash))?;
            }
        }
        Ok(())
    }
}

impl Batch<'_, '_> {
    /// Pass 2: writes the embeddings of document `iid` (`doc` as written, `_vectors`
    /// included): those it gives, or those `generated` holds for it (computed before anything
    /// of the op was written, see [`super::embedding`]).
    pub(super) fn write_vectors(
        &mut self,
        embedders: &Embedders,
        (iid, doc, doc_id): (u32, &Map<String, Value>, &str),
        generated: &Generated<String>,
    ) -> Result<()> {
        for (name, config) in &embedders.list {
            let supplied = parse::supplied(doc, name, doc_id)?;
            let regenerate = supplied.as_ref().is_some_and(|s| s.regenerate);
            match supplied.and_then(|s| s.embeddings) {
                Some(embeddings) => {
                    let (store, txn, state) = (&self.index.store, &mut self.txn, &mut self.state);
                    let dims = config
                        .dimensions
                        .or_else(|| state.vectors.registry.get(name).map(|e| e.dimensions))
                        .or_else(|| embeddings.first().map(Vec::len));
                    let Some(dims) = dims else {
                        // An opt-out before any vector fixed the dimensions: nothing to drop.
                        continue;
                    };
                    parse::check_dimensions(&embeddings, dims, name, doc_id)?;
                    let id = state.vectors.put(
                        (store, txn),
                        (name, dims, config.binary_quantized),
                        iid,
                        &embeddings,
                    )?;
                    let user = state.vectors.user(store, txn, id)?;
                    if regenerate && config.generates() {
                        user.remove(iid);
                    } else {
                        user.insert(iid);
                    }
                }
                None => {
                    if let Some((dims, found)) = generated.get(name) {
                        if let Some((vectors, hash)) = found.get(doc_id) {
                            self.put_generated((name, config, *dims), (iid, vectors, *hash))?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Drops every embedding of document `iid`.
    pub(super) fn delete_vectors(&mut self, iid: u32) -> Result<()> {
        let (store, txn, state) = (&self.index.store, &mut self.txn, &mut self.state);
        for (id, space) in state.vectors.spaces() {
            store.vectors.delete(txn, space, iid)?;
            store
                .texts
                .delete(txn, &text_key(id, iid))
                .map_err(heed_error)?;
            state.vectors.user(store, txn, id)?.remove(iid);
            state.vectors.touched = true;
        }
        Ok(())
    }

    /// Drops every embedding of every document (the documents were cleared).
    pub(super) fn clear_vectors(&mut self) -> Result<()> {
        let (store, txn, state) = (&self.index.store, &mut self.txn, &mut self.state);
        for (id, space) in state.vectors.spaces() {
            store.vectors.clear(txn, space)?;
            store.forget_texts(txn, id)?;
            state.vectors.user.insert(id, RoaringBitmap::new());
            state.vectors.touched = true;
        }
        Ok(())
    }
}
