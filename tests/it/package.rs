//! What `cargo package` ships (an install from the registry builds from it): the code, the
//! bundled sample and fonts, the docs; never the test fixtures, screenshots or fuzz targets,
//! and under 10 MB in all.

use std::path::Path;

#[test]
fn the_package_ships_the_app_and_not_the_test_data() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["package", "--list", "--allow-dirty", "--offline"])
        .current_dir(root)
        .output()
        .expect("cargo package --list");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = String::from_utf8_lossy(&out.stdout);
    let files: Vec<&str> = list
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    for needed in [
        "src/main.rs",
        "src/lib.rs",
        "Cargo.lock",
        "README.md",
        "assets/launcher.py",
    ] {
        assert!(files.contains(&needed), "{needed} is not shipped");
    }
    assert!(
        files.iter().any(|f| f.starts_with("assets/sample/")),
        "no sample"
    );
    assert!(
        files.iter().any(|f| f.starts_with("assets/fonts/")),
        "no fonts"
    );
    for f in &files {
        for left_out in ["tests/", "screenshots/", "fuzz/", "target/"] {
            assert!(!f.starts_with(left_out), "{f} is shipped");
        }
    }
    // Files cargo writes itself (`Cargo.toml.orig`, `.cargo_vcs_info.json`) are not on disk.
    let bytes: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(root.join(f)).ok())
        .map(|m| m.len())
        .sum();
    assert!(bytes < 10 << 20, "the package holds {bytes} bytes");
    assert!(
        bytes > 1 << 20,
        "only {bytes} bytes listed: the list was not read"
    );
}
