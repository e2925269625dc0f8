//! The inverted view of a value column ([`ValueIndex`]): documents by value. Filters read it
//! (bitmaps per string, numbers sorted for ranges), and so do large facet counts and the
//! single-key sort of a placeholder search.

use roaring::RoaringBitmap;

use super::{Column, Item};

/// Documents by value: what filters read.
#[derive(Debug)]
pub struct ValueIndex {
    /// Every (number, document) pair, by number then document.
    pub numbers: Vec<(f64, u32)>,
    /// For each string id, the documents holding it.
    pub strings: Vec<RoaringBitmap>,
    /// The documents holding at least one value.
    pub valued: RoaringBitmap,
}

impl Column {
    /// Documents by value (built once per column).
    pub fn index(&self) -> &ValueIndex {
        self.index.get_or_init(|| {
            let mut numbers = Vec::new();
            let mut strings = vec![RoaringBitmap::new(); self.strings.len()];
            let mut valued = RoaringBitmap::new();
            for iid in 0..self.id_count() as u32 {
                let values = self.values(iid);
                if !values.is_empty() {
                    valued.push(iid);
                }
                for item in values {
                    match *item {
                        Item::Num(n) => numbers.push((n, iid)),
                        // Pushing in increasing id order; a repeated value is a no-op.
                        Item::Str(id) => {
                            strings[id as usize].push(iid);
                        }
                    }
                }
            }
            numbers.sort_unstable_by(by_number);
            let index = ValueIndex {
                numbers,
                strings,
                valued,
            };
            self.viewed(index.bytes());
            index
        })
    }
}

/// A column's numbers as dense ids, for counting: each distinct number gets its position in
/// numeric order (`-0` and `0` are one number), and each document the ids of the numbers it
/// holds, once each and ascending. A facet count is then an increment per value of each
/// candidate, never a lookup by value.
#[derive(Debug, Default)]
pub struct NumberIds {
    /// The distinct numbers, ascending (the first spelling of zero in that order).
    pub values: Vec<f64>,
    /// `offsets[iid]..offsets[iid + 1]` are the positions in `ids` of document `iid`'s.
    offsets: Vec<u32>,
    ids: Vec<u32>,
}

impl NumberIds {
    /// Built from the index's pairs, sorted by number then document: two passes over them.
    fn of(index: &ValueIndex, id_count: usize) -> NumberIds {
        if index.numbers.is_empty() {
            return NumberIds::default();
        }
        // The id of each pair: a new one where the number changes.
        let mut values: Vec<f64> = Vec::new();
        let mut pair_ids: Vec<u32> = Vec::with_capacity(index.numbers.len());
        for &(n, _) in &index.numbers {
            let same = values
                .last()
                .is_some_and(|p| p.total_cmp(&n).is_eq() || (*p == 0.0 && n == 0.0));
            if !same {
                values.push(n);
            }
            pair_ids.push(values.len() as u32 - 1);
        }
        // A document's pairs come in ascending id order, so a number it holds twice (or as
        // both zeros) is its last id seen: each (document, id) is kept once.
        let mut last = vec![u32::MAX; id_count];
        let held: Vec<(u32, u32)> = index
            .numbers
            .iter()
            .zip(&pair_ids)
            .filter_map(|(&(_, iid), &id)| {
                let seen = std::mem::replace(&mut last[iid as usize], id);
                (seen != id).then_some((iid, id))
            })
            .collect();
        let mut offsets = vec![0u32; id_count + 1];
        for &(iid, _) in &held {
            offsets[iid as usize + 1] += 1;
        }
        for i in 1..offsets.len() {
            offsets[i] += offsets[i - 1];
        }
        let mut fill = offsets.clone();
        let mut ids = vec![0u32; held.len()];
        for (iid, id) in held {
            let at = &mut fill[iid as usize];
            ids[*at as usize] = id;
            *at += 1;
        }
        NumberIds {
            values,
            offsets,
            ids,
        }
    }

    fn bytes(&self) -> usize {
        self.values.len() * 8 + (self.offsets.len() + self.ids.len()) * 4
    }

    /// The ids of the numbers document `iid` holds.
    #[inline]
    pub fn of_document(&self, iid: u32) -> &[u32] {
        let i = iid as usize;
        if i + 1 >= self.offsets.len() {
            return &[];
        }
        &self.ids[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

impl Column {
    /// The numbers as dense ids (built once per column, from its index).
    pub fn number_ids(&self) -> &NumberIds {
        self.number_ids.get_or_init(|| {
            let ids = NumberIds::of(self.index(), self.id_count());
            self.viewed(ids.bytes());
            ids
        })
    }

    /// Per number id, the rank of its number's printed form ([`super::number_key`]) among
    /// all of them in byte order: distinct numbers print differently, so these are distinct.
    pub fn printed_ranks(&self) -> &[u32] {
        self.printed.get_or_init(|| {
            let values = &self.number_ids().values;
            let mut order: Vec<(String, u32)> = values
                .iter()
                .enumerate()
                .map(|(id, n)| (super::number_key(*n), id as u32))
                .collect();
            order.sort_unstable();
            let mut ranks = vec![0u32; order.len()];
            for (rank, (_, id)) in order.into_iter().enumerate() {
                ranks[id as usize] = rank as u32;
            }
            self.viewed(ranks.len() * 4);
            ranks
        })
    }
}

impl ValueIndex {
    /// About the bytes it holds.
    pub fn bytes(&self) -> usize {
        self.numbers.len() * std::mem::size_of::<(f64, u32)>()
            + self
                .strings
                .iter()
                .map(|b| b.serialized_size() + 32)
                .sum::<usize>()
            + self.valued.serialized_size()
    }

    /// The index of `column`, derived from this one, the index of `base`: `column` is `base`
    /// with the values of the documents `changed` replaced (same string ids, new strings
    /// after `base`'s). Costs a pass over the numbers, not a sort of them.
    pub fn updated(&self, base: &Column, column: &Column, changed: &RoaringBitmap) -> ValueIndex {
        let mut strings = self.strings.clone();
        strings.resize(column.strings.len(), RoaringBitmap::new());
        let mut valued = &self.valued - changed;
        let mut added: Vec<(f64, u32)> = Vec::new();
        for iid in changed {
            for item in base.values(iid) {
                if let Item::Str(id) = *item {
                    strings[id as usize].remove(iid);
                }
            }
            let values = column.values(iid);
            if !values.is_empty() {
                valued.insert(iid);
            }
            for item in values {
                match *item {
                    Item::Num(n) => added.push((n, iid)),
                    Item::Str(id) => {
                        strings[id as usize].insert(iid);
                    }
                }
            }
        }
        added.sort_unstable_by(by_number);
        let gone = DenseSet::from_bitmap(changed, base.id_count().max(column.id_count()));
        let mut kept = self
            .numbers
            .iter()
            .filter(|(_, iid)| !gone.contains(*iid))
            .peekable();
        let mut added = added.into_iter().peekable();
        let mut numbers = Vec::with_capacity(self.numbers.len() + added.len());
        loop {
            let next = match (kept.peek(), added.peek()) {
                (Some(k), Some(a)) if by_number(k, a).is_le() => *kept.next().unwrap(),
                (_, Some(_)) => added.next().unwrap(),
                (Some(_), None) => *kept.next().unwrap(),
                (None, None) => break,
            };
            numbers.push(next);
        }
        ValueIndex {
            numbers,
            strings,
            valued,
        }
    }
}

/// The order of [`ValueIndex::numbers`]: by number, then document.
fn by_number(a: &(f64, u32), b: &(f64, u32)) -> std::cmp::Ordering {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
}

/// The documents of a run of (number, document) pairs, as a bitmap. `id_count` bounds the
/// documents (one past the highest). A long run is gathered in a dense bit set of the ids and
/// converted at once, which costs a pass over the run and one over the id space instead of
/// sorting the run's documents; a short one is sorted.
pub fn documents_of(pairs: &[(f64, u32)], id_count: usize) -> RoaringBitmap {
    if pairs.len().saturating_mul(64) < id_count {
        let mut iids: Vec<u32> = pairs.iter().map(|(_, iid)| *iid).collect();
        iids.sort_unstable();
        iids.dedup();
        return RoaringBitmap::from_sorted_iter(iids).expect("sorted and deduplicated");
    }
    DenseSet::from_ids(pairs.iter().map(|(_, iid)| *iid), id_count).to_bitmap()
}

/// A set of internal ids as one bit per id below a bound: constant-time membership and
/// insertion, for passes that test or gather many ids.
pub struct DenseSet {
    bytes: Vec<u8>,
}

impl DenseSet {
    /// The ids of `ids` (each below `id_count`; others are left out). Taken by `for_each`: a
    /// bitmap's iterator then walks each container in one loop, where `next` goes through
    /// the container's kind for every id (15,000 ids over 886,000: 93 -> 16 µs).
    pub fn from_ids(ids: impl IntoIterator<Item = u32>, id_count: usize) -> DenseSet {
        let mut bytes = vec![0u8; id_count.div_ceil(8)];
        ids.into_iter().for_each(|iid| {
            if let Some(b) = bytes.get_mut(iid as usize >> 3) {
                *b |= 1 << (iid & 7);
            }
        });
        DenseSet { bytes }
    }

    /// The ids of `set` below `id_count`.
    pub fn from_bitmap(set: &RoaringBitmap, id_count: usize) -> DenseSet {
        DenseSet::from_ids(
            set.range(..id_count.min(u32::MAX as usize) as u32),
            id_count,
        )
    }

    #[inline]
    pub fn contains(&self, iid: u32) -> bool {
        self.bytes
            .get(iid as usize >> 3)
            .is_some_and(|b| b & (1 << (iid & 7)) != 0)
    }

    pub fn to_bitmap(&self) -> RoaringBitmap {
        RoaringBitmap::from_lsb0_bytes(0, &self.bytes)
    }
}

/// The first `need` documents of `set` ordered by this column alone (numbers, then strings,
/// then documents without a value; ties by internal id), read from the value index instead
/// of computing every document's key. `need` comes from the request (offset + limit): the
/// page is sized by what `set` can give, never by the request alone.
pub fn sorted_page(column: &Column, asc: bool, set: &RoaringBitmap, need: usize) -> Vec<u32> {
    let index = column.index();
    let need = need.min(set.len() as usize);
    let mut out = Vec::with_capacity(need);
    let mut seen = RoaringBitmap::new();
    let mut take = |iid: u32, out: &mut Vec<u32>| -> bool {
        if set.contains(iid) && seen.insert(iid) {
            out.push(iid);
        }
        out.len() >= need
    };
    if need == 0 {
        return out;
    }
    let nums = &index.numbers;
    if asc {
        for &(_, iid) in nums {
            if take(iid, &mut out) {
                return out;
            }
        }
    } else {
        // Highest values first; equal values by increasing id.
        let mut end = nums.len();
        while end > 0 {
            let v = nums[end - 1].0;
            let start = nums[..end].partition_point(|(x, _)| x.total_cmp(&v).is_lt());
            for &(_, iid) in &nums[start..end] {
                if take(iid, &mut out) {
                    return out;
                }
            }
            end = start;
        }
    }
    let mut by_rank: Vec<u32> = (0..column.strings.len() as u32).collect();
    by_rank.sort_unstable_by_key(|id| column.strings[*id as usize].rank);
    if !asc {
        by_rank.reverse();
    }
    for id in by_rank {
        for iid in &index.strings[id as usize] & set {
            if take(iid, &mut out) {
                return out;
            }
        }
    }
    for iid in set {
        if column.values(iid).is_empty() && take(iid, &mut out) {
            return out;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::column::column;
    use super::*;
    use crate::value;
    use serde_json::json;

    #[test]
    fn value_index_lists_documents_by_value() {
        let docs = [
            json!({"v": [3, "a"]}),
            json!({"v": "A"}),
            json!({"v": 1}),
            json!({}),
        ];
        let c = column("v", &docs);
        let ix = c.index();
        assert_eq!(ix.numbers, [(1.0, 2), (3.0, 0)]);
        let a = c.string_id("a").unwrap();
        assert_eq!(ix.strings[a as usize].iter().collect::<Vec<_>>(), [0, 1]);
        assert_eq!(c.string_id("b"), None);
    }

    #[test]
    fn documents_of_a_run_sorted_or_dense() {
        let pairs: Vec<(f64, u32)> = (0..500u32).map(|i| (1.0, (i * 7919) % 1000)).collect();
        for id_count in [1000, 1000 * 64, 1_000_000] {
            for run in [&pairs[..], &pairs[..1], &pairs[..0], &pairs[3..200]] {
                let want: RoaringBitmap = run.iter().map(|(_, i)| *i).collect();
                assert_eq!(
                    documents_of(run, id_count),
                    want,
                    "{id_count} {}",
                    run.len()
                );
            }
        }
        // Repeated documents count once.
        let twice = [(1.0, 5), (2.0, 5), (3.0, 2)];
        assert_eq!(documents_of(&twice, 8).iter().collect::<Vec<_>>(), [2, 5]);
        let set: RoaringBitmap = [0, 9, 63, 64, 70_000].into_iter().collect();
        let dense = DenseSet::from_bitmap(&set, 70_001);
        assert!((0..70_010).all(|i| dense.contains(i) == set.contains(i)));
        assert_eq!(dense.to_bitmap(), set);
        // Ids beyond the bound are left out.
        assert_eq!(DenseSet::from_bitmap(&set, 64).to_bitmap().len(), 3);
    }

    #[test]
    fn sorted_page_matches_sorting_every_key() {
        let docs = [
            json!({"v": "b"}),
            json!({"v": [3, 1]}),
            json!({}),
            json!({"v": "A"}),
            json!({"v": 3}),
            json!({"v": [1, "z"]}),
            json!({"v": null}),
        ];
        let c = column("v", &docs);
        let set: RoaringBitmap = (0..7).filter(|i| *i != 3).collect();
        for asc in [true, false] {
            let mut all: Vec<u32> = set.iter().collect();
            all.sort_by(|a, b| {
                value::compare(&c.sort_key(*a, asc), &c.sort_key(*b, asc), asc).then(a.cmp(b))
            });
            for need in 0..=7 {
                let want: Vec<u32> = all.iter().copied().take(need).collect();
                assert_eq!(
                    sorted_page(&c, asc, &set, need),
                    want,
                    "asc={asc} need={need}"
                );
            }
        }
    }
}
