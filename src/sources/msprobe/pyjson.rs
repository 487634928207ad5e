//! Python's `json.dump` writes `NaN`, `Infinity` and `-Infinity` for non-finite floats (msprobe
//! does, for scalar arguments such as a mask's fill value), which JSON does not allow. They are
//! quoted here, outside strings, so the file parses and the value stays readable as text.

use std::borrow::Cow;

const TOKENS: [&[u8]; 3] = [b"-Infinity", b"Infinity", b"NaN"];

/// `bytes` with Python's non-finite tokens quoted; borrowed when it has none.
pub fn quote_non_finite(bytes: &[u8]) -> Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let (mut i, mut in_str, mut escaped) = (0, false, false);
    while i < bytes.len() {
        let b = bytes[i];
        if in_str {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
        } else if b == b'"' {
            in_str = true;
        } else if let Some(t) = TOKENS.iter().find(|t| bytes[i..].starts_with(t)) {
            let o = out.get_or_insert_with(|| bytes[..i].to_vec());
            o.push(b'"');
            o.extend_from_slice(t);
            o.push(b'"');
            i += t.len();
            continue;
        }
        if let Some(o) = out.as_mut() {
            o.push(b);
        }
        i += 1;
    }
    out.map_or(Cow::Borrowed(bytes), Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_tokens_outside_strings_only() {
        let s = br#"{"a": -Infinity, "b": [NaN, Infinity], "c": "NaN -Infinity \" NaN"}"#;
        let q = quote_non_finite(s);
        assert_eq!(
            std::str::from_utf8(&q).unwrap(),
            r#"{"a": "-Infinity", "b": ["NaN", "Infinity"], "c": "NaN -Infinity \" NaN"}"#
        );
        assert!(matches!(quote_non_finite(b"{\"x\": 1}"), Cow::Borrowed(_)));
    }
}
