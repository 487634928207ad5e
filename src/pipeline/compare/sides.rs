//! One side of a compare as a list of tensors in call order, each with the file holding its
//! data (tensor mode) or the statistics its dump recorded.

use super::locate::NpySel;
use crate::analysis::accuracy::msprobe_csv::call_op;
use crate::analysis::accuracy::pairing::Naming;
use crate::analysis::accuracy::{Role, Summary, TensorRef, dataflow};
use crate::model::progress::{Progress, Unit};
use crate::model::tensor::{Io, MsprobeStep, TensorInfo};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

pub struct Side {
    /// "msprobe tensor dump, step 0, proc2002" for messages.
    pub describe: String,
    pub tensors: Vec<TensorRef>,
    /// The data file of each tensor; `None` when only statistics were dumped.
    pub files: Vec<Option<PathBuf>>,
    pub naming: Naming,
}

impl Side {
    /// Every tensor has its data file (scalar arguments have none).
    pub fn has_data(&self) -> bool {
        let tensors = || {
            self.tensors
                .iter()
                .zip(&self.files)
                .filter(|(t, _)| !is_scalar(&t.dtype))
        };
        tensors().next().is_some() && tensors().all(|(_, f)| f.is_some())
    }
}

/// An npy data dump's step: every node call in execution order, every file a tensor.
pub fn npy(sel: &NpySel, progress: &Progress) -> Side {
    let mut tensors = Vec::new();
    let mut files = Vec::new();
    for (order, node) in sel.step.execution_order().into_iter().enumerate() {
        for f in &node.files {
            let slot = f.name.slot();
            tensors.push(TensorRef {
                key: format!("{}.{slot}", node.node),
                call: node.node.clone(),
                op: node.target.clone(),
                node: Some(node.node.clone()),
                slot,
                role: match f.name.io {
                    Io::Input => Role::Input,
                    Io::Output => Role::Output,
                },
                dtype: String::new(),
                shape: Vec::new(),
                summary: None,
                order,
                requires_grad: None,
                from: None,
                value: None,
            });
            files.push(Some(f.path.clone()));
        }
    }
    progress.stage("reading tensor headers", files.len() as u64, Unit::Items);
    let read: Vec<Option<(u64, TensorInfo)>> = files
        .par_iter()
        .map(|f| {
            progress.add(1);
            f.as_deref().and_then(fingerprint)
        })
        .collect();
    // The header's dtype and shape (the mixed pairing matches inputs by shape), and where each
    // input comes from.
    for (t, r) in tensors.iter_mut().zip(&read) {
        if let Some((_, info)) = r {
            t.dtype = info.dtype.clone();
            t.shape = info.shape.clone();
        }
    }
    for (t, r) in tensors.iter_mut().zip(&read) {
        t.value = r.as_ref().map(|x| x.0);
    }
    // A scalar's bytes are too common to say where a value came from.
    let prints: Vec<Option<u64>> = read
        .iter()
        .map(|r| r.as_ref().filter(|x| x.1.elements() >= 2).map(|x| x.0))
        .collect();
    dataflow::producers(&mut tensors, &prints);
    Side {
        describe: sel.describe.clone(),
        tensors,
        files,
        naming: Naming::Nodes,
    }
}

/// A scalar argument's dtype as msprobe writes it: `<class 'int'>`.
pub fn is_scalar(dtype: &str) -> bool {
    dtype.starts_with("<class")
}

/// Bytes hashed at each end of a tensor's data: an input and the output it is are the same
/// bytes, and two different tensors of the same type rarely agree on 8 KiB at both ends.
const PRINT_BYTES: usize = 4096;

/// A dumped tensor's header, and a fingerprint of its type and data (its two ends): which
/// output an input is (the caller leaves out scalars, which equal too many others), and which
/// golden call computes on the same values (scalars included). `None` for an unreadable file.
fn fingerprint(path: &Path) -> Option<(u64, TensorInfo)> {
    use std::hash::{Hash, Hasher};
    let a = crate::sources::tensor_file::open(path).ok()?;
    let d = a.data();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (&a.info.dtype, &a.info.shape, d.len()).hash(&mut h);
    d[..d.len().min(PRINT_BYTES)].hash(&mut h);
    d[d.len().saturating_sub(PRINT_BYTES)..].hash(&mut h);
    Some((h.finish().max(1), a.info.clone()))
}

/// msprobe's slot of a dump.json record as its compare names it: `input_args.0` → `input.0`,
/// `input_kwargs.scale` → `input.scale`; `output.*` and `parameters.*` unchanged.
fn msprobe_slot(slot: &str) -> String {
    for (from, to) in [("input_args", "input"), ("input_kwargs", "input")] {
        if let Some(rest) = slot.strip_prefix(from) {
            return format!("{to}{rest}");
        }
    }
    // A parameter's gradient (`parameters_grad.weight.0`): msprobe's compare names its row by
    // the parameter alone (`Module.fc1.Linear.parameters_grad.0.weight`).
    if let Some(rest) = slot.strip_prefix("parameters_grad.") {
        return rest.strip_suffix(".0").unwrap_or(rest).to_string();
    }
    slot.to_string()
}

/// An msprobe dump.json: every tensor record of every call, in file order. Tensor mode finds
/// each record's `.pt` under `dump_tensor_data/`.
pub fn msprobe(step: &MsprobeStep) -> Side {
    let tensor_task = step.task.as_deref() == Some("tensor");
    let mut tensors = Vec::new();
    let mut files = Vec::new();
    for (order, e) in step.entries.iter().enumerate() {
        let op = call_op(&e.key);
        let of = |slot: &str, dtype: String, shape: Vec<u64>, summary: Summary| TensorRef {
            role: if slot.starts_with("output") {
                Role::Output
            } else {
                Role::Input
            },
            key: format!("{}.{slot}", e.key),
            call: e.key.to_string(),
            op: op.clone(),
            node: None,
            slot: slot.to_string(),
            dtype,
            shape,
            summary: Some(summary),
            order,
            requires_grad: None,
            from: None,
            value: None,
        };
        // Records in dump.json's order: each scalar argument before the tensor it preceded.
        for k in 0..=e.tensors.len() {
            for s in e.scalars.iter().filter(|s| s.at == k) {
                // As msprobe's compare shows it: `<class 'int'>`, shape [], the value as every
                // statistic.
                let v = Some(s.value);
                let summary = Summary {
                    max: v,
                    min: v,
                    mean: v,
                    norm: v,
                };
                let dtype = format!("<class '{}'>", s.kind);
                tensors.push(of(&msprobe_slot(&s.slot), dtype, Vec::new(), summary));
                files.push(None);
            }
            let Some(t) = e.tensors.get(k) else { continue };
            let shape = t.shape.iter().map(|&d| d.max(0) as u64).collect();
            let summary = Summary {
                max: t.max,
                min: t.min,
                mean: t.mean,
                norm: t.norm,
            };
            let mut r = of(&msprobe_slot(&t.slot), t.dtype.to_string(), shape, summary);
            r.requires_grad = t.requires_grad;
            tensors.push(r);
            // The file `data_name` names, beside dump.json (docs/formats.md §4.2).
            files.push(step.tensor_file(t).filter(|_| tensor_task));
        }
    }
    let mode = if tensor_task { "tensor" } else { "statistics" };
    Side {
        describe: format!(
            "msprobe {mode} dump, step {}, {}",
            step.step,
            if step.who.is_empty() { "?" } else { &step.who }
        ),
        tensors,
        files,
        naming: Naming::Msprobe,
    }
}
