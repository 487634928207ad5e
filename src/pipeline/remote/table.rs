//! Every op the agent runs for a client, by name: a new remote feature is one line here.

use super::Op;
use crate::pipeline::failure::Failure;
use crate::pipeline::{
    backward_owner, bisect, compare, compiles, facts, modules, phase, run, tensors, tree,
};
use crate::sources::remote::wire;
use std::sync::atomic::AtomicBool;

/// How the agent runs one op: its JSON arguments in, each item's postcard bytes out. `Err`
/// when the arguments are not this op's (a client of another build).
pub type Serve =
    fn(serde_json::Value, &AtomicBool, &(dyn Fn(Vec<u8>) + Sync)) -> Result<(), Failure>;

fn serve<O: Op>(
    args: serde_json::Value,
    stop: &AtomicBool,
    send: &(dyn Fn(Vec<u8>) + Sync),
) -> Result<(), Failure> {
    let args: O::Args = serde_json::from_value(args).map_err(|e| {
        Failure::Agent(format!(
            "`{}` with arguments this agent does not read: {e}",
            O::NAME
        ))
    })?;
    // An item that does not encode (a path that is not UTF-8) fails the op: the client pairs a
    // list's items with its elements by place, so it is never skipped quietly.
    let unsent = std::sync::atomic::AtomicUsize::new(0);
    O::run(args, stop, &|item| match wire::to_item(&item) {
        Ok(bytes) => send(bytes),
        Err(_) => {
            unsent.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    });
    match unsent.into_inner() {
        0 => Ok(()),
        n => Err(Failure::Agent(format!(
            "`{}`: {n} result(s) could not be sent (a path that is not UTF-8?)",
            O::NAME
        ))),
    }
}

/// Writes the table from a list of ops.
macro_rules! table {
    ($($op:ty),* $(,)?) => {
        static TABLE: &[(&str, Serve)] = &[$((<$op as Op>::NAME, serve::<$op>)),*];
    };
}

table![
    tensors::Summaries,
    tensors::Slice,
    tensors::Compare,
    facts::Facts,
    facts::PhaseFacts,
    super::EachFile<tree::GraphNames>,
    super::EachFile<backward_owner::Interfaces>,
    compare::remote::Pairs,
    compare::delta::DeltaOp,
    phase::remote::OpenPhase,
    compiles::remote::Stories,
    run::Run,
    modules::Report,
    bisect::BisectOp,
];

/// How the agent runs the op called `name`; `None` for a name this build does not know.
pub fn find(name: &str) -> Option<Serve> {
    TABLE.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_op_has_its_own_name() {
        let mut names: Vec<&str> = super::TABLE.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before, "an op name is used twice: {names:?}");
    }
}
