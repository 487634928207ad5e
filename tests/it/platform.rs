//! Every OS-specific call lives in `src/platform.rs`: a `libc` item, a `std::os::<os>`
//! extension or a `cfg` on the OS anywhere else in `src/` is what broke the Windows build
//! (`wait4` and `getrusage` in two benches), so it fails here on Linux before it fails on a
//! laptop. Tests may test an OS's own behaviour (a symlink loop, an unreadable file) under a
//! `cfg`, but call the OS through the platform module too: no `libc` outside it anywhere.

use crate::common::{rust_lines_where, tree_of};
use std::path::Path;

/// What nothing but `src/platform.rs` may write.
const LIBC: &str = "libc::";

/// What no other file of `src/` may write: `libc`, an OS's `std::os` module (`std::os::raw` is
/// portable), or a `cfg` (attribute or macro) on the OS, its family or vendor.
fn os_only() -> regex::Regex {
    regex::Regex::new(
        r"libc::|std::os::(unix|windows|linux|macos|fd|wasi)|std::os::\{|cfg!?\([^)]*(unix|windows|target_os|target_family|target_vendor)",
    )
    .expect("regex")
}

/// `file:line: text` for every use of an OS-only item outside the platform module.
fn os_calls_outside_platform(root: &Path) -> Vec<String> {
    let skip = [
        root.join("src").join("platform.rs"),
        root.join("tests").join("it").join("platform.rs"),
    ];
    let shipped = os_only();
    rust_lines_where(root, &["src", "tests", "fuzz"], &skip, |file, line| {
        if file.starts_with("src") {
            shipped.is_match(line)
        } else {
            line.contains(LIBC)
        }
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
    let dir = tree_of(&[
        (
            "src/cli/bench.rs",
            "fn f() {\n    unsafe { libc::getrusage(0, p) };\n}\n",
        ),
        ("src/platform.rs", "use libc::c_int;\n"),
        (
            "tests/t.rs",
            "#[cfg(unix)]\nfn g() { unsafe { libc::kill(1, 0) }; }\n",
        ),
        (
            "src/cli/more.rs",
            "use std::os::fd::AsRawFd;\nconst MAC: bool = cfg!(target_vendor = \"apple\");\n\
             #[cfg(any(unix, test))]\nfn h() {}\nuse std::os::raw::c_int;\n",
        ),
    ]);
    let found = os_calls_outside_platform(dir.path());
    assert_eq!(found.len(), 5, "{found:?}");
    assert!(found[0].starts_with("src/cli/bench.rs:2:"), "{found:?}");
    assert!(found[1].starts_with("src/cli/more.rs:1:"), "{found:?}");
    assert!(found[2].starts_with("src/cli/more.rs:2:"), "{found:?}");
    assert!(found[3].starts_with("src/cli/more.rs:3:"), "{found:?}");
    assert!(found[4].starts_with("tests/t.rs:2:"), "{found:?}");
}
