//! TorchAir/npugraph_ex npy data dumps (docs/formats.md §3.1):
//! `worldsize<W>_global_rank<R>/graph_<K>/<step>/<node>-<target>.<INPUT|OUTPUT>.<i>[.<j>].<ts>.npy`.
//! File names are parsed from the right, since node names and targets may hold `.` and `-`.
//!
//! And npugraph_ex's own tensor dump (§3.2, `dump_tensor_data`): one `torch.save` per tensor
//! node and replay, `worldsize<W>_global_rank<R>/<node>_device_<dev>_<k>.pt`, read as the
//! outputs of graph `device_<dev>` at step `k` (the replay counter is the step).

use super::{names, vfs};
use crate::model::tensor::{
    DumpCatalog, DumpFile, DumpName, GraphDump, Io, NodeDump, RankDump, StepDump,
};
use regex::Regex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// Parses one dump file name; `None` for anything else.
pub fn parse_name(file: &str) -> Option<DumpName> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(.+)\.(INPUT|OUTPUT)\.(\d+)(?:\.(\d+))?\.(\d{20})\.npy$")
            .expect("static regex")
    });
    let c = RE.captures(file)?;
    let head = &c[1];
    // The FX node name has no `-`; the target (`<built-in function getitem>`) may.
    let (node, target) = head.split_once('-')?;
    if node.is_empty() {
        return None;
    }
    Some(DumpName {
        node: node.to_string(),
        target: target.to_string(),
        io: if &c[2] == "INPUT" {
            Io::Input
        } else {
            Io::Output
        },
        index: c[3].parse().ok()?,
        sub: c.get(4).and_then(|m| m.as_str().parse().ok()),
        ts: c[5].to_string(),
    })
}

/// npugraph_ex's tensor dump name, `<node>_device_<dev>_<k>.pt` → (node, device, replay);
/// `<node>_device_<dev>.pt` (overwritten in place) is replay 0.
pub fn parse_pt_name(file: &str) -> Option<(String, u32, u32)> {
    static RE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(.+)_device_(\d+)(?:_(\d+))?\.pt$").expect("static regex"));
    let c = RE.captures(file)?;
    let k = match c.get(3) {
        Some(m) => m.as_str().parse().ok()?,
        None => 0,
    };
    Some((c[1].to_string(), c[2].parse().ok()?, k))
}

/// The graphs of npugraph_ex's tensor dump in a rank folder (one per device), each replay a
/// step and each file its node's output.
fn scan_pt(dir: &Path, warnings: &mut Vec<String>) -> Vec<GraphDump> {
    let entries = match vfs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            warnings.push(format!("{}: {e}", dir.display()));
            return Vec::new();
        }
    };
    let mut by_device: BTreeMap<u32, BTreeMap<u32, StepDump>> = BTreeMap::new();
    for e in entries {
        if e.kind != vfs::Kind::File {
            continue;
        }
        let Some((node, device, k)) = parse_pt_name(&e.name()) else {
            continue;
        };
        let step = by_device
            .entry(device)
            .or_default()
            .entry(k)
            .or_insert_with(|| StepDump {
                step: k,
                path: dir.to_path_buf(),
                nodes: BTreeMap::new(),
                odd_names: Vec::new(),
            });
        let name = DumpName {
            node: node.clone(),
            target: String::new(),
            io: Io::Output,
            index: 0,
            sub: None,
            ts: String::new(),
        };
        if step.nodes.contains_key(&node) {
            // `<node>_device_<d>.pt` (overwritten in place) beside `<node>_device_<d>_0.pt`.
            warnings.push(format!(
                "{}: a second file for {node} at replay {k}: only one is read",
                e.path.display()
            ));
            continue;
        }
        step.nodes.insert(
            node.clone(),
            NodeDump {
                node,
                target: String::new(),
                ts: String::new(),
                files: vec![DumpFile {
                    name,
                    path: e.path,
                    size: e.size,
                }],
            },
        );
    }
    by_device
        .into_iter()
        .map(|(d, steps)| GraphDump {
            name: format!("device_{d}"),
            steps: steps.into_values().collect(),
        })
        .collect()
}

/// Why a folder holds no data dump to read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoDump {
    #[error("{}: not a folder", .0.display())]
    NotAFolder(PathBuf),
    #[error("{}: no data dump here (expected worldsize<W>_global_rank<R>/graph_<K>/<step>/*.npy, or npugraph_ex's worldsize<W>_global_rank<R>/<node>_device_<d>_<k>.pt)", .0.display())]
    NoneHere(PathBuf),
}

/// Every data dump under `root`: `root` itself when it is a rank folder, else rank folders up
/// to three levels down (`case/data_dump/worldsize1_global_rank0`).
pub fn scan(root: &Path) -> Result<DumpCatalog, NoDump> {
    if !vfs::is_dir(root) {
        return Err(NoDump::NotAFolder(root.to_path_buf()));
    }
    let mut rank_dirs = Vec::new();
    let name = file_name(root);
    if names::data_dump_dir(name).is_some() {
        rank_dirs.push(root.to_path_buf());
    } else {
        let how = vfs::Walk {
            max_depth: 3,
            sizes: false,
        };
        for e in vfs::walk(root, how, |_| true, &mut Vec::new()) {
            if e.kind == vfs::Kind::Dir && names::data_dump_dir(&e.name()).is_some() {
                rank_dirs.push(e.path);
            }
        }
    }
    if rank_dirs.is_empty() {
        return Err(NoDump::NoneHere(root.to_path_buf()));
    }
    Ok(scan_ranks(&rank_dirs))
}

/// Reads the given rank folders (as the index found them).
pub fn scan_ranks(rank_dirs: &[PathBuf]) -> DumpCatalog {
    let mut cat = DumpCatalog::default();
    for dir in rank_dirs {
        let Some((world_size, rank)) = names::data_dump_dir(file_name(dir)) else {
            cat.warnings.push(format!(
                "{}: not a rank folder of a data dump",
                dir.display()
            ));
            continue;
        };
        let mut graphs = Vec::new();
        for g in sorted_dirs(dir, &mut cat.warnings) {
            let gname = file_name(&g).to_string();
            if !names::dump_graph_dir(&gname) {
                continue;
            }
            let mut steps = Vec::new();
            for s in sorted_dirs(&g, &mut cat.warnings) {
                let Ok(step) = file_name(&s).parse::<u32>() else {
                    continue;
                };
                steps.push(scan_step(&s, step, &mut cat.warnings));
            }
            steps.sort_by_key(|s| s.step);
            graphs.push(GraphDump { name: gname, steps });
        }
        graphs.sort_by_key(|g| graph_number(&g.name));
        graphs.extend(scan_pt(dir, &mut cat.warnings));
        cat.ranks.push(RankDump {
            path: dir.clone(),
            world_size,
            rank,
            graphs,
        });
    }
    cat.ranks.sort_by_key(|r| (r.rank, r.path.clone()));
    cat
}

fn graph_number(name: &str) -> u64 {
    name.trim_start_matches("graph_")
        .parse()
        .unwrap_or(u64::MAX)
}

fn scan_step(dir: &Path, step: u32, warnings: &mut Vec<String>) -> StepDump {
    let mut nodes: BTreeMap<String, NodeDump> = BTreeMap::new();
    let mut odd_names = Vec::new();
    let entries = match vfs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            warnings.push(format!("{}: {e}", dir.display()));
            return StepDump {
                step,
                path: dir.to_path_buf(),
                nodes,
                odd_names,
            };
        }
    };
    for e in entries {
        let fname = e.name().into_owned();
        let Some(name) = parse_name(&fname) else {
            if e.kind == vfs::Kind::File {
                odd_names.push(e.path);
            }
            continue;
        };
        let (path, size) = (e.path, e.size);
        let node = nodes.entry(name.node.clone()).or_insert_with(|| NodeDump {
            node: name.node.clone(),
            target: name.target.clone(),
            ts: name.ts.clone(),
            files: Vec::new(),
        });
        if name.ts < node.ts {
            node.ts = name.ts.clone();
        }
        node.files.push(DumpFile { name, path, size });
    }
    for n in nodes.values_mut() {
        n.files
            .sort_by_key(|f| (f.name.io, f.name.index, f.name.sub, f.name.ts.clone()));
    }
    odd_names.sort();
    StepDump {
        step,
        path: dir.to_path_buf(),
        nodes,
        odd_names,
    }
}

fn sorted_dirs(dir: &Path, warnings: &mut Vec<String>) -> Vec<PathBuf> {
    match vfs::read_dir(dir) {
        Ok(rd) => rd
            .into_iter()
            .filter(|e| e.kind == vfs::Kind::Dir)
            .map(|e| e.path)
            .collect(),
        Err(e) => {
            warnings.push(format!("{}: {e}", dir.display()));
            Vec::new()
        }
    }
}

fn file_name(p: &Path) -> &str {
    p.file_name().and_then(|n| n.to_str()).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_the_right() {
        let n = parse_name("add_1-aten.add.Tensor.INPUT.0.20251017071211190258.npy").unwrap();
        assert_eq!(
            (n.node.as_str(), n.target.as_str(), n.io, n.index, n.sub),
            ("add_1", "aten.add.Tensor", Io::Input, 0, None)
        );
        assert_eq!(n.slot(), "INPUT.0");
        let n = parse_name("cat-aten.cat.default.INPUT.0.3.20251017071211190258.npy").unwrap();
        assert_eq!((n.index, n.sub, n.slot()), (0, Some(3), "INPUT.0.3".into()));
        let n =
            parse_name("getitem_2-<built-in function getitem>.OUTPUT.0.20251017071211190258.npy")
                .unwrap();
        assert_eq!(n.target, "<built-in function getitem>");
        assert!(parse_name("add_1-aten.add.Tensor.INPUT.0.2025.npy").is_none());
        assert!(parse_name("notes.txt").is_none());
    }

    #[test]
    fn npugraph_tensor_dump_names() {
        assert_eq!(
            parse_pt_name("add_1_device_0_3.pt"),
            Some(("add_1".into(), 0, 3))
        );
        assert_eq!(
            parse_pt_name("arg0_1_device_1.pt"),
            Some(("arg0_1".into(), 1, 0))
        );
        assert_eq!(parse_pt_name("x_device_0_0.pt"), Some(("x".into(), 0, 0)));
        assert!(parse_pt_name("add_1.pt").is_none());
        assert!(parse_pt_name("_device_0_0.pt").is_none());
    }
}
