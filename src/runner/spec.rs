//! What to run: the settings of the Run panel and of `fxray run`, turned into one program, an
//! argument vector and an explicit environment. Nothing goes through a shell.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The `torch.compile` backend the launcher applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// Whatever the script asks for.
    #[default]
    Script,
    #[value(name = "npugraph_ex")]
    NpugraphEx,
    /// TorchAir `get_npu_backend(compiler_config=…)`.
    Torchair,
    Inductor,
    #[value(name = "aot_eager")]
    AotEager,
}

impl Backend {
    pub const ALL: [Backend; 5] = [
        Backend::Script,
        Backend::NpugraphEx,
        Backend::Torchair,
        Backend::Inductor,
        Backend::AotEager,
    ];

    /// As the launcher spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Script => "script",
            Backend::NpugraphEx => "npugraph_ex",
            Backend::Torchair => "torchair",
            Backend::Inductor => "inductor",
            Backend::AotEager => "aot_eager",
        }
    }

    /// Runs without an NPU.
    pub fn is_cpu(self) -> bool {
        matches!(self, Backend::Inductor | Backend::AotEager)
    }
}

/// TorchAir's `CompilerConfig.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum Mode {
    #[value(name = "max-autotune")]
    #[serde(rename = "max-autotune")]
    MaxAutotune,
    #[value(name = "reduce-overhead")]
    #[serde(rename = "reduce-overhead")]
    ReduceOverhead,
    #[value(name = "npugraph_ex")]
    #[serde(rename = "npugraph_ex")]
    NpugraphEx,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::MaxAutotune, Mode::ReduceOverhead, Mode::NpugraphEx];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::MaxAutotune => "max-autotune",
            Mode::ReduceOverhead => "reduce-overhead",
            Mode::NpugraphEx => "npugraph_ex",
        }
    }
}

/// Everything that defines one run; saved with past runs so they can be run again.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSpec {
    /// The interpreter; `None`: the one found first (venv, conda, `python3` on PATH).
    pub python: Option<PathBuf>,
    pub script: PathBuf,
    pub args: Vec<String>,
    /// Working folder; `None`: the script's folder.
    pub cwd: Option<PathBuf>,
    pub backend: Backend,
    pub mode: Option<Mode>,
    /// `ASCEND_RT_VISIBLE_DEVICES`, e.g. `0,1`.
    pub devices: String,
    /// Ranks: more than 1 launches through `torch.distributed.run --nproc_per_node`.
    pub nproc: u32,
    /// Dump every node's tensors as `.npy` under this folder.
    pub data_dump: Option<PathBuf>,
    pub deadlock_check: bool,
    /// `TORCHINDUCTOR_ASCENDC_AUTOTUNE_TOPN`.
    pub autotune_topn: Option<u32>,
    /// `TORCH_COMPILE_DEBUG_DIR`; `None`: the working folder.
    pub debug_dir: Option<PathBuf>,
    /// Let Inductor serve the compile from its caches. Off by default: a cache hit skips the
    /// passes, so the debug folder would hold no graphs.
    pub keep_caches: bool,
    /// Extra environment, set last.
    pub env: Vec<(String, String)>,
}

/// A process to start.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// Variables set on top of fxray's own environment.
    pub env: Vec<(String, String)>,
    /// Where `torch_compile_debug/` will be.
    pub debug_root: PathBuf,
    /// Killed when the thread that starts it ends (Linux): work fxray waits on, like a
    /// bisect's replay, must not outlive an fxray stopped by Ctrl-C. A compile is the user's
    /// and is stopped by Stop.
    pub dies_with_caller: bool,
}

impl RunSpec {
    pub fn working_dir(&self) -> PathBuf {
        self.cwd.clone().unwrap_or_else(|| {
            self.script
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
        })
    }

    /// The process for this run with `python`, running `launcher`.
    /// How to start this run on this machine: its Python found, its script there, the launcher
    /// written (into fxray's cache folder, never the tree). The Python is returned too.
    pub fn prepare(&self) -> Result<(PathBuf, Launch), String> {
        let python = super::python::resolve(self.python.as_deref())?;
        if !self.script.is_file() {
            return Err(format!("no such script: {}", self.script.display()));
        }
        let launcher = super::launcher_path()?;
        let launch = self.launch(&python, &launcher);
        Ok((python, launch))
    }

    pub fn launch(&self, python: &Path, launcher: &Path) -> Launch {
        let cwd = self.working_dir();
        let mut args: Vec<String> = Vec::new();
        if self.nproc > 1 {
            // torchrun, from the same interpreter, so ranks see the same packages.
            args.extend(["-m", "torch.distributed.run", "--nproc_per_node"].map(String::from));
            args.push(self.nproc.to_string());
        }
        args.push(launcher.display().to_string());
        args.extend(["--backend".to_string(), self.backend.as_str().to_string()]);
        if let Some(m) = self.mode.filter(|_| self.backend == Backend::Torchair) {
            args.extend(["--mode".to_string(), m.as_str().to_string()]);
        }
        if let Some(d) = &self.data_dump {
            args.extend(["--data-dump".to_string(), d.display().to_string()]);
        }
        if self.deadlock_check {
            args.push("--deadlock-check".into());
        }
        args.push("--".into());
        args.push(self.script.display().to_string());
        args.extend(self.args.iter().cloned());

        let mut env = vec![("TORCH_COMPILE_DEBUG".to_string(), "1".to_string())];
        // Output as it happens, not when a block buffer fills.
        env.push(("PYTHONUNBUFFERED".into(), "1".into()));
        if let Some(d) = &self.debug_dir {
            env.push(("TORCH_COMPILE_DEBUG_DIR".into(), d.display().to_string()));
        }
        if !self.devices.trim().is_empty() {
            env.push((
                "ASCEND_RT_VISIBLE_DEVICES".into(),
                self.devices.trim().to_string(),
            ));
        }
        if !self.keep_caches {
            env.push(("TORCHINDUCTOR_FORCE_DISABLE_CACHES".into(), "1".into()));
        }
        if let Some(n) = self.autotune_topn {
            env.push(("TORCHINDUCTOR_ASCENDC_AUTOTUNE_TOPN".into(), n.to_string()));
        }
        env.extend(self.env.iter().cloned());
        let base = self.debug_dir.clone().unwrap_or_else(|| cwd.clone());
        let base = if base.is_absolute() {
            base
        } else {
            std::path::absolute(&base).unwrap_or(base)
        };
        Launch {
            program: python.to_path_buf(),
            args,
            cwd,
            env,
            debug_root: base.join("torch_compile_debug"),
            dies_with_caller: false,
        }
    }
}

/// Parses `KEY=VALUE` (for `--env` and the panel's environment lines).
pub fn parse_env(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() && !k.contains(char::is_whitespace) => {
            Ok((k.to_string(), v.to_string()))
        }
        _ => Err(format!("{s:?} is not KEY=VALUE")),
    }
}
