//! End to end with real PyTorch (issues 15, 24, 28): `tests/e2e/compile_story.py` runs with
//! TORCH_COMPILE_DEBUG=1 in a temp folder — two graph breaks, a recompile, a failed compile, a
//! compile restarted after its backend was called, an npugraph_ex-layout tree — and the trace
//! log it writes must tell the same story torch reported on its own (`expected.json`), every
//! `model__N` linked to the attempt that wrote it, as the committed fixture does. Then the
//! torch-version cases are made afresh with the tests' torch (`tests/e2e/torch_versions.py`),
//! tlparse reads them (`tests/e2e/tlparse_answer.py`) and fxray must agree with it, and every
//! kernel of their Inductor provenance is found at its call.

use std::path::Path;

fn python() -> String {
    std::env::var("FXRAY_TEST_PYTHON")
        .expect("FXRAY_TEST_PYTHON must name a Python with torch installed (tests/run.sh sets it)")
}

#[test]
#[ignore = "needs PyTorch: tests/run.sh installs it and runs this"]
fn a_fresh_torch_run_tells_the_compile_story() {
    let work = tempfile::tempdir().expect("temp");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/compile_story.py");
    let out = std::process::Command::new(python())
        .arg(&script)
        .arg(work.path())
        .current_dir(work.path())
        .env("TORCH_COMPILE_DEBUG", "1")
        .env(
            "TORCHINDUCTOR_CACHE_DIR",
            work.path().join("inductor_cache"),
        )
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("done 7 models"), "{stdout}");
    crate::compiles::check_compile_story(work.path());

    // And the CLI agrees, on the tree and on the trace file alone.
    let v = crate::common::stdout_json(&crate::common::fxray(&[
        "compiles",
        work.path().to_str().unwrap(),
        "--json",
    ]));
    assert_eq!(v["graph_breaks"].as_array().unwrap().len(), 2);
    assert_eq!(v["recompiles"].as_array().unwrap().len(), 1);
}

#[test]
#[ignore = "needs PyTorch and tlparse: tests/run.sh installs them and runs this"]
fn e2e_torch_versions_fresh_cases_agree_with_tlparse() {
    let work = tempfile::tempdir().expect("temp");
    let e2e = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e");
    let run = |script: &str, args: &[&Path]| {
        let out = std::process::Command::new(python())
            .arg(e2e.join(script))
            .args(args)
            .output()
            .expect("run python");
        assert!(
            out.status.success(),
            "{script}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run("torch_versions.py", &[work.path()]);
    run("tlparse_answer.py", &[work.path()]);
    let cases = crate::compiles_versions::cases(work.path());
    assert_eq!(cases.len(), 5, "one trace log per case");
    for case in cases {
        let t = crate::compiles_versions::compare(&case);
        assert!(
            t.disagree.is_empty(),
            "{}: {:?}",
            case.display(),
            t.disagree
        );
        assert!(t.agreed() > 0);
    }
    // torch 2.15 writes Inductor's provenance under TORCH_COMPILE_DEBUG=1: every kernel it
    // names is found at its call in the fresh output code.
    assert!(crate::provenance::check_tree_provenance(work.path()) > 0);
}
