#![no_main]
//! Folder trees by name: each input line is a path under the opened root; the index is built
//! from them the way the watcher builds it (no disk access).
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut set = fxray::sources::discover::FileSet {
        root: PathBuf::from("/r"),
        abs_root: PathBuf::from("/r"),
        ..Default::default()
    };
    for (i, line) in text.lines().take(512).enumerate() {
        set.insert(PathBuf::from("/r").join(line), i as u64);
    }
    let index = set.index();
    for line in text.lines().take(8) {
        let _ = index.role_of(&PathBuf::from("/r").join(line));
    }
});
