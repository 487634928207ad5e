//! The `fxray` binary: a thin shell over the library. No arguments or a PATH opens the app;
//! subcommands run headless.

use clap::Parser;
use fxray::cli::{self, Cli};
use std::process::ExitCode;

// glibc's allocator spends a quarter of a 415-layer parse consolidating fast bins when a graph of
// millions of small allocations is freed; mimalloc frees per page, and the whole open of the 83-
// and 415-layer trees takes a quarter less CPU and less peak memory. Without transparent huge
// pages (`no_thp`): mimalloc asks for them, and each page it gave back and took again was a 2 MiB
// page the kernel zeroed: half the CPU of an open, and the small tree twice as slow as glibc.
// Measured again in December 2026: with them a local open took 5 % less CPU and msprobe linking
// 10 % less time, but a 415-layer tree over ssh (client and agent on one machine) was every pass
// ready 8-12 % later; remote use must not get slower, so they stay off.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // A bad flag, an unknown subcommand or a missing argument is the user's error: exit 1, as
    // every other user error (clap's own exit would say 2, which fxray keeps for its bugs).
    let (argv, remote_fxray) = match cli::resolve_remote_args(std::env::args_os()) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("fxray: {e}");
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    if let Some(e) = cli::unknown_command(&argv) {
        eprintln!("fxray: {e}");
        return ExitCode::from(e.exit_code() as u8);
    }
    let args = match Cli::try_parse_from(argv) {
        Ok(args) => args,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS // --help, --version
            };
        }
    };
    fxray::sources::remote::set_remote_fxray(remote_fxray.or(args.remote_fxray));
    let result = match args.command {
        Some(cmd) => cli::run(cmd),
        None => fxray::ui::run_native(args.path, args.golden),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fxray: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
