//! A `.npy` array in memory or mapped from its file: the header understood and the data bytes
//! in place, read element by element without a copy. `sources::npy` opens and checks files;
//! `analysis::tensor_stats` computes over this view.

use crate::model::tensor::TensorInfo;

/// The element type, decoded from numpy's descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    Bool,
    F16,
    /// bfloat16 (torch `.pt` files; numpy has no such type).
    BF16,
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
            Elem::F16 | Elem::BF16 | Elem::I16 | Elem::U16 => 2,
            Elem::F32 | Elem::I32 | Elem::U32 => 4,
            Elem::F64 | Elem::I64 | Elem::U64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Elem::F16 | Elem::BF16 | Elem::F32 | Elem::F64)
    }
}

/// The bytes of an array file: owned, or a read-only mapping of the file.
pub type Bytes = Box<dyn AsRef<[u8]> + Send + Sync>;

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
    /// The array whose data starts at `offset` of `bytes` (the header checked by its reader).
    pub fn new(
        bytes: Bytes,
        offset: usize,
        info: TensorInfo,
        elem: Elem,
        big_endian: bool,
    ) -> Self {
        let present = ((*bytes).as_ref().len().saturating_sub(offset) / elem.size()) as u64;
        let available = present.min(info.elements());
        NpyArray {
            bytes,
            offset,
            info,
            elem,
            big_endian,
            available,
        }
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
        &(*self.bytes).as_ref()[self.offset..self.offset + n]
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
        Elem::BF16 => {
            let a: [u8; 2] = b.try_into().unwrap_or([0; 2]);
            let bits = if big {
                u16::from_be_bytes(a)
            } else {
                u16::from_le_bytes(a)
            };
            half::bf16::from_bits(bits).to_f64()
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
