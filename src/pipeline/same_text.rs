//! Files that are byte for byte the same are read into one result: a pass that changed nothing
//! writes its input again (5 of the 11 backward passes of a 415-layer training step are one
//! file, 3 another), and each copy parsed on its own was 100 MB of nodes held once more, or
//! a second parse for the same facts.

use crate::model::fx::FxFile;
use crate::sources::{load, read};
use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// A file's length, the hash of its text (keyed afresh for each set: no file can be made to
/// collide with another) and how it was decoded (two files differing only in bytes that are
/// not UTF-8 read as the same text, with different problems).
type Key = (usize, u64, bool, bool);

/// Parses shared by the passes of one phase: one per distinct text.
#[derive(Default)]
pub struct SharedParses {
    hasher: RandomState,
    /// A text being parsed by one thread is waited for by another reading the same text.
    slots: Mutex<HashMap<Key, Arc<OnceLock<Arc<FxFile>>>>>,
}

/// The files of `paths` grouped by text (indices into `paths`, each group in order, groups by
/// first member): work done once per group is done once per distinct text, and a group is
/// a unit of parallel work, where files sharing one slot of [`SharedParses`] would wait on
/// each other. A file that cannot be read is a group of its own. The texts are read in parallel
/// and dropped once hashed.
pub fn groups<P: AsRef<Path> + Sync>(paths: &[P]) -> Vec<Vec<usize>> {
    use rayon::prelude::*;
    let hasher = RandomState::new();
    let keys: Vec<Option<Key>> = paths
        .par_iter()
        .map(|p| {
            read::read_text(p.as_ref())
                .ok()
                .map(|t| key_of(&hasher, &t))
        })
        .collect();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_of: HashMap<Key, usize> = HashMap::new();
    for (i, key) in keys.into_iter().enumerate() {
        match key.map(|k| *group_of.entry(k).or_insert(groups.len())) {
            Some(g) if g < groups.len() => groups[g].push(i),
            _ => groups.push(vec![i]),
        }
    }
    groups
}

fn key_of(hasher: &RandomState, text: &read::TextFile) -> Key {
    (
        text.text.len(),
        hasher.hash_one(text.text.as_bytes()),
        text.binary,
        text.lossy,
    )
}

impl SharedParses {
    /// The parse of `path`, the one an earlier pass with the same text got when there is one.
    pub fn graph(&self, path: &Path) -> crate::error::Result<Arc<FxFile>> {
        let text = read::read_text(path)?;
        let key = key_of(&self.hasher, &text);
        let slot = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_default()
            .clone();
        Ok(slot
            .get_or_init(|| Arc::new(load::graph_of_text(text)))
            .clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_is_parsed_once_and_another_apart() {
        let dir = tempfile::tempdir().unwrap();
        let graph = |name: &str, op: &str| {
            let p = dir.path().join(name);
            let text = format!(
                "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[2]\"):\n        y: \"f32[2]\" = torch.ops.aten.{op}.default(x);  x = None\n        return (y,)\n"
            );
            std::fs::write(&p, text).unwrap();
            p
        };
        let (a, b, c) = (
            graph("000.txt", "relu"),
            graph("001.txt", "relu"),
            graph("002.txt", "neg"),
        );
        let shared = SharedParses::default();
        let (fa, fb, fc) = (
            shared.graph(&a).unwrap(),
            shared.graph(&b).unwrap(),
            shared.graph(&c).unwrap(),
        );
        assert!(Arc::ptr_eq(&fa, &fb));
        assert!(!Arc::ptr_eq(&fa, &fc));
        assert_eq!(fc.node_count(), 3);
        assert!(shared.graph(&dir.path().join("missing.txt")).is_err());
        let missing = dir.path().join("missing.txt");
        assert_eq!(
            groups(&[&a, &c, &missing, &b, &missing]),
            [vec![0, 3], vec![1], vec![2], vec![4]]
        );
    }
}
