//! The bundled sample run.

use std::path::PathBuf;

/// The sample run (a copy of the showcase fixture), built into the binary so a newcomer sees a
/// real run with no files at hand.
static SAMPLE: include_dir::Dir<'static> =
    include_dir::include_dir!("$CARGO_MANIFEST_DIR/assets/sample");

/// Where the sample run is, shown when no path is given: the source tree's copy when fxray
/// runs from its checkout, else the embedded copy unpacked once into fxray's cache folder
/// (never into a folder the user views).
pub fn sample_path() -> PathBuf {
    let in_tree = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/sample"));
    if in_tree.is_dir() {
        return in_tree;
    }
    let dir = crate::paths::cache_dir().join(format!("sample-{}", env!("CARGO_PKG_VERSION")));
    if !dir.join("expected.json").is_file() {
        // A failed unpack leaves a path that does not exist: opening it says so.
        let _ = std::fs::create_dir_all(&dir).and_then(|_| SAMPLE.extract(&dir));
    }
    dir
}
