//! Value columns: for one attribute, the scalars every document holds there, built in one
//! pass over the stored documents and cached per index generation. Facet distribution and
//! stats, facet search, the `sort` parameter and distinct read these instead of decoding
//! documents.
//!
//! Numbers are kept as `f64`; strings (and booleans, as `"true"`/`"false"`) by an id into
//! the column's string table, which holds each normalized form once with the spelling of
//! the first document (lowest internal id) that has it, and the rank of the normalized form
//! in byte order, so that sorting compares integers.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::OnceLock;

use roaring::RoaringBitmap;
use serde_json::{Map, Value};

/// One scalar of a document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Item {
    Num(f64),
    /// An id into [`Column::strings`].
    Str(u32),
}

#[derive(Debug)]
pub struct StrEntry {
    pub normalized: Box<str>,
    pub original: Box<str>,
    /// The position of `normalized` among all of the column's strings in byte order.
    pub rank: u32,
}

#[derive(Debug, Default)]
pub struct Column {
    /// `offsets[iid]..offsets[iid + 1]` are the items of document `iid`.
    offsets: Vec<u32>,
    items: Vec<Item>,
    pub strings: Vec<StrEntry>,
    /// Normalized string → its id in `strings`.
    ids: HashMap<Box<str>, u32>,
    /// The inverted view, built the first time a filter needs it.
    index: OnceLock<ValueIndex>,
}

/// Documents by value: what filters read.
#[derive(Debug)]
pub struct ValueIndex {
    /// Every (number, document) pair, by number then document.
    pub numbers: Vec<(f64, u32)>,
    /// For each string id, the documents holding it.
    pub strings: Vec<RoaringBitmap>,
}

/// The form facet strings are grouped, compared and filtered in: trimmed, compatibility
/// decomposed (NFKD) and lowercased, so `ﬁ` equals `fi` and `É` equals `É` however it
/// was typed. Accents stay: `élan` and `elan` are two values.
pub fn normalize(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let trimmed = s.trim();
    if trimmed.is_ascii() {
        return trimmed.to_ascii_lowercase();
    }
    trimmed.nfkd().flat_map(char::to_lowercase).collect()
}

/// The looser form facet search matches in: [`normalize`] without diacritics (`élan` → `elan`).
pub fn search_form(s: &str) -> String {
    use unicode_normalization::char::is_combining_mark;
    let n = normalize(s);
    if n.is_ascii() {
        return n;
    }
    n.chars().filter(|c| !is_combining_mark(*c)).collect()
}

/// Builds a column from documents given in increasing internal-id order.
pub struct ColumnBuilder {
    path: String,
    column: Column,
    geo: bool,
}

impl ColumnBuilder {
    /// A builder for the attribute at dotted `path`; `_geo` gives the two coordinates
    /// (`lat`, `lng`) of each document instead.
    pub fn new(path: &str) -> ColumnBuilder {
        ColumnBuilder {
            path: path.to_string(),
            column: Column {
                offsets: vec![0],
                ..Column::default()
            },
            geo: path == "_geo",
        }
    }

    /// Whether the top-level field `name` can hold values of this column.
    pub fn reads(&self, name: &str) -> bool {
        crate::filter::eval::within(&self.path, name)
    }

    pub fn push(&mut self, iid: u32, doc: &Map<String, Value>) {
        let col = &mut self.column;
        while (col.offsets.len() as u64) <= iid as u64 {
            let end = *col.offsets.last().unwrap();
            col.offsets.push(end);
        }
        if self.geo {
            if let Some((lat, lng)) = crate::sort::geo_of(doc) {
                col.items.push(Item::Num(lat));
                col.items.push(Item::Num(lng));
            }
        } else {
            let mut stack = crate::filter::eval::values_at(doc, &self.path);
            stack.reverse();
            while let Some(v) = stack.pop() {
                let item = match v {
                    Value::Number(n) => n.as_f64().map(Item::Num),
                    Value::String(s) => Some(self.string_id(s)),
                    Value::Bool(b) => Some(self.string_id(if *b { "true" } else { "false" })),
                    Value::Array(items) => {
                        stack.extend(items.iter().rev());
                        None
                    }
                    _ => None,
                };
                if let Some(item) = item {
                    self.column.items.push(item);
                }
            }
        }
        self.column.offsets.push(self.column.items.len() as u32);
    }

    fn string_id(&mut self, s: &str) -> Item {
        let normalized = normalize(s);
        if let Some(id) = self.column.ids.get(normalized.as_str()) {
            return Item::Str(*id);
        }
        let id = self.column.strings.len() as u32;
        let normalized: Box<str> = normalized.into();
        self.column.ids.insert(normalized.clone(), id);
        self.column.strings.push(StrEntry {
            normalized,
            original: s.into(),
            rank: 0,
        });
        Item::Str(id)
    }

    pub fn finish(mut self) -> Column {
        let mut order: Vec<u32> = (0..self.column.strings.len() as u32).collect();
        order.sort_unstable_by(|a, b| {
            self.column.strings[*a as usize]
                .normalized
                .cmp(&self.column.strings[*b as usize].normalized)
        });
        for (rank, id) in order.into_iter().enumerate() {
            self.column.strings[id as usize].rank = rank as u32;
        }
        self.column
    }
}

impl Column {
    /// The scalars of document `iid` (none when it has no value there).
    pub fn values(&self, iid: u32) -> &[Item] {
        let i = iid as usize;
        if i + 1 >= self.offsets.len() {
            return &[];
        }
        &self.items[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The id of a normalized string, if some document holds it.
    pub fn string_id(&self, normalized: &str) -> Option<u32> {
        self.ids.get(normalized).copied()
    }

    /// Documents by value (built once per column).
    pub fn index(&self) -> &ValueIndex {
        self.index.get_or_init(|| {
            let mut numbers = Vec::new();
            let mut strings = vec![RoaringBitmap::new(); self.strings.len()];
            for iid in 0..self.offsets.len().saturating_sub(1) as u32 {
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

    /// Approximate heap size, for the cache's budget.
    pub fn bytes(&self) -> usize {
        self.offsets.len() * 4
            + self.items.len() * std::mem::size_of::<Item>()
            + self
                .strings
                .iter()
                .map(|s| s.normalized.len() + s.original.len() + 40)
                .sum::<usize>()
    }

    /// The document's sort key: its best value for the direction (numbers before strings).
    pub fn sort_key(&self, iid: u32, asc: bool) -> SortKey {
        let mut best = SortKey::Missing;
        for item in self.values(iid) {
            let key = match *item {
                Item::Num(n) => SortKey::Num(n),
                Item::Str(id) => SortKey::Str(self.strings[id as usize].rank),
            };
            if compare_keys(&key, &best, asc) == Ordering::Less {
                best = key;
            }
        }
        best
    }
}

/// The first `need` documents of `set` ordered by this column alone (numbers, then strings,
/// then documents without a value; ties by internal id), read from the value index instead
/// of computing every document's key.
pub fn sorted_page(column: &Column, asc: bool, set: &RoaringBitmap, need: usize) -> Vec<u32> {
    let index = column.index();
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

/// A document's value for one sort criterion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SortKey {
    Num(f64),
    /// The string's rank in its column.
    Str(u32),
    Missing,
}

/// Numbers first, then strings, then missing values, whatever the direction.
pub fn compare_keys(a: &SortKey, b: &SortKey, asc: bool) -> Ordering {
    let group = |k: &SortKey| match k {
        SortKey::Num(_) => 0,
        SortKey::Str(_) => 1,
        SortKey::Missing => 2,
    };
    let by_group = group(a).cmp(&group(b));
    if by_group != Ordering::Equal {
        return by_group;
    }
    let within = match (a, b) {
        (SortKey::Num(x), SortKey::Num(y)) => x.total_cmp(y),
        (SortKey::Str(x), SortKey::Str(y)) => x.cmp(y),
        _ => Ordering::Equal,
    };
    if asc {
        within
    } else {
        within.reverse()
    }
}

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
pub struct Counts {
    numbers: Vec<(f64, u64)>,
    strings: Vec<(u32, u64)>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    candidates: u64,
}

/// Counts the documents of `candidates` holding each value of `column` (a document counts
/// once per value, however often it holds it). Large candidate sets are counted from the
/// value index (a bitmap intersection per string, one pass over the sorted numbers), small
/// ones document by document.
pub fn count(column: &Column, candidates: &RoaringBitmap) -> Counts {
    if candidates.len() as usize * 4 >= column.offsets.len() {
        return count_by_value(column, candidates);
    }
    count_by_document(column, candidates)
}

fn count_by_value(column: &Column, candidates: &RoaringBitmap) -> Counts {
    let index = column.index();
    let mut numbers: Vec<(f64, u64)> = Vec::new();
    let (mut min, mut max) = (None::<f64>, None::<f64>);
    let mut previous: Option<(f64, u32)> = None;
    for &(n, iid) in &index.numbers {
        if !candidates.contains(iid) {
            continue;
        }
        let same_value =
            previous.is_some_and(|(p, _)| p.total_cmp(&n).is_eq() || (p == 0.0 && n == 0.0));
        if previous == Some((n, iid)) {
            continue;
        }
        previous = Some((n, iid));
        min = Some(min.map_or(n, |m: f64| m.min(n)));
        max = Some(max.map_or(n, |m: f64| m.max(n)));
        match numbers.last_mut() {
            Some(last) if same_value => last.1 += 1,
            _ => numbers.push((n, 1)),
        }
    }
    let strings = index
        .strings
        .iter()
        .enumerate()
        .map(|(id, docs)| (id as u32, docs.intersection_len(candidates)))
        .filter(|(_, c)| *c > 0)
        .collect();
    Counts {
        numbers,
        strings,
        min,
        max,
        candidates: candidates.len(),
    }
}

fn count_by_document(column: &Column, candidates: &RoaringBitmap) -> Counts {
    let mut numbers: HashMap<u64, (f64, u64)> = HashMap::new();
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
                Item::Str(id) => {
                    // Two spellings of one string share an id; count the document once.
                    strings[id as usize] += 1;
                }
            }
        }
    }
    Counts {
        numbers: numbers.into_values().collect(),
        strings: strings
            .into_iter()
            .enumerate()
            .filter(|(_, c)| *c > 0)
            .map(|(id, c)| (id as u32, c))
            .collect(),
        min,
        max,
        candidates: candidates.len(),
    }
}

impl Counts {
    /// The distribution as Meilisearch prints it: numbers first, then strings, at most
    /// `max_values` in all. In alphabetical order numbers sort by their printed form when
    /// there are at most 3000 candidates and numerically beyond.
    pub fn distribution(
        mut self,
        column: &Column,
        max_values: usize,
        order: FacetOrder,
    ) -> Map<String, Value> {
        let strings = &column.strings;
        match order {
            FacetOrder::Alpha => {
                if self.candidates <= 3000 {
                    self.numbers.sort_by_cached_key(|(n, _)| number_key(*n));
                } else {
                    self.numbers.sort_by(|a, b| a.0.total_cmp(&b.0));
                }
                self.strings
                    .sort_unstable_by_key(|(id, _)| strings[*id as usize].rank);
            }
            FacetOrder::Count => {
                self.numbers
                    .sort_by(|a, b| b.1.cmp(&a.1).then(b.0.total_cmp(&a.0)));
                self.strings.sort_unstable_by(|a, b| {
                    b.1.cmp(&a.1)
                        .then(strings[b.0 as usize].rank.cmp(&strings[a.0 as usize].rank))
                });
            }
        }
        let mut out = Map::new();
        for (n, c) in self.numbers.iter().take(max_values) {
            out.insert(number_key(*n), Value::from(*c));
        }
        let room = max_values.saturating_sub(out.len());
        for (id, c) in self.strings.iter().take(room) {
            out.insert(strings[*id as usize].original.to_string(), Value::from(*c));
        }
        out
    }

    /// Facet search: the string values whose normalized form starts with `query` (or with a
    /// string within `typos` edits of it), with their counts, ordered and capped.
    pub fn search(
        mut self,
        column: &Column,
        query: Option<&str>,
        typos: u8,
        max_values: usize,
        order: FacetOrder,
    ) -> Vec<(String, u64)> {
        let strings = &column.strings;
        if let Some(q) = query {
            let q = search_form(q);
            self.strings.retain(|(id, _)| {
                let value = search_form(&strings[*id as usize].normalized);
                value.starts_with(q.as_str())
                    || (typos > 0 && prefix_distance(&q, &value) <= typos as usize)
            });
        }
        match order {
            FacetOrder::Alpha => self
                .strings
                .sort_unstable_by_key(|(id, _)| strings[*id as usize].rank),
            FacetOrder::Count => self.strings.sort_unstable_by(|a, b| {
                b.1.cmp(&a.1)
                    .then(strings[b.0 as usize].rank.cmp(&strings[a.0 as usize].rank))
            }),
        }
        self.strings
            .into_iter()
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
    use super::*;
    use serde_json::json;

    fn column(path: &str, docs: &[Value]) -> Column {
        let mut b = ColumnBuilder::new(path);
        for (i, d) in docs.iter().enumerate() {
            b.push(i as u32, d.as_object().unwrap());
        }
        b.finish()
    }

    fn all(n: u32) -> RoaringBitmap {
        (0..n).collect()
    }

    #[test]
    fn normalizes_case_and_compatibility_forms() {
        assert_eq!(normalize("  Élan Vital "), "e\u{301}lan vital");
        assert_eq!(normalize("E\u{301}LAN"), normalize("élan"));
        assert_eq!(normalize("ﬁne"), "fine");
        assert_eq!(search_form("ÅNGSTRÖM"), "angstrom");
        assert_eq!(search_form("Straße"), "straße");
    }

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
                compare_keys(&c.sort_key(*a, asc), &c.sort_key(*b, asc), asc).then(a.cmp(b))
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
            let a = count_by_value(&c, &set);
            let b = count_by_document(&c, &set);
            assert_eq!((a.min, a.max), (b.min, b.max));
            assert_eq!(
                a.distribution(&c, 100, FacetOrder::Count),
                b.distribution(&c, 100, FacetOrder::Count)
            );
        }
    }

    #[test]
    fn sort_keys_order_numbers_strings_missing() {
        let docs = [
            json!({"v": "b"}),
            json!({"v": [3, 1]}),
            json!({}),
            json!({"v": "A"}),
        ];
        let c = column("v", &docs);
        let mut ids: Vec<u32> = (0..4).collect();
        ids.sort_by(|a, b| compare_keys(&c.sort_key(*a, true), &c.sort_key(*b, true), true));
        assert_eq!(ids, [1, 3, 0, 2]);
        ids.sort_by(|a, b| compare_keys(&c.sort_key(*a, false), &c.sort_key(*b, false), false));
        assert_eq!(ids, [1, 0, 3, 2]);
        assert_eq!(c.sort_key(1, true), SortKey::Num(1.0));
        assert_eq!(c.sort_key(1, false), SortKey::Num(3.0));
    }
}
