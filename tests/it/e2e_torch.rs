//! End to end with real PyTorch: `fxray run` compiles `tests/e2e/small_model.py` with
//! TORCH_COMPILE_DEBUG=1, and the run folder it reports is found and its graphs parse.
//!
//! PyTorch is large, so these tests are `#[ignore]`d in a plain `cargo test`; `tests/run.sh`
//! (what CI runs) installs CPU-capable torch into a cached virtual environment, points
//! `FXRAY_TEST_PYTHON` at it and runs them with `--ignored`.

use std::path::{Path, PathBuf};

fn python() -> String {
    std::env::var("FXRAY_TEST_PYTHON")
        .expect("FXRAY_TEST_PYTHON must name a Python with torch installed (tests/run.sh sets it)")
}

/// Runs the small model with `backend`; returns the run folder fxray printed.
fn run(backend: &str, work: &Path) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/small_model.py");
    // fxray disables Inductor's caches (a cache hit writes no graphs); a cache folder of its
    // own keeps runs of the suite apart all the same.
    let cache = format!(
        "TORCHINDUCTOR_CACHE_DIR={}",
        work.join("inductor_cache").display()
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fxray"))
        .args(["run", "--backend", backend, "--python", &python()])
        .args(["--env", &cache])
        .arg("--cwd")
        .arg(work)
        .arg("--")
        .arg(&script)
        .arg("hello world")
        .output()
        .expect("fxray run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("out (4, 8) 4.0 args ['hello world']"),
        "the model ran with its argument: {stdout}"
    );
    let folders: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("run folder: "))
        .collect();
    assert_eq!(folders.len(), 1, "{stdout}\n{stderr}");
    let folder = PathBuf::from(folders[0]);
    assert!(folder.starts_with(work.join("torch_compile_debug")));
    assert!(
        folder
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("run_")
    );
    folder
}

#[test]
#[ignore = "needs PyTorch: tests/run.sh installs it and runs this"]
fn inductor_compile_writes_a_run_folder_whose_graphs_parse() {
    let work = tempfile::tempdir().expect("temp");
    let folder = run("inductor", work.path());
    let index = fxray::pipeline::tree::index(&folder).expect("index");
    assert_eq!(index.runs.len(), 1);
    let model = &index.runs[0].models[0];
    let phase = &model.phases[0];
    // Stock Inductor: fx_graph_readable.py and fx_graph_transformed.py of the forward graph.
    let names: Vec<&str> = phase.passes.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["fx_graph_readable", "fx_graph_transformed"]);
    assert!(phase.output_code.is_some(), "output_code.py");
    for p in &phase.passes {
        let g = fxray::sources::load::graph(&p.path).expect("read");
        assert!(
            g.problems.is_empty(),
            "{}: {:?}",
            p.path.display(),
            g.problems
        );
        assert!(
            g.unparsed.is_empty(),
            "{}: {:?}",
            p.path.display(),
            g.unparsed
        );
        let targets: Vec<String> = g.graphs[0]
            .nodes
            .iter()
            .map(|n| n.target.to_string())
            .collect();
        // Linear → addmm (or mm + add), relu, softmax pieces.
        assert!(
            targets
                .iter()
                .any(|t| t.contains("addmm") || t.contains("aten.mm")),
            "{targets:?}"
        );
        assert!(targets.iter().any(|t| t.contains("relu")), "{targets:?}");
    }
}

#[test]
#[ignore = "needs PyTorch: tests/run.sh installs it and runs this"]
fn aot_eager_compile_writes_a_run_folder_with_its_logs() {
    let work = tempfile::tempdir().expect("temp");
    let folder = run("aot_eager", work.path());
    let index = fxray::pipeline::tree::index(&folder).expect("index");
    assert_eq!(index.runs.len(), 1);
    // aot_eager writes no graph files, only the Dynamo and AOT logs.
    assert_eq!(index.graph_files().count(), 0);
    let logs: Vec<String> = index.runs[0]
        .logs
        .iter()
        .map(|l| l.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(logs.iter().any(|l| l == "debug.log"), "{logs:?}");
}

/// FX's in-place operator forms, printed fresh by this torch (`tests/e2e/fx_inplace.py`), each
/// read as torch's own GraphModule has it.
#[test]
#[ignore = "needs PyTorch: tests/run.sh installs it and runs this"]
fn fresh_inplace_forms_parse_as_torch_reads_them() {
    let out = tempfile::tempdir().expect("temp");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/fx_inplace.py");
    let st = std::process::Command::new(python())
        .arg(&script)
        .arg(out.path())
        .status()
        .expect("python");
    assert!(st.success());
    crate::fx_parser::check_inplace_forms(out.path());
}
