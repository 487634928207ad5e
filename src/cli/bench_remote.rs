//! `fxray bench remote ssh://host/path --delay-ms 25`: a remote tree opened in the real app
//! (headless, as `bench open` does) through a delay proxy on loopback (every byte held `delay`
//! in each direction: a 2×delay round trip), from the open to the first frame that draws a
//! graph and on to every pass ready; beside the same tree opened locally when it is on this
//! machine too. Also the bytes that crossed the link by each of those moments.

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
    // The bench's own link: the app it measures reads through it and nothing else does.
    let own = remote::Owner::new(settings.clone());
    let via = own.host(&Host {
        host: "127.0.0.1".into(),
        port: Some(port),
        ..host.clone()
    });
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
    let bytes_in = || {
        link.counters
            .bytes_in
            .load(std::sync::atomic::Ordering::Relaxed)
    };
    // Each round waits for the phase complete and the tree's facts in, so no round's tail
    // crosses in the next one's time; the link stays up between rounds, as in one session.
    let mut remote = Vec::new();
    for _ in 0..rounds {
        let before = bytes_in();
        let mut r = super::bench_open::measure(&mount, TIMEOUT, &bytes_in)?;
        r.first_sample -= before;
        r.ready_sample -= before;
        remote.push(r);
    }
    let local = PathBuf::from(server_path.as_str());
    let mut local_rounds = Vec::new();
    if local.exists() {
        for _ in 0..rounds {
            local_rounds.push(super::bench_open::measure(&local, TIMEOUT, &|| 0)?);
        }
    }
    if npy_mib > 0 {
        tensor_bytes(&link, &via, npy_mib)?;
    }
    let sshfs_s = if sshfs {
        over_sshfs(&host, port, &server_path, rounds, &settings)?
    } else {
        Vec::new()
    };
    let best = |v: &[Duration]| super::measure::min(v).as_secs_f64();
    let median = |v: &[Duration]| super::measure::median(&mut v.to_vec()).as_secs_f64();
    let secs = |rounds: &[super::bench_open::Round], f: fn(&super::bench_open::Round) -> f64| {
        rounds
            .iter()
            .map(|r| Duration::from_secs_f64(f(r)))
            .collect::<Vec<_>>()
    };
    if !sshfs_s.is_empty() {
        let (first, ready) = (secs(&sshfs_s, |r| r.first_s), secs(&sshfs_s, |r| r.ready_s));
        println!(
            "over sshfs through the same proxy: first graph best {:.3} s (median {:.3} s), every \
             pass ready best {:.3} s",
            best(&first),
            median(&first),
            best(&ready)
        );
        println!(
            "sshfs_first_graph_s={:.4} sshfs_ready_s={:.4}",
            best(&first),
            best(&ready)
        );
    }
    let first = secs(&remote, |r| r.first_s);
    let ready = secs(&remote, |r| r.ready_s);
    let local_first = secs(&local_rounds, |r| r.first_s);
    let local_ready = secs(&local_rounds, |r| r.ready_s);
    let local_best = |v: &[Duration]| {
        if v.is_empty() {
            "n/a".to_string()
        } else {
            format!("{:.3} s", best(v))
        }
    };
    // The bytes of the round whose first graph was the fastest.
    let fastest = remote
        .iter()
        .min_by(|a, b| a.first_s.total_cmp(&b.first_s))
        .copied()
        .unwrap_or_default();
    println!(
        "first graph: remote best {:.3} s (median {:.3} s) · local best {} · {} bytes in by then",
        best(&first),
        median(&first),
        local_best(&local_first),
        fastest.first_sample
    );
    println!(
        "every pass ready: remote best {:.3} s (median {:.3} s) · local best {} · {} bytes in by \
         then",
        best(&ready),
        median(&ready),
        local_best(&local_ready),
        fastest.ready_sample
    );
    let nan_or = |v: &[Duration]| if v.is_empty() { f64::NAN } else { best(v) };
    println!(
        "first_graph_s={:.4} ready_s={:.4} local_first_graph_s={:.4} local_ready_s={:.4} \
         rtt_ms={:.1} connect_s={:.3} first_bytes_in={} ready_bytes_in={}",
        best(&first),
        best(&ready),
        nan_or(&local_first),
        nan_or(&local_ready),
        rtt.as_secs_f64() * 1e3,
        connect.as_secs_f64(),
        fastest.first_sample,
        fastest.ready_sample
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
        let s = crate::pipeline::tensors::summarize_file(&far)?;
        let stats_s = t.elapsed().as_secs_f64();
        let stats_bytes = link.counters.bytes_in.load(Relaxed) - before;
        let before = link.counters.bytes_in.load(Relaxed);
        crate::pipeline::tensors::slice(&far, &[], 1 << 20)?;
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
fn over_sshfs(
    host: &Host,
    port: u16,
    server_path: &str,
    rounds: usize,
    settings: &remote::Settings,
) -> Result<Vec<super::bench_open::Round>> {
    use std::process::Command;
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
        let r = super::bench_open::measure(&mnt, TIMEOUT, &|| 0);
        let _ = Command::new("fusermount").arg("-u").arg(&mnt).status();
        let _ = std::fs::remove_dir(&mnt);
        out.push(r?);
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
