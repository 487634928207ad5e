//! A graph's node names → their indices, laid out for how FX names nodes.
//!
//! FX names a node after its op and numbers the repeats (`mul`, `mul_1`, … `mul_4150`), and a
//! node mostly reads values made a few lines above it. A hash table of 100k names sends each
//! lookup to a random slot: once the table outgrows the cache (a 415-layer graph's did, an
//! 83-layer one's did not), every argument read while parsing missed it, and parsing grew
//! faster than the graph. Here a numbered name is its base (a few hundred per graph, always
//! cached) and a dense array by number, so nearby nodes' names sit side by side; other names
//! go to a plain table.

use rustc_hash::FxHashMap;

/// Node name → index in its graph. A later insert of a name replaces the earlier one.
#[derive(Debug, Clone, Default)]
pub struct NameIndex {
    /// `base_k` by base, then by `k`: the node's index + 1 (0: no node of that name).
    numbered: FxHashMap<Box<str>, Vec<u32>>,
    /// Every other name, and numbers that would make the arrays too large.
    other: FxHashMap<Box<str>, usize>,
    len: usize,
    /// Slots of all the arrays together.
    slots: usize,
}

/// The most slots the arrays may hold for `len` names: numbers far beyond the names held are
/// not FX's counter but part of a name, and must not size an array (`x_4000000000`, or many
/// bases each numbered from 4096 up), so memory stays linear in the names whatever the input.
fn slot_limit(len: usize) -> usize {
    4 * len + 4096
}

/// `mul_12` → (`mul`, 12); `None` for a name that is not `base_number` in FX's way (no
/// leading zero, so `x_01` and `x_1` stay two names).
fn split(name: &str) -> Option<(&str, usize)> {
    let (base, k) = name.rsplit_once('_')?;
    let ok = !k.is_empty() && k.len() <= 9 && k.bytes().all(|b| b.is_ascii_digit());
    if !ok || (k.len() > 1 && k.starts_with('0')) {
        return None;
    }
    Some((base, k.parse().ok()?))
}

impl NameIndex {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn get(&self, name: &str) -> Option<usize> {
        if let Some((base, k)) = split(name)
            && let Some(&slot) = self.numbered.get(base).and_then(|v| v.get(k))
            && slot != 0
        {
            return Some(slot as usize - 1);
        }
        self.other.get(name).copied()
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn insert(&mut self, name: &str, index: usize) {
        self.remove(name);
        self.len += 1;
        if let Some((base, k)) = split(name)
            && let Ok(slot) = u32::try_from(index + 1)
        {
            let have = self.numbered.get(base).map_or(0, Vec::len);
            let grow = (k + 1).saturating_sub(have);
            if self.slots + grow <= slot_limit(self.len) {
                self.slots += grow;
                let v = match self.numbered.get_mut(base) {
                    Some(v) => v,
                    None => self.numbered.entry(base.into()).or_default(),
                };
                if v.len() <= k {
                    v.resize(k + 1, 0);
                }
                v[k] = slot;
                return;
            }
        }
        self.other.insert(name.into(), index);
    }

    pub fn remove(&mut self, name: &str) -> Option<usize> {
        let dense = split(name).and_then(|(base, k)| self.numbered.get_mut(base)?.get_mut(k));
        let was = match dense {
            Some(slot) if *slot != 0 => Some(std::mem::take(slot) as usize - 1),
            _ => self.other.remove(name),
        };
        self.len -= usize::from(was.is_some());
        was
    }

    pub fn clear(&mut self) {
        *self = NameIndex::default();
    }

    /// Every (name, index), sorted by name.
    pub fn entries(&self) -> Vec<(String, usize)> {
        let dense = self.numbered.iter().flat_map(|(base, v)| {
            v.iter()
                .enumerate()
                .filter(|(_, s)| **s != 0)
                .map(move |(k, s)| (format!("{base}_{k}"), *s as usize - 1))
        });
        let other = self.other.iter().map(|(n, i)| (n.to_string(), *i));
        let mut all: Vec<(String, usize)> = dense.chain(other).collect();
        all.sort_unstable();
        all
    }
}

/// Equal when they hold the same names at the same indices, however each laid them out.
impl PartialEq for NameIndex {
    fn eq(&self, other: &NameIndex) -> bool {
        self.len == other.len && self.entries() == other.entries()
    }
}

impl<'a> FromIterator<(&'a str, usize)> for NameIndex {
    fn from_iter<I: IntoIterator<Item = (&'a str, usize)>>(iter: I) -> Self {
        let mut n = NameIndex::default();
        for (name, i) in iter {
            n.insert(name, i);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_and_other_names_are_found_replaced_and_removed() {
        let mut n = NameIndex::default();
        for (i, name) in ["x", "mul", "mul_1", "mul_12", "x_01", "l__self___w_0", "_3"]
            .into_iter()
            .enumerate()
        {
            n.insert(name, i);
        }
        assert_eq!(n.len(), 7);
        assert_eq!(n.get("mul_12"), Some(3));
        assert_eq!(n.get("x_01"), Some(4));
        assert_eq!(n.get("x_1"), None, "x_01 is not x_1");
        assert_eq!(n.get("mul_2"), None, "a gap in the numbers");
        assert_eq!(n.get("mul_99"), None, "past the array");
        assert_eq!(n.get("_3"), Some(6));
        n.insert("mul_1", 9);
        assert_eq!((n.get("mul_1"), n.len()), (Some(9), 7));
        assert_eq!(n.remove("mul_1"), Some(9));
        assert_eq!(n.remove("mul_1"), None);
        assert_eq!(n.remove("x"), Some(0));
        assert_eq!((n.get("mul_1"), n.get("x"), n.len()), (None, None, 5));
    }

    #[test]
    fn many_bases_numbered_high_do_not_grow_memory_faster_than_the_names() {
        let mut n = NameIndex::default();
        let names: Vec<String> = (0..5000)
            .map(|i| format!("b{i}_{}", 4 * i + 4096))
            .collect();
        for (i, name) in names.iter().enumerate() {
            n.insert(name, i);
        }
        assert!(n.slots <= slot_limit(n.len()), "{} slots", n.slots);
        assert!(names.iter().enumerate().all(|(i, s)| n.get(s) == Some(i)));
        let same: NameIndex = names
            .iter()
            .enumerate()
            .map(|(i, s)| (s.as_str(), i))
            .collect();
        assert_eq!(n, same);
    }

    #[test]
    fn a_huge_number_in_a_name_does_not_size_an_array() {
        let mut n = NameIndex::default();
        n.insert("x_999999999", 0);
        n.insert("y_4294967296000", 1);
        assert_eq!(n.get("x_999999999"), Some(0));
        assert_eq!(n.get("y_4294967296000"), Some(1));
        assert!(n.numbered.values().all(|v| v.len() < 10_000));
        assert_eq!(n.remove("x_999999999"), Some(0));
        assert_eq!(n.len(), 1);
    }
}
