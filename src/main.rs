//! The `fxray` binary: a thin shell over the library. No arguments or a PATH opens the app;
//! subcommands run headless.

use clap::Parser;
use fxray::cli::{self, Cli};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = Cli::parse();
    let result = match args.command {
        Some(cmd) => cli::run(cmd),
        None => fxray::ui::run_native(args.path),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fxray: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
