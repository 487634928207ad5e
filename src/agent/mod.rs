//! `fxray agent --stdio`: the server half of remote use. It answers the client's requests
//! (`sources::remote::proto`) from its standard input, on this machine's files, through the
//! same door and pipelines the app uses locally, and writes the answers to standard output.
//!
//! Requests run in parallel (rayon for file work, a thread per stream) and answer in the order
//! they finish; each answer carries its request's id. The agent exits when its input closes
//! (ssh went away), and every stream it runs stops with it. It only reads: nothing is written
//! into the folders it serves.

mod out;
mod serve;

pub use serve::serve;

/// What `fxray agent --print-install` prints: how to put the agent on a server.
pub fn install_text() -> String {
    let version = env!("CARGO_PKG_VERSION");
    let protocol = crate::sources::remote::proto::PROTOCOL;
    format!(
        "\
fxray {version} (agent protocol {protocol}) runs on the server as `fxray agent --stdio`, started
by `ssh -T host fxray agent --stdio` from `fxray ssh://host/path`. The agent is this same
binary; nothing else is needed on the server (no display, no GPU libraries are loaded by it).

On the server (Linux, x86_64 or aarch64, with a Rust toolchain):
    cargo install --locked --path <fxray checkout>   # or: cargo build --release; copy target/release/fxray
    fxray agent --stdio </dev/null                    # prints `FXRAY-AGENT {protocol} {version}` and exits

An x86_64 laptop and server: copy this binary:
    scp \"$(command -v fxray)\" host:~/.local/bin/fxray

An aarch64 server (Atlas 800): build it there, or cross-build on a machine with the target:
    rustup target add aarch64-unknown-linux-gnu
    cargo build --release --target aarch64-unknown-linux-gnu   # needs an aarch64 linker, e.g.
        # CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
    scp target/aarch64-unknown-linux-gnu/release/fxray host:~/.local/bin/fxray

If fxray is not on the server's PATH for non-interactive ssh, say where it is:
    fxray --remote-fxray /home/me/.local/bin/fxray ssh://host/path
or set FXRAY_REMOTE_FXRAY. FXRAY_SSH replaces the ssh command (e.g. \"ssh -F ~/.ssh/lab_config\").
"
    )
}
