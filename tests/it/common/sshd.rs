//! A real OpenSSH server on loopback for the remote tests: Debian's `sshd`, started by the test
//! on 127.0.0.1 and a free port, with its own config, a temporary host key and an authorized
//! key of its own, never the machine's sshd. One per test binary, shared by the remote tests;
//! it dies with the test process.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub struct Sshd {
    pub port: u16,
    pub user: String,
    pub dir: PathBuf,
    /// The ssh command that reaches this server (what `FXRAY_SSH` would hold).
    pub ssh: Vec<String>,
    _child: Child,
}

const SSHD: &str = "/usr/sbin/sshd";

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Held by every test that reads through the process's own links (a window opened on an
/// `ssh://` tree): they share the process's settings (`remote::configure`) and its link to the
/// server. A test with links of its own (`remote::Owner`) needs no guard.
pub fn in_process() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// The shared server, started on first use.
pub fn shared() -> &'static Sshd {
    static S: OnceLock<Sshd> = OnceLock::new();
    S.get_or_init(start)
}

fn start() -> Sshd {
    assert!(
        Path::new(SSHD).exists(),
        "{SSHD} is missing: install Debian's openssh-server (tests/run.sh does)"
    );
    let dir = tempfile::Builder::new()
        .prefix("fxray-sshd-")
        .tempdir()
        .expect("temp")
        .keep();
    for key in ["host_key", "client_key"] {
        run(Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(dir.join(key)));
    }
    std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).expect("key");
    let user = String::from_utf8(Command::new("id").arg("-un").output().expect("id").stdout)
        .expect("utf-8")
        .trim()
        .to_string();
    let port = free_port();
    let config = format!(
        "Port {port}\nListenAddress 127.0.0.1\nListenAddress 127.0.0.2\nHostKey {d}/host_key\n\
         AuthorizedKeysFile {d}/authorized_keys\nPidFile {d}/sshd.pid\nUsePAM no\n\
         StrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
         PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nAllowUsers {user}\n\
         LogLevel ERROR\nMaxSessions 100\nMaxStartups 100\n",
        d = dir.display()
    );
    std::fs::write(dir.join("sshd_config"), config).expect("config");
    // sshd's privilege-separation folder (made by the init system, absent in containers).
    let _ = std::fs::create_dir_all("/run/sshd");
    let mut cmd = Command::new(SSHD);
    cmd.args(["-D", "-e", "-f"])
        .arg(dir.join("sshd_config"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(
            std::fs::File::create(dir.join("sshd.log")).expect("log"),
        ));
    // The server dies with the test process, never outliving it: PR_SET_PDEATHSIG fires when
    // the *thread* that started it ends, so a thread that lives as long as the process does.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        fxray::platform::die_with_starting_thread(&mut cmd);
        let _ = tx.send(cmd.spawn().expect("start sshd"));
        loop {
            std::thread::park();
        }
    });
    let child = rx.recv().expect("sshd started");
    let t = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "sshd did not listen on {port}: {}",
            std::fs::read_to_string(dir.join("sshd.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let ssh = [
        "ssh",
        "-F",
        "/dev/null",
        "-i",
        &dir.join("client_key").display().to_string(),
        "-o",
        "IdentitiesOnly=yes",
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
        "-o",
        "LogLevel=ERROR",
    ]
    .map(String::from)
    .to_vec();
    Sshd {
        port,
        user,
        dir,
        ssh,
        _child: child,
    }
}

impl Sshd {
    /// `ssh://user@127.0.0.1:PORT<abs>`.
    pub fn url(&self, abs: &Path) -> String {
        format!(
            "ssh://{}@127.0.0.1:{}{}",
            self.user,
            self.port,
            abs.display()
        )
    }

    /// `ssh://user@ADDR:PORT<abs>`: this server under another loopback address (127.0.0.2), a
    /// link of its own for a test that drops it.
    pub fn url_at(&self, addr: &str, abs: &Path) -> String {
        format!("ssh://{}@{addr}:{}{}", self.user, self.port, abs.display())
    }

    /// `FXRAY_SSH` for this server.
    pub fn fxray_ssh(&self) -> String {
        self.ssh.join(" ")
    }

    /// The settings that make the library's links reach this server with `fxray` as the agent.
    pub fn settings(&self, fxray: &Path) -> fxray::sources::remote::Settings {
        fxray::sources::remote::Settings {
            ssh: self.ssh.clone(),
            fxray: fxray.display().to_string(),
        }
    }
}
