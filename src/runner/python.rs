//! Which Python runs the compile: the active virtualenv or conda environment, else `python3`
//! on PATH, else one the user picks; and what it has installed (torch, torch_npu, …).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// An interpreter and where it was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Interpreter {
    pub path: PathBuf,
    /// `venv`, `conda`, `PATH`, `chosen`.
    pub origin: &'static str,
}

/// The interpreters worth offering, best first, without duplicates.
pub fn candidates() -> Vec<Interpreter> {
    let mut out: Vec<Interpreter> = Vec::new();
    let mut push = |path: PathBuf, origin: &'static str| {
        if path.is_file() && !out.iter().any(|i| i.path == path) {
            out.push(Interpreter { path, origin });
        }
    };
    if let Some(v) = std::env::var_os("VIRTUAL_ENV") {
        push(PathBuf::from(v).join("bin/python"), "venv");
    }
    if let Some(c) = std::env::var_os("CONDA_PREFIX") {
        push(PathBuf::from(c).join("bin/python"), "conda");
    }
    for name in ["python3", "python"] {
        if let Some(p) = on_path(name) {
            push(p, "PATH");
        }
    }
    out
}

/// The interpreter to use: `chosen`, else the first candidate.
pub fn resolve(chosen: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = chosen {
        if p.components().count() == 1 {
            // A bare name (`python3.11`): look it up like a shell would, without a shell.
            return on_path(&p.to_string_lossy())
                .ok_or_else(|| format!("{} is not on PATH", p.display()));
        }
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(format!("no Python at {}", p.display()))
        };
    }
    candidates()
        .into_iter()
        .next()
        .map(|i| i.path)
        .ok_or_else(|| "no Python found: install python3, activate a venv, or choose one".into())
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let names = crate::platform::program_names(name);
    std::env::split_paths(&path)
        .flat_map(|d| names.iter().map(move |n| d.join(n)))
        .find(|p| crate::platform::is_executable(p))
}

/// What an interpreter has: its version and the versions of the packages a compile needs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packages {
    pub python: String,
    pub torch: Option<String>,
    pub torch_npu: Option<String>,
    pub npugraph_ex: Option<String>,
    pub torchair: Option<String>,
}

const PROBE: &str = r#"
import importlib.metadata as m, json, sys
def v(n):
    try:
        return m.version(n)
    except Exception:
        return None
print(json.dumps({"python": sys.version.split()[0], "torch": v("torch"),
    "torch_npu": v("torch_npu"), "npugraph_ex": v("npugraph_ex"), "torchair": v("torchair")}))
"#;

/// Asks `python` for its packages (reads package metadata only: no torch import, so it is quick).
pub fn probe(python: &Path) -> Result<Packages, String> {
    let out = std::process::Command::new(python)
        .args(["-c", PROBE])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed: {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let line = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(line.trim())
        .map_err(|e| format!("unexpected answer from {}: {e}", python.display()))
}
