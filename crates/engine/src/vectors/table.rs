//! A faster read path over the HNSW graphs hannoy stores: one table per committed version of
//! the `vectors` database, from item id to the bytes of its vector and to its decoded links, so
//! the walk finds each node by index instead of descending LMDB's B-tree (about 2.6 µs a node,
//! and a search visits some 1,900 nodes on 100k vectors) and decodes no bitmap.
//!
//! The walk is hannoy's (`Reader::nns`, HNSW search as in arXiv:1603.09320) with its rules:
//! greedy descent with one candidate on the upper layers, `max(ef, count)` on layer 0, the
//! allowed set applied only to what is kept. Where hannoy would do something else — a small
//! allowed set (its linear scan), or a walk that found fewer than `count` (its exhaustive
//! completion) — the table answers None and the caller asks hannoy's reader.
//!
//! The bytes stay valid because the table owns the read transaction it was built in: LMDB
//! does not reuse a page a live reader can see. The index drops the table when a batch
//! commits ([`crate::index`]), so no old transaction pins pages longer than a generation.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use api_types::{Error, Result};
use hannoy::internals::{Item, NodeCodec};
use hannoy::Distance;
use heed::types::Bytes;
use heed::{BytesDecode, RoTxn, WithoutTls};
use min_max_heap::MinMaxHeap;
use roaring::RoaringBitmap;

/// hannoy's threshold: with fewer allowed items than this, it compares them all.
const LINEAR_SCAN_BELOW: u64 = 1000;

/// How much of a node [`Graph::prefetch`] asks for: the header and the vector's start (the
/// hardware streams the rest once the distance reads it in order).
const PREFETCH_BYTES: usize = 256;

/// The modes of hannoy's keys (`[graph u16 BE][mode][item u32 BE][layer]`).
const MODE_METADATA: u8 = 0;
const MODE_LINKS: u8 = 2;
const MODE_ITEM: u8 = 3;

/// A distance ordered as hannoy orders them (by its bits: distances are never negative), so
/// that ties break the same way in the same heaps.
#[derive(Clone, Copy)]
struct Dist(f32);
impl PartialEq for Dist {
    fn eq(&self, o: &Self) -> bool {
        self.0.to_bits() == o.0.to_bits()
    }
}
impl Eq for Dist {}
impl PartialOrd for Dist {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Dist {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.to_bits().cmp(&o.0.to_bits())
    }
}

/// Where a node's links are in [`Graph::links`]: (start, length).
type Span = (u32, u32);
const NO_LINKS: Span = (u32::MAX, 0);

/// One graph: its entry points and top layer (from hannoy's metadata), every item's stored
/// node, and every node's links by layer.
#[derive(Default)]
struct Graph {
    entry_points: Vec<u32>,
    max_level: usize,
    items: RoaringBitmap,
    /// By item id: the stored item node (empty when absent).
    vectors: Vec<&'static [u8]>,
    /// Every node's links, in ascending order as hannoy's bitmaps give them.
    links: Vec<u32>,
    /// Layer 0 spans by item id ([`NO_LINKS`] when absent); the upper layers' by (item, layer).
    links0: Vec<Span>,
    upper: HashMap<(u32, u8), Span>,
}

/// The graphs of one committed version of the `vectors` database.
pub struct GraphTables {
    graphs: HashMap<u16, Graph>,
    // Declared last: dropped after the slices that point into its pages.
    _txn: Held,
}

/// The read transaction the tables point into, never used again once built.
struct Held(#[allow(dead_code)] RoTxn<'static, WithoutTls>);
// SAFETY: the transaction is only kept alive (and finally dropped, i.e. aborted) here; no
// LMDB call is made on it after the build, from any thread.
unsafe impl Sync for Held {}
unsafe impl Send for Held {}

fn broken(what: &str) -> Error {
    Error::internal(format!("vector store: unreadable {what} in a graph"))
}

impl GraphTables {
    /// Reads every graph of `db` as `txn` sees it, and keeps `txn`.
    pub fn build(
        txn: RoTxn<'static, WithoutTls>,
        db: hannoy::Database<hannoy::distances::Cosine>,
    ) -> Result<GraphTables> {
        let raw = db.remap_types::<Bytes, Bytes>();
        let mut graphs: HashMap<u16, Graph> = HashMap::new();
        {
            // SAFETY: the slices read here live in pages `txn` keeps visible; `txn` moves into
            // the returned value, which drops the slices (field order) before it.
            let txn_ref: &'static RoTxn<'static, WithoutTls> = unsafe { &*(&txn as *const _) };
            for entry in raw.iter(txn_ref).map_err(api_types::heed_error)? {
                let (k, v) = entry.map_err(api_types::heed_error)?;
                if k.len() != 8 {
                    return Err(broken("key"));
                }
                let graph = u16::from_be_bytes([k[0], k[1]]);
                let item = u32::from_be_bytes([k[3], k[4], k[5], k[6]]);
                let layer = k[7];
                let g = graphs.entry(graph).or_default();
                match k[2] {
                    MODE_METADATA if item == 0 => read_metadata(g, v)?,
                    MODE_LINKS => {
                        let span = g.push_links(v)?;
                        match layer {
                            0 => put(&mut g.links0, item, span, NO_LINKS),
                            _ => {
                                g.upper.insert((item, layer), span);
                            }
                        }
                    }
                    MODE_ITEM => put(&mut g.vectors, item, v, &[]),
                    _ => {}
                }
            }
        }
        Ok(GraphTables {
            graphs,
            _txn: Held(txn),
        })
    }

    /// The `count` items of `graph` nearest to `vector` among `candidates` (all when None),
    /// as hannoy's reader finds them with `ef`; None where that reader must answer instead.
    pub fn nearest<D: Distance>(
        &self,
        graph: u16,
        vector: &[f32],
        candidates: Option<&RoaringBitmap>,
        count: usize,
        ef: usize,
    ) -> Result<Option<Vec<(u32, f32)>>> {
        let Some(g) = self.graphs.get(&graph) else {
            return Ok(None);
        };
        if g.entry_points.is_empty() || count == 0 {
            return Ok(None);
        }
        if let Some(c) = candidates {
            if g.items.intersection_len(c) < LINEAR_SCAN_BELOW {
                return Ok(None);
            }
        }
        let query = Item::<D>::new(vector.to_vec());
        let mut eps = g.entry_points.clone();
        let mut path = RoaringBitmap::new();
        for level in (1..=g.max_level).rev() {
            let found = g.visit(&query, &eps, level, 1, None, &mut path)?;
            let Some(&(_, closest)) = found.peek_min() else {
                return Ok(None);
            };
            eps = vec![closest];
        }
        path.clear();
        let found = g.visit(&query, &eps, 0, ef.max(count), candidates, &mut path)?;
        if found.len() < count {
            return Ok(None);
        }
        Ok(Some(
            found
                .into_vec_asc()
                .into_iter()
                .take(count)
                .map(|(Dist(d), i)| (i, d))
                .collect(),
        ))
    }
}

fn put<T: Copy>(table: &mut Vec<T>, item: u32, value: T, absent: T) {
    let i = item as usize;
    if table.len() <= i {
        table.resize(i + 1, absent);
    }
    table[i] = value;
}

/// hannoy's metadata: the distance's name and a NUL, dimensions (u32 BE), the items bitmap's
/// size (u32 BE) and bytes, then the entry points (u32, native order) and the top layer.
fn read_metadata(g: &mut Graph, bytes: &[u8]) -> Result<()> {
    let nul = bytes
        .iter()
        .position(|b| *b == 0)
        .ok_or_else(|| broken("metadata"))?;
    let rest = bytes.get(nul + 1..).ok_or_else(|| broken("metadata"))?;
    let size = rest
        .get(4..8)
        .map(|s| u32::from_be_bytes(s.try_into().expect("4 bytes")) as usize)
        .ok_or_else(|| broken("metadata"))?;
    let items = rest.get(8..8 + size).ok_or_else(|| broken("metadata"))?;
    g.items = RoaringBitmap::deserialize_from(items).map_err(|_| broken("metadata"))?;
    let rest = &rest[8 + size..];
    if let Some((&top, points)) = rest.split_last() {
        g.max_level = top as usize;
        g.entry_points = points
            .chunks_exact(4)
            .map(|c| u32::from_ne_bytes(c.try_into().expect("4 bytes")))
            .collect();
    }
    Ok(())
}

impl Graph {
    fn item<D: Distance>(&self, id: u32) -> Result<Item<'static, D>> {
        let bytes = self.vectors.get(id as usize).copied().unwrap_or(&[]);
        NodeCodec::<D>::bytes_decode(bytes)
            .ok()
            .and_then(|node| node.item())
            .ok_or_else(|| broken("item"))
    }

    /// Starts loading the first cache lines of `id`'s stored node (a hint: no effect on
    /// results, nothing on other targets).
    #[inline]
    fn prefetch(&self, id: u32) {
        #[cfg(target_arch = "x86_64")]
        if let Some(bytes) = self.vectors.get(id as usize) {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            for line in (0..bytes.len().min(PREFETCH_BYTES)).step_by(64) {
                // SAFETY: a prefetch never faults, and `line` is within the node's bytes.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(bytes.as_ptr().add(line).cast()) };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = id;
    }

    /// Decodes one stored links node into [`Self::links`]. The links format does not depend
    /// on the distance, so the Cosine codec reads binary-quantized graphs' links too.
    fn push_links(&mut self, bytes: &[u8]) -> Result<Span> {
        let node = NodeCodec::<hannoy::distances::Cosine>::bytes_decode(bytes)
            .map_err(|_| broken("links"))?;
        let links = node.links().ok_or_else(|| broken("links"))?.links;
        let start = self.links.len();
        self.links.extend(links.iter());
        let span = u32::try_from(start)
            .ok()
            .zip(u32::try_from(self.links.len() - start).ok());
        span.filter(|&s| s != NO_LINKS)
            .ok_or_else(|| broken("links"))
    }

    fn links(&self, id: u32, level: usize) -> Result<&[u32]> {
        let span = match level {
            0 => self.links0.get(id as usize).copied(),
            _ => self.upper.get(&(id, level as u8)).copied(),
        };
        let (start, len) = span
            .filter(|&s| s != NO_LINKS)
            .ok_or_else(|| broken("links"))?;
        Ok(&self.links[start as usize..start as usize + len as usize])
    }

    /// One layer's beam search from `eps`, keeping the `ef` nearest (of `candidates`).
    fn visit<D: Distance>(
        &self,
        query: &Item<D>,
        eps: &[u32],
        level: usize,
        ef: usize,
        candidates: Option<&RoaringBitmap>,
        path: &mut RoaringBitmap,
    ) -> Result<MinMaxHeap<(Dist, u32)>> {
        let mut queue = BinaryHeap::new();
        let mut res = MinMaxHeap::with_capacity(ef);
        let mut fresh = Vec::new();
        for &ep in eps {
            let d = D::distance(query, &self.item::<D>(ep)?);
            queue.push((Reverse(Dist(d)), ep));
            path.insert(ep);
            if candidates.is_none_or(|c| c.contains(ep)) {
                res.push((Dist(d), ep));
            }
        }
        while let Some(&(Reverse(Dist(f)), _)) = queue.peek() {
            let f_max = res.peek_max().map(|&(Dist(d), _)| d).unwrap_or(f32::MAX);
            if f > f_max {
                break;
            }
            let (_, c) = queue.pop().expect("peeked");
            // The unseen neighbours first, each one's vector asked of memory ahead of its
            // distance: the loads overlap instead of stalling one by one. Same order, same
            // `f_max`, so the same result as one pass.
            fresh.clear();
            for &point in self.links(c, level)? {
                if path.insert(point) {
                    self.prefetch(point);
                    fresh.push(point);
                }
            }
            for &point in &fresh {
                let d = D::distance(query, &self.item::<D>(point)?);
                if res.len() < ef || d < f_max {
                    queue.push((Reverse(Dist(d)), point));
                    if candidates.is_some_and(|c| !c.contains(point)) {
                        continue;
                    }
                    if res.len() == ef {
                        let _ = res.push_pop_max((Dist(d), point));
                    } else {
                        res.push((Dist(d), point));
                    }
                }
            }
        }
        Ok(res)
    }
}
