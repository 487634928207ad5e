//! msprobe dumps (docs/formats.md §4.1): `step<N>/<proc<PID>|rank<R>|pid<P>>/dump.json` with
//! `stack.json` and `construct.json` beside it (`beside`), and in tensor mode the tensors'
//! files in `dump_tensor_data/`. `input_args` and `output` are lists, `input_kwargs` and
//! `parameters` dicts; containers nest by numeric path. `null` statistics (non-finite values,
//! or dtypes msprobe does not summarise) stay `None`.

pub mod beside;
mod pyjson;

use crate::model::msprobe::{MsprobeCall, MsprobeEntry, MsprobeScalar, MsprobeStep, MsprobeTensor};
use serde_json::Value;
use std::path::Path;

/// Why a `dump.json` could not be read, in one line.
#[derive(Debug, thiserror::Error)]
pub enum MsprobeError {
    #[error("{0}")]
    Read(#[from] crate::error::Error),
    #[error("not valid msprobe JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not an msprobe dump.json: {0}")]
    NotDump(&'static str),
}

/// Files beside `dump.json` are small; a bigger one is not read.
const MAX_BESIDE_BYTES: u64 = 256 << 20;

/// Reads one `dump.json` and the `stack.json` and `construct.json` beside it. Unknown records
/// are listed in `skipped`, never fatal; a missing or unreadable neighbour only loses its facts.
pub fn read(path: &Path, step: u32, who: &str) -> Result<MsprobeStep, MsprobeError> {
    let text = super::read::read_bytes_limited(path, super::read::MAX_TEXT_BYTES)?;
    let mut s = parse(&text, step, who)?;
    s.path = path.to_path_buf();
    let dir = path.parent().unwrap_or(Path::new(""));
    let neighbour = |name: &str| {
        let p = dir.join(name);
        super::vfs::is_file(&p).then(|| super::read::read_bytes_limited(&p, MAX_BESIDE_BYTES))
    };
    let mut odd = Vec::new();
    let stacks = match neighbour("stack.json") {
        Some(Ok(b)) => beside::stacks(&b, &mut odd),
        Some(Err(e)) => {
            odd.push(format!("stack.json: {e}"));
            Default::default()
        }
        None => Default::default(),
    };
    let parents = match neighbour("construct.json") {
        Some(Ok(b)) => beside::parents(&b, &mut odd),
        Some(Err(e)) => {
            odd.push(format!("construct.json: {e}"));
            Default::default()
        }
        None => Default::default(),
    };
    for e in &mut s.entries {
        e.stack = stacks.of_key.get(&*e.key).copied();
        e.parent = parents.get(&*e.key).cloned();
    }
    s.stacks = stacks.stacks;
    s.skipped.extend(odd);
    if s.entries
        .iter()
        .flat_map(|e| &e.tensors)
        .any(|t| t.data_name.is_some())
    {
        // `dump_data_dir` holds the absolute path where it was written; the files are read
        // where the dump is now.
        s.tensor_dir = Some(dir.join("dump_tensor_data"));
    }
    Ok(s)
}

/// Parses the text of one `dump.json`.
pub fn parse(bytes: &[u8], step: u32, who: &str) -> Result<MsprobeStep, MsprobeError> {
    let not_object = || MsprobeError::NotDump("the top level is not an object");
    let bytes: &[u8] = &pyjson::quote_non_finite(bytes);
    // A struct also deserialises from an array (fields by position): refuse one up front.
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {}
        Some(_) if serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok() => {
            return Err(not_object());
        }
        _ => {}
    }
    let top: Top = serde_json::from_slice(bytes)?;
    let Some(Data::Entries(data)) = top.data else {
        return Err(MsprobeError::NotDump("no `data` object"));
    };
    let text = |v: Option<Value>| v.and_then(|v| v.as_str().map(str::to_string));
    let mut out = MsprobeStep {
        path: Default::default(),
        step,
        who: who.to_string(),
        task: text(top.task),
        level: text(top.level),
        framework: text(top.framework),
        tensor_dir: None,
        entries: Vec::new(),
        stacks: Vec::new(),
        skipped: Vec::new(),
    };
    for (key, rec) in data {
        let mut found = Records::default();
        let call = parse_key(&key);
        // A parameters' gradient entry holds `{"weight": [tensor]}`: its slots say so.
        let prefix = match call {
            Some(MsprobeCall::ParamsGrad { .. }) => "parameters_grad.",
            _ => "",
        };
        if let Value::Object(parts) = &rec {
            // serde_json sorts these: `input_args`, `input_kwargs`, `output`, `parameters`.
            for (part, val) in parts {
                walk(
                    val,
                    &format!("{prefix}{part}"),
                    &mut found,
                    &mut out.skipped,
                    &key,
                );
            }
        } else {
            out.skipped.push(format!("{key}: not an object"));
        }
        out.entries.push(MsprobeEntry {
            call,
            key: key.into(),
            tensors: found.tensors,
            scalars: found.scalars,
            stack: None,
            parent: None,
        });
    }
    Ok(out)
}

/// The top level of `dump.json`; other fields are ignored.
#[derive(serde::Deserialize)]
struct Top {
    task: Option<Value>,
    level: Option<Value>,
    framework: Option<Value>,
    data: Option<Data>,
}

/// `data` with its keys in file order: the order of the calls, which linking to FX nodes reads
/// (serde_json's own map sorts keys).
enum Data {
    Entries(Vec<(String, Value)>),
    NotObject,
}

impl<'de> serde::Deserialize<'de> for Data {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DataVisitor)
    }
}

struct DataVisitor;

impl<'de> serde::de::Visitor<'de> for DataVisitor {
    type Value = Data;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Data, A::Error> {
        let mut v = Vec::new();
        while let Some(kv) = m.next_entry::<String, Value>()? {
            v.push(kv);
        }
        Ok(Data::Entries(v))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut s: A) -> Result<Data, A::Error> {
        while s.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Data::NotObject)
    }
    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Data, E> {
        Ok(Data::NotObject)
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Data, E> {
        Ok(Data::NotObject)
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Data, E> {
        Ok(Data::NotObject)
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Data, E> {
        Ok(Data::NotObject)
    }
    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Data, E> {
        Ok(Data::NotObject)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Data, E> {
        Ok(Data::NotObject)
    }
}

/// `Module.layers.0.mlp.MLP.forward.0` → a module call; `Aten.add.Tensor.3.forward` → an API
/// call; `Module.norm.RMSNorm.parameters_grad.0` → a module's parameters' gradients
/// (docs/formats.md §4.1). `None` for anything else.
pub fn parse_key(key: &str) -> Option<MsprobeCall> {
    let parts: Vec<&str> = key.split('.').collect();
    let dir = |p: &str| match p {
        "forward" => Some(false),
        "backward" => Some(true),
        _ => None,
    };
    if parts.first() == Some(&"Module") {
        // Module . <path> . <Class> . forward . <n>
        let [_, path @ .., class, d, n] = parts.as_slice() else {
            return None;
        };
        if path.is_empty() {
            return None;
        }
        if *d == "parameters_grad" {
            return Some(MsprobeCall::ParamsGrad {
                path: path.join("."),
                class: class.to_string(),
                n: call_number(n)?,
            });
        }
        return Some(MsprobeCall::Module {
            path: path.join("."),
            class: class.to_string(),
            backward: dir(d)?,
            n: call_number(n)?,
        });
    }
    // <prefix> . <op> [. <overload>] . <n> . forward
    let [prefix, op @ .., n, d] = parts.as_slice() else {
        return None;
    };
    if op.is_empty() || prefix.is_empty() {
        return None;
    }
    Some(MsprobeCall::Api {
        prefix: prefix.to_string(),
        op: op.join("."),
        backward: dir(d)?,
        n: call_number(n)?,
    })
}

/// What one entry holds: its tensors and its scalar arguments.
#[derive(Default)]
struct Records {
    tensors: Vec<MsprobeTensor>,
    scalars: Vec<MsprobeScalar>,
}

fn walk(v: &Value, slot: &str, out: &mut Records, skipped: &mut Vec<String>, key: &str) {
    match v {
        Value::Object(o) if o.contains_key("type") => {
            // `mindspore.Tensor` on MindSpore (its dump processor's own word).
            let kind = o.get("type").and_then(Value::as_str).unwrap_or("");
            if !matches!(kind, "torch.Tensor" | "mindspore.Tensor") {
                // An int, float or bool argument: a row of msprobe's compare. None, strings,
                // slices, dtypes: nothing fxray compares.
                let value = match o.get("value") {
                    Some(Value::Bool(b)) => Some(f64::from(u8::from(*b))),
                    Some(x) => x.as_f64(),
                    None => None,
                };
                if let (true, Some(value)) = (matches!(kind, "int" | "float" | "bool"), value) {
                    out.scalars.push(MsprobeScalar {
                        slot: slot.to_string(),
                        kind: kind.to_string(),
                        value,
                        at: out.tensors.len(),
                    });
                }
                return;
            }
            // A bool tensor's Max and Min are `true`/`false`.
            let num = |k: &str| match o.get(k) {
                Some(Value::Bool(b)) => Some(f64::from(u8::from(*b))),
                v => v.and_then(Value::as_f64),
            };
            let text = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
            out.tensors.push(MsprobeTensor {
                slot: slot.into(),
                dtype: o.get("dtype").and_then(Value::as_str).unwrap_or("?").into(),
                shape: o
                    .get("shape")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_i64).collect())
                    .unwrap_or_default(),
                max: num("Max"),
                min: num("Min"),
                mean: num("Mean"),
                norm: num("Norm"),
                md5: text("md5"),
                data_name: text("data_name"),
                requires_grad: o.get("requires_grad").and_then(Value::as_bool),
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
    parse_key(key)?.module().map(str::to_string)
}

/// Every `step<N>/<proc<PID>|rank<R>|pid<P>>/dump.json` under `root` (up to four levels down),
/// read.
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

/// A key's call number; one past `u32::MAX / 2` is no real call count (and would overflow the
/// "call n + 1 of …" arithmetic downstream), so such a key is not understood.
fn call_number(n: &str) -> Option<u32> {
    n.parse::<u32>().ok().filter(|&n| n < u32::MAX / 2)
}
