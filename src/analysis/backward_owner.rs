//! Whose backward a backward graph is, from the graphs themselves (docs/formats.md §1.2).
//!
//! AOT Autograd partitions a joint graph into a forward that returns its user outputs and then
//! the values it saves for the backward, and a backward whose parameters are those saved
//! values, by the same names and with the same shapes and dtypes, then one `tangents_*` per
//! output. With a graph break npugraph_ex writes each forward into a `model__N` of its own but
//! each backward, compiled lazily during `.backward()`, into the *latest* `model__N`: beside
//! another graph's forward. The forward whose returned values are the backward's saved
//! parameters is its own.

use crate::model::fx::{GraphInterface, Value};
use std::collections::HashMap;

/// A backward's incoming gradient (`tangents_3`), as AOT Autograd names it.
pub fn is_tangent(name: &str) -> bool {
    name.starts_with("tangents_")
}

/// The share of a backward's saved values a forward must return (by name and annotation) to
/// be called its own.
pub const ENOUGH: f64 = 0.9;

/// Which forward a backward belongs to.
#[derive(Debug, Clone, PartialEq)]
pub enum Pairing {
    /// Candidate `forward` returns `share` of the backward's saved values; `alike` are the other
    /// candidates that match exactly as well (the same graph compiled for two frames).
    Forward {
        forward: usize,
        share: f64,
        alike: Vec<usize>,
    },
    /// No candidate returns [`ENOUGH`] of them: `best` is the nearest and its share.
    CannotTell { best: Option<(usize, f64)> },
    /// The backward takes no saved value (or is no graph): nothing to tell by.
    Nothing,
}

/// The saved values a backward reads: its parameters but its tangents.
pub fn saved_inputs(backward: &GraphInterface) -> impl Iterator<Item = &Value> {
    backward.inputs.iter().filter(|v| !is_tangent(&v.name))
}

/// How candidate `forward` matches the saved values: (how many it returns by name and
/// annotation, whether it returns them last and in order, as AOT Autograd does).
fn score(saved: &[&Value], forward: &GraphInterface) -> (usize, bool) {
    let returned: HashMap<&str, &Option<String>> = forward
        .outputs
        .iter()
        .flatten()
        .map(|v| (v.name.as_str(), &v.ann))
        .collect();
    let matched = saved
        .iter()
        .filter(|v| returned.get(v.name.as_str()) == Some(&&v.ann))
        .count();
    let tail = forward.outputs.len() >= saved.len()
        && forward.outputs[forward.outputs.len() - saved.len()..]
            .iter()
            .zip(saved)
            .all(|(o, s)| o.as_ref().is_some_and(|o| o.name == s.name));
    (matched, tail)
}

/// Pairs `backward` with one of `forwards` (in model order; `None` for one that could not be
/// read). `own` is the candidate of the folder the backward sits in: among forwards that match
/// alike it is kept; else the earliest is taken, since backwards run (and are compiled, and
/// overwrite each other's files) in the reverse order of their forwards, and the one left on
/// disk is the earliest's.
pub fn pair(
    backward: &GraphInterface,
    forwards: &[Option<&GraphInterface>],
    own: Option<usize>,
) -> Pairing {
    let saved: Vec<&Value> = saved_inputs(backward).collect();
    if saved.is_empty() {
        return Pairing::Nothing;
    }
    let scores: Vec<Option<(usize, bool)>> = forwards
        .iter()
        .map(|f| f.map(|f| score(&saved, f)))
        .collect();
    let Some(top) = scores.iter().flatten().copied().max() else {
        return Pairing::CannotTell { best: None };
    };
    let tied: Vec<usize> = (0..forwards.len())
        .filter(|&k| scores[k] == Some(top))
        .collect();
    let forward = own.filter(|o| tied.contains(o)).unwrap_or(tied[0]);
    let share = top.0 as f64 / saved.len() as f64;
    if share < ENOUGH {
        return Pairing::CannotTell {
            best: Some((forward, share)),
        };
    }
    Pairing::Forward {
        forward,
        share,
        alike: tied.into_iter().filter(|&k| k != forward).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(name: &str, ann: &str) -> Value {
        Value {
            name: name.into(),
            ann: Some(ann.into()),
        }
    }

    /// A forward returning `user` outputs then `saved`, and the backward reading `saved` and one
    /// tangent per output.
    fn pair_of(user: &[Value], saved: &[Value]) -> (GraphInterface, GraphInterface) {
        let fw = GraphInterface {
            inputs: vec![v("primals_1", "f32[4, 8]")],
            outputs: user.iter().chain(saved).cloned().map(Some).collect(),
        };
        let tangents = user
            .iter()
            .enumerate()
            .map(|(k, u)| v(&format!("tangents_{}", k + 1), u.ann.as_deref().unwrap()));
        let bw = GraphInterface {
            inputs: saved.iter().cloned().chain(tangents).collect(),
            outputs: vec![None],
        };
        (fw, bw)
    }

    /// Two forwards, the backward of the first (`user` outputs, `saved` values) and a second
    /// of its own: the backward sits in the second's folder and is paired with the first.
    #[test]
    fn the_forward_returning_the_saved_values_is_the_owner() {
        let cases = [
            // Other names.
            (
                [v("add_4", "f32[2, 8, 32]"), v("view_1", "f32[2, 8, 64]")],
                [
                    [v("primals_1", "f32[32]"), v("getitem_1", "f32[2, 8, 1]")],
                    [v("primals_2", "f32[64, 32]"), v("view", "f32[16, 32]")],
                ],
            ),
            // The same names with other shapes are no match.
            (
                [v("add", "f32[2, 8]"), v("add", "f32[2, 16]")],
                [
                    [v("primals_1", "f32[8]"), v("getitem_1", "f32[2, 1]")],
                    [v("primals_1", "f32[16]"), v("getitem_1", "f32[4, 1]")],
                ],
            ),
        ];
        for (user, saved) in cases {
            let (fw0, bw0) = pair_of(&user[..1], &saved[0]);
            let (fw1, _) = pair_of(&user[1..], &saved[1]);
            assert_eq!(
                pair(&bw0, &[Some(&fw0), Some(&fw1)], Some(1)),
                Pairing::Forward {
                    forward: 0,
                    share: 1.0,
                    alike: vec![]
                }
            );
        }
    }

    #[test]
    fn a_backward_no_forward_saves_for_cannot_be_told() {
        let (fw0, _) = pair_of(
            &[v("add", "f32[2, 8]")],
            &[v("primals_1", "f32[8]"), v("getitem_1", "f32[2, 1]")],
        );
        let (_, bw) = pair_of(
            &[v("mul", "f32[2, 8]")],
            &[
                v("primals_1", "f32[8]"),
                v("getitem_7", "b8[2, 8]"),
                v("tanh", "f32[2, 8]"),
            ],
        );
        // One of its three saved values is returned by the forward: a third, not enough.
        let got = pair(&bw, &[Some(&fw0), None], Some(0));
        match got {
            Pairing::CannotTell {
                best: Some((0, share)),
            } => assert!((share - 1.0 / 3.0).abs() < 1e-9, "{share}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            pair(&bw, &[None, None], None),
            Pairing::CannotTell { best: None }
        );
    }

    #[test]
    fn the_same_graph_twice_keeps_the_own_else_the_earliest() {
        let saved = [v("primals_1", "f32[8]"), v("t_1", "f32[8, 16]")];
        let (fw, bw) = pair_of(&[v("add", "f32[2, 8]")], &saved);
        let (head, _) = pair_of(&[v("mm", "f32[2, 64]")], &[v("view", "f32[2, 8]")]);
        let c = [Some(&fw), Some(&fw), Some(&head)];
        assert_eq!(
            pair(&bw, &c, Some(2)),
            Pairing::Forward {
                forward: 0,
                share: 1.0,
                alike: vec![1]
            }
        );
        assert_eq!(
            pair(&bw, &c, Some(1)),
            Pairing::Forward {
                forward: 1,
                share: 1.0,
                alike: vec![0]
            }
        );
    }

    #[test]
    fn a_backward_of_tangents_alone_has_nothing_to_tell_by() {
        let (fw, bw) = pair_of(&[v("mul", "f32[4]")], &[]);
        assert_eq!(pair(&bw, &[Some(&fw)], Some(0)), Pairing::Nothing);
    }
}
