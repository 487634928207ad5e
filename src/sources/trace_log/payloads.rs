//! The payloads fxray reads into structure: graph-break reasons with their user stacks, the
//! C++ guard tree, recompile reasons and `dynamo_start` stacks.

use crate::model::compile::{Guard, Loc, StackFrame};
use serde_json::Value;
use std::collections::BTreeMap;

/// A `dynamo_graph_break_reason` payload: `(location, reason, user stack)`.
///
/// ```text
/// Graph break in user code at /path/models.py:86
/// Graph Break Reason: Encountered graph break when attempting to trace CALL: …
/// <reason lines>
/// User code traceback:
///   File "/path/models.py", line 86, in forward
///     print("hidden", tuple(h.shape))
/// ```
/// Older writers append Python's own traceback (`Traceback (most recent call last):`); it is
/// not the user's stack and is left out.
pub fn graph_break(text: &str) -> (Option<Loc>, String, Vec<StackFrame>) {
    let mut location = None;
    let mut reason = Vec::new();
    let mut stack_lines = Vec::new();
    let mut in_stack = false;
    for line in text.lines() {
        if let Some(at) = line.strip_prefix("Graph break in user code at ") {
            location = parse_loc(at.trim());
            continue;
        }
        if line.starts_with("User code traceback:") {
            in_stack = true;
            continue;
        }
        if line.starts_with("Traceback (most recent call last)") {
            break;
        }
        if in_stack {
            stack_lines.push(line);
        } else if let Some(r) = line
            .strip_prefix("Graph Break Reason: ")
            // torch 2.6 writes `Reason: `.
            .or_else(|| line.strip_prefix("Reason: "))
        {
            reason.push(r);
        } else {
            reason.push(line);
        }
    }
    let stack = python_stack(&stack_lines);
    if location.is_none() {
        location = stack.last().map(|f| f.loc.clone());
    }
    (location, reason.join("\n").trim().to_string(), stack)
}

fn parse_loc(s: &str) -> Option<Loc> {
    let (file, line) = s.rsplit_once(':')?;
    Some(Loc {
        file: file.to_string(),
        line: line.trim().parse().ok()?,
    })
}

/// `  File "x.py", line 3, in f` lines, each followed by its code line and maybe a line of
/// `~~~^^^` markers.
fn python_stack(lines: &[&str]) -> Vec<StackFrame> {
    let mut out: Vec<StackFrame> = Vec::new();
    for line in lines {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("File \"") {
            let Some((file, rest)) = rest.split_once("\", line ") else {
                continue;
            };
            let (num, name) = rest.split_once(", in ").unwrap_or((rest, ""));
            if let Ok(n) = num.trim().parse() {
                out.push(StackFrame {
                    name: name.trim().to_string(),
                    loc: Loc {
                        file: file.to_string(),
                        line: n,
                    },
                    code: None,
                });
            }
        } else if !t.is_empty()
            && !t.chars().all(|c| matches!(c, '~' | '^' | ' '))
            && let Some(last) = out.last_mut()
            && last.code.is_none()
        {
            last.code = Some(t.to_string());
        }
    }
    out
}

/// `dynamo_start`'s `stack`: `[{"line", "name", "filename": <interned id or name>, "loc"}]`.
pub fn dynamo_stack(meta: &Value, strings: &BTreeMap<u32, String>) -> Vec<StackFrame> {
    let Some(frames) = meta.get("stack").and_then(Value::as_array) else {
        return Vec::new();
    };
    frames
        .iter()
        .map(|f| {
            let file = match f.get("filename") {
                Some(Value::Number(n)) => n
                    .as_u64()
                    .and_then(|i| strings.get(&(i as u32)).cloned())
                    .unwrap_or_else(|| format!("<file #{n}>")),
                Some(Value::String(s)) => s.clone(),
                _ => "?".to_string(),
            };
            StackFrame {
                name: f
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string(),
                loc: Loc {
                    file,
                    line: f.get("line").and_then(Value::as_u64).unwrap_or(0) as u32,
                },
                code: f.get("loc").and_then(Value::as_str).map(str::to_string),
            }
        })
        .collect()
}

/// The leaves of the `dynamo_cpp_guards_str` tree (`| | +- TENSOR_MATCH: check_tensor(…)`);
/// the `GuardManager` lines that only say where a value is read from are left out.
pub fn cpp_guards(text: &str) -> Vec<Guard> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(at) = line.find("+- ") else {
            continue;
        };
        let depth = line[..at].matches('|').count() as u16;
        let rest = &line[at + 3..];
        let Some((kind, check)) = rest.split_once(": ") else {
            continue;
        };
        let leaf = !kind.is_empty()
            && kind
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        if leaf {
            out.push(Guard {
                kind: kind.to_string(),
                text: check.trim_end().to_string(),
                depth,
            });
        }
    }
    out
}

/// A `recompile_reasons` payload: a JSON list of strings, or (as torch 2.15 writes it) the
/// reasons as plain lines.
pub fn recompile_reasons(text: &str) -> String {
    if let Ok(Value::Array(items)) = serde_json::from_str::<Value>(text) {
        let parts: Vec<String> = items
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect();
        return parts.join("\n");
    }
    text.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_break_location_reason_and_stack() {
        let text = "Graph break in user code at /m/models.py:86\nGraph Break Reason: Encountered graph break when attempting to trace CALL\n\nFailed to trace builtin operator\n  Explanation: print\n\nUser code traceback:\n  File \"/m/run.py\", line 9, in <module>\n    main()\n    ~~~~^^\n  File \"/m/models.py\", line 86, in forward\n    print(h)\n";
        let (loc, reason, stack) = graph_break(text);
        assert_eq!(loc.unwrap().to_string(), "/m/models.py:86");
        assert!(reason.contains("Failed to trace builtin operator"));
        assert_eq!(stack.len(), 2);
        assert_eq!(stack[1].code.as_deref(), Some("print(h)"));
        assert_eq!(stack[0].code.as_deref(), Some("main()"));
    }

    #[test]
    fn guard_leaves_only() {
        let g = cpp_guards(
            "TREE_GUARD_MANAGER:\n+- RootGuardManager\n| +- GLOBAL_STATE: ___check_global_state()\n| +- GuardManager: source=L['x'], accessed_by=X\n| | +- TENSOR_MATCH: check_tensor(L['x'])  # x\n",
        );
        assert_eq!(g.len(), 2);
        assert_eq!(g[1].kind, "TENSOR_MATCH");
        assert_eq!(g[1].depth, 2);
    }
}
