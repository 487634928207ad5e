//! The bundled sample run.

use std::path::{Path, PathBuf};

/// The sample run (a copy of the showcase fixture), built into the binary so a newcomer sees a
/// real run with no files at hand: `build.rs` packs `assets/sample` into this `.tar.gz`.
static SAMPLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/sample.tar.gz"));

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
        // A failed unpack leaves no folder there: opening it says so.
        let _ = unpack(&dir);
    }
    dir
}

/// Unpacks the embedded sample into `dir`, whole or not at all: into a folder of this process
/// first, renamed into place (two windows started at once do not see each other's half).
fn unpack(dir: &Path) -> std::io::Result<()> {
    let tmp = dir.with_extension(format!("unpacking-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp)?;
    tar::Archive::new(flate2::read::GzDecoder::new(SAMPLE)).unpack(&tmp)?;
    // What an interrupted unpack by an older fxray left (no expected.json) goes first.
    if dir.is_dir() && !dir.join("expected.json").is_file() {
        let _ = std::fs::remove_dir_all(dir);
    }
    match std::fs::rename(&tmp, dir) {
        Ok(()) => Ok(()),
        // Another process put it there first.
        Err(_) if dir.join("expected.json").is_file() => std::fs::remove_dir_all(&tmp),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded copy unpacks to the same files, byte for byte, as the checkout's.
    #[test]
    fn the_embedded_sample_is_the_checkouts() {
        let tmp = std::env::temp_dir().join(format!("fxray-sample-test-{}", std::process::id()));
        let dir = tmp.join("sample");
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        unpack(&dir).unwrap();
        let src = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/sample"));
        let files = |root: &Path| -> Vec<(PathBuf, Vec<u8>)> {
            let mut v: Vec<(PathBuf, Vec<u8>)> = walkdir::WalkDir::new(root)
                .into_iter()
                .flatten()
                .filter(|e| e.file_type().is_file())
                .map(|e| {
                    let rel = e.path().strip_prefix(root).unwrap().to_path_buf();
                    (rel, std::fs::read(e.path()).unwrap())
                })
                .collect();
            v.sort();
            v
        };
        let (a, b) = (files(&src), files(&dir));
        assert!(a.len() > 100, "{} files", a.len());
        assert_eq!(a.len(), b.len());
        assert!(a == b, "the unpacked sample differs from assets/sample");
        assert!(SAMPLE.len() < 1 << 20, "{} bytes embedded", SAMPLE.len());
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
