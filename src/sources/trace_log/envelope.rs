//! One header line of the trace log: the glog prefix
//! (`V1129 11:47:18.429000 32653 torch/_dynamo/output_graph.py:2993] `) then a JSON object
//! naming the event kind, the compile id and whether a payload follows.

use serde_json::{Map, Value};

/// Keys of the envelope that are not the event kind.
const META: [&str; 6] = [
    "frame_id",
    "frame_compile_id",
    "attempt",
    "compiled_autograd_id",
    "has_payload",
    "rank",
];

/// A parsed header line.
#[derive(Debug)]
pub struct Envelope {
    pub pid: Option<u32>,
    /// The event kind (`dynamo_start`, `artifact`, …) and its metadata object.
    pub kind: String,
    pub meta: Value,
    pub frame: Option<u32>,
    pub compile: Option<u32>,
    pub attempt: u32,
    pub autograd: Option<u32>,
    pub rank: Option<u32>,
    pub has_payload: bool,
    /// `has_payload`'s value: the md5 of the payload, as torch computed it.
    pub payload_md5: Option<String>,
}

/// Why a line is not a record's header.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadHeader {
    #[error("no glog prefix (`V1129 11:47:18.429000 PID file:line] `)")]
    NoPrefix,
    #[error("the metadata is not a JSON object")]
    NotAnObject,
    #[error("the metadata is not valid JSON ({0})")]
    NotJson(String),
    #[error("the metadata names no event kind")]
    NoKind,
}

/// Splits a header line; `Err` says what is wrong with it.
pub fn parse(line: &str) -> Result<Envelope, BadHeader> {
    let (prefix, json) = split_prefix(line).ok_or(BadHeader::NoPrefix)?;
    let pid = prefix
        .split_ascii_whitespace()
        .nth(2)
        .and_then(|p| p.parse().ok());
    let mut obj: Map<String, Value> = match serde_json::from_str(json) {
        Ok(Value::Object(o)) => o,
        Ok(_) => return Err(BadHeader::NotAnObject),
        Err(e) => return Err(BadHeader::NotJson(e.to_string())),
    };
    let num = |obj: &Map<String, Value>, k: &str| {
        obj.get(k)
            .and_then(Value::as_u64)
            .and_then(|v| u32::try_from(v).ok())
    };
    let frame = num(&obj, "frame_id");
    let compile = num(&obj, "frame_compile_id");
    let attempt = num(&obj, "attempt").unwrap_or(0);
    let autograd = num(&obj, "compiled_autograd_id");
    let rank = num(&obj, "rank");
    let has_payload = obj.contains_key("has_payload");
    let payload_md5 = match obj.get("has_payload") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => Some(v.to_string()),
        None => None,
    };
    let kind = obj
        .keys()
        .find(|k| !META.contains(&k.as_str()))
        .cloned()
        .ok_or(BadHeader::NoKind)?;
    let meta = obj.remove(&kind).unwrap_or(Value::Null);
    Ok(Envelope {
        pid,
        kind,
        meta,
        frame,
        compile,
        attempt,
        autograd,
        rank,
        has_payload,
        payload_md5,
    })
}

/// The line starts with a glog prefix and then a JSON object (its end need not be there).
pub fn prefix_ok(line: &str) -> bool {
    split_prefix(line).is_some()
}

/// `(prefix, json)`: the glog prefix must start with a level letter and a date, and end with
/// `] ` before the JSON object.
fn split_prefix(line: &str) -> Option<(&str, &str)> {
    let b = line.as_bytes();
    if b.len() < 6 || !matches!(b[0], b'V' | b'I' | b'W' | b'E' | b'C') || !b[1].is_ascii_digit() {
        return None;
    }
    let end = line.find("] {")?;
    Some((&line[..end], &line[end + 2..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_prefix_and_the_kind() {
        let e = parse(r#"V1129 11:47:12.157000 32458 torch/_dynamo/output_graph.py:2993] {"dynamo_output_graph": {"sizes": {}}, "frame_id": 0, "frame_compile_id": 1, "attempt": 2, "has_payload": "61"}"#).unwrap();
        assert_eq!(e.kind, "dynamo_output_graph");
        assert_eq!((e.frame, e.compile, e.attempt), (Some(0), Some(1), 2));
        assert_eq!(e.pid, Some(32458));
        assert!(e.has_payload);
        assert!(parse("garbage").is_err());
        assert!(parse("V1129 11:47:12.157000 1 a.py:1] {oops").is_err());
    }
}
