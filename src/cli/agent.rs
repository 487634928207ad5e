//! `fxray agent --stdio | --print-install`.

use crate::error::Result;

pub fn run(stdio: bool, print_install: bool) -> Result<()> {
    if print_install || !stdio {
        print!("{}", crate::agent::install_text());
        return Ok(());
    }
    crate::agent::serve(std::io::stdin(), std::io::stdout())
}
