//! fxray's own folders on disk (never a folder the user views).

use std::path::PathBuf;

/// fxray's own cache folder (`$XDG_CACHE_HOME/fxray`, else `~/.cache/fxray`).
pub fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("fxray")
}
