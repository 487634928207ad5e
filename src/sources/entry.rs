//! What a walk of a tree meets: a file or folder with its kind and size. Its own leaf so that
//! the file door (`vfs`) and its remote half (`remote::fs`, the protocol) share it without
//! importing each other.

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Kind {
    File,
    Dir,
    /// A symlink not followed, a device, a socket.
    Other,
}

/// One file or folder met by `vfs::read_dir` or `vfs::walk`.
#[derive(Debug, Clone)]
pub struct Entry {
    pub path: std::path::PathBuf,
    pub kind: Kind,
    /// Bytes of a file (0 for a folder, and on disk when sizes were not asked for).
    pub size: u64,
    /// 1 for a child of the walked folder.
    pub depth: usize,
}

impl Entry {
    pub fn name(&self) -> std::borrow::Cow<'_, str> {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    }
}
