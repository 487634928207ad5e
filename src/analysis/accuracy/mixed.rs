//! Mixed pairing: a TorchAir npy dump (tensors named by FX node) against an msprobe dump of the
//! same model (tensors named by eager call), through the msprobe→node links
//! (`analysis::msprobe_link`). The pipeline sets each msprobe tensor's `node`: for an output, the
//! node holding its value; for an input, its call's node.
//!
//! - **Outputs**: an msprobe output pairs with the npy `OUTPUT.0` of the node holding it. Where
//!   several calls land on one node (a module and the API call inside it), the API call's is
//!   compared; the others measured the same tensor and are counted, not listed as unpaired.
//! - **Inputs** of a call whose output paired: the node's npy inputs and the call's tensor
//!   inputs pair by shape, in slot order (`addmm(bias, x, wᵀ)` against `linear(x, w, bias)`:
//!   bias and x pair, the transposed weight does not), except an input an unpaired transpose
//!   made (the dump's dataflow says which): the compiler's transpose of a square weight has the
//!   weight's shape but not its values.
//! - The rest is unpaired, per side, with its node: ops one side's graph has and the other's
//!   calls do not name (a transpose the compiler made, a `silu` the pass split).

use super::metrics::squeeze;
use super::pairing::Pairing;
use super::{PairedBy, Role, TensorRef};
use std::collections::{HashMap, HashSet};

/// Pairs `npy` (node-named) with `probe` (msprobe keys, `node` set by the links). The pairs are
/// (target, golden) indices, in the target's order: `npy_is_target` says which side is which.
pub fn pair(npy: &[TensorRef], probe: &[TensorRef], npy_is_target: bool) -> Pairing {
    let out_of: HashMap<&str, usize> = npy
        .iter()
        .enumerate()
        .filter(|(_, t)| t.role == Role::Output && t.slot == "OUTPUT.0")
        .filter_map(|(i, t)| Some((t.node.as_deref()?, i)))
        .collect();
    let mut outs: Vec<usize> = (0..probe.len())
        .filter(|&i| probe[i].role == Role::Output && probe[i].node.is_some())
        .collect();
    // API calls first: a module's output is the same tensor as the last call inside it.
    outs.sort_by_key(|&i| (probe[i].call.starts_with("Module."), probe[i].order, i));
    let mut npy_used = vec![false; npy.len()];
    let mut probe_used = vec![false; probe.len()];
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    // Calls whose output paired, with their node; calls that only measured a paired output.
    let mut call_node: Vec<(&str, &str)> = Vec::new();
    let mut same: HashSet<&str> = HashSet::new();
    for i in outs {
        let (call, node) = (
            probe[i].call.as_str(),
            probe[i].node.as_deref().unwrap_or(""),
        );
        match out_of.get(node) {
            Some(&j) if !npy_used[j] => {
                npy_used[j] = true;
                probe_used[i] = true;
                pairs.push((j, i));
                if !call_node.contains(&(call, node)) {
                    call_node.push((call, node));
                }
            }
            Some(_) => {
                same.insert(call);
            }
            None => {}
        }
    }
    let paired_calls: HashSet<&str> = call_node.iter().map(|(c, _)| *c).collect();
    let paired_nodes: HashSet<&str> = call_node.iter().map(|(_, n)| *n).collect();
    let transposes: HashSet<&str> = npy
        .iter()
        .filter(|t| {
            let base =
                t.op.trim_start_matches("torch.ops.")
                    .trim_start_matches("aten.");
            ["t.", "transpose.", "permute.", "numpy_T."]
                .iter()
                .any(|b| base.starts_with(b))
        })
        .map(|t| t.call.as_str())
        .collect();
    same.retain(|c| !paired_calls.contains(c));
    let mut inputs = 0;
    for (call, node) in &call_node {
        let mine: Vec<usize> = (0..probe.len())
            .filter(|&k| probe[k].call == *call && probe[k].role == Role::Input)
            .filter(|&k| probe[k].dtype.starts_with("torch."))
            .collect();
        for j in (0..npy.len())
            .filter(|&j| npy[j].role == Role::Input && npy[j].node.as_deref() == Some(node))
        {
            // A transpose the compiler made (of a weight, for `addmm`) is not an argument the
            // eager call saw, even where its shape is (a square weight).
            if npy[j]
                .from
                .as_deref()
                .is_some_and(|p| !paired_nodes.contains(p) && transposes.contains(p))
            {
                continue;
            }
            let want = squeeze(&npy[j].shape);
            if let Some(&k) = mine
                .iter()
                .find(|&&k| !probe_used[k] && squeeze(&probe[k].shape) == want)
            {
                probe_used[k] = true;
                npy_used[j] = true;
                pairs.push((j, k));
                inputs += 1;
            }
        }
    }
    let left = |side: &[TensorRef], used: &[bool], skip: &dyn Fn(&TensorRef) -> bool| {
        let mut v: Vec<usize> = (0..side.len())
            .filter(|&i| !used[i] && !skip(&side[i]))
            .collect();
        v.sort_by_key(|&i| (side[i].order, i));
        v
    };
    let npy_left = left(npy, &npy_used, &|_| false);
    let probe_left = left(probe, &probe_used, &|t| same.contains(t.call.as_str()));
    let counted = probe
        .iter()
        .filter(|t| same.contains(t.call.as_str()))
        .count();
    let mut how = format!(
        "npy nodes and msprobe calls paired through the calls' links to the graph: {} outputs, \
         {inputs} inputs",
        pairs.len() - inputs
    );
    if counted > 0 {
        how.push_str(&format!(
            "; {counted} tensors of {} msprobe calls measured a node another call pairs (a module \
             and the API call in it): compared once",
            same.len()
        ));
    }
    let mut out = Pairing {
        how,
        ..Pairing::default()
    };
    let target = if npy_is_target { npy } else { probe };
    out.pairs = pairs
        .into_iter()
        .map(|(j, k)| {
            let (t, g) = if npy_is_target { (j, k) } else { (k, j) };
            (t, g, PairedBy::Link)
        })
        .collect();
    out.pairs
        .sort_by_key(|&(t, _, _)| (target[t].order, target[t].role == Role::Output, t));
    (out.unpaired_target, out.unpaired_golden) = if npy_is_target {
        (npy_left, probe_left)
    } else {
        (probe_left, npy_left)
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(
        call: &str,
        node: Option<&str>,
        slot: &str,
        dtype: &str,
        shape: &[u64],
        order: usize,
    ) -> TensorRef {
        TensorRef {
            key: format!("{call}.{slot}"),
            call: call.into(),
            op: String::new(),
            node: node.map(str::to_string),
            slot: slot.into(),
            role: if slot.to_lowercase().starts_with("output") {
                Role::Output
            } else {
                Role::Input
            },
            dtype: dtype.into(),
            shape: shape.to_vec(),
            summary: None,
            order,
            requires_grad: None,
            from: None,
            value: None,
        }
    }

    /// `linear` compiled as `t` + `addmm`, inside a module msprobe also dumped.
    #[test]
    fn outputs_pair_through_links_and_inputs_by_shape() {
        let f = "<f4";
        let npy = vec![
            t("t", Some("t"), "INPUT.0", f, &[64, 32], 0),
            t("t", Some("t"), "OUTPUT.0", f, &[32, 64], 0),
            t("addmm", Some("addmm"), "INPUT.0", f, &[64], 1),
            t("addmm", Some("addmm"), "INPUT.1", f, &[8, 32], 1),
            t("addmm", Some("addmm"), "INPUT.2", f, &[32, 64], 1),
            t("addmm", Some("addmm"), "OUTPUT.0", f, &[8, 64], 1),
        ];
        let d = "torch.float32";
        let (m, l) = ("Module.fc1.Linear.forward.0", "Functional.linear.0.forward");
        let probe = vec![
            t(m, Some("addmm"), "input.0", d, &[8, 32], 0),
            t(m, Some("addmm"), "output.0", d, &[8, 64], 0),
            t(l, Some("addmm"), "input.0", d, &[8, 32], 1),
            t(l, Some("addmm"), "input.1", d, &[64, 32], 1),
            t(l, Some("addmm"), "input.2", d, &[64], 1),
            t(l, Some("addmm"), "output.0", d, &[8, 64], 1),
            t(
                "Functional.dropout.0.forward",
                None,
                "output.0",
                d,
                &[8, 64],
                2,
            ),
        ];
        let p = pair(&npy, &probe, true);
        let got: Vec<(&str, &str)> = p
            .pairs
            .iter()
            .map(|&(a, b, how)| {
                assert_eq!(how, PairedBy::Link);
                (npy[a].key.as_str(), probe[b].key.as_str())
            })
            .collect();
        assert_eq!(
            got,
            [
                ("addmm.INPUT.0", "Functional.linear.0.forward.input.2"),
                ("addmm.INPUT.1", "Functional.linear.0.forward.input.0"),
                ("addmm.OUTPUT.0", "Functional.linear.0.forward.output.0"),
            ]
        );
        let left = |v: &[usize], s: &[TensorRef]| -> Vec<String> {
            v.iter().map(|&i| s[i].key.clone()).collect()
        };
        assert_eq!(
            left(&p.unpaired_target, &npy),
            ["t.INPUT.0", "t.OUTPUT.0", "addmm.INPUT.2"]
        );
        // The weight (transposed on the npy side) and the unlinked dropout stay unpaired; the
        // module call measured the same tensors and is only counted.
        assert_eq!(
            left(&p.unpaired_golden, &probe),
            [
                "Functional.linear.0.forward.input.1",
                "Functional.dropout.0.forward.output.0"
            ]
        );
        assert!(p.how.contains("2 tensors of 1 msprobe calls"), "{}", p.how);
        // The other way round: the same pairs, target and golden swapped.
        let q = pair(&npy, &probe, false);
        let flipped: Vec<(usize, usize)> = q.pairs.iter().map(|&(a, b, _)| (b, a)).collect();
        let mut mine: Vec<(usize, usize)> = p.pairs.iter().map(|&(a, b, _)| (a, b)).collect();
        let mut theirs = flipped;
        mine.sort();
        theirs.sort();
        assert_eq!(mine, theirs);
        assert_eq!(q.unpaired_target.len(), 2);
    }
}
