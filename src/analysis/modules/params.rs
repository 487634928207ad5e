//! Parameters and buffers: whose they are, from the Dynamo graph's placeholder names, and which
//! AOT placeholder is which Dynamo placeholder.

use super::paths::{ModId, Paths};
use crate::model::fx::{FxGraph, OpKind, Short};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// One Dynamo placeholder that is a parameter or a buffer of the model.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedTensor {
    pub module: ModId,
    /// The attribute on its module: `weight`, `bias`, `cos_cached`.
    pub attr: String,
}

/// The owner of `L_self_modules_layers_modules_3_modules_attn_modules_q_proj_parameters_weight_`
/// (or its alias `l_self_…`): (`["layers", "3", "attn", "q_proj"]`, `weight`). `None` for inputs
/// that are not the model's (`L_x_`, `s77`). The compiled module is `self`, or `args_0` when a
/// decorator passed it on through `*args` (transformers' `@can_return_tuple`):
/// `L_args_0_modules_model_modules_embed_tokens_parameters_weight_`.
pub fn decode(name: &str) -> Option<(Vec<String>, String)> {
    let rest = name
        .strip_prefix("L_")
        .or_else(|| name.strip_prefix("l_"))?;
    let rest = ["self_", "args_0_"]
        .iter()
        .find_map(|root| rest.strip_prefix(root))?;
    let rest = rest.strip_suffix('_').unwrap_or(rest);
    // The owner part ends where the last `parameters_`/`buffers_` starts.
    let (owner, attr) = ["parameters_", "buffers_"].iter().find_map(|kind| {
        if let Some(attr) = rest.strip_prefix(kind) {
            return Some(("", attr));
        }
        let sep = format!("_{kind}");
        rest.rfind(&sep)
            .map(|at| (&rest[..at], &rest[at + sep.len()..]))
    })?;
    if attr.is_empty() {
        return None;
    }
    let segments = match owner.strip_prefix("modules_") {
        Some(o) => o.split("_modules_").map(str::to_string).collect(),
        None if owner.is_empty() => Vec::new(),
        // `L_self_foo_parameters_w_`: an attribute path Dynamo flattened without `modules_`.
        None => vec![owner.to_string()],
    };
    Some((segments, attr.to_string()))
}

/// Parameters and buffers of a Dynamo graph, by placeholder position (signature order).
#[derive(Debug, Clone, Default)]
pub struct ParamMap {
    /// One entry per Dynamo placeholder: its owner, or `None` for a user input.
    pub by_position: Vec<Option<OwnedTensor>>,
    /// The shapes the Dynamo placeholders were annotated with (to check the AOT mapping).
    pub shapes: Vec<Option<Vec<Short>>>,
}

impl ParamMap {
    pub fn from_dynamo(g: &FxGraph, paths: &mut Paths) -> ParamMap {
        let mut raw = Vec::new();
        let mut shapes = Vec::new();
        for n in g.nodes.iter().filter(|n| n.op == OpKind::Placeholder) {
            // The alias keeps the signature name as its target.
            raw.push(decode(&n.target).or_else(|| decode(&n.name)));
            shapes.push(n.tensor().map(|t| t.shape.clone()));
        }
        let known: Vec<Vec<String>> = raw.iter().flatten().map(|(s, _)| s.clone()).collect();
        let children = Children::of(&known);
        let mut code_names: HashSet<&str> = HashSet::default();
        for n in &g.nodes {
            if let Some(loc) = &n.source {
                code_names.extend(super::code::self_attributes(&loc.code).map(|(y, _)| y));
            }
        }
        let by_position = raw
            .into_iter()
            .map(|o| {
                o.map(|(segs, attr)| OwnedTensor {
                    module: paths.intern_segments(&split_flattened(segs, &children, &code_names)),
                    attr,
                })
            })
            .collect();
        ParamMap {
            by_position,
            shapes,
        }
    }

    /// The attributes each module owns (`weight`, `bias`), to tell a module's own code (`self.weight`)
    /// from its caller's.
    pub fn attrs(&self) -> HashMap<ModId, Vec<String>> {
        let mut out: HashMap<ModId, Vec<String>> = HashMap::default();
        for o in self.by_position.iter().flatten() {
            out.entry(o.module).or_default().push(o.attr.clone());
        }
        out
    }

    /// Owners of the placeholders of an AOT graph: `primals_k` is Dynamo placeholder k-1,
    /// `argk_1` is Dynamo placeholder k. Kept only where the shapes agree.
    pub fn for_aot(&self, g: &FxGraph) -> HashMap<usize, ModId> {
        let mut out = HashMap::default();
        for (i, n) in g.nodes.iter().enumerate() {
            if n.op != OpKind::Placeholder {
                continue;
            }
            let Some(k) = aot_position(&n.name) else {
                continue;
            };
            let Some(Some(owner)) = self.by_position.get(k) else {
                continue;
            };
            let agree = match (n.tensor(), self.shapes.get(k).and_then(|s| s.as_ref())) {
                (Some(t), Some(s)) => &t.shape == s,
                _ => true,
            };
            if agree {
                out.insert(i, owner.module);
            }
        }
        out
    }
}

/// `primals_7` → 6, `arg6_1` → 6.
pub fn aot_position(name: &str) -> Option<usize> {
    if let Some(k) = name.strip_prefix("primals_") {
        return k.parse::<usize>().ok()?.checked_sub(1);
    }
    let k = name.strip_prefix("arg")?.strip_suffix("_1")?;
    k.parse().ok()
}

/// The child segments of every module path that owns a parameter, by parent path: a model
/// has a parameter per module, so looking each one's children up by scanning every path was
/// quadratic in the layers.
struct Children<'a>(HashMap<&'a [String], HashSet<&'a str>>);

impl<'a> Children<'a> {
    fn of(known: &'a [Vec<String>]) -> Self {
        let mut map: HashMap<&[String], HashSet<&str>> = HashMap::default();
        for k in known {
            for p in 0..k.len() {
                map.entry(&k[..p]).or_default().insert(k[p].as_str());
            }
        }
        Children(map)
    }
}

/// Dynamo flattens an attribute reached without `_modules` (a module kept in a plain attribute,
/// or a buffer of a submodule read through its parent) into one segment: `self_attn_rotary_emb`.
/// When a known module path plus `_` starts that segment, split it there (the longest such),
/// unless the code calls the whole segment by name (`self.self_attn_layer_norm(x)` beside
/// `self.self_attn`: a module's own name, not a flattened path).
fn split_flattened(
    mut segs: Vec<String>,
    known: &Children<'_>,
    code_names: &HashSet<&str>,
) -> Vec<String> {
    let Some(last) = segs.pop() else {
        return segs;
    };
    if code_names.contains(last.as_str()) {
        segs.push(last);
        return segs;
    }
    let best = known.0.get(segs.as_slice()).and_then(|children| {
        children
            .iter()
            .filter(|child| {
                last.strip_prefix(**child)
                    .is_some_and(|rest| rest.len() > 1 && rest.starts_with('_'))
            })
            .map(|child| child.len())
            .max()
    });
    match best {
        Some(l) => {
            segs.push(last[..l].to_string());
            segs.push(last[l + 1..].to_string());
        }
        None => segs.push(last),
    }
    segs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_owner_and_attribute() {
        let (s, a) = decode(
            "L_self_modules_layers_modules_3_modules_attn_modules_q_proj_parameters_weight_",
        )
        .unwrap();
        assert_eq!(s, ["layers", "3", "attn", "q_proj"]);
        assert_eq!(a, "weight");
        let (s, a) = decode("l_self_buffers_cos_cached_").unwrap();
        assert!(s.is_empty());
        assert_eq!(a, "cos_cached");
        let (s, a) = decode("L_self_parameters_pos_emb_").unwrap();
        assert!(s.is_empty());
        assert_eq!(a, "pos_emb");
        let (s, a) =
            decode("L_args_0_modules_model_modules_layers_modules_1_modules_mlp_parameters_w_")
                .unwrap();
        assert_eq!(s, ["model", "layers", "1", "mlp"]);
        assert_eq!(a, "w");
        assert_eq!(decode("L_args_1_modules_m_parameters_w_"), None);
        assert_eq!(decode("L_x_"), None);
        assert_eq!(decode("L_input_ids_"), None);
        assert_eq!(decode("s77"), None);
    }

    #[test]
    fn splits_a_flattened_submodule() {
        let known = vec![
            vec!["layers".to_string(), "0".into(), "self_attn".into()],
            vec![
                "layers".to_string(),
                "0".into(),
                "self_attn".into(),
                "q_proj".into(),
            ],
        ];
        let segs = vec![
            "layers".to_string(),
            "0".into(),
            "self_attn_rotary_emb".into(),
        ];
        let none = HashSet::default();
        assert_eq!(
            split_flattened(segs.clone(), &Children::of(&known), &none),
            ["layers", "0", "self_attn", "rotary_emb"]
        );
        // BART's `self.self_attn_layer_norm(x)` beside `self.self_attn`: one module's name.
        let segs = vec![
            "layers".to_string(),
            "0".into(),
            "self_attn_layer_norm".into(),
        ];
        let called: HashSet<&str> = ["self_attn_layer_norm"].into_iter().collect();
        assert_eq!(
            split_flattened(segs, &Children::of(&known), &called),
            ["layers", "0", "self_attn_layer_norm"]
        );
    }

    #[test]
    fn aot_positions() {
        assert_eq!(aot_position("primals_1"), Some(0));
        assert_eq!(aot_position("arg3_1"), Some(3));
        assert_eq!(aot_position("primals_0"), None);
        assert_eq!(aot_position("tangents_1"), None);
    }
}
