//! Joins the autotune evidence per fused kernel (docs/formats.md §7): log lines give the candidates,
//! their timings and the logged best; the debug folder gives each candidate's source
//! (`asc_kernel_<key>.py`); the cache entry's `optimize_tiling` names the kept winner by its
//! md5. Kernel names join the three; kernel_keys join candidates to files and to the winner.
//!
//! Every gap or disagreement becomes a sentence in the kernel's `problems`, never an error:
//! a log without its folders still shows its timings, a folder without a log still lists its
//! candidates.

use crate::model::autotune::{
    AscLine, AscLog, AutotuneReport, CacheEntry, Candidate, CompilePath, DebugKernelDir, Evidence,
    FusedKernel, is_md5,
};
use crate::model::fx::{FxFile, OpKind};
use std::collections::{HashMap, HashSet};

/// Kernels by name, in the order the evidence first names them.
#[derive(Default)]
struct Kernels {
    list: Vec<FusedKernel>,
    by_name: HashMap<String, usize>,
}

impl Kernels {
    fn get(&mut self, name: &str) -> &mut FusedKernel {
        let i = *self.by_name.entry(name.to_string()).or_insert_with(|| {
            self.list.push(FusedKernel::new(name));
            self.list.len() - 1
        });
        &mut self.list[i]
    }
}

/// What the logs said about a kernel beyond its candidates.
#[derive(Default)]
struct Logged {
    /// An `Autotune completed` line was seen.
    completed: bool,
    /// The cache entry's md5 the log names.
    cache_hash: Option<String>,
}

/// Joins everything found into one report.
pub fn join(ev: &Evidence) -> AutotuneReport {
    let mut ks = Kernels::default();
    let mut logged: HashMap<String, Logged> = HashMap::new();
    let mut report = AutotuneReport::default();
    report.problems.extend(ev.problems.iter().cloned());
    for log in &ev.logs {
        read_log(log, &mut ks, &mut logged, &mut report.problems);
        report.sources.logs.push(log.source.clone());
    }
    for k in &mut ks.list {
        check_logged(k, logged.get(&k.name));
    }
    for dd in &ev.debug_dirs {
        let k = ks.get(&dd.name);
        if k.debug_dir.is_some() {
            continue; // the same kernel compiled for another model: the first folder is shown
        }
        add_debug_dir(k, dd);
    }
    let mut cache_by_name: HashMap<&str, Vec<&CacheEntry>> = HashMap::new();
    for c in &ev.cache {
        cache_by_name.entry(c.name.as_str()).or_default().push(c);
        ks.get(&c.name);
    }
    for k in &mut ks.list {
        let entries = cache_by_name.remove(k.name.as_str()).unwrap_or_default();
        let hash = logged.get(&k.name).and_then(|l| l.cache_hash.as_deref());
        add_cache(k, &entries, hash);
        note_missing(k);
        k.ops = fused_ops(&k.name, None);
    }
    report.sources.debug_dirs = ev.debug_dirs.len();
    report.sources.cache_entries = ev.cache.len();
    report.kernels = ks.list;
    report
}

fn read_log(
    log: &AscLog,
    ks: &mut Kernels,
    logged: &mut HashMap<String, Logged>,
    problems: &mut Vec<String>,
) {
    // The kernel whose `Autotune completed … detail:` block is open, per rank; `repeat` blocks
    // (a kernel tuned again, e.g. by another rank) are read past, not merged.
    let mut open: HashMap<Option<String>, (String, bool)> = HashMap::new();
    for r in &log.records {
        let at = format!("{}:{}", log.source, r.line);
        match &r.kind {
            AscLine::StaticCompile {
                kernel,
                top_n,
                choices,
            } => {
                let k = ks.get(kernel);
                if k.top_n.is_none() {
                    k.top_n = Some(*top_n);
                    k.choices = Some(*choices);
                    k.rank = r.rank.clone();
                }
                k.path = CompilePath::TopN;
            }
            AscLine::Completed {
                cache_path,
                kernel,
                cache_hash,
                best,
            } => {
                let Some(name) = kernel else {
                    problems.push(format!(
                        "{at}: an autotune result names no autofused_ kernel: {cache_path}"
                    ));
                    open.remove(&r.rank);
                    continue;
                };
                let l = logged.entry(name.clone()).or_default();
                let repeat = l.completed;
                let k = ks.get(name);
                k.path = CompilePath::TopN;
                if repeat {
                    k.problems
                        .push(format!("tuned again at {at}; the first result is shown"));
                } else {
                    l.completed = true;
                    l.cache_hash = cache_hash.clone();
                    k.logged_best = *best;
                    if k.rank.is_none() {
                        k.rank = r.rank.clone();
                    }
                }
                open.insert(r.rank.clone(), (name.clone(), repeat));
            }
            AscLine::Timing {
                kernel_so,
                kernel,
                key,
                us,
            } => {
                let block = open.get(&r.rank).cloned();
                let target = match (kernel, block) {
                    (Some(n), Some((open_name, repeat))) if *n == open_name => {
                        (!repeat).then(|| n.clone())
                    }
                    (Some(n), _) => Some(n.clone()),
                    (None, Some((open_name, repeat))) => (!repeat).then_some(open_name),
                    (None, None) => {
                        problems.push(format!(
                            "{at}: a timing outside any autotune result: {kernel_so}"
                        ));
                        None
                    }
                };
                if let Some(name) = target {
                    let k = ks.get(&name);
                    let index = k.candidates.len();
                    k.candidates.push(Candidate {
                        index,
                        key: key.clone(),
                        timing_us: Some(*us),
                        kernel_so: Some(kernel_so.clone()),
                        source: None,
                        in_cache: false,
                    });
                }
            }
        }
    }
    for (line, text) in &log.unreadable {
        problems.push(format!(
            "{}:{line}: an autotune line that could not be read (cut?): {text}",
            log.source
        ));
    }
}

/// The logged best against the logged timings.
fn check_logged(k: &mut FusedKernel, logged: Option<&Logged>) {
    let completed = logged.is_some_and(|l| l.completed);
    if let Some(n) = k.top_n
        && !completed
    {
        k.problems.push(format!(
            "compiled {n} candidates, but no `Autotune completed` line was logged (run stopped?)"
        ));
    }
    if completed && let Some(n) = k.top_n {
        let got = k.candidates.len();
        if got < n as usize {
            k.problems.push(format!(
                "top {n} were profiled but {got} timing lines were logged (log cut?)"
            ));
        }
    }
    if let Some(b) = k.logged_best {
        if b < k.candidates.len() {
            k.winner = Some(b);
        } else if !k.candidates.is_empty() {
            k.problems.push(format!(
                "best kernel index {b}, but only {} timings were logged",
                k.candidates.len()
            ));
        }
    }
    if let (Some(w), Some((fastest, _))) = (k.winner_us(), k.best_worst_us())
        && w > fastest
    {
        let j = k
            .candidates
            .iter()
            .position(|c| c.timing_us == Some(fastest))
            .unwrap_or(0);
        k.problems.push(format!(
            "the logged best ({w:.2} us) is not the fastest candidate: #{j} took {fastest:.2} us"
        ));
    }
}

fn add_debug_dir(k: &mut FusedKernel, dd: &DebugKernelDir) {
    k.debug_dir = Some(dd.path.clone());
    k.files = dd.files.iter().map(|f| dd.path.join(f)).collect();
    k.post_grad = dd.post_grad.clone();
    let file_keys: Vec<&str> = dd
        .files
        .iter()
        .filter_map(|f| f.strip_prefix("asc_kernel_")?.strip_suffix(".py"))
        .filter(|key| is_md5(key))
        .collect();
    let jit = dd.files.iter().any(|f| f == "asc_kernel.py");
    let topn = !file_keys.is_empty() || dd.files.iter().any(|f| f == "asc_tiling.py");
    match (k.path, jit, topn) {
        (CompilePath::Unknown, true, false) => k.path = CompilePath::Jit,
        (CompilePath::Unknown, _, true) => k.path = CompilePath::TopN,
        (CompilePath::TopN, true, false) => k
            .problems
            .push("the log says Top-N, but the debug folder holds the JIT asc_kernel.py".into()),
        _ => {}
    }
    if k.candidates.is_empty() {
        // No log: the folder still tells which candidates were compiled.
        for key in &file_keys {
            let index = k.candidates.len();
            k.candidates.push(Candidate {
                index,
                key: Some(key.to_string()),
                timing_us: None,
                kernel_so: None,
                source: None,
                in_cache: false,
            });
        }
    }
    for c in &mut k.candidates {
        if let Some(key) = &c.key
            && file_keys.contains(&key.as_str())
        {
            c.source = Some(dd.path.join(format!("asc_kernel_{key}.py")));
        }
    }
    let unlogged: Vec<&str> = file_keys
        .iter()
        .filter(|key| !k.candidates.iter().any(|c| c.key.as_deref() == Some(**key)))
        .copied()
        .collect();
    if !unlogged.is_empty() {
        k.problems.push(format!(
            "{} asc_kernel_<key>.py in the debug folder have no logged timing: {}",
            unlogged.len(),
            unlogged.join(", ")
        ));
    }
}

fn add_cache(k: &mut FusedKernel, entries: &[&CacheEntry], logged_hash: Option<&str>) {
    let chosen = match logged_hash {
        Some(h) => entries.iter().find(|e| e.hash == h),
        None => entries.first(),
    };
    let Some(entry) = chosen else {
        if let (Some(h), false) = (logged_hash, entries.is_empty()) {
            k.problems.push(format!(
                "the log names cache entry {h}, which is not among the {} found",
                entries.len()
            ));
        }
        return;
    };
    if entries.len() > 1 {
        k.problems.push(format!(
            "{} cache entries for this kernel; showing {}",
            entries.len(),
            entry.hash
        ));
    }
    k.cache_dir = Some(entry.path.clone());
    if k.path == CompilePath::Unknown {
        k.path = CompilePath::TopN;
    }
    if k.candidates.is_empty() {
        for key in &entry.static_keys {
            let index = k.candidates.len();
            k.candidates.push(Candidate {
                index,
                key: Some(key.clone()),
                timing_us: None,
                kernel_so: None,
                source: None,
                in_cache: false,
            });
        }
    }
    for c in &mut k.candidates {
        c.in_cache = c
            .key
            .as_ref()
            .is_some_and(|key| entry.static_keys.contains(key));
    }
    match &entry.optimize_tiling {
        None => k
            .problems
            .push("the cache entry has no optimize_tiling: the winner is not recorded".into()),
        Some(Err(e)) => k.problems.push(format!("optimize_tiling unreadable: {e}")),
        Some(Ok(ot)) => {
            if ot.tiling.is_none() {
                k.problems.push(format!(
                    "optimize_tiling is not `tiling|workspace|block_dim`: {:?}",
                    shorten(&ot.line)
                ));
            }
            check_key(k, &ot.kernel_key);
            k.optimize_tiling = Some(ot.clone());
        }
    }
}

/// The md5 kernel-key check: md5(optimize_tiling) must be the winner's kernel_key.
fn check_key(k: &mut FusedKernel, md5: &str) {
    let named = k
        .candidates
        .iter()
        .position(|c| c.key.as_deref() == Some(md5));
    match (k.winner, named) {
        (Some(w), Some(j)) if w == j => k.key_check = Some(true),
        (Some(w), other) => {
            k.key_check = Some(false);
            let said = match other {
                Some(j) => format!("candidate #{j}"),
                None => "no candidate".into(),
            };
            let key = k.candidates[w].key.as_deref().unwrap_or("unknown");
            k.problems.push(format!(
                "kernel-key check failed: md5(optimize_tiling) = {md5} names {said}, \
                 but the logged best is #{w} (key {key})"
            ));
        }
        (None, Some(j)) => {
            // No log: the cache alone says which candidate won.
            k.winner = Some(j);
            k.key_check = Some(true);
        }
        (None, None) => {
            k.key_check = Some(false);
            k.problems.push(format!(
                "md5(optimize_tiling) = {md5} is the key of no known candidate"
            ));
        }
    }
}

fn note_missing(k: &mut FusedKernel) {
    if k.path == CompilePath::Jit {
        return;
    }
    if k.candidates.iter().all(|c| c.timing_us.is_none()) && k.top_n.is_none() {
        k.problems.push(
            "no timings: no inductor_asc log line names this kernel (open or paste the log)".into(),
        );
    }
    if k.debug_dir.is_none() {
        k.problems
            .push("no debug folder (written only with TORCH_COMPILE_DEBUG=1)".into());
    }
    if k.cache_dir.is_none() {
        k.problems.push(
            "no cache entry (it lives under TORCHINDUCTOR_CACHE_DIR/ascendc, outside the debug folder)"
                .into(),
        );
    }
}

fn shorten(s: &str) -> String {
    match s.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

/// The ATen ops a kernel name lists: `autofused_add_mul_<md5>` → `add`, `mul`. Op names hold
/// `_` too (`native_layer_norm`), so with `known` ops (those of the graph) the name is split
/// into the longest known names; unknown words stay single.
pub fn fused_ops(name: &str, known: Option<&HashSet<String>>) -> Vec<String> {
    let start = name
        .find("autofused_")
        .map(|i| i + "autofused_".len())
        .or_else(|| name.find("fused_").map(|i| i + "fused_".len()))
        .unwrap_or(0);
    let mut body = &name[start..];
    if let Some((head, tail)) = body.rsplit_once('_')
        && is_md5(tail)
    {
        body = head;
    }
    let words: Vec<&str> = body.split('_').collect();
    let mut ops = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let longest = known.and_then(|known| {
            (i + 1..=words.len())
                .rev()
                .find(|&j| known.contains(&words[i..j].join("_")))
        });
        let j = longest.unwrap_or(i + 1);
        let op = words[i..j].join("_");
        if !op.is_empty() && !ops.contains(&op) {
            ops.push(op);
        }
        i = j;
    }
    ops
}

/// `add` of `torch.ops.aten.add.Tensor` (any `torch.ops` namespace); `None` for other targets.
fn op_packet(target: &str) -> Option<&str> {
    let rest = target.strip_prefix("torch.ops.")?;
    let mut parts = rest.split('.');
    let _namespace = parts.next()?;
    parts.next()
}

/// Fills `ops` and `fx_nodes` from the post-grad graph: the call_function nodes whose ATen op
/// is one the kernel name lists. A name may list ops the post-grad graph no longer has (they
/// were decomposed); those are said in `problems` when none matched at all.
pub fn link_fx(k: &mut FusedKernel, graph: &FxFile) {
    let Some(top) = graph.graphs.first() else {
        return;
    };
    let known: HashSet<String> = top
        .nodes
        .iter()
        .filter(|n| n.op == OpKind::CallFunction)
        .filter_map(|n| op_packet(&n.target).map(str::to_string))
        .collect();
    k.ops = fused_ops(&k.name, Some(&known));
    k.fx_nodes = top
        .nodes
        .iter()
        .filter(|n| n.op == OpKind::CallFunction)
        .filter(|n| op_packet(&n.target).is_some_and(|p| k.ops.iter().any(|o| o == p)))
        .map(|n| n.name.to_string())
        .collect();
    if k.fx_nodes.is_empty() && !k.ops.is_empty() {
        k.problems
            .push(format!("no post-grad FX node runs {}", k.ops.join(", ")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_from_names() {
        let md5 = "6c45c98e7c34cea7e25bb5b91419f621";
        assert_eq!(
            fused_ops(&format!("autofused_add_mul_{md5}"), None),
            ["add", "mul"]
        );
        let known: HashSet<String> = ["native_layer_norm", "add", "_to_copy"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            fused_ops(
                &format!("autofused__to_copy_add_native_layer_norm_{md5}"),
                Some(&known)
            ),
            ["_to_copy", "add", "native_layer_norm"]
        );
        assert_eq!(
            fused_ops(&format!("unsupported_sort_autofused_transpose_{md5}"), None),
            ["transpose"]
        );
        assert_eq!(op_packet("torch.ops.aten.add.Tensor"), Some("add"));
        assert_eq!(op_packet("operator.getitem"), None);
    }
}
