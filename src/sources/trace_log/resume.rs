//! Graph breaks of logs that do not name them. Torch before ~2.6 writes no
//! `dynamo_graph_break_reason`; a break still shows, as tlparse reads it, in the frame that
//! resumes after it: Dynamo compiles `torch_dynamo_resume_in_<fn>_at_<line>`, the rest of
//! `<fn>` from the break's line on. The break belongs to the latest earlier compile of `<fn>`
//! (or of one of its resume functions) in the same file, and its reason is that compile's
//! restart reasons when the metrics give them.

use crate::model::compile::{CompileTrace, GraphBreak, Loc};

/// `torch_dynamo_resume_in_forward_at_86` → (`forward`, 86).
pub fn resume_target(co_name: &str) -> Option<(&str, u32)> {
    let rest = co_name.strip_prefix("torch_dynamo_resume_in_")?;
    let (func, line) = rest.rsplit_once("_at_")?;
    Some((func, line.parse().ok()?))
}

/// The function a compile's code belongs to: `forward` for `forward` and for any
/// `torch_dynamo_resume_in_forward_at_N`.
fn base_function(co_name: &str) -> &str {
    resume_target(co_name).map_or(co_name, |(f, _)| f)
}

/// Adds an inferred break for every resume compile whose break no compile logged.
pub fn infer_breaks(trace: &mut CompileTrace) {
    for c in 0..trace.compiles.len() {
        let (Some((func, line)), file) = (
            trace.compiles[c].co_name().and_then(resume_target),
            trace.compiles[c].location().map(|l| l.file),
        ) else {
            continue;
        };
        let func = func.to_string();
        let same_file = |l: &Loc| file.as_ref().is_none_or(|f| *f == l.file);
        let logged = trace.compiles[..c].iter().any(|p| {
            p.breaks.iter().any(|b| {
                b.location
                    .as_ref()
                    .is_some_and(|l| l.line == line && same_file(l))
            })
        });
        if logged {
            continue;
        }
        let Some(p) = (0..c).rev().find(|&p| {
            let prev = &trace.compiles[p];
            prev.co_name().is_some_and(|n| base_function(n) == func)
                && prev
                    .location()
                    .is_none_or(|l| file.as_ref().is_none_or(|f| *f == l.file))
        }) else {
            continue;
        };
        let prev = &trace.compiles[p];
        let reasons = prev.restart_reasons().join("\n");
        let reason = if reasons.is_empty() {
            format!("graph break (no reason logged; Dynamo resumed in {func} at line {line})")
        } else {
            reasons
        };
        let location = file.clone().map(|file| Loc { file, line });
        let line_no = trace.compiles[c].first_line;
        trace.compiles[p].breaks.push(GraphBreak {
            location,
            reason,
            user_stack: Vec::new(),
            attempt: 0,
            line: line_no,
            inferred: true,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resume_names() {
        assert_eq!(
            resume_target("torch_dynamo_resume_in_forward_at_86"),
            Some(("forward", 86))
        );
        assert_eq!(
            resume_target("torch_dynamo_resume_in_my_at_fn_at_7"),
            Some(("my_at_fn", 7))
        );
        assert_eq!(resume_target("forward"), None);
        assert_eq!(base_function("torch_dynamo_resume_in_f_at_3"), "f");
    }
}
