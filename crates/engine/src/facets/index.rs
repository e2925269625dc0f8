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
}

impl Column {
    /// Documents by value (built once per column).
    pub fn index(&self) -> &ValueIndex {
        self.index.get_or_init(|| {
            let mut numbers = Vec::new();
            let mut strings = vec![RoaringBitmap::new(); self.strings.len()];
            for iid in 0..self.id_count() as u32 {
                for item in self.values(iid) {
                    match *item {
                        Item::Num(n) => numbers.push((n, iid)),
                        // Pushing in increasing id order; a repeated value is a no-op.
                        Item::Str(id) => {
                            strings[id as usize].push(iid);
                        }
                    }
                }
            }
            numbers.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            ValueIndex { numbers, strings }
        })
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
