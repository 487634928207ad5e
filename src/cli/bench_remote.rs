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

pub fn run(path: &Path, delay_ms: u64, rounds: usize) -> Result<()> {
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
    let best = |v: &[Duration]| super::measure::min(v).as_secs_f64();
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
