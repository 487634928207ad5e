//! Shell completions and the man page, both written from the same clap definition the
//! command line is parsed with, so they cannot drift from it.

use super::Cli;
use crate::error::{Error, Result};
use clap::CommandFactory;
use std::io::Write;

pub fn completions(shell: clap_complete::Shell) -> Result<()> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "fxray", &mut out);
    super::emit(&String::from_utf8_lossy(&out), None)
}

/// The page of `fxray` itself, with every subcommand's usage and options in its own section,
/// `bench`'s too (`man fxray` is where a terminal user looks first).
pub fn man() -> Result<()> {
    let cmd = Cli::command().name("fxray");
    let mut out = Vec::new();
    let err = |e: std::io::Error| Error::Internal(format!("man page: {e}"));
    let page = clap_mangen::Man::new(cmd.clone());
    page.render_title(&mut out).map_err(err)?;
    page.render_name_section(&mut out).map_err(err)?;
    page.render_synopsis_section(&mut out).map_err(err)?;
    page.render_description_section(&mut out).map_err(err)?;
    page.render_options_section(&mut out).map_err(err)?;
    writeln!(out, ".SH COMMANDS").map_err(err)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        section(&mut out, sub, "fxray").map_err(err)?;
    }
    page.render_version_section(&mut out).map_err(err)?;
    super::emit(&String::from_utf8_lossy(&out), None)
}

/// `.SS fxray bench open`: one command's about, usage and arguments, then its own subcommands'.
fn section(out: &mut Vec<u8>, sub: &clap::Command, parent: &str) -> std::io::Result<()> {
    let name = format!("{parent} {}", sub.get_name());
    let mut cmd = sub.clone().bin_name(&name);
    cmd.build();
    writeln!(out, ".SS {}", roff_escape(&name))?;
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        writeln!(out, "{}", roff_escape(&about.to_string()))?;
    }
    let usage = cmd.render_usage().to_string();
    writeln!(
        out,
        ".PP\n.B {}",
        roff_escape(usage.trim_start_matches("Usage: "))
    )?;
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        let flag = match (arg.get_short(), arg.get_long()) {
            (Some(s), Some(l)) => format!("-{s}, --{l}"),
            (None, Some(l)) => format!("--{l}"),
            (Some(s), None) => format!("-{s}"),
            (None, None) => arg.get_id().to_string().to_uppercase(),
        };
        let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
        writeln!(out, ".TP\n{}\n{}", roff_escape(&flag), roff_escape(&help))?;
    }
    for child in sub.get_subcommands().filter(|s| !s.is_hide_set()) {
        section(out, child, &name)?;
    }
    Ok(())
}

/// Text as roff shows it: a leading `.` or `'` would be read as a request, `\\` as an escape.
fn roff_escape(s: &str) -> String {
    s.lines()
        .map(|l| {
            let l = l.replace('\\', "\\e").replace('-', "\\-");
            if l.starts_with(['.', '\'']) {
                format!("\\&{l}")
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
