//! Module paths, interned: `layers.3.attn` is a small id, its parent and segments are cheap.

use rustc_hash::FxHashMap as HashMap;

pub type ModId = u32;

/// The root module, `""`.
pub const ROOT: ModId = 0;

#[derive(Debug, Clone)]
pub struct Paths {
    list: Vec<String>,
    parent: Vec<ModId>,
    /// Segments below the root, per module.
    depth: Vec<u32>,
    /// The path with its layer indices left out (`layers.#.attn`), interned: modules of one
    /// kind share it. A 400-layer model asks this of every frame of every line.
    kind: Vec<u32>,
    kinds: HashMap<String, u32>,
    by_path: HashMap<String, ModId>,
}

impl Default for Paths {
    fn default() -> Self {
        Paths {
            list: vec![String::new()],
            parent: vec![ROOT],
            depth: vec![0],
            kind: vec![0],
            kinds: HashMap::from_iter([(String::new(), 0)]),
            by_path: HashMap::from_iter([(String::new(), ROOT)]),
        }
    }
}

/// A layer index segment (`3` of `layers.3`).
pub fn is_index(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

impl Paths {
    pub fn intern(&mut self, path: &str) -> ModId {
        if let Some(&id) = self.by_path.get(path) {
            return id;
        }
        let parent = match path.rfind('.') {
            Some(at) => self.intern(&path[..at]),
            None => ROOT,
        };
        let id = self.list.len() as ModId;
        let kind: Vec<&str> = path
            .split('.')
            .map(|s| if is_index(s) { "#" } else { s })
            .collect();
        let kind = kind.join(".");
        let next = self.kinds.len() as u32;
        let kind = *self.kinds.entry(kind).or_insert(next);
        self.kind.push(kind);
        self.depth.push(self.depth[parent as usize] + 1);
        self.list.push(path.to_string());
        self.parent.push(parent);
        self.by_path.insert(path.to_string(), id);
        id
    }

    /// `f.y` (`y` under the root).
    pub fn child(&mut self, f: ModId, y: &str) -> ModId {
        let path = match self.path(f) {
            "" => y.to_string(),
            p => format!("{p}.{y}"),
        };
        self.intern(&path)
    }

    pub fn intern_segments(&mut self, segs: &[String]) -> ModId {
        self.intern(&segs.join("."))
    }

    pub fn path(&self, id: ModId) -> &str {
        &self.list[id as usize]
    }

    pub fn parent(&self, id: ModId) -> ModId {
        self.parent[id as usize]
    }

    /// The last segment (`q_proj` of `layers.0.attn.q_proj`), `""` for the root.
    pub fn name(&self, id: ModId) -> &str {
        let p = self.path(id);
        p.rsplit('.').next().unwrap_or(p)
    }

    pub fn depth(&self, id: ModId) -> usize {
        self.depth[id as usize] as usize
    }

    /// The kind of module `id` is: equal for `layers.0.attn` and `layers.7.attn`.
    pub fn kind(&self, id: ModId) -> u32 {
        self.kind[id as usize]
    }

    /// `id`'s ancestor `depth` segments deep (`id` itself when it is no deeper).
    pub fn ancestor(&self, mut id: ModId, depth: usize) -> ModId {
        let mut d = self.depth(id);
        while d > depth {
            id = self.parent(id);
            d -= 1;
        }
        id
    }

    pub fn segments(&self, id: ModId) -> Vec<&str> {
        let p = self.path(id);
        if p.is_empty() {
            Vec::new()
        } else {
            p.split('.').collect()
        }
    }

    /// The deepest module containing both.
    pub fn common(&self, mut a: ModId, mut b: ModId) -> ModId {
        let (mut da, mut db) = (self.depth(a), self.depth(b));
        while da > db {
            a = self.parent(a);
            da -= 1;
        }
        while db > da {
            b = self.parent(b);
            db -= 1;
        }
        while a != b {
            a = self.parent(a);
            b = self.parent(b);
        }
        a
    }

    /// `a` is `b` or inside it.
    pub fn within(&self, mut a: ModId, b: ModId) -> bool {
        loop {
            if a == b {
                return true;
            }
            if a == ROOT {
                return false;
            }
            a = self.parent(a);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_and_common_ancestors() {
        let mut p = Paths::default();
        let q = p.intern("layers.0.attn.q_proj");
        let k = p.intern("layers.0.attn.k_proj");
        let m = p.intern("layers.1.mlp");
        assert_eq!(p.path(p.common(q, k)), "layers.0.attn");
        assert_eq!(p.path(p.common(q, m)), "layers");
        assert_eq!(p.common(q, ROOT), ROOT);
        assert_eq!(p.name(q), "q_proj");
        assert_eq!(p.depth(q), 4);
        let l0 = p.intern("layers.0");
        assert!(p.within(q, l0));
        assert!(!p.within(m, l0));
    }
}
