//! The failure classes of issue 28, one test each, on real torch output: torch 2.1's unnamed
//! graph folder, graph breaks of logs that do not name them, restart reasons, a complete last
//! line without its newline, payload checksums, and a folder of several ranks' logs under
//! names that disagree with their records.

use crate::common::{copy_tree, fixture, fxray, stdout_json, trace_of};
use fxray::model::compile::Status;
use fxray::sources::trace_log;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn version_case(version: &str, case: &str) -> PathBuf {
    fixture(&format!("torch_versions/{version}/{case}"))
}

fn compiles_json(path: &Path) -> Value {
    stdout_json(&fxray(&["compiles", path.to_str().unwrap(), "--json"]))
}

#[test]
fn torch_2_1_graph_folders_without_a_model_name_are_listed() {
    // torch 2.1.2 names the first graph's folder `model___54.0` (no AOT id, no kind) and the
    // second `model__19_inference_55.1`: both are Inductor graphs (counted on disk: every
    // folder under torchinductor/ holding fx_graph_readable.py).
    for case in ["graph_break", "recompile", "dynamic", "training"] {
        let root = version_case("2.1.2", case);
        let on_disk: Vec<PathBuf> = walkdir::WalkDir::new(&root)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_name() == "fx_graph_readable.py")
            .map(|e| e.path().parent().unwrap().to_path_buf())
            .collect();
        assert!(!on_disk.is_empty(), "{case}");
        let index = fxray::pipeline::tree::index(&root).unwrap();
        let phases: Vec<&Path> = index
            .runs
            .iter()
            .flat_map(|r| &r.models)
            .flat_map(|m| &m.phases)
            .map(|p| p.path.as_path())
            .collect();
        for dir in &on_disk {
            assert!(
                phases.contains(&dir.as_path()),
                "{case}: {} is not listed",
                dir.display()
            );
        }
    }
    let index = fxray::pipeline::tree::index(&version_case("2.1.2", "graph_break")).unwrap();
    let models: Vec<(&str, &str)> = index.runs[0]
        .models
        .iter()
        .flat_map(|m| {
            m.phases
                .iter()
                .map(move |p| (m.name.as_str(), p.name.as_str()))
        })
        .collect();
    assert!(models.contains(&("model___54", "graph")), "{models:?}");
    assert!(models.contains(&("model__19", "inference")), "{models:?}");
    // Each holds its two FX graphs as passes.
    for m in &index.runs[0].models {
        assert_eq!(m.phases[0].passes.len(), 2, "{}", m.name);
    }
}

#[test]
fn old_logs_show_graph_breaks_from_their_resume_frames() {
    // torch 2.4.1 logs no `dynamo_graph_break_reason`; compile 1/0 is the resume function
    // `torch_dynamo_resume_in_forward_at_<line of print()>` and 0/0's metrics give the restart.
    let case = version_case("2.4.1", "graph_break");
    let text = std::fs::read_to_string(trace_of(&case)).unwrap();
    assert!(!text.contains("dynamo_graph_break_reason"));
    let facts: Value =
        serde_json::from_str(&std::fs::read_to_string(case.join("case.json")).unwrap()).unwrap();
    let line = facts["breaks"][0].as_u64().unwrap();
    let t = trace_log::load(&trace_of(&case)).unwrap();
    let breaks = t.graph_breaks();
    assert_eq!(breaks.len(), 1);
    let (c, b) = breaks[0];
    assert_eq!(c.id(), "0/0");
    assert!(b.inferred);
    assert_eq!(b.location.as_ref().unwrap().line as u64, line);
    assert_eq!(
        b.location.as_ref().unwrap().file,
        facts["script"].as_str().unwrap()
    );
    assert!(b.reason.contains("builtin: print"), "{}", b.reason);
    assert_eq!(c.final_status(), Status::GraphBreak);
    let v = compiles_json(&case);
    assert_eq!(v["graph_breaks"].as_array().unwrap().len(), 1);
    assert_eq!(v["graph_breaks"][0]["inferred"], true);
    let row = v["compiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "[0/0_1]")
        .unwrap();
    assert_eq!(row["status"], "graph_break");
}

#[test]
fn restart_reasons_are_listed_per_attempt() {
    let v = compiles_json(&fixture("compile_story"));
    let restarts = v["restarts"].as_array().unwrap();
    // 0/0 and 1/0 restarted at their graph breaks, 5/0 to tensorify the LayerNorm's eps.
    let ids: Vec<(&str, u64)> = restarts
        .iter()
        .map(|r| {
            (
                r["compile"].as_str().unwrap(),
                r["attempt"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(ids, [("0/0", 0), ("1/0", 0), ("5/0", 0)]);
    assert!(restarts[0]["reason"].as_str().unwrap().contains("`print`"));
    assert!(
        restarts[2]["reason"]
            .as_str()
            .unwrap()
            .contains("TensorifyScalarRestartAnalysis")
    );
    let text =
        String::from_utf8(fxray(&["compiles", fixture("compile_story").to_str().unwrap()]).stdout)
            .unwrap();
    assert!(
        text.contains("restarted: Failed to trace builtin operator"),
        "{text}"
    );
}

fn copy_case(case: &Path, tmp: &Path) -> PathBuf {
    let to = tmp.join("case");
    copy_tree(case, &to);
    trace_of(&to)
}

#[test]
fn a_complete_last_line_without_a_newline_is_no_cut() {
    let tmp = tempfile::tempdir().unwrap();
    let log = copy_case(&fixture("compile_story"), tmp.path());
    let full = std::fs::read(&log).unwrap();
    assert_eq!(full.last(), Some(&b'\n'));
    let whole = trace_log::load(&log).unwrap();
    // The last line is a payload line: without its newline the md5 still matches.
    std::fs::write(&log, &full[..full.len() - 1]).unwrap();
    let t = trace_log::load(&log).unwrap();
    assert_eq!(t.stopped, None);
    assert!(t.problems.is_empty(), "{:?}", t.problems);
    assert_eq!(t.compiles.len(), whole.compiles.len());
    // A last header line without its newline is complete too.
    let lines: Vec<&[u8]> = full.split(|&b| b == b'\n').collect();
    let last_header = lines
        .iter()
        .rposition(|l| l.first() == Some(&b'V'))
        .unwrap();
    let upto: Vec<u8> = lines[..=last_header].join(&b'\n');
    let kind_has_payload = String::from_utf8_lossy(lines[last_header]).contains("has_payload");
    std::fs::write(&log, &upto).unwrap();
    let t = trace_log::load(&log).unwrap();
    assert_eq!(t.stopped.is_some(), kind_has_payload, "{:?}", t.stopped);
    // A line really cut: half a payload line is a cut.
    std::fs::write(&log, &full[..full.len() - 8]).unwrap();
    let t = trace_log::load(&log).unwrap();
    assert!(t.stopped.as_deref().unwrap().contains("ends mid-line"));
    // And fxray compiles says nothing of a cut on the whole file without its newline.
    std::fs::write(&log, &full[..full.len() - 1]).unwrap();
    let text = String::from_utf8(fxray(&["compiles", log.to_str().unwrap()]).stdout).unwrap();
    assert!(!text.contains("stopped"), "{text}");
}

#[test]
fn payloads_whose_md5_does_not_match_are_one_problem_line_each() {
    for p in crate::compiles::fixture_traces() {
        let t = trace_log::load(&p).unwrap();
        assert_eq!(t.md5_mismatches, 0, "{}", p.display());
    }
    let tmp = tempfile::tempdir().unwrap();
    let log = copy_case(&fixture("compile_story"), tmp.path());
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // Change one character in two payloads: the Dynamo graph of 3/0 and a guard tree.
    let mut changed = Vec::new();
    for needle in ["\"dynamo_output_graph\"", "\"dynamo_cpp_guards_str\""] {
        let h = lines.iter().position(|l| l.contains(needle)).unwrap();
        lines[h + 1].push(' ');
        changed.push(h + 1);
    }
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let t = trace_log::load(&log).unwrap();
    assert_eq!(t.md5_mismatches, 2);
    let md5: Vec<&(usize, String)> = t
        .problems
        .iter()
        .filter(|(_, w)| w.contains("md5"))
        .collect();
    assert_eq!(md5.len(), 2, "{:?}", t.problems);
    assert_eq!(md5[0].0, changed[0], "the header's line number");
    let v = compiles_json(&log);
    assert_eq!(v["traces"][0]["md5_mismatches"], 2);
    assert_eq!(v["traces"][0]["problem_lines"].as_array().unwrap().len(), 2);
}

#[test]
fn a_folder_of_misnamed_rank_logs_says_which_file_each_row_is_from() {
    // Rank 1's log, copied as three files: two named for other ranks, one not named as torch
    // names trace logs at all.
    let src = fixture("npugraph_ex/multi_rank/torch_compile_debug/tlparse");
    let rank1 = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("_rank_1_"))
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let names = [
        "dedicated_log_torch_trace_rank_5_aaaa.log",
        "dedicated_log_torch_trace_rank_6_bbbb.log",
        "node3.log",
    ];
    for n in names {
        std::fs::copy(&rank1, tmp.path().join(n)).unwrap();
    }
    std::fs::write(tmp.path().join("notes.log"), "not a trace\n").unwrap();
    let v = compiles_json(tmp.path());
    let traces = v["traces"].as_array().unwrap();
    assert_eq!(
        traces.len(),
        3,
        "the unnamed log is read too; notes.log is not"
    );
    for t in traces {
        assert_eq!(t["rank"], 1);
        let path = t["path"].as_str().unwrap();
        if path.contains("rank_5") {
            assert_eq!(t["rank_in_name"], 5);
            let w = t["warnings"][0].as_str().unwrap();
            assert!(w.contains("file name says rank 5"), "{w}");
        }
    }
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1);
    assert!(
        problems[0]
            .as_str()
            .unwrap()
            .contains("rank 1 is in 3 files")
    );
    // Every row names the file it came from.
    let rows = v["compiles"].as_array().unwrap();
    for n in names {
        assert!(
            rows.iter()
                .any(|r| r["trace"].as_str().unwrap().ends_with(n)),
            "{n}"
        );
    }
    let text =
        String::from_utf8(fxray(&["compiles", tmp.path().to_str().unwrap()]).stdout).unwrap();
    assert!(text.contains("warning: rank 1 is in 3 files"), "{text}");
}

#[test]
fn metrics_and_artifacts_of_each_compile_are_in_the_json() {
    let v = compiles_json(&fixture("compile_story"));
    let rows = v["compiles"].as_array().unwrap();
    let last = rows.iter().find(|r| r["label"] == "[0/0_1]").unwrap();
    let m = &last["metrics"];
    // As written in the trace's compilation_metrics for 0/0.
    assert!(m["times"]["entire_frame_compile_time_s"].as_f64().unwrap() > 0.0);
    assert!(m["times"]["dynamo_time_before_restart_s"].as_f64().unwrap() > 0.0);
    assert!(m["guards"]["guard_count"].as_u64().unwrap() > 0);
    assert_eq!(m["graph"]["graph_op_count"], 2);
    assert_eq!(m["cache"]["cache_size"], 0);
    assert_eq!(m["restart_reasons"].as_array().unwrap().len(), 1);
    let first = rows.iter().find(|r| r["label"] == "[0/0]").unwrap();
    assert_eq!(
        first["metrics"],
        Value::Null,
        "the metrics are the last attempt's"
    );
    assert_eq!(first["artifacts"][0], "dynamo_graph_break_reason");
    let rec = rows.iter().find(|r| r["label"] == "[3/1]").unwrap();
    assert!(
        rec["artifacts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "recompile_reasons")
    );
    let failed = rows.iter().find(|r| r["label"] == "[4/0]").unwrap();
    assert_eq!(failed["metrics"]["fail"]["fail_type"], "Unsupported");
    assert_eq!(
        v["traces"][0]["artifacts_without_compile"][0],
        "torch_version"
    );
}

#[test]
fn inductor_provenance_links_kernels_to_post_grad_and_pre_grad_nodes() {
    // torch 2.15's training trace logs a provenance artifact for the forward and one for the
    // backward, the backward's holding only `{"version": "2.0"}`: torch tracks no backward.
    let case = version_case("2.15.0", "training");
    let t = trace_log::load(&trace_of(&case)).unwrap();
    let c = &t.compiles[0];
    let all = c.provenances(0);
    assert_eq!(all.len(), 2, "forward and backward");
    assert!(all[1].kernel_to_post.is_empty() && all[1].pre_to_post.is_empty());
    let p = &all[0];
    assert!(!p.kernel_to_post.is_empty() && !p.post_to_pre.is_empty());
    // The post-grad forward's addmm came from the first Linear, and runs as an extern kernel.
    assert_eq!(p.pre_grad_of("addmm"), ["input_1"]);
    assert!(p.kernels_of("addmm")[0].starts_with("extern_kernels.addmm"));
    // Every kernel the provenance names is in the output code the same attempt logged.
    let code: String = c
        .graphs
        .iter()
        .filter(|g| g.kind == fxray::model::compile::GraphKind::OutputCode)
        .map(|g| g.text.as_str())
        .collect();
    for kernel in p.kernel_to_post.keys() {
        let name = kernel.rsplit_once(':').map_or(kernel.as_str(), |(n, _)| n);
        assert!(code.contains(name), "{kernel} not in the output code");
    }
    // Both directions agree.
    for (node, kernels) in &p.post_to_kernel {
        for k in kernels {
            assert!(p.kernel_to_post[k].contains(node), "{node} ↔ {k}");
        }
        assert_eq!(p.kernels_of(node), kernels.as_slice());
    }
    let v = compiles_json(&case);
    let row = &v["compiles"][0];
    assert!(row["provenance"]["kernels"].as_u64().unwrap() > 0);
    assert_eq!(
        row["provenance"]["kernels"].as_u64().unwrap() as usize,
        all.iter().map(|p| p.kernel_to_post.len()).sum::<usize>()
    );
}
