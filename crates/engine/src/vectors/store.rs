//! The vectors of one index: HNSW graphs (hannoy) in the index's LMDB environment.
//!
//! One LMDB database, `vectors`, holds every graph. hannoy addresses a graph by a 16-bit
//! index: an embedder's id (0..=255, see [`super::registry`]) in the high byte, and in the low
//! byte the rank of the embedding within its document, since a document may carry several
//! embeddings for one embedder and hannoy keeps one vector per item: a document's first
//! embedding lives in graph `id << 8`, its second in `id << 8 | 1`, and so on. Items are keyed
//! by the document's internal id. A search asks each graph of the embedder and keeps each
//! document's best similarity.
//!
//! Writes happen in the batch's write transaction ([`crate::index`]'s commit protocol): the
//! graphs are rebuilt incrementally before the transaction commits, so the documents and their
//! vectors are durable together or not at all.

use api_types::{Error, Result};
use hannoy::distances::{Cosine, Hamming};
use hannoy::{Distance, Reader, Writer};
use heed::{Env, RoTxn, RwTxn, WithoutTls};
use rand::rngs::StdRng;
use rand::SeedableRng;
use roaring::RoaringBitmap;

use super::table::GraphTables;

/// hannoy's database of cosine vectors; the binary-quantized graphs (1 bit per dimension,
/// compared by Hamming distance as Meilisearch does) are read through the same database with
/// the other codec.
type CosineDb = hannoy::Database<Cosine>;
type QuantizedDb = hannoy::Database<Hamming>;

/// Meilisearch's graph parameters: M = 16 links per node, 32 on layer 0, ef_construction 125.
const M: usize = 16;
const M0: usize = 32;
const EF_CONSTRUCTION: usize = 125;

/// Candidates kept while walking the graph. On the bench's 100k MiniLM vectors (200 queries,
/// `bench/vectors.js`), the walk by 8-bit codes (see [`super::table`]) reaches recall@10
/// 0.9855 with 300, 0.9850 with 250 and 0.9795 with 140, where Meilisearch reaches 0.985;
/// with 300 it costs about two thirds of the former 32-bit walk with 140 (recall 0.9785).
const EF_SEARCH: usize = 300;

/// At most this many embeddings per document and embedder (one graph each).
pub const MAX_EMBEDDINGS_PER_DOCUMENT: usize = 256;

/// Where one embedder's graphs are: its id, whether its vectors are binary quantized, and how
/// many graphs it uses (the most embeddings any of its documents had).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    pub id: u8,
    pub quantized: bool,
    pub graphs: usize,
}

impl Space {
    fn graph(self, rank: usize) -> u16 {
        (self.id as u16) << 8 | rank as u16
    }
}

#[derive(Clone, Copy)]
pub struct VectorStore {
    db: CosineDb,
}

fn hannoy_error(e: hannoy::Error) -> Error {
    match e {
        hannoy::Error::Heed(h) => api_types::heed_error(h),
        hannoy::Error::Io(io) => api_types::heed_error(heed::Error::Io(io)),
        other => Error::internal(format!("vector store: {other}")),
    }
}

impl VectorStore {
    /// The bytes of the pages the vectors' database uses.
    pub fn used_bytes(&self, rtxn: &heed::RoTxn<WithoutTls>) -> Result<u64> {
        let stat = self.db.stat(rtxn).map_err(api_types::heed_error)?;
        Ok(crate::store::stat_bytes(&stat))
    }

    pub fn open(env: &Env<WithoutTls>, wtxn: &mut RwTxn) -> Result<VectorStore> {
        let db = env
            .create_database(wtxn, Some("vectors"))
            .map_err(api_types::heed_error)?;
        Ok(VectorStore { db })
    }

    /// The database of an existing store, for a read-only opening (`None`: not created yet).
    pub fn open_existing(
        env: &Env<WithoutTls>,
        rtxn: &RoTxn<WithoutTls>,
    ) -> Result<Option<VectorStore>> {
        let db = env
            .open_database(rtxn, Some("vectors"))
            .map_err(api_types::heed_error)?;
        Ok(db.map(|db| VectorStore { db }))
    }

    /// The graphs as `txn` sees them, for [`Self::nearest`]'s faster walk (see [`super::table`]).
    pub fn tables(&self, txn: RoTxn<'static, WithoutTls>) -> Result<GraphTables> {
        GraphTables::build(txn, self.db)
    }

    fn quantized(&self) -> QuantizedDb {
        self.db.remap_data_type()
    }

    /// Replaces the embeddings of document `iid` in `space` with `embeddings` (all of
    /// `dimensions` values, at most [`MAX_EMBEDDINGS_PER_DOCUMENT`]; checked by the caller).
    /// `space.graphs` grows when the document has more embeddings than any before it.
    pub fn put(
        &self,
        wtxn: &mut RwTxn,
        space: &mut Space,
        dimensions: usize,
        iid: u32,
        embeddings: &[Vec<f32>],
    ) -> Result<()> {
        self.delete(wtxn, *space, iid)?;
        let embeddings = &embeddings[..embeddings.len().min(MAX_EMBEDDINGS_PER_DOCUMENT)];
        space.graphs = space.graphs.max(embeddings.len());
        let space = *space;
        for (rank, e) in embeddings.iter().enumerate() {
            if space.quantized {
                Writer::new(self.quantized(), space.graph(rank), dimensions)
                    .add_item(wtxn, iid, e)
                    .map_err(hannoy_error)?;
            } else {
                Writer::new(self.db, space.graph(rank), dimensions)
                    .add_item(wtxn, iid, e)
                    .map_err(hannoy_error)?;
            }
        }
        Ok(())
    }

    /// Removes every embedding of `iid` in `space`.
    pub fn delete(&self, wtxn: &mut RwTxn, space: Space, iid: u32) -> Result<()> {
        for rank in 0..space.graphs {
            let removed = if space.quantized {
                Writer::new(self.quantized(), space.graph(rank), 0)
                    .del_item(wtxn, iid)
                    .map_err(hannoy_error)?
            } else {
                Writer::new(self.db, space.graph(rank), 0)
                    .del_item(wtxn, iid)
                    .map_err(hannoy_error)?
            };
            if !removed {
                break;
            }
        }
        Ok(())
    }

    /// Drops every graph of `space`.
    pub fn clear(&self, wtxn: &mut RwTxn, space: Space) -> Result<()> {
        for rank in 0..space.graphs {
            if space.quantized {
                Writer::new(self.quantized(), space.graph(rank), 0)
                    .clear(wtxn)
                    .map_err(hannoy_error)?;
            } else {
                Writer::new(self.db, space.graph(rank), 0)
                    .clear(wtxn)
                    .map_err(hannoy_error)?;
            }
        }
        Ok(())
    }

    /// Rebuilds the graphs of `space` that changed since their last build.
    pub fn build(&self, wtxn: &mut RwTxn, space: Space, dimensions: usize) -> Result<()> {
        let mut rng = StdRng::seed_from_u64(42);
        for rank in 0..space.graphs {
            let graph = space.graph(rank);
            if space.quantized {
                build_one(wtxn, self.quantized(), graph, dimensions, &mut rng)?;
            } else {
                build_one(wtxn, self.db, graph, dimensions, &mut rng)?;
            }
        }
        Ok(())
    }

    /// Rewrites the vectors of `space` as binary quantized (irreversible); the graphs are
    /// rebuilt.
    pub fn quantize(&self, wtxn: &mut RwTxn, space: &mut Space, dimensions: usize) -> Result<()> {
        if space.quantized {
            return Ok(());
        }
        for rank in 0..space.graphs {
            Writer::new(self.db, space.graph(rank), dimensions)
                .prepare_changing_distance::<Hamming>(wtxn)
                .map_err(hannoy_error)?;
        }
        space.quantized = true;
        self.build(wtxn, *space, dimensions)
    }

    /// The embeddings of `iid` in `space`, in the order they were given.
    pub fn embeddings(&self, rtxn: &RoTxn, space: Space, iid: u32) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::new();
        for rank in 0..space.graphs {
            let v = if space.quantized {
                item_vector(rtxn, self.quantized(), space.graph(rank), iid)?
            } else {
                item_vector(rtxn, self.db, space.graph(rank), iid)?
            };
            match v {
                Some(v) => out.push(v),
                None => break,
            }
        }
        Ok(out)
    }

    /// How many embeddings `space` holds, and the documents that have at least one.
    pub fn counts(&self, rtxn: &RoTxn, space: Space) -> Result<(u64, RoaringBitmap)> {
        let mut total = 0;
        let mut docs = RoaringBitmap::new();
        for rank in 0..space.graphs {
            let items = if space.quantized {
                items(rtxn, self.quantized(), space.graph(rank))?
            } else {
                items(rtxn, self.db, space.graph(rank))?
            };
            let Some(items) = items else { continue };
            total += items.len();
            docs |= items;
        }
        Ok((total, docs))
    }

    /// The `count` documents of `candidates` nearest to `vector`, with their similarity
    /// `(1 + cos) / 2`, best first (ties by internal id); a document's best embedding counts.
    pub fn nearest(
        &self,
        rtxn: &RoTxn,
        tables: Option<&GraphTables>,
        space: Space,
        vector: &[f32],
        candidates: Option<&RoaringBitmap>,
        count: usize,
    ) -> Result<Vec<(u32, f32)>> {
        let queries = (0..space.graphs).map(|rank| (rank, vector));
        self.best_of(rtxn, tables, space, queries, candidates, count)
    }

    /// The documents nearest to `iid`, as [`Self::nearest`] but as Meilisearch's similar
    /// documents are: each embedding of `iid` against the others' embeddings of the same rank.
    pub fn nearest_to_item(
        &self,
        rtxn: &RoTxn,
        space: Space,
        iid: u32,
        candidates: Option<&RoaringBitmap>,
        count: usize,
    ) -> Result<Vec<(u32, f32)>> {
        let own = self.embeddings(rtxn, space, iid)?;
        let queries = own.iter().enumerate().map(|(rank, v)| (rank, v.as_slice()));
        self.best_of(rtxn, None, space, queries, candidates, count)
    }

    /// The best similarity of each document found by searching graph `rank` for its vector,
    /// for each `(rank, vector)`.
    fn best_of<'v>(
        &self,
        rtxn: &RoTxn,
        tables: Option<&GraphTables>,
        space: Space,
        queries: impl Iterator<Item = (usize, &'v [f32])>,
        candidates: Option<&RoaringBitmap>,
        count: usize,
    ) -> Result<Vec<(u32, f32)>> {
        let mut best: std::collections::HashMap<u32, f32> = std::collections::HashMap::new();
        for (rank, vector) in queries {
            let graph = space.graph(rank);
            let found = match space.quantized {
                true => search_graph(
                    rtxn,
                    self.quantized(),
                    tables,
                    graph,
                    vector,
                    candidates,
                    count,
                )?,
                false => search_graph(rtxn, self.db, tables, graph, vector, candidates, count)?,
            };
            let Some(found) = found else { continue };
            for (iid, distance) in found {
                let similarity = 1.0 - distance;
                let e = best.entry(iid).or_insert(similarity);
                if similarity > *e {
                    *e = similarity;
                }
            }
        }
        let mut out: Vec<(u32, f32)> = best.into_iter().collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.truncate(count);
        Ok(out)
    }
}

/// Builds one graph if it has pending changes (or was never built).
fn build_one<D: Distance>(
    wtxn: &mut RwTxn,
    db: hannoy::Database<D>,
    graph: u16,
    dimensions: usize,
    rng: &mut StdRng,
) -> Result<()> {
    let writer = Writer::new(db, graph, dimensions);
    if writer.need_build(wtxn).map_err(hannoy_error)? {
        writer
            .builder(rng)
            .ef_construction(EF_CONSTRUCTION)
            .build::<M, M0>(wtxn)
            .map_err(hannoy_error)?;
    }
    Ok(())
}

fn open_reader<D: Distance>(
    rtxn: &RoTxn,
    db: hannoy::Database<D>,
    graph: u16,
) -> Result<Option<Reader<D>>> {
    match Reader::open(rtxn, graph, db) {
        Ok(r) => Ok(Some(r)),
        Err(hannoy::Error::MissingMetadata(_)) => Ok(None),
        Err(e) => Err(hannoy_error(e)),
    }
}

fn item_vector<D: Distance>(
    rtxn: &RoTxn,
    db: hannoy::Database<D>,
    graph: u16,
    iid: u32,
) -> Result<Option<Vec<f32>>> {
    match open_reader(rtxn, db, graph)? {
        Some(r) => r.item_vector(rtxn, iid).map_err(hannoy_error),
        None => Ok(None),
    }
}

fn items<D: Distance>(
    rtxn: &RoTxn,
    db: hannoy::Database<D>,
    graph: u16,
) -> Result<Option<RoaringBitmap>> {
    Ok(open_reader(rtxn, db, graph)?.map(|r| r.item_ids().clone()))
}

/// One graph's nearest, by the table's walk when `tables` can answer, else by hannoy's reader.
fn search_graph<D: Distance>(
    rtxn: &RoTxn,
    db: hannoy::Database<D>,
    tables: Option<&GraphTables>,
    graph: u16,
    vector: &[f32],
    candidates: Option<&RoaringBitmap>,
    count: usize,
) -> Result<Option<Vec<(u32, f32)>>> {
    let ef = count.max(EF_SEARCH);
    if let Some(t) = tables {
        if let Some(found) = t.nearest::<D>(graph, vector, candidates, count, ef)? {
            return Ok(Some(found));
        }
    }
    nns(rtxn, db, graph, vector, candidates, count)
}

fn nns<D: Distance>(
    rtxn: &RoTxn,
    db: hannoy::Database<D>,
    graph: u16,
    vector: &[f32],
    candidates: Option<&RoaringBitmap>,
    count: usize,
) -> Result<Option<Vec<(u32, f32)>>> {
    let Some(reader) = open_reader(rtxn, db, graph)? else {
        return Ok(None);
    };
    if count == 0 || reader.item_ids().is_empty() {
        return Ok(Some(Vec::new()));
    }
    let mut query = reader.nns(count);
    query.ef_search(count.max(EF_SEARCH));
    if let Some(c) = candidates {
        query.candidates(c);
    }
    let found = query.by_vector(rtxn, vector).map_err(hannoy_error)?;
    Ok(Some(found.into_nns()))
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::store::Store;

    const DIMS: usize = 24;

    fn random_vector(rng: &mut StdRng) -> Vec<f32> {
        (0..DIMS).map(|_| rng.gen_range(-1.0f32..1.0)).collect()
    }

    /// Writes `ids` with random vectors (and deletes `gone`) in one batch, then builds.
    fn batch(
        store: &Store,
        space: &mut Space,
        ids: std::ops::Range<u32>,
        gone: &[u32],
        rng: &mut StdRng,
    ) {
        let mut wtxn = store.write().unwrap();
        for iid in ids {
            let v = random_vector(rng);
            store
                .vectors
                .put(&mut wtxn, space, DIMS, iid, &[v])
                .unwrap();
        }
        for &iid in gone {
            store.vectors.delete(&mut wtxn, *space, iid).unwrap();
        }
        store.vectors.build(&mut wtxn, *space, DIMS).unwrap();
        wtxn.commit().unwrap();
    }

    /// The table walk answers for the plain search and a large allowed set (hannoy's reader
    /// for a small one). On binary-quantized graphs its answers are hannoy's reader's; on
    /// cosine graphs, which it walks by their 8-bit codes, every distance it gives is the
    /// exact one and it finds at least 97% of what hannoy's reader finds (returns that share).
    fn same_as_hannoy(store: &Store, space: Space, rng: &mut StdRng) -> f64 {
        let rtxn = store.read().unwrap();
        let tables = store.vectors.tables(store.static_read().unwrap()).unwrap();
        let half: RoaringBitmap = (0..4000).filter(|i| i % 2 == 0).collect();
        let few: RoaringBitmap = (0..300).collect();
        let (mut found, mut wanted) = (0usize, 0usize);
        for q in 0..40 {
            let query = random_vector(rng);
            for (candidates, walked) in [(None, true), (Some(&half), true), (Some(&few), false)] {
                let count = 1 + q % 20;
                let graph = space.graph(0);
                let ef = count.max(EF_SEARCH);
                let table = match space.quantized {
                    true => tables
                        .nearest::<Hamming>(graph, &query, candidates, count, ef)
                        .unwrap(),
                    false => tables
                        .nearest::<Cosine>(graph, &query, candidates, count, ef)
                        .unwrap(),
                };
                assert_eq!(table.is_some(), walked, "which path answers (query {q})");
                let hannoy = match space.quantized {
                    true => nns(
                        &rtxn,
                        store.vectors.quantized(),
                        graph,
                        &query,
                        candidates,
                        count,
                    ),
                    false => nns(&rtxn, store.vectors.db, graph, &query, candidates, count),
                };
                let (Some(table), Some(hannoy)) = (table, hannoy.unwrap()) else {
                    continue;
                };
                if space.quantized {
                    assert_eq!(table, hannoy, "query {q}");
                    continue;
                }
                assert_eq!(table.len(), hannoy.len(), "query {q}");
                for (id, d) in &table {
                    let v = store
                        .vectors
                        .embeddings(&rtxn, space, *id)
                        .unwrap()
                        .remove(0);
                    let exact = <Cosine as Distance>::distance(
                        &hannoy::internals::Item::new(query.clone()),
                        &hannoy::internals::Item::new(v),
                    );
                    assert_eq!(d.to_bits(), exact.to_bits(), "query {q}, item {id}");
                    wanted += 1;
                    found += hannoy.iter().any(|(h, _)| h == id) as usize;
                }
                assert!(
                    table
                        .windows(2)
                        .all(|w| (w[0].1, w[0].0) <= (w[1].1, w[1].0)),
                    "nearest first (query {q})"
                );
            }
        }
        let share = found as f64 / wanted.max(1) as f64;
        assert!(
            space.quantized || share >= 0.97,
            "found {share} of hannoy's"
        );
        share
    }

    #[test]
    fn the_table_walk_finds_what_hannoys_reader_finds() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut rng = StdRng::seed_from_u64(7);
        let mut space = Space {
            id: 0,
            quantized: false,
            graphs: 0,
        };
        batch(&store, &mut space, 0..2500, &[], &mut rng);
        // A second batch links new nodes into the graph and removes some.
        batch(
            &store,
            &mut space,
            2500..4000,
            &[3, 10, 2600, 999],
            &mut rng,
        );
        let share = same_as_hannoy(&store, space, &mut rng);
        eprintln!("the walk by codes found {share} of what hannoy's reader found");

        let mut wtxn = store.write().unwrap();
        store.vectors.quantize(&mut wtxn, &mut space, DIMS).unwrap();
        wtxn.commit().unwrap();
        assert!(space.quantized);
        same_as_hannoy(&store, space, &mut rng);
    }
}
