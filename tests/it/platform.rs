//! Every OS-specific call lives in `src/platform.rs`: a `libc` item, a `std::os::<os>`
//! extension or a `cfg` on the OS anywhere else in `src/` is what broke the Windows build
//! (`wait4` and `getrusage` in two benches), so it fails here on Linux before it fails on a
//! laptop. Tests may test an OS's own behaviour (a symlink loop, an unreadable file) under a
//! `cfg`, but call the OS through the platform module too: no `libc` outside it anywhere.

use crate::common::rust_lines_where;
use std::path::Path;

/// What nothing but `src/platform.rs` may write.
const LIBC: &str = "libc::";

/// What no other file of `src/` may write.
const OS_ONLY: &[&str] = &[
    "libc::",
    "std::os::unix",
    "std::os::windows",
    "std::os::linux",
    "std::os::macos",
    "cfg(unix)",
    "cfg(not(unix))",
    "cfg(windows)",
    "cfg(not(windows))",
    "target_os",
    "target_family",
];

/// `file:line: text` for every use of an OS-only item outside the platform module.
fn os_calls_outside_platform(root: &Path) -> Vec<String> {
    let skip = [
        root.join("src").join("platform.rs"),
        root.join("tests").join("it").join("platform.rs"),
    ];
    rust_lines_where(root, &["src", "tests", "fuzz"], &skip, |file, line| {
        let os_only = if file.starts_with("src") {
            OS_ONLY
        } else {
            &[LIBC][..]
        };
        os_only.iter().any(|w| line.contains(w))
    })
}

#[test]
fn os_calls_live_in_the_platform_module_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = os_calls_outside_platform(root);
    assert!(
        found.is_empty(),
        "OS-specific code outside src/platform.rs (move it there, with a branch per OS):\n{}",
        found.join("\n")
    );
}

/// The check sees a call where one is: `libc::getrusage` in `src/` and in a test are
/// reported, a test's `cfg(unix)` is not.
#[test]
fn the_check_finds_a_stray_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src").join("cli");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(
        src.join("bench.rs"),
        "fn f() {\n    unsafe { libc::getrusage(0, p) };\n}\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("src").join("platform.rs"),
        "use libc::c_int;\n",
    )
    .expect("write");
    let tests = dir.path().join("tests");
    std::fs::create_dir_all(&tests).expect("mkdir");
    std::fs::write(
        tests.join("t.rs"),
        "#[cfg(unix)]\nfn g() { unsafe { libc::kill(1, 0) }; }\n",
    )
    .expect("write");
    let found = os_calls_outside_platform(dir.path());
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].starts_with("src/cli/bench.rs:2:"), "{found:?}");
    assert!(found[1].starts_with("tests/t.rs:2:"), "{found:?}");
}
