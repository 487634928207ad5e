//! Reading `.npy` files (numpy's format, version 1–3). npyz parses the header; the data is
//! memory-mapped and decoded in place, so a 1 GB tensor is summarised without a copy in memory.
//! Every plain dtype a dump can hold is read: f16/f32/f64, signed and unsigned ints, bool, in
//! either byte order, C or Fortran order, 0-d included. Object arrays (pickled Python values,
//! what the dumper writes for a `None` argument), truncated files and other files are reported
//! in one line, never a panic.

use crate::model::tensor::TensorInfo;
use npyz::{DType, Endianness, TypeChar};
use std::path::Path;

const MAGIC: &[u8] = b"\x93NUMPY";
/// Smaller files are read into memory: mapping a tiny (or empty) file costs more than it saves.
const MAP_THRESHOLD: u64 = 1 << 16;

/// The element type, decoded from numpy's descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    Bool,
    F16,
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
}

impl Elem {
    pub fn size(self) -> usize {
        match self {
            Elem::Bool | Elem::I8 | Elem::U8 => 1,
            Elem::F16 | Elem::I16 | Elem::U16 => 2,
            Elem::F32 | Elem::I32 | Elem::U32 => 4,
            Elem::F64 | Elem::I64 | Elem::U64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Elem::F16 | Elem::F32 | Elem::F64)
    }
}

enum Bytes {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

/// An opened `.npy` file: its header, understood, and its data bytes in place.
pub struct NpyArray {
    bytes: Bytes,
    offset: usize,
    pub info: TensorInfo,
    pub elem: Elem,
    pub big_endian: bool,
    /// Complete elements present (less than `info.elements()` when truncated).
    pub available: u64,
}

impl NpyArray {
    /// Opens `path`. The error is one line naming what is wrong with the file.
    pub fn open(path: &Path) -> Result<NpyArray, String> {
        let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
        let len = file.metadata().map_err(|e| e.to_string())?.len();
        let bytes = if len < MAP_THRESHOLD {
            Bytes::Owned(std::fs::read(path).map_err(|e| e.to_string())?)
        } else {
            // SAFETY: the mapping is read-only. A file shrunk by another process while mapped
            // can fault; dumps are written once and not changed, the usual trade-off of mmap.
            // Populated: the pages are wired in one call instead of one fault per 4 KiB.
            Bytes::Mapped(
                unsafe { memmap2::MmapOptions::new().populate().map(&file) }
                    .map_err(|e| e.to_string())?,
            )
        };
        Self::from_bytes(bytes)
    }

    /// Parses an in-memory `.npy` image (tests, fuzzing).
    pub fn from_vec(bytes: Vec<u8>) -> Result<NpyArray, String> {
        Self::from_bytes(Bytes::Owned(bytes))
    }

    fn from_bytes(bytes: Bytes) -> Result<NpyArray, String> {
        if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
            return Err(if bytes.is_empty() {
                "empty file, not a .npy array".to_string()
            } else {
                "not a .npy file (wrong magic bytes)".to_string()
            });
        }
        if header_too_deep(&bytes) {
            // npyz's header parser backtracks on nested brackets: 100 `[` take seconds
            // (found by fuzzing). Real headers nest a few levels (structured dtypes).
            return Err("unreadable .npy header: brackets nested too deeply".into());
        }
        if shape_overflows(&bytes) {
            return Err(
                "unreadable .npy header: its shape has more elements than fit in memory".into(),
            );
        }
        let mut cursor = std::io::Cursor::new(&bytes[..]);
        // npyz multiplies the shape without overflow checks; the check above rules that out, and
        // a panic of the parser on any other input still becomes an error, not a crash.
        let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            npyz::NpyHeader::from_reader(&mut cursor)
        }));
        let header = match parsed {
            Ok(r) => r.map_err(|e| format!("unreadable .npy header: {e}"))?,
            Err(_) => return Err("unreadable .npy header".into()),
        };
        let offset = cursor.position() as usize;
        let dtype = header.dtype();
        if header.uses_pickled_array() {
            return Err(format!(
                "object array (pickled Python objects, e.g. a `None` argument), shape {:?}: no numbers to read",
                header.shape()
            ));
        }
        let DType::Plain(ts) = &dtype else {
            return Err(format!(
                "structured dtype {} is not supported",
                dtype.descr()
            ));
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
            _ => return Err(format!("dtype {ts} holds no numbers fxray can summarise")),
        };
        let info = TensorInfo {
            dtype: ts.to_string(),
            shape: header.shape().to_vec(),
            fortran_order: header.order() == npyz::Order::Fortran,
        };
        let present = (bytes.len().saturating_sub(offset) / elem.size()) as u64;
        let available = present.min(info.elements());
        Ok(NpyArray {
            bytes,
            offset,
            info,
            elem,
            big_endian: ts.endianness() == Endianness::Big,
            available,
        })
    }

    /// "truncated: 10 of 16 elements present", when the data ends early.
    pub fn truncation(&self) -> Option<String> {
        let want = self.info.elements();
        (self.available < want).then(|| {
            format!(
                "truncated: {} of {} elements present; statistics cover those",
                self.available, want
            )
        })
    }

    /// The complete elements' bytes, in storage order.
    pub fn data(&self) -> &[u8] {
        let n = self.available as usize * self.elem.size();
        &self.bytes[self.offset..self.offset + n]
    }

    /// The element at storage position `i`, as f64 (ints beyond 2^53 round).
    pub fn get(&self, i: u64) -> Option<f64> {
        if i >= self.available {
            return None;
        }
        let s = self.elem.size();
        let at = i as usize * s;
        Some(decode(self.elem, self.big_endian, &self.data()[at..at + s]))
    }

    /// The element at C-order (row-major) flat index `i`, whatever the file's order.
    pub fn get_c(&self, i: u64) -> Option<f64> {
        if !self.info.fortran_order || self.info.shape.len() < 2 {
            return self.get(i);
        }
        let idx = unravel(i, &self.info.shape);
        let mut storage = 0u64;
        let mut stride = 1u64;
        for (k, d) in idx.iter().zip(&self.info.shape) {
            storage = storage.saturating_add(k.saturating_mul(stride));
            stride = stride.saturating_mul(*d);
        }
        self.get(storage)
    }
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

/// C-order flat index → multi-index.
pub fn unravel(mut i: u64, shape: &[u64]) -> Vec<u64> {
    let mut idx = vec![0; shape.len()];
    for (k, &d) in shape.iter().enumerate().rev() {
        if d > 0 {
            idx[k] = i % d;
            i /= d;
        }
    }
    idx
}

/// One element from its bytes (`b.len() == elem.size()`).
#[inline]
pub fn decode(elem: Elem, big: bool, b: &[u8]) -> f64 {
    macro_rules! num {
        ($t:ty, $n:expr) => {{
            let a: [u8; $n] = b.try_into().unwrap_or([0; $n]);
            (if big {
                <$t>::from_be_bytes(a)
            } else {
                <$t>::from_le_bytes(a)
            }) as f64
        }};
    }
    match elem {
        Elem::Bool => (b[0] != 0) as u8 as f64,
        Elem::F16 => {
            let a: [u8; 2] = b.try_into().unwrap_or([0; 2]);
            let bits = if big {
                u16::from_be_bytes(a)
            } else {
                u16::from_le_bytes(a)
            };
            half::f16::from_bits(bits).to_f64()
        }
        Elem::F32 => num!(f32, 4),
        Elem::F64 => num!(f64, 8),
        Elem::I8 => b[0] as i8 as f64,
        Elem::U8 => b[0] as f64,
        Elem::I16 => num!(i16, 2),
        Elem::I32 => num!(i32, 4),
        Elem::I64 => num!(i64, 8),
        Elem::U16 => num!(u16, 2),
        Elem::U32 => num!(u32, 4),
        Elem::U64 => num!(u64, 8),
    }
}
