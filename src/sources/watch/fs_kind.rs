//! Which file systems the OS watcher cannot be trusted on: inotify sees only the writes made
//! by this machine, so a compile writing on another node of a cluster would go unseen.

use std::path::Path;

/// The name of the network file system `path` is on, if it is on one.
#[cfg(target_os = "linux")]
pub fn network_fs(path: &Path) -> Option<&'static str> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path and `st` a properly sized out-parameter.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    // Magic numbers from linux/magic.h and the file systems' own headers.
    match st.f_type as i64 {
        0x6969 => Some("NFS"),
        0xFF53_4D42 => Some("CIFS"),
        0xFE53_4D42 => Some("SMB2"),
        0x517B => Some("SMB"),
        0x0102_1997 => Some("9p"),
        0x6573_5546 => Some("FUSE"),
        0x0BD0_0BD0 => Some("Lustre"),
        0x4750_4653 => Some("GPFS"),
        0x00C3_6400 => Some("CephFS"),
        _ => None,
    }
}

#[cfg(not(target_os = "linux"))]
pub fn network_fs(_path: &Path) -> Option<&'static str> {
    None
}
