//! `fxray bench remote ssh://host/path --delay-ms 25`: open-to-graph time of a remote tree
//! through a delay proxy on loopback (every byte held `delay` in each direction: a 2×delay
//! round trip), beside the same tree opened locally when it is on this machine too. Also the
//! bytes that crossed the link.

use crate::error::{Error, Result};
use crate::sources::remote::{self, Host, target};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(300);

pub fn run(path: &Path, delay_ms: u64, rounds: usize, sshfs: bool, npy_mib: usize) -> Result<()> {
    let (host, server_path) = target::split(path).ok_or_else(|| {
        Error::user(format!(
            "{}: give the tree as ssh://[user@]host[:port]/path",
            path.display()
        ))
    })?;
    let delay = Duration::from_millis(delay_ms);
    let port = start_proxy((host.host.clone(), host.port.unwrap_or(22)), delay)
        .map_err(|e| Error::user(format!("delay proxy: {e}")))?;
    // The link goes through the proxy; ssh still checks the server's key under its own name.
    let mut settings = remote::current_settings();
    settings
        .ssh
        .extend(["-o".to_string(), format!("HostKeyAlias={}", host.host)]);
    remote::configure(settings);
    let via = Host {
        host: "127.0.0.1".into(),
        port: Some(port),
        ..host.clone()
    };
    let mount = target::mount_path(&via, &server_path);
    let started = Instant::now();
    let link = remote::link(&via).map_err(|e| Error::user(e.to_string()))?;
    let connect = started.elapsed();
    let rtt = link.ping().map_err(|e| Error::user(e.to_string()))?;
    println!(
        "link: {} through a {delay_ms} ms-each-way proxy, connect {:.3} s, round trip {:.1} ms",
        host.authority(),
        connect.as_secs_f64(),
        rtt.as_secs_f64() * 1e3
    );
    let mut remote_s = Vec::new();
    let mut bytes = 0;
    for _ in 0..rounds {
        let before = link
            .counters
            .bytes_in
            .load(std::sync::atomic::Ordering::Relaxed);
        let t = crate::ui::time_to_graph(&mount, TIMEOUT).ok_or_else(|| {
            Error::user(format!("{}: no graph within {TIMEOUT:?}", path.display()))
        })?;
        bytes = link
            .counters
            .bytes_in
            .load(std::sync::atomic::Ordering::Relaxed)
            - before;
        remote_s.push(t);
    }
    let local = PathBuf::from(&server_path);
    let mut local_s = Vec::new();
    if local.exists() {
        for _ in 0..rounds {
            if let Some(t) = crate::ui::time_to_graph(&local, TIMEOUT) {
                local_s.push(t);
            }
        }
    }
    if npy_mib > 0 {
        tensor_bytes(&link, &via, npy_mib)?;
    }
    let sshfs_s = if sshfs {
        over_sshfs(&host, port, &server_path, rounds)?
    } else {
        Vec::new()
    };
    let best = |v: &[Duration]| super::measure::min(v).as_secs_f64();
    if !sshfs_s.is_empty() {
        println!(
            "open-to-graph over sshfs through the same proxy: best {:.3} s (median {:.3} s)",
            best(&sshfs_s),
            super::measure::median(&mut sshfs_s.clone()).as_secs_f64()
        );
        println!("sshfs_open_s={:.4}", best(&sshfs_s));
    }
    let local_best = (!local_s.is_empty()).then(|| best(&local_s));
    println!(
        "open-to-graph: remote best {:.3} s (median {:.3} s) · local best {} · {bytes} bytes in \
         per open",
        best(&remote_s),
        super::measure::median(&mut remote_s).as_secs_f64(),
        local_best.map_or("n/a".to_string(), |s| format!("{s:.3} s")),
    );
    println!(
        "remote_open_s={:.4} local_open_s={:.4} rtt_ms={:.1} bytes_in={bytes}",
        best(&remote_s),
        local_best.unwrap_or(f64::NAN),
        rtt.as_secs_f64() * 1e3
    );
    Ok(())
}

/// The bytes that cross for the statistics and the heatmap slice of a `mib` MiB `.npy` written
/// to a temp folder of this machine, which must be the server (a loopback link).
fn tensor_bytes(link: &remote::Link, via: &Host, mib: usize) -> Result<()> {
    use std::sync::atomic::Ordering::Relaxed;
    let dir = std::env::temp_dir().join(format!("fxray-bench-remote-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, &e))?;
    let file = dir.join("big.npy");
    let result = (|| {
        super::tensors::write_bench_npy(&file, mib)?;
        let far = target::mount_path(via, &file.display().to_string());
        let before = link.counters.bytes_in.load(Relaxed);
        let t = Instant::now();
        let s = crate::pipeline::tensors::summarize_file(&far).map_err(Error::user)?;
        let stats_s = t.elapsed().as_secs_f64();
        let stats_bytes = link.counters.bytes_in.load(Relaxed) - before;
        let before = link.counters.bytes_in.load(Relaxed);
        crate::pipeline::tensors::slice(&far, &[], 1 << 20).map_err(Error::user)?;
        let slice_bytes = link.counters.bytes_in.load(Relaxed) - before;
        println!(
            "a {mib} MiB .npy ({} elements) on the server: statistics {stats_bytes} bytes in \
             ({stats_s:.2} s), heatmap slice {slice_bytes} bytes in",
            s.stats.count
        );
        println!("npy_mib={mib} stats_bytes_in={stats_bytes} slice_bytes_in={slice_bytes}");
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Open-to-graph of the same tree mounted with sshfs through the proxy (mounted afresh each
/// round, so that no round reads from the last one's cache, as fxray's rounds do not).
fn over_sshfs(host: &Host, port: u16, server_path: &str, rounds: usize) -> Result<Vec<Duration>> {
    use std::process::Command;
    let settings = remote::current_settings();
    // sshfs splits its ssh_command on spaces and takes no quotes.
    let ssh = settings.ssh.join(" ");
    let mnt = std::env::temp_dir().join(format!("fxray-bench-sshfs-{}", std::process::id()));
    let dest = match &host.user {
        Some(u) => format!("{u}@127.0.0.1:{server_path}"),
        None => format!("127.0.0.1:{server_path}"),
    };
    let mut out = Vec::new();
    for _ in 0..rounds {
        std::fs::create_dir_all(&mnt).map_err(|e| Error::io(&mnt, &e))?;
        let status = Command::new("sshfs")
            .arg(&dest)
            .arg(&mnt)
            .args(["-p", &port.to_string(), "-o", "ro"])
            .arg("-o")
            .arg(format!("ssh_command={ssh}"))
            .status()
            .map_err(|e| Error::user(format!("sshfs: {e} (apt-get install sshfs)")))?;
        if !status.success() {
            return Err(Error::user(format!("sshfs {dest} failed: {status}")));
        }
        let t = crate::ui::time_to_graph(&mnt, TIMEOUT);
        let _ = Command::new("fusermount").arg("-u").arg(&mnt).status();
        let _ = std::fs::remove_dir(&mnt);
        out.push(t.ok_or_else(|| Error::user("no graph over sshfs in time"))?);
    }
    Ok(out)
}

/// A TCP proxy on 127.0.0.1 to `to`, delaying every chunk by `delay` in each direction (a
/// queue per direction, so a delay adds latency without limiting throughput). Returns its port.
pub fn start_proxy(to: (String, u16), delay: Duration) -> std::io::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect((to.0.as_str(), to.1)) else {
                continue;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            for (from, into) in [
                (client.try_clone(), server.try_clone()),
                (server.try_clone(), client.try_clone()),
            ] {
                if let (Ok(from), Ok(into)) = (from, into) {
                    pump(from, into, delay);
                }
            }
        }
    });
    Ok(port)
}

type Queue = Arc<(Mutex<(VecDeque<(Instant, Vec<u8>)>, bool)>, Condvar)>;

fn pump(mut from: TcpStream, mut into: TcpStream, delay: Duration) {
    let q: Queue = Arc::default();
    let rq = q.clone();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = from.read(&mut buf).unwrap_or(0);
            let (m, cv) = &*rq;
            let mut g = m.lock().expect("queue");
            if n == 0 {
                g.1 = true;
                cv.notify_one();
                return;
            }
            g.0.push_back((Instant::now() + delay, buf[..n].to_vec()));
            cv.notify_one();
        }
    });
    std::thread::spawn(move || {
        let (m, cv) = &*q;
        loop {
            let next = {
                let mut g = m.lock().expect("queue");
                while g.0.is_empty() && !g.1 {
                    g = cv.wait(g).expect("queue");
                }
                match g.0.pop_front() {
                    Some(x) => x,
                    None => {
                        let _ = into.shutdown(std::net::Shutdown::Write);
                        return;
                    }
                }
            };
            let wait = next.0.saturating_duration_since(Instant::now());
            std::thread::sleep(wait);
            if into.write_all(&next.1).is_err() {
                return;
            }
        }
    });
}
