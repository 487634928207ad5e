//! Finding what a folder holds: walk it once (names and sizes only), classify every file by
//! its path, and build a [`DebugIndex`].
//!
//! Classification looks at the file's own name and its ancestors' names, including those above
//! the opened folder, so opening `run_*/npugraph_ex/model__0/forward` still knows its run and
//! model. The set of known files is kept in [`FileSet`], so a watcher can add or remove one
//! file and rebuild the index without touching the disk again.

use crate::error::{Error, Result};
use crate::model::index::*;
use crate::sources::{names, vfs};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Deep enough for any real tree (run/backend/model/phase is 4 levels under the debug root);
/// bounds the walk of a pathological one.
const MAX_DEPTH: usize = 24;

/// One file seen on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileInfo {
    pub size: u64,
}

/// The files under an opened path, by absolute path. The index is a pure function of this set.
#[derive(Debug, Clone, Default)]
pub struct FileSet {
    /// What the user opened, as given.
    pub root: PathBuf,
    /// `root` made absolute (not canonicalised: symlinked folders keep the names the user sees).
    pub abs_root: PathBuf,
    pub files: BTreeMap<PathBuf, FileInfo>,
    /// Problems met while walking (unreadable folders, …).
    pub warnings: Vec<String>,
}

/// Walks `root` and builds its index. A missing or unreadable root is an error with a one-line
/// message; an empty folder is not (a compile may be about to write into it).
pub fn discover(root: &Path) -> Result<DebugIndex> {
    Ok(scan(root)?.index())
}

/// Walks `root` and returns the files found. An archive (or a folder inside one) is walked
/// from its mounted entries, read once here (again if the archive changed since).
pub fn scan(root: &Path) -> Result<FileSet> {
    // A tree on a server is scanned there: one round trip instead of four.
    if let Some((host, on_server)) = super::remote::fs::locate(root) {
        let (files, warnings) = super::remote::fs::scan(&host, &on_server)
            .map_err(|e| Error::user(format!("{}: {e}", super::remote::display(root))))?;
        return Ok(FileSet {
            root: root.to_path_buf(),
            abs_root: root.to_path_buf(),
            files: files
                .into_iter()
                .map(|e| (e.path, FileInfo { size: e.size }))
                .collect(),
            warnings,
        });
    }
    let notes = vfs::open_root(root)?;
    let (kind, size) = vfs::stat(root).map_err(|e| Error::io(root, &e))?;
    let abs_root = std::path::absolute(root).map_err(|e| Error::io(root, &e))?;
    let mut set = FileSet {
        root: root.to_path_buf(),
        abs_root: abs_root.clone(),
        warnings: notes,
        ..FileSet::default()
    };
    if kind == vfs::Kind::File {
        set.files.insert(abs_root, FileInfo { size });
        return Ok(set);
    }
    // A root we cannot list is an error; a sub-folder we cannot list is a warning.
    vfs::read_dir(root).map_err(|e| Error::io(root, &e))?;
    let how = vfs::Walk {
        max_depth: MAX_DEPTH,
        sizes: true,
    };
    for e in vfs::walk(&abs_root, how, |_| true, &mut set.warnings) {
        if e.kind == vfs::Kind::File {
            set.files.insert(e.path, FileInfo { size: e.size });
        }
    }
    Ok(set)
}

impl FileSet {
    pub fn insert(&mut self, path: PathBuf, size: u64) {
        self.files.insert(path, FileInfo { size });
    }

    pub fn remove(&mut self, path: &Path) -> bool {
        let before = self.files.len();
        // A removed folder takes its files with it.
        self.files.retain(|p, _| !p.starts_with(path));
        before != self.files.len()
    }

    /// Builds the index from the files known now.
    pub fn index(&self) -> DebugIndex {
        let mut b = Builder::default();
        for (path, info) in &self.files {
            b.add(path, info.size, path == &self.abs_root);
        }
        let mut index = b.finish(self.root.clone(), opened_kind(&self.abs_root, &self.files));
        index.warnings.extend(self.warnings.iter().cloned());
        index.files_seen = self.files.len();
        index
    }
}

/// What kind of folder the user opened, from its name and (for a plain folder) what it holds.
fn opened_kind(abs_root: &Path, files: &BTreeMap<PathBuf, FileInfo>) -> OpenedKind {
    let name = file_name(abs_root);
    if files.len() == 1 && files.contains_key(abs_root) {
        return OpenedKind::GraphFile;
    }
    if names::run_dir(name).is_some() {
        OpenedKind::Run
    } else if names::backend_dir(name).is_some() {
        OpenedKind::Backend
    } else if names::model_dir(name).is_some() {
        OpenedKind::Model
    } else if names::phase_dir(name) || names::inductor_model_dir(name).is_some() {
        OpenedKind::Phase
    } else if names::data_dump_dir(name).is_some() {
        OpenedKind::DataDump
    } else if names::kernel_dir(name) {
        OpenedKind::Autotune
    } else if name == "torch_compile_debug" {
        OpenedKind::DebugRoot
    } else {
        // A folder of another name: say what it mostly is.
        let child_kinds = |pred: &dyn Fn(&str) -> bool| {
            files.keys().any(|p| {
                p.strip_prefix(abs_root)
                    .ok()
                    .and_then(|r| r.components().next())
                    .and_then(|c| c.as_os_str().to_str())
                    .is_some_and(pred)
            })
        };
        if child_kinds(&|n| names::run_dir(n).is_some()) {
            OpenedKind::DebugRoot
        } else if child_kinds(&|n| n == "torch_compile_debug") {
            OpenedKind::Workspace
        } else if child_kinds(&|n| names::data_dump_dir(n).is_some()) {
            OpenedKind::DataDump
        } else if child_kinds(&|n| names::msprobe_step_dir(n).is_some()) {
            OpenedKind::Msprobe
        } else {
            OpenedKind::Other
        }
    }
}

fn file_name(p: &Path) -> &str {
    p.file_name().and_then(|n| n.to_str()).unwrap_or("")
}

/// The run, backend and model folders a file sits in, found by name among its ancestors.
#[derive(Default)]
struct Place<'a> {
    run: Option<&'a Path>,
    model: Option<&'a Path>,
}

fn place(path: &Path) -> Place<'_> {
    let mut place = Place::default();
    for anc in path.ancestors().skip(1) {
        let name = file_name(anc);
        if place.model.is_none() && names::model_dir(name).is_some() {
            place.model = Some(anc);
        }
        if names::run_dir(name).is_some() {
            place.run = Some(anc);
            break;
        }
    }
    place
}

#[derive(Default)]
struct Builder {
    runs: BTreeMap<PathBuf, RunB>,
    loose_graphs: Vec<PassFile>,
    loose_captures: Vec<CaptureFile>,
    dumps: BTreeMap<PathBuf, DumpB>,
    msprobe: Vec<MsprobeDump>,
    kernels: BTreeMap<PathBuf, Vec<String>>,
    traces: Vec<PathBuf>,
}

#[derive(Default)]
struct RunB {
    models: BTreeMap<(Backend, i64, String), ModelB>,
    logs: Vec<LogFile>,
}

struct ModelB {
    path: PathBuf,
    dynamo_graph: Option<PathBuf>,
    phases: BTreeMap<PathBuf, Phase>,
    captures: Vec<CaptureFile>,
}

#[derive(Default)]
struct DumpB {
    world_size: u32,
    rank: u32,
    graphs: BTreeMap<String, BTreeMap<u32, usize>>,
}

impl Builder {
    fn add(&mut self, path: &Path, size: u64, is_root_file: bool) {
        let name = file_name(path);
        let parent = path.parent().unwrap_or(Path::new(""));
        let parent_name = file_name(parent);
        let place = place(path);

        if let Some(c) = names::capture_file(name) {
            let file = CaptureFile {
                path: path.to_path_buf(),
                kind: c.kind,
                graph: c.graph,
                id: c.id,
                device: c.device,
                pid: c.pid,
                ts: c.ts,
                size,
            };
            match place.model {
                Some(model) => self.model(place.run, model).captures.push(file),
                None => self.loose_captures.push(file),
            }
        } else if let Some((index, pass)) = names::pass_file(name) {
            let pass = PassFile {
                index,
                name: pass,
                path: path.to_path_buf(),
                size,
            };
            match place.model {
                Some(model) => self.phase(place.run, model, parent).passes.push(pass),
                None => self.loose_graphs.push(pass),
            }
        } else if let Some(g) = names::graph_dump_file(name) {
            // TorchAir's graph dump (formats.md §3.3) lands wherever graph_dump.path says, under
            // names only: graph K of rank r (of one process) becomes a phase of two passes,
            // original then optimized, so they scrub and diff like pass files. GE's GraphDef
            // text (txt, pbtxt) is no FX graph and is left alone.
            if g.ext == "py" {
                let model = parent.join(format!("graph_{}", g.graph));
                let phase = model.join(format!("rank_{}_pid_{}", g.rank, g.pid));
                let pass = PassFile {
                    index: g.stage,
                    name: g.stage_name().to_string(),
                    path: path.to_path_buf(),
                    size,
                };
                self.phase(place.run, &model, &phase).passes.push(pass);
            }
        } else if name == "dynamo_out_graph.txt" && place.model == Some(parent) {
            self.model(place.run, parent).dynamo_graph = Some(path.to_path_buf());
        } else if let Some((model, kind, id)) = names::inductor_model_dir(parent_name) {
            self.add_inductor(place.run, parent, (&model, &kind, &id), path, size);
        } else if name == "output_code.py" && place.model.is_some() && names::phase_dir(parent_name)
        {
            let model = place.model.unwrap_or(parent);
            self.phase(place.run, model, parent).output_code = Some(path.to_path_buf());
        } else if place.model.is_some()
            && names::phase_dir(parent_name)
            && name.strip_suffix(".json") == Some(crate::model::compile::PROVENANCE_ARTIFACT)
        {
            // Inductor's provenance beside a phase's code (trees served from a trace log).
            let model = place.model.unwrap_or(parent);
            self.phase(place.run, model, parent)
                .artifacts
                .push(path.to_path_buf());
        } else if let Some(kind) = log_kind(name, parent_name) {
            let log = LogFile {
                kind,
                path: path.to_path_buf(),
                size,
            };
            match place.run {
                Some(run) => self
                    .runs
                    .entry(run.to_path_buf())
                    .or_default()
                    .logs
                    .push(log),
                None => self.run_for(parent).logs.push(log),
            }
        } else if name.ends_with(".npy") {
            self.add_npy(path);
        } else if let Some((_, device, k)) = super::data_dump::parse_pt_name(name)
            && let Some((w, r)) = names::data_dump_dir(parent_name)
        {
            // npugraph_ex's tensor dump: <root>/worldsize<W>_global_rank<R>/<node>_device_<d>_<k>.pt
            self.count_dump(parent, (w, r), format!("device_{device}"), k);
        } else if name == "dump.json"
            && names::msprobe_who_dir(parent_name)
            && let Some(step) = parent
                .parent()
                .and_then(|g| names::msprobe_step_dir(file_name(g)))
        {
            self.msprobe.push(MsprobeDump {
                path: path.to_path_buf(),
                step,
                who: parent_name.to_string(),
            });
        } else if let Some(kdir) = path
            .ancestors()
            .skip(1)
            .find(|a| names::kernel_dir(file_name(a)))
        {
            let rel = path.strip_prefix(kdir).unwrap_or(path);
            self.kernels
                .entry(kdir.to_path_buf())
                .or_default()
                .push(rel.display().to_string());
        } else if names::trace_log(name) {
            self.traces.push(path.to_path_buf());
        } else if is_root_file && looks_like_graph_file(name) {
            // A single file opened on its own: a graph dump under any name.
            self.loose_graphs.push(PassFile {
                index: 0,
                name: name.to_string(),
                path: path.to_path_buf(),
                size,
            });
        }
    }

    fn add_inductor(
        &mut self,
        run: Option<&Path>,
        dir: &Path,
        (model, kind, id): (&str, &str, &str),
        path: &Path,
        size: u64,
    ) {
        let name = file_name(path);
        // `model___54` (torch 2.1, no AOT id): numbered by the graph it holds.
        let number = names::model_dir(model)
            .or_else(|| model.strip_prefix("model___")?.parse().ok())
            .unwrap_or(0);
        let backend_dir = dir.parent().unwrap_or(dir);
        let run_b = match run {
            Some(r) => self.runs.entry(r.to_path_buf()).or_default(),
            None => self.run_for(backend_dir),
        };
        let m = run_b
            .models
            .entry((Backend::Inductor, number, model.to_string()))
            .or_insert_with(|| ModelB::new(backend_dir));
        let phase = m.phases.entry(dir.to_path_buf()).or_insert_with(|| Phase {
            name: kind.to_string(),
            path: dir.to_path_buf(),
            passes: Vec::new(),
            output_code: None,
            artifacts: Vec::new(),
            inductor_id: Some(id.to_string()),
            backward_of: None,
        });
        if let Some(index) = names::inductor_graph_file(name) {
            phase.passes.push(PassFile {
                index,
                name: name.trim_end_matches(".py").to_string(),
                path: path.to_path_buf(),
                size,
            });
        } else if name == "output_code.py" {
            phase.output_code = Some(path.to_path_buf());
        } else {
            phase.artifacts.push(path.to_path_buf());
        }
    }

    fn add_npy(&mut self, path: &Path) {
        // <root>/worldsize<W>_global_rank<R>/graph_<K>/<step>/<file>.npy
        let step_dir = path.parent();
        let graph_dir = step_dir.and_then(Path::parent);
        let rank_dir = graph_dir.and_then(Path::parent);
        let (Some(step_dir), Some(graph_dir), Some(rank_dir)) = (step_dir, graph_dir, rank_dir)
        else {
            return;
        };
        let (Some((w, r)), true, Ok(step)) = (
            names::data_dump_dir(file_name(rank_dir)),
            names::dump_graph_dir(file_name(graph_dir)),
            file_name(step_dir).parse::<u32>(),
        ) else {
            return;
        };
        self.count_dump(rank_dir, (w, r), file_name(graph_dir).to_string(), step);
    }

    /// One more file of `graph`'s `step` in the dump's rank folder `rank_dir` (world size, rank).
    fn count_dump(&mut self, rank_dir: &Path, (w, r): (u32, u32), graph: String, step: u32) {
        let d = self.dumps.entry(rank_dir.to_path_buf()).or_default();
        d.world_size = w;
        d.rank = r;
        *d.graphs.entry(graph).or_default().entry(step).or_default() += 1;
    }

    /// The run a file belongs to when no `run_*` folder is among its ancestors: a stand-in
    /// keyed by the folder above the backend/model folders.
    fn run_for(&mut self, dir: &Path) -> &mut RunB {
        self.runs.entry(dir.to_path_buf()).or_default()
    }

    fn model(&mut self, run: Option<&Path>, model: &Path) -> &mut ModelB {
        let backend_dir = model.parent().unwrap_or(model);
        let backend = names::backend_dir(file_name(backend_dir)).unwrap_or(Backend::NpugraphEx);
        let name = file_name(model).to_string();
        let number = names::model_dir(&name).unwrap_or(0);
        let run_b = match run {
            Some(r) => self.runs.entry(r.to_path_buf()).or_default(),
            None => self.run_for(backend_dir.parent().unwrap_or(backend_dir)),
        };
        run_b
            .models
            .entry((backend, number, name))
            .or_insert_with(|| ModelB::new(model))
    }

    fn phase(&mut self, run: Option<&Path>, model: &Path, dir: &Path) -> &mut Phase {
        self.model(run, model)
            .phases
            .entry(dir.to_path_buf())
            .or_insert_with(|| Phase {
                name: file_name(dir).to_string(),
                path: dir.to_path_buf(),
                passes: Vec::new(),
                output_code: None,
                artifacts: Vec::new(),
                inductor_id: None,
                backward_of: None,
            })
    }

    fn finish(self, root: PathBuf, opened: OpenedKind) -> DebugIndex {
        let mut index = DebugIndex::new(root, opened);
        for (path, run_b) in self.runs {
            index.runs.push(finish_run(path, run_b));
        }
        link_siblings(&mut index.runs);
        index.launches = crate::model::launch::group(&index.runs);
        index.loose_graphs = self.loose_graphs;
        index.loose_graphs.sort_by(|a, b| a.path.cmp(&b.path));
        index.loose_captures = self.loose_captures;
        index.data_dumps = self
            .dumps
            .into_iter()
            .map(|(path, d)| DataDump {
                path,
                world_size: d.world_size,
                rank: d.rank,
                graphs: d
                    .graphs
                    .into_iter()
                    .map(|(name, steps)| DumpGraph {
                        name,
                        steps: steps.into_iter().collect(),
                    })
                    .collect(),
            })
            .collect();
        index.msprobe = self.msprobe;
        index.autotune = self
            .kernels
            .into_iter()
            .map(|(path, files)| KernelDir {
                name: file_name(&path).to_string(),
                path,
                files,
            })
            .collect();
        index.traces = self.traces;
        index
    }
}

impl ModelB {
    fn new(path: &Path) -> Self {
        ModelB {
            path: path.to_path_buf(),
            dynamo_graph: None,
            phases: BTreeMap::new(),
            captures: Vec::new(),
        }
    }
}

fn finish_run(path: PathBuf, run_b: RunB) -> Run {
    let name = file_name(&path).to_string();
    let parsed = names::run_dir(&name);
    let mut models: Vec<Model> = run_b
        .models
        .into_iter()
        .map(|((backend, number, name), m)| {
            let mut phases: Vec<Phase> = m.phases.into_values().collect();
            phases.sort_by_key(|p| (phase_rank(&p.name), p.inductor_id.clone(), p.path.clone()));
            for p in &mut phases {
                p.passes
                    .sort_by(|a, b| (a.index, &a.path).cmp(&(b.index, &b.path)));
            }
            let mut captures = m.captures;
            captures.sort_by(|a, b| a.path.cmp(&b.path));
            Model {
                name,
                number,
                backend,
                path: m.path,
                dynamo_graph: m.dynamo_graph,
                phases,
                captures,
                graph_name: None,
            }
        })
        .collect();
    models.sort_by_key(|m| (m.backend as u8, m.name.starts_with("compile"), m.number));
    let mut logs = run_b.logs;
    logs.sort_by(|a, b| (a.kind as u8, &a.path).cmp(&(b.kind as u8, &b.path)));
    Run {
        name,
        time: parsed.as_ref().map(|r| r.time.clone()),
        pid: parsed.as_ref().map(|r| r.pid),
        rank: parsed.as_ref().and_then(|r| r.rank),
        path,
        siblings: Vec::new(),
        models,
        logs,
    }
}

/// One process can write two run folders (with and without `-rank_R`, docs/formats.md §1.1).
fn link_siblings(runs: &mut [Run]) {
    let keys: Vec<(Option<u32>, PathBuf, String)> = runs
        .iter()
        .map(|r| {
            (
                r.pid,
                r.path.parent().map(Path::to_path_buf).unwrap_or_default(),
                r.name.clone(),
            )
        })
        .collect();
    for run in runs.iter_mut() {
        let Some(pid) = run.pid else { continue };
        let parent = run.path.parent().map(Path::to_path_buf).unwrap_or_default();
        run.siblings = keys
            .iter()
            .filter(|(p, par, n)| *p == Some(pid) && *par == parent && *n != run.name)
            .map(|(_, _, n)| n.clone())
            .collect();
    }
}

/// Phases in the order a training step runs them.
fn phase_rank(name: &str) -> u8 {
    match name {
        "forward" | "inference" => 0,
        "backward" => 1,
        "joint" => 2,
        "compile_fx" => 3,
        _ => 4,
    }
}

fn log_kind(name: &str, parent: &str) -> Option<LogKind> {
    match (name, parent) {
        ("debug.log", p) if names::backend_dir(p).is_some_and(|b| b != Backend::Inductor) => {
            Some(LogKind::Backend)
        }
        ("debug.log", "torchdynamo") => Some(LogKind::Dynamo),
        (n, "torchinductor" | "aot_torchinductor") if n.ends_with(".log") => {
            Some(LogKind::Inductor)
        }
        _ => None,
    }
}

fn looks_like_graph_file(name: &str) -> bool {
    name.ends_with(".txt") || name.ends_with(".py")
}

/// Moves each capture JSON to the model whose `output_code.py` names its `graph_K`
/// (docs/formats.md §1.6: captures land in the *latest* model folder, not their own).
/// `graph_name_of` reads an `output_code.py` and returns its `fx_graph_name`.
pub fn join_captures(
    index: &mut DebugIndex,
    mut graph_name_of: impl FnMut(&Path) -> Option<String>,
) {
    for run in &mut index.runs {
        for model in &mut run.models {
            model.graph_name = model
                .phases
                .iter()
                .filter_map(|p| p.output_code.as_deref())
                .find_map(&mut graph_name_of);
        }
        let owner: BTreeMap<String, usize> = run
            .models
            .iter()
            .enumerate()
            .filter_map(|(i, m)| m.graph_name.clone().map(|g| (g, i)))
            .collect();
        let mut moving = Vec::new();
        for (i, model) in run.models.iter_mut().enumerate() {
            let (stay, go): (Vec<_>, Vec<_>) = model
                .captures
                .drain(..)
                .partition(|c| owner.get(&c.graph).is_none_or(|&o| o == i));
            model.captures = stay;
            moving.extend(go);
        }
        for c in moving {
            if let Some(&o) = owner.get(&c.graph) {
                run.models[o].captures.push(c);
            }
        }
        for model in &mut run.models {
            model.captures.sort_by(|a, b| a.path.cmp(&b.path));
        }
    }
}
