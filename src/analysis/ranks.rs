//! The rank matrix of a launch: every graph file (the Dynamo graph, then each phase's passes) ×
//! every rank, with node counts, and which ranks compiled a graph that differs from the
//! majority's (docs/formats.md §1.7).
//!
//! "Differs" is structural and blind to node names: a rank that took another branch renumbers
//! every node after it (`view_3` becomes `view_4`) without the graphs differing past that
//! branch. The fingerprint (`graph_facts::fingerprint`) is the multiset of (node label, labels of its input nodes), a
//! label being the op for placeholders, `get_attr` and output and the target otherwise.

use super::graph_facts::GraphFacts;
use crate::model::index::DebugIndex;
use crate::model::launch::Launch;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The phase name of a model's Dynamo graph in the matrix.
pub const DYNAMO: &str = "dynamo";

#[derive(Debug, Clone, Serialize)]
pub struct RankMatrix {
    /// The launch's name (`run_2026_11_29_11_47_50_912229`).
    pub run: String,
    pub ranks: Vec<u32>,
    /// Each rank's run folder name (`"2": "run_…-pid_4242-rank_2"`).
    pub folders: std::collections::BTreeMap<String, String>,
    pub passes: Vec<RankRow>,
}

/// One graph file as every rank wrote it.
#[derive(Debug, Clone, Serialize)]
pub struct RankRow {
    pub model: String,
    /// `forward`, `backward`, …, or [`DYNAMO`] for `dynamo_out_graph.txt`.
    pub phase: String,
    pub pass: u32,
    pub name: String,
    /// Node counts by rank (`"0": 22`), for the ranks whose file is parsed.
    pub nodes: std::collections::BTreeMap<String, usize>,
    /// Ranks whose graph differs from the majority's, or that lack this file.
    pub differs: Vec<u32>,
    /// Ranks that have no such file.
    pub missing: Vec<u32>,
    /// The file of each rank, in `ranks` order (`None`: missing).
    #[serde(skip)]
    pub paths: Vec<Option<PathBuf>>,
}

impl RankMatrix {
    /// The first row where a rank differs (what "rank 2 diverged at pass 000" names).
    pub fn first_divergence(&self) -> Option<&RankRow> {
        self.passes.iter().find(|r| !r.differs.is_empty())
    }

    pub fn column(&self, rank: u32) -> Option<usize> {
        self.ranks.iter().position(|&r| r == rank)
    }
}

impl RankRow {
    pub fn differs_at(&self, rank: u32) -> bool {
        self.differs.contains(&rank)
    }

    /// `model__0 forward 000 graph`.
    pub fn title(&self) -> String {
        format!(
            "{} {} {:03} {}",
            self.model, self.phase, self.pass, self.name
        )
    }

    /// `model__0 forward 000 graph: rank 2 (missing: 3)`, when some rank differs.
    pub fn differs_text(&self) -> Option<String> {
        if self.differs.is_empty() {
            return None;
        }
        let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
        let changed: Vec<u32> = self
            .differs
            .iter()
            .copied()
            .filter(|r| !self.missing.contains(r))
            .collect();
        let mut s = format!("{}:", self.title());
        if !changed.is_empty() {
            s.push_str(&format!(" rank {}", list(&changed)));
        }
        if !self.missing.is_empty() {
            s.push_str(&format!(" (missing: {})", list(&self.missing)));
        }
        Some(s)
    }
}

/// The matrix of `launch`. A rank's cell has its file's node count once `facts` has it; a rank
/// whose file is not parsed yet counts for neither side.
pub fn matrix(
    index: &DebugIndex,
    launch: &Launch,
    facts: &HashMap<PathBuf, GraphFacts>,
) -> RankMatrix {
    let ranks = launch.rank_numbers();
    let mut rows = Rows::default();
    for (col, lr) in launch.ranks.iter().enumerate() {
        let Some(run) = index.runs.get(lr.run) else {
            continue;
        };
        for m in &run.models {
            if let Some(d) = &m.dynamo_graph {
                let key = RowKey {
                    model: m.name.clone(),
                    phase: DYNAMO.to_string(),
                    pass: 0,
                    name: "dynamo_out_graph".into(),
                };
                rows.put(key, col, ranks.len(), d);
            }
            for ph in &m.phases {
                for p in &ph.passes {
                    let key = RowKey {
                        model: m.name.clone(),
                        phase: ph.name.clone(),
                        pass: p.index,
                        name: p.name.clone(),
                    };
                    rows.put(key, col, ranks.len(), &p.path);
                }
            }
        }
    }
    let passes = rows
        .in_order()
        .into_iter()
        .map(|(k, paths)| row(k.model, k.phase, k.pass, k.name, paths, &ranks, facts))
        .collect();
    let folders = launch
        .ranks
        .iter()
        .filter_map(|lr| Some((lr.rank.to_string(), index.runs.get(lr.run)?.name.clone())))
        .collect();
    RankMatrix {
        run: launch.name.clone(),
        ranks,
        folders,
        passes,
    }
}

/// Where a graph file stands in its run: the same in every rank.
#[derive(Clone, PartialEq, Eq, Hash)]
struct RowKey {
    model: String,
    phase: String,
    pass: u32,
    name: String,
}

/// The rows as the ranks list them: models and their phases in the order they are first seen
/// (the index's order, rank by rank), passes by number.
#[derive(Default)]
struct Rows {
    at: HashMap<RowKey, usize>,
    rows: Vec<(RowKey, Vec<Option<PathBuf>>)>,
    models: HashMap<String, usize>,
    phases: HashMap<(String, String), usize>,
}

impl Rows {
    fn put(&mut self, key: RowKey, col: usize, cols: usize, path: &Path) {
        let n = self.models.len();
        self.models.entry(key.model.clone()).or_insert(n);
        let n = self.phases.len();
        self.phases
            .entry((key.model.clone(), key.phase.clone()))
            .or_insert(n);
        let i = *self.at.entry(key.clone()).or_insert_with(|| {
            self.rows.push((key, vec![None; cols]));
            self.rows.len() - 1
        });
        self.rows[i].1[col] = Some(path.to_path_buf());
    }

    fn in_order(mut self) -> Vec<(RowKey, Vec<Option<PathBuf>>)> {
        let (models, phases) = (&self.models, &self.phases);
        self.rows.sort_by_key(|(k, _)| {
            (
                models[&k.model],
                phases[&(k.model.clone(), k.phase.clone())],
                k.pass,
            )
        });
        self.rows
    }
}

fn row(
    model: String,
    phase: String,
    pass: u32,
    name: String,
    paths: Vec<Option<PathBuf>>,
    ranks: &[u32],
    facts: &HashMap<PathBuf, GraphFacts>,
) -> RankRow {
    let mut nodes = std::collections::BTreeMap::new();
    let mut prints: Vec<(u32, u64)> = Vec::new();
    let mut missing = Vec::new();
    for (p, &r) in paths.iter().zip(ranks) {
        match p {
            None => missing.push(r),
            Some(p) => {
                if let Some(f) = facts.get(p) {
                    nodes.insert(r.to_string(), f.nodes);
                    prints.push((r, f.fingerprint));
                }
            }
        }
    }
    let mut differs = majority_differs(&prints);
    differs.extend(&missing);
    differs.sort_unstable();
    RankRow {
        model,
        phase,
        pass,
        name,
        nodes,
        differs,
        missing,
        paths,
    }
}

/// Ranks whose fingerprint is not the most common one; on a tie the lowest rank's wins.
pub fn majority_differs(prints: &[(u32, u64)]) -> Vec<u32> {
    let mut counts: HashMap<u64, usize> = HashMap::new();
    for (_, fp) in prints {
        *counts.entry(*fp).or_default() += 1;
    }
    let Some(top) = counts.values().max().copied() else {
        return Vec::new();
    };
    let mut by_rank = prints.to_vec();
    by_rank.sort_unstable();
    let majority = by_rank
        .iter()
        .find(|(_, fp)| counts[fp] == top)
        .map(|(_, fp)| *fp);
    by_rank
        .iter()
        .filter(|(_, fp)| Some(*fp) != majority)
        .map(|(r, _)| *r)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_majority_wins_and_a_tie_goes_to_the_lowest_rank() {
        assert_eq!(majority_differs(&[(0, 1), (1, 1), (2, 9), (3, 1)]), vec![2]);
        assert_eq!(majority_differs(&[(0, 5), (1, 7)]), vec![1]);
        assert_eq!(majority_differs(&[(1, 7), (0, 5)]), vec![1]);
        assert_eq!(majority_differs(&[(0, 3), (1, 8), (2, 8)]), vec![0]);
        assert!(majority_differs(&[]).is_empty());
    }
}
