//! The files msprobe writes beside `dump.json` (docs/formats.md §4.1): `stack.json`, the call
//! stack of every entry, and `construct.json`, the module call each call ran in.

use crate::model::msprobe::StackFrame;
use serde_json::Value;
use std::collections::HashMap;

/// Call stacks of `stack.json` and, per entry key, which one is its.
#[derive(Debug, Default)]
pub struct Stacks {
    pub stacks: Vec<Vec<StackFrame>>,
    pub of_key: HashMap<String, usize>,
}

/// `stack.json`. msprobe 26 groups keys by stack, `{"0": [[keys…], [frames…]], …}`; older
/// versions wrote `{key: [frames…]}`. Both are read. What is not understood is said in `odd`.
pub fn stacks(bytes: &[u8], odd: &mut Vec<String>) -> Stacks {
    let mut out = Stacks::default();
    let top: Value = match serde_json::from_slice(bytes) {
        Ok(Value::Object(m)) => Value::Object(m),
        Ok(_) => {
            odd.push("stack.json: the top level is not an object".into());
            return out;
        }
        Err(e) => {
            odd.push(format!("stack.json: not valid JSON: {e}"));
            return out;
        }
    };
    let Value::Object(groups) = top else {
        return out;
    };
    for (id, v) in groups {
        let (keys, frames): (Vec<String>, &[Value]) = match v.as_array().map(Vec::as_slice) {
            // msprobe 26: [[keys], [frames]]
            Some([Value::Array(keys), Value::Array(frames)]) => (
                keys.iter()
                    .filter_map(|k| k.as_str().map(str::to_string))
                    .collect(),
                frames,
            ),
            // older: the key is the group's name, the value its frames
            Some(frames) if frames.iter().all(Value::is_string) => (vec![id.clone()], frames),
            _ => {
                odd.push(format!(
                    "stack.json {id}: neither [[keys], [frames]] nor [frames]"
                ));
                continue;
            }
        };
        let frames: Vec<StackFrame> = frames.iter().filter_map(Value::as_str).map(frame).collect();
        let k = out.stacks.len();
        out.stacks.push(frames);
        for key in keys {
            out.of_key.insert(key, k);
        }
    }
    out
}

/// `File /x/llama.py, line 63, in forward, \n var = x.pow(2)` → its parts. A frame in another
/// shape is kept whole as its `file`, line 0.
pub fn frame(s: &str) -> StackFrame {
    let parsed = (|| {
        let rest = s.strip_prefix("File ")?;
        let (file, rest) = rest.split_once(", line ")?;
        let (line, rest) = rest.split_once(", in ")?;
        let (func, code) = rest.split_once(',').unwrap_or((rest, ""));
        Some(StackFrame {
            file: file.to_string(),
            line: line.trim().parse().ok()?,
            func: func.trim().to_string(),
            code: code.trim().to_string(),
        })
    })();
    parsed.unwrap_or_else(|| StackFrame {
        file: s.trim().to_string(),
        line: 0,
        func: String::new(),
        code: String::new(),
    })
}

/// `construct.json`: `{call key: parent module call key or null}`.
pub fn parents(bytes: &[u8], odd: &mut Vec<String>) -> HashMap<String, String> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(m)) => m
            .into_iter()
            .filter_map(|(k, v)| match v {
                Value::String(p) => Some((k, p)),
                Value::Null => None,
                other => {
                    odd.push(format!("construct.json {k}: parent {other} is not a key"));
                    None
                }
            })
            .collect(),
        Ok(_) => {
            odd.push("construct.json: the top level is not an object".into());
            HashMap::new()
        }
        Err(e) => {
            odd.push(format!("construct.json: not valid JSON: {e}"));
            HashMap::new()
        }
    }
}
