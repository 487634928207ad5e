//! The module tree of one graph: every module that holds a node, with its ancestors, children in
//! the order their first node appears, and node counts, for a folded view to lay out.

use rustc_hash::FxHashMap as HashMap;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModuleEntry {
    /// Dotted path, `""` for the root.
    pub path: String,
    /// Last segment (`q_proj`), `""` for the root.
    pub name: String,
    pub depth: usize,
    /// Index in [`ModuleTree::modules`]; `None` for the root.
    pub parent: Option<usize>,
    /// Indices in [`ModuleTree::modules`], in order of first node.
    pub children: Vec<usize>,
    /// Nodes placed directly in this module.
    pub own_nodes: usize,
    /// Nodes in this module and everything below it.
    pub total_nodes: usize,
    /// The first node (index in the graph's `nodes`) in this module or below.
    pub first_node: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ModuleTree {
    /// The root first, then every module in pre-order.
    pub modules: Vec<ModuleEntry>,
}

impl ModuleTree {
    /// `paths[i]` is the module of node `i`.
    pub fn build<'a>(paths: impl IntoIterator<Item = &'a str>) -> ModuleTree {
        let mut entries: Vec<ModuleEntry> = vec![entry("", None, 0)];
        let mut by_path: HashMap<&str, usize> = HashMap::from_iter([("", 0)]);
        for (node, path) in paths.into_iter().enumerate() {
            let leaf = ensure(&mut entries, &mut by_path, path, node);
            entries[leaf].own_nodes += 1;
            let mut at = Some(leaf);
            while let Some(i) = at {
                entries[i].total_nodes += 1;
                at = entries[i].parent;
            }
        }
        // Pre-order, children by first node.
        for i in 0..entries.len() {
            let mut kids = std::mem::take(&mut entries[i].children);
            kids.sort_by_key(|&k| entries[k].first_node);
            entries[i].children = kids;
        }
        let mut order = Vec::with_capacity(entries.len());
        let mut stack = vec![0];
        while let Some(i) = stack.pop() {
            order.push(i);
            stack.extend(entries[i].children.iter().rev());
        }
        let mut new_index = vec![0; entries.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new;
        }
        let modules = order
            .iter()
            .map(|&old| {
                let mut e = entries[old].clone();
                e.parent = e.parent.map(|p| new_index[p]);
                e.children = e.children.iter().map(|&c| new_index[c]).collect();
                e
            })
            .collect();
        ModuleTree { modules }
    }

    pub fn find(&self, path: &str) -> Option<usize> {
        self.modules.iter().position(|m| m.path == path)
    }

    pub fn root(&self) -> &ModuleEntry {
        &self.modules[0]
    }
}

fn entry(path: &str, parent: Option<usize>, first_node: usize) -> ModuleEntry {
    ModuleEntry {
        path: path.to_string(),
        name: path.rsplit('.').next().unwrap_or(path).to_string(),
        depth: if path.is_empty() {
            0
        } else {
            path.matches('.').count() + 1
        },
        parent,
        children: Vec::new(),
        own_nodes: 0,
        total_nodes: 0,
        first_node,
    }
}

fn ensure<'a>(
    entries: &mut Vec<ModuleEntry>,
    by_path: &mut HashMap<&'a str, usize>,
    path: &'a str,
    node: usize,
) -> usize {
    if let Some(&i) = by_path.get(path) {
        return i;
    }
    let parent_path = path.rfind('.').map_or("", |at| &path[..at]);
    let parent = ensure(entries, by_path, parent_path, node);
    let i = entries.len();
    entries.push(entry(path, Some(parent), node));
    entries[parent].children.push(i);
    by_path.insert(path, i);
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_order() {
        let t = ModuleTree::build(["", "layers.0.attn", "layers.0.mlp", "layers.1.attn", "norm"]);
        let paths: Vec<&str> = t.modules.iter().map(|m| m.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "",
                "layers",
                "layers.0",
                "layers.0.attn",
                "layers.0.mlp",
                "layers.1",
                "layers.1.attn",
                "norm"
            ]
        );
        assert_eq!(t.root().total_nodes, 5);
        assert_eq!(t.root().own_nodes, 1);
        let l0 = t.find("layers.0").unwrap();
        assert_eq!(t.modules[l0].total_nodes, 2);
        assert_eq!(t.modules[l0].children.len(), 2);
        assert_eq!(t.modules[t.modules[l0].parent.unwrap()].path, "layers");
    }
}
