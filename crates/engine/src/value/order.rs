//! The one order of values (see the [module doc](super)).

use std::cmp::Ordering;

/// A document's value for one sort criterion. `S` is what strings compare by: the normal
/// form itself, or its rank among a column's normal forms (which orders the same way).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Key<S> {
    Num(f64),
    Str(S),
    Missing,
}

impl<S> Key<S> {
    fn group(&self) -> u8 {
        match self {
            Key::Num(_) => 0,
            Key::Str(_) => 1,
            Key::Missing => 2,
        }
    }
}

/// Numbers first, then strings, then missing values, whatever the direction; `asc` orders
/// within a group.
pub fn compare<S: Ord>(a: &Key<S>, b: &Key<S>, asc: bool) -> Ordering {
    let by_group = a.group().cmp(&b.group());
    if by_group != Ordering::Equal {
        return by_group;
    }
    let within = match (a, b) {
        (Key::Num(x), Key::Num(y)) => x.total_cmp(y),
        (Key::Str(x), Key::Str(y)) => x.cmp(y),
        _ => Ordering::Equal,
    };
    if asc {
        within
    } else {
        within.reverse()
    }
}

/// The key of a document holding `keys`: the first of them in the order (`Missing` for none).
pub fn best<S: Ord>(keys: impl IntoIterator<Item = Key<S>>, asc: bool) -> Key<S> {
    let mut best = Key::Missing;
    for key in keys {
        if compare(&key, &best, asc) == Ordering::Less {
            best = key;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_numbers_then_strings_then_missing_in_both_directions() {
        let mut keys = vec![
            Key::Str("b"),
            Key::Missing,
            Key::Num(2.0),
            Key::Str("a"),
            Key::Num(10.0),
        ];
        keys.sort_by(|a, b| compare(a, b, true));
        assert_eq!(
            keys,
            [
                Key::Num(2.0),
                Key::Num(10.0),
                Key::Str("a"),
                Key::Str("b"),
                Key::Missing
            ]
        );
        keys.sort_by(|a, b| compare(a, b, false));
        assert_eq!(
            keys,
            [
                Key::Num(10.0),
                Key::Num(2.0),
                Key::Str("b"),
                Key::Str("a"),
                Key::Missing
            ]
        );
    }

    #[test]
    fn test_best_is_the_first_in_the_direction() {
        let keys = [Key::Str(1u32), Key::Num(3.0), Key::Num(1.0)];
        assert_eq!(best(keys, true), Key::Num(1.0));
        assert_eq!(best(keys, false), Key::Num(3.0));
        assert_eq!(best([Key::<u32>::Missing], true), Key::Missing);
        assert_eq!(best([Key::Str(1u32), Key::Str(4)], false), Key::Str(4));
    }
}
