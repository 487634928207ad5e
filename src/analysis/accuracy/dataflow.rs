//! Where an npy dump's inputs come from. TorchAir saves each node's inputs and outputs as files
//! of their own and names no producer (docs/formats.md §3.1), but an input is the very tensor an
//! earlier node output: its bytes are the same. Given a fingerprint of each file's data (the
//! pipeline reads it), an input's producer is the latest earlier call with an output of that
//! fingerprint. The renumbered-node fall-back of `pairing` pairs by it.

use super::{Role, TensorRef};
use std::collections::HashMap;

/// Sets `from` of every input of `tensors` whose fingerprint (`prints[i]`, `None`: unknown or
/// too small to tell apart) an earlier call's output has.
pub fn producers(tensors: &mut [TensorRef], prints: &[Option<u64>]) {
    let mut order: Vec<usize> = (0..tensors.len()).collect();
    order.sort_by_key(|&i| (tensors[i].order, tensors[i].role == Role::Output));
    let mut seen: HashMap<u64, String> = HashMap::new();
    let mut pending: Vec<(u64, String)> = Vec::new();
    let mut at = None;
    for i in order {
        // Outputs of a call become visible once the call is over: an input never comes from
        // its own call.
        if at != Some(tensors[i].order) {
            seen.extend(pending.drain(..));
            at = Some(tensors[i].order);
        }
        let Some(Some(p)) = prints.get(i) else {
            continue;
        };
        let t = &mut tensors[i];
        match t.role {
            Role::Input => t.from = seen.get(p).cloned(),
            Role::Output => pending.push((*p, t.call.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(call: &str, role: Role, order: usize) -> TensorRef {
        TensorRef {
            key: String::new(),
            call: call.into(),
            op: String::new(),
            node: None,
            slot: String::new(),
            role,
            dtype: String::new(),
            shape: Vec::new(),
            summary: None,
            order,
            requires_grad: None,
            from: None,
            value: None,
        }
    }

    #[test]
    fn an_input_comes_from_the_latest_earlier_output_with_its_bytes() {
        let mut v = vec![
            t("a", Role::Output, 0),
            t("b", Role::Input, 1),
            t("b", Role::Output, 1),
            t("c", Role::Output, 2),
            t("d", Role::Input, 3),
            t("d", Role::Input, 3),
            t("d", Role::Output, 3),
        ];
        // b passes a's bytes through (an in-place op's output equals its input); c writes them
        // again; d reads them, and something nobody output.
        let prints = [Some(1), Some(1), Some(1), Some(1), Some(1), Some(9), None];
        producers(&mut v, &prints);
        let from: Vec<Option<&str>> = v.iter().map(|x| x.from.as_deref()).collect();
        assert_eq!(
            from,
            [None, Some("a"), None, None, Some("c"), None, None],
            "b's input is a's output, not its own; d's is the latest, c's"
        );
    }
}
