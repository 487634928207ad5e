//! The modules a `dynamo_cpp_guards_str` guard tree names: Dynamo guards every module it reads
//! while tracing, on a `GuardManager` line that spells the module's path from the frame's
//! locals and its class:
//!
//! ```text
//! +- GuardManager: source=L['self']._modules['h']._modules['0']._modules['mlp']._modules['act'], accessed_by=DictGetItemGuardAccessor('act'), type=<class 'transformers.activations.NewGELUActivation'>, tag_safe=(False, False)
//! ```
//!
//! The path is the name torch's `nn_module_stack` gives the module (`h.0.mlp.act`), and the
//! class says which file its `forward` is in: what module inference needs for a weightless
//! child called on a line that prints no node (docs/formats.md §4).

use crate::model::compile::GuardedModule;

/// The compiled module among the frame's locals: `self` for a module's `forward`, the first
/// positional argument when a decorator handed it on (`wrapper(*args)`).
const ROOTS: [&str; 2] = ["L['self']", "L['args'][0]"];
/// What `torch.compile(module)` wraps the module in; the wrapped module is the one traced.
const WRAPPED: &str = "_orig_mod";

/// The modules under the compiled module, each once, in the order the tree names them. A
/// source that is anything but a chain of `_modules['…']` from the root (an attribute, a
/// parameter, a global) is no module and is left out; so are the sources of the other root
/// when `self` has modules.
pub fn guarded_modules(text: &str) -> Vec<GuardedModule> {
    let mut by_root: [Vec<GuardedModule>; 2] = Default::default();
    for line in text.lines() {
        let Some(rest) = line.split_once("+- GuardManager: source=").map(|(_, r)| r) else {
            continue;
        };
        let Some((source, rest)) = rest.split_once(", accessed_by=") else {
            continue;
        };
        let Some(class) = rest
            .split_once("type=<class '")
            .and_then(|(_, c)| c.split_once("'>"))
            .map(|(c, _)| c)
        else {
            continue;
        };
        for (k, root) in ROOTS.iter().enumerate() {
            if let Some(path) = source.strip_prefix(root).and_then(module_path)
                && !by_root[k].iter().any(|m| m.path == path)
            {
                by_root[k].push(GuardedModule {
                    path,
                    class: class.to_string(),
                });
            }
        }
    }
    let [own, args] = by_root;
    if own.iter().any(|m| !m.path.is_empty()) {
        own
    } else {
        args
    }
}

/// `._modules['h']._modules['0']` → `h.0`; `None` for anything else after the root.
fn module_path(mut rest: &str) -> Option<String> {
    let mut names: Vec<&str> = Vec::new();
    while !rest.is_empty() {
        let after = rest.strip_prefix("._modules['")?;
        let (name, tail) = after.split_once("']")?;
        if names.is_empty() && name == WRAPPED {
            rest = tail;
            continue;
        }
        names.push(name);
        rest = tail;
    }
    Some(names.join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of the guard tree of `module_truth_hf/gpt2_graph_break_head`'s trace log (torch
    /// 2.15, compile 3/0, the GPT-2 model's frame), as written: its head, the frame's two
    /// locals, and the first block's MLP with its children.
    const EXCERPT: &str = r#"TREE_GUARD_MANAGER:
+- RootGuardManager
| +- GuardManager: source=L['args'], accessed_by=FrameLocalsGuardAccessor(key='args', framelocals_idx=1), type=<class 'tuple'>, tag_safe=(False, False)
| | +- GuardManager: source=L['args'][0], accessed_by=TupleGetItemGuardAccessor(0), type=<class 'torch.Tensor'>, tag_safe=(False, False)
| +- GuardManager: source=L['self'], accessed_by=FrameLocalsGuardAccessor(key='self', framelocals_idx=0), type=<class 'transformers.models.gpt2.modeling_gpt2.GPT2Model'>, tag_safe=(False, False)
| | | +- GuardManager: source=L['self']._modules, accessed_by=DictGetItemGuardAccessor('_modules'), type=<class 'dict'>, tag_safe=(False, False)
| | | | | | | | | | | +- GuardManager: source=L['self']._modules['h']._modules['0']._modules['mlp'], accessed_by=DictGetItemGuardAccessor('mlp'), type=<class 'transformers.models.gpt2.modeling_gpt2.GPT2MLP'>, tag_safe=(False, False)
| | | | | | | | | | | | +- TYPE_MATCH: ___check_type_id(L['self']._modules['h']._modules['0']._modules['mlp'], 94373895592304), type=<class 'transformers.models.gpt2.modeling_gpt2.GPT2MLP'>  # feed_forward_hidden_states = self.mlp(hidden_states)  # transformers/models/gpt2/modeling_gpt2.py:308 in forward (HINT: type GPT2MLP)
| | | | | | | | | | | | +- GuardManager: source=L['self']._modules['h']._modules['0']._modules['mlp'].__dict__, accessed_by=GetGenericDictGuardAccessor, type=<class 'dict'>, tag_safe=(False, False)
| | | | | | | | | | | | | +- DICT_CONTAINS: not ___dict_contains('forward', L['self']._modules['h']._modules['0']._modules['mlp'].__dict__)  # feed_forward_hidden_states = self.mlp(hidden_states)  # transformers/models/gpt2/modeling_gpt2.py:308 in forward
| | | | | | | | | | | | | +- GuardManager: source=L['self']._modules['h']._modules['0']._modules['mlp']._modules, accessed_by=DictGetItemGuardAccessor('_modules'), type=<class 'dict'>, tag_safe=(False, False)
| | | | | | | | | | | | | | +- TYPE_MATCH: ___check_type_id(L['self']._modules['h']._modules['0']._modules['mlp']._modules, 139716439936672), type=<class 'dict'>  # hidden_states = self.c_fc(hidden_states)  # transformers/models/gpt2/modeling_gpt2.py:241 in forward (HINT: type dict)
| | | | | | | | | | | | | | +- GuardManager: source=L['self']._modules['h']._modules['0']._modules['mlp']._modules['act'], accessed_by=DictGetItemGuardAccessor('act'), type=<class 'transformers.activations.NewGELUActivation'>, tag_safe=(False, False)
| | | | | | | | | | | | | | | +- TYPE_MATCH: ___check_type_id(L['self']._modules['h']._modules['0']._modules['mlp']._modules['act'], 94373881890576), type=<class 'transformers.activations.NewGELUActivation'>  # hidden_states = self.act(hidden_states)  # transformers/models/gpt2/modeling_gpt2.py:242 in forward (HINT: type NewGELUActivation)
| | | | | | | | | | | | | | | +- GuardManager: source=L['self']._modules['h']._modules['0']._modules['mlp']._modules['act'].__dict__, accessed_by=GetGenericDictGuardAccessor, type=<class 'dict'>, tag_safe=(False, False)
| | | | | | | | | | | | | | | | +- DICT_CONTAINS: not ___dict_contains('forward', L['self']._modules['h']._modules['0']._modules['mlp']._modules['act'].__dict__)  # hidden_states = self.act(hidden_states)  # transformers/models/gpt2/modeling_gpt2.py:242 in forward
| | | | | | | | | | | | | | +- GuardManager: source=L['self']._modules['h']._modules['0']._modules['mlp']._modules['c_fc'], accessed_by=DictGetItemGuardAccessor('c_fc'), type=<class 'transformers.pytorch_utils.Conv1D'>, tag_safe=(False, False)
| | | | | | | | | | | | | | | +- TYPE_MATCH: ___check_type_id(L['self']._modules['h']._modules['0']._modules['mlp']._modules['c_fc'], 94373883361040), type=<class 'transformers.pytorch_utils.Conv1D'>  # hidden_states = self.c_fc(hidden_states)  # transformers/models/gpt2/modeling_gpt2.py:241 in forward (HINT: type Conv1D)
| | | | | | | | | | | | | | +- GuardManager: source=L['self']._modules['h']._modules['0']._modules['mlp']._modules['c_proj'], accessed_by=DictGetItemGuardAccessor('c_proj'), type=<class 'transformers.pytorch_utils.Conv1D'>, tag_safe=(False, False)
| | | | | | | | | | | | | | +- GuardManager: source=L['self']._modules['h']._modules['0']._modules['mlp']._modules['dropout'], accessed_by=DictGetItemGuardAccessor('dropout'), type=<class 'torch.nn.modules.dropout.Dropout'>, tag_safe=(False, False)
"#;

    #[test]
    fn modules_and_classes_from_a_real_guard_tree() {
        let got: Vec<(String, String)> = guarded_modules(EXCERPT)
            .into_iter()
            .map(|m| (m.path, m.class))
            .collect();
        let want = [
            ("", "transformers.models.gpt2.modeling_gpt2.GPT2Model"),
            ("h.0.mlp", "transformers.models.gpt2.modeling_gpt2.GPT2MLP"),
            ("h.0.mlp.act", "transformers.activations.NewGELUActivation"),
            ("h.0.mlp.c_fc", "transformers.pytorch_utils.Conv1D"),
            ("h.0.mlp.c_proj", "transformers.pytorch_utils.Conv1D"),
            ("h.0.mlp.dropout", "torch.nn.modules.dropout.Dropout"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(p, c)| (p.to_string(), c.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_wrapped_module_and_a_decorators_argument() {
        let text = "\
+- GuardManager: source=L['args'][0], accessed_by=X, type=<class 'm.Net'>, tag_safe=(False, False)
+- GuardManager: source=L['args'][0]._modules['_orig_mod']._modules['fc'], accessed_by=X, type=<class 'torch.nn.modules.linear.Linear'>, tag_safe=(False, False)
";
        let got = guarded_modules(text);
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].path, "fc");
        assert_eq!(got[1].class, "torch.nn.modules.linear.Linear");
    }
}
