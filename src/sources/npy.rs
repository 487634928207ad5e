//! Reading `.npy` files (numpy's format, version 1–3). npyz parses the header; the data is
//! memory-mapped and decoded in place, so a 1 GB tensor is summarised without a copy in memory.
//! Every plain dtype a dump can hold is read: f16/f32/f64, signed and unsigned ints, bool, in
//! either byte order, C or Fortran order, 0-d included. Object arrays (pickled Python values,
//! what the dumper writes for a `None` argument), truncated files and other files are reported
//! in one line, never a panic.

use crate::model::npy::Bytes;
pub use crate::model::npy::{Elem, NpyArray};
use crate::model::tensor::TensorInfo;
use npyz::{DType, Endianness, TypeChar};
use std::path::Path;

const MAGIC: &[u8] = b"\x93NUMPY";
/// Smaller files are read into memory: mapping a tiny (or empty) file costs more than it saves.
const MAP_THRESHOLD: u64 = 1 << 16;

/// Why a file is not an `.npy` array fxray can read: each kind its own variant, the message the
/// one line the user sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NpyError {
    #[error("{0}")]
    Io(String),
    #[error("empty file, not a .npy array")]
    Empty,
    #[error("not a .npy file (wrong magic bytes)")]
    NotNpy,
    #[error("unreadable .npy header: brackets nested too deeply")]
    HeaderTooDeep,
    #[error("unreadable .npy header: its shape has more elements than fit in memory")]
    ShapeOverflow,
    #[error("unreadable .npy header{}", .0.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
    Header(Option<String>),
    #[error(
        "object array (pickled Python objects, e.g. a `None` argument), shape {0:?}: no numbers to read"
    )]
    ObjectArray(Vec<u64>),
    #[error("structured dtype {0} is not supported")]
    Structured(String),
    #[error("dtype {0} holds no numbers fxray can summarise")]
    NoNumbers(String),
}

/// The array type lives in `model` (analysis computes over it); opening and checking a file
/// is this module's.
impl NpyArray {
    /// Opens `path`. The error is one line naming what is wrong with the file.
    pub fn open(path: &Path) -> Result<NpyArray, NpyError> {
        let bytes = crate::sources::vfs::bytes(path, MAP_THRESHOLD)
            .map_err(|e| NpyError::Io(e.to_string()))?;
        Self::from_bytes(bytes)
    }

    /// Parses an in-memory `.npy` image (tests, fuzzing).
    pub fn from_vec(bytes: Vec<u8>) -> Result<NpyArray, NpyError> {
        Self::from_bytes(Box::new(bytes))
    }

    fn from_bytes(bytes: Bytes) -> Result<NpyArray, NpyError> {
        let all: &[u8] = (*bytes).as_ref();
        if all.len() < MAGIC.len() || &all[..MAGIC.len()] != MAGIC {
            return Err(if all.is_empty() {
                NpyError::Empty
            } else {
                NpyError::NotNpy
            });
        }
        if header_too_deep(all) {
            // npyz's header parser backtracks on nested brackets: 100 `[` take seconds
            // (found by fuzzing). Real headers nest a few levels (structured dtypes).
            return Err(NpyError::HeaderTooDeep);
        }
        if shape_overflows(all) {
            return Err(NpyError::ShapeOverflow);
        }
        let mut cursor = std::io::Cursor::new(all);
        // npyz multiplies the shape without overflow checks; the check above rules that out, and
        // a panic of the parser on any other input still becomes an error, not a crash.
        let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            npyz::NpyHeader::from_reader(&mut cursor)
        }));
        let header = match parsed {
            Ok(r) => r.map_err(|e| NpyError::Header(Some(e.to_string())))?,
            Err(_) => return Err(NpyError::Header(None)),
        };
        let offset = cursor.position() as usize;
        let dtype = header.dtype();
        if header.uses_pickled_array() {
            return Err(NpyError::ObjectArray(header.shape().to_vec()));
        }
        let DType::Plain(ts) = &dtype else {
            return Err(NpyError::Structured(dtype.descr()));
        };
        let size = ts.size_field();
        let elem = match (ts.type_char(), size) {
            (TypeChar::Bool, 1) => Elem::Bool,
            (TypeChar::Float, 2) => Elem::F16,
            (TypeChar::Float, 4) => Elem::F32,
            (TypeChar::Float, 8) => Elem::F64,
            (TypeChar::Int, 1) => Elem::I8,
            (TypeChar::Int, 2) => Elem::I16,
            (TypeChar::Int, 4) => Elem::I32,
            (TypeChar::Int, 8) => Elem::I64,
            (TypeChar::Uint, 1) => Elem::U8,
            (TypeChar::Uint, 2) => Elem::U16,
            (TypeChar::Uint, 4) => Elem::U32,
            (TypeChar::Uint, 8) => Elem::U64,
            _ => return Err(NpyError::NoNumbers(ts.to_string())),
        };
        let info = TensorInfo {
            dtype: ts.to_string(),
            shape: header.shape().to_vec(),
            fortran_order: header.order() == npyz::Order::Fortran,
        };
        let big_endian = ts.endianness() == Endianness::Big;
        Ok(NpyArray::new(bytes, offset, info, elem, big_endian))
    }
}

/// The header of a 1-d little-endian float32 `.npy` of `n` elements, padded to 64 bytes as
/// numpy writes it: what benchmarks and tests put before the values they make.
pub fn f32_header(n: usize) -> Vec<u8> {
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({n},), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut v = MAGIC.to_vec();
    v.extend_from_slice(&[1, 0]);
    v.extend_from_slice(&(header.len() as u16).to_le_bytes());
    v.extend_from_slice(header.as_bytes());
    v
}

/// True when the header's `'shape': (…)` product overflows u64 (npyz would panic or wrap).
/// Deepest bracket nesting allowed in a header; numpy's own headers stay far below it.
const MAX_HEADER_DEPTH: usize = 16;

fn header_too_deep(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(1 << 16)];
    let end = head.iter().position(|&b| b == b'\n').unwrap_or(head.len());
    let mut depth = 0usize;
    for &b in &head[..end] {
        match b {
            b'[' | b'(' | b'{' => {
                depth += 1;
                if depth > MAX_HEADER_DEPTH {
                    return true;
                }
            }
            b']' | b')' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

fn shape_overflows(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(1 << 16)];
    let text = String::from_utf8_lossy(head);
    let Some(start) = text.find("'shape'") else {
        return false;
    };
    let rest = &text[start..];
    let (Some(open), Some(close)) = (rest.find('('), rest.find(')')) else {
        return false;
    };
    if close < open {
        return false;
    }
    let mut total: u64 = 1;
    for dim in rest[open + 1..close]
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
    {
        let Ok(d) = dim.trim_end_matches('L').parse::<u64>() else {
            return false; // not a plain number: npyz reports it
        };
        match total.checked_mul(d) {
            Some(t) => total = t,
            None => return true,
        }
    }
    false
}
