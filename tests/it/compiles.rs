//! The compile story read from torch's trace log (issue 15): every fixture trace, the
//! torch-made `compile_story` run checked against what torch itself reported
//! (`expected.json`), `fxray compiles`, and cut, damaged and CRLF traces.

use crate::common::{fixture, fxray, stdout_json};
use fxray::analysis::compiles;
use fxray::model::compile::{CompileTrace, Status};
use fxray::pipeline::compiles::{Story, stories};
use fxray::sources::trace_log;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Every `dedicated_log_torch_trace_*.log` under the fixtures.
pub fn fixture_traces() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(fixture(""))
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.into_path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| trace_log_name(&n.to_string_lossy()))
        })
        .collect();
    out.sort();
    out
}

fn trace_log_name(n: &str) -> bool {
    n.starts_with("dedicated_log_torch_trace") && n.ends_with(".log")
}

/// Header lines of a trace (what the reader must account for, one event each).
fn header_lines(text: &str) -> usize {
    text.lines()
        .filter(|l| l.starts_with(['V', 'I', 'W', 'E', 'C']))
        .count()
}

#[test]
fn every_fixture_trace_reads_whole_with_ids_metrics_and_spans() {
    // The torch-version fixtures are checked against tlparse in `compiles_versions`.
    let traces: Vec<PathBuf> = fixture_traces()
        .into_iter()
        .filter(|p| !p.starts_with(fixture("torch_versions")))
        .collect();
    assert_eq!(traces.len(), 19, "18 shared fixture traces + compile_story");
    for path in traces {
        let p = path.display();
        let text = std::fs::read_to_string(&path).unwrap();
        let t = trace_log::load(&path).unwrap();
        assert!(t.problems.is_empty(), "{p}: {:?}", t.problems);
        assert!(t.stopped.is_none(), "{p}: {:?}", t.stopped);
        assert_eq!(t.kinds.values().sum::<usize>(), header_lines(&text), "{p}");
        assert_eq!(t.torch_version.as_deref(), Some("2.15.0+cu132"), "{p}");
        assert!(!t.compiles.is_empty(), "{p}");
        assert!(t.pid.is_some(), "{p}");
        for c in &t.compiles {
            // Every compile of these finished runs wrote its metrics, with the same id.
            assert_eq!(
                c.metric_str("compile_id"),
                Some(c.id().as_str()),
                "{p} {}",
                c.label()
            );
            assert_ne!(c.status(), Status::Unknown, "{p} {}", c.label());
            // A frame that broke before its first op (a graph-break hook at a call's start), or
            // a resumed frame with nothing left to trace, makes no graph for torch to log.
            let empty = c.metric_f64("graph_op_count").unwrap_or(0.0) == 0.0;
            if c.status() != Status::Failed && !empty {
                assert!(
                    c.dynamo_graph().is_some(),
                    "{p} {}: no Dynamo graph",
                    c.label()
                );
                assert!(c.guard_count() > 0, "{p} {}", c.label());
            }
            assert!(!c.user_stack.is_empty(), "{p} {}", c.label());
            assert!(
                !c.user_stack.iter().any(|f| f.loc.file.starts_with("<file")),
                "{p}: interned file ids resolved"
            );
            // The flame chart's total for the compile is the metrics' total (µs rounding).
            if let (Some(m), Some(f)) = (c.time_s(), compiles::flame_total_s(&t, &c.id())) {
                assert!(
                    (m - f).abs() < 2e-3,
                    "{p} {}: metrics {m} flame {f}",
                    c.label()
                );
            }
        }
        assert!(!t.spans.is_empty(), "{p}");
        assert_eq!(t.unmatched_ends, 0, "{p}");
    }
}

#[test]
fn two_models_recompiles_on_grad_mode_and_joins_both_models() {
    let s = &stories(&fixture("npugraph_ex/two_models")).unwrap()[0];
    let ids: Vec<String> = s.trace.compiles.iter().map(|c| c.id()).collect();
    assert_eq!(ids, ["0/0", "0/1"]);
    let c1 = &s.trace.compiles[1];
    assert_eq!(
        c1.recompile_reason.as_deref(),
        Some("0/0: GLOBAL_STATE changed: grad_mode")
    );
    assert_eq!(s.trace.recompiles().count(), 1);
    let c0 = &s.trace.compiles[0];
    assert_eq!(c0.time_s(), Some(0.997528));
    assert_eq!(c0.metric_f64("backend_compile_time_s"), Some(0.834863));
    assert_eq!(c0.metric_f64("graph_node_count"), Some(12.0));
    assert_eq!(c0.co_name(), Some("forward"));
    assert_eq!(
        c0.location().unwrap().to_string(),
        "/home/dev/models/gen/models.py:41"
    );
    assert_eq!(c0.status(), Status::Ok);
    assert!(c0.bwd_metrics.is_some(), "training step: backward metrics");
    assert_eq!(
        model_map(s),
        [
            ("model__0", "0/0".to_string()),
            ("model__1", "0/1".to_string())
        ]
    );
    assert_eq!(
        compiles::why(&s.trace, 1),
        "recompile: 0/0: GLOBAL_STATE changed: grad_mode"
    );
}

fn model_map(s: &Story) -> Vec<(&str, String)> {
    let mut m: Vec<(&str, String)> = s
        .links
        .iter()
        .map(|l| (l.model.as_str(), s.trace.compiles[l.compile].id()))
        .collect();
    m.sort();
    m
}

#[test]
fn multi_rank_traces_join_their_own_rank() {
    let all = stories(&fixture("npugraph_ex/multi_rank")).unwrap();
    assert_eq!(all.len(), 2);
    let ranks: Vec<Option<u32>> = all.iter().map(|s| s.trace.rank).collect();
    assert_eq!(ranks, [Some(0), Some(1)]);
    for s in &all {
        assert_eq!(s.links.len(), 1, "{}", s.path.display());
        let l = &s.links[0];
        let rank = s.trace.rank.unwrap();
        assert!(
            l.run.ends_with(&format!("rank_{rank}")),
            "rank {rank} joined to {}",
            l.run
        );
    }
}

#[test]
fn every_npugraph_ex_model_with_a_dynamo_graph_is_joined() {
    for case in [
        "npugraph_ex/mlp_inference",
        "npugraph_ex/transformer_train",
        "npugraph_ex/two_models",
        "npugraph_ex/dynamic_shapes",
        "npugraph_ex/torch_cond",
        "npugraph_ex/stress_24layer",
        "showcase",
        "data_dump/attention_bf16_nan_inf",
        "compile_story",
    ] {
        let all = stories(&fixture(case)).unwrap();
        let index = fxray::pipeline::tree::index(&fixture(case)).unwrap();
        let models: Vec<(String, String)> = index
            .runs
            .iter()
            .flat_map(|r| {
                r.models
                    .iter()
                    .filter(|m| m.dynamo_graph.is_some())
                    .map(|m| (r.name.clone(), m.name.clone()))
            })
            .collect();
        let mut joined: Vec<(String, String)> = all
            .iter()
            .flat_map(|s| s.links.iter().map(|l| (l.run.clone(), l.model.clone())))
            .collect();
        joined.sort();
        let mut want = models.clone();
        want.sort();
        assert_eq!(joined, want, "{case}");
    }
}

#[test]
fn inductor_models_join_by_their_aot_graph_inputs() {
    for (case, want) in [
        ("inductor/a_mlp_inference", vec![("model__0", "0/0")]),
        ("inductor/b_transformer_infer", vec![("model__0", "0/0")]),
        ("inductor/c_transformer_train", vec![("model__0", "0/0")]),
        ("inductor/e_dynamic_shapes", vec![("model__1", "0/0")]),
        ("inductor/f_torch_cond", vec![("model__0", "0/0")]),
    ] {
        let all = stories(&fixture(case)).unwrap();
        let got = model_map(&all[0]);
        let want: Vec<(&str, String)> = want.into_iter().map(|(m, c)| (m, c.to_string())).collect();
        assert_eq!(got, want, "{case}");
    }
}

/// Checks a compile-story run (the fixture, or one the e2e test just made with real torch)
/// against what torch said in `expected.json`.
pub fn check_compile_story(root: &Path) {
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("expected.json")).unwrap())
            .unwrap();
    let script = expected["script"].as_str().unwrap();
    let all = stories(root).unwrap();
    assert_eq!(all.len(), 1);
    let s = &all[0];
    let t = &s.trace;
    assert!(t.problems.is_empty() && t.stopped.is_none());

    // (a) two graph breaks, at the lines of the script's `print()` and `.item()`.
    let breaks = t.graph_breaks();
    assert_eq!(breaks.len(), 2);
    for ((c, b), want) in breaks
        .iter()
        .zip(expected["graph_breaks"].as_array().unwrap())
    {
        let loc = b.location.as_ref().unwrap();
        assert_eq!(loc.file, script);
        assert_eq!(loc.line as u64, want["line"].as_u64().unwrap());
        assert_eq!(c.status(), Status::GraphBreak);
        assert_eq!(b.user_stack.last().unwrap().loc, *loc);
        assert!(b.user_stack.last().unwrap().code.is_some());
    }
    assert!(breaks[0].1.reason.contains("`print`"));
    assert_eq!(breaks[0].1.title(), "Failed to trace builtin operator");
    assert!(breaks[1].1.reason.contains("Tensor.item()"));
    // torch's own graph_breaks log says the same line and reason.
    for ((_, b), log) in breaks
        .iter()
        .zip(expected["graph_break_logs"].as_array().unwrap())
    {
        let log = log.as_str().unwrap();
        let loc = b.location.as_ref().unwrap();
        assert!(log.starts_with(&format!("Graph break in user code at {loc}")));
        assert!(log.contains(b.title()));
    }
    // The resume functions are the compiles after each break; the tree says so.
    let (c0, c1, c2) = (0, 1, 2);
    assert_eq!(
        compiles::compile_after_break(t, c0, &t.compiles[c0].breaks[0]),
        Some(c1)
    );
    assert_eq!(
        compiles::compile_after_break(t, c1, &t.compiles[c1].breaks[0]),
        Some(c2)
    );
    let line = |i: usize| expected["graph_breaks"][i]["line"].as_u64().unwrap();
    assert!(
        compiles::why(t, c1).starts_with(&format!("graph break at compile_story.py:{}", line(0))),
        "{}",
        compiles::why(t, c1)
    );
    assert!(
        compiles::why(t, c2).starts_with(&format!("graph break at compile_story.py:{}", line(1)))
    );
    assert_eq!(
        t.compiles[c0].attempt, 1,
        "the break restarted the analysis: [0/0_1]"
    );
    assert_eq!(t.compiles[c0].label(), "[0/0_1]");

    // (b) the recompile names the guard torch's recompiles log names.
    let rec: Vec<_> = t.recompiles().collect();
    assert_eq!(rec.len(), 1);
    let reason = rec[0].recompile_reason.as_deref().unwrap();
    assert_eq!(rec[0].co_name(), Some("scale"));
    assert!(
        reason.contains("tensor 'x' size mismatch at index 0"),
        "{reason}"
    );
    let log = expected["recompile"]["logs"][0].as_str().unwrap();
    assert!(log.contains(&format!("- {reason}")), "{log}\nvs\n{reason}");
    assert!(
        rec[0]
            .guards
            .iter()
            .any(|g| g.kind == "TENSOR_MATCH" && g.text.contains("L['x']"))
    );

    // (c) the failed compile: type, reason and line as torch raised them.
    let failed: Vec<_> = t
        .compiles
        .iter()
        .filter(|c| c.status() == Status::Failed)
        .collect();
    assert_eq!(failed.len(), 1);
    let f = failed[0];
    assert_eq!(f.co_name(), Some("strict"));
    assert_eq!(f.fail_type(), expected["failure"]["type"].as_str());
    assert!(
        f.fail_reason()
            .unwrap()
            .starts_with(expected["failure"]["first_line"].as_str().unwrap())
    );
    assert_eq!(
        f.fail_location().unwrap().line as u64,
        expected["failure"]["line"].as_u64().unwrap()
    );
    assert!(f.dynamo_graph().is_none());

    // (d) the restarted compile: attempt 0 handed its graph to the backend, then restarted
    // (TensorifyScalarRestartAnalysis); each attempt is a row and has its own folder.
    let restarted = t
        .compiles
        .iter()
        .position(|c| c.co_name() == Some("forward") && c.attempt == 1 && c.breaks.is_empty())
        .expect("the tensorify restart");
    let c = &t.compiles[restarted];
    let rows = c.attempts();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].status, Status::Restarted);
    assert!(
        rows[0]
            .restart_reason
            .as_deref()
            .unwrap()
            .contains("TensorifyScalarRestartAnalysis")
    );
    assert_eq!(rows[1].status, Status::Ok, "the attempt that succeeded");
    assert_eq!(c.final_status(), Status::Ok);
    // Every model__N is linked to the attempt the backend was called in.
    let attempts = expected["attempts"].as_object().unwrap();
    assert_eq!(s.links.len(), attempts.len(), "every folder is linked");
    for l in &s.links {
        assert_eq!(
            Some(l.attempt as u64),
            attempts[&l.model].as_u64(),
            "{}",
            l.model
        );
        let note = compiles::model_note(t, l);
        let cl = &t.compiles[l.compile];
        if l.attempt < cl.attempt {
            assert!(
                note.starts_with(&format!("restarted attempt {} of {}: ", l.attempt, cl.id())),
                "{}: {note}",
                l.model
            );
        } else {
            assert!(!note.starts_with("restarted"), "{}: {note}", l.model);
        }
    }
    let orphan = s
        .links
        .iter()
        .find(|l| l.compile == restarted && l.attempt == 0)
        .expect("attempt 0's folder");
    assert!(
        compiles::model_note(t, orphan).contains("TensorifyScalarRestartAnalysis"),
        "{}",
        compiles::model_note(t, orphan)
    );

    // The model__N links are the ones the backend was called for.
    let mut want: Vec<(String, String)> = expected["models"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(m, id)| (m.clone(), id.as_str().unwrap().to_string()))
        .collect();
    want.sort();
    let got: Vec<(String, String)> = model_map(s)
        .into_iter()
        .map(|(m, id)| (m.to_string(), id))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn compile_story_fixture_matches_what_torch_said() {
    check_compile_story(&fixture("compile_story"));
}

#[test]
fn cli_json_lists_compiles_breaks_and_recompiles() {
    let root = fixture("compile_story");
    let v = stdout_json(&fxray(&["compiles", root.to_str().unwrap(), "--json"]));
    let compiles = v["compiles"].as_array().unwrap();
    // One row per attempt: 0/0, 1/0 and 5/0 restarted once (counted in the trace: their
    // highest `attempt` is 1), 2/0, 3/0, 3/1 and 4/0 did not.
    assert_eq!(compiles.len(), 10);
    let c0 = &compiles[0];
    assert_eq!(c0["id"], "0/0");
    assert_eq!(c0["attempt"], 0);
    assert_eq!(c0["label"], "[0/0]");
    assert_eq!(c0["status"], "restarted");
    assert_eq!(c0["model"], Value::Null, "attempt 0 reached no backend");
    assert!(c0["restart_reason"].as_str().unwrap().contains("`print`"));
    assert_eq!(c0["graphs"].as_array().unwrap().len(), 0);
    let c0 = &compiles[1];
    assert_eq!(c0["id"], "0/0");
    assert_eq!(c0["attempt"], 1);
    assert_eq!(c0["status"], "graph_break");
    assert_eq!(c0["co_name"], "forward");
    assert_eq!(c0["model"], "model__0");
    assert!(c0["time_s"].as_f64().unwrap() > 0.0);
    assert!(
        c0["graph_break"]["location"]
            .as_str()
            .unwrap()
            .ends_with("compile_story.py:86")
    );
    assert!(c0["guards"].as_u64().unwrap() > 0);
    assert!(c0["trace"].as_str().unwrap().ends_with(".log"));
    let c4 = compiles.iter().find(|c| c["id"] == "3/1").unwrap();
    assert_eq!(c4["model"], "model__4");
    assert!(
        c4["recompile_reason"]
            .as_str()
            .unwrap()
            .contains("size mismatch")
    );
    // The restarted compile: attempt 0 wrote model__5 (only its Dynamo graph), attempt 1
    // model__6; the tree's note says which attempt and why.
    let r: Vec<&Value> = compiles.iter().filter(|c| c["id"] == "5/0").collect();
    assert_eq!(r.len(), 2);
    assert_eq!(
        (&r[0]["status"], &r[0]["model"]),
        (&"restarted".into(), &"model__5".into())
    );
    assert_eq!(
        (&r[1]["status"], &r[1]["model"]),
        (&"ok".into(), &"model__6".into())
    );
    let models = v["models"].as_array().unwrap();
    let m5 = models.iter().find(|m| m["model"] == "model__5").unwrap();
    assert_eq!((&m5["compile"], &m5["attempt"]), (&"5/0".into(), &0.into()));
    assert!(
        m5["note"]
            .as_str()
            .unwrap()
            .starts_with("restarted attempt 0 of 5/0: ")
    );
    let failed = compiles.iter().find(|c| c["id"] == "4/0").unwrap();
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["model"], Value::Null);
    assert_eq!(v["graph_breaks"].as_array().unwrap().len(), 2);
    assert_eq!(v["graph_breaks"][1]["compile"], "1/0");
    assert_eq!(v["recompiles"][0]["compile"], "3/1");

    // The same from the run folder, a model folder and the trace file itself.
    let run = crate::common::run_dir("compile_story");
    let trace = fixture_traces()
        .into_iter()
        .find(|p| p.starts_with(&root))
        .unwrap();
    for p in [run.clone(), run.join("npugraph_ex/model__2"), trace] {
        let w = stdout_json(&fxray(&["compiles", p.to_str().unwrap(), "--json"]));
        assert_eq!(
            w["compiles"].as_array().unwrap().len(),
            10,
            "{}",
            p.display()
        );
        assert_eq!(w["graph_breaks"], v["graph_breaks"], "{}", p.display());
    }
    let text = fxray(&["compiles", root.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("graph break at"), "{text}");
    assert!(text.contains("[0/0_1]"), "{text}");
    assert!(text.contains("[5/0_1]   ok"), "{text}");
}

#[test]
fn cli_says_when_there_is_no_trace_log() {
    let out = fxray(&["compiles", fixture("aclgraph").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no trace log"));
}

fn compile_story_text() -> Vec<u8> {
    let p = fixture_traces()
        .into_iter()
        .find(|p| p.starts_with(fixture("compile_story")))
        .unwrap();
    std::fs::read(p).unwrap()
}

fn parse(bytes: &[u8]) -> CompileTrace {
    trace_log::parse(std::io::Cursor::new(bytes)).unwrap()
}

#[test]
fn cut_traces_read_up_to_the_cut_and_say_so() {
    let full = compile_story_text();
    let whole = parse(&full);
    let mut cuts = 0;
    for at in (1..full.len()).step_by(1009) {
        let t = parse(&full[..at]);
        assert!(t.compiles.len() <= whole.compiles.len());
        // A cut right before a newline leaves a complete last line: no cut (issue 28).
        if full[at - 1] != b'\n' && full[at] != b'\n' {
            cuts += 1;
            let why = t.stopped.as_deref().expect("a cut says where");
            assert!(why.contains("ends mid-line"), "{why}");
        }
    }
    assert!(cuts > 100);
    // Cut after the second compile's metrics: the first two compiles are whole.
    let at = find_nth(&full, b"\"compilation_metrics\"", 2).unwrap();
    let t = parse(&full[..at]);
    assert_eq!(t.compiles[0].status(), Status::GraphBreak);
    assert_eq!(
        t.compiles[1].status(),
        Status::Unknown,
        "its metrics were cut"
    );
}

fn find_nth(hay: &[u8], needle: &[u8], n: usize) -> Option<usize> {
    hay.windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .nth(n - 1)
}

#[test]
fn damaged_lines_are_skipped_with_their_line_number() {
    let full = String::from_utf8(compile_story_text()).unwrap();
    let mut lines: Vec<String> = full.lines().map(str::to_string).collect();
    // A header with broken JSON, a line with no prefix, binary garbage, a payload line
    // without a header, an unknown kind and a damaged chromium event payload.
    lines.insert(
        3,
        "V1201 08:02:04.783000 13000 x.py:1] {\"artifact\": {".into(),
    );
    lines.insert(5, "this is not a trace line".into());
    lines.insert(7, "\u{0}\u{1}\u{fffd}garbage".into());
    lines.insert(0, "\tstray payload".into());
    lines.push("V1201 08:02:05.000000 13000 x.py:1] {\"brand_new_kind\": {}, \"frame_id\": 9, \"frame_compile_id\": 0, \"has_payload\": \"x\"}".into());
    lines.push("\tnew payload".into());
    lines.push(
        "V1201 08:02:05.000000 13000 x.py:1] {\"chromium_event\": {}, \"has_payload\": \"x\"}"
            .into(),
    );
    lines.push("\t{\"name\": ".into());
    let text = lines.join("\n") + "\n";
    let t = parse(text.as_bytes());
    // The broken header cut the first chromium event's payload short: that is a problem too,
    // and so is its md5; the two made-up events' md5 `x` is none (tlparse counts them too).
    assert_eq!(t.problems.len(), 8, "{:?}", t.problems);
    assert_eq!(t.md5_mismatches, 3);
    assert!(
        t.problems
            .iter()
            .any(|(l, w)| *l == 5 && w.contains("not valid JSON"))
    );
    assert!(
        t.problems
            .iter()
            .any(|(l, w)| *l == 7 && w.contains("no glog prefix"))
    );
    let whole = parse(full.as_bytes());
    assert_eq!(t.graph_breaks().len(), whole.graph_breaks().len());
    assert_eq!(t.kinds.get("brand_new_kind"), Some(&1));
    let kept = t.compile("9/0").unwrap();
    assert_eq!(kept.artifacts[0].name, "brand_new_kind");
    assert_eq!(kept.artifacts[0].text, "new payload\n");
}

#[test]
fn crlf_traces_read_like_lf() {
    let full = String::from_utf8(compile_story_text()).unwrap();
    let crlf = full.replace('\n', "\r\n");
    let (a, b) = (parse(full.as_bytes()), parse(crlf.as_bytes()));
    assert!(b.problems.is_empty(), "{:?}", b.problems);
    assert_eq!(a.compiles.len(), b.compiles.len());
    for (x, y) in a.compiles.iter().zip(&b.compiles) {
        assert_eq!(x.guards.len(), y.guards.len());
        assert_eq!(x.breaks.len(), y.breaks.len());
        assert_eq!(x.recompile_reason, y.recompile_reason);
        assert_eq!(
            x.dynamo_graph().map(|g| &g.text),
            y.dynamo_graph().map(|g| &g.text)
        );
    }
}

#[test]
fn hostile_bytes_never_panic() {
    let full = compile_story_text();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..200 {
        let mut bytes = full.clone();
        for _ in 0..50 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let i = (seed as usize) % bytes.len();
            bytes[i] = (seed >> 32) as u8;
        }
        let _ = parse(&bytes);
    }
    let _ = parse(b"");
    let _ = parse(b"\t\t\t");
    let _ = parse(&[0xff; 4096]);
}
