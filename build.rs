//! Packs the bundled sample run (`assets/sample`, 3.4 MB of files) into one `.tar.gz` (about
//! 0.6 MB) that the binary embeds; `pipeline::sample` unpacks it into the cache on first use.

use std::path::PathBuf;

fn main() {
    println!("cargo::rerun-if-changed=assets/sample");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("sample.tar.gz");
    let file = std::fs::File::create(&out).expect("create sample.tar.gz");
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::best());
    let mut tar = tar::Builder::new(gz);
    // Same bytes whatever the checkout's owners and times.
    tar.mode(tar::HeaderMode::Deterministic);
    tar.follow_symlinks(false);
    tar.append_dir_all(".", "assets/sample")
        .expect("pack assets/sample");
    tar.into_inner()
        .and_then(|gz| gz.finish())
        .expect("write sample.tar.gz");
}
