//! Byte sizes are written one way: powers of 1024 with their IEC names (`KiB`, `MiB`, `GiB`),
//! through `model::size::human_bytes` wherever the size varies. Three formatters once printed
//! "MB", "kB" and "KB" for the same powers of 1024; a decimal unit name in a string of `src/`
//! fails here.

use crate::common::{rust_lines_where, tree_of};
use std::path::Path;

fn offenders(root: &Path) -> Vec<String> {
    let unit = regex::Regex::new(r"[0-9}] ?(KB|kB|MB|GB|TB)\b").expect("regex");
    let skip = [root.join("src").join("model").join("size.rs")];
    rust_lines_where(root, &["src"], &skip, |_, line| {
        let code = line.split("//").next().unwrap_or("");
        // Only text inside a string literal is shown to a user.
        code.contains('"') && unit.is_match(code)
    })
}

#[test]
fn byte_sizes_have_one_formatter() {
    let found = offenders(Path::new(env!("CARGO_MANIFEST_DIR")));
    assert!(
        found.is_empty(),
        "a byte size formatted outside model::size::human_bytes:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_finds_a_second_formatter() {
    let dir = tree_of(&[(
        "src/ui/panel.rs",
        "fn f(b: u64) -> String {\n    format!(\"{:.1} MB\", b as f64 / 1e6)\n}\n",
    )]);
    let found = offenders(dir.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("panel.rs:2:"), "{found:?}");
}
