//! Every call into the operating system that std does not make portable, with a branch per OS.
//!
//! The rest of the crate names no `libc` item and no `std::os::<os>` extension: a test
//! (`tests/it/platform.rs`) fails when one appears outside this file, so a Windows or macOS
//! build breaks here or nowhere. Where an OS has no answer, the function says so (`None`,
//! `false`) instead of guessing.

use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::time::Duration;

/// CPU time and peak memory of a process, as `getrusage` reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// User plus system time.
    pub cpu: Duration,
    /// Peak resident set in bytes; `None` where the OS does not say.
    pub peak_bytes: Option<u64>,
}

impl Usage {
    /// Peak resident set in MiB, 0 when unknown (benches print it beside the time).
    pub fn peak_mib(&self) -> f64 {
        self.peak_bytes.unwrap_or(0) as f64 / (1024.0 * 1024.0)
    }
}

/// This process's usage so far.
pub fn self_usage() -> Usage {
    imp::usage(imp::Who::SelfProcess)
}

/// The largest usage of the children waited for so far (msprobe and its worker pool).
pub fn children_usage() -> Usage {
    imp::usage(imp::Who::Children)
}

/// Waits for `child` and returns its exit status with its own peak memory (not that of other
/// children, which `children_usage` would mix in).
pub fn wait_measured(child: &mut Child) -> std::io::Result<(ExitStatus, Option<u64>)> {
    imp::wait_measured(child)
}

/// The signal that stopped a process, where signals exist (`ExitStatus::code` is `None` then).
pub fn exit_signal(s: ExitStatus) -> Option<i32> {
    imp::exit_signal(s)
}

/// Starts `cmd` in a process group of its own, so stopping it reaches its children (torchrun's
/// workers and theirs). Windows has no process groups: nothing is set there, and `stop_group`
/// ends the process tree rooted at the pid instead.
pub fn own_process_group(cmd: &mut Command) {
    imp::own_process_group(cmd);
}

/// `cmd`'s process is killed when the thread that starts it ends (Linux's
/// `PR_SET_PDEATHSIG`): a helper server a test starts never outlives the test. Elsewhere
/// nothing is set, and the caller must stop the process itself.
pub fn die_with_starting_thread(cmd: &mut Command) {
    imp::die_with_starting_thread(cmd);
}

/// A request to a process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Ask it to end (SIGTERM).
    Term,
    /// End it now (SIGKILL).
    Kill,
}

/// Sends `stop` to process group `pgid`; a group already gone is not an error. On Windows
/// `pgid` is the first process's id, and its whole tree is ended (`taskkill /T`).
pub fn stop_group(pgid: i32, stop: Stop) {
    imp::stop_group(pgid, stop);
}

/// Whether a group can still hold processes once its first one has exited: on Unix its
/// other members keep it; on Windows the tree is known only through the first process, whose
/// id may already be another program's, so nothing may be stopped by that id any more.
pub fn group_outlives_leader() -> bool {
    cfg!(unix)
}

/// A process of group `pgid` still runs (on Windows: the process `pgid` itself).
pub fn group_alive(pgid: i32) -> bool {
    imp::group_alive(pgid)
}

/// Process `pid` still exists (possibly another user's). `true` where the OS cannot be asked:
/// callers use it to clean up after dead processes, and must not take a live one's files.
pub fn process_alive(pid: i32) -> bool {
    imp::process_alive(pid)
}

/// The name of the network file system `path` is on, if it is on one (the OS watcher sees only
/// this machine's writes there). `None` where the OS cannot tell.
pub fn network_fs(path: &Path) -> Option<&'static str> {
    imp::network_fs(path)
}

/// `p` is a file this user may run.
pub fn is_executable(p: &Path) -> bool {
    imp::is_executable(p)
}

/// The file names a program called `name` may have on `PATH` (`python3.exe` on Windows).
pub fn program_names(name: &str) -> Vec<String> {
    if cfg!(windows) && !name.to_ascii_lowercase().ends_with(".exe") {
        vec![format!("{name}.exe"), name.to_string()]
    } else {
        vec![name.to_string()]
    }
}

#[cfg(unix)]
mod imp {
    use crate::platform::{Stop, Usage};
    use std::path::Path;
    use std::process::{Child, Command, ExitStatus};
    use std::time::Duration;

    pub enum Who {
        SelfProcess,
        Children,
    }

    /// `ru_maxrss` is in KiB on Linux and the BSDs, in bytes on macOS.
    fn maxrss_bytes(v: libc::c_long) -> u64 {
        let v = v.max(0) as u64;
        if cfg!(target_vendor = "apple") {
            v
        } else {
            v * 1024
        }
    }

    fn tv(t: libc::timeval) -> Duration {
        Duration::new(t.tv_sec.max(0) as u64, (t.tv_usec.max(0) as u32) * 1000)
    }

    fn of(u: &libc::rusage) -> Usage {
        Usage {
            cpu: tv(u.ru_utime) + tv(u.ru_stime),
            peak_bytes: Some(maxrss_bytes(u.ru_maxrss)),
        }
    }

    pub fn usage(who: Who) -> Usage {
        let who = match who {
            Who::SelfProcess => libc::RUSAGE_SELF,
            Who::Children => libc::RUSAGE_CHILDREN,
        };
        // SAFETY: getrusage writes into the struct we pass and nothing else.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(who, &mut u) } != 0 {
            return Usage::default();
        }
        of(&u)
    }

    pub fn wait_measured(child: &mut Child) -> std::io::Result<(ExitStatus, Option<u64>)> {
        use std::os::unix::process::ExitStatusExt;
        let pid = child.id() as libc::pid_t;
        let mut status = 0;
        // SAFETY: wait4 reaps our own child and writes only into the two values we pass.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut u) };
        if r != pid {
            return Err(std::io::Error::last_os_error());
        }
        Ok((ExitStatus::from_raw(status), of(&u).peak_bytes))
    }

    pub fn exit_signal(s: ExitStatus) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt;
        s.signal()
    }

    pub fn own_process_group(cmd: &mut Command) {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }

    #[cfg(target_os = "linux")]
    pub fn die_with_starting_thread(cmd: &mut Command) {
        use std::os::unix::process::CommandExt;
        // SAFETY: prctl is async-signal-safe, as a pre_exec hook must be.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub fn die_with_starting_thread(_cmd: &mut Command) {}

    pub fn stop_group(pgid: i32, stop: Stop) {
        let sig = match stop {
            Stop::Term => libc::SIGTERM,
            Stop::Kill => libc::SIGKILL,
        };
        // SAFETY: killpg only sends a signal; a group that is gone gives ESRCH, which is fine.
        unsafe {
            libc::killpg(pgid, sig);
        }
    }

    pub fn group_alive(pgid: i32) -> bool {
        // SAFETY: signal 0 checks for existence without sending anything.
        unsafe { libc::killpg(pgid, 0) == 0 }
    }

    pub fn process_alive(pid: i32) -> bool {
        // SAFETY: signal 0 sends nothing; it only asks whether the process exists.
        unsafe {
            libc::kill(pid, 0) == 0
                || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
        }
    }

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

    // macOS and the BSDs name the file system in `f_fstypename`, not by a magic number; not
    // read yet, so the watcher trusts the OS there (polling still catches what it misses).
    #[cfg(not(target_os = "linux"))]
    pub fn network_fs(_path: &Path) -> Option<&'static str> {
        None
    }

    pub fn is_executable(p: &Path) -> bool {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
}

#[cfg(not(unix))]
mod imp {
    use crate::platform::{Stop, Usage};
    use std::path::Path;
    use std::process::{Child, Command, ExitStatus};

    pub enum Who {
        SelfProcess,
        Children,
    }

    // Windows reports CPU time and peak memory through GetProcessTimes and
    // GetProcessMemoryInfo (the windows-sys crate); benches there print 0 until they are read.
    pub fn usage(_who: Who) -> Usage {
        Usage::default()
    }

    pub fn wait_measured(child: &mut Child) -> std::io::Result<(ExitStatus, Option<u64>)> {
        Ok((child.wait()?, None))
    }

    pub fn exit_signal(_s: ExitStatus) -> Option<i32> {
        None
    }

    pub fn own_process_group(_cmd: &mut Command) {}

    pub fn die_with_starting_thread(_cmd: &mut Command) {}

    /// `taskkill /T` ends the process and every process it started, the nearest Windows has
    /// to a process group. A console program cannot be asked to end (it has no window to
    /// close), so `Term` ends it as `Kill` does.
    pub fn stop_group(pgid: i32, _stop: Stop) {
        let _ = quiet("taskkill", &["/PID", &pgid.to_string(), "/T", "/F"])
            .stdout(std::process::Stdio::null())
            .status();
    }

    /// `tasklist` prints the process's row when it exists, and an INFO line when not.
    pub fn group_alive(pgid: i32) -> bool {
        let pid = pgid.to_string();
        quiet(
            "tasklist",
            &["/FI", &format!("PID eq {pid}"), "/NH", "/FO", "CSV"],
        )
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(&format!("\"{pid}\"")))
    }

    fn quiet(program: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        cmd
    }

    pub fn process_alive(_pid: i32) -> bool {
        true
    }

    pub fn network_fs(_path: &Path) -> Option<&'static str> {
        None
    }

    pub fn is_executable(p: &Path) -> bool {
        p.is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_used_time_and_memory() {
        let before = self_usage();
        // Some work, so the CPU time moves on (it counts in ticks of at most 10 ms).
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed() < std::time::Duration::from_millis(50) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let after = self_usage();
        if cfg!(unix) {
            assert!(after.cpu > before.cpu, "{before:?} {after:?}");
            assert!(after.peak_bytes.is_some_and(|b| b > 1 << 20), "{after:?}");
        }
    }

    #[test]
    fn a_process_group_that_never_existed_is_not_alive() {
        // Group ids are process ids; i32::MAX is above every pid_max Linux allows.
        assert!(!group_alive(i32::MAX));
    }

    #[test]
    fn program_names_add_exe_on_windows_only() {
        let names = program_names("python3");
        assert_eq!(names.last().map(String::as_str), Some("python3"));
        assert_eq!(names.len(), if cfg!(windows) { 2 } else { 1 });
    }
}
