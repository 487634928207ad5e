//! A pickle machine that reads what `torch.save` writes as data and never runs anything
//! (docs/formats.md §4.2). It knows the opcodes of protocols 2–5 that hold plain values, and
//! turns the handful of calls a tensor file makes (`torch._utils._rebuild_tensor_v2`,
//! `_rebuild_parameter`, `collections.OrderedDict`) into values. A call of anything else is
//! refused with its name: a hostile pickle is an error, not a program.
//!
//! Values are trees: the memo keeps copies, not shared objects, which is what `torch.save`'s
//! own memo use needs (each container is memoised once, right after it is made). Copies, stack
//! and nesting are bounded, so no input makes it loop, recurse or allocate without end.

use super::{PtDtype, PtError};
use Fault::Malformed;
use std::collections::HashMap;

/// Work units one file may spend (a value made or copied is one, a byte of text one).
const MAX_WORK: usize = 1 << 24;
/// Deepest container nesting accepted (a tensor file nests three levels).
const MAX_DEPTH: u32 = 64;
/// Most values the stack may hold.
const MAX_STACK: usize = 1 << 20;

/// What is wrong with a pickle, at the byte [`PtError::Pickle`] names. A caller tells a cut
/// file ([`Fault::CutShort`]) from one that is too big ([`Fault::TooDeep`], [`Fault::TooMuchWork`],
/// [`Fault::StackFull`]) or not what `torch.save` writes (the rest) without reading text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    #[error("the pickle ends early (truncated?)")]
    CutShort,
    #[error("containers nested deeper than {MAX_DEPTH}")]
    TooDeep,
    #[error("the pickle is too large or repeats itself too much for a tensor file")]
    TooMuchWork,
    #[error("more than a million values on the stack")]
    StackFull,
    #[error("pickle protocol {0} is newer than any Python writes")]
    Protocol(u8),
    #[error("opcode 0x{0:02x} is not one torch.save writes")]
    Opcode(u8),
    #[error("memo slot {0} read before it was written")]
    MemoUnset(u32),
    #[error("storage type torch.{0} is not one fxray reads")]
    StorageType(String),
    #[error("{op} onto {target}")]
    AppendOnto { op: &'static str, target: String },
    /// A value or opcode sequence `torch.save` never writes, in words.
    #[error("{0}")]
    Malformed(&'static str),
}

/// A storage named by a persistent id: `('storage', torch.FloatStorage, '0', 'cpu', 12)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Storage {
    pub dtype: PtDtype,
    /// The record name under `<archive>/data/`.
    pub key: String,
    /// Elements the storage holds.
    pub numel: u64,
}

/// `_rebuild_tensor_v2(storage, offset, size, stride, …)`: a view of a storage.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorRef {
    pub storage: Storage,
    /// In elements.
    pub offset: u64,
    pub shape: Vec<u64>,
    /// In elements.
    pub stride: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bytes(usize),
    /// A tuple or a list.
    Seq(Box<Seq>),
    /// Keys and values, alternating.
    Dict(Box<Seq>),
    /// A name of a Python object; naming is harmless, calling it is what is checked.
    Global(Box<(String, String)>),
    Storage(Box<Storage>),
    Tensor(Box<TensorRef>),
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Seq {
    pub items: Vec<Value>,
    weight: usize,
    depth: u32,
}

impl Seq {
    fn push(&mut self, v: Value) -> Result<(), Fault> {
        let d = v.depth() + 1;
        if d > MAX_DEPTH {
            return Err(Fault::TooDeep);
        }
        self.depth = self.depth.max(d);
        self.weight += v.weight();
        self.items.push(v);
        Ok(())
    }

    fn of(items: Vec<Value>) -> Result<Seq, Fault> {
        let mut s = Seq::default();
        for v in items {
            s.push(v)?;
        }
        Ok(s)
    }
}

impl Value {
    fn weight(&self) -> usize {
        match self {
            Value::Seq(s) | Value::Dict(s) => 1 + s.weight,
            Value::Str(t) => 1 + t.len(),
            Value::Global(g) => 1 + g.0.len() + g.1.len(),
            Value::Tensor(t) => 1 + t.shape.len() * 2,
            _ => 1,
        }
    }

    fn depth(&self) -> u32 {
        match self {
            Value::Seq(s) | Value::Dict(s) => s.depth,
            _ => 0,
        }
    }

    /// What the value is, for a message: `a dict of 2 entries`, `an int`.
    pub fn describe(&self) -> String {
        match self {
            Value::None => "None".into(),
            Value::Bool(_) => "a bool".into(),
            Value::Int(_) => "an int".into(),
            Value::Float(_) => "a float".into(),
            Value::Str(_) => "a string".into(),
            Value::Bytes(_) => "bytes".into(),
            Value::Seq(s) => format!("a tuple or list of {} items", s.items.len()),
            Value::Dict(s) => format!("a dict of {} entries", s.items.len() / 2),
            Value::Global(g) => format!("the name `{}.{}`", g.0, g.1),
            Value::Storage(_) => "a bare storage".into(),
            Value::Tensor(_) => "a tensor".into(),
        }
    }

    fn seq(self) -> Option<Vec<Value>> {
        match self {
            Value::Seq(s) => Some(s.items),
            _ => None,
        }
    }
}

/// A cursor over the pickle bytes with its position for messages.
struct Input<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Input<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Fault> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or(Fault::CutShort)?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, Fault> {
        Ok(self.take(1)?[0])
    }
    fn le<const N: usize>(&mut self) -> Result<[u8; N], Fault> {
        Ok(self.take(N)?.try_into().expect("N bytes"))
    }
    fn line(&mut self) -> Result<&'a str, Fault> {
        let rest = &self.b[self.at..];
        let n = rest
            .iter()
            .take(4096)
            .position(|&c| c == b'\n')
            .ok_or(Malformed("a GLOBAL name without its end of line"))?;
        let s =
            std::str::from_utf8(&rest[..n]).map_err(|_| Malformed("a GLOBAL name is not UTF-8"))?;
        self.at += n + 1;
        Ok(s)
    }
}

struct Machine {
    stack: Vec<Value>,
    marks: Vec<usize>,
    memo: HashMap<u32, Value>,
    work: usize,
}

impl Machine {
    fn spend(&mut self, units: usize) -> Result<(), Fault> {
        self.work = self.work.saturating_add(units);
        if self.work > MAX_WORK {
            return Err(Fault::TooMuchWork);
        }
        Ok(())
    }
    fn push(&mut self, v: Value) -> Result<(), Fault> {
        self.spend(v.weight())?;
        self.stack.push(v);
        Ok(())
    }
    fn pop(&mut self) -> Result<Value, Fault> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(Malformed("an opcode pops an empty stack"));
        }
        Ok(self.stack.pop().expect("checked"))
    }
    fn top(&mut self) -> Result<&mut Value, Fault> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(Malformed("an opcode needs a value on an empty stack"));
        }
        Ok(self.stack.last_mut().expect("checked"))
    }
    /// The values above the last MARK, which is removed.
    fn pop_mark(&mut self) -> Result<Vec<Value>, Fault> {
        let m = self
            .marks
            .pop()
            .ok_or(Malformed("a container opcode without its MARK"))?;
        Ok(self.stack.split_off(m))
    }
    fn put(&mut self, k: u32) -> Result<(), Fault> {
        let v = self.top()?.clone();
        self.spend(v.weight())?;
        self.memo.insert(k, v);
        Ok(())
    }
    fn get(&mut self, k: u32) -> Result<(), Fault> {
        let v = self.memo.get(&k).cloned().ok_or(Fault::MemoUnset(k))?;
        self.push(v)
    }
}

/// Runs the pickle `b` and returns the value it builds. `Err(PtError::Refused)` names a call
/// of anything but a tensor constructor; every other problem is `PtError::Pickle` with the
/// byte where it was found.
pub fn load(b: &[u8]) -> Result<Value, PtError> {
    let mut inp = Input { b, at: 0 };
    let mut m = Machine {
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
        work: 0,
    };
    loop {
        let at = inp.at;
        let wrap = |what: Fault| PtError::Pickle { at, what };
        match step(&mut inp, &mut m) {
            Ok(Some(v)) => return Ok(v),
            Ok(None) => {}
            Err(Stop::Refused(name)) => return Err(PtError::Refused(name)),
            Err(Stop::Bad(what)) => return Err(wrap(what)),
        }
    }
}

/// Why the machine stopped before STOP: a refused call, or a fault of the bytes.
enum Stop {
    Refused(String),
    Bad(Fault),
}

impl From<Fault> for Stop {
    fn from(f: Fault) -> Self {
        Stop::Bad(f)
    }
}

fn bad(what: &'static str) -> Stop {
    Stop::Bad(Malformed(what))
}

/// One opcode; `Some` at STOP.
fn step(inp: &mut Input, m: &mut Machine) -> Result<Option<Value>, Stop> {
    let op = inp.u8()?;
    m.spend(1)?;
    match op {
        0x80 => {
            let p = inp.u8()?;
            if p > 5 {
                return Err(Fault::Protocol(p).into());
            }
        }
        0x95 => {
            inp.le::<8>()?; // FRAME: a length hint
        }
        b'.' => {
            let v = m.pop()?;
            if !m.stack.is_empty() || !m.marks.is_empty() {
                return Err(bad("values left on the stack at STOP"));
            }
            return Ok(Some(v));
        }
        b'(' => m.marks.push(m.stack.len()),
        b'0' => {
            m.pop()?;
        }
        b'1' => {
            m.pop_mark()?;
        }
        b'2' => {
            let v = m.top()?.clone();
            m.push(v)?;
        }
        b'N' => m.push(Value::None)?,
        0x88 => m.push(Value::Bool(true))?,
        0x89 => m.push(Value::Bool(false))?,
        b'J' => m.push(Value::Int(i32::from_le_bytes(inp.le()?) as i64))?,
        b'K' => m.push(Value::Int(inp.u8()? as i64))?,
        b'M' => m.push(Value::Int(u16::from_le_bytes(inp.le()?) as i64))?,
        0x8a => {
            let n = inp.u8()? as usize;
            let v = long(inp.take(n)?)?;
            m.push(v)?;
        }
        0x8b => {
            let n = u32::from_le_bytes(inp.le()?) as usize;
            let v = long(inp.take(n)?)?;
            m.push(v)?;
        }
        b'G' => m.push(Value::Float(f64::from_be_bytes(inp.le()?)))?,
        b'X' => {
            let n = u32::from_le_bytes(inp.le()?) as usize;
            text(inp, m, n)?;
        }
        0x8c => {
            let n = inp.u8()? as usize;
            text(inp, m, n)?;
        }
        0x8d => {
            let n = u64::from_le_bytes(inp.le()?);
            text(
                inp,
                m,
                usize::try_from(n).map_err(|_| bad("a string longer than memory"))?,
            )?;
        }
        // Python 2 `str` (BINSTRING, SHORT_BINSTRING) and bytes: kept as their length.
        b'T' | b'B' => {
            let n = u32::from_le_bytes(inp.le()?) as usize;
            inp.take(n)?;
            m.push(Value::Bytes(n))?;
        }
        b'U' | b'C' => {
            let n = inp.u8()? as usize;
            inp.take(n)?;
            m.push(Value::Bytes(n))?;
        }
        0x8e => {
            let n = u64::from_le_bytes(inp.le()?);
            let n = usize::try_from(n).map_err(|_| bad("bytes longer than memory"))?;
            inp.take(n)?;
            m.push(Value::Bytes(n))?;
        }
        b')' => m.push(Value::Seq(Box::default()))?,
        b']' => m.push(Value::Seq(Box::default()))?,
        b'}' => m.push(Value::Dict(Box::default()))?,
        b't' | b'l' => {
            let items = m.pop_mark()?;
            m.push(Value::Seq(Box::new(Seq::of(items)?)))?;
        }
        0x85..=0x87 => {
            let n = (op - 0x84) as usize;
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(m.pop()?);
            }
            items.reverse();
            m.push(Value::Seq(Box::new(Seq::of(items)?)))?;
        }
        b'a' => {
            let v = m.pop()?;
            append(m.top()?, vec![v], false)?;
        }
        b'e' => {
            let items = m.pop_mark()?;
            append(m.top()?, items, false)?;
        }
        b's' => {
            let v = m.pop()?;
            let k = m.pop()?;
            append(m.top()?, vec![k, v], true)?;
        }
        b'u' => {
            let items = m.pop_mark()?;
            if items.len() % 2 != 0 {
                return Err(bad("SETITEMS with a key and no value"));
            }
            append(m.top()?, items, true)?;
        }
        b'q' => m.put(inp.u8()? as u32)?,
        b'r' => m.put(u32::from_le_bytes(inp.le()?))?,
        0x94 => {
            let k = m.memo.len() as u32;
            m.put(k)?;
        }
        b'h' => m.get(inp.u8()? as u32)?,
        b'j' => m.get(u32::from_le_bytes(inp.le()?))?,
        b'c' => {
            let module = inp.line()?.to_string();
            let name = inp.line()?.to_string();
            m.push(Value::Global(Box::new((module, name))))?;
        }
        0x93 => {
            let (Value::Str(name), Value::Str(module)) = (m.pop()?, m.pop()?) else {
                return Err(bad("STACK_GLOBAL of names that are not strings"));
            };
            m.push(Value::Global(Box::new((module, name))))?;
        }
        b'Q' => {
            let pid = m.pop()?;
            m.push(Value::Storage(Box::new(storage(pid)?)))?;
        }
        b'R' => {
            let args = m.pop()?;
            let callable = m.pop()?;
            let v = call(callable, args)?;
            m.push(v)?;
        }
        b'b' => {
            // BUILD sets an object's state. A tensor's state (a `_tensor_version`, hooks) and
            // an OrderedDict's are ignored; on anything else it would run `__setstate__`.
            let _state = m.pop()?;
            match m.top()? {
                Value::Tensor(_) | Value::Dict(_) => {}
                other => {
                    return Err(Stop::Refused(format!(
                        "__setstate__ of {}",
                        other.describe()
                    )));
                }
            }
        }
        0x81 | 0x92 => {
            if op == 0x92 {
                m.pop()?; // NEWOBJ_EX's kwargs
            }
            let _args = m.pop()?;
            let cls = m.pop()?;
            return Err(Stop::Refused(callable_name(&cls)));
        }
        b'i' | b'o' => {
            // INST, OBJ: protocol 0/1 object construction.
            return Err(Stop::Refused("an object constructor (INST/OBJ)".into()));
        }
        b'P' => {
            return Err(bad(
                "a text persistent id (protocol 0), not what torch.save writes",
            ));
        }
        other => {
            return Err(Fault::Opcode(other).into());
        }
    }
    if m.stack.len() > MAX_STACK {
        return Err(Fault::StackFull.into());
    }
    Ok(None)
}

fn text(inp: &mut Input, m: &mut Machine, n: usize) -> Result<(), Stop> {
    let b = inp.take(n)?;
    m.spend(n)?;
    let s = std::str::from_utf8(b).map_err(|_| bad("a string that is not UTF-8"))?;
    m.push(Value::Str(s.to_string()))?;
    Ok(())
}

/// LONG1/LONG4: a little-endian two's-complement integer; one past i64 is refused.
fn long(b: &[u8]) -> Result<Value, Fault> {
    if b.len() > 8 {
        let sign = if b.last().is_some_and(|&x| x & 0x80 != 0) {
            0xff
        } else {
            0
        };
        if b[8..].iter().any(|&x| x != sign) {
            return Err(Malformed("an integer wider than 64 bits"));
        }
    }
    let mut a = [0u8; 8];
    let n = b.len().min(8);
    a[..n].copy_from_slice(&b[..n]);
    if n > 0 && n < 8 && b[n - 1] & 0x80 != 0 {
        a[n..].fill(0xff);
    }
    Ok(Value::Int(i64::from_le_bytes(a)))
}

fn append(target: &mut Value, items: Vec<Value>, dict: bool) -> Result<(), Fault> {
    match (target, dict) {
        (Value::Seq(s), false) | (Value::Dict(s), true) => {
            for v in items {
                s.push(v)?;
            }
            Ok(())
        }
        (other, _) => Err(Fault::AppendOnto {
            op: if dict { "SETITEM" } else { "APPEND" },
            target: other.describe(),
        }),
    }
}

fn callable_name(v: &Value) -> String {
    match v {
        Value::Global(g) => format!("{}.{}", g.0, g.1),
        other => other.describe(),
    }
}

/// `('storage', torch.<T>Storage, key, location, numel)`.
fn storage(pid: Value) -> Result<Storage, Stop> {
    let not_storage = || bad("a persistent id that is not a torch storage record");
    let items = pid.seq().ok_or_else(not_storage)?;
    let [
        Value::Str(tag),
        Value::Global(ty),
        Value::Str(key),
        _location,
        Value::Int(numel),
    ] = items.as_slice()
    else {
        return Err(not_storage());
    };
    if tag != "storage" || ty.0 != "torch" {
        return Err(not_storage());
    }
    let dtype = PtDtype::of_storage(&ty.1).ok_or_else(|| Fault::StorageType(ty.1.clone()))?;
    Ok(Storage {
        dtype,
        key: key.clone(),
        numel: u64::try_from(*numel).map_err(|_| bad("a storage of negative size"))?,
    })
}

/// REDUCE: the few calls a tensor file makes, built as data; anything else is refused.
fn call(callable: Value, args: Value) -> Result<Value, Stop> {
    let Value::Global(g) = &callable else {
        return Err(Stop::Refused(callable_name(&callable)));
    };
    let args = args
        .seq()
        .ok_or(bad("REDUCE whose arguments are not a tuple"))?;
    match (g.0.as_str(), g.1.as_str()) {
        ("torch._utils", "_rebuild_tensor_v2" | "_rebuild_tensor") => {
            let mut it = args.into_iter();
            let (Some(Value::Storage(s)), Some(Value::Int(offset)), Some(size), Some(stride)) =
                (it.next(), it.next(), it.next(), it.next())
            else {
                return Err(bad(
                    "_rebuild_tensor_v2 without (storage, offset, size, stride)",
                ));
            };
            // Size and stride are tuples of naturals; anything else is no tensor torch made.
            let dims = |v: Value, what: &'static str| -> Result<Vec<u64>, Stop> {
                v.seq()
                    .ok_or(bad(what))?
                    .into_iter()
                    .map(|d| match d {
                        Value::Int(i) if i >= 0 => Ok(i as u64),
                        _ => Err(bad(what)),
                    })
                    .collect()
            };
            let shape = dims(size, "a tensor size that is not a tuple of naturals")?;
            let stride = dims(stride, "a tensor stride that is not a tuple of naturals")?;
            if shape.len() != stride.len() {
                return Err(bad("a tensor whose size and stride differ in length"));
            }
            Ok(Value::Tensor(Box::new(TensorRef {
                storage: *s,
                offset: u64::try_from(offset).map_err(|_| bad("a negative storage offset"))?,
                shape,
                stride,
            })))
        }
        ("torch._utils", "_rebuild_parameter" | "_rebuild_parameter_with_state") => {
            match args.into_iter().next() {
                Some(t @ Value::Tensor(_)) => Ok(t),
                _ => Err(bad("_rebuild_parameter of something that is not a tensor")),
            }
        }
        ("collections", "OrderedDict") => Ok(Value::Dict(Box::default())),
        _ => Err(Stop::Refused(callable_name(&callable))),
    }
}
