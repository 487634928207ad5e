//! The module of every node, inferred from the text dumps, checked against torch's own
//! `nn_module_stack` (`tests/fixtures/module_truth/`, made by `tests/e2e/module_truth.py`), and
//! on the 24-layer stress fixture.

use crate::common::{fixture, fxray, pass_files, run_dir, stdout_json};
use fxray::analysis::modules::{self, GraphModules, PhaseInput, PhaseModules};
use fxray::model::fx::FxFile;
use fxray::sources::load;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The blocks of a model, from torch's own module paths: a block is a layer (`layers.3` of
/// `layers.3.attn.q_proj`, `model.layers.0` of `model.layers.0.mlp`, `encoder.block.1` of
/// `encoder.block.1.layer.0.SelfAttention`) or a piece beside the layers (`norm`, `lm_head`,
/// `model.embed_tokens`, `bert.embeddings` of `bert.embeddings.LayerNorm`, the root module's own
/// code): the path up to its first index, else up to one segment past where it leaves the
/// nearest stack of layers.
#[derive(Debug, Default)]
pub struct Blocks {
    /// Paths of the layer stacks (`layers`, `model.layers`, `encoder.block`).
    stacks: Vec<String>,
}

impl Blocks {
    pub fn from_truth<'a>(paths: impl IntoIterator<Item = &'a str>) -> Blocks {
        let mut stacks: Vec<String> = Vec::new();
        for p in paths {
            let segs: Vec<&str> = p.split('.').collect();
            if let Some(k) = segs.iter().position(|s| is_index(s)) {
                let stack = segs[..k].join(".");
                if !stacks.contains(&stack) {
                    stacks.push(stack);
                }
            }
        }
        Blocks { stacks }
    }

    pub fn block(&self, path: &str) -> String {
        if path.is_empty() {
            return String::new();
        }
        let segs: Vec<&str> = path.split('.').collect();
        if let Some(k) = segs.iter().position(|s| is_index(s)) {
            return segs[..=k].join(".");
        }
        let shared = self
            .stacks
            .iter()
            .map(|st| {
                st.split('.')
                    .zip(&segs)
                    .take_while(|(a, b)| a == *b)
                    .count()
            })
            .max()
            .unwrap_or(0);
        segs[..(shared + 1).min(segs.len())].join(".")
    }
}

fn is_index(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())
}

/// One graph compared with torch's truth.
#[derive(Debug, Clone)]
pub struct Share {
    pub label: String,
    pub known: usize,
    pub block_ok: usize,
    pub leaf_ok: usize,
    /// The commonest wrong leaves: (torch's module, fxray's, how many, one node's name and line).
    pub misses: Vec<(String, String, usize, String)>,
}

impl Share {
    pub fn block(&self) -> f64 {
        self.block_ok as f64 / self.known.max(1) as f64
    }
    pub fn leaf(&self) -> f64 {
        self.leaf_ok as f64 / self.known.max(1) as f64
    }
}

fn parse(p: &Path) -> FxFile {
    let f = load::graph(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    assert!(!f.graphs.is_empty(), "{}: no graph", p.display());
    f
}

pub fn truth_of(pass: &Path) -> HashMap<String, String> {
    let t = pass.with_extension("modules.json");
    let text = std::fs::read_to_string(&t).unwrap_or_else(|e| panic!("{}: {e}", t.display()));
    serde_json::from_str(&text).expect("truth JSON")
}

pub fn compare(
    label: String,
    file: &FxFile,
    got: &GraphModules,
    truth: &HashMap<String, String>,
    blocks: &Blocks,
) -> Share {
    let g = &file.graphs[0];
    let mut s = Share {
        label,
        known: 0,
        block_ok: 0,
        leaf_ok: 0,
        misses: Vec::new(),
    };
    let mut misses: HashMap<(String, String), (usize, String)> = HashMap::new();
    for (name, want) in truth {
        let Some(have) = got.path_of(g, name) else {
            continue;
        };
        s.known += 1;
        s.block_ok += usize::from(blocks.block(have) == blocks.block(want));
        s.leaf_ok += usize::from(have == want);
        if have != want {
            let e = misses
                .entry((want.clone(), have.to_string()))
                .or_insert_with(|| (0, String::new()));
            e.0 += 1;
            let line = g
                .by_name
                .get(name)
                .and_then(|i| g.nodes[i].source.as_ref())
                .map_or(String::new(), |l| {
                    format!(
                        "{}:{} {}",
                        l.file.rsplit('/').next().unwrap_or(""),
                        l.line,
                        l.code
                    )
                });
            if e.1.is_empty() || *name < e.1 {
                e.1 = format!("{name} @ {line}");
            }
        }
    }
    let mut v: Vec<_> = misses
        .into_iter()
        .map(|((w, h), (n, ex))| (w, h, n, ex))
        .collect();
    v.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    v.truncate(12);
    s.misses = v;
    s
}

fn phase_files(model: &Path, phase: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(model.join(phase))
        .expect("phase folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    v.sort();
    v
}

/// Modules of the forward and backward of `model` (an npugraph_ex `model__N` folder).
pub fn infer_model(model: &Path) -> [(Vec<PathBuf>, Vec<FxFile>, PhaseModules); 2] {
    let dynamo = parse(&model.join("dynamo_out_graph.txt"));
    // What the window reads beside the files: the guards of a trace log, when the case kept one.
    let guards = fxray::pipeline::module_guards::of_model(&model.join("dynamo_out_graph.txt"));
    let fw_paths = phase_files(model, "forward");
    let bw_paths = phase_files(model, "backward");
    let fw: Vec<FxFile> = fw_paths.iter().map(|p| parse(p)).collect();
    let bw: Vec<FxFile> = bw_paths.iter().map(|p| parse(p)).collect();
    let fw_refs: Vec<&FxFile> = fw.iter().collect();
    let bw_refs: Vec<&FxFile> = bw.iter().collect();
    let fw_mod = modules::infer_phase(&PhaseInput {
        dynamo: Some(&dynamo),
        passes: &fw_refs,
        forward: None,
        guards: guards.as_deref(),
    });
    let bw_mod = modules::infer_phase(&PhaseInput {
        dynamo: Some(&dynamo),
        passes: &bw_refs,
        forward: Some(&fw_refs),
        guards: guards.as_deref(),
    });
    [(fw_paths, fw, fw_mod), (bw_paths, bw, bw_mod)]
}

/// Shares of every pass of forward and backward of the one model under `root` (a folder with
/// `torch_compile_debug/run_*/npugraph_ex/model__0`), first and last pass first.
pub fn shares(arch: &str, model: &Path) -> Vec<Share> {
    let mut out = Vec::new();
    let phases: Vec<_> = ["forward", "backward"]
        .into_iter()
        .zip(infer_model(model))
        .collect();
    let truths: Vec<Vec<HashMap<String, String>>> = phases
        .iter()
        .map(|(_, (paths, _, _))| paths.iter().map(|p| truth_of(p)).collect())
        .collect();
    let blocks = Blocks::from_truth(
        truths
            .iter()
            .flatten()
            .flat_map(|t| t.values())
            .map(String::as_str),
    );
    for ((phase, (paths, files, got)), truth) in phases.iter().zip(&truths) {
        assert!(paths.len() >= 2, "{arch} {phase}: first and last pass");
        for (k, p) in paths.iter().enumerate() {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            out.push(compare(
                format!("{arch} {phase} {name}"),
                &files[k],
                &got.passes[k],
                &truth[k],
                &blocks,
            ));
        }
    }
    out
}

pub fn model_dir(root: &Path) -> PathBuf {
    let tcd = root.join("torch_compile_debug");
    let mut runs: Vec<PathBuf> = std::fs::read_dir(&tcd)
        .unwrap_or_else(|e| panic!("{}: {e}", tcd.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    runs.sort();
    runs[0].join("npugraph_ex/model__0")
}

/// Prints every pass's shares; asserts the thresholds (block share ≥ 95 %, leaf share ≥
/// `leaf_min`) on the first and last pass of each phase, and lists every miss at once.
pub fn check_thresholds(shares: &[Share], leaf_min: f64) {
    check_thresholds_of(shares, leaf_min, 100);
}

/// [`check_thresholds`] on graphs of which torch knows more than `known_min` nodes.
pub fn check_thresholds_of(shares: &[Share], leaf_min: f64, known_min: usize) {
    for s in shares {
        println!(
            "{:<70} known {:>4}  block {:>6.2}%  leaf {:>6.2}%",
            s.label,
            s.known,
            100.0 * s.block(),
            100.0 * s.leaf()
        );
    }
    let mut misses = Vec::new();
    for s in first_and_last(shares) {
        if s.known <= known_min {
            misses.push(format!("{}: torch knows only {} nodes", s.label, s.known));
        }
        if s.block() < 0.95 {
            misses.push(format!("{}: block share {:.3}", s.label, s.block()));
        }
        if s.leaf() < leaf_min {
            misses.push(format!("{}: leaf share {:.3}", s.label, s.leaf()));
        }
        if s.block() < 0.95 || s.leaf() < leaf_min {
            for (want, have, n, example) in &s.misses {
                misses.push(format!(
                    "    {n:>4} torch {want:?}, fxray {have:?}  e.g. {example}"
                ));
            }
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

/// The first and the last pass of every (architecture, phase), in order.
pub fn first_and_last(shares: &[Share]) -> Vec<&Share> {
    let mut keys: Vec<String> = Vec::new();
    let mut by_phase: HashMap<String, Vec<&Share>> = HashMap::new();
    for s in shares {
        let key: String = s.label.split(' ').take(2).collect::<Vec<_>>().join(" ");
        if !keys.contains(&key) {
            keys.push(key.clone());
        }
        by_phase.entry(key).or_default().push(s);
    }
    keys.iter()
        .flat_map(|k| {
            let list = &by_phase[k];
            [list[0], list[list.len() - 1]]
        })
        .collect()
}

/// Every model `tests/e2e/module_truth.py` writes.
pub const ARCHS: [&str; 4] = ["llama", "moe", "tied", "hybrid"];

#[test]
fn module_truth_fixtures_meet_the_thresholds() {
    let mut all = Vec::new();
    for arch in ARCHS {
        let model = model_dir(&fixture(&format!("module_truth/{arch}")));
        let s = shares(arch, &model);
        super::modules_hf::print_table(arch, &s);
        all.extend(s);
    }
    check_thresholds(&all, super::modules_hf::LEAF_GOAL);
}

#[test]
fn the_passes_differ_so_carrying_modules_over_is_tested() {
    for arch in ARCHS {
        let model = model_dir(&fixture(&format!("module_truth/{arch}")));
        for phase in ["forward", "backward"] {
            let files = phase_files(&model, phase);
            let first = parse(&files[0]);
            let last = parse(files.last().unwrap());
            let names = |f: &FxFile| -> Vec<String> {
                f.graphs[0]
                    .nodes
                    .iter()
                    .map(|n| n.name.to_string())
                    .collect()
            };
            assert_ne!(names(&first), names(&last), "{arch} {phase}");
        }
    }
}

#[test]
fn stress_24layer_has_24_layer_groups_forward_and_backward() {
    let model = run_dir("npugraph_ex/stress_24layer").join("npugraph_ex/model__0");
    for (phase, (paths, _, got)) in ["forward", "backward"].into_iter().zip(infer_model(&model)) {
        for k in [0, paths.len() - 1] {
            let tree = &got.passes[k].tree;
            let layers = tree.find("layers").expect("a `layers` module");
            let kids: Vec<&str> = tree.modules[layers]
                .children
                .iter()
                .map(|&c| tree.modules[c].path.as_str())
                .collect();
            let want: Vec<String> = (0..24).map(|i| format!("layers.{i}")).collect();
            assert_eq!(kids, want, "{phase} pass {k}");
            let sizes: Vec<usize> = tree.modules[layers]
                .children
                .iter()
                .map(|&c| tree.modules[c].total_nodes)
                .collect();
            println!("stress_24layer {phase} pass {k}: 24 layer groups, nodes per layer {sizes:?}");
            // Every layer is the same block: no layer is a sliver of another's size.
            let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(*lo * 2 > *hi, "{phase} pass {k}: {sizes:?}");
        }
    }
}

#[test]
fn showcase_buffers_read_through_a_plain_attribute_land_in_their_module() {
    let files = pass_files("showcase", "forward");
    let model = run_dir("showcase").join("npugraph_ex/model__0");
    let dynamo = parse(&model.join("dynamo_out_graph.txt"));
    let fw: Vec<FxFile> = files.iter().map(|p| parse(p)).collect();
    let refs: Vec<&FxFile> = fw.iter().collect();
    let got = modules::infer_phase(&PhaseInput {
        dynamo: Some(&dynamo),
        passes: &refs,
        forward: None,
        guards: None,
    });
    let tree = &got.passes[0].tree;
    assert!(
        tree.find("layers.0.self_attn.rotary_emb").is_some(),
        "{:?}",
        tree.modules.iter().map(|m| &m.path).collect::<Vec<_>>()
    );
    assert!(tree.find("layers.1.mlp.down_proj").is_some());
    // The Dynamo graph's nodes too.
    let d = got.dynamo.expect("dynamo modules");
    assert!(d.tree.find("layers.1.self_attn.q_proj").is_some());
}

#[test]
fn export_json_gives_every_node_its_module() {
    let files = pass_files("module_truth/llama", "forward");
    let last = files.last().unwrap();
    let v = stdout_json(&fxray(&[
        "export",
        last.to_str().unwrap(),
        "--format",
        "json",
    ]));
    let nodes = v["graphs"][0]["nodes"].as_array().expect("nodes");
    assert!(nodes.iter().all(|n| n["module"].is_string()));
    let truth = truth_of(last);
    let mut ok = 0;
    for n in nodes {
        let name = n["name"].as_str().unwrap();
        if let Some(want) = truth.get(name) {
            ok += usize::from(n["module"].as_str() == Some(want.as_str()));
        }
    }
    assert!(ok * 10 >= truth.len() * 8, "{ok} of {} right", truth.len());
    let q = nodes
        .iter()
        .filter(|n| n["module"] == "layers.2.self_attn.q_proj")
        .count();
    assert!(
        q >= 2,
        "layers.2.self_attn.q_proj holds its matmul and weight"
    );
}

#[test]
fn stress_20k_without_a_dynamo_graph_still_finds_its_83_layers() {
    // Only the pass dumps were kept: no parameter names, the repeated block of source lines
    // gives the layers.
    for phase in ["forward", "backward"] {
        let files: Vec<FxFile> = pass_files("npugraph_ex/stress_20k", phase)
            .iter()
            .map(|p| parse(p))
            .collect();
        let refs: Vec<&FxFile> = files.iter().collect();
        let got = modules::infer_phase(&PhaseInput {
            dynamo: None,
            passes: &refs,
            forward: None,
            guards: None,
        });
        for (k, pass) in got.passes.iter().enumerate() {
            let tree = &pass.tree;
            let layers = tree.find("layers").expect("a `layers` module");
            // Children come in the order their first node appears: a backward runs the
            // layers last to first.
            let mut kids: Vec<usize> = tree.modules[layers]
                .children
                .iter()
                .map(|&c| tree.modules[c].name.parse().expect("a layer index"))
                .collect();
            kids.sort_unstable();
            assert_eq!(kids, (0..83).collect::<Vec<_>>(), "{phase} pass {k}");
        }
    }
}
