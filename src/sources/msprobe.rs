//! msprobe statistics `dump.json` (docs/formats.md §4.1): `step<N>/<rank<R>|pid<P>>/dump.json`.
//! `input_args` and `output` are lists, `input_kwargs` a dict; containers nest by numeric path.
//! `null` statistics (non-finite values, or dtypes msprobe does not summarise) stay `None`.

use crate::model::tensor::{MsprobeEntry, MsprobeStep, MsprobeTensor};
use serde_json::Value;
use std::path::Path;

/// Reads one `dump.json`. Unknown records are listed in `skipped`, never fatal.
pub fn read(path: &Path, step: u32, who: &str) -> Result<MsprobeStep, String> {
    let text = super::read::read_bytes_limited(path, super::read::MAX_TEXT_BYTES)
        .map_err(|e| e.to_string())?;
    parse(&text, step, who).map(|mut s| {
        s.path = path.to_path_buf();
        s
    })
}

pub fn parse(bytes: &[u8], step: u32, who: &str) -> Result<MsprobeStep, String> {
    let v: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("not valid msprobe JSON: {e}"))?;
    let Value::Object(top) = v else {
        return Err("not an msprobe dump.json: the top level is not an object".into());
    };
    let mut out = MsprobeStep {
        path: Default::default(),
        step,
        who: who.to_string(),
        task: top.get("task").and_then(Value::as_str).map(str::to_string),
        level: top.get("level").and_then(Value::as_str).map(str::to_string),
        entries: Vec::new(),
        skipped: Vec::new(),
    };
    let Some(Value::Object(data)) = top.get("data") else {
        return Err("not an msprobe dump.json: no `data` object".into());
    };
    for (key, rec) in data {
        let mut tensors = Vec::new();
        if let Value::Object(parts) = rec {
            for (part, val) in parts {
                walk(val, part, &mut tensors, &mut out.skipped, key);
            }
        } else {
            out.skipped.push(format!("{key}: not an object"));
        }
        out.entries.push(MsprobeEntry {
            key: key.clone(),
            tensors,
        });
    }
    Ok(out)
}

fn walk(v: &Value, slot: &str, out: &mut Vec<MsprobeTensor>, skipped: &mut Vec<String>, key: &str) {
    match v {
        Value::Object(o) if o.contains_key("type") => {
            if o.get("type").and_then(Value::as_str) != Some("torch.Tensor") {
                return; // scalars, None, strings: nothing to show as a tensor
            }
            let num = |k: &str| o.get(k).and_then(Value::as_f64);
            out.push(MsprobeTensor {
                slot: slot.to_string(),
                dtype: o
                    .get("dtype")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string(),
                shape: o
                    .get("shape")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_i64).collect())
                    .unwrap_or_default(),
                max: num("Max"),
                min: num("Min"),
                mean: num("Mean"),
                norm: num("Norm"),
            });
        }
        Value::Object(o) => {
            for (k, x) in o {
                walk(x, &format!("{slot}.{k}"), out, skipped, key);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                walk(x, &format!("{slot}.{i}"), out, skipped, key);
            }
        }
        Value::Null => {}
        other => skipped.push(format!("{key} {slot}: unexpected {other}")),
    }
}

/// `Module.layers.0.mlp.MLP.forward.0` → `layers.0.mlp`; `Aten.add.Tensor.3.forward` → None.
/// The module path is what the FX graph's source comments and node names can be matched on.
pub fn module_path(key: &str) -> Option<String> {
    let rest = key.strip_prefix("Module.")?;
    let parts: Vec<&str> = rest.split('.').collect();
    let fwd = parts
        .iter()
        .rposition(|p| *p == "forward" || *p == "backward")?;
    // … <path> . <Class> . forward . <n>
    let path = &parts[..fwd.checked_sub(1)?];
    Some(path.join("."))
}

/// Every `step<N>/<rank<R>|pid<P>>/dump.json` under `root` (up to four levels down), read.
/// Unreadable files come back as errors next to the steps that were read.
pub fn scan(root: &Path) -> (Vec<MsprobeStep>, Vec<String>) {
    let mut steps = Vec::new();
    let mut errors = Vec::new();
    let how = super::vfs::Walk {
        max_depth: 4,
        sizes: false,
    };
    for e in super::vfs::walk(root, how, |_| true, &mut Vec::new()) {
        if e.name() != "dump.json" {
            continue;
        }
        let p = e.path.as_path();
        let who_dir = p.parent();
        let step_dir = who_dir.and_then(Path::parent);
        let name = |d: Option<&Path>| {
            d.and_then(|d| d.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let (who, step) = (name(who_dir), name(step_dir));
        let (true, Some(step)) = (
            super::names::msprobe_who_dir(&who),
            super::names::msprobe_step_dir(&step),
        ) else {
            continue;
        };
        match read(p, step, &who) {
            Ok(s) => steps.push(s),
            Err(e) => errors.push(format!("{}: {e}", p.display())),
        }
    }
    steps.sort_by(|a, b| (a.step, &a.who).cmp(&(b.step, &b.who)));
    (steps, errors)
}
