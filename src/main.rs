//! The `fxray` binary: a thin shell over the library. No arguments or a PATH opens the app;
//! subcommands run headless.

use clap::Parser;
use fxray::cli::{self, Cli};
use std::process::ExitCode;

// glibc's allocator spends a quarter of a 415-layer parse consolidating fast bins when a graph of
// millions of small allocations is freed; mimalloc frees per page, and the whole open of the 83-
// and 415-layer trees takes a quarter less CPU and less peak memory. With transparent huge pages
// (mimalloc asks for them): a 415-layer graph's nodes span more 4 KiB pages than the TLB holds,
// and on 2 MiB pages msprobe linking is a tenth faster and an open's CPU a twentieth less, for
// 40-70 MiB more peak (measured alternately, December 2026; an earlier build without them had
// found the kernel zeroing pages mimalloc gave back, which no longer shows).
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
