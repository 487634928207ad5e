//! How FX values read back as text: args the way `print_readable` writes them, short targets
//! for labels.

use crate::model::fx::{Arg, FxNode, OpKind, ValueMeta};
use std::fmt;

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Node(n) => f.write_str(n),
            Arg::Int(i) => write!(f, "{i}"),
            Arg::Float(x) if x.is_infinite() => f.write_str(if *x > 0.0 { "inf" } else { "-inf" }),
            Arg::Float(x) if x.is_nan() => f.write_str("nan"),
            Arg::Float(x) => write!(f, "{x:?}"),
            Arg::Bool(b) => f.write_str(if *b { "True" } else { "False" }),
            Arg::Str(s) => write!(f, "'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
            Arg::None => f.write_str("None"),
            Arg::List(items) => write_seq(f, "[", items, "]", false),
            Arg::Tuple(items) => write_seq(f, "(", items, ")", items.len() == 1),
            Arg::Expr(e) => f.write_str(e),
        }
    }
}

fn write_seq(
    f: &mut fmt::Formatter<'_>,
    open: &str,
    items: &[Arg],
    close: &str,
    trailing: bool,
) -> fmt::Result {
    f.write_str(open)?;
    for (i, a) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{a}")?;
    }
    if trailing {
        f.write_str(",")?;
    }
    f.write_str(close)
}

impl fmt::Display for ValueMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueMeta::Tensor(t) => {
                write!(f, "{}[{}]", t.dtype, t.shape.join(", "))
            }
            ValueMeta::Sym(e) => write!(f, "Sym({e})"),
            ValueMeta::Other(s) => f.write_str(s),
        }
    }
}

/// `torch.ops.aten.mul.Tensor` → `aten.mul.Tensor`; `torch.ops.npu.x.default` → `npu.x`;
/// `torch._C._nn.linear` → `linear`. Short enough for a node label, still unambiguous.
pub fn short_target(node: &FxNode) -> String {
    let t = &*node.target;
    match node.op {
        OpKind::Placeholder => "input".to_string(),
        OpKind::Output => "output".to_string(),
        OpKind::GetAttr => format!("self.{t}"),
        OpKind::CallMethod => format!(".{t}()"),
        _ => {
            if let Some(rest) = t.strip_prefix("torch.ops.") {
                rest.strip_suffix(".default").unwrap_or(rest).to_string()
            } else if let Some(rest) = t.strip_prefix("torch._C._nn.") {
                rest.to_string()
            } else if let Some(rest) = t.strip_prefix("torch.nn.functional.") {
                format!("F.{rest}")
            } else {
                t.to_string()
            }
        }
    }
}

/// `f32[2, 8, 16]` or `Sym(s77)`: the subtitle under a node's label.
pub fn meta_text(node: &FxNode) -> Option<String> {
    node.meta.as_ref().map(|m| m.to_string())
}
