//! AscendC autotune joins (docs/formats.md §7) on the test trees in tests/data/autotune/ (built by
//! its gen.py to the documented layout: no real NPU output exists in the fixtures).
//! - `topn/`: every piece of evidence, consistent: log, debug folders, cache entries.
//! - `incomplete/`: a log without folders, a folder without a log, a cache entry whose
//!   optimize_tiling names another candidate than the log, a corrupt optimize_tiling, a log cut
//!   mid-line.

use crate::common::{copy_tree, fxray, stdout_json};
use fxray::model::autotune::{AutotuneReport, CompilePath, FusedKernel};
use fxray::pipeline::autotune::build_report;
use fxray::sources::autotune::{kernel_key, parse_asc_log};
use std::path::{Path, PathBuf};

fn data(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/autotune")
        .join(case)
}

fn report(path: &Path) -> AutotuneReport {
    let index = fxray::pipeline::tree::index(path).expect("index");
    build_report(Some(&index), None)
}

fn kernel<'a>(r: &'a AutotuneReport, prefix: &str) -> &'a FusedKernel {
    r.kernels
        .iter()
        .find(|k| k.name.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix} kernel among {:?}", names(r)))
}

fn names(r: &AutotuneReport) -> Vec<&str> {
    r.kernels.iter().map(|k| k.name.as_str()).collect()
}

fn has_problem(k: &FusedKernel, needle: &str) -> bool {
    k.problems.iter().any(|p| p.contains(needle))
}

#[test]
fn full_evidence_joins_per_kernel() {
    let r = report(&data("topn"));
    assert_eq!(
        names(&r),
        [
            "autofused_add_erf_mul_6c45c98e7c34cea7e25bb5b91419f621",
            "autofused_permute_1b6e945d27075f8f82a1f36bde16c12d",
            "autofused_addmm_374a8f82018a259e3e1c71b19e6990fe",
        ],
        "log order first, then folders"
    );
    assert_eq!(r.sources.logs.len(), 1);
    assert!(r.sources.logs[0].ends_with("console.log"));
    assert_eq!((r.sources.debug_dirs, r.sources.cache_entries), (3, 2));
    assert!(r.problems.is_empty(), "{:?}", r.problems);

    let k = kernel(&r, "autofused_add_erf_mul_");
    assert!(k.problems.is_empty(), "{:?}", k.problems);
    assert_eq!(k.path, CompilePath::TopN);
    assert_eq!((k.top_n, k.choices), (Some(3), Some(8)));
    assert_eq!(k.rank.as_deref(), Some("0"));
    let times: Vec<Option<f64>> = k.candidates.iter().map(|c| c.timing_us).collect();
    assert_eq!(times, [Some(15.72), Some(9.81), Some(21.05)]);
    assert_eq!((k.logged_best, k.winner), (Some(1), Some(1)));
    assert_eq!(k.winner_us(), Some(9.81));
    let speedup = k.speedup().expect("speed-up");
    assert!((speedup - 21.05 / 9.81).abs() < 1e-9, "{speedup}");
    // Candidate ↔ debug file ↔ cache, by kernel_key.
    for c in &k.candidates {
        let key = c.key.as_deref().expect("key from the logged path");
        let src = c.source.as_ref().expect("asc_kernel_<key>.py");
        assert_eq!(
            src.file_name().unwrap().to_string_lossy(),
            format!("asc_kernel_{key}.py")
        );
        assert!(src.is_file());
        assert!(c.in_cache, "static_kernel/{key}/ in the cache entry");
    }
    let debug = k.debug_dir.as_ref().expect("debug folder");
    assert!(debug.ends_with(&k.name));
    assert!(debug.parent().unwrap().ends_with("model__0_inference_0.0"));
    let files: Vec<String> = k
        .files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for f in [
        "asc_graph.py",
        "asc_tiling.py",
        "benchmark.py",
        "graph.svg",
        "inductor_tiling_wrapper.cpp",
        "inductor_wrapper.cpp",
    ] {
        assert!(files.iter().any(|x| x == f), "{f} in {files:?}");
    }
    let cache = k.cache_dir.as_ref().expect("cache entry");
    assert!(cache.ends_with(format!("{}/88c557b0a2b608f6ebe3d5428b8708ea", k.name)));
    // Kernel name → post-grad FX nodes: add, erf, mul of fx_graph_transformed.py (gelu).
    assert_eq!(k.ops, ["add", "erf", "mul"]);
    assert_eq!(k.fx_nodes, ["mul", "mul_1", "erf", "add", "mul_2"]);
    assert!(
        k.post_grad
            .as_ref()
            .is_some_and(|p| p.ends_with("fx_graph_transformed.py"))
    );

    let p = kernel(&r, "autofused_permute_");
    assert_eq!(p.winner, Some(0));
    assert_eq!(p.fx_nodes, ["permute", "permute_1"]);
    assert_eq!(p.key_check, Some(true));

    let jit = kernel(&r, "autofused_addmm_");
    assert_eq!(jit.path, CompilePath::Jit);
    assert!(jit.candidates.is_empty() && jit.winner.is_none());
    assert!(
        jit.problems.is_empty(),
        "JIT is not a gap: {:?}",
        jit.problems
    );
}

#[test]
fn md5_kernel_key_check() {
    // The check passes on the consistent tree: md5(optimize_tiling) is the logged winner's key,
    // computed here independently from the file.
    let r = report(&data("topn"));
    let k = kernel(&r, "autofused_add_erf_mul_");
    let ot = k.optimize_tiling.as_ref().expect("optimize_tiling read");
    let line = std::fs::read_to_string(&ot.path).unwrap();
    assert_eq!(ot.line, line.trim_end());
    assert_eq!(ot.kernel_key, kernel_key(&ot.line));
    assert_eq!(
        ot.kernel_key,
        k.candidates[1].key.clone().unwrap(),
        "md5 of the line is candidate #1's key"
    );
    assert_eq!(
        ot.tiling.as_deref(),
        Some("TilingData(tile_len=1024, ub_size=131072, tail_len=256)")
    );
    assert_eq!(ot.workspace.as_deref(), Some("16384"));
    assert_eq!(ot.block_dim.as_deref(), Some("8"));
    assert_eq!(k.key_check, Some(true));

    // It fails when the cache kept another candidate than the log says won.
    let r = report(&data("incomplete"));
    let div = kernel(&r, "autofused_div_");
    assert_eq!(div.key_check, Some(false));
    assert_eq!(
        div.winner,
        Some(2),
        "the logged best stays the winner shown"
    );
    assert!(
        has_problem(div, "kernel-key check failed")
            && has_problem(div, "names candidate #0")
            && has_problem(div, "logged best is #2"),
        "{:?}",
        div.problems
    );

    // And an edited optimize_tiling (one byte) no longer matches in a copy of the good tree.
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&data("topn"), tmp.path());
    let rel = ot.path.strip_prefix(data("topn")).unwrap();
    std::fs::write(tmp.path().join(rel), format!("{}0", ot.line)).unwrap();
    let r = report(tmp.path());
    let k = kernel(&r, "autofused_add_erf_mul_");
    assert_eq!(k.key_check, Some(false));
    assert!(has_problem(k, "names no candidate"), "{:?}", k.problems);
}

#[test]
fn incomplete_evidence_is_reported_not_fatal() {
    let r = report(&data("incomplete"));
    assert_eq!(r.kernels.len(), 5, "{:?}", names(&r));

    // A log without the folder: timings and winner from the log alone.
    let sub = kernel(&r, "autofused_sub_");
    assert_eq!(sub.winner_us(), Some(6.25));
    assert!(sub.debug_dir.is_none() && sub.cache_dir.is_none());
    assert!(has_problem(sub, "no debug folder"), "{:?}", sub.problems);
    assert!(has_problem(sub, "no cache entry"), "{:?}", sub.problems);
    assert_eq!(sub.key_check, None, "nothing to check against");

    // A folder without timings: candidates from asc_kernel_<key>.py, no winner.
    let neg = kernel(&r, "autofused_neg_");
    assert_eq!(neg.path, CompilePath::TopN);
    assert_eq!(neg.candidates.len(), 3);
    assert!(
        neg.candidates
            .iter()
            .all(|c| c.timing_us.is_none() && c.source.is_some())
    );
    assert_eq!(neg.winner, None);
    assert!(has_problem(neg, "no timings"), "{:?}", neg.problems);

    // The log cut inside the first timing line: the cut line is reported, the kernel kept.
    let exp = kernel(&r, "autofused_exp_");
    assert!(exp.candidates.is_empty());
    assert!(
        has_problem(exp, "top 2 were profiled but 0 timing lines"),
        "{:?}",
        exp.problems
    );
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert!(r.problems[0].contains("console.log:12: an autotune line that could not be read"));

    // A cache entry alone, with a corrupt optimize_tiling.
    let relu = kernel(&r, "autofused_relu_");
    assert_eq!(relu.candidates.len(), 1, "from static_kernel/<key>/");
    assert!(
        has_problem(relu, "not `tiling|workspace|block_dim`"),
        "{:?}",
        relu.problems
    );
    assert_eq!(relu.key_check, Some(false));
}

#[test]
fn pasted_text_and_odd_input_never_panic() {
    // Pasted log alone (no folder open): the same join.
    let text = std::fs::read_to_string(data("topn").join("console.log")).unwrap();
    let r = build_report(None, Some(&text));
    assert_eq!(r.sources.logs, ["pasted text"]);
    assert_eq!(kernel(&r, "autofused_add_erf_mul_").winner_us(), Some(9.81));

    // Garbage, binary-ish, half lines and lines in another order.
    let odd = "\0\u{fffd}Kernel x: Timing = 1 us\n\
               [2026-01-01 12:00:00] [RANK0] [INFO] Kernel /a/static_kernel/k/kernel.so: Timing = nan us\n\
               Autotune completed /nowhere, best kernel index: 7, detail:\n\
               Static compile autofused_x, choice top 99999999999 from 1\n\
               Kernel /c/autofused_y_0/static_kernel/k/kernel.so: Timing = 2.5 us\n\
               Kernel /c/autofused_ü_éééééééééééééééé/static_kernel/ééé/kernel.so: Timing = 1 us\n";
    let r = build_report(None, Some(odd));
    let y = kernel(&r, "autofused_y_");
    assert_eq!(y.candidates.len(), 1);
    assert!(!r.problems.is_empty());
    let log = parse_asc_log(odd, "odd");
    assert!(log.records.len() >= 2);
}

#[test]
fn cli_prints_the_table_and_json() {
    let path = data("topn");
    let out = fxray(&["autotune", path.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text
        .lines()
        .find(|l| l.starts_with("autofused_add_erf_mul_"))
        .expect("row");
    for cell in ["top-n", "3 of 8", "#1 9.81 us", "21.05 us", "2.15×", "ok"] {
        assert!(row.contains(cell), "{cell} in {row}");
    }
    let v = stdout_json(&fxray(&["autotune", path.to_str().unwrap(), "--json"]));
    assert_eq!(v["kernels"].as_array().unwrap().len(), 3);
    assert_eq!(v["kernels"][0]["winner"], 1);
    assert_eq!(v["kernels"][0]["candidates"][1]["timing_us"], 9.81);

    let out = fxray(&["autotune", data("incomplete").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("MISMATCH") && text.contains("problems:"),
        "{text}"
    );

    let empty = tempfile::tempdir().unwrap();
    let out = fxray(&["autotune", empty.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no AscendC autotune evidence"));
}

#[test]
fn two_ranks_tuning_the_same_kernel_interleaved() {
    // Each rank prints its own block; lines interleave. The first rank's result is shown, the
    // second is said, and no timing crosses over.
    let k = "autofused_add_0123456789abcdef0123456789abcdef";
    let e = format!("/c/ascendc/host_h/{k}/ffffffffffffffffffffffffffffffff");
    let line = |r: u32, m: String| format!("[2026-01-01 12:00:00] [RANK{r}] [INFO] {m}\n");
    let text = [
        line(0, format!("Static compile {k}, choice top 2 from 4")),
        line(1, format!("Static compile {k}, choice top 2 from 4")),
        line(
            0,
            format!("Autotune completed {e}, best kernel index: 1, detail:"),
        ),
        line(
            1,
            format!("Autotune completed {e}, best kernel index: 0, detail:"),
        ),
        line(
            0,
            format!("Kernel {e}/static_kernel/a/kernel.so: Timing = 5.00 us"),
        ),
        line(
            1,
            format!("Kernel {e}/static_kernel/a/kernel.so: Timing = 4.00 us"),
        ),
        line(
            0,
            format!("Kernel {e}/static_kernel/b/kernel.so: Timing = 3.00 us"),
        ),
        line(
            1,
            format!("Kernel {e}/static_kernel/b/kernel.so: Timing = 6.00 us"),
        ),
    ]
    .concat();
    let r = build_report(None, Some(&text));
    assert_eq!(r.kernels.len(), 1);
    let k = &r.kernels[0];
    assert_eq!(k.rank.as_deref(), Some("0"));
    let times: Vec<Option<f64>> = k.candidates.iter().map(|c| c.timing_us).collect();
    assert_eq!(times, [Some(5.0), Some(3.0)], "rank 0's timings only");
    assert_eq!(k.winner_us(), Some(3.0));
    assert!(
        has_problem(k, "tuned again at pasted text:4"),
        "{:?}",
        k.problems
    );
}
