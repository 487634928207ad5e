//! Reading `torch.save` files (`.pt`): one tensor, as msprobe's tensor mode writes them
//! (docs/formats.md §4.2). The file is a zip archive (`<name>/data.pkl`, `<name>/data/<key>`,
//! `<name>/byteorder`); the pickle is read as data by [`pickle`], never executed. The result is
//! the same view `.npy` files give ([`NpyArray`]), so statistics, slices and comparisons read
//! both alike. A contiguous tensor stays in place (mapped, no copy); a strided or offset view
//! is gathered into C order.

pub mod pickle;

use crate::model::npy::{Bytes, Elem, NpyArray};
use crate::model::tensor::TensorInfo;
use pickle::{TensorRef, Value};
use std::io::{Cursor, Read};
use std::path::Path;

/// Smaller files are read into memory rather than mapped (as for `.npy`).
const MAP_THRESHOLD: u64 = 1 << 16;
/// Largest `data.pkl` read: a tensor's pickle is a few hundred bytes.
const MAX_PICKLE: u64 = 16 << 20;
/// Largest strided view gathered into memory (an `expand` can declare far more elements than
/// its storage holds).
const MAX_GATHER: u64 = 4 << 30;

/// What is wrong with a `.pt` file, in one line.
#[derive(Debug, thiserror::Error)]
pub enum PtError {
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    #[error("not a torch.save file ({0})")]
    NotTorchSave(&'static str),
    #[error(
        "a legacy torch.save file (torch < 1.6, or _use_new_zipfile_serialization=False); fxray reads the zip format"
    )]
    Legacy,
    #[error(
        "cut short: {0} (a file still being written, or copied in part; read it again once complete)"
    )]
    CutShort(&'static str),
    #[error("unreadable torch.save archive: {0}")]
    Zip(String),
    #[error("unreadable pickle at byte {at}: {what}")]
    Pickle { at: usize, what: pickle::Fault },
    #[error("refused: the pickle calls `{0}`, which is not a tensor constructor (nothing was run)")]
    Refused(String),
    #[error("holds {0}, not a tensor")]
    NotTensor(String),
    #[error("tensor layout does not fit its storage: {0}")]
    Layout(String),
}

impl PtError {
    /// The file was cut short, as opposed to damaged, hostile or not a tensor: a caller may
    /// read it again once its writer is done.
    pub fn is_cut_short(&self) -> bool {
        matches!(
            self,
            PtError::CutShort(_)
                | PtError::Pickle {
                    what: pickle::Fault::CutShort,
                    ..
                }
        )
    }
}

/// A torch storage's element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PtDtype {
    F64,
    F32,
    F16,
    BF16,
    I64,
    I32,
    I16,
    I8,
    U8,
    Bool,
}

impl PtDtype {
    /// `FloatStorage` → `F32`: the typed storage names `torch.save` pickles.
    pub fn of_storage(name: &str) -> Option<PtDtype> {
        Some(match name {
            "DoubleStorage" => PtDtype::F64,
            "FloatStorage" => PtDtype::F32,
            "HalfStorage" => PtDtype::F16,
            "BFloat16Storage" => PtDtype::BF16,
            "LongStorage" => PtDtype::I64,
            "IntStorage" => PtDtype::I32,
            "ShortStorage" => PtDtype::I16,
            "CharStorage" => PtDtype::I8,
            "ByteStorage" => PtDtype::U8,
            "BoolStorage" => PtDtype::Bool,
            _ => return None,
        })
    }

    pub fn elem(self) -> Elem {
        match self {
            PtDtype::F64 => Elem::F64,
            PtDtype::F32 => Elem::F32,
            PtDtype::F16 => Elem::F16,
            PtDtype::BF16 => Elem::BF16,
            PtDtype::I64 => Elem::I64,
            PtDtype::I32 => Elem::I32,
            PtDtype::I16 => Elem::I16,
            PtDtype::I8 => Elem::I8,
            PtDtype::U8 => Elem::U8,
            PtDtype::Bool => Elem::Bool,
        }
    }

    /// numpy's descriptor where numpy has the type (`<f4`), `bfloat16` where it has none.
    fn descr(self, big: bool) -> String {
        let o = if big { '>' } else { '<' };
        match self {
            PtDtype::F64 => format!("{o}f8"),
            PtDtype::F32 => format!("{o}f4"),
            PtDtype::F16 => format!("{o}f2"),
            PtDtype::BF16 => "bfloat16".into(),
            PtDtype::I64 => format!("{o}i8"),
            PtDtype::I32 => format!("{o}i4"),
            PtDtype::I16 => format!("{o}i2"),
            PtDtype::I8 => "|i1".into(),
            PtDtype::U8 => "|u1".into(),
            PtDtype::Bool => "|b1".into(),
        }
    }
}

/// Opens the tensor `torch.save` wrote to `path` (through the archive-aware file door).
pub fn open(path: &Path) -> Result<NpyArray, PtError> {
    from_bytes(crate::sources::vfs::bytes(path, MAP_THRESHOLD)?)
}

/// Reads an in-memory `.pt` image (tests, fuzzing).
pub fn from_vec(bytes: Vec<u8>) -> Result<NpyArray, PtError> {
    from_bytes(Box::new(bytes))
}

/// Where the tensor's storage lies: in place in the file, or read out of a compressed entry.
enum Place {
    InFile { start: usize, len: usize },
    Read(Vec<u8>),
}

fn from_bytes(bytes: Bytes) -> Result<NpyArray, PtError> {
    let (t, big, place) = locate(bytes.as_ref().as_ref())?;
    let elem = t.storage.dtype.elem();
    let size = elem.size() as u64;
    let info = TensorInfo {
        dtype: t.storage.dtype.descr(big),
        shape: t.shape.clone(),
        fortran_order: false,
    };
    let storage: &[u8] = match &place {
        Place::InFile { start, len } => &bytes.as_ref().as_ref()[*start..*start + *len],
        Place::Read(v) => v,
    };
    let need = t
        .storage
        .numel
        .checked_mul(size)
        .filter(|&n| n <= storage.len() as u64);
    if need.is_none() {
        return Err(PtError::Layout(format!(
            "the pickle says {} elements, the storage record holds {} bytes",
            t.storage.numel,
            storage.len()
        )));
    }
    let last = last_index(&t)?;
    if last.is_some_and(|l| l >= t.storage.numel) {
        return Err(PtError::Layout(format!(
            "offset {} with size {:?} and stride {:?} reaches past the storage's {} elements",
            t.offset, t.shape, t.stride, t.storage.numel
        )));
    }
    if is_c_contiguous(&t) {
        let start = match place {
            Place::InFile { start, .. } => start as u64,
            Place::Read(v) => {
                let at = (t.offset * size) as usize;
                return Ok(NpyArray::new(Box::new(v), at, info, elem, big));
            }
        };
        return Ok(NpyArray::new(
            bytes,
            (start + t.offset * size) as usize,
            info,
            elem,
            big,
        ));
    }
    let n = info.elements();
    if n.saturating_mul(size) > MAX_GATHER {
        return Err(PtError::Layout(format!(
            "a strided view of {n} elements is too large to gather"
        )));
    }
    let out = gather(storage, &t, size as usize, n as usize);
    Ok(NpyArray::new(Box::new(out), 0, info, elem, big))
}

/// Reads the archive: the tensor the pickle describes, the byte order, and its storage.
fn locate(all: &[u8]) -> Result<(TensorRef, bool, Place), PtError> {
    if !all.starts_with(b"PK") {
        // The legacy format is a stream of pickles starting with its magic number.
        const LEGACY: &[u8] = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19";
        return Err(if all.starts_with(LEGACY) {
            PtError::Legacy
        } else if all.is_empty() {
            PtError::NotTorchSave("empty file")
        } else {
            PtError::NotTorchSave("not a zip archive")
        });
    }
    // torch.save writes the archive from the file's first byte. Detecting a prefix instead (the
    // default) can take tensor bytes for a directory record and refuse a sound file.
    let config = zip::read::Config {
        archive_offset: zip::read::ArchiveOffset::Known(0),
    };
    let mut zip = zip::ZipArchive::with_config(config, Cursor::new(all)).map_err(|e| {
        if ends_like_a_zip(all) {
            PtError::Zip(e.to_string())
        } else {
            PtError::CutShort("the zip directory at its end is missing")
        }
    })?;
    // `<archive>/data.pkl`: the archive's one folder is named after the file it was saved as.
    let pkl = zip
        .file_names()
        .filter_map(Result::ok)
        .find(|n| n.ends_with("/data.pkl") && n.matches('/').count() == 1)
        .map(|n| n.into_owned())
        .ok_or(PtError::NotTorchSave(
            "a zip archive without <name>/data.pkl",
        ))?;
    let prefix = pkl.trim_end_matches("data.pkl").to_string();
    let pickle_bytes = read_entry(&mut zip, &pkl, MAX_PICKLE)?;
    let big = match zip.by_name(&format!("{prefix}byteorder")) {
        Ok(mut f) => {
            let mut s = String::new();
            f.by_ref().take(16).read_to_string(&mut s).ok();
            s.trim() == "big"
        }
        Err(_) => false, // written since torch 1.13; older files are little-endian
    };
    let t = match pickle::load(&pickle_bytes)? {
        Value::Tensor(t) => *t,
        other => return Err(PtError::NotTensor(other.describe())),
    };
    let name = format!("{prefix}data/{}", t.storage.key);
    let f = zip
        .by_name(&name)
        .map_err(|_| PtError::Zip(format!("the storage record {name} is missing")))?;
    let place = match (f.compression(), f.data_start()) {
        (zip::CompressionMethod::Stored, Some(start)) => {
            let len = f.size();
            let end = start.checked_add(len).filter(|&e| e <= all.len() as u64);
            if end.is_none() {
                return Err(PtError::CutShort("its storage record ends early"));
            }
            Place::InFile {
                start: start as usize,
                len: len as usize,
            }
        }
        _ => {
            drop(f);
            Place::Read(read_entry(&mut zip, &name, MAX_GATHER)?)
        }
    };
    Ok((t, big, place))
}

/// A zip ends with its end-of-central-directory record, and `torch.save` writes no archive
/// comment after it: a file that starts as a zip and does not end with one was cut short.
fn ends_like_a_zip(all: &[u8]) -> bool {
    const EOCD: usize = 22;
    all.len() >= EOCD && all[all.len() - EOCD..].starts_with(b"PK\x05\x06")
}

fn read_entry(
    zip: &mut zip::ZipArchive<Cursor<&[u8]>>,
    name: &str,
    cap: u64,
) -> Result<Vec<u8>, PtError> {
    let f = zip.by_name(name).map_err(|e| PtError::Zip(e.to_string()))?;
    if f.size() > cap {
        return Err(PtError::Zip(format!("{name} is larger than {cap} bytes")));
    }
    let mut v = Vec::with_capacity(f.size() as usize);
    f.take(cap)
        .read_to_end(&mut v)
        .map_err(|e| PtError::Zip(format!("{name}: {e}")))?;
    Ok(v)
}

/// The largest storage index the view touches; `None` for an empty tensor.
fn last_index(t: &TensorRef) -> Result<Option<u64>, PtError> {
    if t.shape.contains(&0) {
        return Ok(None);
    }
    let overflow = || PtError::Layout("size × stride overflows".into());
    let mut last = t.offset;
    for (d, s) in t.shape.iter().zip(&t.stride) {
        last = (d - 1)
            .checked_mul(*s)
            .and_then(|x| x.checked_add(last))
            .ok_or_else(overflow)?;
    }
    Ok(Some(last))
}

fn is_c_contiguous(t: &TensorRef) -> bool {
    let mut want = 1u64;
    for (d, s) in t.shape.iter().zip(&t.stride).rev() {
        if *d != 1 && *s != want {
            return false;
        }
        want = want.saturating_mul(*d);
    }
    true
}

/// Copies the view's elements into C order.
fn gather(storage: &[u8], t: &TensorRef, size: usize, n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * size);
    if n == 0 {
        return out;
    }
    let rank = t.shape.len();
    let (inner, inner_stride) = (t.shape[rank - 1] as usize, t.stride[rank - 1] as usize);
    let mut idx = vec![0u64; rank - 1];
    loop {
        let base = t.offset as usize
            + idx
                .iter()
                .zip(&t.stride)
                .map(|(i, s)| (i * s) as usize)
                .sum::<usize>();
        for k in 0..inner {
            let at = (base + k * inner_stride) * size;
            out.extend_from_slice(&storage[at..at + size]);
        }
        // Next outer index, odometer style.
        let mut d = rank - 1;
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < t.shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}
