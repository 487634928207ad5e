//! fxray's own folders on disk (never a folder the user views).

use std::path::PathBuf;

/// fxray's own cache folder, where each OS keeps caches: `$XDG_CACHE_HOME/fxray` or
/// `~/.cache/fxray` on Linux, `~/Library/Caches/fxray` on macOS, `%LOCALAPPDATA%\fxray` on
/// Windows; the temp folder only when the OS names none.
pub fn cache_dir() -> PathBuf {
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("fxray")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_cache_is_an_absolute_fxray_folder() {
        let dir = super::cache_dir();
        assert!(
            dir.is_absolute() && dir.ends_with("fxray"),
            "{}",
            dir.display()
        );
    }
}
