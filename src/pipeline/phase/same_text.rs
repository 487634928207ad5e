//! Passes whose files are byte for byte the same share one parse: a pass that changed nothing
//! writes its input again (5 of the 11 backward passes of a 415-layer training step are one
//! file, 3 another), and each copy parsed on its own was 100 MB of nodes held once more.

use crate::model::fx::FxFile;
use crate::sources::{load, read};
use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// A file's length and the hash of its text (keyed afresh for each phase: no file can be made
/// to collide with another).
type Key = (usize, u64);

#[derive(Default)]
pub(super) struct SharedParses {
    hasher: RandomState,
    /// A pass parsed by one thread is waited for by another reading the same text.
    slots: Mutex<HashMap<Key, Arc<OnceLock<Arc<FxFile>>>>>,
}

impl SharedParses {
    /// The parse of `path`, the one an earlier pass with the same text got when there is one.
    pub(super) fn graph(&self, path: &Path) -> crate::error::Result<Arc<FxFile>> {
        let text = read::read_text(path)?;
        let key = (text.text.len(), self.hasher.hash_one(text.text.as_bytes()));
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
    }
}
