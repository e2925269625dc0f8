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
//! Cosine graphs are walked by an 8-bit copy of their vectors ([`Codes`], a quarter of the
//! memory to fetch per node and a cheaper product), and the best of the nodes the walk keeps
//! are then compared exactly: the similarities answered are hannoy's, only which nodes the
//! walk reaches may differ a little (the store's `EF_SEARCH` is set so recall does not drop).
//! Binary-quantized graphs are walked as hannoy walks them.
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
    /// hannoy's name of the graph's distance, and its dimensions (from its metadata).
    distance: String,
    dimensions: usize,
    /// Cosine graphs: every vector scaled to 8 bits (see [`Codes`]).
    codes: Option<Codes>,
}

/// Every vector of a cosine graph as 8-bit integers, contiguous by item id: unit length
/// scaled by 127. The walk compares these (a quarter of the bytes to fetch from memory and a
/// cheaper product); the nodes it keeps are then compared exactly, so the similarities
/// answered are hannoy's and only which nodes the walk reaches may differ slightly.
struct Codes {
    dimensions: usize,
    bytes: Vec<i8>,
}

/// The scale of [`Codes`]: a unit vector's components times this, rounded.
const CODE_SCALE: f32 = 127.0;

/// How many of the nodes a walk by codes keeps are compared exactly: `RERANK_PER_RESULT` per
/// result asked, at least `RERANK_AT_LEAST`. On 100k MiniLM vectors, recall@10 is the same as
/// comparing all 300 kept (the codes misplace a node by a few ranks, not by dozens).
const RERANK_PER_RESULT: usize = 4;
const RERANK_AT_LEAST: usize = 40;

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
        for g in graphs.values_mut() {
            if g.distance == hannoy::distances::Cosine::name() && g.dimensions > 0 {
                g.codes = Some(g.codes()?);
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
        let exact = |id: u32| Ok(D::distance(&query, &g.item::<D>(id)?));
        let found = match g.codes.as_ref().filter(|_| D::name() == g.distance) {
            Some(codes) => {
                let q = quantize(vector);
                let approx = |id: u32| Ok(codes.distance(&q, id));
                let mut kept =
                    match g.walk(approx, |id| codes.prefetch(id), ef, count, candidates)? {
                        Some(kept) => kept,
                        None => return Ok(None),
                    };
                // The kept nodes compared exactly, in hannoy's order.
                kept.truncate(count.saturating_mul(RERANK_PER_RESULT).max(RERANK_AT_LEAST));
                for (d, id) in kept.iter_mut() {
                    g.prefetch(*id);
                    *d = Dist(exact(*id)?);
                }
                kept.sort_unstable();
                kept
            }
            None => match g.walk(exact, |id| g.prefetch(id), ef, count, candidates)? {
                Some(kept) => kept,
                None => return Ok(None),
            },
        };
        Ok(Some(
            found
                .into_iter()
                .take(count)
                .map(|(Dist(d), i)| (i, d))
                .collect(),
        ))
    }
}

/// `vector` as [`Codes`] holds them.
fn quantize(vector: &[f32]) -> Vec<i8> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    let scale = if norm > f32::EPSILON {
        CODE_SCALE / norm
    } else {
        0.0
    };
    vector
        .iter()
        .map(|x| (x * scale).round().clamp(-CODE_SCALE, CODE_SCALE) as i8)
        .collect()
}

impl Codes {
    fn of(&self, id: u32) -> &[i8] {
        let start = id as usize * self.dimensions;
        self.bytes
            .get(start..start + self.dimensions)
            .unwrap_or(&[])
    }

    /// hannoy's cosine distance, `(1 − cos) / 2`, as the codes give it.
    fn distance(&self, query: &[i8], id: u32) -> f32 {
        let cos = dot_i8(query, self.of(id)) as f32 / (CODE_SCALE * CODE_SCALE);
        ((1.0 - cos) * 0.5).max(0.0)
    }

    #[inline]
    fn prefetch(&self, id: u32) {
        #[cfg(target_arch = "x86_64")]
        {
            let bytes = self.of(id);
            for line in (0..bytes.len()).step_by(64) {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                // SAFETY: a prefetch never faults, and `line` is within the codes' bytes.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(bytes.as_ptr().add(line).cast()) };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = id;
    }
}

/// The dot product of two code vectors (AVX2 where the processor has it).
fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked above.
        return unsafe { dot_i8_avx2(a, b) };
    }
    dot_i8_plain(a, b)
}

/// 32 codes at a time: `|a| · (b · sign a)` multiplies unsigned by signed bytes, adding
/// pairs into 16 bits (at most 2 · 127 · 127, no saturation as codes stay within ±127),
/// then pairs of those into 32 bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_i8_avx2(a: &[i8], b: &[i8]) -> i32 {
    use std::arch::x86_64::*;
    let n = a.len().min(b.len());
    let whole = n / 32 * 32;
    let ones = _mm256_set1_epi16(1);
    let mut acc = _mm256_setzero_si256();
    let mut i = 0;
    while i < whole {
        // SAFETY: `i + 32 <= n`, within both slices; unaligned loads.
        let x = _mm256_loadu_si256(a.as_ptr().add(i).cast());
        let y = _mm256_loadu_si256(b.as_ptr().add(i).cast());
        let pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));
        i += 32;
    }
    let mut lanes = [0i32; 8];
    _mm256_storeu_si256(lanes.as_mut_ptr().cast(), acc);
    lanes.iter().sum::<i32>() + dot_i8_plain(&a[whole..n], &b[whole..n])
}

#[inline(always)]
fn dot_i8_plain(a: &[i8], b: &[i8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| i32::from(*x as i16 * *y as i16))
        .sum()
}

/// The nodes a walk has reached, one bit per item id.
struct Visited(Vec<u64>);

impl Visited {
    fn new(items: usize) -> Visited {
        Visited(vec![0; items.div_ceil(64)])
    }

    /// Marks `id`; whether it was not marked before.
    fn insert(&mut self, id: u32) -> bool {
        let (word, bit) = ((id / 64) as usize, 1u64 << (id % 64));
        if word >= self.0.len() {
            self.0.resize(word + 1, 0);
        }
        let fresh = self.0[word] & bit == 0;
        self.0[word] |= bit;
        fresh
    }

    fn clear(&mut self) {
        self.0.fill(0);
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
    g.distance = String::from_utf8_lossy(&bytes[..nul]).into_owned();
    let rest = bytes.get(nul + 1..).ok_or_else(|| broken("metadata"))?;
    g.dimensions = rest
        .get(0..4)
        .map(|s| u32::from_be_bytes(s.try_into().expect("4 bytes")) as usize)
        .ok_or_else(|| broken("metadata"))?;
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

    /// Every item's vector as [`Codes`].
    fn codes(&self) -> Result<Codes> {
        let dimensions = self.dimensions;
        let mut bytes = vec![0i8; self.vectors.len() * dimensions];
        for id in &self.items {
            let item = self.item::<hannoy::distances::Cosine>(id)?;
            let v = item.vector.to_vec();
            if v.len() != dimensions {
                return Err(broken("item"));
            }
            let start = id as usize * dimensions;
            bytes[start..start + dimensions].copy_from_slice(&quantize(&v));
        }
        Ok(Codes { dimensions, bytes })
    }

    /// hannoy's walk with the distance `dist` to the query: a greedy descent of the upper
    /// layers, then layer 0 keeping the `max(ef, count)` nearest of `candidates`, nearest first;
    /// None when fewer than `count` were found.
    fn walk(
        &self,
        dist: impl Fn(u32) -> Result<f32>,
        prefetch: impl Fn(u32),
        ef: usize,
        count: usize,
        candidates: Option<&RoaringBitmap>,
    ) -> Result<Option<Vec<(Dist, u32)>>> {
        let mut eps = self.entry_points.clone();
        let mut path = Visited::new(self.vectors.len());
        for level in (1..=self.max_level).rev() {
            let found = self.visit((&dist, &prefetch), &eps, level, 1, None, &mut path)?;
            let Some(&(_, closest)) = found.peek_min() else {
                return Ok(None);
            };
            eps = vec![closest];
        }
        path.clear();
        let found = self.visit(
            (&dist, &prefetch),
            &eps,
            0,
            ef.max(count),
            candidates,
            &mut path,
        )?;
        if found.len() < count {
            return Ok(None);
        }
        Ok(Some(found.into_vec_asc()))
    }

    /// One layer's beam search from `eps`, keeping the `ef` nearest (of `candidates`).
    fn visit(
        &self,
        (dist, prefetch): (&impl Fn(u32) -> Result<f32>, &impl Fn(u32)),
        eps: &[u32],
        level: usize,
        ef: usize,
        candidates: Option<&RoaringBitmap>,
        path: &mut Visited,
    ) -> Result<MinMaxHeap<(Dist, u32)>> {
        let mut queue = BinaryHeap::new();
        let mut res = MinMaxHeap::with_capacity(ef);
        let mut fresh = Vec::new();
        for &ep in eps {
            let d = dist(ep)?;
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
                    prefetch(point);
                    fresh.push(point);
                }
            }
            for &point in &fresh {
                let d = dist(point)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_product_is_the_plain_one() {
        let mut seed = 7u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            ((seed >> 24) as i16 - 128).clamp(-127, 127) as i8
        };
        for n in [0, 1, 31, 32, 33, 384, 385, 1000] {
            let a: Vec<i8> = (0..n).map(|_| next()).collect();
            let b: Vec<i8> = (0..n).map(|_| next()).collect();
            assert_eq!(dot_i8(&a, &b), dot_i8_plain(&a, &b), "{n} codes");
            let max = vec![127i8; n];
            let min = vec![-127i8; n];
            assert_eq!(dot_i8(&max, &min), -(n as i32) * 127 * 127);
            assert_eq!(dot_i8(&min, &min), n as i32 * 127 * 127);
        }
    }

    #[test]
    fn codes_are_unit_vectors_scaled() {
        let q = quantize(&[3.0, 4.0, 0.0]);
        assert_eq!(q, vec![76, 102, 0]);
        assert_eq!(quantize(&[0.0, 0.0]), vec![0, 0]);
    }
}
