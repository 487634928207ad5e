//! What `cargo package` ships (an install from the registry builds from it): the code, the
//! bundled sample and fonts, the docs; never the test fixtures, screenshots or fuzz targets,
//! and under 10 MB in all.

use std::path::Path;

#[test]
fn the_package_ships_the_app_and_not_the_test_data() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["package", "--list", "--allow-dirty", "--offline"])
        .current_dir(root)
        .output()
        .expect("cargo package --list");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = String::from_utf8_lossy(&out.stdout);
    let files: Vec<&str> = list
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    for needed in [
        "src/main.rs",
        "src/lib.rs",
        "Cargo.lock",
        "README.md",
        "assets/launcher.py",
    ] {
        assert!(files.contains(&needed), "{needed} is not shipped");
    }
    assert!(
        files.iter().any(|f| f.starts_with("assets/sample/")),
        "no sample"
    );
    assert!(
        files.iter().any(|f| f.starts_with("assets/fonts/")),
        "no fonts"
    );
    for f in &files {
        for left_out in ["tests/", "screenshots/", "fuzz/", "target/"] {
            assert!(!f.starts_with(left_out), "{f} is shipped");
        }
    }
    // Files cargo writes itself (`Cargo.toml.orig`, `.cargo_vcs_info.json`) are not on disk.
    let bytes: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(root.join(f)).ok())
        .map(|m| m.len())
        .sum();
    assert!(bytes < 10 << 20, "the package holds {bytes} bytes");
    assert!(
        bytes > 1 << 20,
        "only {bytes} bytes listed: the list was not read"
    );
}

/// Ends an X server the way it cleans up after itself (SIGTERM: its socket and lock file go
/// too; a killed one leaves them, and the free displays run out).
fn stop(xvfb: &mut std::process::Child) {
    let _ = std::process::Command::new("kill")
        .arg(xvfb.id().to_string())
        .status();
    let _ = xvfb.wait();
}

/// A free X display number for a private Xvfb.
fn free_display() -> u32 {
    (90..200)
        .find(|n| {
            !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
                && !Path::new(&format!("/tmp/.X{n}-lock")).exists()
        })
        .expect("a free display")
}

/// The Debian package holds the binary, a desktop entry, its icon, the man page and the
/// completions; unpacked into a root (as `dpkg -i` would, without touching this machine's
/// /usr), the entry's `Exec` line opens the window under Xvfb.
#[test]
fn the_debian_package_starts_the_app_from_its_desktop_entry() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().expect("tempdir");
    let built = std::process::Command::new(root.join("assets/packaging/deb.sh"))
        .arg(env!("CARGO_BIN_EXE_fxray"))
        .arg(out.path())
        .env("FXRAY_DEB_COMPRESSION", "none")
        .output()
        .expect("deb.sh (needs Debian's dpkg-deb)");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let deb = String::from_utf8_lossy(&built.stdout).trim().to_string();
    assert!(deb.ends_with(".deb") && Path::new(&deb).is_file(), "{deb}");

    let installed = out.path().join("root");
    let x = std::process::Command::new("dpkg-deb")
        .args(["-x", &deb])
        .arg(&installed)
        .status()
        .expect("dpkg-deb -x");
    assert!(x.success());
    for f in [
        "usr/bin/fxray",
        "usr/share/applications/fxray.desktop",
        "usr/share/icons/hicolor/scalable/apps/fxray.svg",
        "usr/share/man/man1/fxray.1.gz",
        "usr/share/bash-completion/completions/fxray",
    ] {
        assert!(installed.join(f).is_file(), "{f} not in the package");
    }
    let entry = std::fs::read_to_string(installed.join("usr/share/applications/fxray.desktop"))
        .expect("desktop entry");
    assert!(entry.contains("Icon=fxray"), "{entry}");
    let exec = entry
        .lines()
        .find_map(|l| l.strip_prefix("Exec="))
        .expect("an Exec line");
    // Field codes (`%f`) are the file a launcher passes; started from the menu there is none.
    let argv: Vec<&str> = exec
        .split_whitespace()
        .filter(|w| !w.starts_with('%'))
        .collect();
    assert_eq!(argv.first(), Some(&"fxray"), "{exec}");

    let display = format!(":{}", free_display());
    // The server and the app die with this test's thread, however it ends.
    let mut xvfb = std::process::Command::new("Xvfb");
    xvfb.args([
        display.as_str(),
        "-screen",
        "0",
        "1280x800x24",
        "-nolisten",
        "tcp",
    ])
    .stderr(std::process::Stdio::null());
    fxray::platform::die_with_starting_thread(&mut xvfb);
    let mut xvfb = xvfb.spawn().expect("Xvfb (Debian's xvfb)");
    // The server is up once a client is answered (its socket appears before that).
    let answers = || {
        std::process::Command::new("xdotool")
            .arg("getdisplaygeometry")
            .env("DISPLAY", &display)
            .stderr(std::process::Stdio::null())
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let t = std::time::Instant::now();
    while !answers() {
        assert!(
            t.elapsed() < std::time::Duration::from_secs(20),
            "Xvfb did not start on {display}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let runtime = tempfile::tempdir().expect("tempdir");
    let path = format!(
        "{}:{}",
        installed.join("usr/bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let launch = || {
        let mut app = std::process::Command::new(argv[0]);
        fxray::platform::die_with_starting_thread(&mut app);
        app.args(&argv[1..])
            .env("PATH", &path)
            .env("DISPLAY", &display)
            .env("XDG_RUNTIME_DIR", runtime.path())
            .env_remove("WAYLAND_DISPLAY")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the Exec line starts")
    };
    let mut app = launch();
    // On a loaded machine the first connection to a fresh Xvfb was once refused although it
    // answered xdotool a moment before: that, and only that, is tried again (twice).
    let mut refused = 0;
    let t = std::time::Instant::now();
    let mut window = false;
    while t.elapsed() < std::time::Duration::from_secs(60) {
        if let Ok(Some(status)) = app.try_wait() {
            let mut err = String::new();
            let _ = std::io::Read::read_to_string(app.stderr.as_mut().unwrap(), &mut err);
            if err.contains("Failed to open connection to X server") && refused < 2 {
                refused += 1;
                std::thread::sleep(std::time::Duration::from_millis(500));
                app = launch();
                continue;
            }
            let server = match xvfb.try_wait() {
                Ok(Some(s)) => format!("Xvfb had exited ({s})"),
                _ => format!("Xvfb running, answering: {}", answers()),
            };
            stop(&mut xvfb);
            panic!("fxray exited ({status}) before its window showed ({server}): {err}");
        }
        let found = std::process::Command::new("xdotool")
            .args(["search", "--name", "^fxray"])
            .env("DISPLAY", &display)
            .output()
            .expect("xdotool");
        if found.status.success() && !found.stdout.is_empty() {
            window = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let _ = app.kill();
    let _ = app.wait();
    stop(&mut xvfb);
    if refused > 0 {
        eprintln!("the first {refused} connection(s) to Xvfb {display} were refused");
    }
    assert!(window, "no fxray window within 60 s on {display}");
}
