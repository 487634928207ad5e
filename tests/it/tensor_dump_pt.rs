//! npugraph_ex's own tensor dump (`<node>_device_<d>_<k>.pt`, docs/formats.md §3.2), made by
//! `tests/e2e/npugraph_tensor_dump.py` with real torch: every file's statistics equal torch's,
//! each replay is a step, and the NaN/Inf tracer names the node torch found first (in the
//! graph's order: the dump itself records none).

use crate::common::{fixture, fxray, stdout_json};
use serde_json::Value;
use std::path::Path;

/// Checks fxray against the `truth.json` beside the dump in `dir`.
pub fn check(dir: &Path) {
    let truth: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).expect("truth"))
            .expect("json");
    let files = truth["files"].as_object().expect("files");
    let v = stdout_json(&fxray(&["tensors", dir.to_str().unwrap(), "--json"]));
    let tensors = v["tensors"].as_array().expect("tensors");
    assert_eq!(tensors.len(), files.len(), "one entry per file");
    for t in tensors {
        let file = Path::new(t["file"].as_str().expect("file"));
        let name = file.file_name().unwrap().to_str().unwrap();
        let want = &files[name];
        assert_eq!(t["node"], want["node"], "{name}");
        assert_eq!(t["step"], want["step"], "{name}");
        assert_eq!(t["graph"], "device_0", "{name}");
        let s = &t["summary"]["stats"];
        for k in ["nan", "pos_inf", "neg_inf"] {
            assert_eq!(s[k], want[k], "{name} {k}");
        }
        for k in ["min", "max"] {
            let (a, b) = (s[k].as_f64(), want[k].as_f64());
            assert!(
                a.zip(b)
                    .is_some_and(|(a, b)| (a - b).abs() <= 1e-6 * b.abs().max(1.0)),
                "{name} {k}: fxray {a:?}, torch {b:?}"
            );
        }
    }
    let graph = dir.join("graph.txt");
    for (first, key, label) in [("nan", "first_nan", "NaN"), ("inf", "first_inf", "±Inf")] {
        let (step, node) = truth[key]
            .as_object()
            .and_then(|m| m.iter().next())
            .expect("torch found one");
        let out = fxray(&[
            "tensors",
            dir.to_str().unwrap(),
            "--first",
            first,
            "--graph",
            graph.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        assert_eq!(lines.next(), node.as_str(), "{text}");
        assert!(
            text.contains(&format!(
                "first {label} output in graph order: {}",
                node.as_str().unwrap()
            )),
            "{text}"
        );
        assert!(text.contains(&format!("step {step}")), "{text}");
    }
    // The compare reads it too: each node of a replay pairs with itself, NaN and Inf included.
    let d = dir.to_str().unwrap();
    let v = stdout_json(&fxray(&["compare", d, d, "--step", "1", "--json"]));
    let pairs = v["pairs"].as_array().expect("pairs");
    let per_step = files.values().filter(|f| f["step"] == 1).count();
    assert_eq!(pairs.len(), per_step);
    assert!(pairs.iter().all(|p| p["result"] == "pass"), "{pairs:?}");
    let out = fxray(&["compare", d, d, "--step", "1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("(npugraph_ex tensor dump, rank 0, device_0, step 1)"),
        "{text}"
    );
    // Without the graph, fxray does not claim an order the dump does not hold.
    let out = fxray(&["tensors", dir.to_str().unwrap(), "--first", "nan"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("in name order"), "{text}");
    assert!(text.contains("give the graph it ran"), "{text}");
}

#[test]
fn a_tensor_dump_reads_as_torch_saved_it() {
    check(&fixture("npugraph_tensor_dump"));
}

#[test]
#[ignore = "needs PyTorch: tests/run.sh installs it and runs this"]
fn e2e_torch_npugraph_tensor_dump() {
    let out = tempfile::tempdir().expect("temp");
    crate::common::run_e2e_script("npugraph_tensor_dump.py", out.path());
    check(out.path());
}

/// The window: the graph opened, the dump attached to it (as *Attach dump…* does), a node
/// clicked, its dumped value shown, the replay holding the NaN picked as a step.
#[test]
fn the_window_shows_a_nodes_value_from_the_tensor_dump() {
    use crate::common::ui::{click_node, harness_sized, opened, selected, settle};
    use egui_kittest::kittest::Queryable;
    let dir = fixture("npugraph_tensor_dump");
    let mut h = harness_sized(opened(&dir.join("graph.txt")), egui::vec2(1500., 1100.));
    h.state_mut().app.attach_dump(&dir);
    settle(&mut h);
    assert_eq!(h.state().app.tensors.pending, 0);
    assert_eq!(h.state().app.tensors.summaries.len(), 18);
    click_node(&mut h, "sub");
    assert_eq!(selected(&h).as_deref(), Some("sub"));
    h.get_by_label("device_0 · 9/9 dumped nodes in this graph (100%), 7 of 7 calls dumped");
    h.get_by_label("OUTPUT.0 histogram");
    h.get_by_label("step 1").click();
    h.run_steps(3);
    // torch counts 8 NaN in sub's value of the second replay (truth.json).
    h.get_by_label("NaN 8");
}
