//! Facet distribution, stats and facet search: how many documents of a set hold each value
//! of a column, printed in Meilisearch's orders ([`FacetOrder`]), and the string values a
//! facet query reaches.

use std::borrow::Cow;

use roaring::RoaringBitmap;
use serde_json::{Map, Value};

use super::{Column, Item};
use crate::value::search_form;

/// How facet values are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FacetOrder {
    Alpha,
    Count,
}

/// Rust's `f64` display (`10.0` → `10`, `1.5` → `1.5`), the form numbers take as facet keys.
pub fn number_key(n: f64) -> String {
    if n == 0.0 {
        return "0".to_string();
    }
    format!("{n}")
}

/// Counts of one facet among a set of documents.
pub struct Counts<'c> {
    /// Per number id (see [`super::NumberIds`]), how many documents hold it, by id (which is
    /// numeric order).
    numbers: Cow<'c, [(u32, u64)]>,
    /// Per string id, how many documents hold it (by rank when `strings_by_rank`).
    strings: Cow<'c, [(u32, u64)]>,
    strings_by_rank: bool,
    pub min: Option<f64>,
    pub max: Option<f64>,
    candidates: u64,
}

/// The counts of a column over every document holding a value, kept with the column: a facet
/// distribution over a set holding all of them reads these instead of counting again.
#[derive(Debug)]
pub struct Tally {
    numbers: Vec<(u32, u64)>,
    strings: Vec<(u32, u64)>,
    min: Option<f64>,
    max: Option<f64>,
}

/// Counts the documents of `candidates` holding each value of `column` (a document counts
/// once per value, however often it holds it), or reads the column's counts over every
/// document when the set holds every document with a value.
pub fn count<'c>(column: &'c Column, candidates: &RoaringBitmap) -> Counts<'c> {
    if candidates.len() as usize * 4 > column.id_count()
        && column.index().valued.is_subset(candidates)
    {
        let every = column.every.get_or_init(|| {
            let mut c = counted(column, &column.index().valued);
            c.strings
                .to_mut()
                .sort_unstable_by_key(|(id, _)| column.strings[*id as usize].rank);
            let tally = Tally {
                numbers: c.numbers.into_owned(),
                strings: c.strings.into_owned(),
                min: c.min,
                max: c.max,
            };
            column.viewed((tally.numbers.len() + tally.strings.len()) * 16);
            tally
        });
        return Counts {
            numbers: Cow::Borrowed(&every.numbers),
            strings: Cow::Borrowed(&every.strings),
            strings_by_rank: true,
            min: every.min,
            max: every.max,
            candidates: candidates.len(),
        };
    }
    counted(column, candidates)
}

/// The counts, numbers sorted numerically. Numbers are counted through their ids (see
/// [`super::NumberIds`]), in a pass over the candidates; strings likewise when the candidates
/// are few against the documents, else from the value index, a bitmap intersection per string.
fn counted(column: &Column, candidates: &RoaringBitmap) -> Counts<'static> {
    let ids = column.number_ids();
    let numbers = if ids.values.is_empty() {
        Vec::new()
    } else {
        tally(ids.values.len(), candidates.len(), |add| {
            candidates.iter().for_each(|iid| {
                for &id in ids.of_document(iid) {
                    add(id);
                }
            })
        })
    };
    let strings = if column.strings.is_empty() {
        Vec::new()
    } else if candidates.len() as usize * 4 > column.id_count() {
        let index = column.index();
        index
            .strings
            .iter()
            .enumerate()
            .map(|(id, docs)| (id as u32, docs.intersection_len(candidates)))
            .filter(|(_, c)| *c > 0)
            .collect()
    } else {
        tally(column.strings.len(), candidates.len(), |add| {
            candidates.iter().for_each(|iid| {
                let values = column.values(iid);
                for (i, item) in values.iter().enumerate() {
                    // Two spellings of one string share an id; the document counts once.
                    if let Item::Str(id) = *item {
                        if !values[..i].contains(item) {
                            add(id);
                        }
                    }
                }
            })
        })
    };
    Counts {
        min: numbers.first().map(|n| ids.values[n.0 as usize]),
        max: numbers.last().map(|n| ids.values[n.0 as usize]),
        numbers: Cow::Owned(numbers),
        strings: Cow::Owned(strings),
        strings_by_rank: false,
        candidates: candidates.len(),
    }
}

/// How often each id below `space` is added by `feed`, for the ids added, in id order. About
/// `expected` ids are added: when they are few against `space`, they are sorted; else counted
/// in an array of `space` counters.
fn tally(space: usize, expected: u64, feed: impl FnOnce(&mut dyn FnMut(u32))) -> Vec<(u32, u64)> {
    if expected.saturating_mul(16) < space as u64 {
        let mut ids = Vec::with_capacity(expected as usize);
        feed(&mut |id| ids.push(id));
        ids.sort_unstable();
        let mut out: Vec<(u32, u64)> = Vec::new();
        for id in ids {
            match out.last_mut() {
                Some(last) if last.0 == id => last.1 += 1,
                _ => out.push((id, 1)),
            }
        }
        return out;
    }
    let mut counts = vec![0u32; space];
    feed(&mut |id| counts[id as usize] += 1);
    counts
        .into_iter()
        .enumerate()
        .filter(|(_, c)| *c > 0)
        .map(|(id, c)| (id as u32, c as u64))
        .collect()
}

/// The first `k` of `items` in the order of `cmp`, which must order every two distinct items
/// (so this equals sorting them all and keeping `k`). Items already in that order (`sorted`)
/// are only cut.
fn first_k<T: Copy>(
    items: &[T],
    k: usize,
    sorted: bool,
    cmp: impl Fn(&T, &T) -> std::cmp::Ordering,
) -> Vec<T> {
    if sorted {
        return items[..k.min(items.len())].to_vec();
    }
    let mut v = items.to_vec();
    if k == 0 {
        return Vec::new();
    }
    if k < v.len() {
        v.select_nth_unstable_by(k - 1, &cmp);
        v.truncate(k);
    }
    v.sort_unstable_by(cmp);
    v
}

impl Counts<'_> {
    /// The distribution as Meilisearch prints it: numbers first, then strings, at most
    /// `max_values` in all. In alphabetical order numbers sort by their printed form when
    /// there are at most 3000 candidates and numerically beyond.
    pub fn distribution(
        self,
        column: &Column,
        max_values: usize,
        order: FacetOrder,
    ) -> Map<String, Value> {
        let strings = &column.strings;
        // Every comparison below orders any two distinct values (numbers are distinct, ranks
        // are unique), so keeping the first `max_values` equals sorting them all.
        let by_rank = |a: &(u32, u64), b: &(u32, u64)| {
            strings[a.0 as usize].rank.cmp(&strings[b.0 as usize].rank)
        };
        let by_count = |a: &(u32, u64), b: &(u32, u64)| {
            b.1.cmp(&a.1)
                .then(strings[b.0 as usize].rank.cmp(&strings[a.0 as usize].rank))
        };
        // Number ids are in numeric order, and printed forms have ranks of their own.
        let ids = column.number_ids();
        let numbers = match order {
            // Few numbers are printed here; many are ordered by the ranks of every printed
            // form, built once per column.
            FacetOrder::Alpha if self.candidates <= 3000 && self.numbers.len() <= 256 => {
                let mut v: Vec<(String, (u32, u64))> = self
                    .numbers
                    .iter()
                    .map(|&(id, c)| (number_key(ids.values[id as usize]), (id, c)))
                    .collect();
                v.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                v.into_iter().take(max_values).map(|(_, n)| n).collect()
            }
            FacetOrder::Alpha if self.candidates <= 3000 => {
                let printed = column.printed_ranks();
                first_k(&self.numbers, max_values, false, |a, b| {
                    printed[a.0 as usize].cmp(&printed[b.0 as usize])
                })
            }
            FacetOrder::Alpha => first_k(&self.numbers, max_values, true, |a, b| a.0.cmp(&b.0)),
            FacetOrder::Count => first_k(&self.numbers, max_values, false, |a, b| {
                b.1.cmp(&a.1).then(b.0.cmp(&a.0))
            }),
        };
        let mut out = Map::new();
        for (id, c) in &numbers {
            out.insert(number_key(ids.values[*id as usize]), Value::from(*c));
        }
        let room = max_values.saturating_sub(out.len());
        let kept = match order {
            FacetOrder::Alpha => first_k(&self.strings, room, self.strings_by_rank, by_rank),
            FacetOrder::Count => first_k(&self.strings, room, false, by_count),
        };
        for (id, c) in &kept {
            out.insert(strings[*id as usize].original.to_string(), Value::from(*c));
        }
        out
    }

    /// Facet search: the string values whose normalized form starts with `query` (or with a
    /// string within `typos` edits of it), with their counts, ordered and capped.
    pub fn search(
        self,
        column: &Column,
        query: Option<&str>,
        typos: u8,
        max_values: usize,
        order: FacetOrder,
    ) -> Vec<(String, u64)> {
        let strings = &column.strings;
        let mut hits = self.strings.into_owned();
        if let Some(q) = query {
            let q = search_form(q);
            hits.retain(|(id, _)| {
                let value = search_form(&strings[*id as usize].normalized);
                value.starts_with(q.as_str())
                    || (typos > 0 && prefix_distance(&q, &value) <= typos as usize)
            });
        }
        match order {
            FacetOrder::Alpha => hits.sort_unstable_by_key(|(id, _)| strings[*id as usize].rank),
            FacetOrder::Count => hits.sort_unstable_by(|a, b| {
                b.1.cmp(&a.1)
                    .then(strings[b.0 as usize].rank.cmp(&strings[a.0 as usize].rank))
            }),
        }
        hits.into_iter()
            .take(max_values)
            .map(|(id, c)| (strings[id as usize].original.to_string(), c))
            .collect()
    }
}

/// The fewest edits turning `query` into some prefix of `value` (by characters).
pub fn prefix_distance(query: &str, value: &str) -> usize {
    let q: Vec<char> = query.chars().collect();
    let v: Vec<char> = value.chars().collect();
    // prev[i]: edits turning q[..i] into v[..j] for the previous j.
    let mut prev: Vec<usize> = (0..=q.len()).collect();
    let mut best = prev[q.len()];
    for j in 1..=v.len() {
        let mut cur = vec![j; q.len() + 1];
        for i in 1..=q.len() {
            let sub = prev[i - 1] + usize::from(q[i - 1] != v[j - 1]);
            cur[i] = sub.min(prev[i] + 1).min(cur[i - 1] + 1);
        }
        best = best.min(cur[q.len()]);
        prev = cur;
        if prev.iter().min().copied().unwrap_or(0) > best {
            break;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::super::column::column;
    use super::*;
    use serde_json::json;

    fn all(n: u32) -> RoaringBitmap {
        (0..n).collect()
    }

    /// The counts as reading each candidate's values gives them: the reference.
    struct Reference {
        numbers: Vec<(f64, u64)>,
        strings: Vec<(u32, u64)>,
        min: Option<f64>,
        max: Option<f64>,
    }

    fn count_by_document(column: &Column, candidates: &RoaringBitmap) -> Reference {
        let mut numbers: std::collections::HashMap<u64, (f64, u64)> = Default::default();
        let mut strings = vec![0u64; column.strings.len()];
        let (mut min, mut max) = (None::<f64>, None::<f64>);
        for iid in candidates {
            let values = column.values(iid);
            for (i, item) in values.iter().enumerate() {
                if values[..i].contains(item) {
                    continue;
                }
                match *item {
                    Item::Num(n) => {
                        let bits = if n == 0.0 { 0 } else { n.to_bits() };
                        numbers.entry(bits).or_insert((n, 0)).1 += 1;
                        min = Some(min.map_or(n, |m: f64| m.min(n)));
                        max = Some(max.map_or(n, |m: f64| m.max(n)));
                    }
                    Item::Str(id) => strings[id as usize] += 1,
                }
            }
        }
        Reference {
            numbers: numbers.into_values().collect(),
            strings: strings
                .into_iter()
                .enumerate()
                .filter(|(_, c)| *c > 0)
                .map(|(id, c)| (id as u32, c))
                .collect(),
            min,
            max,
        }
    }

    #[test]
    fn distribution_groups_spellings_and_puts_numbers_first() {
        let docs = [
            json!({"g": ["Romance", "action"], "n": 10}),
            json!({"g": "romance", "n": [9, 9]}),
            json!({"g": ["ACTION", "action"], "n": "x"}),
            json!({"n": null}),
        ];
        let c = column("g", &docs);
        let d = count(&c, &all(4)).distribution(&c, 100, FacetOrder::Alpha);
        assert_eq!(Value::Object(d), json!({"action": 2, "Romance": 2}));
        let c = column("n", &docs);
        let counts = count(&c, &all(4));
        assert_eq!((counts.min, counts.max), (Some(9.0), Some(10.0)));
        let d = counts.distribution(&c, 100, FacetOrder::Alpha);
        // Few candidates: numbers by their printed form, "10" before "9".
        let keys: Vec<&String> = d.keys().collect();
        assert_eq!(keys, ["10", "9", "x"]);
        assert_eq!(d["9"], json!(1));
    }

    #[test]
    fn distribution_by_count_and_capped() {
        let docs = [
            json!({"g": ["a", "b"]}),
            json!({"g": ["b", "c"]}),
            json!({"g": ["b", "c"]}),
        ];
        let c = column("g", &docs);
        let d = count(&c, &all(3)).distribution(&c, 2, FacetOrder::Count);
        let keys: Vec<&String> = d.keys().collect();
        assert_eq!(keys, ["b", "c"]);
        let d = count(&c, &[0u32].into_iter().collect()).distribution(&c, 10, FacetOrder::Alpha);
        assert_eq!(Value::Object(d), json!({"a": 1, "b": 1}));
    }

    #[test]
    fn nested_paths_and_booleans() {
        let docs = [
            json!({"a": {"b": "X"}}),
            json!({"a": [{"b": "y"}, {"b": true}]}),
            json!({"a.b": "x"}),
        ];
        let c = column("a.b", &docs);
        let d = count(&c, &all(3)).distribution(&c, 10, FacetOrder::Alpha);
        assert_eq!(Value::Object(d), json!({"true": 1, "X": 2, "y": 1}));
    }

    #[test]
    fn facet_search_prefix_and_typos() {
        let docs = [
            json!({"g": ["Adventure", "action"]}),
            json!({"g": "advnture"}),
            json!({"g": "New York"}),
            json!({"g": "comedy"}),
        ];
        let c = column("g", &docs);
        let hits = count(&c, &all(4)).search(&c, Some("a"), 0, 100, FacetOrder::Alpha);
        assert_eq!(
            hits,
            [
                ("action".to_string(), 1),
                ("Adventure".to_string(), 1),
                ("advnture".to_string(), 1)
            ]
        );
        let hits = count(&c, &all(4)).search(&c, Some("york"), 0, 100, FacetOrder::Alpha);
        assert!(hits.is_empty());
        let hits = count(&c, &all(4)).search(&c, Some("adventu"), 1, 100, FacetOrder::Alpha);
        assert_eq!(
            hits,
            [("Adventure".to_string(), 1), ("advnture".to_string(), 1)]
        );
        let hits = count(&c, &all(4)).search(&c, None, 0, 2, FacetOrder::Alpha);
        assert_eq!(hits.len(), 2);
    }

    #[test]
    fn prefix_distance_counts_edits_to_the_best_prefix() {
        assert_eq!(prefix_distance("adv", "adventure"), 0);
        assert_eq!(prefix_distance("avd", "adventure"), 1);
        assert_eq!(prefix_distance("xyz", "adventure"), 3);
        assert_eq!(prefix_distance("adbe", "adventure"), 1);
        assert_eq!(prefix_distance("", "x"), 0);
    }

    /// The distribution as sorting every value and keeping the first ones gives it.
    fn distribution_by_sorting_all(
        column: &Column,
        set: &RoaringBitmap,
        max_values: usize,
        order: FacetOrder,
    ) -> Map<String, Value> {
        let Reference {
            mut numbers,
            mut strings,
            ..
        } = count_by_document(column, set);
        let rank = |id: u32| column.strings[id as usize].rank;
        match order {
            FacetOrder::Alpha if set.len() <= 3000 => {
                numbers.sort_by_cached_key(|(n, _)| number_key(*n));
                strings.sort_by_key(|(id, _)| rank(*id));
            }
            FacetOrder::Alpha => {
                numbers.sort_by(|a, b| a.0.total_cmp(&b.0));
                strings.sort_by_key(|(id, _)| rank(*id));
            }
            FacetOrder::Count => {
                numbers.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.total_cmp(&a.0)));
                strings.sort_by(|a, b| b.1.cmp(&a.1).then(rank(b.0).cmp(&rank(a.0))));
            }
        }
        let mut out = Map::new();
        for (n, c) in numbers.iter().take(max_values) {
            out.insert(number_key(*n), Value::from(*c));
        }
        let room = max_values.saturating_sub(out.len());
        for (id, c) in strings.iter().take(room) {
            out.insert(
                column.strings[*id as usize].original.to_string(),
                Value::from(*c),
            );
        }
        out
    }

    #[test]
    fn every_counting_path_gives_the_sorted_distribution() {
        // More than 3000 documents, so both alphabetical orders of numbers are reached, with
        // documents without values (holes, null, empty arrays) and deleted ids (gaps).
        let mut seed = 7u64;
        let mut next = move |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let docs: Vec<Value> = (0..5000)
            .map(|_| match next(7) {
                0 => json!({}),
                1 => json!({"v": null}),
                2 => json!({"v": [next(40), next(40), format!("s{}", next(30))]}),
                3 => json!({"v": format!("S{}", next(30))}),
                4 => json!({"v": [-0.0, 0, next(5) as f64 / 4.0]}),
                5 => json!({"v": []}),
                _ => json!({"v": next(3000) as f64 - 1000.5}),
            })
            .collect();
        let c = column("v", &docs);
        let valued = c.index().valued.clone();
        let all: RoaringBitmap = (0..5000).collect();
        let sets = [
            all.clone(),
            valued.clone(),
            &valued | &(0..10).collect::<RoaringBitmap>(),
            &valued - &(0..10).collect::<RoaringBitmap>(),
            (0..5000).filter(|i| i % 2 == 0).collect(),
            (0..5000).filter(|i| i % 9 == 0).collect(),
            // Few against the distinct numbers: counted by sorting their ids.
            (0..5000).filter(|i| i % 97 == 0).collect(),
            (0..3000).collect(),
            RoaringBitmap::new(),
        ];
        for set in &sets {
            let reference = count_by_document(&c, set);
            for order in [FacetOrder::Alpha, FacetOrder::Count] {
                for max in [0, 1, 2, 3, 17, 100, 10_000] {
                    let counts = count(&c, set);
                    assert_eq!((counts.min, counts.max), (reference.min, reference.max));
                    assert_eq!(
                        counts.distribution(&c, max, order),
                        distribution_by_sorting_all(&c, set, max, order),
                        "set of {} order {order:?} max {max}",
                        set.len()
                    );
                }
            }
        }
    }

    #[test]
    fn counting_by_value_equals_counting_by_document() {
        let docs: Vec<Value> = (0..40)
            .map(|i| match i % 5 {
                0 => json!({"v": [i % 3, i % 3, "x"]}),
                1 => json!({"v": "Y"}),
                2 => json!({"v": -0.0}),
                3 => json!({}),
                _ => json!({"v": [0.0, "y", i]}),
            })
            .collect();
        let c = column("v", &docs);
        for set in [
            all(40),
            (0..40).filter(|i| i % 3 == 0).collect::<RoaringBitmap>(),
        ] {
            let a = counted(&c, &set);
            let b = count_by_document(&c, &set);
            assert_eq!((a.min, a.max), (b.min, b.max));
            assert_eq!(
                a.distribution(&c, 100, FacetOrder::Count),
                distribution_by_sorting_all(&c, &set, 100, FacetOrder::Count)
            );
        }
    }
}
