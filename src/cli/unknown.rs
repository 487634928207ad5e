//! `fxray sumary /tmp`: the first word is read as the PATH to open, so clap then says "the
//! subcommand '/tmp' cannot be used with '[PATH]'", which names neither the typo nor the fix.
//! A first word that is no command and no file, followed by more words or close to a command's
//! name, is an unknown command.

use super::Cli;
use crate::error::Error;
use clap::CommandFactory;
use std::ffi::OsString;
use std::path::Path;

/// The error for `argv` (program name first) when its first word is an unknown command.
pub fn unknown_command(argv: &[OsString]) -> Option<Error> {
    let word = argv.get(1)?.to_str()?;
    // Options, and words that can only be paths (`graph.txt`, `runs/x`, `/ssh:host/…`).
    if word.is_empty() || word.starts_with('-') || word.contains(['/', '\\', '.', ':']) {
        return None;
    }
    let cli = Cli::command();
    let mut names: Vec<&str> = vec!["help"];
    for c in cli.get_subcommands() {
        names.push(c.get_name());
        names.extend(c.get_all_aliases());
    }
    if names.contains(&word) || Path::new(word).exists() {
        return None;
    }
    let near = names
        .iter()
        .map(|n| (strsim::damerau_levenshtein(n, word), *n))
        .filter(|&(d, _)| d <= 2)
        .min();
    if near.is_none() && argv.len() <= 2 {
        // `fxray runs`: a folder that is not here; opening it says so.
        return None;
    }
    let hint = match near {
        Some((_, n)) => format!("did you mean '{n}'? "),
        None => String::new(),
    };
    Some(Error::user(format!(
        "unknown command '{word}': {hint}`fxray --help` lists the commands (no file or folder \
         of that name is here either)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(words: &[&str]) -> Option<String> {
        let argv: Vec<OsString> = std::iter::once("fxray")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect();
        unknown_command(&argv).map(|e| e.to_string())
    }

    #[test]
    fn a_typo_names_the_command_it_meant() {
        let e = check(&["sumary", "/tmp"]).expect("unknown");
        assert!(
            e.starts_with("unknown command 'sumary': did you mean 'summary'?"),
            "{e}"
        );
        let e = check(&["modulez"]).expect("unknown");
        assert!(e.contains("did you mean 'modules'?"), "{e}");
    }

    #[test]
    fn a_word_far_from_every_command_is_unknown_when_more_follow() {
        let e = check(&["frobnicate", "x"]).expect("unknown");
        assert!(
            e.starts_with("unknown command 'frobnicate': `fxray --help`"),
            "{e}"
        );
        // Alone, it is a folder that is not here: the app's open says that.
        assert_eq!(check(&["frobnicate"]), None);
    }

    #[test]
    fn commands_paths_and_options_pass() {
        for words in [
            &["summary", "x"][..],
            &["modules", "X"],
            &["help"],
            &["--help"],
            &["graph.txt"],
            &["runs/x", "y"],
            &["/ssh:host/tree"],
            &["src", "x"], // a folder that exists (tests run in the crate's root)
            &[],
        ] {
            assert_eq!(check(words), None, "{words:?}");
        }
    }
}
