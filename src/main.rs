//! The `fxray` binary: a thin shell over the library. No arguments or a PATH opens the app;
//! subcommands run headless.

use clap::Parser;
use fxray::cli::{self, Cli};
use std::process::ExitCode;

fn main() -> ExitCode {
    // A bad flag, an unknown subcommand or a missing argument is the user's error: exit 1, as
    // every other user error (clap's own exit would say 2, which fxray keeps for its bugs).
    let args = match Cli::try_parse() {
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
