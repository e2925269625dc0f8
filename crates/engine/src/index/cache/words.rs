//! The typo walks and splits of recent query words, per searcher generation, in two lots
//! bounded by count and bytes.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use super::CACHE_BYTES;
use crate::search::TypoCandidates;

/// How many query words [`Recent`] takes in before it starts a new lot (keeping the last one).
/// The bench's mixes walk about 1,300 words (PyPI and npm): at 512, a server cycling through
/// them found none of its walks again, and they were a fifth to a third of its engine time.
const RECENT_WORDS: usize = 2048;

/// How many bytes of keys and values [`Recent`] takes in before it starts a new lot: a word's
/// walk holds 1 KB (npm) to 1.8 KB (PyPI) on average, but a long prefix's, with its first
/// letter's variants completed, up to some tens of KB. Two caches of two lots: four of these
/// are the words' share of [`CACHE_BYTES`].
const RECENT_BYTES: usize = CACHE_BYTES / 32;

/// What recent query words cost to look up in the dictionary, for one searcher generation:
/// - the typo walk of a word for a budget, as a prefix or not (on PyPI, a 2-typo walk is a
///   fifth of the engine's time for two words);
/// - the split of a word into two that the most documents hold side by side (a phrase count
///   per split point).
///
/// Search-as-you-type sends every word but the last again with each keystroke, and common
/// words recur across users. Both depend on the dictionary alone, so they are kept for as
/// long as the searcher generation (a commit or a merge starts another).
#[derive(Default)]
pub(crate) struct WordCache {
    pub(crate) walks: Recent<(Box<str>, u8, bool), Arc<TypoCandidates>>,
    pub(crate) splits: Recent<Box<str>, Option<usize>>,
}

/// Values of one generation, in two lots of at most [`RECENT_WORDS`] keys and
/// [`RECENT_BYTES`] each: when the newer lot is full it becomes the older one and the oldest
/// lot is dropped, so a key used in either lot stays.
pub(crate) struct Recent<K, V> {
    generation: u64,
    newer: HashMap<K, V>,
    /// What the newer lot's keys and values hold (see [`Weigh`]).
    newer_bytes: usize,
    older: HashMap<K, V>,
}

/// About how many bytes a key or value of [`Recent`] holds, its heap included.
pub(crate) trait Weigh {
    fn bytes(&self) -> usize;
}

impl Weigh for (Box<str>, u8, bool) {
    fn bytes(&self) -> usize {
        self.0.bytes() + 8
    }
}

impl<K, V> Default for Recent<K, V> {
    fn default() -> Self {
        Recent {
            generation: 0,
            newer: HashMap::new(),
            newer_bytes: 0,
            older: HashMap::new(),
        }
    }
}

impl<K: Eq + Hash + Clone + Weigh, V: Clone + Weigh> Recent<K, V> {
    pub(crate) fn get<Q>(&mut self, generation: u64, key: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        if generation != self.generation {
            return None;
        }
        if let Some(v) = self.newer.get(key) {
            return Some(v.clone());
        }
        let (k, v) = self.older.remove_entry(key)?;
        self.insert(k, v.clone());
        Some(v)
    }

    /// Keeps `value` unless a newer generation is held (an older reader computes its own).
    pub(crate) fn put(&mut self, generation: u64, key: K, value: V) {
        if generation < self.generation {
            return;
        }
        if generation > self.generation {
            *self = Recent {
                generation,
                ..Recent::default()
            };
        }
        self.insert(key, value);
    }

    fn insert(&mut self, key: K, value: V) {
        if self.newer.len() >= RECENT_WORDS || self.newer_bytes >= RECENT_BYTES {
            self.older = std::mem::take(&mut self.newer);
            self.newer_bytes = 0;
        }
        self.newer_bytes += key.bytes() + value.bytes();
        self.newer.insert(key, value);
    }
}

impl Weigh for Box<str> {
    fn bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.len()
    }
}

impl Weigh for Option<usize> {
    fn bytes(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}

impl Weigh for Arc<TypoCandidates> {
    fn bytes(&self) -> usize {
        let list = |l: &[String]| -> usize {
            std::mem::size_of::<Vec<String>>()
                + l.iter()
                    .map(|w| std::mem::size_of::<String>() + w.capacity())
                    .sum::<usize>()
        };
        std::mem::size_of::<TypoCandidates>()
            + list(&self.one)
            + list(&self.two)
            + self.variants.iter().map(|v| list(v)).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Weigh for u32 {
        fn bytes(&self) -> usize {
            4
        }
    }

    impl Weigh for Vec<u8> {
        fn bytes(&self) -> usize {
            self.len()
        }
    }

    /// A lot holding [`RECENT_BYTES`] starts another, however few its keys.
    #[test]
    fn recent_lots_are_bounded_by_bytes() {
        let mut r: Recent<u32, Vec<u8>> = Recent::default();
        let big = vec![0u8; RECENT_BYTES / 4];
        for k in 0..4 {
            r.put(1, k, big.clone());
        }
        assert_eq!(r.newer.len(), 4);
        r.put(1, 4, big.clone());
        assert_eq!((r.newer.len(), r.older.len()), (1, 4));
        r.put(1, 5, vec![1]);
        for k in 6..10 {
            r.put(1, k, big.clone());
        }
        // The lot before last is dropped; keys 0-3 are gone.
        assert_eq!(r.get(1, &0), None);
        assert_eq!(r.get(1, &5), Some(vec![1]));
        assert_eq!(r.older.len() + r.newer.len(), 6);
    }

    #[test]
    fn recent_keeps_two_lots_of_one_generation() {
        let mut r: Recent<u32, u32> = Recent::default();
        r.put(3, 0, 100);
        assert_eq!(r.get(3, &0), Some(100));
        // Another generation's reader neither sees nor replaces it.
        assert_eq!(r.get(2, &0), None);
        r.put(2, 0, 7);
        assert_eq!(r.get(3, &0), Some(100));
        // A full lot becomes the older one; a key used from it moves to the newer lot, and
        // the lot before is dropped.
        for k in 1..RECENT_WORDS as u32 {
            r.put(3, k, k);
        }
        r.put(3, 9999, 9999);
        assert_eq!(r.get(3, &0), Some(100));
        for k in 10_000..10_000 + RECENT_WORDS as u32 {
            r.put(3, k, k);
        }
        assert_eq!(r.get(3, &0), Some(100));
        assert_eq!(r.get(3, &1), None);
        // A newer generation starts afresh.
        r.put(4, 5, 5);
        assert_eq!(r.get(4, &0), None);
        assert_eq!(r.get(4, &5), Some(5));
    }
}
