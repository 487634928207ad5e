//! The `fxray` binary, run as a user would: summary, export, errors and exit codes.

use crate::common::{fixture, fxray, run_dir, stdout_json};
use serde_json::Value;
use std::path::Path;

#[test]
fn summary_json_of_the_showcase() {
    let root = fixture("showcase");
    let v = stdout_json(&fxray(&["summary", root.to_str().unwrap(), "--json"]));
    let exp: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("showcase/expected.json")).unwrap())
            .unwrap();
    let counts = exp["passes"]["node_count_per_file"].as_object().unwrap();

    let run = &v["runs"][0];
    assert_eq!(run["pid"], 3064);
    let model = &run["models"][0];
    assert_eq!(model["name"], "model__0");
    assert_eq!(model["graph_name"], "graph_1");
    assert_eq!(model["dynamo_graph"]["nodes"], exp["dynamo_graph"]["nodes"]);
    let passes = model["phases"][0]["passes"].as_array().unwrap();
    assert_eq!(passes.len(), counts.len());
    for p in passes {
        let path = p["path"].as_str().unwrap();
        assert!(Path::new(path).is_file(), "path as found on disk: {path}");
        let file = Path::new(path).file_name().unwrap().to_str().unwrap();
        assert_eq!(p["nodes"], counts[file], "{file}");
        assert_eq!(p["status"], "ok");
    }
    assert_eq!(passes[4]["index"], 4);
    assert_eq!(passes[4]["name"], "apply_pattern_passes");
    assert_eq!(model["captures"].as_array().unwrap().len(), 2);
    assert_eq!(
        v["warnings"].as_array().unwrap().len(),
        0,
        "{}",
        v["warnings"]
    );
}

#[test]
fn summary_of_every_fixture_tree_is_clean() {
    for case in [
        "npugraph_ex/mlp_inference",
        "npugraph_ex/transformer_train",
        "npugraph_ex/two_models",
        "npugraph_ex/dynamic_shapes",
        "npugraph_ex/torch_cond",
        "npugraph_ex/multi_rank",
        "inductor/a_mlp_inference",
        "inductor/c_transformer_train",
        "inductor/f_torch_cond",
        "data_dump/attention_bf16_nan_inf",
    ] {
        let v = stdout_json(&fxray(&[
            "summary",
            fixture(case).to_str().unwrap(),
            "--json",
        ]));
        assert_eq!(
            v["warnings"].as_array().unwrap().len(),
            0,
            "{case}: {}",
            v["warnings"]
        );
        let mut graphs = 0;
        for run in v["runs"].as_array().unwrap() {
            for m in run["models"].as_array().unwrap() {
                for ph in m["phases"].as_array().unwrap() {
                    for p in ph["passes"].as_array().unwrap() {
                        assert!(p["nodes"].as_u64().unwrap() > 2, "{case}: {}", p["path"]);
                        graphs += 1;
                    }
                }
            }
        }
        assert!(graphs >= 2, "{case}: found {graphs} graphs");
    }
}

#[test]
fn summary_text_names_runs_models_and_passes() {
    let out = fxray(&[
        "summary",
        fixture("npugraph_ex/two_models").to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("run_2026_11_29_11_47_12_033918-pid_32458"),
        "{text}"
    );
    assert!(text.contains("model__1"));
    assert!(text.contains("backward: 18 graph(s)"), "{text}");
    assert!(text.contains("view_to_reshape"));
}

#[test]
fn export_json_has_the_promised_shape() {
    let g = run_dir("showcase").join("npugraph_ex/model__0/forward/000_aot_forward_graph.txt");
    let v = stdout_json(&fxray(&["export", g.to_str().unwrap(), "--format", "json"]));
    assert_eq!(v["file"], g.to_str().unwrap());
    assert_eq!(v["unparsed"].as_array().unwrap().len(), 0);
    let graphs = v["graphs"].as_array().unwrap();
    assert_eq!(graphs.len(), 1);
    assert_eq!(graphs[0]["name"], "<lambda>");
    assert!(graphs[0]["parent"].is_null());
    let nodes = graphs[0]["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 280);
    let mul = nodes.iter().find(|n| n["name"] == "mul").unwrap();
    assert_eq!(mul["op"], "call_function");
    assert_eq!(mul["target"], "torch.ops.aten.mul.Tensor");
    assert_eq!(mul["inputs"], serde_json::json!(["_to_copy", "rsqrt"]));
    assert_eq!(mul["dtype"], "f32");
    assert_eq!(mul["shape"], serde_json::json!(["2", "8", "16"]));
    assert_eq!(mul["source"], "showcase_model.py:69");
    let out = nodes.last().unwrap();
    assert_eq!(
        (out["name"].as_str(), out["op"].as_str()),
        (Some("output"), Some("output"))
    );
}

#[test]
fn export_json_nests_cond_branches() {
    let g = run_dir("npugraph_ex/torch_cond")
        .join("npugraph_ex/model__0/forward/000_aot_forward_graph.txt");
    let v = stdout_json(&fxray(&["export", g.to_str().unwrap()]));
    let graphs = v["graphs"].as_array().unwrap();
    let names: Vec<&str> = graphs.iter().map(|g| g["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["<lambda>", "true_graph_0", "false_graph_0"]);
    assert_eq!(graphs[1]["parent"], "<lambda>");
    assert_eq!(graphs[2]["parent"], "<lambda>");
    assert_eq!(graphs[1]["used_by"], "cond");
    let cond = graphs[0]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "cond")
        .unwrap();
    assert_eq!(cond["target"], "torch.ops.higher_order.cond");
}

#[test]
fn export_dot_draws_every_node_and_edge() {
    let g = run_dir("npugraph_ex/mlp_inference")
        .join("npugraph_ex/model__0/forward/000_aot_forward_graph.txt");
    let tmp = tempfile::tempdir().unwrap();
    let out_path = tmp.path().join("g.dot");
    let out = fxray(&[
        "export",
        g.to_str().unwrap(),
        "--format",
        "dot",
        "-o",
        out_path.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dot = std::fs::read_to_string(&out_path).unwrap();
    assert!(dot.starts_with("digraph "));
    let v = stdout_json(&fxray(&["export", g.to_str().unwrap()]));
    let nodes = v["graphs"][0]["nodes"].as_array().unwrap();
    let edges: usize = nodes
        .iter()
        .map(|n| n["inputs"].as_array().unwrap().len())
        .sum();
    assert_eq!(dot.matches("[label=").count(), nodes.len());
    assert_eq!(dot.matches(" -> ").count(), edges);
}

#[test]
fn user_errors_are_one_line_with_exit_code_1() {
    let showcase = fixture("showcase");
    let empty = tempfile::tempdir().unwrap();
    let cases: [&[&str]; 4] = [
        &["summary", "/nonexistent/run"],
        &["export", "/nonexistent/graph.txt"],
        &["export", showcase.to_str().unwrap()],
        &["summary", empty.path().to_str().unwrap()],
    ];
    for args in cases {
        let out = fxray(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.starts_with("fxray: "), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn bad_flags_unknown_commands_and_missing_arguments_exit_1() {
    let cases: [&[&str]; 4] = [
        &["summary", "--no-such-flag", "."],
        &["no-such-command"],
        &["summary"],
        &["export", "--format", "gif", "x.txt"],
    ];
    for args in cases {
        let out = fxray(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(!err.trim().is_empty(), "{args:?}: it says what is wrong");
    }
    // Asking for help is not an error.
    for args in [&["--help"][..], &["summary", "--help"], &["--version"]] {
        let out = fxray(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(!out.stdout.is_empty());
    }
}

#[test]
fn a_mistyped_command_is_named_with_its_fix() {
    let out = fxray(&["sumary", "/tmp"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("fxray: unknown command 'sumary': did you mean 'summary'?"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// The bash script loads in a real bash and registers a completion for fxray; every shell's
/// script names the subcommands.
#[test]
fn completions_load_in_bash_and_name_the_commands() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = fxray(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        for cmd in ["summary", "modules", "compare", "completions"] {
            assert!(text.contains(cmd), "{shell} completions lack {cmd}");
        }
    }
    let script = fxray(&["completions", "bash"]).stdout;
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("fxray.bash");
    std::fs::write(&file, script).expect("write");
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("source '{}' && complete -p fxray", file.display()))
        .output()
        .expect("bash");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains("fxray"),
        "{said} {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `man` renders the page without a warning, and it has a section for every command.
#[test]
fn the_man_page_renders_and_lists_every_command() {
    use clap::CommandFactory;
    let out = fxray(&["man"]);
    assert!(out.status.success(), "{out:?}");
    let page = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        page.starts_with(".ie") || page.contains(".TH fxray 1"),
        "{page}"
    );
    for sub in fxray::cli::Cli::command().get_subcommands() {
        let head = format!(".SS fxray {}", sub.get_name());
        assert!(page.contains(&head), "no {head}");
        for child in sub.get_subcommands() {
            let head = format!(".SS fxray {} {}", sub.get_name(), child.get_name());
            assert!(page.contains(&head), "no {head}");
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("fxray.1");
    std::fs::write(&file, &page).expect("write");
    let shown = std::process::Command::new("man")
        .args(["--warnings", "-E", "UTF-8", "-l"])
        .arg(&file)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
        .expect("man (Debian's man-db)");
    let text = String::from_utf8_lossy(&shown.stdout);
    let warnings = String::from_utf8_lossy(&shown.stderr);
    assert!(shown.status.success(), "{warnings}");
    assert!(warnings.trim().is_empty(), "man warns: {warnings}");
    assert!(text.contains("fxray summary"), "{text}");
}

/// `fxray RUN --golden GOLDEN` with a golden that is not there says so before any window opens.
#[test]
fn a_missing_golden_is_named_before_the_window_opens() {
    let root = fixture("showcase");
    let out = fxray(&[root.to_str().unwrap(), "--golden", "/no/such/golden"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the golden /no/such/golden: no such file or folder"),
        "{err}"
    );
    // A capture has nothing to compare: said, not dropped.
    let capture = fixture("aclgraph/edge_empty")
        .join("graph_3_id_281466021873744_rank_0_pid_1459930_ts_20260405112208150337.json");
    let out = fxray(&[
        capture.to_str().unwrap(),
        "--golden",
        root.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--golden goes with a run or a dump"), "{err}");
}
