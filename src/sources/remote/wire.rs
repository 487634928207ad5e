//! How frames cross the link: the agent's first line, then length-prefixed frames.
//!
//! The first thing an agent writes is one text line, `FXRAY-AGENT <protocol> <version>`, before
//! any frame: a client of another protocol reads it without knowing the frame format, and
//! anything else on the line (a shell's "command not found", a login banner) tells the client
//! that no agent answered. Then each frame is
//! `u32 LE total length | u32 LE header length | header (JSON) | payload (raw bytes)`:
//! the header is serde JSON (readable in a hex dump, tolerant of added fields), the payload a
//! file's bytes, deflated when that pays.

use serde::{Serialize, de::DeserializeOwned};
use std::io::{self, BufRead, Read, Write};

/// The greeting's first word.
pub const MAGIC: &str = "FXRAY-AGENT";

/// A frame larger than this is a broken link, not a message (the largest payload is a file
/// read whole, and those are capped well below it); a payload inflates to at most this too.
pub const MAX_FRAME: u32 = 512 << 20;

/// Payloads smaller than this are sent as they are: deflating them saves less than it costs.
const COMPRESS_FROM: usize = 2048;

/// Writes the greeting line.
pub fn write_greeting(out: &mut impl Write, protocol: u32) -> io::Result<()> {
    writeln!(out, "{MAGIC} {protocol} {}", env!("CARGO_PKG_VERSION"))?;
    out.flush()
}

/// What the first line of the agent said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Greeting {
    Agent {
        protocol: u32,
        version: String,
    },
    /// Not an agent: the line as read (a shell error, a banner), or empty at end of stream.
    Other(String),
}

/// Reads the greeting line (at most 4 KB, so a peer that never sends a newline cannot grow it).
pub fn read_greeting(input: &mut impl BufRead) -> io::Result<Greeting> {
    let mut line = Vec::new();
    input.take(4096).read_until(b'\n', &mut line)?;
    let text = String::from_utf8_lossy(&line).trim().to_string();
    let mut words = text.split_whitespace();
    if words.next() == Some(MAGIC)
        && let Some(protocol) = words.next().and_then(|w| w.parse().ok())
    {
        let version = words.next().unwrap_or("?").to_string();
        return Ok(Greeting::Agent { protocol, version });
    }
    Ok(Greeting::Other(text))
}

/// An item of a stream (`Reply::Item`) in its payload's form: postcard, compact and exact
/// (floats keep NaN and infinities, which JSON cannot).
pub fn to_item<T: Serialize>(value: &T) -> io::Result<Vec<u8>> {
    postcard::to_allocvec(value).map_err(io::Error::other)
}

/// An item read back; a cut or malformed one is an `InvalidData` error.
pub fn from_item<T: DeserializeOwned>(bytes: &[u8]) -> io::Result<T> {
    postcard::from_bytes(bytes).map_err(|e| broken(format!("an item that does not read: {e}")))
}

/// One frame: a header and, for file data, a payload.
#[derive(Debug)]
pub struct Frame<H> {
    pub header: H,
    pub payload: Vec<u8>,
}

/// Writes one frame; returns the bytes written. The payload is deflated when that pays, and
/// `deflated` is set in what the reader sees through [`read_frame`] either way.
pub fn write_frame<H: Serialize>(
    out: &mut impl Write,
    header: &H,
    payload: &[u8],
) -> io::Result<u64> {
    let (flag, body) = pack(payload);
    let head = serde_json::to_vec(&(flag, header)).map_err(io::Error::other)?;
    let total = 4 + head.len() + body.len();
    let total32 = u32::try_from(total)
        .ok()
        .filter(|t| *t <= MAX_FRAME)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "frame too large"))?;
    out.write_all(&total32.to_le_bytes())?;
    out.write_all(&(head.len() as u32).to_le_bytes())?;
    out.write_all(&head)?;
    out.write_all(&body)?;
    Ok(4 + total as u64)
}

/// Reads one frame; `Ok(None)` at a clean end of stream (between frames). Returns the bytes
/// read with it.
pub fn read_frame<H: DeserializeOwned>(
    input: &mut impl Read,
) -> io::Result<Option<(Frame<H>, u64)>> {
    let mut len = [0u8; 4];
    match input.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let total = u32::from_le_bytes(len);
    if !(4..=MAX_FRAME).contains(&total) {
        return Err(broken(format!("a frame of {total} bytes")));
    }
    // Grown as bytes arrive, not allocated from the prefix: a lying length costs nothing.
    let mut buf = Vec::new();
    input.take(u64::from(total)).read_to_end(&mut buf)?;
    if buf.len() < total as usize {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "the link is broken: a frame cut at {} of {total} bytes",
                buf.len()
            ),
        ));
    }
    let head_len = u32::from_le_bytes(buf[..4].try_into().expect("4 bytes")) as usize;
    if head_len > buf.len() - 4 {
        return Err(broken(format!(
            "a header of {head_len} bytes in a frame of {total}"
        )));
    }
    let (flag, header): (bool, H) =
        serde_json::from_slice(&buf[4..4 + head_len]).map_err(|e| broken(e.to_string()))?;
    let body = &buf[4 + head_len..];
    let payload = if flag { inflate(body)? } else { body.to_vec() };
    Ok(Some((Frame { header, payload }, 4 + total as u64)))
}

fn broken(what: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the link is broken: {what}"),
    )
}

/// The payload as sent, and whether it is deflated.
fn pack(payload: &[u8]) -> (bool, std::borrow::Cow<'_, [u8]>) {
    if payload.len() < COMPRESS_FROM {
        return (false, payload.into());
    }
    let mut enc = flate2::write::DeflateEncoder::new(
        Vec::with_capacity(payload.len() / 4),
        flate2::Compression::fast(),
    );
    // Writing into a Vec cannot fail.
    let _ = enc.write_all(payload);
    match enc.finish() {
        // Kept only when it saves at least a tenth: tensors' mantissas do not deflate.
        Ok(z) if z.len() < payload.len() - payload.len() / 10 => (true, z.into()),
        _ => (false, payload.into()),
    }
}

fn inflate(body: &[u8]) -> io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(body.len() * 4);
    flate2::read::DeflateDecoder::new(body)
        .take(u64::from(MAX_FRAME))
        .read_to_end(&mut out)
        .map_err(|e| broken(format!("a payload that does not inflate: {e}")))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_compress_when_it_pays() {
        let text = "x = torch.ops.aten.add.Tensor(a, b)\n".repeat(200);
        let mut buf = Vec::new();
        let n = write_frame(&mut buf, &("read", 7u64), text.as_bytes()).unwrap();
        assert_eq!(n as usize, buf.len());
        assert!(
            buf.len() < text.len() / 4,
            "{} bytes for {}",
            buf.len(),
            text.len()
        );
        let (f, m) = read_frame::<(String, u64)>(&mut buf.as_slice())
            .unwrap()
            .unwrap();
        assert_eq!((f.header.0.as_str(), f.header.1, m), ("read", 7, n));
        assert_eq!(f.payload, text.as_bytes());
    }

    #[test]
    fn a_broken_stream_is_an_error_and_a_clean_end_is_none() {
        assert!(read_frame::<u32>(&mut [].as_slice()).unwrap().is_none());
        let huge = (MAX_FRAME + 1).to_le_bytes();
        assert!(read_frame::<u32>(&mut huge.as_slice()).is_err());
        let mut buf = Vec::new();
        write_frame(&mut buf, &1u32, b"").unwrap();
        buf.truncate(buf.len() - 1);
        assert!(read_frame::<u32>(&mut buf.as_slice()).is_err());
    }

    #[test]
    fn a_lying_length_is_a_cut_frame_not_an_allocation() {
        let mut buf = (100u32 << 20).to_le_bytes().to_vec();
        buf.extend_from_slice(b"0123456789");
        let e = read_frame::<u32>(&mut buf.as_slice()).unwrap_err();
        assert!(e.to_string().contains("cut at 10 of 104857600"), "{e}");
    }

    #[test]
    fn the_greeting_names_the_protocol_or_says_what_came_instead() {
        let mut buf = Vec::new();
        write_greeting(&mut buf, 3).unwrap();
        let g = read_greeting(&mut buf.as_slice()).unwrap();
        assert!(matches!(g, Greeting::Agent { protocol: 3, .. }), "{g:?}");
        let g = read_greeting(&mut b"bash: fxray: command not found\n".as_slice()).unwrap();
        assert_eq!(g, Greeting::Other("bash: fxray: command not found".into()));
    }
}
